#!/bin/sh
# mpi.sh - what libescollect costs an MPI call, hpcc's RandomAccess and programs that communicate as hpcc's and LAMMPS's do, set beside an empty PMPI interposer (the floor of any PMPI tool) and bare MPI, in one run, under Open MPI or MPICH.
#
# usage: mpi.sh [--mpi openmpi|mpich] BUILDDIR [RUNS]
# mpi_cost (best of 5 loops of 200,000 calls each) runs bare, under the
# empty interposer and under libescollect, the three in a rotating order,
# RUNS times (9); a cost is the median over runs of (with - bare), and the
# null control the median of (bare - the previous run's bare).  Then the
# programs, the same way, HPCC_RUNS rounds each (15): hpcc's
# MPIRandomAccess (Debian's hpcc: Open MPI only), ra (its communication:
# tests/bench/ra.c) and halo (LAMMPS melt's: tests/bench/halo.c), each
# on 2 ranks; their ratios are medians of their rates over the bare (or
# empty) run of the same round, beside the null ratio of bare over the
# previous round's bare.  Under MPICH every program, the interposer and
# the collector are MPICH's builds (build/*/mpich).
set -u
mpi=openmpi
if [ "${1:-}" = --mpi ]; then
	mpi=${2:?usage: mpi.sh [--mpi openmpi|mpich] BUILDDIR [RUNS]}
	shift 2
fi
build=$(cd "${1:?usage: mpi.sh [--mpi openmpi|mpich] BUILDDIR [RUNS]}" && pwd)
runs=${2:-9}
hpcc_runs=${HPCC_RUNS:-15}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=bmpi
. "$(dirname "$0")/lib.sh"
case $mpi in
openmpi) at=$build lib=$build/lib/libescollect-openmpi.so ;;
mpich) at=$build/mpich lib=$build/lib/libescollect-mpich.so ;;
*) echo "mpi: --mpi $mpi: expected openmpi or mpich"; exit 2 ;;
esac
empty=$at/bench/empty/libesempty.so
for f in "$at/bench/mpi_cost" "$at/bench/ra" "$at/bench/halo" "$empty" "$lib"; do
	[ -e "$f" ] || { echo "mpi: no $f: build $build's benchmarks first (make bench)"; exit 2; }
done

# launch NP [VAR=VALUE...] PROGRAM ARGS...: under this MPI's launcher,
# the variables set for the ranks (values without blanks: paths, names)
launch() {
	np=$1 envs=""
	shift
	while case $1 in *=*) true ;; *) false ;; esac; do
		if [ "$mpi" = mpich ]; then envs="$envs -genv ${1%%=*} ${1#*=}"; else envs="$envs -x $1"; fi
		shift
	done
	if [ "$mpi" = mpich ]; then
		# shellcheck disable=SC2086
		mpiexec.hydra -n "$np" $envs "$@"
	else
		# shellcheck disable=SC2086
		mpirun --oversubscribe --allow-run-as-root -np "$np" $envs "$@"
	fi
}

# cost KIND: mpi_cost's four figures (ns a call: Barrier, Sendrecv, fruitless Testany, Isend+Irecv+Waitall)
cost() {
	case $1 in
	bare) launch 1 "$at/bench/mpi_cost" ;;
	empty) launch 1 LD_PRELOAD="$empty" "$at/bench/mpi_cost" ;;
	es) launch 1 LD_PRELOAD="$lib" ES_JOB="$job.m" "$at/bench/mpi_cost"; rm_segments "$job.m" ;;
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
# ra KIND, halo KIND: their rates (GUP/s, steps/s) on 2 ranks
ra() { prog 2 ra 22 "$1"; }
halo() { prog 2 halo 3000 "$1"; }
prog() { # prog NP NAME ARG KIND
	case $4 in
	bare) launch "$1" "$at/bench/$2" "$3" ;;
	empty) launch "$1" LD_PRELOAD="$empty" "$at/bench/$2" "$3" ;;
	es) launch "$1" "$bin/esrun" -q -j "$job.$2" "$at/bench/$2" "$3"; rm_segments "$job.$2" ;;
	esac 2>/dev/null
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

echo "mpi: $runs rounds of mpi_cost under $mpi, bare, under an empty PMPI interposer and under libescollect"
rounds "$runs" cost cost
# over FILE K OFF: median of field K+OFF minus field K (OFF 4: empty, 8: libescollect)
over() { awk -v k="$2" -v o="$3" '{ printf "%.2f\n", $(k + o) - $k }' "$dir/$1" | median; }
nullc() { awk -v k="$1" '{ printf "%.2f\n", $(k + 4) - $k }' "$dir/cost.null" | median; }
b=$(over cost 1 8) s=$(over cost 2 8) p=$(over cost 3 8) h=$(over cost 4 8)
eb=$(over cost 1 4) es=$(over cost 2 4) ep=$(over cost 3 4) eh=$(over cost 4 4)
echo "  libescollect over bare, median ns a call: Barrier $b, Sendrecv $s, fruitless Testany $p, Isend+Irecv+Waitall $h"
echo "  empty interposer over bare:                Barrier $eb, Sendrecv $es, fruitless Testany $ep, Isend+Irecv+Waitall $eh"
echo "  null (bare over the round before):         $(nullc 1), $(nullc 2), $(nullc 3), $(nullc 4)"

# ratios A B FILE: field A over field B of each line of FILE, into FILE.AB
ratios() { awk -v a="$1" -v b="$2" '{ printf "%.4f\n", $a / $b }' "$dir/$3" >"$dir/$3.$1$2"; }
# app NAME WHAT: HPCC_RUNS rounds of NAME; sets NAME_ve, NAME_vb (libescollect over empty, over bare)
app() {
	echo "mpi: $hpcc_runs rounds of $1 (2 ranks, $2) under $mpi, the same three"
	rounds "$hpcc_runs" "$1" "$1"
	ratios 3 2 "$1"; ratios 3 1 "$1"; ratios 2 1 "$1"; ratios 2 1 "$1.null"
	eval "${1}_ve=\$(median <\"\$dir/\$1.32\") ${1}_vb=\$(median <\"\$dir/\$1.31\")"
	echo "  libescollect / empty: median $(median <"$dir/$1.32") ($(spread <"$dir/$1.32")); / bare: median $(median <"$dir/$1.31") ($(spread <"$dir/$1.31"))"
	echo "  empty / bare: median $(median <"$dir/$1.21") ($(spread <"$dir/$1.21")); null, bare / the round before: median $(median <"$dir/$1.null.21") ($(spread <"$dir/$1.null.21"))"
}
hpcc_ve=- hpcc_vb=-
if [ "$mpi" = openmpi ]; then
	hpcc_input "$dir"
	app hpcc "MPIRandomAccess GUP/s"
fi
app ra "hpcc RandomAccess's communication, GUP/s"
app halo "LAMMPS melt's communication, steps/s"
echo "mpi: mpi=$mpi barrier_ns=$b sendrecv_ns=$s halo_ns=$h poll_ns=$p empty_halo_ns=$eh hpcc_vs_empty=$hpcc_ve hpcc_vs_bare=$hpcc_vb ra_vs_empty=$ra_ve ra_vs_bare=$ra_vb melt_vs_empty=$halo_ve melt_vs_bare=$halo_vb"
