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
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.w" "$BIN/windtunnel" -q -N 256 \
	-m 2 -l 2 -t 1000000 --transport mpi >/dev/null 2>&1 &
app=$!
"$BIN/esrecord" -w 30 -o "$dir/whole" "$job.w" 2>"$dir/whole.err" &
whole=$!
"$BIN/esrecord" -w 30 -o "$dir/part" "$job.w" 2>"$dir/part.err" &
part=$!
wait_for 30 grep -q "^until:" "$dir/part/INFO" || die "no checkpoint: $(cat "$dir/part.err")"
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
echo "t_blackbox: ok"
