#!/usr/bin/env python3
# waits_check.py - esprofile --json's wait states against what mpi_waits(_f) measured on its own clock: each wait where the delay put it, within 5%, and none anywhere else.
#
#   waits_check.py PROFILE.json TRUTH_FILE... [--file NAME]
#
# Each truth line is "STEP RANK ENTER_NS LINE[/OTHER]": when the rank entered its
# key call of the step (its clock, CLOCK_MONOTONIC or MPI_Wtime, not the
# collector's) and that call's line (OTHER: a line the compiler's line table
# may give the call instead).  The k-th line of a step on each rank
# is one instance; the waits are Scalasca's definitions applied to those
# enters (waitstates.h).  Every wait-state row of the profile at NAME must
# be one of them (completions aside: they are not waits for a delay), and
# each of them must be in the profile within 5% (and 0.5 ms, for those the
# scheduler made near 0).
import json, sys
from collections import defaultdict

args = sys.argv[1:]
name = None
balanced = "--balanced" in args
if balanced:
    args.remove("--balanced")
delay = 0.0  # --delay MS: the delay each step injected (the least: a sleep is never shorter)
if "--delay" in args:
    i = args.index("--delay")
    delay = float(args[i + 1]) / 1e3
    del args[i:i + 2]
if "--file" in args:
    i = args.index("--file")
    name = args[i + 1]
    del args[i:i + 2]
prof = json.load(open(args[0]))
inst = defaultdict(dict)   # (step, k) -> rank -> (enter_ns, line, leave_ns or None)
seen = defaultdict(int)
other = {}                 # (rank, a line the compiler may give) -> the call's own
held = defaultdict(float)  # (rank, line) -> seconds its calls there lasted, stamped around them
sync_left = defaultdict(list)  # rank -> when it left each sync barrier, by its clock
for path in args[1:]:
    for ln in open(path):
        f = ln.split()
        step, rank, t, line = f[:4]
        leave = float(f[4]) if len(f) > 4 else None
        rank = int(rank)
        if "/" in line:
            line, alt = line.split("/")
            other[(rank, int(alt))] = int(line)
        k = seen[(step, rank)]
        seen[(step, rank)] += 1
        inst[(step, k)][rank] = (float(t), int(line), leave)
        if step == "sync" and leave is not None:
            sync_left[rank].append(leave)
        if leave is not None:  # the call's time, by the program's stamps around it
            held[(rank, int(line))] += (leave - float(t)) / 1e9

want = defaultdict(float)  # (pattern, rank, line) -> seconds
noise = set()              # rows the scheduler made: the sync barriers' (and a balanced run's, --balanced)
cause = defaultdict(float) # rank -> seconds of others' waits its phase "delay" caused
cause_lo = defaultdict(float)  # ... the least of them the profile must charge to that phase (share())
delayed = set()            # the step instances a delay was injected in
current = None

want_by = {}               # (pattern, rank, line) -> the ranks whose delay may have made it
moved = []                 # (key, seconds, by, share by rank): a wait whose cause the profile may give to another of want_by's
bounds = defaultdict(lambda: [0.0, 0.0])  # the scheduler's rows: (pattern, rank, line) -> [least, most] seconds

def share(r, at):
    """The least part of a wait rank r caused that its phase "delay" must be charged with, r's
    late call entered at `at`.  Scalasca's delay cost shares a wait among what the delayer did
    longer than the waiter since their last synchronization; the delay lasted --delay at least,
    and what else r did there (the scheduler holding it outside the phase, on loaded cores) is
    the rest of its time since it left the sync barrier."""
    left = [x for x in sync_left[r] if x < at]
    span = at - max(left) if left else 0.0
    return min(1.0, delay * 1e9 / span) if delay and span > 0 else 1.0

def add(pattern, rank, line, ns, by=None, could=None, at=None):
    if ns > 0:
        key = (pattern, rank, line)
        want[key] += ns / 1e9
        if by is not None and ns > 5e7:
            want_by[key] = could or {by}
        if by is not None and pattern not in ("late_sender_wo", "lswo_different"):
            at = at or {r: v[0] for r, v in inst[current].items()}
            lo = {r: share(r, at[r]) if r in at else 1.0 for r in (could or {by})}
            cause[by] += ns / 1e9
            cause_lo[by] += ns / 1e9 * lo[by]
            delayed.add(current)
            if could and len(could) > 1:
                moved.append((key, ns / 1e9, by, lo))

