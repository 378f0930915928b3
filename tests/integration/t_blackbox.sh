#!/bin/sh
# t_blackbox.sh - the black box: an archive whose recorder is killed opens and converts up to its last checkpoint and --repair finishes it; ranks that crash or abort keep their last events and are named; a killed job's remains are kept, counted exactly.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itbb$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm_vader_orphans # those of the ranks killed
	rm -rf "$dir"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
events() { python3 "$(dirname "$0")/ar_events.py" "$@"; }
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# 1. The wind tunnel recorded twice at once; one recorder killed with
# SIGKILL mid-run, the other stopped later with Ctrl-C.  The killed one's
# archive opens, converts (otf2-print without a warning), and holds every
# event the whole one has that ended over a second before the kill.  Its
# rows go as MPI messages, recorded by libescollect, whose trace elements
# hold seconds of events: neither recorder, sharing two cores with the
# job, loses any.
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.w" "$BIN/windtunnel" -q -j "$job.tw" -N 256 \
	-m 2 -l 2 -t 1000000 --transport mpi >/dev/null 2>&1 &
app=$!
"$BIN/esrecord" -w 30 -o "$dir/whole" "$job.w" 2>"$dir/whole.err" &
whole=$!
"$BIN/esrecord" -w 30 -o "$dir/part" "$job.w" 2>"$dir/part.err" &
part=$!
wait_for 30 grep -q "^until: [1-9]" "$dir/part/INFO" || die "no checkpoint: $(cat "$dir/part.err")"
sleep 3
cut=$(($(mono_ns) - 1000000000))
kill -9 $part
wait $part 2>/dev/null
sleep 0.5
kill -INT $whole
wait $whole || die "the whole recording failed: $(cat "$dir/whole.err")"
end_job "$app"; app=""
grep -q "^whole: no$" "$dir/part/INFO" || die "the killed recorder's INFO: $(cat "$dir/part/INFO")"
grep -q "^lost: 0$" "$dir/part/INFO" || die "the recorder lost events before the kill: $(cat "$dir/part/INFO")"
"$BIN/esprofile" "$dir/part" >"$dir/prof.txt" 2>"$dir/prof.err" || die "esprofile refused it: $(cat "$dir/prof.err")"
grep -q "^esprofile: $dir/part is incomplete: its recorder stopped without finishing it" "$dir/prof.err" ||
	die "esprofile did not say it is incomplete: $(cat "$dir/prof.err")"
grep -q "^@ Incomplete" "$dir/prof.txt" || die "the profile's header does not say it is incomplete"
"$BIN/esconvert" -q --otf2 "$dir/o" "$dir/part" 2>"$dir/conv.err" || die "esconvert: $(cat "$dir/conv.err")"
otf2-print "$dir/o/traces.otf2" >/dev/null 2>"$dir/p.err" || die "otf2-print failed: $(cat "$dir/p.err")"
[ -s "$dir/p.err" ] && die "otf2-print warned: $(cat "$dir/p.err")"
events covers "$dir/whole" "$dir/part" "$cut" >"$dir/covers" || die "events lost to the kill: $(cat "$dir/covers")"
echo "killed recorder: $(cat "$dir/covers")"
n=$(sed -n 's/^events: //p' "$dir/part/INFO")
"$BIN/esrecord" --repair "$dir/part" >"$dir/repair.out" || die "--repair failed"
grep -q "^esrecord: $dir/part repaired: [0-9]* events ([0-9]* of them written after its last checkpoint)$" \
	"$dir/repair.out" || die "--repair said: $(cat "$dir/repair.out")"
kept=$(sed -n 's/.*repaired: \([0-9]*\) events.*/\1/p' "$dir/repair.out")
[ "$kept" -ge "$n" ] || die "--repair kept $kept of the checkpoint's $n events"
grep -q "^whole: no" "$dir/part/INFO" && die "repaired, but INFO still says it is not whole"
"$BIN/esprofile" "$dir/part" >/dev/null 2>"$dir/prof.err" || die "the repaired archive: $(cat "$dir/prof.err")"
[ -s "$dir/prof.err" ] && die "the repaired archive is still called incomplete: $(cat "$dir/prof.err")"
"$BIN/esrecord" --repair "$dir/part" 2>&1 | grep -q "whole already: nothing to repair" ||
	die "--repair of a whole archive did not say so"
rm_segments "$job.w"

