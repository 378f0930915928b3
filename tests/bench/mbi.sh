#!/bin/sh
# mbi.sh - heartbeat judged on the MPI Bugs Initiative: each program run under esrun and watched from its start; which hung, which heartbeat named a deadlock, which it named wrongly.
#
# usage: mbi.sh [--mpi openmpi|mpich] BUILDDIR [LIST]
# --mpi: the MPI the programs are built with (its mpicc) and run under (its
# launcher; esrun picks its collector): Open MPI by default.
# LIST: a file of program names (labels.txt's first column) to run, one a
# line; default: every program of $MBI/labels.txt (MBI=../shared/mbi).
# The results go to BUILDDIR/mbi-MPI/results.txt; with both MPIs' there,
# mbi_diff.sh BUILDDIR says which programs differ and how.
# Each program runs (with the arguments of its header's first command)
# with heartbeat -p $PERIOD ms watching from before it starts and stopping
# at the first deadlock it names. Then:
#   named, and the program still runs 1 s later: a deadlock named (hung);
#   named, and the program ended within that second: a false alarm;
#   not named, the program ended: ended (by itself, or aborting);
#   not named, still running after $HANG s: hung, not named.
# A program whose ranks end is never hung (its mpirun may linger after an
# abort); one whose ranks still run HANG seconds in (MBI programs compute
# nothing: they are inside MPI) has hung.
# Prints a line per program, a table by the kind of bug MBI says it has,
# how long after the hang each deadlock was named (MBI's own header gives
# no hang time: heartbeat's "deadlock for X s" at naming is the age of the
# knot, the last of its threads to block), and ends with
#   mbi: mpi=MPI programs=P hung=H named=N false_alarms=F
set -u
mpi=openmpi
if [ "${1:-}" = --mpi ]; then
	mpi=${2:?usage: mbi.sh [--mpi openmpi|mpich] BUILDDIR [LIST]}
	shift 2
fi
case $mpi in
openmpi) mpicc=mpicc ;;
mpich) mpicc=mpicc.mpich ;;
*) echo "mbi: --mpi $mpi: expected openmpi or mpich"; exit 2 ;;
esac
build=$(cd "${1:?usage: mbi.sh [--mpi openmpi|mpich] BUILDDIR [LIST]}" && pwd)
list=${2:-}
mbi=${MBI:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/mbi}
period=${PERIOD:-250}
hang=${HANG:-5}
bench_job=mbi
. "$(dirname "$0")/lib.sh"
[ -f "$mbi/labels.txt" ] || { echo "mbi: no $mbi/labels.txt (set MBI=)"; exit 2; }
bins="$build/mbi-$mpi"
mkdir -p "$bins"
# Open MPI's shared-memory files (btl vader) of each program, in a folder of
# ours: a hung program is killed whole, and cannot remove its own
shm="$dir/shm"
mkdir -p "$shm"

# The programs, compiled once into build/mbi (two at a time).
if [ -n "$list" ]; then
	awk 'NR == FNR { want[$1] = 1; next } ($1 in want) || ($1 ".c" in want)' "$list" "$mbi/labels.txt"
else
	cat "$mbi/labels.txt"
fi >"$dir/labels"
awk '{ print $1 }' "$dir/labels" | xargs -P 2 -I{} sh -c '
	src="$1/codes/$2"; exe="$3/${2%.c}"
	[ "$exe" -nt "$src" ] || $4 -w -o "$exe" "$src" -lm 2>"$exe.err" || rm -f "$exe"' sh "$mbi" {} "$bins" "$mpicc"

# tree PID: the processes under PID, to any depth (MPICH's launcher puts
# its proxy and each rank in a session of its own, out of the program's)
tree() {
	ps -eo pid=,ppid=,stat= | awk -v top="$1" '
		{ parent[$1] = $2; stat[$1] = $3 }
		END { for (p in parent) { q = p; while (q in parent && q != top && q > 1) q = parent[q]
		                          if (q == top && p != top && stat[p] !~ /^Z/) print p } }'
}

# stop PGID: the program's whole process group (mpirun and its ranks), at
# once, and under MPICH every process under it: a hung MPI program has
# nothing to save, and mpirun's own shutdown of spinning ranks takes seconds
stop() {
	[ "$mpi" = mpich ] && kill -KILL $(tree "$1") 2>/dev/null
	kill -KILL -"$1" 2>/dev/null
}

# ranks PGID: whether any process of the program's session (under MPICH:
# under it) but mpirun itself runs (an aborted program's mpirun may linger
# after its ranks, not even reaping them)
ranks() {
	if [ "$mpi" = mpich ]; then
		[ -n "$(tree "$1")" ]
		return
	fi
	ps -o pid=,stat= -s "$1" 2>/dev/null | awk -v m="$1" '$1 != m && $2 !~ /^Z/ { n++ } END { exit !n }'
}