def could_be_last(e, ranks):
    """The ranks of e that may have entered their call last by the collector's clock: its
    stamp lies between the program's stamps around the call, so j may be last unless it
    left before another entered.  Two ranks delayed alike (reduce's senders) tie, and the
    scheduler, not the program, decides which entered MPI last."""
    t = {r: e[r][0] for r in ranks}
    return {j for j in ranks
            if e[j][2] is None and t[j] == max(t.values())
            or e[j][2] is not None and e[j][2] >= max((t[i] for i in ranks if i != j), default=0.0)}

for (step, k), e in sorted(inst.items()):
    current = (step, k)
    t = {r: v[0] for r, v in e.items()}
    line = {r: v[1] for r, v in e.items()}
    last = max(t, key=lambda r: t[r])
    if step == "sync":  # the scheduler's waits: caused by no phase of the program's
        leave = {r: v[2] for r, v in e.items()}
        for r in t:
            key = ("wait_barrier", r, line[r])
            noise.add(key)
            if all(x is not None for x in leave.values()):
                # each rank's enter as the collector stamped it lies between the program's stamp
                # before its call and the one after: the wait lies between these, whatever the
                # scheduler did between the two stamps (a time slice, on two loaded cores)
                bounds[key][0] += max(0.0, max(t.values()) - leave[r]) / 1e9
                bounds[key][1] += max(0.0, max(leave.values()) - t[r]) / 1e9
            else:
                add("wait_barrier", r, line[r], t[last] - t[r])
    elif step in ("barrier", "allreduce"):
        pat = "wait_nxn" if step == "allreduce" else "wait_barrier"
        for r in t:
            add(pat, r, line[r], t[last] - t[r], last, could_be_last(e, [i for i in t if i != r]))
    elif step in ("late_sender", "late_sender_wait"):
        add("late_sender", 0, line[0], t[1] - t[0], 1)
    elif step == "wrong_order":  # rank 0 receives rank 1's message, then rank 2's (wrong_order2)
        t2, l2 = inst[("wrong_order2", k)][0][:2]
        ls1 = t[1] - t[0]
        add("late_sender", 0, line[0], ls1, 1)
        add("late_sender", 0, l2, t[2] - t2, 2)
        if ls1 > 0 and t[2] < t[1]:  # rank 2's was there to receive while rank 0 waited for rank 1's
            add("late_sender_wo", 0, line[0], ls1)
            add("lswo_different", 0, line[0], ls1)
    elif step == "wrong_order2":
        pass
    elif step == "late_receiver":
        add("late_receiver", 0, line[0], t[1] - t[0], 1)
    elif step in ("bcast", "ibcast"):
        for r in t:
            if r != 0:
                add("late_broadcast", r, line[r], t[0] - t[r], 0)
    elif step == "reduce":
        add("early_reduce", 0, line[0], t[last] - t[0], last, could_be_last(e, [i for i in t if i != 0]))
    elif step == "scan":
        for r in t:
            j = max((j for j in t if j <= r), key=lambda j: t[j])
            add("early_scan", r, line[r], t[j] - t[r], j, could_be_last(e, [i for i in t if i < r]))
    elif step.endswith("_start"):  # a one-sided epoch: origin 0, target 1 (mpi_waits.c's epoch())
        ep = step[:-len("_start")]
        s0, sl, sL = e[0]
        c0, cl, cL = inst[(ep + "_complete", k)][0]
        p = inst[(ep + "_post", k)][1][0]
        w0, wl, wL = inst[(ep + "_wait", k)][1]
        # the delay injected is the cause of its own pattern only
        lp_by, ew_by = (1, None) if ep == "late_post" else (None, 0)
        if c0 < p < cL:  # Late Post, Scalasca's rule: in the complete if the post fell in it, else the start
            add("late_post", 0, cl, p - c0, lp_by, at={1: p})
        elif s0 < p < sL:
            add("late_post", 0, sl, p - s0, lp_by, at={1: p})
        add("early_wait", 1, wl, min(c0, wL) - w0, ew_by, at={0: c0})
    elif step.endswith(("_post", "_wait", "_complete")):
        pass
    else:
        sys.exit("waits_check: unknown step %s" % step)

got = defaultdict(float)
got_by = {}
for w in prof["wait_states"]:
    if name and not w["file"].endswith(name):
        continue
    if w["pattern"].endswith("_completion"):
        continue
    key = (w["pattern"], w["rank"], other.get((w["rank"], w["line"]), w["line"]))
    got[key] += w["seconds"]
    got_by[key] = w["caused_by"]

