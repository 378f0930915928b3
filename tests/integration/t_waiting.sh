#!/bin/sh
# t_waiting.sh - a recorder started before a short job records it whole, every time: the job leaves its segments for a monitor that waits for it, which removes them when done; a monitor that died, or another user's note, keeps nothing.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
unset ES_KEEP # the default keep policy: a clean end removes the job's segments
job="itwait$$"
dir=$(mktemp -d)
cleanup() {
	[ -n "${nob:-}" ] && kill "$nob" 2>/dev/null
	rm_segments "$job"
	rm -f /dev/shm/pastset-expect."$job".*
	rm -rf "$dir"
}
trap cleanup EXIT
mpi() { mpirun --oversubscribe --allow-run-as-root -np 2 "$@"; }
# noted JOB: a monitor has said it waits for JOB (pastset/expect.c)
noted() { ls /dev/shm/pastset-expect."$1".* >/dev/null 2>&1; }
# gone JOB: no segment of JOB's is left on the host
gone() { ! ls /dev/shm/pastset."$1".* >/dev/null 2>&1; }
# expected DIR: the events mpi_every's calls make (t_record.sh says why)
expected() {
	echo $(($(cat "$1/expect.r0" "$1/expect.r1" | wc -l) +
		$(cat "$1/expect.r0" "$1/expect.r1" | grep -c "^MPI_Win_\(post\|start\) ")))
}

# 20 runs: esrecord waits, the job starts once it has said so, and ends in
# a fraction of a second; every archive holds every call.  The recorder
# runs niced, as on a loaded machine: before monitors said they wait, one
# run in five or ten under MPICH lost a rank or the whole job that way.
runs=${WAITING_RUNS:-20} i=0
while [ "$i" -lt "$runs" ]; do
	j="$job.$i"
	nice -n 19 "$BIN/esrecord" -w 60 -o "$dir/a$i" "$j" 2>"$dir/rec$i.err" &
	rec=$!
	wait_for 30 noted "$j" || die "run $i: esrecord never said it waits: $(cat "$dir/rec$i.err")"
	mkdir "$dir/e$i"
	mpi -x ES_EXPECT_DIR="$dir/e$i" "$BIN/esrun" -q -j "$j" "$BUILD/tests/mpi_every" >"$dir/job$i" 2>&1 ||
		die "run $i: mpi_every failed: $(cat "$dir/job$i")"
	wait $rec || die "run $i: esrecord failed: $(cat "$dir/rec$i.err")"
	n=$(expected "$dir/e$i")
	grep -q "^esrecord: $n events written to $dir/a$i, 0 discarded before they could be read (the job ended)$" \
		"$dir/rec$i.err" || die "run $i: not every call recorded ($n made): $(cat "$dir/rec$i.err")"
	gone "$j" || die "run $i: the job's segments outlived esrecord: $(ls /dev/shm | grep "$j")"
	noted "$j" && die "run $i: esrecord's note outlived it"
	i=$((i + 1))
done
echo "$runs runs of mpi_every ($n events each), each recorded whole by an esrecord that waited"

# two monitors wait: each sees the whole job; the segments go with the last
j="$job.two"
"$BIN/esrecord" -w 60 -o "$dir/two" "$j" 2>"$dir/two.err" &
rec=$!
"$BIN/geteventmon" -w 60 -o "$dir/two.txt" "$j" 2>"$dir/gem.err" &
gem=$!
wait_for 30 sh -c "[ \$(ls /dev/shm/pastset-expect.$j.* 2>/dev/null | wc -l) = 2 ]" || die "two notes never came"
mkdir "$dir/etwo"
mpi -x ES_EXPECT_DIR="$dir/etwo" "$BIN/esrun" -q -j "$j" "$BUILD/tests/mpi_every" >/dev/null 2>&1 || die "mpi_every (two)"
wait $rec || die "esrecord (two): $(cat "$dir/two.err")"
wait $gem || die "geteventmon (two): $(cat "$dir/gem.err")"
n=$(expected "$dir/etwo")
grep -q "^esrecord: $n events written" "$dir/two.err" || die "esrecord (two): $(cat "$dir/two.err")"
grep -q "^geteventmon: $n events written, 0 discarded" "$dir/gem.err" || die "geteventmon (two): $(cat "$dir/gem.err")"
gone "$j" || die "two monitors: the job's segments outlived both"

# a monitor that died is not waited for: the job removes its segments, and its note
j="$job.dead"
"$BIN/esrecord" -w 60 -o "$dir/dead" "$j" 2>/dev/null &
rec=$!
wait_for 30 noted "$j" || die "esrecord (dead) never said it waits"
kill -9 $rec
wait $rec 2>/dev/null
mkdir "$dir/edead"
mpi -x ES_EXPECT_DIR="$dir/edead" "$BIN/esrun" -q -j "$j" "$BUILD/tests/mpi_every" >/dev/null 2>&1 || die "mpi_every (dead)"
gone "$j" || die "a dead monitor's note kept the job's segments: $(ls /dev/shm | grep "$j")"
noted "$j" && die "a dead monitor's note outlived the job's end"
# ... and one killed while no job came: psadm clean sweeps its note
j="$job.swept"
"$BIN/esrecord" -w 60 -o "$dir/swept" "$j" 2>/dev/null &
rec=$!
wait_for 30 noted "$j" || die "esrecord (swept) never said it waits"
kill -9 $rec
wait $rec 2>/dev/null
"$BIN/psadm" clean "$j" | grep -q "^removed [1-9][0-9]* notes\{0,1\} of monitors that died waiting for their jobs$" ||
	die "psadm clean did not sweep a dead monitor's note"
noted "$j" && die "psadm clean left a dead monitor's note"

# another user's note, of a live process of theirs, keeps nothing
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	j="$job.other"
	setpriv --reuid=nobody --regid=nogroup --clear-groups sh -c \
		'echo "$$ $(cut -d" " -f22 /proc/$$/stat)" >"/dev/shm/pastset-expect.$0..$$" && exec sleep 60' "$j" &
	nob=$!
	wait_for 10 noted "$j" || die "nobody's note was not made"
	mkdir "$dir/eother"
	mpi -x ES_EXPECT_DIR="$dir/eother" "$BIN/esrun" -q -j "$j" "$BUILD/tests/mpi_every" >/dev/null 2>&1 ||
		die "mpi_every (other)"
	gone "$j" || die "another user's note kept the job's segments"
	kill "$nob"
	wait "$nob" 2>/dev/null
	nob=
	rm -f /dev/shm/pastset-expect."$j".*
else
	echo "another user's note: skipped (needs root, setpriv and the user nobody)"
fi
echo "waiting monitors: every short job recorded whole; dead and other users' notes keep nothing"
