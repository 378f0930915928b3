#!/usr/bin/env python3
"""ar_events.py - an archive's events as text, read straight from its files (not through EventSpace's reader), for the tests.

  ar_events.py list DIR            a line per event: PROCESS THREAD OP START END ELEMENT SIZE ARG
                                   (OP the code, +4096 for an unfinished call)
  ar_events.py covers FULL PART NS  every event of FULL that ended before NS is in PART
                                   (the INFO's count of PART's events is what is read)
"""
import struct
import sys


def info(d):
    out = {}
    for line in open(d + "/INFO"):
        k, _, v = line.partition(": ")
        out.setdefault(k, v.strip())
    return out


def events(d):
    threads = {}
    for line in open(d + "/threads"):
        i, proc, name = line.rstrip("\n").split("\t")
        threads[int(i)] = (proc, name)
    data = open(d + "/events", "rb").read()
    assert data[:4] == b"ESAR", d + "/events: no ESAR header"
    n = int(info(d)["events"])
    for i in range(n):
        start, end, seq, op, comm, el, size, arg, th = struct.unpack_from("<QQIHHIIII", data, 8 + 40 * i)
        proc, name = threads[th]
        yield (proc, name, op & 0x1fff, start, end, el, size, arg)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        for e in events(sys.argv[2]):
            print(*e)
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "covers":
        cut = int(sys.argv[4])
        part = set(events(sys.argv[3]))
        old = [e for e in events(sys.argv[2]) if e[4] < cut]
        missing = [e for e in old if e not in part]
        print("%d events ended before the cut, %d of them missing" % (len(old), len(missing)))
        for e in missing[:5]:
            print("missing:", *e)
        return 1 if missing or not old else 0
    print(__doc__, file=sys.stderr)
    return 2


sys.exit(main())
