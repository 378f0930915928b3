#!/bin/sh
# t_trust.sh - nobody's code but the owner's: root's monitors refuse another user's pathmap and handler library (and one in a directory others may write), a relative handler is found beside its pathmap whatever the working directory, and the application refuses another user's ES_PATHMAP.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "t_trust plays another user (setpriv, chown): run as root, as CI does; skipped"; exit 0; }
BUILD=$(cd "$BUILD" && pwd) BIN=$(cd "$BIN" && pwd) # it runs a monitor from another directory
job="ittru$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"
H="$BUILD/lib/handlers"
other() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; } # user nobody
# nobody's directory, with nobody's pathmap and nobody's copy of a handler
mkdir "$dir/x" "$dir/mine" "$dir/open"
chown 65534:65534 "$dir/x"
other cp "$H/count.so" "$dir/x/count.so"
cp "$H/count.so" "$dir/mine/count.so"
cp "$H/count.so" "$dir/open/count.so"
chmod 777 "$dir/open" # anyone may put a file here: nothing here is trusted
map() { # map FILE HANDLER: a pathmap with scope beat holding the handler
	printf 'pathmap: 1\nname: %s\nscopes:\n  - { name: beat, view: node, handler: %s }\n' "$job" "$2" >"$1"
}
other sh -c "$(printf 'printf "pathmap: 1\\nname: %s\\nscopes:\\n  - { name: beat, view: node, handler: %s }\\n" >%s' \
	"$job" "$dir/mine/count.so" "$dir/x/map.yaml")"
map "$dir/mine/theirs.yaml" "$dir/x/count.so"
map "$dir/mine/open.yaml" "$dir/open/count.so"
map "$dir/mine/rel.yaml" count.so

# refused before anything is watched, each saying whose file it is
expect() { # expect WHAT STATUS PATTERN COMMAND...: its status and a line matching PATTERN
	what=$1 want=$2 pat=$3; shift 3
	out=$("$@" 2>&1); st=$?
	[ "$st" = "$want" ] || die "$what: status $st, not $want: $out"
	echo "$out" | grep -q "$pat" || die "$what: expected '$pat': $out"
}
expect "nobody's pathmap" 2 "x/map.yaml is owned by uid 65534, not by you (uid 0) or root: not read" \
	"$BIN/heartbeat" -w 1 --pathmap "$dir/x/map.yaml" --scope beat "$job"
expect "nobody's pathmap, esrun" 2 "x/map.yaml is owned by uid 65534" \
	"$BIN/esrun" --pathmap "$dir/x/map.yaml" true
expect "nobody's handler" 2 "x/count.so is owned by uid 65534, not by you (uid 0) or root: not loaded" \
	"$BIN/geteventmon" -w 1 --handler "$dir/x/count.so" "$job"
expect "a handler others may replace" 2 "its directory $dir/open is writable by anyone (mode 0777)" \
	"$BIN/geteventmon" -w 1 --handler "$dir/open/count.so" "$job"
chmod 666 "$dir/mine/count.so"
expect "a handler others may write" 2 "mine/count.so is writable by anyone (mode 0666)" \
	"$BIN/colopmon" -w 1 --handler "$dir/mine/count.so" "$job"
chmod 644 "$dir/mine/count.so"

# a running job: the scopes' handlers are loaded when the job is found
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -j "$job" "$BUILD/tests/ring_demo" 60 >/dev/null 2>"$dir/job.err" &
app=$!
wait_for 30 sh -c "'$BIN/psadm' list | grep -q '^$job.r1'" || die "the job never started: $(cat "$dir/job.err")"
expect "a root pathmap naming nobody's handler" 2 "the scope's handler $dir/x/count.so is owned by uid 65534" \
	"$BIN/heartbeat" -w 10 --pathmap "$dir/mine/theirs.yaml" --scope beat "$job"
expect "a pathmap's handler others may replace" 2 "its directory $dir/open is writable by anyone" \
	"$BIN/heartbeat" -w 10 --pathmap "$dir/mine/open.yaml" --scope beat "$job"
# relative: beside the pathmap, not in the working directory (nobody's,
# holding nobody's count.so, which would be refused)
(cd "$dir/x" && timeout -s INT 3 "$BIN/heartbeat" -q -w 10 --pathmap ../mine/rel.yaml --scope beat "$job" \
	>/dev/null 2>"$dir/rel.err")
grep -q "^heartbeat: the scope's handler count ($dir/mine/count.so)" "$dir/rel.err" ||
	die "the relative handler was not the pathmap's neighbour: $(cat "$dir/rel.err")"
# names nobody else can take: nobody makes the names a monitor's own
# segments would once have had (JOB-handlers-PID, JOB.scopePID) for the
# next 400 pids, and some of today's form; a monitor with a handler and
# one whose scope runs in a helper process start and answer all the same
last=$(cat /proc/sys/kernel/ns_last_pid)
other sh -c "for p in \$(seq $last $((last + 400))); do : >/dev/shm/pastset.$job-handlers-\$p; \
	: >/dev/shm/pastset.$job.scope\$p; : >/dev/shm/pastset.$job-scope-\$p; done"
printf 'pathmap: 1\nname: %s\nscopes:\n  - { name: p, view: node, runs: process }\n' "$job" >"$dir/mine/proc.yaml"
"$BIN/geteventmon" -o /dev/null -w 10 --handler "$dir/mine/count.so" "$job" 2>"$dir/gem.err" &
gem=$!
wait_for 30 sh -c "'$BIN/esctl' '$job' query count | grep -q answered" ||
	die "a monitor with a handler, its old names squatted: $(cat "$dir/gem.err"); $("$BIN/esctl" "$job" query count 2>&1)"
kill -INT $gem; wait $gem
timeout -s INT 3 "$BIN/heartbeat" -w 10 --pathmap "$dir/mine/proc.yaml" --scope p "$job" >"$dir/proc.out" 2>&1
grep -q "rank0.thread0" "$dir/proc.out" || die "a process scope, its old names squatted: $(cat "$dir/proc.out")"
rm -f /dev/shm/pastset.$job-handlers-* /dev/shm/pastset.$job.scope* /dev/shm/pastset.$job-scope-*
end_job "$app"
app=""

# the application: nobody's ES_PATHMAP is not taken, and it runs unmonitored
err=$(mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$BUILD/lib/libescollect.so" -x ES_JOB="$job.p" \
	-x ES_PATHMAP="$dir/x/map.yaml" "$BUILD/tests/mpi_calls" 2>&1 >/dev/null) || die "the program failed: $err"
echo "$err" | grep -q "x/map.yaml is owned by uid 65534" || die "ES_PATHMAP of nobody's not refused: $err"
echo "$err" | grep -q "running unmonitored" || die "does not say it runs unmonitored: $err"
"$BIN/psadm" list | grep -q "^$job.p" && die "segments made despite nobody's pathmap"
echo "t_trust: passed"