# alive PGID SECONDS: whether the program's ranks still run SECONDS from
# now (they may end sooner)
alive() {
	n=$(awk -v s="$2" 'BEGIN { printf "%d", s * 10 }')
	while [ "$n" -gt 0 ] && ranks "$1"; do sleep 0.1; n=$((n - 1)); done
	ranks "$1"
}

# run NAME NP: one program, with the arguments its header's first command
# gives; prints NAME OUTCOME AGE (AGE: the named knot's age, or -)
run() {
	name=$1 np=$2 j="$job.$3"
	exe="$bins/${name%.c}"
	[ -x "$exe" ] || { echo "$name unbuilt -"; return; }
	args=$(sed -n 's/^ *\$ mpirun -np [0-9]* ${EXE} *//p' "$mbi/codes/$name" | head -1)
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # the header's arguments, split as a shell would
	if [ "$mpi" = mpich ]; then
		# shellcheck disable=SC2086
		setsid mpiexec.hydra -n "$np" "$bin/esrun" -q -j "$j" "$exe" $args >"$dir/app.out" 2>&1 </dev/null &
	else
		# shellcheck disable=SC2086
		setsid mpirun --oversubscribe --allow-run-as-root --mca btl_vader_backing_directory "$shm" -np "$np" \
			"$bin/esrun" -q -j "$j" "$exe" $args >"$dir/app.out" 2>&1 </dev/null &
	fi
	app=$!
	"$bin/heartbeat" -p "$period" -n $((hang * 1000 / period)) -w 10 --exit-on-deadlock "$j" \
		>"$dir/hb.out" 2>&1
	hb=$?
	age=$(sed -n 's/^  deadlock for \([0-9.]*\) s: .*/\1/p' "$dir/hb.out" | head -1)
	left=$(awk -v t0="$t0" -v now="$(date +%s.%N)" -v h="$hang" 'BEGIN { l = h - (now - t0); print (l > 0 ? l : 0) }')
	if [ "$hb" -eq 3 ]; then
		if alive "$app" 1; then out=named; else out=false_alarm; fi
	elif alive "$app" "$left"; then
		out=missed # still running $hang s in: hung, and not named
	else
		out=ended
	fi
	stop "$app"
	wait "$app" 2>/dev/null
	rm_segments "$j."
	rm -f "$shm"/vader_segment.*
	[ "$out" = false_alarm ] || [ "$out" = named ] || age=-
	echo "$name $out ${age:--}"
	cp "$dir/hb.out" "$bins/${name%.c}.heartbeat"
}

echo "mbi: $(wc -l <"$dir/labels") programs of $mbi built for $mpi, each under esrun, heartbeat every $period ms from the start, hung if running after $hang s"
i=0
: >"$dir/results"
while read -r name expect np; do
	i=$((i + 1))
	r=$(run "$name" "$np" "$i")
	echo "$r ${expect#ERROR:} $np" >>"$dir/results"
	echo "  $r"
done <"$dir/labels"

cp "$dir/results" "$bins/results.txt"
ages=$(awk '$2 == "named" { print $3 }' "$dir/results" | sort -g)
[ -n "$ages" ] && echo "  the knot's age when named: median $(echo "$ages" | median) s, worst $(echo "$ages" | tail -1) s"

# The table: per kind of bug, and in all.
awk -v p="$period" -v mpi="$mpi" '
	{ kind = $4; prog[kind]++; P++
	  if ($2 == "named" || $2 == "missed") { hung[kind]++; H++ }
	  if ($2 == "named") { named[kind]++; N++; if ($3 * 1000 > 2 * p) late++ }
	  if ($2 == "false_alarm") { fa[kind]++; F++ }
	  if ($2 == "unbuilt") { ub[kind]++; U++ } }
	END {
		printf "  %-22s %8s %5s %6s %12s %8s\n", "kind", "programs", "hung", "named", "false alarms", "unbuilt"
		for (k in prog)
			printf "  %-22s %8d %5d %6d %12d %8d\n", k, prog[k], hung[k], named[k], fa[k], ub[k] | "sort"
		close("sort")
		printf "  %-22s %8d %5d %6d %12d %8d\n", "all", P, H, N, F, U
		if (N)
			printf "  named later than two periods (%.1f s) after the hang: %d of %d\n", 2 * p / 1000, late, N
		printf "mbi: mpi=%s programs=%d hung=%d named=%d false_alarms=%d\n", mpi, P, H, N, F
	}' "$dir/results"

