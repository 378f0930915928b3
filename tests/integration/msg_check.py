#!/usr/bin/env python3
"""msg_check.py - an independent check of a trace's messages, from otf2-print's text alone (none of EventSpace's pairing code): MPI's non-overtaking order pairs the k-th send of (sender, receiver, communicator, tag) with the k-th receive of the same.

  otf2-print traces.otf2 | msg_check.py [EXPECTED]

Prints: messages=M unmatched_sends=S unmatched_recvs=R recv_before_send=B bytes_differ=D
and exits 1 if any of S, R, B, D is not 0, or M is not EXPECTED (when given).
"""
import re
import sys
from collections import defaultdict, deque

EVENT = re.compile(r"^(MPI_I?SEND|MPI_I?RECV)\s+(\d+)\s+(\d+)\s+(.*)$")
PEER = re.compile(r'(?:Receiver|Sender): \d+ \("[^"]*" <(\d+)>\)')
COMM = re.compile(r'Communicator: (?:"[^"]*" )?<(\d+)>')
TAG = re.compile(r"Tag: (\d+)")
LENGTH = re.compile(r"Length: (\d+)")


def main():
    sends = defaultdict(deque)  # (from, to, comm, tag) -> [(time, bytes)]
    recvs = defaultdict(deque)
    for line in sys.stdin:
        m = EVENT.match(line)
        if not m:
            continue
        kind, loc, time, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        p, c, t, n = PEER.search(rest), COMM.search(rest), TAG.search(rest), LENGTH.search(rest)
        if not (p and c and t and n):
            sys.exit("msg_check: a message event without its peer, communicator, tag or length: " + line.strip())
        peer = int(p.group(1))
        key = (loc, peer) if "SEND" in kind else (peer, loc)
        key += (int(c.group(1)), int(t.group(1)))
        (sends if "SEND" in kind else recvs)[key].append((time, int(n.group(1))))
    messages = unmatched_sends = unmatched_recvs = before = differ = 0
    worst = 0  # the earliest a receive was stamped before its send, in the trace's ticks
    for key in set(sends) | set(recvs):
        s, r = sorted(sends[key]), sorted(recvs[key])  # each end's events in time order: MPI's order
        for (ts, bs), (tr, br) in zip(s, r):
            messages += 1
            before += tr < ts
            worst = min(worst, tr - ts)
            differ += bs != br
        unmatched_sends += max(0, len(s) - len(r))
        unmatched_recvs += max(0, len(r) - len(s))
    print("messages=%d unmatched_sends=%d unmatched_recvs=%d recv_before_send=%d bytes_differ=%d"
          % (messages, unmatched_sends, unmatched_recvs, before, differ))
    if before:
        print("msg_check: the earliest receive came %d ticks before its send" % -worst, file=sys.stderr)
    bad = unmatched_sends or unmatched_recvs or before or differ
    if len(sys.argv) > 1 and messages != int(sys.argv[1]):
        bad = True
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
