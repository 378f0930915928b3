#!/bin/sh
# demo.sh - runs an MPI program under mpirun with collectors on every call and the heartbeat monitor watching it live.
set -u
build=$1
bin=$build/bin
job="demo$$"
lib="$(cd "$build/lib" && pwd)/libescollect.so"
echo "== EventSpace demo: 4 MPI ranks pass a ring and allreduce; collectors record every MPI call"
echo "== (mpirun -x LD_PRELOAD=$lib); the heartbeat monitor watches from another process."
echo "== One rank will get stuck in its own computation for two seconds: watch who waits for whom."
echo
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job" \
	"$build/tests/ring_demo" 6 &
app=$!
colop=$(mktemp)
"$bin/colopmon" -q -w 10 "$job" >"$colop" &   # a second monitor, at the same time
"$bin/heartbeat" -p 500 -w 10 "$job"
wait $app || { echo "demo: the MPI program failed" >&2; exit 1; }
wait
echo
echo "== The collective operations, as colopmon saw them meanwhile:"
cat "$colop"; rm -f "$colop"
echo
echo "== The trace spaces, one per rank ($bin/psadm list):"
"$bin/psadm" list | grep "^$job"
echo
echo "== To watch your own program: mpirun -x LD_PRELOAD=$lib -x ES_JOB=NAME ./app, then"
echo "   $bin/heartbeat NAME, $bin/geteventmon NAME, $bin/colopmon NAME."
for s in $("$bin/psadm" list | awk '{print $1}' | grep "^$job"); do "$bin/psadm" rm "$s" >/dev/null; done
