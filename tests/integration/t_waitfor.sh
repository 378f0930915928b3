#!/bin/sh
# t_waitfor.sh - heartbeat names who waits for whom in real MPI programs: the root of a stall, cycles, a collective mismatch, an any-source receive, a rank that ended; here and through tuple servers.
set -u
. "$(dirname "$0")/lib.sh"
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"
[ -f "$lib" ] || { echo "no $lib (sanitizer build): skipped"; exit 0; }
job="itwf$$"
dir=$(mktemp -d)
app=""
cleanup() { [ -n "$app" ] && end_job "$app"; rm -rf "$dir"; rm_segments "$job"; }
trap cleanup EXIT

# watch NP SCENARIO SECONDS UNTIL [mpirun options...]: mpi_wait under the
# collectors, heartbeat watching; its output in $dir/SCENARIO, its status in $hb.
# UNTIL says what heartbeat waits for, never a number of periods the
# machine's speed would decide: "end", the program's end; "deadlock", the
# first deadlock it names (-x), within a minute however loaded the machine
# (a deadlock not named by then is a failure, not a hang).  A program that
# deadlocked is then ended (mpirun passes the signal on).
runs=0
DEADLINE=120 # periods of 500 ms
watch() {
	np=$1 sc=$2 secs=$3 until=$4; shift 4
	runs=$((runs + 1)) # a job's segments outlive it: a new name for each run
	mpirun --oversubscribe --allow-run-as-root -np "$np" -x LD_PRELOAD="$lib" -x ES_JOB="$job.$sc$runs" "$@" \
		"$BUILD/tests/mpi_wait" "$sc" "$secs" >"$dir/$sc.app" 2>&1 &
	app=$!
	case $until in
	deadlock) stop="-x -n $DEADLINE" ;;
	*) stop="" ;;
	esac
	# shellcheck disable=SC2086 # the options, split
	"$BIN/heartbeat" -p "${PERIOD:-500}" $stop -w 30 ${HB_ARGS:-} "$job.$sc$runs" >"$dir/$sc" 2>&1
	hb=$?
	cat "$dir/$sc"
}
ended() { # the program may end by itself, or is ended
	end_job "$app"; app=""
}
finished() { wait "$app" || die "mpi_wait $sc failed: $(cat "$dir/$sc.app")"; app=""; }
says() { grep -q "^  $1\$" "$dir/$sc" || die "$sc: heartbeat did not say: $1"; }

# A point-to-point cycle: a true deadlock, named as such, with each wait.
watch 3 cycle 0 deadlock; ended
[ $hb -eq 3 ] || die "cycle: exit status $hb, expected 3 (deadlock)"
says "deadlock for [0-9.]* s: rank0 in MPI_Recv from 1 tag 5 <- rank2 in MPI_Recv from 0 tag 7 <- rank1 in MPI_Recv from 2 tag 6"
# (before the cycle closes, a rank still on its way to its receive may be
# named a stall's root for a period: what counts is the judgement once it has)
sed -n '/^heartbeat: deadlocks and stalls, as last seen:/,$p' "$dir/$sc" | grep -q "stall:" &&
	die "cycle: a stall root named in a deadlock"

# A chain waiting on one computing rank: its root, who waits directly and who through others.
watch 4 chain 5 end; finished
[ $hb -eq 1 ] || die "chain: exit status $hb, expected 1 (a stall)"
says "stall: rank3.thread0 computes (not in MPI) for [0-9.]* s; 3 threads wait for it: rank2 directly, rank1 and rank0 through it"
grep -q "deadlock" "$dir/$sc" && die "chain: a deadlock named where rank 3 computes"

# A collective mismatch on a sub-communicator, the rest of the world waiting for it.
watch 4 mismatch 0 deadlock; ended
[ $hb -eq 3 ] || die "mismatch: exit status $hb, expected 3"
# (named at the first period it holds: ranks 2 and 3 may not be in their
# barrier yet, however long the machine's load keeps them)
says "deadlock for [0-9.]* s: collective mismatch on communicator [0-9a-f]* (ranks 0, 1): rank0 in MPI_Barrier #0, rank1 in MPI_Allreduce #0\(; 2 more threads wait for it: rank2 and rank3\|; 1 more thread waits for it: rank[23]\)\{0,1\}"

# An any-source receive while one sender computes: a stall, not a deadlock.
watch 3 any 4 end; finished
[ $hb -eq 1 ] || die "any: exit status $hb, expected 1"
says "stall: rank1.thread0 computes (not in MPI) for [0-9.]* s; 2 threads wait for it: rank0 directly, rank2 through it"
# ... and when every possible sender waits for the receiver: a deadlock.
watch 3 anyknot 0 deadlock; ended
[ $hb -eq 3 ] || die "anyknot: exit status $hb, expected 3"
says "deadlock for [0-9.]* s: rank0 in MPI_Recv from any source tag 3 <- rank1 in MPI_Recv from 0 tag 3; 1 more thread waits for it: rank2"

# A loop of fruitless polls waits as a blocking call does.
watch 2 probe 0 deadlock; ended
[ $hb -eq 3 ] || die "probe: exit status $hb, expected 3"
says "deadlock for [0-9.]* s: rank0 polling MPI_Iprobe from 1 tag 9 <- rank1 in MPI_Recv from 0 tag 8"

