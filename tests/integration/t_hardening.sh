#!/bin/sh
# t_hardening.sh - whatever goes wrong on EventSpace's side, the application runs on: full memory, strangers, floods.
set -u
. "$(dirname "$0")/lib.sh"
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"
[ -f "$lib" ] || { echo "no $lib (sanitizer build): skipped"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- a full /dev/shm -----------------------------------------------------
# In a mount namespace of its own, /dev/shm is a small tmpfs, filled up to
# FREE KB.  The program must run to the end, unmonitored, saying so once.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	cat >"$tmp/full.sh" <<EOS
mount -t tmpfs -o size=16m none /dev/shm || exit 99
dd if=/dev/zero of=/dev/shm/fill bs=1K count=\$((16384 - \$1)) 2>/dev/null
mpirun --oversubscribe --allow-run-as-root -np 2 --mca btl self,tcp -x LD_PRELOAD="$lib" \
	-x ES_JOB=full "$BUILD/tests/mpi_calls"
echo "exit \$?"
EOS
	# nothing free: no trace space at all
	out=$(unshare -m sh "$tmp/full.sh" 0 2>&1)
	echo "$out" | grep -q "^exit 0" || die "full /dev/shm: the program died: $out"
	[ "$(echo "$out" | grep -c '^escollect:')" = 1 ] || die "full /dev/shm: expected one line: $out"
	echo "$out" | grep -q "^escollect: rank 0 (and 1 other): trace space full.r0: no room.*(df /dev/shm); the job runs unmonitored" ||
		die "full /dev/shm: the line does not say why: $out"
	# room for the spaces but not for the threads' elements
	out=$(unshare -m sh "$tmp/full.sh" 6000 2>&1)
	echo "$out" | grep -q "^exit 0" || die "nearly full /dev/shm: the program died: $out"
	n=$(echo "$out" | grep -c "calls are not recorded.*(df /dev/shm)")
	[ "$n" -ge 1 ] && [ "$n" -le 2 ] || die "nearly full /dev/shm: expected a line per rank at most: $out"
else
	echo "a full /dev/shm: skipped (needs root and unshare for a private mount)"
fi

# --- segment files with no header ----------------------------------------
# Empty, cut short, a page of zeros: listed at once as half-made, not each
# waited for (300 used to take 68 s).
pre="hz$$"
i=0
while [ $i -lt 300 ]; do
	f=/dev/shm/pastset.$pre.$i
	case $((i % 3)) in
	0) : >"$f" ;;
	1) head -c 100 /dev/zero >"$f" ;;
	2) head -c 4096 /dev/zero >"$f" ;;
	esac
	chmod 600 "$f"
	i=$((i + 1))
done
out=$(timeout 20 "$BIN/psadm" list 2>&1) || { rm -f /dev/shm/pastset.$pre.*; die "psadm list over 300 half-made segments did not finish: $?"; }
rm -f /dev/shm/pastset.$pre.*
n=$(echo "$out" | grep "^$pre\." | grep -c "still being made, or its maker died")
[ "$n" = 300 ] || die "expected 300 half-made segments listed, got $n: $(echo "$out" | grep "^$pre" | head -3)"
# --- two jobs of one name --------------------------------------------------
# The second, started while the first runs, is refused as a whole (not
# half-watched alongside the first); a later run replaces the first's
# trace and says so.
job="dup$$"
trap 'rm -rf "$tmp"; rm_segments "$job"' EXIT
mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x ES_JOB="$job" \
	"$BUILD/tests/ring_demo" 4 >/dev/null 2>&1 &
first=$!
wait_for 20 "$BIN/psadm" show "$job.r1" || die "the first job never made its trace spaces"
out=$(mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job" \
	"$BUILD/tests/mpi_calls" 2>&1 >/dev/null) || die "the second job died: $out"
[ "$(echo "$out" | grep -c '^escollect:')" = 1 ] || die "two jobs of one name: expected one line: $out"
echo "$out" | grep -q "a job named $job is running already; this one runs unmonitored" ||
	die "two jobs of one name: the line does not say why: $out"
"$BIN/psadm" list | grep -q "^$job\.r2 " && die "the second job's ranks 2 and 3 were traced beside the first's"
wait $first || die "the first job failed"
out=$(mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x ES_JOB="$job" \
	"$BUILD/tests/mpi_calls" 2>&1 >/dev/null) || die "a later run died: $out"
echo "$out" | grep -q "^escollect: job $job: replacing the trace an earlier run of it left" ||
	die "a later run replaced the trace without a word: $out"
"$BUILD/tests/mpi_check" "$job" 2 all || die "the later run's trace is not its own"

# windtunnel --job: a long name is refused, never cut
out=$(mpirun --oversubscribe --allow-run-as-root -np 1 "$BIN/windtunnel" --job \
	abcdefghijklmnopqrstuvwxyz-1234567 -t 1 2>&1) && die "windtunnel took a 33-character job name"
echo "$out" | grep -q "expected 1 to 32 characters" || die "windtunnel --job: $out"
# --- files written where another user placed a link -------------------------
# psadm serve --port-file writes F.tmp and renames it: a link placed at
# F.tmp must not be followed (it overwrote the file it pointed to).
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/port.tmp"
"$BIN/psadm" serve "lk$$" --port-file "$tmp/port" >"$tmp/serve.out" 2>&1 &
srv=$!
wait_for 10 grep -q "cannot write the port" "$tmp/serve.out" || { kill $srv; die "psadm serve wrote through a link: $(cat "$tmp/serve.out")"; }
kill -INT $srv; wait $srv
[ "$(cat "$tmp/victim")" = precious ] || die "the file the link pointed to was overwritten"
# --- a segment name another user took first ---------------------------------
if [ "$(id -u)" = 0 ]; then
	sq="sq$$"
	: >/dev/shm/pastset.$sq.r1
	chown 65534:65534 /dev/shm/pastset.$sq.r1
	out=$(mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x ES_JOB="$sq" \
		"$BUILD/tests/mpi_calls" 2>&1 >/dev/null) || { rm -f /dev/shm/pastset.$sq.*; die "a squatted name killed the job: $out"; }
	"$BIN/psadm" list | grep -q "^$sq\.r0 " && { rm -f /dev/shm/pastset.$sq.*; die "rank 0 was traced while rank 1 could not be"; }
	rm -f /dev/shm/pastset.$sq.*
	echo "$out" | grep -q "trace space $sq.r1: the name is taken by a file of user 65534 in /dev/shm, not ours; the job runs unmonitored" ||
		die "a squatted name: the line does not say so: $out"
	# a monitor names what it cannot watch, loudly
	mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x ES_JOB="$sq" \
		"$BUILD/tests/ring_demo" 3 >/dev/null 2>&1 &
	ring=$!
	wait_for 20 "$BIN/psadm" show "$sq.r1" || die "the ring never made its trace spaces"
	: >/dev/shm/pastset.$sq.r2
	chown 65534:65534 /dev/shm/pastset.$sq.r2
	out=$("$BIN/heartbeat" -n 1 -p 200 -q "$sq" 2>&1 >/dev/null)
	rm -f /dev/shm/pastset.$sq.r2
	wait $ring
	rm_segments "$sq"
	echo "$out" | grep -q "WARNING: $sq.r2 is not watched: it is a file of user 65534, not yours" ||
		die "heartbeat said nothing of a segment another user took: $out"
fi
exit 0
