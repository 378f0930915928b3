#!/bin/sh
# control.sh - what live control costs an MPI call: mpi_cost under libescollect.so with esctl's check on the call path and without it, side by side.
#
# usage: control.sh BUILDDIR [RUNS]
# Interleaved runs (without, with, without, with...) of mpi_cost, each
# recording every call; per pair the difference, per call; the null
# control is each run without against the one before it.
# Ends with: control: barrier_ns=N sendrecv_ns=N testany_ns=N isend_irecv_waitall_ns=N (null N N N N)
set -u
build=$(cd "${1:?usage: control.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-9}
bench_job=bctl
. "$(dirname "$0")/lib.sh"
noctl="$build/bench/noctl/libescollect.so"
[ -x "$build/bench/mpi_cost" ] && [ -f "$noctl" ] || { echo "control: build $build's benchmarks first"; exit 2; }

# cost LIB: mpi_cost's four figures (ns a call: Barrier, Sendrecv, fruitless Testany, Isend+Irecv+Waitall)
cost() {
	mpirun --oversubscribe --allow-run-as-root -np 1 -x LD_PRELOAD="$1" -x ES_JOB="$job.m" \
		"$build/bench/mpi_cost" 2>/dev/null
	rm_segments "$job.m"
}
echo "control: $runs interleaved runs of mpi_cost, without esctl's check and with it"
prev=""
for i in $(seq 1 "$runs"); do
	a=$(cost "$noctl") b=$(cost "$build/lib/libescollect.so")
	echo "$a $b" >>"$dir/pairs"
	[ -n "$prev" ] && echo "$prev $a" >>"$dir/null"
	prev=$a
	echo "  run $i: without $a | with $b"
done
col() { awk -v k="$2" '{ printf "%.2f\n", $(k + 4) - $k }' "$dir/$1" | median; }
d1=$(col pairs 1) d2=$(col pairs 2) d3=$(col pairs 3) d4=$(col pairs 4)
n1=$(col null 1) n2=$(col null 2) n3=$(col null 3) n4=$(col null 4)
echo "  with minus without, median ns a call: Barrier $d1, Sendrecv $d2, fruitless Testany $d3, Isend+Irecv+Waitall $d4"
echo "  null pairs (without minus the run before): $n1, $n2, $n3, $n4"
echo "control: barrier_ns=$d1 sendrecv_ns=$d2 testany_ns=$d3 isend_irecv_waitall_ns=$d4 (null $n1 $n2 $n3 $n4)"