# 2. A rank that dies of SIGSEGV, and one that calls MPI_Abort, while
# esrecord records: every message it sent is kept, its last event is the
# last it wrote (MPI_Abort itself), and the archive says it died.
for how in segv abort; do
	"$BIN/esrecord" -w 30 -o "$dir/$how" "$job.$how" 2>"$dir/$how.err" &
	rec=$!
	timeout 120 mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.$how" \
		"$BUILD/tests/mpi_crash" $how 50 >/dev/null 2>&1 && die "mpi_crash $how ended well"
	wait $rec || die "esrecord failed when a rank died ($how): $(cat "$dir/$how.err")"
	events list "$dir/$how" | awk '$1 ~ /\.r1$/' >"$dir/$how.r1"
	[ "$(awk '$3 == 34' "$dir/$how.r1" | wc -l)" -eq 50 ] ||
		die "$how: rank 1's 50 sends are not all kept: $(awk '{print $3}' "$dir/$how.r1" | sort | uniq -c)"
	last=$(tail -1 "$dir/$how.r1" | awk '{print $3, $8}')
	case $how in
	segv) [ "$last" = "34 50" ] || die "segv: rank 1's last event is not its 50th send: $last"
	      sig=11 ;;
	abort) [ "$last" = "209 7" ] || die "abort: rank 1's last event is not MPI_Abort(7): $last"
	       sig="[0-9]*" ;;
	esac
	grep -q "^died: 1 [0-9]* [0-9]* [0-9]* $sig$" "$dir/$how/INFO" || die "$how: INFO: $(cat "$dir/$how/INFO")"
	grep -q "^esrecord: rank 1 (pid [0-9]*) died" "$dir/$how.err" || die "$how: esrecord did not say rank 1 died"
	"$BIN/esprofile" "$dir/$how" 2>&1 >/dev/null | grep -q "rank 1 (pid [0-9]*) died" ||
		die "$how: esprofile does not say rank 1 died"
	rm_segments "$job.$how"
done
grep -q "^esrecord: rank 1 (pid [0-9]*) died of signal 11 (SIGSEGV)" "$dir/segv.err" ||
	die "the SIGSEGV not named: $(cat "$dir/segv.err")"

# 3. The keep policy (its default: lib.sh keeps every job for the others).
unset ES_KEEP
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.ok" "$BUILD/tests/mpi_late" ||
	die "mpi_late failed"
"$BIN/psadm" list | grep -q "$job.ok" && die "a job that ended cleanly left its segments: $("$BIN/psadm" list)"
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q --keep always -j "$job.ka" \
	"$BUILD/tests/mpi_late" || die "mpi_late --keep always failed"
"$BIN/psadm" list | grep -q "^job $job.ka: ended, kept (keep: always; psadm rm $job.ka removes it)" || die "keep always: $("$BIN/psadm" list)"
"$BIN/psadm" clean "$job" | grep -q "^kept $job.ka.r0: keep: always" || die "psadm clean removed a job kept always"
rm_segments "$job.ka"

# 4. A job killed with SIGKILL: its remains stay, psadm list says it died,
# esrecord --remains keeps what its elements hold and counts exactly what
# they no longer hold; psadm clean keeps it, --all removes it.
timeout 120 mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.k" \
	"$BUILD/tests/mpi_crash" kill 200 >/dev/null 2>&1 && die "mpi_crash kill ended well"
"$BIN/psadm" list >"$dir/list"
grep -q "^job $job.k: died: $job.k.r[01] (pid [0-9]*)" "$dir/list" || die "psadm list: $(cat "$dir/list")"
grep -q "^$job.k.r1 .* MiB used .* stale  keep: failed$" "$dir/list" || die "psadm list: $(cat "$dir/list")"
"$BIN/esrecord" --remains -o "$dir/rem" "$job.k" 2>"$dir/rem.err" || die "--remains: $(cat "$dir/rem.err")"
written=$(for r in 0 1; do "$BIN/psadm" show "$job.k.r$r"; done | awk '$1 ~ /^mpi\.thread/ { n += $5 } END { print n }')
held=$(events list "$dir/rem" | awk '$3 < 4096' | wc -l)
before=$(sed -n 's/^before_attach: //p' "$dir/rem/INFO")
[ "$held" -gt 0 ] && [ $((held + before)) -eq "$written" ] ||
	die "--remains: $held held + $before no longer held, but the elements were written $written times"
[ "$(events list "$dir/rem" | awk '$1 ~ /\.r1$/ && $3 == 34' | wc -l)" -eq 200 ] || die "--remains: not every send kept"
"$BIN/psadm" clean "$job" | grep -q "^kept $job.k.r1: its process died" || die "psadm clean did not keep the remains"
"$BIN/psadm" clean --all "$job.k" | grep -q "^removed $job.k.r1" || die "psadm clean --all did not remove them"

# 5. A hung job, live: --remains keeps the calls each rank is inside as
# its last events, unfinished; keep: never lets psadm clean remove it once killed.
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q --keep never -j "$job.h" \
	"$BUILD/tests/mpi_crash" hang 20 >/dev/null 2>&1 &
