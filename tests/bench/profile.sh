#!/bin/sh
# profile.sh - what issue 28's pieces cost: a call site per recorded call (and a call path), the recorder's CPU per event, the archive's readers against the thread count.
#
# usage: profile.sh BUILDDIR [RUNS]
# Call sites: mpi_cost under libescollect.so with ES_CALLPATH=0 (no site
# kept), 1 (the default) and 4 (a call path), interleaved 0 1 4 0 1 4 ...;
# per run of 1 the difference from the run of 0 before it, per recorded
# call; the null control is each run of 0 against the one before it.
# Ends with: profile: callsite_ns=N (null N) callpath4_ns=N record_ns_per_event=N
#            otf2_events_per_s=N convert_1024_threads_s=S
set -u
build=$(cd "${1:?usage: profile.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-9}
bench_job=bprof
. "$(dirname "$0")/lib.sh"
[ -x "$build/bench/mpi_cost" ] && [ -x "$build/bench/archive" ] || { echo "profile: build $build's benchmarks first"; exit 2; }

# cost DEPTH: mpi_cost's four figures (ns a call: Barrier, Sendrecv, fruitless Testany, Isend+Irecv+Waitall)
cost() {
	mpirun --oversubscribe --allow-run-as-root -np 1 -x LD_PRELOAD="$build/lib/libescollect.so" \
		-x ES_JOB="$job.m" -x ES_CALLPATH="$1" "$build/bench/mpi_cost" 2>/dev/null
	rm_segments "$job.m"
}
echo "profile: call sites, $runs interleaved runs of mpi_cost with none kept, one frame, four frames"
prev0=""
for i in $(seq 1 "$runs"); do
	c0=$(cost 0) c1=$(cost 1)
	[ "$i" -le 3 ] && c4=$(cost 4) && echo "$c0 $c4" >>"$dir/pairs4"
	echo "$c0 $c1" >>"$dir/pairs"
	[ -n "$prev0" ] && echo "$prev0 $c0" >>"$dir/null"
	prev0=$c0
	echo "  run $i: none $c0 | one frame $c1${c4:+ | four frames $c4}"
	c4=""
done
# a Barrier is one tuple a call; Sendrecv two (its send, its receive)
diff_col() { awk -v k="$2" -v per="$3" '{ print ($(k + 4) - $k) / per }' "$dir/$1" | median; }
site=$(diff_col pairs 1 1) site_sr=$(diff_col pairs 2 2) null=$(diff_col null 1 1)
path=$(diff_col pairs4 1 1)
echo "  a call site per recorded call: MPI_Barrier +$site ns, per Sendrecv tuple +$site_sr ns (null pairs: $null ns)"
echo "  a call path of four frames (glibc's backtrace at every call): MPI_Barrier +$path ns"

# the recorder's CPU per event: mpi_cost's calls kept in elements big
# enough for millions (-s 160M), recorded from that backlog after the job
# ended, so that nothing competes with it; three runs, the median
for i in 1 2 3; do
	mpirun --oversubscribe --allow-run-as-root -np 1 "$build/bin/esrun" -q -s 160M -j "$job.r$i" \
		"$build/bench/mpi_cost" >/dev/null 2>&1
	python3 - "$build/bin/esrecord" -w 5 -o "$dir/a$i" "$job.r$i" >"$dir/rec.cpu" 2>"$dir/rec.err" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime, r.ru_stime)
PY
	events=$(sed -n 's/^esrecord: \([0-9]*\) events written.*/\1/p' "$dir/rec.err")
	awk -v n="${events:-0}" '{ printf "%.1f %.1f\n", n ? ($1 + $2) * 1e9 / n : -1, n ? $2 * 1e9 / n : -1 }' \
		"$dir/rec.cpu" >>"$dir/rec.ns"
	echo "  recorder run $i: $events events, $(cat "$dir/rec.cpu") s user and system: $(tail -1 "$dir/rec.ns" | cut -d' ' -f1) ns an event"
	rm -rf "$dir/a$i"
	rm_segments "$job.r$i"
done
rns=$(cut -d' ' -f1 "$dir/rec.ns" | median) rsys=$(cut -d' ' -f2 "$dir/rec.ns" | median)
echo "  recorder: median $rns ns of CPU an event, $rsys ns of it in the kernel (writing the archive)"

# the archive's readers: a million events over more and more threads
echo "  archive readers, 1M events (in ${TMPDIR:-/tmp}; OTF2 makes a file per thread):"
for t in 4 16 256 1024; do
	line=$("$build/bench/archive" 1000000 "$t" | tail -1)
	echo "    $t threads: $line"
	[ "$t" = 4 ] && otf2=$(echo "$line" | sed 's/.*otf2_events_per_s=\([0-9]*\).*/\1/')
	[ "$t" = 1024 ] && conv=$(echo "$line" | sed 's/.*otf2_s=\([0-9.]*\).*/\1/')
done
echo "profile: callsite_ns=$site (null $null) callpath4_ns=$path record_ns_per_event=$rns" \
	"otf2_events_per_s=$otf2 convert_1024_threads_s=$conv"
