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

# the recorder's CPU per event: mpi_cost's millions of calls, recorded by esrecord
python3 - "$build/bin/esrecord" -w 30 -o "$dir/a" "$job.r" >"$dir/rec.cpu" 2>"$dir/rec.err" <<'PY' &
import resource, subprocess, sys
subprocess.run(sys.argv[1:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)
PY
rec=$!
mpirun --oversubscribe --allow-run-as-root -np 1 -x LD_PRELOAD="$build/lib/libescollect.so" -x ES_JOB="$job.r" \
	"$build/bench/mpi_cost" >/dev/null 2>&1
wait $rec
events=$(sed -n 's/^esrecord: \([0-9]*\) events written.*/\1/p' "$dir/rec.err")
lost=$(sed -n 's/.* \([0-9]*\) discarded before.*/\1/p' "$dir/rec.err")
rns=$(awk -v c="$(cat "$dir/rec.cpu")" -v n="${events:-0}" 'BEGIN { printf "%.1f", n ? c * 1e9 / n : -1 }')
echo "  recorder: $events events written ($lost discarded) in $(cat "$dir/rec.cpu") s of CPU: $rns ns an event"
rm -rf "$dir/a"
rm_segments "$job.r"

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
