#!/usr/bin/env python3
"""live_check.py - colopmon's live wait states (--waits --places 0) against esprofile --json of the same run: each pattern's total, each place's time and count (pattern, rank, call, function), each rank's time in MPI and the ends judged, equal.

usage: live_check.py COLOPMON_OUTPUT PROFILE.json [NAME]

The two read the same events through the same engine, the live side as
they come and numbered on their channels, the archive's after the run and
paired by messages.c: any difference is an event one of them judged
otherwise.  Times are compared at colopmon's printed precision (1 us).
"""
import json
import re
import sys
from collections import defaultdict


def live_side(text):
    totals = {m.group(1): float(m.group(2)) for m in
              re.finditer(r'^  wait state (.+?) +([0-9.]+) ms,', text, re.M)}
    places = defaultdict(lambda: [0.0, 0, 0])  # ms, waits, rows
    for m in re.finditer(r'^    (.+?) at rank (\d+), (\S+) in (.+): ([0-9.]+) ms in (\d+)$', text, re.M):
        where = m.group(4)
        f = re.match(r'^(.*) \([^()]*\)$', where)  # "function (file:line)" or "function (library)"
        key = (m.group(1), int(m.group(2)), m.group(3), f.group(1) if f else where)
        places[key][0] += float(m.group(5))
        places[key][1] += int(m.group(6))
        places[key][2] += 1
    j = re.search(r'judged from \d+ events: (\d+) receives, (\d+) sends, (\d+) collectives; (\d+) message ends', text)
    judged = tuple(int(x) for x in j.groups()) if j else None
    m = re.search(r'^  time in MPI calls:(.*)$', text, re.M)
    mpi = {int(r): float(ms) for r, ms in re.findall(r'rank (\d+) ([0-9.]+) ms', m.group(1))} if m else {}
    if re.search(r'^    and \d+ more places', text, re.M):
        sys.exit("live_check: colopmon listed only some places (run it with --places 0)")
    return totals, places, judged, mpi


def unnamed(p, site):
    """A site the profile names no function at: its module and offset, as monitors name it."""
    for s in p.get("sites", []):
        if s["site"] == site and s["frames"]:
            f = s["frames"][0]
            return "%s+0x%x" % (f["module"].rsplit("/", 1)[-1], f["offset"])
    return "site %d" % site


def profile_side(p):
    totals = defaultdict(float)
    places = defaultdict(lambda: [0.0, 0])
    for w in p["wait_states"]:
        totals[w["name"]] += w["seconds"] * 1e3
        call = w["call"] if w["of"] in ("", w["call"]) else "%s(%s)" % (w["call"], w["of"][4:])
        fn = w["function"] if w["function"] not in ("", "-") else unnamed(p, w["site"])
        key = (w["name"], w["rank"], call, fn)
        places[key][0] += w["seconds"] * 1e3
        places[key][1] += w["count"]
    j = p["wait_judged"]
    mpi = {r["rank"]: r["mpi_ns"] / 1e6 for r in p["ranks"]}
    return totals, places, (j["receives"], j["sends"], j["collectives"], j["unpaired"]), mpi


def main():
    name = sys.argv[3] if len(sys.argv) > 3 else sys.argv[1]
    text = open(sys.argv[1]).read()
    if "no event was lost" not in text:
        sys.exit("%s: colopmon lost events: nothing to compare" % name)
    lt, lp, lj, lm = live_side(text)
    pt, pp, pj, pm = profile_side(json.load(open(sys.argv[2])))
    bad = []
    for n in set(lt) | set(pt):
        # a total printed at 1 us: the profile's rounded the same way, within one rounding
        if abs(lt.get(n, 0) - round(pt.get(n, 0), 3)) > 0.0011:
            bad.append("total %s: live %.3f ms, profile %.6f ms" % (n, lt.get(n, 0), pt.get(n, 0)))
    for k in set(lp) | set(pp):
        a, b = lp.get(k, [0.0, 0, 0]), pp.get(k, [0.0, 0])
        # each of its live rows rounded to 1 us
        if a[1] != b[1] or abs(a[0] - b[0]) > 0.0005 * a[2] + 1e-6:
            bad.append("%s at rank %d, %s in %s: live %.3f ms in %d, profile %.6f ms in %d" % (k + (a[0], a[1], b[0], b[1])))
    # one time in MPI per rank: the whole the shares are of
    for r in set(lm) | set(pm):
        if abs(lm.get(r, 0) - round(pm.get(r, 0), 3)) > 0.0011:
            bad.append("rank %d's time in MPI: live %.3f ms, profile %.6f ms" % (r, lm.get(r, 0), pm.get(r, 0)))
    if not lm:
        bad.append("colopmon gave no time in MPI")
    if lj != pj:
        bad.append("judged (receives, sends, collectives, unpaired): live %s, profile %s" % (lj, pj))
    if not lt or not lp:
        bad.append("colopmon printed no wait state")
    for b in sorted(bad):
        print("%s: %s" % (name, b))
    if bad:
        sys.exit(1)
    print("%s: live equals the profile: %d patterns, %d places, %s ends judged" % (name, len(pt), len(pp), pj))


main()
