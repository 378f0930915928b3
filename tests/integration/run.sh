#!/bin/sh
# run.sh - runs every integration test (tests/integration/t_*.sh) against the build in $1, then those that run MPI programs again under MPICH.
set -u
build=${1:?usage: run.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0 start=$(date +%s)
# run NAME LABEL [ENV...]: one test, its log shown only when it fails
run() {
	t=$1 label=$2
	shift 2
	log=$(mktemp)
	t0=$(date +%s)
	# (each test's seconds: make check must stay within twenty minutes)
	if env "$@" sh "$here/$t.sh" >"$log" 2>&1; then
		pass=$((pass + 1)); echo "  ok   $label ($(($(date +%s) - t0)) s)"
	else
		fail=$((fail + 1)); echo "  FAIL $label ($(($(date +%s) - t0)) s)"; sed 's/^/       /' "$log"
	fi
	rm -f "$log"
}
for t in "$here"/t_*.sh; do
	name=$(basename "$t" .sh)
	run "$name" "$name" BUILD="$build" BIN="$build/bin"
done
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
if [ -f "$build/mpich/stamp" ]; then
	mb=$(cd "$build/mpich" && pwd)
	for name in $MPICH_TESTS; do
		run "$name" "$name (mpich)" BUILD="$mb" BIN="$mb/bin" PATH="$here/mpich:$PATH" ES_TEST_MPI=mpich
	done
fi
echo "integration: $pass passed, $fail failed in $(($(date +%s) - start)) s"
[ "$fail" -eq 0 ]
