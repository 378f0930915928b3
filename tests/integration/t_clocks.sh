#!/bin/sh
# t_clocks.sh - two ranks on two hosts (each in a network namespace of its own with its own /dev/shm, talking MPI over a bridge, served over TCP to a recorder and esview in a third), rank 1's clock set 3 ms ahead and gaining 200 ppm: the ranks measure their offset by MPI ping-pong at MPI_Init and after world collectives, the archive keeps the points (a killed recorder's too), and its readers and esview move rank 1's stamps onto rank 0's clock, so that no message is received before it was sent (an independent checker of OTF2, the JSON, esview's lines) where, left as recorded, thousands would be.
set -u
. "$(dirname "$0")/lib.sh"
shim="$(cd "$BUILD/lib" 2>/dev/null && pwd)/libnetns_shim.so"
[ -f "$BUILD/lib/libescollect.so" ] && [ -f "$shim" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "skipped: a /dev/shm of each rank's own needs root"; exit 0; }
job="itclk$$"
dir=$(mktemp -d)
app="" rec="" view=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	pkill -9 -f "esrecord .* -o $dir/" 2>/dev/null
	pkill -f "esview .* $job\$" 2>/dev/null
	netns_down ec
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 700 "$dir"
echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/secret"
chmod 600 "$dir/secret"

# Three namespaces on a bridge: ec1 and ec2 the job's hosts, ec0 the
# monitors'.  Where the machine allows none, the ranks stay in this one
# (each still with its own /dev/shm, served over loopback).
if netns_up ec; then
	hosts="-x ES_TEST_NETNS=$ns1,$ns2 --mca btl_tcp_if_include $br -x ES_SERVE=any -x ES_SECRET_FILE=$dir/secret"
	echo "hosts: network namespaces $ns1, $ns2; monitors in $ns0"
else
	hosts="-x ES_SERVE=loopback"
	at0() { "$@"; }
	echo "hosts: this namespace (network namespaces not allowed here)"
fi

# The collector's own communicators (a host's ranks, the hosts' first
# ranks) are made by no collective over MPI_COMM_WORLD: under Open MPI such
# a collective left libnbc's progress routine in every later poll of the
# program (hpcc's RandomAccess ran 4% slower for it).  mpi_poll makes none.
for apart in 0 1; do # one host of three ranks; three hosts of one
	rm -f "$dir/poll.r0"
	mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$shim" -x ES_TEST_HOSTS=$apart \
		-x ES_TEST_COMMS="$dir/comms" "$BIN/esrun" -q -j "${job}c" "$BUILD/tests/mpi_poll" 50 "$dir" >"$dir/c.out" 2>&1 ||
		die "mpi_poll with the collector (hosts apart: $apart) failed: $(cat "$dir/c.out")"
	[ -s "$dir/comms" ] && die "the collector made communicators over MPI_COMM_WORLD: $(sort "$dir/comms" | uniq -c)"
	grep -q "^0 sent 50 to 1, received 50 from 2$" "$dir/poll.r0" || die "mpi_poll (hosts apart: $apart): $(cat "$dir"/poll.r*)"
	rm_segments "${job}c"
done
# ... and the shim sees one the program makes
mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$shim" -x ES_TEST_COMMS="$dir/comms2" \
	"$BIN/esrun" -q -j "${job}d" "$BUILD/tests/mpi_split" >"$dir/d.out" 2>&1 || die "mpi_split failed: $(cat "$dir/d.out")"
grep -q "over MPI_COMM_WORLD" "$dir/comms2" || die "the shim saw no communicator mpi_split made"
rm_segments "${job}d"

# a period that is not one: said by rank 0, the default taken, the job runs
out=$(mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_SYNC_EVERY=soon "$BIN/esrun" -q -j "${job}b" \
	"$BUILD/tests/mpi_clocks" 0.1 2>&1) || die "mpi_clocks with a bad ES_SYNC_EVERY failed: $out"
[ "$(echo "$out" | grep -c "^escollect: ES_SYNC_EVERY=soon: expected the seconds between clock points, a number above 0; 10 it is$")" = 1 ] ||
	die "the bad ES_SYNC_EVERY not said once: $out"

