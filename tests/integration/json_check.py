#!/usr/bin/env python3
"""json_check.py FILE SLICES MESSAGES: a trace-event JSON file as Perfetto would read it.

Checks that it parses, has SLICES complete events and MESSAGES message flows,
that every flow has both ends on existing tracks, that no arrow points back
in time (a message's receive before its send, a collective's end before
the call it comes from began), and that slices on each
track nest (none ends inside another it does not contain)."""
import json
import sys

path, want_slices, want_msgs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path) as f:
    d = json.load(f)
ev = d["traceEvents"]
tracks = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
x = [e for e in ev if e["ph"] == "X"]
bad = []
if len(x) != want_slices:
    bad.append("%d slices, expected %d" % (len(x), want_slices))
ends, at = {}, {}
for e in ev:
    if e["ph"] in ("s", "f"):
        if (e["pid"], e["tid"]) not in tracks:
            bad.append("a flow on no track: %r" % e)
        ends.setdefault((e["cat"], e["id"]), []).append(e["ph"])
        at[(e["cat"], e["id"], e["ph"])] = e["ts"]
for k, v in ends.items():
    if sorted(v) != ["f", "s"]:
        bad.append("flow %r has ends %r" % (k, v))
    elif at[k + ("f",)] < at[k + ("s",)]:  # a message's, a collective's: never back in time
        bad.append("%s %r arrives at %s, before it left at %s" % (k[0], k[1], at[k + ("f",)], at[k + ("s",)]))
msgs = sum(1 for k in ends if k[0] == "message")
if msgs != want_msgs:
    bad.append("%d message flows, expected %d" % (msgs, want_msgs))
by_track = {}
for e in x:
    if (e["pid"], e["tid"]) not in tracks:
        bad.append("a slice on no track: %r" % e)
    # in whole ns, as they were written: no float sums
    ts, dur = round(e["ts"] * 1000), round(e["dur"] * 1000)
    by_track.setdefault((e["pid"], e["tid"]), []).append((ts, -dur, ts + dur))
for t, s in by_track.items():
    s.sort()
    stack = []
    for ts, _, end in s:
        while stack and stack[-1] <= ts:
            stack.pop()
        if stack and end > stack[-1]:
            bad.append("track %r: a slice from %s to %s ends after the one it starts in" % (t, ts, end))
        stack.append(end)
if bad:
    print("\n".join(bad[:10]))
    sys.exit(1)
print("%s: %d slices on %d tracks, %d message flows, %d flows in all" % (path, len(x), len(tracks), msgs, len(ends)))
