#!/usr/bin/env python3
"""same_check.py - one program recorded under two MPIs gives the same answers: its calls, call sites, messages, collectives, communicators, phases and I/O, as esprofile --json has them, compared field by field (times, process ids, paths of the programs and polls' counts aside: those differ run to run).

  same_check.py A.json B.json

Prints "same: N calls, S sites, M messages, C collectives" or each difference, and exits 1 on any.
"""
import json
import sys

POLLS = ("MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Improbe")


def answers(path):
    d = json.load(open(path))
    sites = {s["site"]: (s["call"],) + tuple((f["function"], f["file"], f["line"]) for f in s["frames"])
             for s in d["sites"]}
    return {
        "ranks": len(d["ranks"]),
        "calls": sorted((c["call"], c["rank"], c["count"], c["bytes"]) for c in d["calls"]
                        if c["call"] not in POLLS),
        "sites": sorted(sites.values()),
        "site_stats": sorted((sites[s["site"]], s["rank"], s["count"], s["sent"]["count"], s["sent"]["bytes"])
                             for s in d["site_stats"] if s["call"] not in POLLS),
        "collectives": sorted((c["call"], c["number"], c["comm"], c["world"], c["ranks_in"])
                              for c in d["collectives"]),
        "communicators": sorted((c["comm"], c["size"], c["collectives"], c["coll_bytes"], c["messages"],
                                 c["msg_bytes"]) for c in d["communicators"]),
        "traffic": sorted((t["from"], t["to"], t["messages"], t["bytes"]) for t in d["traffic"]),
        "phases": sorted(json.dumps({k: v for k, v in p.items() if not k.endswith("_ns") and k != "cov"},
                                    sort_keys=True) for p in d["phases"]),
        "io": sorted(json.dumps({k: v for k, v in i.items() if not k.endswith("_ns")}, sort_keys=True)
                     for i in d["io"]),
    }


def main():
    a, b = answers(sys.argv[1]), answers(sys.argv[2])
    bad = 0
    for key in a:
        if a[key] != b[key]:
            bad += 1
            only_a = [x for x in a[key] if x not in b[key]] if isinstance(a[key], list) else a[key]
            only_b = [x for x in b[key] if x not in a[key]] if isinstance(b[key], list) else b[key]
            print("same_check: %s differ:\n  only in %s: %s\n  only in %s: %s"
                  % (key, sys.argv[1], only_a[:8], sys.argv[2], only_b[:8]))
    if not a["calls"]:
        bad += 1
        print("same_check: no calls: nothing compared")
    if not bad:
        print("same: %d calls, %d sites, %d messages, %d collectives"
              % (sum(c[2] for c in a["calls"] if c[1] == -1), len(a["sites"]),
                 sum(t[2] for t in a["traffic"]), len(a["collectives"])))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
