#!/bin/sh
# t_handlers.sh - handlers (handlers/es_handler.h) loaded into the monitors: the two examples count calls and message sizes exactly, one loaded twice keeps its own state, one that fails is stopped and said while the monitor goes on, a slow one falls behind and is said while the application is not held; esctl query and esview show their answers and pushes.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="ithnd$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	[ -n "${mon:-}" ] && kill "$mon" 2>/dev/null
	[ -n "${view:-}" ] && kill "$view" 2>/dev/null
	[ -n "${hbs:-}" ] && kill "$hbs" 2>/dev/null
	rm_segments "$job"
	rm_segments "${job}b"
	rm -rf "$dir"
}
trap cleanup EXIT
H=$(cd "$BUILD/lib/handlers" && pwd) # absolute: a pathmap's relative handler is beside the pathmap
T=$(cd "$BUILD/tests" && pwd)/handler_test.so

# a bad handler is refused at the start, with why
out=$("$BIN/geteventmon" -w 1 --handler /nonexistent/h.so "$job" 2>&1); [ $? -eq 2 ] || die "a missing library: $out"
echo "$out" | grep -q "geteventmon: --handler /nonexistent/h.so: cannot open\|No such file" || die "a missing library: $out"
out=$("$BIN/geteventmon" -w 1 --handler "$H/msgsize.so:oops" "$job" 2>&1); [ $? -eq 2 ] || die "bad arguments: $out"
echo "$out" | grep -q "msgsize.so:oops: takes no arguments (got 'oops')" || die "bad arguments: $out"
out=$("$BIN/geteventmon" -w 1 --handler "$BUILD/lib/libesregion.so" "$job" 2>&1); [ $? -eq 2 ] || die "not a handler: $out"
echo "$out" | grep -q "no es_handler_entry(): not a handler" || die "not a handler: $out"

# ring_demo for 3 s on 2 ranks: 300 MPI_Sendrecv of 2048 bytes each on MPI_COMM_WORLD, 30 MPI_Allreduce
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -j "$job" "$BUILD/tests/ring_demo" 3 >/dev/null 2>"$dir/job.err" &
app=$!
"$BIN/geteventmon" -o /dev/null -w 30 --handler "$H/count.so:filter=MPI_Sendrecv,MPI_All*" --handler "$H/msgsize.so" \
	--handler "$H/count.so" --handler "$T:fail=100" "$job" 2>"$dir/gem.err" &
mon=$!
# heartbeat (on a scope of its own for them) and esrecord give theirs every event too
"$BIN/heartbeat" -q -p 500 -w 30 --handler "$H/count.so" "$job" >/dev/null 2>"$dir/hb.err" &
hb=$!
"$BIN/esrecord" -w 30 -o "$dir/arch" --handler "$H/count.so" "$job" 2>"$dir/rec.err" &
rec=$!
# a pathmap's handlers on heartbeat's scope: given what the scope gathers
# (each thread's latest at each pull), one failing and stopped, the scope
# and heartbeat going on; one that cannot be loaded refuses the scope
cat >"$dir/map.yaml" <<EOF
pathmap: 1
name: $job
scopes:
  - { name: beat, view: node, handler: ["$H/count.so:filter=MPI_Sendrecv", "$T:fail=1"] }
  - { name: bad, view: node, handler: /nonexistent/h.so }
EOF
"$BIN/heartbeat" -q -p 200 -w 30 --pathmap "$dir/map.yaml" --scope beat "$job" >/dev/null 2>"$dir/hbs.err" &
hbs=$!
out=$("$BIN/heartbeat" -w 30 --pathmap "$dir/map.yaml" --scope bad "$job" 2>&1); [ $? -eq 2 ] ||
	die "a scope's handler that cannot be loaded: $out"