bad = []
if balanced:
    # No delay: every wait is the scheduler's, and which rank it stopped between the
    # program's stamp and the collector's no test can say.  What holds whatever it did:
    # a wait lies within its call, so no row exceeds the time its calls lasted, and none
    # stands where the program made no key call.
    for key, g in sorted(got.items()):
        # (a line the program did not stamp around: the old slack of a time slice)
        room = held.get((key[1], key[2]))
        room = room + 0.0005 if room is not None else 0.003
        if g > room:
            bad.append("%s rank %d line %d: %.4f s in the profile, longer than its calls lasted (%.4f s)"
                       % (key + (g, room)))
    want.clear(), bounds.clear(), want_by.clear()
for key in [] if balanced else sorted(set(want) | set(got) | set(bounds)):
    g, x = got.get(key, 0.0), want.get(key, 0.0)
    if key in bounds and key not in want:
        lo, hi = bounds[key]
        if not lo - 0.0005 <= g <= hi + 0.0005:
            bad.append("%s rank %d line %d: %.4f s in the profile, between %.4f and %.4f s by the program's clock"
                       % (key + (g, lo, hi)))
        continue
    # the program's clock is read just before its call, the collector's just inside it: a rank
    # stopped by the scheduler between the two (two loaded cores, spinning ranks) makes a
    # difference of a time slice, which only the scheduler's own waits are small enough to feel
    slack = 0.003 if (key in noise or balanced) else 0.0005
    if abs(g - x) > 0.05 * x + slack:
        bad.append("%s rank %d line %d: %.4f s in the profile, %.4f s by the program's clock" % (key + (g, x)))
for key, by in sorted(want_by.items()):
    if got_by.get(key) not in by:
        bad.append("%s rank %d line %d: caused by rank %s in the profile, by rank %s's delay"
                   % (key + (got_by.get(key), " or ".join(map(str, sorted(by))))))
for key, s, by, lo in moved:  # the scheduler made another rank of a tie the last: its delay the cause
    g = got_by.get(key)
    if g in want_by.get(key, ()) and g != by:
        cause[by] -= s
        cause_lo[by] -= s * lo[by]
        cause[g] += s
        cause_lo[g] += s * lo[g]
worst = max((abs(got.get(k, 0) - x) / x for k, x in want.items() if x > 0.05), default=0.0)
print("waits_check: %d waits by the program's clock, %d rows in the profile, worst relative error of those "
      "over 50 ms %.4f" % (len(want), len(got), worst))
if bad:
    print("\n".join(bad))
    sys.exit(1)
# the root causes: each rank's phase "delay" costs the waits it caused
costs = defaultdict(float)
for c in prof["delay_costs"]:
    if c.get("phase") == "delay":
        costs[c["rank"]] += c["seconds"]
for r in sorted(set(cause) | set(costs)) if not balanced else []:  # a balanced run's waits have no delay to cause them
    g, x, lo = costs.get(r, 0.0), cause.get(r, 0.0), cause_lo.get(r, 0.0)
    if g > x + 0.05 * x + 0.002 or g < lo - 0.05 * lo - 0.002:
        bad.append("rank %d's phase delay: a cause of %.4f s of waiting in the profile, %s s by the program's clock"
                   % (r, g, "%.4f" % x if lo > x - 1e-9 else "%.4f to %.4f" % (lo, x)))
# the critical path: as long as the run, through every delay (each step's at least D long: the
# path crosses each step on its delayed rank, or on one that worked as long beside it)
cp = prof["critical_path"]
on = sum(r["on_path_seconds"] for r in cp["ranks"])
if abs(on - cp["seconds"]) > 1e-6:
    bad.append("the ranks' time on the critical path %.6f s, its length %.6f s" % (on, cp["seconds"]))
in_delays = sum(a["seconds"] for a in cp["activities"] if a.get("phase") == "delay")
if delay and in_delays < 0.95 * len(delayed) * delay:
    bad.append("the critical path (%.4f s) spends %.4f s in the delays, less than its %d steps' %.3f s each" %
               (cp["seconds"], in_delays, len(delayed), delay))
print("waits_check: causes %s; critical path %.4f s, %.4f s of it in phase delay (%d steps delayed)" %
      (", ".join("rank %d %.4f s" % (r, costs[r]) for r in sorted(costs)), cp["seconds"], in_delays, len(delayed)))
if bad:
    print("\n".join(bad))
    sys.exit(1)
# the wait states of each rank are a part of its time in MPI
for r in prof["wait_ranks"]:
    if r["wait_seconds"] > r["mpi_seconds"] * 1.000001:
        sys.exit("rank %d waited %.6f s of %.6f s in MPI" % (r["rank"], r["wait_seconds"], r["mpi_seconds"]))
