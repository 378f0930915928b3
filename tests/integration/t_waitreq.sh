#!/bin/sh
# t_waitreq.sh - heartbeat tells the truth through requests and sub-communicators: correct programs with a slow rank are stalls with their root, never deadlocks; deadlocks through waits, persistent requests, roots and nonblocking collectives are named with each rank's call.
set -u
. "$(dirname "$0")/lib.sh"
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"
[ -f "$lib" ] || { echo "no $lib (sanitizer build): skipped"; exit 0; }
job="itwr$$"
dir=$(mktemp -d)
app="" namer=""
cleanup() { [ -n "$namer" ] && kill "$namer" 2>/dev/null; [ -n "$app" ] && end_job "$app"; rm -rf "$dir"; rm_segments "$job"; }
trap cleanup EXIT

# watch NP SCENARIO SECONDS [heartbeat options]: mpi_wait under the
# collectors, heartbeat watching from before it starts; its output in
# $dir/SCENARIO, its status in $hb.
runs=0 UNTIL="" LATE=""
watch() {
	np=$1 sc=$2 secs=$3; shift 3
	runs=$((runs + 1))
	mpirun --oversubscribe --allow-run-as-root -np "$np" -x LD_PRELOAD="${LIB:-$lib}" -x ES_JOB="$job.$sc$runs" \
		${UNTIL:+-x MPI_WAIT_UNTIL="$UNTIL"} ${LATE:+-x MPI_WAIT_MADE="$dir/$sc.made"} \
		${SEEN:+-x ES_DEBUG_SEEN_UNTIL="$SEEN"} \
		"$BUILD/tests/mpi_wait" "$sc" "$secs" >"$dir/$sc.app" 2>&1 &
	app=$!
	# SEEN: each thread stops the moment it is seen until heartbeat has
	# seen every one (the debug collector's pause, core.c)
	[ -n "${SEEN:-}" ] && (until grep -q "watching $np threads" "$dir/$sc" 2>/dev/null; do
		sleep 0.1
	done; touch "$SEEN") &
	# LATE: heartbeat starts once every rank has made what it waits for
	while [ -n "${LATE:-}" ] && [ "$(ls "$dir" | grep -c "^$sc\.made\.")" -lt "$np" ] && kill -0 "$app" 2>/dev/null; do
		sleep 0.1
	done
	"$BIN/heartbeat" -p 400 -w 30 "$@" "$job.$sc$runs" >"$dir/$sc" 2>&1
	hb=$?
	cat "$dir/$sc"
}
says() { grep -q "^  $1\$" "$dir/$sc" || die "$sc: heartbeat did not say: $1"; }
# seen_in THREAD WHAT: heartbeat saw THREAD stalled in WHAT in some period,
# not necessarily the last (a loaded machine may end the stall later)
seen_in() { grep -q -e "$1 (in $2" -e "^  $1 .*last seen in $2" "$dir/$sc"; }

# A correct program whose last rank computes: heartbeat follows it to its
# end, names that rank the root of the stall and never a deadlock.
correct() {
	np=$1 sc=$2
	# the last rank computes until heartbeat has named it, however long a
	# loaded machine keeps heartbeat from its periods
	UNTIL="$dir/$sc.named"
	(until grep -q "^  stall: rank$((np - 1)).thread0 computes" "$dir/$sc" 2>/dev/null; do
		sleep 0.1
	done; touch "$UNTIL") &
	namer=$!
	watch "$np" "$sc" "${SECS:-2}"
	kill "$namer" 2>/dev/null; wait "$namer" 2>/dev/null; namer=""
	UNTIL=""
	wait "$app" || die "mpi_wait $sc failed: $(cat "$dir/$sc.app")"
	app=""
	[ $hb -eq 1 ] || die "$sc: exit status $hb, expected 1 (a stall)"
	grep -q "deadlock" "$dir/$sc" && die "$sc: a deadlock named in a correct program"
	grep -q "^  stall: rank$((np - 1)).thread0 computes (not in MPI) for [0-9.]* s; [0-9] threads\? waits\? for it" \
		"$dir/$sc" || die "$sc: rank $((np - 1)) not named the root"
}

# On a split numbered backwards: each rank named by its world rank, and
# by its rank there.
correct 4 halo
seen_in rank0.thread0 "MPI_Waitall: MPI_Irecv from 3 (rank 0 there) tag 1 on communicator [0-9a-f]* (ranks 3, 2, 1, 0)" ||
	die "halo: rank 0's wait not named in world and communicator ranks"
