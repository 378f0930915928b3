#!/usr/bin/env python3
"""readme_check.py README OUTPUT...: every message the README quotes is one the programs printed.

A quoted message is a span in backquotes that begins as a program's line
does ("stall: rank3.thread0 computes ...", "job run1: died: ..."), or a
comment in a code block after a command, saying what it prints ("# rank 0:
records [-all, MPI_Allreduce] (order 1) ...").  Each must be found in the
outputs the test made by running what the README describes, its numbers,
its job's name and pid standing for any; a quote the README ends with
"..." is the start of a line.  Prints what it checked; exits 1 naming each
quote no output holds.
"""
import re
import sys

PREFIXES = ("esctl", "heartbeat", "esconvert", "esrecord", "esprofile", "esview", "esrun", "escollect", "geteventmon",
            "colopmon", "psadm", "windtunnel", "stall", "deadlock", "job", "rank")
LINE = re.compile(r"^([a-z][a-z0-9_]*)( [a-z0-9_]+)?: \S")


def message(text):
    m = LINE.match(text)
    return m and m.group(1) in PREFIXES


def quoted(readme):
    """(line number, text, cut with ...) of each quoted message."""
    out, block, para, start = [], False, [], 0

    def spans(lines, first):
        for m in re.finditer(r"`([^`]+)`", " ".join(l.strip() for l in lines)):
            if message(m.group(1)):
                out.append((first,) + cut(m.group(1)))

    for n, line in enumerate(open(readme), 1):
        if line.startswith("```"):
            spans(para, start)
            para, block = [], not block
            continue
        if block:
            m = re.search(r"#\s+(.*)$", line)
            if m and message(m.group(1)) and re.match(r"\s*(build/|\S*bin/)", line):
                out.append((n,) + cut(m.group(1).rstrip()))
        elif not line.strip():
            spans(para, start)
            para = []
        else:
            start = start if para else n
            para.append(line)
    spans(para, start)
    return out


def cut(text):
    return (text[:-3].rstrip(), True) if text.endswith("...") else (text, False)


def pattern(text, cut):
    """The quote as a pattern: numbers, the README's job (run1) and pids stand for any."""
    p = re.escape(text)
    p = re.sub(r"run1", r"\\S+", p)
    p = re.sub(r"\d+(\\\.\d+)?", r"[0-9]+(\\.[0-9]+)?", p)
    return re.compile(r"(^|\s)" + p + (r"" if cut else r"\s*$"), re.M)


def main():
    readme, outputs = sys.argv[1], sys.argv[2:]
    text = "".join(open(o, errors="replace").read() for o in outputs)
    bad, n = [], 0
    for line, quote, was_cut in quoted(readme):
        n += 1
        if not pattern(quote, was_cut).search(text):
            bad.append("%s:%d: no program printed `%s%s`" % (readme, line, quote, "..." if was_cut else ""))
    print("readme: %d quoted messages, each found in what the programs printed" % n if not bad else
          "readme: %d quoted messages" % n)
    if bad:
        print("\n".join(bad))
        sys.exit(1)


main()