echo "$out" | grep -q "^heartbeat: the scope's handler /nonexistent/h.so: " || die "a scope's handler not loaded: $out"
# esview with a handler of its own: its page's data carries every monitor's handlers' answers
"$BIN/esview" -w 30 --handler "$H/count.so:filter=MPI_Sendrecv" "$job" >"$dir/view" 2>&1 &
view=$!
wait_for 30 grep -q "http://" "$dir/view" || die "esview never served: $(cat "$dir/view")"
url=$(sed -n 's/^esview: job [^ ]* at //p' "$dir/view")
# (the page's data as JSON: each monitor's handlers with their answers and pushes)
handlers_say() { curl -sf "${url}data?shown=100&bins=4" | python3 -c '
import json, sys
h = json.load(sys.stdin)["handlers"]
mine = [x for x in h if x["monitor"] == "esview" and x["name"] == "count" and x["spec"].endswith("count.so:filter=MPI_Sendrecv")
        and json.loads(x["answer"])["events"] > 0]
theirs = [x for x in h if x["monitor"] == "geteventmon" and x["name"] == "msgsize" and "pushed" in x]
sys.exit(0 if mine and theirs else 1)'; }
wait_for 30 handlers_say ||
	die "esview's page: no handler's answer or push: $(curl -sf "${url}data?shown=100&bins=4" | grep -o '"handlers":.*' | head -c 1500)"
kill $view; wait $view
# esctl query while it runs: both counts (each its own), the histogram's push
wait_for 60 sh -c "\"$BIN/esctl\" $job query count | grep -c '^geteventmon pid [0-9]*: count' | grep -qx 2" ||
	die "esctl query count: $("$BIN/esctl" "$job" query count 2>&1)"
wait_for 60 sh -c "\"$BIN/esctl\" $job query msgsize | grep -q '^  pushed .* ago: {\"messages\":[1-9]'" ||
	die "esctl query msgsize: no push: $("$BIN/esctl" "$job" query msgsize 2>&1)"
wait_for 60 sh -c "\"$BIN/esctl\" $job query count | grep -A1 '^heartbeat pid [0-9]*: count (.*count.so:filter=MPI_Sendrecv)' | grep -q 'MPI_Sendrecv\":[1-9]'" ||
	die "esctl query count: the scope's handler's answer: $("$BIN/esctl" "$job" query count 2>&1)"
out=$("$BIN/esctl" "$job" query nosuch 2>&1); [ $? -eq 1 ] || die "query of no handler: $out"
echo "$out" | grep -q "no monitor of job '$job' on this host runs a handler 'nosuch'" || die "query of no handler: $out"
wait $app || die "the job failed: $(cat "$dir/job.err")"
app=""
wait $mon || die "geteventmon failed: $(cat "$dir/gem.err")"
mon=""
wait $hb
wait $hbs
grep -q "^heartbeat: handler test (.*:fail=1) stopped: its process returned -5 (Input/output error); the scope goes on$" \
	"$dir/hbs.err" || die "the scope's failing handler was not said stopped: $(cat "$dir/hbs.err")"
grep -q "^heartbeat: the scope's handler count (.*filter=MPI_Sendrecv): {\"events\":[1-9][0-9]*,\"counted\":[1-9][0-9]*,\"by_call\":{\"MPI_Sendrecv\":[1-9][0-9]*}}$" \
	"$dir/hbs.err" || die "the scope's count: $(cat "$dir/hbs.err")"
wait $rec || die "esrecord failed: $(cat "$dir/rec.err")"
all=$(sed -n 's/^geteventmon: handler count (.*\/count.so): {"events":\([0-9]*\),.*/\1/p' "$dir/gem.err")
grep -q "^heartbeat: handler count (.*/count.so): {\"events\":$all," "$dir/hb.err" ||
	die "heartbeat's handler did not see the $all events geteventmon's did: $(cat "$dir/hb.err")"
grep -q "^esrecord: handler count (.*/count.so): {\"events\":$all," "$dir/rec.err" ||
	die "esrecord's handler did not see the $all events geteventmon's did: $(cat "$dir/rec.err")"
grep -q "0 discarded before they could be read" "$dir/gem.err" || die "geteventmon lost events: $(cat "$dir/gem.err")"
# exact: every event geteventmon read was given to them
# (an MPI_Sendrecv is two events: its send, and its receive's completion)
f=$(grep '^geteventmon: handler count (.*filter=MPI_Sendrecv,MPI_All\*): ' "$dir/gem.err")
echo "$f" | grep -q '"counted":1260,' && echo "$f" | grep -q '"MPI_Allreduce":60[,}]' &&
	echo "$f" | grep -q '"MPI_Sendrecv":1200[,}]' && ! echo "$f" | grep -q MPI_Init ||
	die "count with a filter: $(cat "$dir/gem.err")"
grep -q '^geteventmon: handler count (.*/count.so): {"events":[0-9]*,.*"MPI_Init":2,.*"MPI_Sendrecv":1200' "$dir/gem.err" ||
	die "count loaded twice did not keep its own state: $(cat "$dir/gem.err")"
grep -q '^geteventmon: handler msgsize (.*): {"messages":600,"uncounted":0,"comms":\[{"rank":[01],"comm":0,"bytes_up_to":{"2048":300}},{"rank":[01],"comm":0,"bytes_up_to":{"2048":300}}\]}$' \
	"$dir/gem.err" || die "msgsize: $(cat "$dir/gem.err")"
grep -q "^geteventmon: handler test (.*:fail=100) stopped: its process returned -5 (Input/output error); the geteventmon goes on$" \
	"$dir/gem.err" || die "the failing handler was not said stopped: $(cat "$dir/gem.err")"

# a slow handler in colopmon (stalled until the job ended: its queue of 65,536 fills with
# the wind tunnel's 120,000 events, whatever the machine's speed): it falls behind and
# is said; the quick one beside it does not; the job ends as it would
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -j "${job}b" "$BIN/windtunnel" -j "${job}w" -q -N 128 -m 2 -l 2 \
	-t 6000 --transport mpi >/dev/null 2>"$dir/job2.err" &
app=$!
"$BIN/colopmon" -q -w 30 --handler "$T:wait=$dir/go" --handler "$T:tag=quick" "${job}b" >/dev/null 2>"$dir/col.err" &
mon=$!
wait $app || die "the wind tunnel failed beside a slow handler: $(cat "$dir/job2.err")"
app=""
touch "$dir/go"
wait $mon || die "colopmon failed: $(cat "$dir/col.err")"
mon=""
grep -q "^colopmon: handler test (.*:wait=$dir/go) falls behind: [0-9]* events not given to it" "$dir/col.err" ||
	die "a slow handler not said to fall behind: $(cat "$dir/col.err")"
grep -q "^colopmon: handler test (.*:tag=quick): {\"events\":[0-9]*,\"tag\":\"quick\"}$" "$dir/col.err" ||
	die "the quick handler beside the slow one: $(cat "$dir/col.err")"
grep "falls behind" "$dir/col.err" | grep -q "tag=quick" && die "the quick handler fell behind with the slow one"
# handlers that crash, abort, hang in process() or in query(), or answer
# with bytes no terminal should take: each runs in a process of its own
# (eshandler), so the monitor watches on, says each one's end, and ends
# at SIGINT however they hang; what they say is escaped, and valid UTF-8
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -j "${job}c" "$BUILD/tests/ring_demo" 60 >/dev/null \
	2>"$dir/job3.err" &
app=$!
"$BIN/geteventmon" -o "$dir/gem3.out" -w 30 --handler "$T:crash=50" --handler "$T:abort=50" --handler "$T:hang" \
	--handler "$T:hangq" --handler "$T:bytes" --handler "$H/count.so" "${job}c" 2>"$dir/gem3.err" &
mon=$!
"$BIN/esview" -w 30 --handler "$T:bytes" "${job}c" >"$dir/view3" 2>&1 &
view=$!
wait_for 60 sh -c "\"$BIN/esctl\" ${job}c query count | grep -q '\"MPI_Sendrecv\":[1-9]'" ||
	die "a monitor beside handlers that crash and hang: $(cat "$dir/gem3.err")"
wait_for 60 grep -q "handler test (.*:crash=50) stopped: its process died of signal 11 (SIGSEGV); the geteventmon goes on" \
	"$dir/gem3.err" || die "a crashing handler not said: $(cat "$dir/gem3.err")"
wait_for 60 grep -q "handler test (.*:abort=50) stopped: its process died of signal 6 (SIGABRT); the geteventmon goes on" \
	"$dir/gem3.err" || die "an aborting handler not said: $(cat "$dir/gem3.err")"
wait_for 60 sh -c "\"$BIN/esctl\" ${job}c query test | grep -q 'events [0-9]*\\\\x0arank 0: forged\\\\x1b\\[2J?? end'" ||
	die "esctl query: a handler's bytes not escaped: $("$BIN/esctl" "${job}c" query test 2>&1 | od -c | head -20)"
wait_for 30 grep -q "http://" "$dir/view3" || die "esview never served: $(cat "$dir/view3")"
url=$(sed -n 's/^esview: job [^ ]* at //p' "$dir/view3")
bytes_json() { curl -sf "${url}data?shown=100&bins=4" | python3 -c '
import json, sys
h = json.loads(sys.stdin.buffer.read().decode("utf-8"))["handlers"]
sys.exit(0 if any("forged\x1b[2J" in x.get("answer", "") for x in h) else 1)'; }
wait_for 60 bytes_json || die "esview's data with a handler's bytes: $(curl -sf "${url}data?shown=100&bins=4" | grep -o '"handlers":.*' | head -c 800)"
kill -INT $view; wait $view
kill -INT $mon
t0=$(date +%s)
wait_for 10 sh -c "! kill -0 $mon 2>/dev/null" || die "SIGINT did not end a monitor whose handlers hang"
wait $mon
t1=$(date +%s)
echo "handlers: geteventmon ended $((t1 - t0)) s after SIGINT, two of its handlers hung"
grep -q "handler test (.*:hang): no last answer (busy or hung: not waited for)" "$dir/gem3.err" ||
	die "a hung handler's end not said: $(cat "$dir/gem3.err")"
mon=""
ls /dev/shm | grep -q "^pastset.${job}c-handlers-" && die "a monitor's answers segment outlived it: $(ls /dev/shm | grep "${job}c")"
pgrep -f "eshandler" >/dev/null && pgrep -P $$ eshandler >/dev/null && die "a handler's process outlived its monitor"
# a monitor killed with SIGKILL: its handlers' processes go with it, its
# answers segment is no one's to read (esctl lists it no more), and the
# next monitor of the job removes it
"$BIN/geteventmon" -o /dev/null -w 30 --handler "$H/count.so" "${job}c" 2>"$dir/gem4.err" &
mon=$!
wait_for 60 sh -c "\"$BIN/esctl\" ${job}c query count | grep -q '^geteventmon pid $mon: count'" ||
	die "the monitor to be killed never answered: $(cat "$dir/gem4.err")"
kill -9 $mon; wait $mon 2>/dev/null
mon=""
wait_for 30 sh -c "! \"$BIN/esctl\" ${job}c query count" || die "a killed monitor's handler still listed"
ls /dev/shm | grep -q "^pastset.${job}c-handlers-" || die "the killed monitor's segment was expected left"
"$BIN/colopmon" -q -w 30 --handler "$H/count.so" "${job}c" >/dev/null 2>"$dir/col4.err" &
mon=$!
wait_for 60 sh -c "\"$BIN/esctl\" ${job}c query count | grep -q '^colopmon pid $mon: count'" ||
	die "the next monitor never answered: $(cat "$dir/col4.err")"
[ "$(ls /dev/shm | grep -c "^pastset.${job}c-handlers-")" = 1 ] ||
	die "the killed monitor's segment not removed by the next: $(ls /dev/shm | grep "${job}c")"
kill -INT $mon; wait $mon
mon=""
end_job "$app"
app=""
echo "handlers: counted exactly, loaded twice, stopped when failing, said when slow, queried; crashes, aborts and hangs contained"
