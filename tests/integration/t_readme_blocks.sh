#!/bin/sh
# t_readme_blocks.sh - the README's and the user guide's command blocks run as written (readme_blocks.py: only paths, job names and root's mpirun flags made this machine's), and do what their comments say: "Quick start", "Watching an MPI program", "Keeping a run", "Watching a job live", "Why time is lost", "Changing what a running job records", "Steering a running program", "Running the wind tunnel", "Open MPI or MPICH", "Across hosts", the black box.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
BIN=$(cd "$BIN" && pwd) BUILD=$(cd "$BUILD" && pwd)
unset ES_KEEP # as a user runs them: the default keep policy, which the blocks count on
here=$(cd "$(dirname "$0")" && pwd)
pre="itrb$$"
dir=$(mktemp -d)
tun="" hb="" rule=""
cleanup() {
	[ -n "$tun" ] && end_job "$tun"
	[ -n "$hb" ] && kill "$hb" 2>/dev/null && wait "$hb" 2>/dev/null
	[ -n "$rule" ] && kill "$rule" 2>/dev/null && wait "$rule" 2>/dev/null
	rm_segments "$pre"
	rm -rf "$dir"
}
trap cleanup EXIT
# the README and the user guide, whose sections the blocks are under
cat "$here/../../README.md" "$here/../../docs/guide.md" >"$dir/docs.md"
block() { # SECTION [WORD=PATH...]: its first sh block, as this machine runs it
	sec=$1
	shift
	python3 "$here/readme_blocks.py" "$dir/docs.md" "$sec" "$BIN" "$BUILD/tests/ring_demo 1" "$pre" "$@" >"$dir/block" ||
		die "the README has no block under '$1'"
	cat "$dir/block"
}
cd "$dir" || die "no $dir"

