#!/bin/sh
# t_monitors.sh - heartbeat and geteventmon on an application with known behaviour: a stalled thread, exact event counts, a monitor killed mid-run.
set -u
. "$(dirname "$0")/lib.sh"
app="$BUILD/tests/app_stall"
job="itmon$$"
out=$(mktemp); ev=$(mktemp)
cleanup() { rm -f "$out" "$ev"; rm_segments "$job"; rm_vader_orphans; }
trap cleanup EXIT

# heartbeat: t0 and t1 keep working, t2 stops inside a take on its 'never' path.
"$app" "$job.h" 3 & apid=$!
"$BIN/heartbeat" -p 400 -w 5 "$job.h" >"$out"; hb=$?
wait $apid || die "the application failed"
cat "$out"
[ $hb -eq 3 ] || die "heartbeat exit status $hb, expected 3 (a thread waits for what nobody writes)"
grep -q "1 stalled: t2 (in take on t2->never" "$out" || die "the stalled thread or where it waits not reported"
grep -q "^  deadlock for [0-9.]* s: t2 in take on t2->never, which no other thread writes$" "$out" ||
	die "the wait on an element nobody writes not named"
grep -q "0 stalled" "$out" || die "no period before the stall"
grep -Eq "^  t0 +ok" "$out" && grep -Eq "^  t1 +ok" "$out" || die "t0/t1 not reported as progressing"
grep -q "stalled: t0\|stalled: t1\|, t0 (\|, t1 (" "$out" && die "a working thread reported stalled"

# A thread that stopped before heartbeat came is stalled in the first period:
# the first period is judged against where every thread was at attach.
# (t2 stops in its first operation, and the job lasts until heartbeat has
# judged: a loaded machine decides neither)
"$app" "$job.b" 60 first & apid=$!
sleep 2
"$BIN/heartbeat" -p 400 -n 1 "$job.b" >"$out"; hb=$?
end_job $apid
[ $hb -eq 3 ] || die "heartbeat's first period missed an earlier stall (exit $hb): $(cat "$out")"
grep -q "heartbeat 0.4s: 3 threads: 2 progressing, 1 stalled: t2 (in take" "$out" ||
	die "first period: $(cat "$out")"

# Watching through a node daemon that restarts: heartbeat says it cannot reach
# it, judges nobody meanwhile, and goes on when it is back; not "the job ended".
pf=$(mktemp -u)
"$app" "$job.d" 6 & apid=$!
"$BIN/psadm" serve "$job.d." --port-file "$pf" >/dev/null & dpid=$!
wait_for 5 test -s "$pf" || die "no daemon port"
port=$(cat "$pf")
"$BIN/heartbeat" -p 300 -n 12 --servers "127.0.0.1:$port" "$job.d" >"$out" 2>"$ev" & hpid=$!
sleep 1.2
kill $dpid; wait $dpid
sleep 1
"$BIN/psadm" serve "$job.d." --port "$port" >/dev/null & dpid=$!
wait $hpid; hb=$?
kill $dpid; wait $dpid; rm -f "$pf"
wait $apid || die "the application failed"
cat "$out" "$ev"
grep -q "cannot reach the job's tuple servers (127.0.0.1:$port" "$out" || die "no word of the lost daemon"
grep -q "answer again" "$ev" || die "no word of the daemon's return"
grep -q "summary after 12 periods$" "$out" || die "heartbeat did not watch to the end"
tail -n +2 "$out" | grep "heartbeat [0-9.]*s: 3 threads" | tail -1 | grep -q "1 stalled: t2" ||
	die "not judging again after the daemon came back"

# A thread stuck in its very first operation is stalled too, not "without events".
"$app" "$job.f" 2 first & apid=$!
"$BIN/heartbeat" -p 400 -w 5 "$job.f" >"$out"; hb=$?
wait $apid || die "the application failed"
[ $hb -eq 3 ] || die "heartbeat missed a stall in a first operation (exit $hb)"
grep -q "stalled: t2 (in take on t2->never" "$out" || die "first-operation stall not described: $(cat "$out")"

# When another thread has a path to the element and may yet write it, t2
# waits for that thread: a stall whose root progresses, not a deadlock.
"$app" "$job.s" 2.5 shared & apid=$!
"$BIN/heartbeat" -p 400 -w 5 --graph "$out.dot" "$job.s" >"$out"; hb=$?
wait $apid || die "the application failed"
[ $hb -eq 1 ] || die "heartbeat exit status $hb with a possible writer, expected 1: $(cat "$out")"
grep -q "^  stall: t1 progresses; 1 thread waits for it: t2 directly$" "$out" || die "t2's wait for t1 not named: $(cat "$out")"
grep -q "deadlock" "$out" && die "a deadlock named where t1 may still write"
grep -q "n2 -> n1" "$out.dot" || die "the graph lacks t2's wait for t1: $(cat "$out.dot")"
rm -f "$out.dot" "$out.png"
"$BIN/heartbeat" -n 1 --graph /no/such/dir/g.dot "$job.s" 2>&1 | grep -q "graph /no/such/dir/g.dot: No such file" ||
	die "an unwritable --graph not explained"

