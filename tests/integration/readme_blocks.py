#!/usr/bin/env python3
"""readme_blocks.py README SECTION BIN APP JOBPREFIX [WORD=PATH...]: the first sh block under the README's "## SECTION" heading, as a script a test runs.

The commands stay as written but for what only a reader's machine can
have: build/release/bin/ is BIN, ./your_app is APP, the jobs' names
(run1, tunnel) get JOBPREFIX before them so that no other run's are
taken, and mpirun gets the flags a root user on a small machine needs
(the README says them once, under "Two commands"); each WORD a block
names as a program of the reader's (./app_built_with_mpicc) is PATH.
"make" lines are
left out (the test has built).  Comments are dropped.  Exits 1 when the
section or its block is not there.

readme_blocks.py --programs README: the program each command of every sh
block begins with, a line each.
"""
import re
import sys


def block(readme, section):
    lines, on, inside = [], False, False
    for ln in open(readme):
        if ln.startswith("## ") or ln.startswith("### "):
            if on and not inside:
                break
            on = ln.strip("# \n") == section
            continue
        if on and ln.startswith("```"):
            if inside:
                return lines
            inside = ln.strip() == "```sh"
            continue
        if on and inside:
            lines.append(ln.rstrip("\n"))
    return None


def programs(readme):
    """The first word of every command in every sh block (continuation lines and comments aside)."""
    out, inside, cont = set(), False, False
    for ln in open(readme):
        if ln.startswith("```"):
            inside, cont = ln.strip() == "```sh", False
            continue
        if not inside:
            continue
        cmd = re.sub(r"\s+#.*$", "", ln.rstrip("\n")).strip()
        if cmd and not cont and not cmd.startswith("#"):
            out.add(cmd.lstrip("(").split()[0])
        cont = cmd.endswith("\\")
    return sorted(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--programs":
        print("\n".join(programs(sys.argv[2])))
        return
    readme, section, bindir, app, prefix = sys.argv[1:6]
    # longest first: ./app.mpich before ./app
    subs = sorted((a.split("=", 1) for a in sys.argv[6:]), key=lambda p: -len(p[0]))
    got = block(readme, section)
    if not got:
        sys.exit("readme_blocks: no sh block under '## %s'" % section)
    for ln in got:
        cmd = re.sub(r"\s+#.*$", "", ln).strip()
        if not cmd or cmd.startswith("#") or cmd == "make" or cmd.startswith("make "):
            continue
        cmd = cmd.replace("build/release/bin/", bindir.rstrip("/") + "/").replace("./your_app", app)
        for word, path in subs:
            cmd = re.sub(re.escape(word) + r"(?=\s|$)", path, cmd)
        # run1 is a job and its files' stem; tunnel a job, and tunnel.FIELD its object's
        cmd = re.sub(r"\brun1\b", prefix + "run1", cmd)
        cmd = re.sub(r"(?<![\w.])tunnel(?=\s|$)", prefix + "tunnel", cmd)
        cmd = re.sub(r"\bJOB\b", prefix + "job", cmd)  # the placeholders some blocks use
        cmd = re.sub(r"\bDIR\b", prefix + "dir", cmd)
        cmd = re.sub(r"^mpirun ", "mpirun --oversubscribe --allow-run-as-root ", cmd)
        print(cmd)


main()
