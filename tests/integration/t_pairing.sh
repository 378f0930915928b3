#!/bin/sh
# t_pairing.sh - messages are paired by the numbers both ends carry, whatever was not recorded: a job paused and resumed 1,000 times and filtered to [-all, MPI_Send] and back while its messages of known sizes run; OTF2 (read by an independent checker of MPI's order) and the JSON pair no send with another message's receive, and esconvert says what it left out.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itpair$$"
dir=$(mktemp -d)
app="" rec=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	[ -n "$rec" ] && end_job "$rec"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT

"$BIN/esrecord" -w 60 -o "$dir/a" "$job" 2>"$dir/rec.err" &
rec=$!
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job" "$BUILD/tests/mpi_toggle" "$dir" \
	>"$dir/job.out" 2>&1 &
app=$!
wait_for 60 test -e "$dir/running" || die "mpi_toggle did not start: $(cat "$dir/job.out")"
# both ranks steerable, however long a loaded machine takes
wait_for 60 sh -c "\"$BIN/psadm\" show \"$job.r1\" | grep -q \"^  es.ctl \"" || die "rank 1 never made its control element"

# each order applied by both ranks, each at its own next call: the ends of
# a message are recorded by one rank and not the other, again and again
start=$(date +%s)
i=0
while [ $i -lt 1000 ]; do
	"$BIN/esctl" "$job" pause >/dev/null || die "pause $i: not applied"
	"$BIN/esctl" "$job" resume >/dev/null || die "resume $i: not applied"
	i=$((i + 1))
done
i=0
while [ $i -lt 20 ]; do
	"$BIN/esctl" "$job" collect '[-all, MPI_Send]' >/dev/null || die "collect [-all, MPI_Send] $i: not applied"
	sleep 0.1
	"$BIN/esctl" "$job" collect all >/dev/null || die "collect all $i: not applied"
	sleep 0.1
	i=$((i + 1))
done
echo "orders applied in $(($(date +%s) - start)) s"
touch "$dir/stop"
wait $app || die "mpi_toggle failed: $(cat "$dir/job.out")"
app=""
wait $rec || die "esrecord failed: $(cat "$dir/rec.err")"
rec=""
grep -q " 0 discarded" "$dir/rec.err" || die "the recording lost events: $(cat "$dir/rec.err")"
sent=$(cat "$dir"/toggle.r* | awk '{ n += $2 } END { print n }')

# OTF2 holds only the messages whose two ends were recorded, so that its
# readers' pairing (the k-th send on a channel with its k-th receive) is
# ours: an independent checker finds every size as sent
"$BIN/esconvert" --otf2 "$dir/o" "$dir/a" 2>"$dir/conv.err" || die "esconvert: $(cat "$dir/conv.err")"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print failed: $(cat "$dir/p.err")"
python3 "$(dirname "$0")/msg_check.py" <"$dir/p.txt" >"$dir/check" || die "OTF2's messages: $(cat "$dir/check")"
pairs=$(sed -n 's/^messages=\([0-9]*\) .*/\1/p' "$dir/check")
[ "$pairs" -gt 1000 ] && [ "$pairs" -lt "$sent" ] ||
	die "$pairs messages paired of $sent sent: expected many, and fewer than all (the pauses)"
# ... and says what it left out, and why
grep -q "^esconvert: left out of OTF2's messages: [1-9][0-9]* sends and [0-9]* receives without their other end (not recorded: a pause, a collect list" \
	"$dir/conv.err" || die "esconvert did not say what OTF2 lacks: $(cat "$dir/conv.err")"

# the JSON: an arrow per message OTF2 holds, each from a send to a receive
# of its size
"$BIN/esconvert" --json "$dir/t.json" "$dir/a" 2>"$dir/json.err" || die "esconvert --json: $(cat "$dir/json.err")"
grep -q "^esconvert: not drawn: [1-9][0-9]* sends and" "$dir/json.err" || die "the JSON's note: $(cat "$dir/json.err")"
python3 - "$dir/t.json" "$pairs" <<'EOF' || die "the JSON's arrows are wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ns = lambda us: round(us * 1000)  # stamps as written, in whole ns
starts, ends = {}, {}
for e in ev:
    if e.get("ph") == "X":
        k = (e["pid"], e["tid"])
        starts.setdefault(k + (ns(e["ts"]),), []).append(e)
        ends.setdefault(k + (ns(e["ts"]) + ns(e["dur"]),), []).append(e)
flows = {}
for e in ev:
    if e.get("cat") == "message" and e["ph"] in "sf":
        flows.setdefault(e["id"], {})[e["ph"]] = e
bad = checked = 0
for i, f in flows.items():
    s, r = f["s"], f["f"]
    # the arrow leaves where its send began, and reaches a blocking
    # receive 1 ns before it ended (a request's, inside its wait or test)
    sent = [x for x in starts.get((s["pid"], s["tid"], ns(s["ts"])), []) if x["name"] in
            ("MPI_Send", "MPI_Isend", "MPI_Sendrecv")]
    got = [x for x in ends.get((r["pid"], r["tid"], ns(r["ts"]) + 1), []) if x["name"] == "MPI_Recv"]
    if len(sent) != 1:
        print("arrow %s leaves no send: %r" % (i, s), file=sys.stderr)
        bad += 1
    elif got:
        checked += 1
        if sent[0]["args"]["bytes"] != got[0]["args"]["bytes"]:
            print("arrow %s joins %r to %r" % (i, sent[0], got[0]), file=sys.stderr)
            bad += 1
if len(flows) != int(sys.argv[2]) or bad or not checked:
    sys.exit("%d arrows (OTF2: %s messages), %d wrong, %d checked by size" % (len(flows), sys.argv[2], bad, checked))
EOF
echo "paired $pairs of $sent messages after 1000 pauses and 20 filters"