# every program a block runs is there by the path it gives, or on PATH (a shell's own: wait, umask)
cat "$here/../../README.md" "$here"/../../docs/*.md >"$dir/every.md"
for p in $(python3 "$here/readme_blocks.py" --programs "$dir/every.md"); do
	case $p in
	build/release/bin/*) [ -x "$BIN/${p#build/release/bin/}" ] || die "the README runs $p, which the build has not" ;;
	wait | umask) ;;
	*) command -v "$p" >/dev/null || die "the README runs $p, which is not on PATH" ;;
	esac
done

# Watching an MPI program: the job kept (--keep always), listed, shown, removed by its name
block "Watching an MPI program" >"$dir/watch.sh"
sh -e "$dir/watch.sh" >"$dir/watch.out" 2>&1 || die "the block failed: $(cat "$dir/watch.out")"
for r in 0 1 2 3; do
	grep -q "^${pre}run1.r$r " "$dir/watch.out" || die "psadm list did not list ${pre}run1.r$r: $(cat "$dir/watch.out")"
	grep -q "^removed ${pre}run1.r$r$" "$dir/watch.out" || die "psadm rm ${pre}run1 left r$r: $(cat "$dir/watch.out")"
done
grep -q "^  mpi.thread0 " "$dir/watch.out" || die "psadm show gave no trace element: $(cat "$dir/watch.out")"
"$BIN/psadm" list | grep -q "^${pre}run1\." && die "the job's segments are still there after psadm rm"

# Quick start: the recorder and heartbeat waiting, the job, then the archive read
block "Quick start" >"$dir/quick.sh"
sh -e "$dir/quick.sh" >"$dir/quick.out" 2>&1 || die "the block failed: $(cat "$dir/quick.out")"
grep -q "^esrecord: [0-9]* events written to ${pre}run1.es, 0 discarded" "$dir/quick.out" ||
	die "esrecord did not record the job whole: $(cat "$dir/quick.out")"
# heartbeat attaches the moment the job's first rank has its trace space
# and takes in the others as they come (its "now watching"): all 4 either way
grep -q "^heartbeat: watching [1-4] threads of job '${pre}run1'" "$dir/quick.out" &&
	grep -q "^heartbeat: \(now \)\?watching 4 threads" "$dir/quick.out" || die "heartbeat: $(cat "$dir/quick.out")"
otf2-print "${pre}run1.otf2/traces.otf2" >/dev/null 2>&1 || die "no OTF2 at ${pre}run1.otf2/traces.otf2"
grep -q "^@--- " "$dir/quick.out" || die "esprofile printed no page: $(tail "$dir/quick.out")"
rm -rf "${pre}run1.es" "${pre}run1.otf2"

# Keeping a run: every output where the comments say, none written over another
block "Keeping a run: OTF2, Perfetto, a profile, pictures" >"$dir/keep.sh"
sh -e "$dir/keep.sh" >"$dir/keep.out" 2>&1 || die "the block failed: $(cat "$dir/keep.out")"
otf2-print "${pre}run1.otf2/traces.otf2" >/dev/null 2>&1 || die "no OTF2 at ${pre}run1.otf2/traces.otf2"
python3 -c 'import json, sys; assert "traceEvents" in json.load(open(sys.argv[1]))' "${pre}run1.json" ||
	die "${pre}run1.json is not Perfetto's JSON"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert "wait_states" in d and d["events"] > 0' \
	"${pre}run1.profile.json" || die "${pre}run1.profile.json is not esprofile's JSON"
[ -s "${pre}run1.png.d/timeline.png" ] && [ -s "${pre}run1.png.d/matrix.png" ] || die "no pictures in ${pre}run1.png.d"
grep -q "^@--- " "$dir/keep.out" || die "esprofile printed no page: $(tail "$dir/keep.out")"

# Watching a job live: each monitor of the block at once, in a terminal of its own, on a job
# started after them (they wait for it); each says what the comments say, esview until stopped
block "Watching a job live" >"$dir/live.sh"
k=0
pids=""
while read -r line; do
	k=$((k + 1))
	echo "exec $line" >"$dir/live$k.sh"
	sh "$dir/live$k.sh" >"$dir/live$k.out" 2>&1 &
	pids="$pids $!"
done <"$dir/live.sh"
[ "$k" -eq 5 ] || die "the block has $k monitors, this test knows 5"
esv=$!
wait_for 30 grep -q "^esview: job ${pre}job at http" "$dir/live5.out" || die "esview: $(cat "$dir/live5.out")"
mpirun --oversubscribe --allow-run-as-root -np 4 "$BIN/esrun" -q -j "${pre}job" "$BUILD/tests/ring_demo" 3 >/dev/null 2>&1 ||
	die "ring_demo failed"
k=0
for p in $pids; do
	k=$((k + 1))
	[ "$p" = "$esv" ] && continue
	wait "$p"
	st=$?
	# heartbeat's status 1: a thread stalled, as ring_demo's does by design
	[ "$st" -eq 0 ] || { [ "$st" -eq 1 ] && grep -q "heartbeat" "$dir/live$k.sh"; } ||
		die "the block's line $k ($(cat "$dir/live$k.sh")) ended $st: $(cat "$dir/live$k.out")"
done
kill "$esv"; wait "$esv" 2>/dev/null
grep -q "threads: .* progressing" "$dir/live1.out" || die "heartbeat: $(cat "$dir/live1.out")"
grep -q "stall: rank" "$dir/live1.out" || die "heartbeat did not name the stuck rank: $(cat "$dir/live1.out")"
[ -s wait.dot ] && [ -s wait.png ] || die "heartbeat --graph made no wait.dot and wait.png"
[ -s ev.txt ] && grep -q "events written, 0 discarded" "$dir/live3.out" || die "geteventmon: $(cat "$dir/live3.out")"
grep -q "MPI_Allreduce .* calls, latency" "$dir/live4.out" || die "colopmon: $(cat "$dir/live4.out")"

# Why time is lost: the readers on the archive the block before made, then the three live
# monitors at once on a job whose rank 1 sends 300 ms late (mpi_waits), esview until stopped
block "Why time is lost: wait states, their causes, the critical path" >"$dir/why.sh"
head -3 "$dir/why.sh" >"$dir/why1.sh"
sh -e "$dir/why1.sh" >"$dir/why1.out" 2>&1 || die "the block's readers failed: $(tail "$dir/why1.out")"
grep -q "Wait states" "$dir/why1.out" && grep -q '"wait_states"' "$dir/why1.out" && [ -s o/traces.otf2 ] ||
	die "the readers did not give the wait states: $(head -c 600 "$dir/why1.out")"
k=0
pids=""
tail -n +4 "$dir/why.sh" >"$dir/why2.sh"
while read -r line; do
	k=$((k + 1))
	echo "exec $line" >"$dir/why2.$k.sh"
	sh "$dir/why2.$k.sh" >"$dir/why2.$k.out" 2>&1 &
	pids="$pids $!"
done <"$dir/why2.sh"
[ "$k" -eq 3 ] || die "the block has $k monitors, this test knows 3"
esv=$!
wait_for 30 grep -q "^esview: job ${pre}job at http" "$dir/why2.3.out" || die "esview: $(cat "$dir/why2.3.out")"
mkdir -p "$dir/truth"
mpirun --oversubscribe --allow-run-as-root -np 3 "$BIN/esrun" -q -j "${pre}job" "$BUILD/tests/mpi_waits" 300 "$dir/truth" \
	>/dev/null 2>&1 || die "mpi_waits failed"
for p in $pids; do
	[ "$p" = "$esv" ] && continue
	wait "$p" || die "a monitor of the block failed: $(cat "$dir"/why2.*.out)"
done
kill "$esv"; wait "$esv" 2>/dev/null
grep -q "^  wait state Late Sender " "$dir/why2.1.out" || die "colopmon --waits: $(tail "$dir/why2.1.out")"
grep -q "snapshot of job ${pre}job in ${pre}dir" "$dir/why2.2.out" || die "colopmon --wait-above: $(cat "$dir/why2.2.out")"
grep -q "^esview: snapshot of job ${pre}job" "$dir/why2.3.out" || die "esview --trigger: $(cat "$dir/why2.3.out")"
rm_segments "${pre}job"

# Changing what a running job records, and steering it: each esctl line on a running program
# (mpi_objects, whose object is the README's sample's tunnel); the line through another host's
# servers is the across-hosts test's (t_esctl), not this host's
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "${pre}run1" "$BUILD/tests/mpi_objects" "$dir/none" \
	tunnel >"$dir/obj.app" 2>&1 &
tun=$!
wait_for 60 sh -c "\"$BIN/esctl\" ${pre}run1 objects | grep -c '^rank [01]: tunnel' | grep -qx 2" || die "mpi_objects: no object"
for sec in "Changing what a running job records" "Steering a running program: objects, rules, handlers"; do
	block "$sec" | grep -v -- "--servers" >"$dir/ctl.sh"
	while read -r line; do
		echo "exec $line" >"$dir/one.sh"
		case $line in
		*" rule '"*) # a monitor's rule runs in esctl until the job ends: a terminal of its own
			sh "$dir/one.sh" >"$dir/rule.out" 2>&1 &
			rule=$!
			wait_for 30 grep -q "^esctl: rule runs here: " "$dir/rule.out" || die "the rule never ran: $(cat "$dir/rule.out")" ;;
		*) sh "$dir/one.sh" >>"$dir/ctl.out" 2>&1 || die "'$line' failed: $(tail -5 "$dir/ctl.out")" ;;
		esac
	done <"$dir/ctl.sh"
done
"$BIN/esctl" "${pre}run1" call tunnel.stop >/dev/null
wait "$tun" || die "mpi_objects under the README's esctl lines failed: $(cat "$dir/obj.app")"
tun=""
wait "$rule" || die "the monitor's rule did not end with the job: $(cat "$dir/rule.out")"
for want in "esctl: collect \[-all, MPI_Allreduce\]: applied by 2 of 2 ranks" "^rank 0: records \[all\] (order" \
	": tunnel.inflow 0.2 -> 0.6" "rule 1" "^rank 0: tunnel  a simulation to steer"; do
	grep -q "$want" "$dir/ctl.out" || die "the esctl lines did not say '$want': $(cat "$dir/ctl.out")"
done
grep -q "rank 0: .*v=0,0.5,0,-0.5" "$dir/obj.app" || die "the array set did not reach the program: $(cat "$dir/obj.app")"

# Running the wind tunnel: heartbeat "in another terminal, while it runs", esctl on its object;
# long enough for them (-t 400 is over in a second), then ended
block "Running the wind tunnel" | sed 's/ -t 400 / -t 100000000 /' >"$dir/wt.sh"
(echo "exec \\"; sed -n 1p "$dir/wt.sh") >"$dir/wt1.sh" # its pid mpirun's, for end_job
sh "$dir/wt1.sh" >"$dir/wt.out" 2>&1 &
tun=$!
(echo "exec \\"; sed -n 2p "$dir/wt.sh") >"$dir/wt2.sh"
sh "$dir/wt2.sh" >"$dir/hb.out" 2>&1 &
hb=$!
sed -n '3,$p' "$dir/wt.sh" >"$dir/wt3.sh"
# (its object comes with its first totals: esctl asked before then finds none, and says so)
wait_for 60 sh -c "\"$BIN/esctl\" ${pre}tunnel objects | grep -q ': tunnel  the wind tunnel'" || die "the tunnel never exposed its object"
sh -e "$dir/wt3.sh" >"$dir/esctl.out" 2>&1 || die "esctl on the wind tunnel: $(cat "$dir/esctl.out")"
end_job "$tun"
tun=""
wait "$hb"
hb=""
grep -q "^    inflow  double  writable in \[0, 1\]" "$dir/esctl.out" || die "esctl objects showed no inflow: $(cat "$dir/esctl.out")"
grep -q ": tunnel.inflow 0.199996948242188 -> 0.6" "$dir/esctl.out" ||
	die "esctl set did not say the README's old value: $(cat "$dir/esctl.out")"
grep -q "threads" "$dir/hb.out" || die "heartbeat said nothing of the tunnel's threads: $(cat "$dir/hb.out")"
# Open MPI or MPICH: each line under its launcher, esrun choosing the collector (a script's named);
# every rank traced
if [ -f "$BUILD/mpich/stamp" ]; then
	printf '#!/bin/sh\nexec "%s" 1\n' "$BUILD/mpich/tests/ring_demo" >"$dir/run.sh"
	chmod +x "$dir/run.sh"
	block "Open MPI or MPICH" "./app_built_with_mpicc=$BUILD/tests/ring_demo 1" \
		"./app_built_with_mpicc.mpich=$BUILD/mpich/tests/ring_demo 1" "./run.sh=$dir/run.sh" >"$dir/mpis.sh"
	[ "$(wc -l <"$dir/mpis.sh")" -eq 3 ] || die "the block has $(wc -l <"$dir/mpis.sh") lines, this test knows 3"
	sh -e "$dir/mpis.sh" >"$dir/mpis.out" 2>&1 || die "the block failed: $(cat "$dir/mpis.out")"
	[ "$(grep -c "^escollect: job ring_demo-[0-9]*: 4 ranks traced" "$dir/mpis.out")" -eq 3 ] ||
		die "not every line traced its 4 ranks: $(cat "$dir/mpis.out")"
	blocks=11
else
	echo "no MPICH build: 'Open MPI or MPICH' not run"
	blocks=10
fi

# Across hosts: the secret made as the block makes it (in a HOME of the test's: a user's own
# is never written over), the wind tunnel on two pathmap hosts listening on every address,
# heartbeat through the servers it wrote; the tunnel's own line in the background (its `&`),
# heartbeat once the servers are written (a reader types it after), the tunnel ended after
# heartbeat has watched it progress
block "Across hosts" >"$dir/hosts.sh"
[ "$(wc -l <"$dir/hosts.sh")" -eq 4 ] || die "the block has $(wc -l <"$dir/hosts.sh") lines, this test knows 4"
HOME="$dir" sh -e -c "$(sed -n 1p "$dir/hosts.sh")" || die "the secret was not made"
[ "$(stat -c %a "$dir/.es-secret")" = 600 ] || die "the secret is not its owner's alone"
(echo "exec \\"; sed -n 2,3p "$dir/hosts.sh" | sed 's/ &$//') >"$dir/hosts1.sh"
HOME="$dir" sh "$dir/hosts1.sh" >"$dir/hosts1.out" 2>&1 &
tun=$!
wait_for 60 test -s servers.txt || die "no servers.txt: $(cat "$dir/hosts1.out")"
(echo "exec \\"; sed -n 4p "$dir/hosts.sh") >"$dir/hosts2.sh"
HOME="$dir" sh "$dir/hosts2.sh" >"$dir/hosts2.out" 2>&1 &
hb=$!
wait_for 60 grep -q "progressing" "$dir/hosts2.out" || die "heartbeat through the servers: $(cat "$dir/hosts2.out")"
end_job "$tun"
tun=""
wait "$hb"
hb=""
grep -q "^heartbeat: watching [0-9]* threads of job '${pre}tunnel'" "$dir/hosts2.out" ||
	die "heartbeat did not watch the tunnel's threads: $(cat "$dir/hosts2.out")"
rm_segments "${pre}tunnel"

# The black box: on a job that died (a rank's SIGSEGV), psadm lists it died, esrecord --remains
# keeps what its elements hold, esprofile reads that; heartbeat and colopmon, whose triggers are
# for a job that hangs (t_blackbox's), end at once saying the job has ended
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "${pre}run1" "$BUILD/tests/mpi_crash" segv 10 \
	>"$dir/crash.out" 2>&1 && die "mpi_crash segv did not fail"
block "What a job did before it crashed or hung: the black box" >"$dir/bb.sh"
sh -e "$dir/bb.sh" >"$dir/bb.out" 2>&1 || die "the block failed: $(cat "$dir/bb.out")"
grep -q "^job ${pre}run1: died: ${pre}run1.r[01] (pid [0-9]*).* gone without closing" "$dir/bb.out" ||
	die "psadm list did not say the job died: $(cat "$dir/bb.out")"
grep -q "^@--- " "$dir/bb.out" && [ -d "${pre}run1.ar" ] || die "no profile of the remains: $(cat "$dir/bb.out")"
grep -q "^heartbeat: summary after [0-9]* periods (the job ended)" "$dir/bb.out" &&
	grep -q "^colopmon: summary (the job ended)" "$dir/bb.out" || die "the triggers' monitors: $(cat "$dir/bb.out")"
rm_segments "${pre}run1"
echo "t_readme_blocks: $blocks blocks run as written"
