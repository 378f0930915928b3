#!/bin/sh
# mpi.sh - what libescollect costs an MPI call and hpcc's RandomAccess, set beside an empty PMPI interposer (the floor of any PMPI tool) and bare MPI, in one run.
#
# usage: mpi.sh BUILDDIR [RUNS]
# mpi_cost (best of 5 loops of 200,000 calls each) runs bare, under the
# empty interposer and under libescollect.so, the three in a rotating
# order, RUNS times (9); a cost is the median over runs of (with - bare),
# and the null control the median of (bare - the previous run's bare).
# hpcc's MPIRandomAccess runs the same way, HPCC_RUNS times (15); its
# ratios are medians of GUP/s over the bare (or empty) run of the same
# round, beside the null ratio of bare over the previous round's bare.
set -u
build=$(cd "${1:?usage: mpi.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-9}
hpcc_runs=${HPCC_RUNS:-15}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=bmpi
. "$(dirname "$0")/lib.sh"
empty=$build/bench/empty/libesempty.so
lib=$build/lib/libescollect.so
[ -x "$build/bench/mpi_cost" ] && [ -f "$empty" ] || { echo "mpi: build $build's benchmarks first"; exit 2; }

# cost KIND: mpi_cost's four figures (ns a call: Barrier, Sendrecv, fruitless Testany, Isend+Irecv+Waitall)
cost() {
	case $1 in
	bare) mpirun --oversubscribe --allow-run-as-root -np 1 "$build/bench/mpi_cost" ;;
	empty) mpirun --oversubscribe --allow-run-as-root -np 1 -x LD_PRELOAD="$empty" "$build/bench/mpi_cost" ;;
	es) mpirun --oversubscribe --allow-run-as-root -np 1 -x LD_PRELOAD="$lib" -x ES_JOB="$job.m" \
		"$build/bench/mpi_cost"; rm_segments "$job.m" ;;
	esac 2>/dev/null
}
# hpcc KIND: MPIRandomAccess's GUP/s
hpcc() {
	case $1 in
	bare) hpcc_run "$dir" ;;
	empty) hpcc_run "$dir" -x LD_PRELOAD="$empty" ;;
	es) hpcc_run "$dir" "$bin/esrun" -q -j "$job.h"; rm_segments "$job.h" ;;
	esac
}
order() { # order I: round I's kinds, rotated so that none always runs first
	case $(($1 % 3)) in 0) echo bare empty es ;; 1) echo empty es bare ;; 2) echo es bare empty ;; esac
}

# rounds N FN OUT: N rounds of FN bare, FN empty and FN es in rotating
# order; OUT gets a line "bare empty es" per round, OUT.null "before bare"
# for each round after the first (bare twice in a row: the null control)
rounds() {
	n=$1 fn=$2 out=$3 prev=""
	for i in $(seq 1 "$n"); do
		for k in $(order "$i"); do
			eval "v_$k=\$($fn $k)"
			eval "[ -n \"\$v_$k\" ]" || { echo "mpi: $fn failed ($k)"; exit 1; }
		done
		echo "$v_bare $v_empty $v_es" >>"$dir/$out"
		[ -n "$prev" ] && echo "$prev $v_bare" >>"$dir/$out.null"
		prev=$v_bare
		echo "  round $i: bare $v_bare | empty $v_empty | libescollect $v_es"
	done
}

echo "mpi: $runs rounds of mpi_cost, bare, under an empty PMPI interposer and under libescollect.so"
rounds "$runs" cost cost
# over FILE K OFF: median of field K+OFF minus field K (OFF 4: empty, 8: libescollect)
over() { awk -v k="$2" -v o="$3" '{ printf "%.2f\n", $(k + o) - $k }' "$dir/$1" | median; }
nullc() { awk -v k="$1" '{ printf "%.2f\n", $(k + 4) - $k }' "$dir/cost.null" | median; }
b=$(over cost 1 8) s=$(over cost 2 8) p=$(over cost 3 8) h=$(over cost 4 8)
eb=$(over cost 1 4) es=$(over cost 2 4) ep=$(over cost 3 4) eh=$(over cost 4 4)
echo "  libescollect over bare, median ns a call: Barrier $b, Sendrecv $s, fruitless Testany $p, Isend+Irecv+Waitall $h"
echo "  empty interposer over bare:                Barrier $eb, Sendrecv $es, fruitless Testany $ep, Isend+Irecv+Waitall $eh"
echo "  null (bare over the round before):         $(nullc 1), $(nullc 2), $(nullc 3), $(nullc 4)"

echo "mpi: $hpcc_runs rounds of hpcc (2 ranks), MPIRandomAccess GUP/s, the same three"
hpcc_input "$dir"
rounds "$hpcc_runs" hpcc gups
# ratios A B FILE: field A over field B of each line of FILE, into FILE.AB
ratios() { awk -v a="$1" -v b="$2" '{ printf "%.4f\n", $a / $b }' "$dir/$3" >"$dir/$3.$1$2"; }
ratios 3 2 gups; ratios 3 1 gups; ratios 2 1 gups; ratios 2 1 gups.null
ve=$(median <"$dir/gups.32") vb=$(median <"$dir/gups.31")
echo "  libescollect / empty: median $ve ($(spread <"$dir/gups.32")); / bare: median $vb ($(spread <"$dir/gups.31"))"
echo "  empty / bare: median $(median <"$dir/gups.21") ($(spread <"$dir/gups.21")); null, bare / the round before: median $(median <"$dir/gups.null.21") ($(spread <"$dir/gups.null.21"))"
echo "mpi: barrier_ns=$b sendrecv_ns=$s halo_ns=$h poll_ns=$p empty_halo_ns=$eh hpcc_vs_empty=$ve hpcc_vs_bare=$vb"
