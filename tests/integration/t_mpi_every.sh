#!/bin/sh
# t_mpi_every.sh - every MPI call libescollect records, from C and from Fortran (mpif.h, use mpi, use mpi_f08), checked from a separate reader; esrun's options and errors.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itev$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
mpi() { mpirun --oversubscribe --allow-run-as-root -np 2 "$@"; }

# C: every call beyond the first list, each result checked by the program
mpi -x ES_EXPECT_DIR="$dir" "$BIN/esrun" -q -j "$job.c" "$BUILD/tests/mpi_every" || die "mpi_every failed"
"$BUILD/tests/mpi_expect" "$job.c" 2 "$dir" || die "mpi_every's calls recorded wrong"

# Fortran, the three ways a program can use MPI
for b in 77 90 08; do
	rm -f "$dir"/expect.*
	mpi -x ES_EXPECT_DIR="$dir" "$BIN/esrun" -q -j "$job.f$b" "$BUILD/tests/mpi_fortran$b" ||
		die "the Fortran program ($b) failed"
	"$BUILD/tests/mpi_expect" "$job.f$b" 2 "$dir" || die "Fortran ($b) calls recorded wrong"
done

# the trace element's size, from esrun and from a pathmap
mpi "$BIN/esrun" -q -j "$job.s" -s 1M "$BUILD/tests/mpi_fortran90" >/dev/null 2>&1 || die "run with -s failed"
"$BIN/psadm" show "$job.s.r0" | grep -q "mpi.thread0 *36 *29127 " || die "-s 1M: $("$BIN/psadm" show "$job.s.r0")"
pm="$dir/pm.yaml"
printf 'pathmap: 1\nname: x\nmpi:\n  collect: [collectives, one-sided]\ntrace:\n  size: 72K\n' >"$pm"
mpi "$BIN/esrun" -q -j "$job.p" -p "$pm" "$BUILD/tests/mpi_fortran90" >/dev/null 2>&1 || die "run with a pathmap failed"
show=$("$BIN/psadm" show "$job.p.r0")
echo "$show" | grep -q "mpi.thread0 *36 *2048 " || die "trace size 72K: $show"
# collectives and one-sided only: the Fortran program makes 11 collectives on
# WORLD, a nonblocking one (its call and its completion), a barrier on a
# communicator of its own (whose making and freeing are not collectives), a
# window made, fenced twice, put to and freed
n=$("$BIN/geteventmon" -w 0 -n 1 "$job.p" 2>/dev/null | grep -c "rank0.thread0")
[ "$n" -eq 19 ] || die "collectives and one-sided: $n tuples, expected 19"

# esrun: the job's name from rank 0, the program's own options left alone
out=$(mpi "$BIN/esrun" "$BUILD/tests/mpi_fortran90" 2>&1 >/dev/null) || die "esrun without options failed: $out"
echo "$out" | grep -q "^escollect: job mpi_fortran90-[0-9]*: 2 ranks traced" || die "no job line: $out"
[ "$(echo "$out" | grep -c '^escollect')" -eq 1 ] || die "more than rank 0 spoke: $out"
# ... naming the monitors by paths that work, wherever the user's PATH points
hb=$(echo "$out" | sed -n 's/^escollect: .*; watch it with \([^ ]*heartbeat\) .*/\1/p')
[ -x "$hb" ] && [ "$hb" -ef "$BIN/heartbeat" ] || die "the job line names heartbeat as '$hb': $out"
name=$(echo "$out" | sed -n 's/^escollect: job \([^:]*\):.*/\1/p')
"$BIN/psadm" rm "$name.r0" >/dev/null && "$BIN/psadm" rm "$name.r1" >/dev/null || die "no segments $name.r0, .r1"

