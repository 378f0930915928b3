#!/usr/bin/env python3
"""req_check.py - an independent check of a trace's requests, from otf2-print's text and the program's own list of the requests it made (none of EventSpace's code): each request completes at most once, with its own id, and as the program saw it complete.

  otf2-print traces.otf2 | req_check.py THREADS LISTS

THREADS is the archive's threads file (location, segment, "rankN.threadK"),
LISTS the program's lists, LISTS.rN for rank N: a line per request that
gets an id (Isend, Irecv, Imrecv, a persistent request's start), in the
order the rank made them: "s TO TAG BYTES HOW" or "r FROM TAG BYTES HOW",
HOW d (completed), f (freed before the program saw it complete: a trace
may have no completion, or one in the call that made it), c (cancelled:
"r - - - c").  The k-th request event of a rank's location is its k-th listed request;
requests one call made at one stamp (MPI_Startall) are compared as a set,
since nothing but their ids tells them apart in OTF2.

Prints: requests=N completed=C cancelled=X freed=F wrong=W
and exits 1 if W is not 0 (the first few are said on stderr).
"""
import re
import sys
from collections import defaultdict

EVENT = re.compile(r"^(MPI_ISEND_COMPLETE|MPI_IRECV_REQUEST|MPI_REQUEST_CANCELLED|MPI_ISEND|MPI_IRECV)\s+(\d+)\s+(\d+)\s+(.*)$")
PEER = re.compile(r'(?:Receiver|Sender): (\d+) \(')
TAG = re.compile(r"Tag: (\d+)")
LENGTH = re.compile(r"Length: (\d+)")
REQUEST = re.compile(r"Request: (\d+)")


def read_trace(stream):
    made = defaultdict(list)  # location -> [(time, id, kind, peer, tag, bytes)]
    ends = defaultdict(lambda: defaultdict(list))  # location -> id -> [(time, what, peer, tag, bytes)]
    for line in stream:
        m = EVENT.match(line)
        if not m:
            continue
        kind, loc, time, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        rq = REQUEST.search(rest)
        if not rq:
            sys.exit("req_check: a request event without its request: " + line.strip())
        rid = int(rq.group(1))
        if kind in ("MPI_ISEND", "MPI_IRECV"):
            p, t, n = PEER.search(rest), TAG.search(rest), LENGTH.search(rest)
            if not (p and t and n):
                sys.exit("req_check: a message event without its peer, tag or length: " + line.strip())
            peer, tag, size = int(p.group(1)), int(t.group(1)), int(n.group(1))
        if kind == "MPI_ISEND":
            made[loc].append((time, rid, "s", peer, tag, size))
        elif kind == "MPI_IRECV_REQUEST":
            made[loc].append((time, rid, "r", None, None, None))
        elif kind == "MPI_IRECV":
            ends[loc][rid].append((time, "r", peer, tag, size))
        elif kind == "MPI_ISEND_COMPLETE":
            ends[loc][rid].append((time, "s", None, None, None))
        else:
            ends[loc][rid].append((time, "c", None, None, None))
    return made, ends


def outcome(req, done, wrong):
    """What the trace says became of one request: its line as the program would list it."""
    time, rid, kind, peer, tag, size = req
    if len(done) > 1:
        wrong.append("request %d completes %d times" % (rid, len(done)))
    if not done:
        return "%s %s %s %s f" % (kind, peer, tag, size) if kind == "s" else "r open"
    t, what, dpeer, dtag, dsize = done[0]
    if t < time:
        wrong.append("request %d completes before it was made" % rid)
    if what == "c":
        return "%s - - - c" % kind
    if what != kind:
        wrong.append("request %d (%s) completed as a%s" % (rid, kind, " receive" if what == "r" else " send"))
    if kind == "s":
        return "s %d %d %d d" % (peer, tag, size)
    return "r %d %d %d d" % (dpeer, dtag, dsize)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rank_of = {}
    for line in open(sys.argv[1]):
        f = line.rstrip("\n").split("\t")
        m = re.match(r"rank(\d+)\.", f[2]) if len(f) > 2 else None
        if m:
            rank_of[int(f[0])] = int(m.group(1))
    made, ends = read_trace(sys.stdin)
    wrong, counts = [], defaultdict(int)
    for loc, rank in sorted(rank_of.items()):
        listed = [l.split() for l in open("%s.r%d" % (sys.argv[2], rank))]
        listed = [" ".join(l) for l in listed if l]
        reqs = sorted(made[loc])
        ids = {r[1] for r in reqs}
        if len(ids) != len(reqs):
            wrong.append("rank %d: request ids given twice" % rank)
        for rid in ends[loc]:
            if rid not in ids:
                wrong.append("rank %d: a completion of request %d, which no call made" % (rank, rid))
        if len(reqs) != len(listed):
            wrong.append("rank %d: %d requests in the trace, %d made" % (rank, len(reqs), len(listed)))
        k = 0
        while k < len(reqs) and k < len(listed):
            j = k
            while j < len(reqs) and reqs[j][0] == reqs[k][0]:
                j += 1
            got = sorted(outcome(r, ends[loc][r[1]], wrong) for r in reqs[k:j])
            want = sorted(listed[k:j])
            if j == k + 1 and want[0].endswith(" f") and got[0] == want[0][:-1] + "d":
                got = want  # freed, but completed in its call (Open MPI's inline sends): as MPI made it
            if got != want:
                wrong.append("rank %d, request %d%s: the trace says %s, the program %s"
                             % (rank, k + 1, "" if j == k + 1 else "-%d" % j, got, want))
            for w in want:
                counts[w.split()[-1]] += 1
            k = j
    print("requests=%d completed=%d cancelled=%d freed=%d wrong=%d"
          % (sum(counts.values()), counts["d"], counts["c"], counts["f"], len(wrong)), flush=True)
    for w in wrong[:10]:
        print("  " + w, file=sys.stderr)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
