#!/usr/bin/env python3
"""ar_events.py - an archive's events as text, read straight from its files (not through EventSpace's reader), for the tests.

  ar_events.py list DIR            a line per event: PROCESS THREAD OP START END ELEMENT SIZE ARG
                                   (OP the code, +4096 for an unfinished call)
  ar_events.py done DIR            a line per thread and op code its completions (tuples
                                   MPI_..../done) carry: THREAD CODE COUNT; fails if a
                                   point-to-point request completes more often than calls
                                   made requests at its start stamp (Isend..., Irecv,
                                   Imrecv, each of MPI_Start(all)'s), each direction apart
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


def events(d, mask=0x10ff):
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
        yield (proc, name, op & mask, start, end, el, size, arg)


SENDS, RECVS, STARTS = {36, 52, 53, 54, 160, 161, 162, 163}, {37, 59, 164}, {165, 166}


def done(d):
    count, made, ended = {}, {}, {}
    for e in events(d, 0xffff):
        name, op, start = e[1], e[2], e[3]
        code, recv = op & 0xff, (op & 0x2000) != 0
        if op & 0x1000:
            continue  # a call not returned
        if op & 0x4000:
            count[(name, code)] = count.get((name, code), 0) + 1
            if code in SENDS or code in RECVS:
                key = (name, start, code in RECVS)
                ended[key] = ended.get(key, 0) + 1
        elif code in SENDS - {160, 161, 162, 163} or code in {37, 59} or code in STARTS:
            key = (name, start, code in {37, 59} or (code in STARTS and recv))
            made[key] = made.get(key, 0) + 1
    for (name, code), n in sorted(count.items()):
        print(name, code, n)
    extra = [k for k, n in ended.items() if n > made.get(k, 0)]
    for name, start, recv in extra[:5]:
        print("%s: %d completions of %s begun at %d, %d made" % (name, ended[(name, start, recv)],
              "receives" if recv else "sends", start, made.get((name, start, recv), 0)))
    return 1 if extra else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        for e in events(sys.argv[2]):
            print(*e)
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "done":
        return done(sys.argv[2])
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
