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

echo "mpi: $runs rounds of mpi_cost, bare, under an empty PMPI interposer and under libescollect.so"
prev=""
for i in $(seq 1 "$runs"); do
	for k in $(order "$i"); do
		eval "r_$k=\$(cost $k)"
		eval "[ -n \"\$r_$k\" ]" || { echo "mpi: mpi_cost failed ($k)"; exit 1; }
	done
	echo "$r_bare $r_empty $r_es" >>"$dir/cost"
	[ -n "$prev" ] && echo "$prev $r_bare" >>"$dir/null"
	prev=$r_bare
	echo "  round $i: bare $r_bare | empty $r_empty | libescollect $r_es"
done
# over FILE K OFF: median of field K+OFF minus field K (OFF 4: empty, 8: libescollect)
over() { awk -v k="$2" -v o="$3" '{ printf "%.2f\n", $(k + o) - $k }' "$dir/$1" | median; }
nullc() { awk -v k="$1" '{ printf "%.2f\n", $(k + 4) - $k }' "$dir/null" | median; }
b=$(over cost 1 8) s=$(over cost 2 8) p=$(over cost 3 8) h=$(over cost 4 8)
eb=$(over cost 1 4) es=$(over cost 2 4) ep=$(over cost 3 4) eh=$(over cost 4 4)
echo "  libescollect over bare, median ns a call: Barrier $b, Sendrecv $s, fruitless Testany $p, Isend+Irecv+Waitall $h"
echo "  empty interposer over bare:                Barrier $eb, Sendrecv $es, fruitless Testany $ep, Isend+Irecv+Waitall $eh"
echo "  null (bare over the round before):         $(nullc 1), $(nullc 2), $(nullc 3), $(nullc 4)"

echo "mpi: $hpcc_runs rounds of hpcc (2 ranks), MPIRandomAccess GUP/s, the same three"
hpcc_input "$dir"
prev=""
for i in $(seq 1 "$hpcc_runs"); do
	for k in $(order "$i"); do
		eval "g_$k=\$(hpcc $k)"
		eval "[ -n \"\$g_$k\" ]" || { echo "mpi: hpcc failed ($k)"; exit 1; }
	done
	ratio "$g_es" "$g_empty" >>"$dir/vs_empty"
	ratio "$g_es" "$g_bare" >>"$dir/vs_bare"
	ratio "$g_empty" "$g_bare" >>"$dir/empty_vs_bare"
	[ -n "$prev" ] && ratio "$g_bare" "$prev" >>"$dir/hnull"
	prev=$g_bare
	echo "  round $i: bare $g_bare | empty $g_empty | libescollect $g_es"
done
ve=$(median <"$dir/vs_empty") vb=$(median <"$dir/vs_bare")
echo "  libescollect / empty: median $ve ($(spread <"$dir/vs_empty")); / bare: median $vb ($(spread <"$dir/vs_bare"))"
echo "  empty / bare: median $(median <"$dir/empty_vs_bare") ($(spread <"$dir/empty_vs_bare")); null, bare / the round before: median $(median <"$dir/hnull") ($(spread <"$dir/hnull"))"
echo "mpi: barrier_ns=$b sendrecv_ns=$s halo_ns=$h poll_ns=$p empty_halo_ns=$eh hpcc_vs_empty=$ve hpcc_vs_bare=$vb"
