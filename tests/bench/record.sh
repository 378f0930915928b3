#!/bin/sh
# record.sh - what recording costs a real program: LAMMPS melt at 2 ranks under esrun with and without esrecord attached, side by side; and how fast an archive becomes OTF2.
#
# usage: record.sh BUILDDIR [PAIRS]
set -u
build=$(cd "${1:?usage: record.sh BUILDDIR [PAIRS]}" && pwd)
pairs=${2:-7}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=brec
. "$(dirname "$0")/lib.sh"
steps=4000

# recorded: esrecord waits for the job, drains it to its end
recorded() { # recorded I: steps/s; the events lost go to $dir/lost.I
	i=$1
	"$bin/esrecord" -w 60 -o "$dir/a$i" "$job.r$i" 2>"$dir/rec$i.err" &
	rec=$!
	s=$(lammps_melt "$dir" "$steps" "$bin/esrun" -q -j "$job.r$i") || exit 1
	wait $rec || { cat "$dir/rec$i.err" >&2; exit 1; }
	sed -n 's/^esrecord: [0-9]* events written to .*, \([0-9]*\) discarded.*/\1/p' "$dir/rec$i.err" >"$dir/lost.$i"
	rm -rf "$dir/a$i"
	rm_segments "$job.r$i"
	echo "$s"
}
plain() { # plain I: steps/s under esrun, nobody recording
	s=$(lammps_melt "$dir" "$steps" "$bin/esrun" -q -j "$job.p$1") || exit 1
	rm_segments "$job.p$1"
	echo "$s"
}

echo "record: $pairs interleaved pairs of LAMMPS melt ($steps steps, 2 ranks, under esrun), without and with esrecord"
: >"$dir/ratios"
i=1
while [ "$i" -le "$pairs" ]; do
	if [ $((i % 2)) = 1 ]; then
		a=$(plain "$i") || exit 1
		b=$(recorded "$i") || exit 1
	else
		b=$(recorded "$i") || exit 1
		a=$(plain "$i") || exit 1
	fi
	r=$(ratio "$a" "$b")
	echo "$r" >>"$dir/ratios"
	printf "  pair %d: %s steps/s not recorded, %s recorded: slowdown %s, lost %s\n" "$i" "$a" "$b" "$r" "$(cat "$dir/lost.$i")"
	i=$((i + 1))
done
slowdown=$(median <"$dir/ratios")
lost=$(cat "$dir"/lost.* | awk '{ n += $1 } END { print n + 0 }')
echo "  LAMMPS slowdown while recorded: median $slowdown; events lost in all $pairs recordings: $lost"
"$build/bench/archive" >"$dir/arch.out" || exit 1
sed 's/^/  /' "$dir/arch.out"
otf2=$(sed -n 's/^otf2_events_per_s=\([0-9]*\).*/\1/p' "$dir/arch.out")
echo "record: lammps_slowdown=$slowdown lost=$lost otf2_events_per_s=$otf2"
