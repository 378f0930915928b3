#!/bin/sh
# t_colopmon.sh - colopmon names the late contributor of an MPI allreduce and of a PATHS tree allreduce.
set -u
. "$(dirname "$0")/lib.sh"
job="itcol$$"
out=$(mktemp)
cleanup() { rm -f "$out"; rm_segments "$job"; }
trap cleanup EXIT

# A PATHS tree: four threads, one node; t3 (child 3) comes late to op #2.
"$BUILD/tests/app_tree" "$job.t" || die "app_tree failed"
"$BIN/colopmon" -w 2 "$job.t" >"$out" || die "colopmon failed"
cat "$out"
grep -q "node 0 .*op #2 .*last: child 3" "$out" || die "the late tree contributor not named"
[ "$(grep -c '^tree sum' "$out")" -eq 5 ] || die "not every tree operation reported"

# MPI: the last rank sleeps before allreduce #3.
lib="$BUILD/lib/libescollect.so"
if [ -f "$lib" ]; then
	mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$(cd "$BUILD/lib" && pwd)/libescollect.so" \
		-x ES_JOB="$job.m" "$BUILD/tests/mpi_late" || die "mpi_late failed"
	"$BIN/colopmon" -w 2 "$job.m" >"$out" || die "colopmon failed on MPI"
	cat "$out"
	grep -q "MPI_Allreduce *#3 .*last in: rank 2" "$out" || die "the late rank not named"
	[ "$(grep -c '^MPI_Allreduce' "$out")" -eq 6 ] || die "not every allreduce reported"
	grep -q "6 calls" "$out" || die "no summary"
	# collectives on two halves and on the world: 3 + 3 + 3, never mixed
	mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$(cd "$BUILD/lib" && pwd)/libescollect.so" \
		-x ES_JOB="$job.s" "$BUILD/tests/mpi_split" || die "mpi_split failed"
	"$BIN/colopmon" -w 2 "$job.s" >"$out" || die "colopmon failed on mpi_split"
	cat "$out"
	grep -q "MPI_Allreduce *9 calls" "$out" || die "collectives on different communicators mixed up"
	[ "$(grep -c '^MPI_Allreduce .*smaller communicator' "$out")" -eq 6 ] || die "the halves' allreduces not told apart"
	grep -q 'MPI_Comm_split *1 calls' "$out" || die "the split not reported as a collective"
fi
"$BIN/colopmon" >/dev/null 2>&1; [ $? -eq 2 ] || die "no job: not status 2"
exit 0