# A writer whose process died (SIGKILL) while the reader in another process
# waits for its element: a deadlock, the dead writer named.
"$BUILD/tests/app_died" "$job.x" 4 p0 >/dev/null & apid=$!
sleep 0.3
"$BUILD/tests/app_died" "$job.x" 4 p1 & wpid=$!
sleep 0.5 # its three tuples taken; the shell has not reaped it: a zombie is dead too
"$BIN/heartbeat" -p 400 -n 2 -w 5 "$job.x" >"$out"; hb=$?
wait $apid || die "the reader of app_died failed"
wait $wpid 2>/dev/null
cat "$out"
[ $hb -eq 3 ] || die "heartbeat exit status $hb with a dead writer, expected 3"
grep -q "^  deadlock for [0-9.]* s: writer has died (its process ended without closing its trace space); 1 thread waits for it: reader in take on reader->e$" "$out" ||
	die "the dead writer not named"
grep -q "1 ended" "$out" || die "the dead writer counted as stalled"

# geteventmon: every event, or an exact count of those it missed.
"$app" "$job.g" 1 & apid=$!
chmod 644 "$ev" # as a file the user had: geteventmon makes it private
"$BIN/geteventmon" -p 20 -w 5 -o "$ev" "$job.g" 2>"$out" || die "geteventmon failed: $(cat "$out")"
wait $apid || die "the application failed"
cat "$out"
n=$(awk '/events written/ {print $2}' "$out"); lost=$(awk '/events written/ {print $5}' "$out")
total=$("$BIN/psadm" show "$job.g.t0" | awk '$1 ~ /^c[0-9]+$/ {s += $5} END {print s}')
[ $((n + lost)) -eq "$total" ] || die "written $n + missed $lost != recorded $total"
[ "$(grep -vc '^#' "$ev")" -eq "$n" ] || die "file holds a different number of events"
[ "$(stat -c %a "$ev")" = 600 ] || die "geteventmon -o: mode $(stat -c %a "$ev"), expected 600 like the trace it copies"
for t in t0 t1 t2; do grep -q " $t write " "$ev" || die "no events of $t"; done
# each thread's events in its own order
awk '!/^#/ { if (($4, $5) in last && $9 <= last[$4, $5]) bad = 1; last[$4, $5] = $9 } END { exit bad }' "$ev" ||
	die "a thread's events out of order"

# A monitor killed with SIGKILL at any moment leaves the application running.
"$app" "$job.k" 2 & apid=$!
"$BIN/heartbeat" -p 100 -w 5 "$job.k" >/dev/null & mpid=$!
sleep 0.5; kill -9 $mpid
"$BIN/geteventmon" -p 10 -w 5 -o /dev/null "$job.k" 2>/dev/null & mpid=$!
sleep 0.3; kill -9 $mpid
wait $apid || die "the application did not survive its monitors being killed"
"$BIN/psadm" show "$job.k.t0" | awk '$1 == "c0" { exit !($5 > 300) }' || die "t0 stopped working"

# Bad arguments: a clear message and status 2.
"$BIN/heartbeat" --servers nohostport j 2>&1 | grep -q "'nohostport': expected HOST:PORT" || die "bad --servers not explained"
"$BIN/heartbeat" -w 0 --servers 127.0.0.1:1 j 2>&1 | grep -q "cannot reach the tuple server 127.0.0.1:1" || die "dead server not named"
sf=$(mktemp); chmod 644 "$sf"
"$BIN/heartbeat" --servers 127.0.0.1:1 --secret-file "$sf" j 2>&1 | grep -q "secret-file $sf: group or others may read" || die "bad secret file not explained"
rm -f "$sf"
"$BIN/heartbeat" >/dev/null 2>&1; [ $? -eq 2 ] || die "heartbeat without a job"
"$BIN/heartbeat" -p x j 2>&1 | grep -q "period: expected a number" || die "bad period not explained"
"$BIN/heartbeat" -w 0 "nosuchjob$$" 2>&1 | grep -q "no trace spaces on this host" || die "missing job"
"$BIN/geteventmon" -f xml j 2>&1 | grep -q "expected text or binary" || die "bad format not explained"
"$BIN/geteventmon" --help | grep -q "discarded" || die "no help"
exit 0
