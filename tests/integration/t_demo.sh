#!/bin/sh
# t_demo.sh - the PastSet demo runs: a monitor process follows a writer process live and accounts for every tuple.
set -u
. "$(dirname "$0")/lib.sh"
out=$(sh "$(dirname "$0")/../../pastset/demo.sh" "$BIN" 2>&1) || die "demo failed: $out"
echo "$out"
echo "$out" | grep -q "^reader: written" || die "no live status line"
line=$(echo "$out" | grep "^reader: observed") || die "no summary"
got=$(echo "$line" | awk '{print $3}'); of=$(echo "$line" | awk '{print $5}'); missed=$(echo "$line" | awk '{print $9}')
[ "$got" -gt 0 ] || die "reader observed nothing"
[ $((got + missed)) -eq "$of" ] || die "observed + missed != followed ($got + $missed != $of)"
echo "$out" | grep -q "thread0.trace" || die "psadm show did not list the element"
