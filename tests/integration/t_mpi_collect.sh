#!/bin/sh
# t_mpi_collect.sh - libescollect.so records every MPI call of an unmodified program, checked from a separate reader.
set -u
. "$(dirname "$0")/lib.sh"
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"
[ -f "$lib" ] || { echo "no $lib (sanitizer build): skipped"; exit 0; }
job="itmpi$$"
cleanup() { rm_segments "$job"; }
trap cleanup EXIT
run() { # run NP JOB [env...]: the program under mpirun with the collector library
	np=$1 j=$2; shift 2
	mpirun --oversubscribe --allow-run-as-root -np "$np" -x LD_PRELOAD="$lib" -x ES_JOB="$j" "$@" \
		"$BUILD/tests/mpi_calls" ${ARGS:-}
}
for np in 2 4; do
	run $np "$job.a$np" || die "mpi_calls failed under -np $np"
	"$BUILD/tests/mpi_check" "$job.a$np" $np all || die "recorded calls wrong under -np $np"
done

# Plain MPI_Init, one thread.
ARGS=single run 2 "$job.s" || die "mpi_calls single failed"
"$BUILD/tests/mpi_check" "$job.s" 2 single || die "recorded calls wrong with MPI_Init"

# A pathmap that asks for the collectives only.
pm=$(mktemp --suffix=.yaml)
bad=$(mktemp --suffix=.yaml)
trap 'cleanup; rm -f "$pm" "$bad"' EXIT
printf 'pathmap: 1\nname: ignored\nmpi:\n  collect: [collectives]\ntrace:\n  threshold: 100\n' >"$pm"
ES_PATHMAP="$pm" run 2 "$job.c" -x ES_PATHMAP || die "mpi_calls failed with a pathmap"
"$BUILD/tests/mpi_check" "$job.c" 2 collectives || die "collectives-only pathmap not honoured"
# Everything but the polls, as a poll-bound program would ask.
printf 'pathmap: 1\nname: ignored\nmpi:\n  collect: [all, -polls]\n' >"$pm"
ES_PATHMAP="$pm" run 2 "$job.np" -x ES_PATHMAP || die "mpi_calls failed with [all, -polls]"
"$BUILD/tests/mpi_check" "$job.np" 2 nopolls || die "[all, -polls] not honoured"

# A bad pathmap, a missing one, or a FIFO nobody writes (which fopen would
# wait on forever, every rank inside MPI_Init): one line from rank 0, and
# the program runs to the end unmonitored.
printf 'pathmap: 1\nname: j\nmpi:\n  collect: [MPI_Sned]\n' >"$bad"
fifo=$(mktemp -u --suffix=.yaml)
mkfifo "$fifo"
trap 'cleanup; rm -f "$pm" "$bad" "$fifo"' EXIT
for f in "$bad" /no/such/pathmap.yaml "$fifo"; do
	err=$(ES_PATHMAP="$f" run 4 "$job.bad" -x ES_PATHMAP 2>&1 >/dev/null) || die "program died with pathmap $f"
	echo "$err"
	[ "$(echo "$err" | grep -c '^escollect:')" -eq 1 ] || die "not exactly one line for $f: $err"
	echo "$err" | grep -q "running unmonitored" || die "does not say it runs unmonitored"
	[ "$f" = /no/such/pathmap.yaml ] && { echo "$err" | grep -q "$f: No such file" || die "missing file not named"; }
	"$BIN/psadm" list | grep -q "^$job.bad" && die "segments made despite the bad pathmap"
done
echo "$err" | grep -q "$fifo: not a regular file" || die "the FIFO not named: $err"
err=$(timeout 20 "$BIN/esrun" --pathmap "$fifo" true 2>&1); [ $? -eq 2 ] || die "esrun --pathmap FIFO: not status 2: $err"
echo "$err" | grep -q "not a regular file" || die "esrun --pathmap FIFO: $err"

# ES_SERVE: the node's first rank serves the trace spaces; a monitor that
# knows only the address printed watches the stall of ring_demo through it.
srv=$(mktemp -u)
trap 'cleanup; rm -f "$pm" "$bad" "$srv"' EXIT
mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$lib" -x ES_JOB="$job.n" \
	-x ES_SERVE=loopback -x ES_SERVERS_OUT="$srv" "$BUILD/tests/ring_demo" 3 >/dev/null 2>&1 &
app=$!
wait_for 20 test -s "$srv" || die "no servers list written"
grep -q "^127.0.0.1:[0-9]*$" "$srv" || die "servers list: $(cat "$srv")"
# to the job's end, however long a loaded machine makes it: not a fixed
# number of periods that its stall may come after
hb=$("$BIN/heartbeat" -p 400 -n 300 -w 10 --servers "$(cat "$srv")" "$job.n")
wait "$app" || die "ring_demo failed while served"
echo "$hb" | tail -4
echo "$hb" | grep -q "watching 3 threads" || die "the served job's threads not seen: $hb"
echo "$hb" | grep -q "last seen in MPI_Sendrecv to" || die "no thread seen waiting in an MPI call: $hb"
exit 0
