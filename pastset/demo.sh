#!/bin/sh
# demo.sh - runs the PastSet demonstration: a writer and a monitor process on one shared trace element.
set -eu
bin=$1
seg="demo-$$"
echo "== PastSet demo: one process writes trace tuples into shared memory, another watches it live"
"$bin/psdemo" writer "$seg" 3 &
wpid=$!
"$bin/psdemo" reader "$seg" 2.5
wait "$wpid"
echo "== the segment outlives the writer until removed:"
"$bin/psadm" show "$seg"
"$bin/psadm" rm "$seg"
