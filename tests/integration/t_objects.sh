#!/bin/sh
# t_objects.sh - a C and a Fortran program's objects (es_object.h) seen and steered by esctl: set, call, refusals (range, read-only, unknown, index, not whole), a batch applied whole, one rank only, two monitors at once (applied in arrival order, each recorded), a monitor gone with its ask queued, rules in the application and in a monitor, through the job's tuple servers with its secret (a wrong one steers nothing).
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itobj$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	[ -n "${view:-}" ] && kill "$view" 2>/dev/null
	rm_segments "$job"
	rm_segments "${job}f"
	rm -rf "$dir"
}
trap cleanup EXIT
secret="$dir/secret" wrong="$dir/wrong"
echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$secret"
echo "not-the-secret-of-this-job-$$" >"$wrong"
chmod 600 "$secret" "$wrong"
esctl() { "$BIN/esctl" "$@"; }
# the value of OBJ's FIELD on rank R, as esctl objects lists it
value() { esctl "$1" objects | awk -v r="rank $2:" -v f="$3" '
	$1" "$2 == r { on = 1; next } /^rank / { on = 0 } on && $1 == f { getline; sub(/^ *= */, ""); print; exit }'; }
is() { [ "$(value "$1" "$2" "$3")" = "$4" ]; }

release="$dir/release"
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" --serve any --secret-file "$secret" -j "$job" \
	"$BUILD/tests/mpi_objects" "$release" >"$dir/job.out" 2>"$dir/job.err" &
app=$!
wait_for 60 grep -q "monitors: --servers" "$dir/job.err" || die "the job did not say where it is served: $(cat "$dir/job.err")"
servers=$(sed -n 's/.*monitors: --servers \([^ )]*\).*/\1/p' "$dir/job.err" | head -1)
# both ranks sealed their object at their first safe point, however late a loaded machine lets them
wait_for 60 sh -c "\"$BIN/esctl\" $job objects | grep -c '^rank [01]: sim  a simulation to steer' | grep -qx 2" ||
	die "the objects never showed: $(esctl "$job" objects 2>&1)"
esctl "$job" objects >"$dir/list"
for w in "rate  double  writable in \[0, 10\]  how fast it goes" "steps  int  read-only  steps made" \
	"v  double\[4\]  writable in \[-1, 1\]  a vector" "kick(arg)  method  count a kick"; do
	[ "$(grep -c "^    $w$" "$dir/list")" -eq 2 ] || die "objects: no '$w' on both ranks: $(cat "$dir/list")"
done
grep -q "escollect: es_object_int(sim.steps): the name is taken" "$dir/job.err" || die "a taken name not said"
grep -q "escollect: es_object_create(2bad): expected a name of letters" "$dir/job.err" || die "a bad name not said"

# a set, and the values the object publishes follow
esctl "$job" set sim.rate=2.5 >"$dir/o" || die "set: $(cat "$dir/o")"
grep -q "^rank 0: sim.rate 1 -> 2.5$" "$dir/o" && grep -q "^rank 1: sim.rate 1 -> 2.5$" "$dir/o" &&
	grep -q "^esctl: set sim.rate=2.5: applied by 2 of 2 ranks$" "$dir/o" || die "set: $(cat "$dir/o")"
wait_for 30 is "$job" 1 rate 2.5 || die "rank 1 never published rate 2.5: $(value "$job" 1 rate)"

# refused before anything is written, with what was wrong
refused() { # refused EXPECTED ARGS...: exit 2 and the message
	want=$1; shift
	out=$(esctl "$job" "$@" 2>&1); rc=$?
	[ $rc -eq 2 ] || die "esctl $*: exit $rc, expected 2: $out"
	echo "$out" | grep -qF "$want" || die "esctl $*: said '$out', expected '$want'"
}
refused "esctl: sim.rate: 11 is out of its range [0, 10]" set sim.rate=11
refused "esctl: sim.steps: the field is read-only" set sim.steps=3
refused "esctl: sim.nothing: no field or method of that name" set sim.nothing=1
refused "esctl: no rank exposes an object 'nosuch'" set nosuch.x=1
refused "esctl: sim.v[4]: it has 4 elements" set 'sim.v[4]=0'
refused "esctl: sim.mode: the field holds integers: the value is not whole" set sim.mode=1.5
refused "expected OBJECT.FIELD=VALUE" set sim.rate
refused "expected a number after '='" set sim.rate=fast
refused "sim.rate: a method is called and a field set" call sim.rate
refused "one object at a time" set sim.rate=1 other.x=2
# a method's argument is checked as a field's value: NaN, infinities and
# numbers past its range never reach it
for arg in nan inf -inf 1.79e+308; do
	refused "esctl: sim.kick: $arg is out of its range" call sim.kick "$arg"
done
# a batch whose second set is out of range: nothing of it is applied
refused "esctl: sim.mode: 4 is out of its range [0, 3]" set 'sim.v[0]=0.5' sim.mode=4
is "$job" 0 v "0 0 0 0" || die "a refused batch changed v: $(value "$job" 0 v)"

# a batch applied together, a call, one rank only
esctl "$job" set 'sim.v[1]=0.5' 'sim.v[3]=-0.5' | grep -q "applied by 2 of 2 ranks" || die "batch not applied"
esctl "$job" call sim.kick 3 >"$dir/o"
grep -q "^rank 1: sim.kick(3) called$" "$dir/o" || die "call: $(cat "$dir/o")"
esctl "$job" set --rank 1 sim.mode=2 >"$dir/o"
grep -q "^esctl: set sim.mode=2: applied by 1 of 1 rank$" "$dir/o" && ! grep -q "^rank 0" "$dir/o" || die "--rank 1: $(cat "$dir/o")"

# two monitors at once: both applied, in the order they arrived, each recorded with its asker
esctl "$job" set sim.rate=3 >"$dir/a" & a=$!
esctl "$job" set sim.rate=4 >"$dir/b" & b=$!
wait $a || die "the first of two monitors: $(cat "$dir/a")"
wait $b || die "the second of two monitors: $(cat "$dir/b")"
esctl "$job" changes >"$dir/log"
# who asked is what the kernel says of the writer (PastSet writes it), never what the ask says
grep "^rank 0: by pid [0-9]* uid $(id -u) esctl: sim.rate [0-9.]* -> [0-9.]*$" "$dir/log" | tail -2 >"$dir/two"
[ "$(awk '{ print $NF }' "$dir/two" | sort | tr '\n' ' ')" = "3 4 " ] || die "two monitors: $(cat "$dir/log")"
first=$(sed -n 1p "$dir/two" | awk '{ print $NF }')
sed -n 2p "$dir/two" | grep -q "sim.rate $first -> " || die "not applied in arrival order: $(cat "$dir/two")"
[ "$(sed -n 1p "$dir/two" | awk '{ print $5 }')" != "$(sed -n 2p "$dir/two" | awk '{ print $5 }')" ] ||
	die "both changes said to come from one asker: $(cat "$dir/two")"

# a monitor gone with its ask queued: the program holds its safe points; the
# ask is written, its asker ends without an answer; released, the program
# applies all of it
esctl "$job" call sim.hold | grep -q "applied by 2 of 2" || die "hold not applied"
out=$(esctl --wait 0 "$job" set 'sim.v[0]=-1' 'sim.v[2]=1'); [ $? -eq 1 ] || die "an unanswered ask: exit $?: $out"
echo "$out" | grep -q "^rank 0: not applied within 0 s" || die "an unanswered ask: $out"
is "$job" 0 v "0 0.5 0 -0.5" || die "held, but v changed: $(value "$job" 0 v)"
# and one killed (SIGKILL) while it waits for its answers, its batch written
asks() { "$BIN/psadm" show "$job.r0" | awk '$1 == "obj.ask" { print $5 }'; }
before=$(asks)
"$BIN/esctl" "$job" set 'sim.mode=1' 'sim.rate=2' >/dev/null 2>&1 &
killed=$!
wait_for 30 sh -c "[ \"\$(\"$BIN/psadm\" show \"$job.r0\" | awk '\$1 == \"obj.ask\" { print \$5 }')\" -gt $before ]" ||
	die "the second ask was never written"
kill -9 $killed; wait $killed 2>/dev/null
is "$job" 0 mode 0 || die "held, but mode changed: $(value "$job" 0 mode)"
touch "$release"
wait_for 30 is "$job" 0 v "-1 0.5 1 -0.5" || die "the queued batch was not applied whole: $(value "$job" 0 v)"
# an array's element said with its index, [0] too
wait_for 30 sh -c "\"$BIN/esctl\" $job changes | grep -q '^rank 0: by pid [0-9]* uid [0-9]* esctl: sim.v\[0\] 0 -> -1$'" ||
	die "v[0]'s change not said with its index: $(esctl "$job" changes | tail -5)"
wait_for 30 is "$job" 0 mode 1 && is "$job" 0 rate 2 ||
	die "a killed monitor's batch was not applied whole: mode $(value "$job" 0 mode) rate $(value "$job" 0 rate)"
"$BIN/esctl" "$job" set sim.mode=0 sim.rate=4 >/dev/null || die "mode and rate back"

# a rule in the application: it runs at each safe point until the mode is 3
esctl "$job" rule --in-app 'when sim.mode < 3 set sim.mode = sim.mode + 1' >"$dir/o"
grep -q "^rank 0: rule 1 runs in the application$" "$dir/o" || die "rule --in-app: $(cat "$dir/o")"
wait_for 30 is "$job" 0 mode 3 && wait_for 30 is "$job" 1 mode 3 || die "the in-app rule did not act"
# its actions counted, not logged one by one (esctl rules lists it, with who began it)
wait_for 30 sh -c "\"$BIN/esctl\" $job rules | grep -q '^rank 0:   applied 3 times, refused 0'" ||
	die "the rule's actions not counted: $(esctl "$job" rules)"
esctl "$job" rules | grep -q "^rank 0: rule 1 (in the application, begun by pid [0-9]* uid $(id -u) esctl): when sim.mode < 3 set sim.mode = sim.mode + 1$" ||
	die "esctl rules: $(esctl "$job" rules)"
esctl "$job" changes >"$dir/log"
grep -q "^rank 0: by pid [0-9]* uid $(id -u) esctl: rule 1 begun$" "$dir/log" || die "the rule's start not in the log: $(cat "$dir/log")"
grep -q "sim.mode 2 -> 3" "$dir/log" && die "a rule's action logged one by one: $(cat "$dir/log")"
refused "rule: at 27: expected a writable field (steps is read-only), got 'steps'" rule --in-app 'when sim.mode < 3 set sim.steps = 1'
esctl "$job" unrule 1 | grep -q "^rank 1: rule 1 removed (its action applied 3 times)$" || die "unrule"
esctl "$job" set sim.mode=0 >/dev/null
is "$job" 0 mode 0 || die "the removed rule still acts"

# a rule in a monitor: at each publication it mirrors, until stopped
"$BIN/esctl" "$job" rule 'when sim.rate < 6 set sim.rate = sim.rate + 0.5' >"$dir/rule" 2>&1 & # not the function: $! must be esctl
r=$!
wait_for 60 is "$job" 0 rate 6 && wait_for 60 is "$job" 1 rate 6 || die "the monitor's rule did not act: $(cat "$dir/rule")"
# listed where it runs, its asks counted in the application by who asked
wait_for 30 sh -c "\"$BIN/esctl\" $job rules | grep -q '^esctl pid $r: rule (run there, on 2 ranks): when sim.rate < 6'" ||
	die "esctl rules: no monitor's rule: $(esctl "$job" rules)"
wait_for 30 sh -c "\"$BIN/esctl\" $job rules | grep -q '^rank 0: a monitor.s rule on sim, asking as pid $r uid'" ||
	die "esctl rules: the monitor's asks not counted: $(esctl "$job" rules)"
kill $r; wait $r
grep -q "^rank 0: sim.rate 5.5 -> 6$" "$dir/rule" || die "the monitor's rule: $(cat "$dir/rule")"

# esview: the objects on its page, set and called by its POSTs (what its
# buttons send), refused out of range, and never without its page's token
"$BIN/esview" -w 10 "$job" >"$dir/view" 2>&1 &
view=$!
wait_for 30 grep -q "http://" "$dir/view" || die "esview never served: $(cat "$dir/view")"
url=$(sed -n 's/^esview: job [^ ]* at //p' "$dir/view")
# its data is JSON even where a program publishes NaN and infinities (once
# its watch loop has read the objects: bounded, as the machine's speed says)
odd() { curl -sf "${url}data?shown=100&bins=4" | python3 -c '
import json, sys
d = json.load(sys.stdin)
odd = [m for o in d.get("objects", []) for m in o["members"] if m["name"] == "odd"]
sys.exit(0 if odd and odd[0]["values"] == [None, None] else 1)'; }
wait_for 30 odd || die "esview's data with NaN: $(curl -sf "${url}data?shown=100&bins=4" | grep -o '"objects".*' | head -c 600)"
[ "$(view_post "$url" "set?where=rank%200&obj=sim&field=rate&index=0&value=5")" = asked ] || die "esview: set not asked"
# an index or value esctl would refuse, refused the same way, nothing asked
for bad in "index=-1&value=1" "index=nan&value=1" "index=4.7&value=1" "value=1" "index=0&value=" "index=+0&value=1"; do
	out=$(curl -s -w " %{http_code}" -X POST -H "X-ES-Token: $(curl -sf "$url" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')" \
		-H "Origin: ${url%/}" "${url}set?where=rank%200&obj=sim&field=v&$bad")
	case "$out" in
	*"expected an index in brackets before '='"*" 400"|*"expected a number after '='"*" 400"|*"expected where, obj and field, index and value"*" 400") ;;
	*) die "esview's set with $bad: $out" ;;
	esac
