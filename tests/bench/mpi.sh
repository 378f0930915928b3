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
# Under Open MPI three more take part: libescollect built without its
# clock reads (bench/noclock: each stamp a per-thread count), so that each
# call's cost is split into its clock reads and the rest; libescollect
# following no request (bench/noreq), so that the halo exchange's cost of
# following its requests is its own figure; and, beside hpcc, the floor
# of a PMPI tool that sees each poll's outcome (bench/floor: a poll keeps
# its flag across MPI's call and looks at it).
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
noclock=$at/bench/noclock/libescollect.so noreq=$at/bench/noreq/libescollect.so floor=$at/bench/floor/libesfloor.so
cost_kinds="bare empty es" hpcc_kinds="bare empty es"
if [ "$mpi" = openmpi ] && [ -e "$noclock" ] && [ -e "$noreq" ] && [ -e "$floor" ]; then
	cost_kinds="bare empty es noclock noreq" hpcc_kinds="bare empty es floor"
fi

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
	noclock) launch 1 LD_PRELOAD="$noclock" ES_JOB="$job.n" "$at/bench/mpi_cost"; rm_segments "$job.n" ;;
	noreq) launch 1 LD_PRELOAD="$noreq" ES_JOB="$job.r" "$at/bench/mpi_cost"; rm_segments "$job.r" ;;
	esac 2>/dev/null
}
# hpcc KIND: MPIRandomAccess's GUP/s
hpcc() {
	case $1 in
	bare) hpcc_run "$dir" ;;
	empty) hpcc_run "$dir" -x LD_PRELOAD="$empty" ;;
	floor) hpcc_run "$dir" -x LD_PRELOAD="$floor" ;;
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
# rounds N FN OUT KIND...: N rounds of FN KIND for each KIND, in an order
# rotated each round so that none always runs first; OUT gets a line of
# the kinds' figures per round, in the order given (bare first), OUT.null
# "before bare" for each round after the first (bare twice in a row: the
# null control)
rounds() {
	n=$1 fn=$2 out=$3 prev=""
	shift 3
	for i in $(seq 1 "$n"); do
		r=$((i % $#)) k=0
		for kind in "$@" "$@"; do
			k=$((k + 1))
			[ "$k" -gt "$r" ] && [ "$k" -le $((r + $#)) ] || continue
			eval "v_$kind=\$($fn $kind)"
			eval "[ -n \"\$v_$kind\" ]" || { echo "mpi: $fn failed ($kind)"; exit 1; }
		done
		line="" said=""
		for kind in "$@"; do
			eval "line=\"\$line \$v_$kind\" said=\"\$said | $kind \$v_$kind\""
		done
		echo "$line" >>"$dir/$out"
		[ -n "$prev" ] && echo "$prev $v_bare" >>"$dir/$out.null"
		prev=$v_bare
		echo "  round $i:${said# |}"
	done
}

echo "mpi: $runs rounds of mpi_cost under $mpi: $cost_kinds (bare MPI, an empty PMPI interposer, libescollect$([ "$cost_kinds" = "bare empty es" ] || echo ", libescollect without its clock reads, libescollect following no request"))"
# shellcheck disable=SC2086 # the kinds, split on purpose
rounds "$runs" cost cost $cost_kinds
# over FILE K A B: median over rounds of field K of kind A minus field K of
# kind B (kinds by place: 0 bare, 1 empty, 2 libescollect, 3 without clocks, 4 following no request)
over() { awk -v k="$2" -v a="$3" -v b="$4" '{ printf "%.2f\n", $(k + 4 * a) - $(k + 4 * b) }' "$dir/$1" | median; }
nullc() { awk -v k="$1" '{ printf "%.2f\n", $(k + 4) - $k }' "$dir/cost.null" | median; }
b=$(over cost 1 2 0) s=$(over cost 2 2 0) p=$(over cost 3 2 0) h=$(over cost 4 2 0)
eb=$(over cost 1 1 0) es=$(over cost 2 1 0) ep=$(over cost 3 1 0) eh=$(over cost 4 1 0)
echo "  libescollect over bare, median ns a call: Barrier $b, Sendrecv $s, fruitless Testany $p, Isend+Irecv+Waitall $h"
echo "  empty interposer over bare:                Barrier $eb, Sendrecv $es, fruitless Testany $ep, Isend+Irecv+Waitall $eh"
ch=- fh=-
if [ "$cost_kinds" != "bare empty es" ]; then
	ch=$(over cost 4 2 3) fh=$(over cost 4 2 4)
	echo "  of libescollect's, its clock reads:         Barrier $(over cost 1 2 3), Sendrecv $(over cost 2 2 3), fruitless Testany $(over cost 3 2 3), Isend+Irecv+Waitall $ch"
	echo "  ... following requests (their records, looking them up, their completions written): Isend+Irecv+Waitall $fh"
fi
echo "  null (bare over the round before):         $(nullc 1), $(nullc 2), $(nullc 3), $(nullc 4)"

# ratios A B FILE: field A over field B of each line of FILE, into FILE.AB
ratios() { awk -v a="$1" -v b="$2" '{ printf "%.4f\n", $a / $b }' "$dir/$3" >"$dir/$3.$1$2"; }
# app NAME WHAT KIND...: HPCC_RUNS rounds of NAME; sets NAME_ve, NAME_vb
# (libescollect over empty, over bare) and, with the floor, NAME_vf
app() {
	name=$1 what=$2
	shift 2
	echo "mpi: $hpcc_runs rounds of $name (2 ranks, $what) under $mpi: $*"
	rounds "$hpcc_runs" "$name" "$name" "$@"
	ratios 3 2 "$name"; ratios 3 1 "$name"; ratios 2 1 "$name"; ratios 2 1 "$name.null"
	eval "${name}_ve=\$(median <\"\$dir/\$name.32\") ${name}_vb=\$(median <\"\$dir/\$name.31\")"
	echo "  libescollect / empty: median $(median <"$dir/$name.32") ($(spread <"$dir/$name.32")); / bare: median $(median <"$dir/$name.31") ($(spread <"$dir/$name.31"))"
	echo "  empty / bare: median $(median <"$dir/$name.21") ($(spread <"$dir/$name.21")); null, bare / the round before: median $(median <"$dir/$name.null.21") ($(spread <"$dir/$name.null.21"))"
	if [ $# = 4 ]; then
		ratios 4 2 "$name"; ratios 3 4 "$name"
		eval "${name}_vf=\$(median <\"\$dir/\$name.34\")"
		echo "  the floor of a tool that sees each poll's outcome / empty: median $(median <"$dir/$name.42") ($(spread <"$dir/$name.42")); libescollect / that floor: median $(median <"$dir/$name.34") ($(spread <"$dir/$name.34"))"
	fi
}
hpcc_ve=- hpcc_vb=- hpcc_vf=-
if [ "$mpi" = openmpi ]; then
	hpcc_input "$dir"
	# shellcheck disable=SC2086
	app hpcc "MPIRandomAccess GUP/s" $hpcc_kinds
fi
app ra "hpcc RandomAccess's communication, GUP/s" bare empty es
app halo "LAMMPS melt's communication, steps/s" bare empty es
echo "mpi: mpi=$mpi barrier_ns=$b sendrecv_ns=$s halo_ns=$h poll_ns=$p empty_halo_ns=$eh halo_clock_ns=$ch halo_follow_ns=$fh hpcc_vs_empty=$hpcc_ve hpcc_vs_bare=$hpcc_vb hpcc_vs_floor=$hpcc_vf ra_vs_empty=$ra_ve ra_vs_bare=$ra_vb melt_vs_empty=$halo_ve melt_vs_bare=$halo_vb"
