#!/bin/sh
# waits.sh - what issue 41's wait states cost and how true they are: the live engine's CPU per event (colopmon --waits against colopmon), the engine after the run (events a second on one core), and the worst error on the ground-truth programs.
#
# usage: waits.sh BUILDDIR [STEPS]
# Live: halo (LAMMPS's pattern, 2 ranks, STEPS steps, default 20000) runs
# under esrun with elements big enough for its whole trace, then, the job
# ended so that nothing competes, colopmon reads that backlog with and
# without --waits, three times each, interleaved; the difference of their
# CPU times (user and system, rusage) per event is the wait states' live
# cost, and 1 / (colopmon --waits' CPU per event) the events a second one
# core keeps up with.  After the run: bench/waits on the archive of the same
# backlog (ar_waits_feed, the engine, ws_analyse; reading not timed).
# Truth: mpi_waits and mpi_waits_f (D = 200 ms) against their own clocks
# (waits_check.py), and against D itself.
# Ends with: waits: live_events_per_s=N post_events_per_s=N late_sender_error=X
set -u
build=$(cd "${1:?usage: waits.sh BUILDDIR [STEPS]}" && pwd)
steps=${2:-20000}
bench_job=bwait
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")/../integration" && pwd)
[ -x "$build/bench/waits" ] && [ -x "$build/bench/halo" ] || { echo "waits: build $build's benchmarks first"; exit 2; }

echo "waits: halo, 2 ranks, $steps steps, its whole trace kept, then read by colopmon with and without --waits"
mpirun --oversubscribe --allow-run-as-root -np 2 "$bin/esrun" -q -s 160M -j "$job.h" "$build/bench/halo" "$steps" \
	>/dev/null 2>&1 || { echo "waits: halo failed"; exit 1; }
# cpu ARGS...: colopmon's user + system seconds over the backlog, and the events it judged
cpu() {
	python3 - "$bin/colopmon" -q -w 5 "$@" "$job.h" <<'PY'
import resource, subprocess, sys
out = subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
ev = [l.split("from ")[1].split()[0] for l in out.splitlines() if "judged from" in l]
print(r.ru_utime + r.ru_stime, ev[0] if ev else 0)
PY
}
for i in 1 2 3; do
	set -- $(cpu) && plain=$1
	set -- $(cpu --waits) && with=$1 events=$2
	[ "$events" -gt 0 ] || { echo "waits: colopmon --waits judged no event"; exit 1; }
	awk -v p="$plain" -v w="$with" -v n="$events" 'BEGIN { printf "%.1f %.1f %.0f\n", p * 1e9 / n, (w - p) * 1e9 / n, n / w }' \
		>>"$dir/live"
	echo "  run $i: $events events; colopmon $plain s, with --waits $with s: $(tail -1 "$dir/live" | awk '{ print $2 " ns an event for the wait states, " $3 " events/s in all" }')"
done
wns=$(cut -d' ' -f2 "$dir/live" | median) live=$(cut -d' ' -f3 "$dir/live" | median)
echo "  live: the wait states $wns ns of CPU an event (median), colopmon --waits keeps up with $live events/s on one core"
"$bin/esrecord" -w 5 -o "$dir/halo" "$job.h" 2>/dev/null || { echo "waits: esrecord failed"; exit 1; }
rm_segments "$job.h"
"$build/bench/waits" "$dir/halo" 3 | tee "$dir/post"
post=$(sed -n 's/^post_events_per_s=//p' "$dir/post")

# truth: each wait against the programs' own clocks, and Late Sender against D
err=0
for p in mpi_waits mpi_waits_f; do
	mkdir -p "$dir/$p"
	"$bin/esrecord" -w 30 -o "$dir/$p.ar" "$job.$p" 2>/dev/null &
	rec=$!
	mpirun --oversubscribe --allow-run-as-root -np 3 "$bin/esrun" -q -j "$job.$p" "$build/tests/$p" 200 "$dir/$p" \
		>/dev/null 2>&1 || { echo "waits: $p failed"; exit 1; }
	wait $rec
	"$bin/esprofile" --json -o "$dir/$p.json" "$dir/$p.ar" || exit 1
	f=$([ "$p" = mpi_waits ] && echo mpi_waits.c || echo mpi_waits_f.F90)
	line=$(python3 "$here/waits_check.py" "$dir/$p.json" "$dir/$p"/truth* --file "$f" | head -1)
	echo "  $p: $line"
	e=$(echo "$line" | sed -n 's/.*over 50 ms \([0-9.]*\)$/\1/p')
	err=$(awk -v a="$err" -v b="${e:-1}" 'BEGIN { print (b > a) ? b : a }')
	python3 - "$dir/$p.json" <<'PY'
import json, sys
ls = [w["seconds"] for w in json.load(open(sys.argv[1]))["wait_states"] if w["pattern"] == "late_sender"]
print("    Late Sender waits %s s: against D = 0.200 s, %s" % (" ".join("%.4f" % s for s in ls),
      " ".join("%+.1f%%" % (100 * (s - 0.2) / 0.2) for s in ls)))
PY
	rm_segments "$job.$p"
done
echo "waits: live_events_per_s=$live post_events_per_s=$post late_sender_error=$err"
