#!/bin/sh
# t_mbi.sh - heartbeat on a subset of the MPI Bugs Initiative (../shared/mbi, when it is there): every program that hangs is named a deadlock, no program that ends is.
set -u
. "$(dirname "$0")/lib.sh"
mbi=${MBI:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/mbi}
[ -f "$mbi/labels.txt" ] || { echo "no $mbi/labels.txt: skipped"; exit 0; }
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
out=$(MBI="$mbi" sh "$(dirname "$0")/../bench/mbi.sh" "$BUILD" "$(dirname "$0")/mbi_subset.txt" 2>&1) ||
	die "mbi.sh failed: $out"
echo "$out" | grep -v "^  [A-Z][A-Za-z_0-9]*\.c "
last=$(echo "$out" | tail -1)
echo "$last" | grep -q "^mbi: mpi=[a-z]* programs=[0-9]* hung=[0-9]* named=[0-9]* false_alarms=[0-9]*$" || die "no summary: $last"
eval "$(echo "$last" | sed 's/^mbi: //')"
[ "$false_alarms" -eq 0 ] || die "deadlocks named in programs that ended: $(echo "$out" | grep ' false_alarm ')"
if [ "$named" -ne "$hung" ]; then
	# what heartbeat said of each: why it named nothing is in there
	for m in $(echo "$out" | awk '$2 == "missed" { print $1 }'); do
		echo "heartbeat on $m:"
		sed 's/^/    /' "$BUILD/mbi-openmpi/${m%.c}.heartbeat"
	done
	die "hung programs not named: $(echo "$out" | grep ' missed ')"
fi
# 32 of the subset hang under Open MPI, every time seen: far fewer means the yardstick moved
[ "$hung" -ge 30 ] || die "only $hung of the subset's programs hung: $(echo "$out" | grep ' ended ')"
exit 0
