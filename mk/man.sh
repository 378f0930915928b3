#!/bin/sh
# man.sh - a program's man page from its own --help, so the two never differ: man.sh PROGRAM SECTION-1-SUMMARY > PROGRAM.1
set -u
prog=$1 summary=$2
name=$(basename "$prog")
help=$("$prog" --help) || { echo "man.sh: $prog --help failed" >&2; exit 1; }
version=$("$prog" --version | awk '{ print $NF }')
# roff: a backslash doubled, a leading dot or quote escaped
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<MAN
.TH $(echo "$name" | tr a-z A-Z) 1 "" "EventSpace $version" "EventSpace"
.SH NAME
$name \\- $summary
.SH SYNOPSIS
.nf
$(echo "$help" | sed -n '/^usage:/,/^[^ ]/p' | sed '$!b; /^usage:/!d' | sed 's/^usage: //' | esc)
.fi
.SH DESCRIPTION
The text of
.B $name \\-\\-help
follows.
.PP
.nf
$(echo "$help" | esc)
.fi
.SH ENVIRONMENT
.TP
.B ES_JOB
The job's name (esrun --job): 1 to 32 characters of A-Z a-z 0-9 . _ -, the
first a letter or a digit. Monitors are given it; its trace spaces are
segments JOB.rN (MPI ranks) and JOB.tN (PATHS processes).
.TP
.B ES_PATHMAP
A pathmap (esrun --pathmap): which MPI calls to record (mpi: collect:), how
much each thread keeps (trace:), servers for monitors on other hosts.
.TP
.B ES_KEEP
When the job's trace spaces are removed (esrun --keep, a pathmap's trace:
keep:): failed (the default: removed by the last process to end cleanly,
kept when one died, for esrecord --remains), always (kept until psadm rm or
psadm clean --all) or never (psadm clean removes even a dead job's).
.TP
.B ES_TRACE_SIZE
Bytes of tuples each thread keeps (esrun --trace-size; 4M by default).
.TP
.B ES_CALLPATH
Frames of a call site (esrun --callpath): 1 by default, 0 keeps none.
.TP
.B ES_SERVE, ES_PORT, ES_SECRET_FILE, ES_SERVERS_OUT
Serve each node's trace spaces over TCP (esrun --serve loopback|any), on
this port, with this shared secret (a file only you can read, 16 to 256
bytes), the servers' list written to this file.
.TP
.B ES_CLOCK
monotonic: stamp with CLOCK_MONOTONIC rather than the processor's
time-stamp counter.
.TP
.B ES_VERBOSE
1: rank 0 says where the job's traces are (esrun without --quiet).
.TP
.B LD_PRELOAD
esrun puts libescollect.so here, before what was there, for the MPI program.
.TP
.B PS_SECRET_FILE
psadm's remote commands read the shared secret from it.
.TP
.B TMPDIR
Where scratch archives go (esprofile JOB).
MAN
case $name in
esrun) ex='mpirun -np 4 esrun --job run1 ./app
mpirun -np 4 esrun --keep always -j run1 ./app    # kept after a clean end too' ;;
heartbeat) ex='heartbeat run1                       # while it runs, every second
heartbeat -x --snapshot /tmp/hang run1  # at the first deadlock: an archive of it, then stop
heartbeat -p 250 -g wf.dot run1        # the wait-for graph as a picture' ;;
colopmon) ex='colopmon run1
colopmon --snapshot /tmp/slow --imbalance 50 run1   # keep the moment a collective waits 50 ms' ;;
geteventmon) ex='geteventmon -o events.txt run1' ;;
esrecord) ex='esrecord -o run1.ar run1                # start it before or while the job runs
esrecord --remains -o crash.ar run1      # what a dead or hung job'"'"'s elements still hold
esrecord --repair run1.ar                # finish an archive whose recorder was killed' ;;
esconvert) ex='esconvert --otf2 run1.otf2 run1.ar      # for Vampir
esconvert --json run1.json run1.ar      # for Perfetto (ui.perfetto.dev)
esconvert --plot run1.plots run1.ar     # timeline.png and matrix.png' ;;
esprofile) ex='esprofile run1.ar
esprofile run1                          # a live job: recorded until it ends' ;;
esctl) ex='esctl run1 collect "[-all, MPI_Allreduce]"
esctl run1 pause; esctl run1 resume
esctl --servers node1:7000 --secret-file ~/.es-secret run1 status' ;;
psadm) ex='psadm list                              # jobs: live, ended, died; memory used
psadm clean [PREFIX]                    # what the keep policy lets go (of one job)
psadm serve run1. --addr 0.0.0.0 --secret-file ~/.es-secret' ;;
esview) ex='esview run1                             # then open the URL it prints
esview --trigger deadlock,stall=5 --snapshot hang run1   # freeze at a hang, keep hang/1
esview --addr 0.0.0.0 --view-secret ~/.es-view run1   # from other hosts: URL?key=SECRET' ;;
pathmap) ex='pathmap check job.yaml
pathmap show job.yaml' ;;
*) ex='' ;;
esac
if [ -n "$ex" ]; then
	printf '.SH EXAMPLES\n.nf\n'
	echo "$ex" | esc
	printf '.fi\n'
fi
cat <<MAN
.SH SEE ALSO
EventSpace's README and the READMEs of its folders (pastset, paths, pathmaps,
collectors, scopes, monitors, view, archive).
MAN