# A rank that finalized while the others wait for it.
watch 3 early 0 deadlock; ended
[ $hb -eq 3 ] || die "early: exit status $hb, expected 3"
# (named at the first period it holds: one of ranks 0 and 1 may not be in
# its receive yet)
says "deadlock for [0-9.]* s: rank2 has ended ([a-z ]* MPI_Finalize); \(2 threads wait for it: rank0 in MPI_Recv from 2 tag 1 and rank1 in MPI_Recv from 2 tag 1\|1 thread waits for it: rank[01] in MPI_Recv from 2 tag 1\)"
# rank 2 is inside MPI_Finalize or past it: never a stalled thread (a
# loaded machine may show it still progressing into MPI_Finalize)
grep -q "^  rank2.thread0 *STALLED" "$dir/$sc" && die "early: the ended rank counted as stalled"

# A job that progresses, watched from its start to its end: never a
# deadlock.  (A stall may be the truth on a loaded machine, a rank without
# a core for a period: whether one is seen is the machine's speed.)
PERIOD=1000 watch 3 progress 4 end; finished
[ $hb -le 1 ] || die "progress: exit status $hb, expected 0 (or 1 for a stall under load)"
grep -q "deadlock" "$dir/$sc" && die "progress: a deadlock named"

# The graph: DOT with the cycle in red, and its picture.  Nodes are
# numbered in the order heartbeat met the threads: the cycle is looked for
# by their labels (rank0 waits for rank1, rank1 for rank2, rank2 for rank0).
HB_ARGS="--graph $dir/g.dot" watch 3 cycle 0 deadlock; ended
red_edge() { # red_edge FROM TO: a thick red arrow from thread FROM's node to TO's
	awk -v a="$1" -v b="$2" '
		/^\tn[0-9]+ \[label="/ { split($0, f, "\""); split(f[2], l, "\\"); id[l[1]] = $1 }
		/ -> .*color="#cc0000", penwidth=3/ { e[$1 " " $3] = 1 }
		END { exit !((a in id) && (b in id) && ((id[a] " " id[b]) in e)) }' "$dir/g.dot"
}
for pair in "rank0.thread0 rank1.thread0" "rank1.thread0 rank2.thread0" "rank2.thread0 rank0.thread0"; do
	# shellcheck disable=SC2086 # the pair, split
	red_edge $pair || die "graph: the cycle's edge $pair not drawn: $(cat "$dir/g.dot")"
done
[ -s "$dir/g.png" ] || die "graph: no picture (is graphviz installed?)"

# The demo's stories (mk/demo.sh, parts 2 and 3): ring_demo's rank 3 loses two
# seconds and is named the root; its unsafe ring of MPI_Ssend is named a deadlock.
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job.ring" \
	"$BUILD/tests/ring_demo" 5 >/dev/null 2>&1 &
app=$!
sc=ring
"$BIN/heartbeat" -p 500 -w 30 "$job.ring" >"$dir/$sc" 2>&1; hb=$?
finished
cat "$dir/$sc"
[ $hb -eq 1 ] || die "ring_demo: exit status $hb, expected 1"
grep -q "^  stall: rank3.thread0 computes (not in MPI) for [0-9.]* s; 3 threads wait for it: " "$dir/$sc" ||
	die "ring_demo: rank 3 not named the root"
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job.dead" \
	"$BUILD/tests/ring_demo" 3 deadlock >/dev/null 2>&1 &
app=$!
sc=dead
"$BIN/heartbeat" -p 500 -x -n "$DEADLINE" -w 30 "$job.dead" >"$dir/$sc" 2>&1; hb=$?
ended
cat "$dir/$sc"
[ $hb -eq 3 ] || die "ring_demo deadlock: exit status $hb, expected 3"
says "deadlock for [0-9.]* s: rank0 in MPI_Ssend to 1 tag 2 <- rank3 in MPI_Ssend to 0 tag 2 <- rank2 in MPI_Ssend to 3 tag 2 <- rank1 in MPI_Ssend to 2 tag 2"

# Across hosts: the same through the job's tuple servers only.
watch_served() {
	sc=$1
	srv="$dir/$sc.servers"
	mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$lib" -x ES_JOB="$job.s$sc" \
		-x ES_SERVE=loopback -x ES_SERVERS_OUT="$srv" "$BUILD/tests/mpi_wait" "$sc" 0 >/dev/null 2>&1 &
	app=$!
	wait_for 30 test -s "$srv" || die "no servers list written"
	"$BIN/heartbeat" -p 500 -x -n "$DEADLINE" -w 30 --servers "$(cat "$srv")" "$job.s$sc" >"$dir/$sc" 2>&1
	hb=$?
	cat "$dir/$sc"
}
watch_served cycle; ended
[ $hb -eq 3 ] || die "served cycle: exit status $hb, expected 3"
says "deadlock for [0-9.]* s: rank0 in MPI_Recv from 1 tag 5 <- rank2 in MPI_Recv from 0 tag 7 <- rank1 in MPI_Recv from 2 tag 6"
exit 0