# One limit for job names (32 characters) in esrun, libescollect, the
# monitors and psadm: at the limit a job runs traced and is watched; one
# character more is refused by each, never cut.
j32="lim$$"; while [ ${#j32} -lt 32 ]; do j32="${j32}x"; done
mpi "$BIN/esrun" -q -j "$j32" "$BUILD/tests/mpi_fortran90" >/dev/null 2>&1 || die "a 32-character job failed"
"$BIN/psadm" show "$j32.r1" | grep -q "mpi.thread0" || die "the 32-character job not traced"
out=$("$BIN/heartbeat" -n 1 -p 100 -w 2 "$j32") || die "heartbeat on the 32-character job: $out"
echo "$out" | grep -q "watching 2 threads of job '$j32'" || die "heartbeat did not watch it: $out"
"$BIN/geteventmon" -w 2 "$j32" 2>&1 >/dev/null | grep -q " 0 discarded" || die "geteventmon did not read it"
"$BIN/psadm" rm "$j32.r0" "$j32.r1" >/dev/null
j33="${j32}y"
out=$(mpi "$BIN/esrun" -q -j "$j33" true 2>&1) && die "esrun took a 33-character job name"
echo "$out" | grep -q "expected 1 to 32 characters" || die "esrun -j 33 characters: $out"
out=$(mpi -x ES_JOB="$j33" -x LD_PRELOAD="$(cd "$BUILD/lib" && pwd)/libescollect.so" "$BUILD/tests/mpi_fortran90" 2>&1 >/dev/null) ||
	die "a program named a 33-character job by ES_JOB died: $out"
echo "$out" | grep -q "^escollect: job name '$j33': expected 1 to 32 characters.*running unmonitored" ||
	die "ES_JOB of 33 characters: $out"
for m in heartbeat geteventmon colopmon esprofile; do
	out=$("$BIN/$m" -w 0 "$j33" 2>&1); [ $? -eq 2 ] || die "$m took a 33-character job name: $out"
	echo "$out" | grep -q "no job can have that name" || die "$m on 33 characters: $out"
done
out=$("$BIN/psadm" serve "$j33." 2>&1); [ $? -eq 2 ] || die "psadm serve took a 33-character job: $out"
echo "$out" | grep -q "expected 1 to 32 characters" || die "psadm serve: $out"
for bad in -rf ..; do
	out=$(mpi "$BIN/esrun" -q -j "$bad" true 2>&1) && die "esrun took the job name $bad"
done

# esrun's mistakes stop the run before the program starts, one line each
printf 'pathmap: 1\nname: x\nmpi:\n  collect: [all, MPI_Sned]\n' >"$pm"
for args in "-p $pm" "-s 12Q" "--job a/b" "-p /no/such.yaml" "--serve nowhere"; do
	# shellcheck disable=SC2086
	out=$(mpi "$BIN/esrun" $args "$BUILD/tests/mpi_fortran90" 2>&1) && die "esrun $args ran"
	lines=$(echo "$out" | grep -c "^esrun:")
	[ "$lines" -eq 1 ] || die "esrun $args: $lines lines from esrun: $out"
	echo "$out" | grep "^esrun:"
done
out=$(mpi "$BIN/esrun" -p "$pm" true 2>&1)
echo "$out" | grep -q "pm.yaml:4:18: mpi collect: expected all, a group" || die "no position: $out"

# esrun's choice of collector: what it cannot tell, it says (one line, from
# rank 0) and runs nothing; a script runs with the MPI named by --mpi
printf '#!/bin/sh\nexec "%s" "$@"\n' "$BUILD/tests/mpi_fortran90" >"$dir/run.sh" && chmod +x "$dir/run.sh"
for args in "true:loads no MPI library" "$dir/run.sh:(a script?), so esrun cannot tell" \
	"--mpi nope $dir/run.sh:--mpi nope: expected one of the MPIs esrun has a collector for: mpich (libmpich.so.12), openmpi (libmpi.so.40)"; do
	# shellcheck disable=SC2086
	out=$(mpi "$BIN/esrun" -q ${args%%:*} 2>&1) && die "esrun ${args%%:*} ran"
	[ "$(echo "$out" | grep -c "^esrun:")" -eq 1 ] || die "esrun ${args%%:*}: not one line: $out"
	echo "$out" | grep -qF -e "${args#*:}" || die "esrun ${args%%:*}: $out"
done
mpi -x ES_KEEP=always "$BIN/esrun" -q --mpi "$MPI" -j "$job.sh" "$dir/run.sh" >/dev/null 2>&1 || die "esrun --mpi $MPI run.sh failed"
"$BIN/psadm" show "$job.sh.r1" | grep -q "mpi.thread0" || die "the script's program not traced"
"$BIN/psadm" list | grep -q "^x\.r" && die "segments made despite the bad pathmap"
exit 0