# points in between after all-collectives over every rank: on MPI_COMM_WORLD
# and on a dup of it; on a dup, not when threads may make collectives at
# once (MPI_THREAD_MULTIPLE): two threads' could come in another order on
# another rank.  Counted in the archive of each (kind 3: in between).
for mode in world dup dup-multiple; do
	"$BIN/esrecord" -w 30 -o "$dir/m.$mode" "${job}m$mode" 2>/dev/null &
	mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_SYNC_EVERY=0.1 "$BIN/esrun" -q -j "${job}m$mode" \
		"$BUILD/tests/mpi_clocks" 0.6 - "$mode" >"$dir/m.out" 2>&1 || die "mpi_clocks $mode: $(cat "$dir/m.out")"
	wait $! || die "esrecord of mpi_clocks $mode failed"
	n=$(grep -c "^sync 1 [0-9]* 3 " "$dir/m.$mode/clocks")
	echo "points in between, $mode: $n"
	case $mode in
	dup-multiple) [ "$n" = 0 ] || die "$mode: $n points in between (a thread's collectives counted)" ;;
	*) [ "$n" -ge 1 ] || die "$mode: $n points in between: $(cat "$dir/m.$mode/clocks")" ;; # the first comes after the first
	esac
	grep -q "^sync 1 [0-9]* 2 " "$dir/m.$mode/clocks" || die "$mode: no MPI_Finalize point"
done

# 20 ns a second over ten minutes is 12 us; 200 ppm over the run's 3 s and
# more is 0.6 ms and more: the drift the readers must follow, fifty times
# over.  It runs until told, so that how fast the machine is decides only
# how many messages it makes.
# shellcheck disable=SC2086 # $hosts: options, split on purpose
mpirun --oversubscribe --allow-run-as-root -np 2 --mca btl self,tcp $hosts -x PMIX_MCA_gds=hash \
	-x LD_PRELOAD="$shim" -x ES_TEST_HOSTS=1 -x ES_TEST_CLOCK="0/0,3000000/200" -x ES_SYNC_EVERY=0.5 \
	-x ES_SERVERS_OUT="$dir/servers" "$BIN/esrun" -q -j "$job" "$BUILD/tests/mpi_clocks" 3 "$dir/stop" dup >"$dir/job.out" 2>&1 &