correct 4 anyhalo
correct 4 persist
correct 4 ring
correct 4 dups
correct 4 splits
# heartbeat attaching after 20,000 communicators were made and freed (its
# rank's mpi.comms has come round, the one in use written again)
LATE=1
correct 4 manycomms
LATE=""
seen_in rank0.thread0 "MPI_Sendrecv to 1 tag 2, from 3 tag 2 on communicator [0-9a-f]* (ranks 0, 1, 2, 3)" ||
	die "manycomms: the communicator made first not known"
correct 4 intercomm
seen_in rank1.thread0 "MPI_Recv from 3 (rank 1 there) tag 3 on intercommunicator" ||
	die "intercomm: the receive's peer not in the remote group"
correct 4 gatherv
seen_in rank1.thread0 "MPI_Bcast #1 root 0 on MPI_COMM_WORLD" ||
	die "gatherv: a rank ahead in the Bcast not seen there"
correct 4 testany

# A job that progresses through all of these: never a deadlock.  (A stall
# may be the truth on a loaded machine, a rank without a core for a
# period: whether one is seen is the machine's speed, not heartbeat's.)
watch 4 progressreq 3
wait "$app" || die "mpi_wait progressreq failed: $(cat "$dir/$sc.app")"
app=""
[ $hb -le 1 ] || die "progressreq: exit status $hb, expected 0 (or 1 for a stall under load)"
grep -q "deadlock" "$dir/$sc" && die "progressreq: a deadlock named in a correct program"

# Deadlocks, each named with every rank's call; heartbeat stops at the
# first (-x), and the job is ended.
deadlock() {
	np=$1 sc=$2
	# stops at the deadlock, whenever the machine's load lets it be named;
	# one not named within a minute is a failure, not a hang
	watch "$np" "$sc" 0 -x -n 150
	end_job "$app"; app=""
	[ $hb -eq 3 ] || die "$sc: exit status $hb, expected 3 (deadlock)"
	grep -q "^heartbeat: summary after [0-9]* periods (at the first deadlock)$" "$dir/$sc" ||
		die "$sc: -x did not stop at the deadlock"
}
# the mismatch is whole with rank 0 and one other (a Barrier never matches an
# Ibarrier): the ranks in the Barrier are named as far as a loaded machine
# let them get there first
deadlock 3 nbc
says "deadlock for [0-9.]* s: collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Ibarrier #0\(, rank[12] in MPI_Barrier #0\)\{1,2\}"
# heartbeat attaching the moment the threads are seen, before they go on:
# each thread's request board is there from then (made after, a Wait was
# on nothing to heartbeat, and the deadlock went unnamed: MBI under load)
LIB="$(cd "$BUILD/lib/debug" && pwd)/libescollect.so" SEEN="$dir/seen"
deadlock 3 nbc
LIB="" SEEN=""
says "deadlock for [0-9.]* s: collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Ibarrier #0\(, rank[12] in MPI_Barrier #0\)\{1,2\}"
deadlock 3 waitcycle
says "deadlock for [0-9.]* s: rank0 in MPI_Wait: MPI_Irecv from 1 tag 5 <- rank2 in MPI_Wait: MPI_Irecv from 0 tag 5 <- rank1 in MPI_Wait: MPI_Irecv from 2 tag 5"
# rank 2 goes its own way to the barrier: the knot of ranks 0 and 1 is
# whole before it gets there, and heartbeat, stopping at the first
# deadlock, names rank 2 only if it was inside by then
deadlock 3 ptag
says "deadlock for [0-9.]* s: rank0 in MPI_Wait: MPI_Recv_init from 1 tag 1 <- rank1 in MPI_Barrier #0 on MPI_COMM_WORLD\(; 1 more thread waits for it: rank2\)\{0,1\}"
# two ranks: with a third, whose part of its Reduce is sent at once, that
# rank may end first, and rank 0 waiting for it is as true a deadlock
deadlock 2 root
says "deadlock for [0-9.]* s: collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Reduce #0 root 0, rank1 in MPI_Reduce #0 root 1"
# (its sends that Open MPI completed within their calls are open no more)
deadlock 3 halonobody
says "deadlock for [0-9.]* s: rank0 in MPI_Waitall: MPI_Irecv from 2 tag 1; [1-3] more that can complete <- rank2 in MPI_Barrier #0 on MPI_COMM_WORLD\(; 1 more thread waits for it: rank1\)\{0,1\}"
deadlock 3 forgot
says "deadlock for [0-9.]* s: rank0 has ended (inside MPI_Finalize); 1 thread waits for it: rank1 in MPI_Wait: MPI_Irecv from 0 tag 3"
exit 0
