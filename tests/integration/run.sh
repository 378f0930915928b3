#!/bin/sh
# run.sh - runs every integration test (tests/integration/t_*.sh) against the build in $1, then those that run MPI programs again under MPICH: the ones that time what they judge one at a time, the rest two at once.
set -u
build=${1:?usage: run.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Under MPICH: the tests of what MPI programs record and what is made of
# it, each whole (README, "MPICH"), with build/*/mpich as BUILD (the test
# programs built by MPICH's wrappers, its collector as libescollect.so)
# and mpirun run by MPICH's mpiexec (mpich/mpirun).  Not again here: the
# tests of monitors and archives that run no MPI program, t_view (its
# browser and 72 spinning MPICH ranks on two cores), t_apps (Debian's
# LAMMPS and hpcc are Open MPI's), t_remote and t_clocks (network
# namespaces: Open MPI's own launcher), t_hardening and t_attack (the doors,
# whatever the MPI), t_mpi_collect and t_pairing (a pathmap's and esctl's
# choice of calls, and the recorder's pairing: the same code whatever the
# MPI, their MPI calls covered by t_mpi_every and t_messages here), and
# t_windtunnel, t_demo, t_readme.
MPICH_TESTS="t_badargs t_waiting t_mpi_every t_messages t_sites t_phases t_io t_record t_blackbox t_esctl t_waitfor t_waitreq t_colopmon t_waits t_objects"
# (make check must stay within twenty minutes on two cores.)  The tests
# that hold a time they measure against the program's (t_waits, t_apps),
# or fill both cores with ranks that spin or a browser (t_view, t_waitfor,
# t_waitreq, t_attack's flood), run alone; every other test holds under a
# loaded machine (README, "Two commands") and runs beside one other.
ALONE="t_view t_apps t_attack t_waits t_waitfor t_waitreq"
LANES=${ES_TEST_LANES:-2}

# The tests to run, a line each: NAME LABEL MPICH (0 or 1)
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	echo "$name $name 0"
done >"$work/all"
if [ -f "$build/mpich/stamp" ]; then
	for name in $MPICH_TESTS; do echo "$name $name(mpich) 1"; done >>"$work/all"
fi
alone() { case " $ALONE " in *" $1 "*) return 0 ;; esac; return 1; }

# run NAME LABEL MPICH: one test, its log shown only when it fails; its
# line (and log) printed whole, never inside another's; its stdin none (a
# test's mpirun would eat the list being read)
run() {
	name=$1 label=$(echo "$2" | sed 's/(mpich)$/ (mpich)/') mpich=$3
	log="$work/log.$name.$mpich"
	t0=$(date +%s)
	if [ "$mpich" = 1 ]; then
		mb=$(cd "$build/mpich" && pwd)
		env BUILD="$mb" BIN="$mb/bin" PATH="$here/mpich:$PATH" ES_TEST_MPI=mpich sh "$here/$name.sh" </dev/null >"$log" 2>&1
	else
		env BUILD="$build" BIN="$build/bin" sh "$here/$name.sh" </dev/null >"$log" 2>&1
	fi
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ "$rc" -eq 0 ]; then
		line="  ok   $label ($secs s)"
		echo ok >>"$work/results"
	else
		line="  FAIL $label ($secs s)"
		echo FAIL >>"$work/results"
	fi
	(
		flock 9
		echo "$line"
		[ "$rc" -eq 0 ] || sed 's/^/       /' "$log"
	) 9>"$work/print.lock"
	rm -f "$log"
}

# the ones run alone, one after another
while read -r name label mpich; do
	alone "$name" && run "$name" "$label" "$mpich"
done <"$work/all"
# the rest from one queue, LANES at a time: each lane takes the next line
while read -r name label mpich; do
	alone "$name" || echo "$name $label $mpich"
done <"$work/all" >"$work/queue"
echo 1 >"$work/next"
lane() {
	while :; do
		i=$( (flock 9; n=$(cat "$work/next"); echo $((n + 1)) >"$work/next"; echo "$n") 9>"$work/queue.lock")
		entry=$(sed -n "${i}p" "$work/queue")
		[ -n "$entry" ] || return 0
		run $entry
	done
}
k=0
while [ "$k" -lt "$LANES" ]; do
	lane &
	k=$((k + 1))
done
wait
pass=$(grep -c '^ok$' "$work/results" 2>/dev/null || true)
fail=$(grep -c '^FAIL$' "$work/results" 2>/dev/null || true)
echo "integration: ${pass:-0} passed, ${fail:-0} failed in $(($(date +%s) - start)) s"
[ "${fail:-0}" -eq 0 ] && [ "${pass:-0}" -eq "$(wc -l <"$work/all")" ]
