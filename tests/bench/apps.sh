#!/bin/sh
# apps.sh - real MPI programs from Debian with and without libescollect.so, side by side: hpcc's RandomAccess, LAMMPS melt, and the Fortran test.
#
# usage: apps.sh BUILDDIR [PAIRS]
# Runs each program at 2 ranks without and with the collectors (esrun),
# interleaved pair by pair (the order alternating), and reports each pair's
# ratio and their median; the machine's drift cancels within a pair.
# hpcc's timed RandomAccess lasts some 40 ms here, so one stall of the VM
# moves a pair by 30%: it runs 25 pairs (HPCC_PAIRS), a second each.
set -u
build=$(cd "${1:?usage: apps.sh BUILDDIR [PAIRS]}" && pwd)
pairs=${2:-9}
hpcc_pairs=${HPCC_PAIRS:-25}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=bapps
. "$(dirname "$0")/lib.sh"

# side_by_side NAME N CMD... : N pairs without and with (esrun $ESRUN_ARGS), in alternating order
side_by_side() {
	name=$1 n=$2; shift 2
	: >"$dir/$name.ratios"
	i=1
	while [ "$i" -le "$n" ]; do
		if [ $((i % 2)) = 1 ]; then
			a=$("$@") || exit 1
			b=$("$@" "$bin/esrun" -q -j "$job.$name$i" ${ESRUN_ARGS:-}) || exit 1
		else
			b=$("$@" "$bin/esrun" -q -j "$job.$name$i" ${ESRUN_ARGS:-}) || exit 1
			a=$("$@") || exit 1
		fi
		r=$(ratio "$b" "$a")
		echo "$r" >>"$dir/$name.ratios"
		printf "  %-7s pair %d: without %s, with %s: %s\n" "$name" "$i" "$a" "$b" "$r"
		rm_segments "$job.$name$i"
		i=$((i + 1))
	done
}

echo "apps: interleaved pairs of runs at 2 ranks, without and with libescollect.so (every call)"
hpcc_input "$dir"
side_by_side hpcc "$hpcc_pairs" hpcc_run "$dir"
hpcc_ratio=$(median <"$dir/hpcc.ratios")
echo "  hpcc MPIRandomAccess GUP/s with / without: median $hpcc_ratio (pairs $(spread <"$dir/hpcc.ratios"))"
# the same with everything but the polls, what a poll-bound program can ask
printf 'pathmap: 1\nname: ignored\nmpi:\n  collect: [all, -polls]\n' >"$dir/nopolls.yaml"
ESRUN_ARGS="-p $dir/nopolls.yaml" side_by_side hpccnp "$hpcc_pairs" hpcc_run "$dir"
nopolls_ratio=$(median <"$dir/hpccnp.ratios")
echo "  hpcc MPIRandomAccess GUP/s with [all, -polls] / without: median $nopolls_ratio (pairs $(spread <"$dir/hpccnp.ratios"))"

steps=4000
side_by_side lammps "$pairs" lammps_melt "$dir" "$steps"
lammps_ratio=$(median <"$dir/lammps.ratios")
echo "  LAMMPS melt ($steps steps) steps/s with / without: median $lammps_ratio (pairs $(spread <"$dir/lammps.ratios"))"

# geteventmon on LAMMPS from before it starts to its end: what it lost
"$bin/geteventmon" -w 60 -o /dev/null "$job.lost" 2>"$dir/gem.err" &
gem=$!
lammps_melt "$dir" "$steps" "$bin/esrun" -q -j "$job.lost" >/dev/null || exit 1
wait $gem
sed 's/^/  /' "$dir/gem.err"
lost=$(sed -n 's/^geteventmon: [0-9]* events written, \([0-9]*\) discarded.*/\1/p' "$dir/gem.err")
[ -n "$lost" ] || { echo "apps: geteventmon did not say what it lost"; exit 1; }

# the Fortran test program (use mpi): the calls recorded from Fortran
mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_EXPECT_DIR="$dir" "$bin/esrun" -q -j "$job.f" \
	"$build/tests/mpi_fortran90" >/dev/null || exit 1
fortran=$("$bin/geteventmon" -w 0 -n 1 "$job.f" 2>&1 >/dev/null | sed -n 's/^geteventmon: \([0-9]*\) events written.*/\1/p')
echo "  Fortran (use mpi), 2 ranks: $fortran calls recorded"
echo "apps: hpcc_gups_ratio=$hpcc_ratio lammps_ratio=$lammps_ratio lammps_lost=${lost:-?} fortran_calls=${fortran:-0}"