done
out=$(curl -s -w " %{http_code}" -X POST -H "X-ES-Token: $(curl -sf "$url" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')" \
	-H "Origin: ${url%/}" "${url}call?where=rank%200&obj=sim&method=kick&arg=nan")
echo "$out" | tr '\n' ' ' | grep -q "^sim.kick: nan is out of its range .* 400" || die "esview's call with a NaN: $out"
wait_for 30 is "$job" 0 rate 5 || die "esview's set never applied: $(value "$job" 0 rate) $(esctl "$job" changes | grep '^rank 0' | tail -4)"
is "$job" 1 rate 6 || die "esview's set on rank 0 changed rank 1: $(value "$job" 1 rate)"
tok=$(curl -sf "$url" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')
out=$(curl -s -w " %{http_code}" -X POST -H "X-ES-Token: $tok" -H "Origin: ${url%/}" \
	"${url}set?where=rank%200&obj=sim&field=rate&index=0&value=50")
[ "$out" = "sim.rate: 50 is out of its range [0, 10]
 400" ] || die "esview: out of range: $out"
out=$(curl -s -w " %{http_code}" -X POST "${url}set?where=rank%200&obj=sim&field=rate&index=0&value=1")
echo "$out" | grep -q " 403$" || die "esview: a set without the page's token: $out"
[ "$(view_post "$url" "call?where=rank%201&obj=sim&method=kick&arg=9")" = asked ] || die "esview: call not asked"
wait_for 30 sh -c "\"$BIN/esctl\" $job changes | grep -q '^rank 1: by pid [0-9]* uid [0-9]* esview: sim.kick(9) called$'" ||
	die "esview's call not applied: $(esctl "$job" changes | tail -3)"
is "$job" 0 rate 5 || die "a refused or unauthorized set changed rate: $(value "$job" 0 rate)"
if command -v chromium >/dev/null; then
	profile=$(mktemp -d)
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
		--virtual-time-budget=3000 --dump-dom "$url" >"$dir/dom" 2>/dev/null
	rm -rf "$profile"
	grep -q 'class="object" data-where="rank 1" data-name="sim"' "$dir/dom" &&
		grep -q 'class="obj-field" data-name="rate"' "$dir/dom" && grep -q 'id="ox-' "$dir/dom" &&
		grep -q 'class="obj-method" data-name="kick"' "$dir/dom" &&
		grep -q '<li class="change">rank 1: pid [0-9]* uid [0-9]* esview: sim.kick(9) called</li>' "$dir/dom" ||
		die "esview's page: no objects, boxes, buttons or changes: $(grep -o '<div class="panel" id="objpanel">.*' "$dir/dom" | head -c 2000)"
fi
kill $view; wait $view

# through the tuple servers with the job's secret; a wrong secret steers nothing
esctl --servers "$servers" --secret-file "$secret" "$job" set sim.rate=7 | grep -q "applied by 2 of 2" ||
	die "set through the servers"
# who asked: the tuple server's client, as the kernel reported it
esctl "$job" changes | grep -q "^rank 1: by tcp from [0-9.]*\(, uid $(id -u)\)\{0,1\}: sim.rate [0-9.]* -> 7$" ||
	die "a set through the servers not said as the server's client: $(esctl "$job" changes | tail -3)"
esctl -w 2 --servers "$servers" --secret-file "$wrong" "$job" set sim.rate=8 >"$dir/bad" 2>&1 &&
	die "a wrong secret steered the job"
grep -qi "permission denied" "$dir/bad" || die "a wrong secret: unclear error: $(cat "$dir/bad")"
is "$job" 0 rate 7 || die "the wrong secret changed rate: $(value "$job" 0 rate)"

esctl "$job" call sim.stop >/dev/null
wait $app || die "the job failed: $(cat "$dir/job.err")"
app=""
grep -q "^rank 0: rate=7 v=-1,0.5,1,-0.5 mode=0 kicks=1 last_kick=3 .* stopped=1$" "$dir/job.out" &&
	grep -q "^rank 1: rate=7 .* kicks=2 last_kick=9 " "$dir/job.out" ||
	die "what rank 0 ended with: $(cat "$dir/job.out")"
out=$(esctl -w 1 "$job" objects 2>&1) && die "objects of an ended job: $out"
echo "$out" | grep -q "has ended: nothing to steer\|no trace spaces" || die "objects of an ended job: $out"

# Fortran: the same calls from a program built with mpif90
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -j "${job}f" "$BUILD/tests/mpi_objects_f" \
	>"$dir/f.out" 2>"$dir/f.err" &
app=$!
wait_for 60 sh -c "\"$BIN/esctl\" ${job}f objects | grep -c '^rank [01]: fsim  a Fortran simulation' | grep -qx 2" ||
	die "the Fortran objects never showed: $(cat "$dir/f.err")"
esctl "${job}f" objects | grep -q "^    w  double\[3\]  writable in \[-2, 2\]  weights$" || die "Fortran's array"
esctl "${job}f" set fsim.gain=2.5 'fsim.w[2]=-1.5' | grep -q "applied by 2 of 2" || die "Fortran: set"
esctl "${job}f" call fsim.kick 4 | grep -q "applied by 2 of 2" || die "Fortran: call"
refused_f=$(esctl "${job}f" set fsim.steps=1 2>&1); [ $? -eq 2 ] || die "Fortran: a read-only set: $refused_f"
esctl "${job}f" call fsim.stop >/dev/null
wait $app || die "the Fortran job failed: $(cat "$dir/f.err")"
app=""
grep -q "^rank 1: gain= 2.500 w=  0.000  0.000 -1.500 kicks=1 last_kick= 4.000$" "$dir/f.out" ||
	die "what the Fortran rank 1 ended with: $(cat "$dir/f.out")"
echo "objects: C and Fortran objects seen, set, called and ruled; every refusal said"
