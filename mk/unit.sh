#!/bin/sh
# unit.sh - runs the Check unit suites in N parts at once (the binary's ES_UNIT_PART), each part's output whole after it; fails if any part failed.
#
#   sh mk/unit.sh UNIT_BINARY [N]     (N: default the machine's cores)
#
# Most of a suite's time is waiting (a peer's timeout, a thread's period),
# so parts at once take about the longest part's time.  Each suite names
# its segments and ports for its own process, so parts never meet.
set -u
bin=${1:?usage: unit.sh UNIT_BINARY [N]}
n=${2:-$(nproc 2>/dev/null || echo 2)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
t0=$(date +%s)
k=0
while [ "$k" -lt "$n" ]; do
	(ES_UNIT_PART="$k/$n" "$bin" >"$dir/out.$k" 2>&1; echo $? >"$dir/rc.$k") &
	k=$((k + 1))
done
wait
bad=0 k=0
while [ "$k" -lt "$n" ]; do
	cat "$dir/out.$k"
	[ "$(cat "$dir/rc.$k")" -eq 0 ] || bad=1
	k=$((k + 1))
done
echo "unit: $n parts in $(($(date +%s) - t0)) s"
exit "$bad"
