#!/bin/sh
# versus.sh - one build against another, side by side: libescollect.so (mpi_cost's calls, hpcc's RandomAccess and LAMMPS melt, each recording every call), the PATHS collector, and the recorder per event.
#
# usage: versus.sh OLD_BUILDDIR NEW_BUILDDIR [PAIRS]   (make bench BASE=OLD_BUILDDIR)
# The runs go old new new old old new ..., so every pair (old, new) has its
# ratio new / old, and every border between pairs puts one setting twice in
# a row: those null pairs' ratios are what a change that costs nothing
# measures on this machine, the control printed beside each median.
# Ends with: versus: hpcc=R (null N) lammps=R (null N) halo_ns=OLD->NEW testany_ns=OLD->NEW
#            collector=R (null N) recorder=R (null N)
set -u
old=$(cd "${1:?usage: versus.sh OLD_BUILDDIR NEW_BUILDDIR [PAIRS]}" && pwd)
build=$(cd "${2:?usage: versus.sh OLD_BUILDDIR NEW_BUILDDIR [PAIRS]}" && pwd)
pairs=${3:-9}
hpcc_pairs=${HPCC_PAIRS:-25}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=bvs
. "$(dirname "$0")/lib.sh"
for b in "$old" "$build"; do
	[ -x "$b/bin/esrun" ] && [ -f "$b/lib/libescollect.so" ] || { echo "versus: $b has no esrun or libescollect.so"; exit 2; }
done

# sides NAME N FN: N pairs of FN BUILDDIR TAG under old's build and new's
# (each prints one figure; TAG names the run), in the order old new | new
# old | ...; pair ratios new / old in NAME.ratios, and in NAME.null the null
# pairs' (at every border between pairs one setting runs twice in a row)
sides() {
	name=$1 n=$2 fn=$3
	: >"$dir/$name.ratios"
	: >"$dir/$name.null"
	prev="" prevb=""
	i=1
	while [ "$i" -le "$n" ]; do
		for which in $([ $((i % 2)) = 1 ] && echo "old new" || echo "new old"); do
			b=$old
			[ "$which" = new ] && b=$build
			v=$("$fn" "$b" "$name$i$which") || exit 1
			[ "$which" = old ] && a_old=$v || a_new=$v
			[ "$prevb" = "$which" ] && ratio "$v" "$prev" >>"$dir/$name.null"
			prev=$v prevb=$which
		done
		r=$(ratio "$a_new" "$a_old")
		echo "$r" >>"$dir/$name.ratios"
		printf "  %-9s pair %d: old %s, new %s: %s\n" "$name" "$i" "$a_old" "$a_new" "$r"
		i=$((i + 1))
	done
}

# alternate NAME N CMD...: sides of CMD run under each build's esrun (CMD's
# words hold no spaces: the temporary directory and numbers)
under_esrun() {
	v=$($alt_cmd "$1/bin/esrun" -q -j "$job.$2")
	rc=$?
	rm_segments "$job.$2"
	echo "$v"
	return $rc
}
alternate() {
	name=$1 n=$2; shift 2
	alt_cmd="$*"
	sides "$name" "$n" under_esrun
}

echo "versus: $old (old) against $build (new), every call recorded, 2 ranks"
hpcc_input "$dir"
alternate hpcc "$hpcc_pairs" hpcc_run "$dir"
hpcc=$(median <"$dir/hpcc.ratios") hpcc_null=$(median <"$dir/hpcc.null")
echo "  hpcc MPIRandomAccess GUP/s new / old: median $hpcc (pairs $(spread <"$dir/hpcc.ratios")); null pairs $hpcc_null ($(spread <"$dir/hpcc.null"))"
alternate lammps "$pairs" lammps_melt "$dir" 4000
lammps=$(median <"$dir/lammps.ratios") lammps_null=$(median <"$dir/lammps.null")
echo "  LAMMPS melt steps/s new / old: median $lammps (pairs $(spread <"$dir/lammps.ratios")); null pairs $lammps_null ($(spread <"$dir/lammps.null"))"

# mpi_cost (the new build's program) bare, under the old library and the new,
# interleaved: medians of each of its four figures
cost() {
	mpirun --oversubscribe --allow-run-as-root -np 1 ${1:+-x LD_PRELOAD="$1"} -x ES_JOB="$job.m" \
		"$build/bench/mpi_cost" 2>/dev/null
	rm_segments "$job.m"
}
for i in $(seq 1 "${COST_RUNS:-9}"); do
	cost "" >>"$dir/cost.bare"
	cost "$old/lib/libescollect.so" >>"$dir/cost.old"
	cost "$build/lib/libescollect.so" >>"$dir/cost.new"
done
col() { awk -v k="$2" '{ print $k }' "$dir/cost.$1" | median; }
echo "  mpi_cost (ns a call, medians of ${COST_RUNS:-9}):     bare      old      new"
k=1
for what in "MPI_Barrier on COMM_SELF" "MPI_Sendrecv to itself" "fruitless MPI_Testany" "Isend+Irecv+Waitall"; do
	printf "    %-28s %8.1f %8.1f %8.1f\n" "$what" "$(col bare $k)" "$(col old $k)" "$(col new $k)"
	k=$((k + 1))
done
# the PATHS collector's cost (bench/collector, built by make bench with LTTng)
collector_ns() { "$1/bench/collector" 2>/dev/null | sed -n 's/^collector: collector_ns=\([0-9.]*\).*/\1/p'; }
if [ -x "$old/bench/collector" ] && [ -x "$build/bench/collector" ]; then
	sides collector "${COLLECTOR_PAIRS:-5}" collector_ns
	collector="$(median <"$dir/collector.ratios") (null $(median <"$dir/collector.null"))"
	echo "  collector ns an operation new / old: median $collector"
else
	collector="not measured (no bench/collector in both builds: make bench builds it)"
fi

# the recorder per event: each build's esrecord --remains drains the same
# live job's backlog (bench/backlog: 4 elements of 500,000 events)
"$build/bench/backlog" "$job.bl" 4 500000 "$dir/backlog.ready" &
backlog=$!
while [ ! -e "$dir/backlog.ready" ] && kill -0 "$backlog" 2>/dev/null; do sleep 0.05; done
recorder_ns() {
	rm -rf "$dir/rec"
	t0=$(date +%s%N)
	"$1/bin/esrecord" --remains -w 0 -o "$dir/rec" "$job.bl" 2>/dev/null || return 1
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) / 2000000 }' # 2,000,000 events
}
sides recorder "${RECORDER_PAIRS:-9}" recorder_ns
kill "$backlog" 2>/dev/null
wait "$backlog" 2>/dev/null
recorder="$(median <"$dir/recorder.ratios") (null $(median <"$dir/recorder.null"))"
echo "  esrecord ns an event new / old: median $recorder"

echo "versus: hpcc=$hpcc (null $hpcc_null) lammps=$lammps (null $lammps_null)" \
	"halo_ns=$(col old 4)->$(col new 4) testany_ns=$(col old 3)->$(col new 3)" \
	"collector=$collector recorder=$recorder"