app=$!
wait_for 60 test -s "$dir/servers" || die "no tuple servers: $(cat "$dir/job.out")"
servers=$(cat "$dir/servers")
mon="--servers $servers --secret-file $dir/secret"
# shellcheck disable=SC2086
at0 "$BIN/esrecord" -w 30 $mon -o "$dir/a" "$job" 2>"$dir/rec.err" &
rec=$!
# shellcheck disable=SC2086
at0 "$BIN/esrecord" -w 30 $mon -o "$dir/k" "$job" 2>/dev/null &
# shellcheck disable=SC2086
at0 "$BIN/esview" -w 30 $mon "$job" >"$dir/view.out" 2>&1 &
view=$!
# the second recorder killed once the first points in between are in its archive
wait_for 60 sh -c "grep -q '^sync 1 3 3 ' '$dir/k/clocks' 2>/dev/null" || die "no clock point in between reached the archive"
pkill -9 -f "esrecord .* -o $dir/k " || die "the second recorder was not there to kill"
# the live view: its lines (the latest receives it holds) as rank 0's clock
# has them, none back in time, once the run has gone on for two seconds of
# points since (rank 1 has gained 0.4 ms since the view connected)
wait_for 30 grep -q "^esview: job $job at http" "$dir/view.out" || die "esview: $(cat "$dir/view.out")"
url=$(sed -n "s/^esview: job $job at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
wait_for 120 sh -c "[ \$(grep -c '^sync 1 ' '$dir/a/clocks' 2>/dev/null) -ge 6 ]" || die "rank 1's points did not come"
lines() { at0 curl -sf "${url}data?shown=10000"; }
# many_lines: the view holds 100 receives and more
many_lines() {
	lines | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(len(d["msgs"]) + d.get("msgs_backwards", 0) < 100)'
}
wait_for 60 many_lines || die "esview drew few lines: $(lines | head -c 300)"
lines >"$dir/view.json" || die "GET /data failed"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print("esview: %d lines, %d back in time" % (len(d["msgs"]), d.get("msgs_backwards", 0)))
assert len(d["msgs"]) >= 100 and not d.get("msgs_backwards"), "lines back in time"' "$dir/view.json" || die "esview's lines across the clocks"
pkill -f "esview .* $job\$"
wait "$view" 2>/dev/null
view=
touch "$dir/stop"
wait "$app" || die "mpi_clocks failed: $(cat "$dir/job.out")"
app=
wait "$rec" || die "esrecord failed: $(cat "$dir/rec.err")"
rec=

# The points: rank 0's host is the reference (0), rank 1's offset is what
# was set, and grows at the rate it drifts
python3 - "$dir/a/clocks" <<'EOF' || die "clock points: $(cat "$dir/a/clocks")"
import sys
pts = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "sync":
        pts.setdefault(int(w[1]), []).append((int(w[4]), int(w[5]), int(w[6])))
for r in pts:
    pts[r].sort()
assert all(o == 0 for _, o, _ in pts[0]), "rank 0 not at 0: %r" % pts[0]
p = pts[1]
assert len(p) >= 4, "rank 1 has %d points" % len(p)
(t0, o0, _), (t1, o1, _) = p[0], p[-1]
assert abs(o0 - 3000000) < 500000, "rank 1's first offset %d ns, set 3 ms" % o0
ppm = (o1 - o0) / (t1 - t0) * 1e6
assert 150 < ppm < 250, "rank 1 drifts %.1f ppm, set 200" % ppm
print("rank 1: %d points, %.3f ms apart at first, drifting %.1f ppm" % (len(p), o0 / 1e6, ppm))
EOF

# OTF2, read by the independent checker: every receive after its send
"$BIN/esconvert" --otf2 "$dir/a.otf2" "$dir/a" >"$dir/conv" 2>&1 || die "esconvert: $(cat "$dir/conv")"
grep -q "clocks: 1 rank moved onto rank 0's host's clock" "$dir/conv" || die "esconvert did not say it moved the clocks: $(cat "$dir/conv")"
otf2-print "$dir/a.otf2/traces.otf2" 2>/dev/null | python3 "$(dirname "$0")/msg_check.py" >"$dir/check" ||
	die "OTF2's messages across the clocks: $(cat "$dir/check")"
cat "$dir/check"
n=$(sed -n 's/^messages=\([0-9]*\) .*/\1/p' "$dir/check")
[ "${n:-0}" -ge 100 ] || die "only ${n:-0} messages"
# ... where the stamps as recorded (the archive without its clocks file)
# have receives before their sends: the readers' move is what put them right
mkdir "$dir/raw" && cp "$dir/a/"* "$dir/raw/" && rm "$dir/raw/clocks"
"$BIN/esconvert" --otf2 "$dir/raw.otf2" "$dir/raw" >/dev/null 2>&1 || die "esconvert of the raw archive failed"
otf2-print "$dir/raw.otf2/traces.otf2" 2>/dev/null | python3 "$(dirname "$0")/msg_check.py" >"$dir/rawcheck" &&
	die "as recorded, no receive came before its send: the test shows nothing"
grep -q "recv_before_send=[1-9]" "$dir/rawcheck" || die "as recorded: $(cat "$dir/rawcheck")"
echo "as recorded: $(cat "$dir/rawcheck" | head -1)"

# the JSON: no arrow back in time, messages' nor collectives'
"$BIN/esconvert" --json "$dir/a.json" "$dir/a" >"$dir/jconv" 2>&1 || die "esconvert --json: $(cat "$dir/jconv")"
slices=$(sed -n 's/.*a\.json: \([0-9]*\) slices, \([0-9]*\) messages.*/\1/p' "$dir/jconv")
msgs=$(sed -n 's/.*a\.json: \([0-9]*\) slices, \([0-9]*\) messages.*/\2/p' "$dir/jconv")
python3 "$(dirname "$0")/json_check.py" "$dir/a.json" "$slices" "$msgs" || die "the JSON across the clocks"
grep -q "backwards\|before they were sent" "$dir/jconv" && die "the JSON left arrows out: $(cat "$dir/jconv")"

# the killed recorder's archive: its points up to the kill, and the same
"$BIN/esconvert" --otf2 "$dir/k.otf2" "$dir/k" >"$dir/kconv" 2>&1 || die "esconvert of the killed recorder's archive: $(cat "$dir/kconv")"
otf2-print "$dir/k.otf2/traces.otf2" 2>/dev/null | python3 "$(dirname "$0")/msg_check.py" >"$dir/kcheck" ||
	die "the killed recorder's messages: $(cat "$dir/kcheck")"
echo "killed recorder: $(cat "$dir/kcheck")"
exit 0