app=$!
wait_for 30 sh -c "'$BIN/psadm' list | grep -q '^job $job.h: live'" || die "the hung job is not listed live"
sleep 1
"$BIN/esrecord" --remains -o "$dir/hang" "$job.h" 2>"$dir/hang.err" || die "--remains (hung): $(cat "$dir/hang.err")"
for r in 0 1; do
	last=$(events list "$dir/hang" | awk -v r="$job.h.r$r" '$1 == r' | tail -1 | awk '{print $3}')
	[ "$last" = $((4096 + 35)) ] || die "--remains (hung): rank $r's last event is not its unfinished MPI_Recv: $last"
done
end_job "$app"; app=""
"$BIN/psadm" clean "$job" | grep -q "^removed $job.h.r0" || die "psadm clean kept a dead job's segments despite keep: never"

# 6. Snapshots on a trigger.  heartbeat --snapshot on two deadlocks: each
# rank's last events in the archive are the calls heartbeat names (peer
# and tag), unfinished; the wait-for graph beside them.
export ES_KEEP=always
for prog in "ring_demo 3 deadlock" "mpi_crash hang 20"; do
	name=${prog%% *}
	mpirun --oversubscribe --allow-run-as-root -np 4 "$BIN/esrun" -q -j "$job.$name" \
		$BUILD/tests/$prog >/dev/null 2>&1 &
	app=$!
	"$BIN/heartbeat" -q -p 300 -n 100 -w 30 -x --snapshot "$dir/snap.$name" "$job.$name" >"$dir/hb.$name" 2>&1
	[ $? -eq 3 ] || die "$name: heartbeat named no deadlock: $(cat "$dir/hb.$name")"
	end_job "$app"; app=""
	grep -q "^heartbeat: snapshot of job $job.$name in $dir/snap.$name: a deadlock named at" "$dir/hb.$name" ||
		die "$name: no snapshot: $(cat "$dir/hb.$name")"
	grep -q "^heartbeat: a deadlock named at" "$dir/snap.$name/TRIGGER" || die "$name: TRIGGER"
	grep "deadlock for" "$dir/snap.$name/waitfor" | tr '<' '\n' |
		sed -n 's/.*rank\([0-9]*\) in MPI_[A-Za-z]* \(to\|from\) \([0-9]*\) tag \([0-9]*\).*/\1 \3 \4/p' >"$dir/named.$name"
	[ -s "$dir/named.$name" ] || die "$name: the wait-for graph names no call: $(cat "$dir/snap.$name/waitfor")"
	while read -r r peer tag; do
		last=$(events list "$dir/snap.$name" | awk -v p="$job.$name.r$r" '$1 == p' | tail -1)
		echo "$last" | awk -v peer="$peer" -v tag="$tag" '$3 >= 4096 && $6 == peer && $8 == tag { ok = 1 } END { exit !ok }' ||
			die "$name: rank $r's last event is not its unfinished call to/from $peer tag $tag: $last"
	done <"$dir/named.$name"
	"$BIN/esprofile" "$dir/snap.$name" >/dev/null 2>&1 || die "$name: esprofile cannot read the snapshot"
	# in the JSON the unfinished calls' bytes are unknown (their notes do
	# not say them), never a false 0
	"$BIN/esconvert" -q --json "$dir/snap.$name.json" "$dir/snap.$name" || die "$name: no JSON of the snapshot"
	python3 - "$dir/snap.$name.json" <<'PY' || die "$name: an unfinished call's bytes in the JSON"
import json, sys
u = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("args", {}).get("unfinished")]
sys.exit(not u or any(e["args"]["bytes"] is not None for e in u))
PY
	rm_segments "$job.$name"
done
# colopmon: a collective's imbalance, and a rank's share inside MPI (ring_demo's
# stuck rank keeps the others waiting for two seconds)
"$BIN/colopmon" -q -w 30 --snapshot "$dir/snap.imb" --imbalance 20 "$job.late" >"$dir/co.imb" 2>&1 &
co=$!
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.late" "$BUILD/tests/mpi_late" ||
	die "mpi_late failed"
wait $co
grep -q "^colopmon: MPI_Allreduce #3: imbalance [0-9.]* ms (--imbalance 20), last in: rank 1$" \
	"$dir/snap.imb/TRIGGER" || die "colopmon --imbalance: $(cat "$dir/co.imb")"
"$BIN/colopmon" -q -w 30 --snapshot "$dir/snap.mpi" --mpi-above 80 "$job.ring" >"$dir/co.mpi" 2>&1 &
co=$!
mpirun --oversubscribe --allow-run-as-root -np 4 "$BIN/esrun" -q -j "$job.ring" "$BUILD/tests/ring_demo" 5 \
	>/dev/null 2>&1 || die "ring_demo failed"
wait $co
grep -q "^colopmon: rank [0-9] was inside MPI [0-9.]*% of [0-9.]* s (--mpi-above 80)$" "$dir/snap.mpi/TRIGGER" ||
	die "colopmon --mpi-above: $(cat "$dir/co.mpi")"
echo "t_blackbox: ok"
