#!/usr/bin/env python3
# attack.py - what t_attack.sh throws at esview and a tuple server: wrong secrets, wrong keys, slow clients; and a legitimate client beside them, counting what each got.
import socket
import struct
import sys
import threading
import time


def hello_flood(port, seconds, threads, rotate):
    """Wrong secrets at a tuple server, as fast as it answers; with rotate,
    from a new address of 127/8 each time."""
    counts = {"refused": 0, "passed": 0, "dropped": 0}
    lock = threading.Lock()
    end = time.time() + seconds

    def one(k):
        n = 0
        while time.time() < end:
            n += 1
            s = socket.socket()
            s.settimeout(5)
            try:
                if rotate:
                    s.bind(("127.0.%d.%d" % (1 + k, 2 + n % 250), 0))
                s.connect(("127.0.0.1", port))
                secret = b"not-the-secret-%08d" % n
                payload = struct.pack("<II", 1, 0x01020304) + secret
                s.sendall(b"PSW1" + struct.pack("<HHII", 1, 1, len(payload), 7) + payload)
                got = b""
                while len(got) < 28:
                    b = s.recv(28 - len(got))
                    if not b:
                        break
                    got += b
                what = "dropped"
                if len(got) == 28:
                    status = struct.unpack("<i", got[24:28])[0]
                    what = "passed" if status == 0 else "refused"
                with lock:
                    counts[what] += 1
            except OSError:
                with lock:
                    counts["dropped"] += 1
            finally:
                s.close()

    ts = [threading.Thread(target=one, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("refused %d passed %d dropped %d" % (counts["refused"], counts["passed"], counts["dropped"]))


def http(host, port, path, timeout=10):
    """One GET: (status, body), or (0, error)."""
    s = socket.socket()
    s.settimeout(timeout)
    try:
        s.connect((host, port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (path, port)).encode())
        got = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        head, _, body = got.partition(b"\r\n\r\n")
        return int(head.split()[1]), body
    except (OSError, IndexError, ValueError) as e:
        return 0, str(e).encode()
    finally:
        s.close()


def key_flood(port, seconds, threads):
    """Wrong keys at esview; prints how many were answered, and whether any
    answer held the job's data."""
    counts = {"answers": 0, "leaked": 0, "other": 0}
    lock = threading.Lock()
    end = time.time() + seconds

    def one(k):
        n = 0
        while time.time() < end:
            n += 1
            status, body = http("127.0.0.1", port, "/data?key=wrong-key-%d-%d-0123456789" % (k, n))
            with lock:
                if status == 403 and b"wrong key" in body:
                    counts["answers"] += 1
                elif status == 200 or b'"threads"' in body:
                    counts["leaked"] += 1
                else:
                    counts["other"] += 1

    ts = [threading.Thread(target=one, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("answers %d leaked %d other %d" % (counts["answers"], counts["leaked"], counts["other"]))


def slow_flood(port, seconds, conns):
    """Slow clients: each sends a request a byte at a time, a byte every half
    second, and connects again when it is closed."""
    end = time.time() + seconds
    socks = [None] * conns
    opened = 0
    req = b"GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port
    sent = [0] * conns
    while time.time() < end:
        for i in range(conns):
            s = socks[i]
            if s is None:
                s = socket.socket()
                s.settimeout(1)
                try:
                    s.connect(("127.0.0.1", port))
                except OSError:
                    s.close()
                    continue
                socks[i], sent[i] = s, 0
                opened += 1
            try:
                s.sendall(req[sent[i]:sent[i] + 1] if sent[i] < len(req) else b"x")
                sent[i] += 1
            except OSError:
                s.close()
                socks[i] = None
        time.sleep(0.5)
    for s in socks:
        if s:
            s.close()
    print("opened %d" % opened)


def legit(url_port, path, seconds):
    """A browser's requests, one after another: how many were served."""
    end = time.time() + seconds
    ok = failed = 0
    while time.time() < end:
        status, body = http("127.0.0.1", url_port, path, timeout=30)
        if status == 200 and b'"threads"' in body:
            ok += 1
        else:
            failed += 1
            print("failed: %d %s" % (status, body[:200]), file=sys.stderr)
        time.sleep(0.1)
    print("ok %d failed %d" % (ok, failed))


if __name__ == "__main__":
    what, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    if what == "hello":
        hello_flood(port, seconds, int(sys.argv[4]), len(sys.argv) > 5 and sys.argv[5] == "rotate")
    elif what == "keys":
        key_flood(port, seconds, int(sys.argv[4]))
    elif what == "slow":
        slow_flood(port, seconds, int(sys.argv[4]))
    elif what == "legit":
        legit(port, sys.argv[4], seconds)
    else:
        sys.exit("usage: attack.py hello|keys|slow|legit PORT SECONDS ...")
