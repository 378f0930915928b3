#!/bin/sh
# t_badargs.sh - MPI's errors stay MPI's: every call mpi_badargs makes with an argument MPI refuses (NULL requests, statuses, flags, counts, messages, communicators, windows; handles of nothing; ranks, tags, roots, types and ops out of range), under MPI_ERRORS_RETURN, returns the same error class under esrun as without it, and the program goes on.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itbad$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
# run WHAT LIB: the program's lines (NAME CLASS), LIB preloaded ("" : none)
run() {
	out="$dir/$1"
	if [ -n "$2" ]; then
		mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$2" -x ES_JOB="$job.$1" \
			"$BUILD/tests/mpi_badargs" >"$out" 2>"$out.err" </dev/null
	else
		mpirun --oversubscribe --allow-run-as-root -np 2 "$BUILD/tests/mpi_badargs" >"$out" 2>"$out.err" </dev/null
	fi || die "mpi_badargs ($1) failed, after $(tail -1 "$out.err"): $(tail -5 "$out.err")"
}
run plain ""
n=$(wc -l <"$dir/plain")
[ "$n" -ge 40 ] || die "only $n cases ran without EventSpace: $(cat "$dir/plain.err")"
run es "$BUILD/lib/libescollect.so"
diff "$dir/plain" "$dir/es" >"$dir/diff" || die "error classes differ under EventSpace ($MPI): $(cat "$dir/diff")"
# the debug collector checks its invariants on every request it follows
if [ -f "$BUILD/lib/debug/libescollect.so" ]; then
	run debug "$BUILD/lib/debug/libescollect.so"
	diff "$dir/plain" "$dir/debug" >"$dir/diff" || die "error classes differ under the debug collector: $(cat "$dir/diff")"
fi
echo "t_badargs: $n refused calls, each class the same with and without EventSpace ($MPI)"
