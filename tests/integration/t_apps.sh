#!/bin/sh
# t_apps.sh - real MPI programs from Debian under the collectors: LAMMPS watched by geteventmon and colopmon, hpcc by heartbeat and colopmon; both recorded, their messages checked by an independent reader, their live wait states equal to the archive's.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../apps/apps.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
BIN=$(cd "$BIN" && pwd) BUILD=$(cd "$BUILD" && pwd) # the programs run in a directory of their own
job="itapp$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT

# json_ok NAME ARCHIVE: its JSON as Perfetto reads it, every arrow (messages'
# and collectives') forwards in time, no message left out as received before sent
json_ok() {
	"$BIN/esconvert" --json "$dir/$1.json" "$2" >"$dir/$1.jconv" 2>&1 || die "esconvert --json ($1): $(cat "$dir/$1.jconv")"
	sl=$(sed -n 's/.*\.json: \([0-9]*\) slices, \([0-9]*\) messages.*/\1/p' "$dir/$1.jconv")
	ms=$(sed -n 's/.*\.json: \([0-9]*\) slices, \([0-9]*\) messages.*/\2/p' "$dir/$1.jconv")
	python3 "$(dirname "$0")/json_check.py" "$dir/$1.json" "$sl" "$ms" || die "$1's JSON"
	! grep -q "before they were sent" "$dir/$1.jconv" || die "$1's JSON left arrows out: $(cat "$dir/$1.jconv")"
}

# live_ok NAME COLOPMON_OUTPUT: colopmon --waits, live, judged what esprofile judged after
# the run (waits_ok made its JSON): every pattern's total, every place, the ends judged
live_ok() {
	python3 "$(dirname "$0")/live_check.py" "$2" "$dir/$1.prof.json" "$1" || die "$1: live and after differ"
}

# waits_ok NAME ARCHIVE: each rank's wait states (the patterns without a parent, completions
# too) no more than its time in MPI calls as the profile counts it (profile.c, not the engine)
waits_ok() {
	"$BIN/esprofile" --json -o "$dir/$1.prof.json" "$2" || die "esprofile --json ($1) failed"
	python3 - "$dir/$1.prof.json" "$1" <<'PY' || die "$1's wait states"
import json, sys
from collections import defaultdict
p = json.load(open(sys.argv[1]))
sub = {"late_sender_wo", "lswo_different", "lswo_same"}
waited = defaultdict(float)
for w in p["wait_states"]:
    if w["pattern"] not in sub:
        waited[w["rank"]] += w["seconds"]
mpi = {r["rank"]: r["mpi_ns"] / 1e9 for r in p["ranks"]}
bad = [r for r in waited if waited[r] > mpi.get(r, 0) + 1e-6]
# every row has its place: a call site the page lists, with a function (or "-": no symbol there)
nowhere = [w for w in p["wait_states"] if not w["site"] or not w["function"]]
# one time in MPI per rank: the wait rows' shares are of the ranks' own
two = [(r, mpi.get(r["rank"])) for r in p["wait_ranks"] if abs(r["mpi_seconds"] - mpi.get(r["rank"], -1)) > 1e-9]
for r in two:
    print("%s: two times in MPI: %s" % (sys.argv[2], r))
for w in nowhere[:5]:
    print("%s: a wait state without a place: %s" % (sys.argv[2], w))
print("%s: wait states per rank %s s of %s s in MPI; %s" % (sys.argv[2],
      " ".join("%.3f" % waited[r] for r in sorted(waited)), " ".join("%.3f" % mpi[r] for r in sorted(mpi)),
      p["wait_judged"]))
sys.exit(1 if bad or nowhere or two or not waited else 0)
PY
}

# LAMMPS melt, both monitors watching from before it starts: nothing lost,
# and every MPI_Allreduce it made reported by colopmon
"$BIN/geteventmon" -w 60 -o "$dir/ev.txt" "$job.l" 2>"$dir/gem.err" &
gem=$!
"$BIN/colopmon" -q --waits --places 0 -w 60 "$job.l" >"$dir/col.txt" 2>&1 &
col=$!
"$BIN/esrecord" -w 60 -o "$dir/lmp" "$job.l" 2>"$dir/lrec.err" &
rec=$!
rate=$(lammps_melt "$dir" 3000 "$BIN/esrun" -q -j "$job.l") || die "LAMMPS failed: $(tail "$dir/lmp.out")"
wait $gem || die "geteventmon failed: $(cat "$dir/gem.err")"
wait $col || die "colopmon failed: $(cat "$dir/col.txt")"
wait $rec || die "esrecord (LAMMPS): $(cat "$dir/lrec.err")"
# its messages, read by the independent checker (msg_check.py) from OTF2:
# every one once, none received before it was sent, bytes equal
"$BIN/esconvert" -q --otf2 "$dir/lmpo" "$dir/lmp" || die "esconvert (LAMMPS) failed"
otf2-print "$dir/lmpo/traces.otf2" 2>/dev/null | python3 "$(dirname "$0")/msg_check.py" >"$dir/check" ||
	die "LAMMPS's messages: $(cat "$dir/check")"
echo "LAMMPS: $(cat "$dir/check")"
json_ok LAMMPS "$dir/lmp"
waits_ok LAMMPS "$dir/lmp"
live_ok LAMMPS "$dir/col.txt"
echo "LAMMPS: $rate steps/s"
cat "$dir/gem.err"
grep -v "^    " "$dir/col.txt" | tail -12
grep -q "events written, 0 discarded before they could be read" "$dir/gem.err" || die "geteventmon lost events"
grep -q "no event was lost while it watched" "$dir/col.txt" || die "colopmon lost events"
# the trace elements held the whole run: what they wrote is the truth to compare with
written=0
for r in 0 1; do
	line=$("$BIN/psadm" show "$job.l.r$r" | grep "mpi.thread0")
	[ "$(echo "$line" | awk '{print $6}')" = 0 ] || die "rank $r's trace element dropped tuples: $line"
	written=$((written + $(echo "$line" | awk '{print $5}')))
done
got=$(sed -n 's/^geteventmon: \([0-9]*\) events written.*/\1/p' "$dir/gem.err")
[ "$got" -eq "$written" ] || die "geteventmon wrote $got events of the $written recorded"
made=$(grep -c " rank0.thread0 MPI_Allreduce " "$dir/ev.txt")
seen=$(awk '$1 == "MPI_Allreduce" { print $2 }' "$dir/col.txt")
[ "$made" -gt 100 ] && [ "$seen" = "$made" ] || die "LAMMPS made $made allreduces, colopmon reported ${seen:-none}"

# esctl on a running LAMMPS: after collect [-all, MPI_Allreduce] only its
# allreduces are recorded, after collect all everything again; esrecord
# keeps the whole run, and the calls are judged by when they started
# against when every rank had applied the order.
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
"$BIN/esrecord" -w 60 -o "$dir/ctl" "$job.c" 2>"$dir/ctl.err" &
rec=$!
(lammps_melt "$dir" 12000 "$BIN/esrun" -q -j "$job.c" >"$dir/ctl.rate") &
lmp=$!
wait_for 60 "$BIN/esctl" -w 0 "$job.c" status || die "esctl status never answered"
sleep 2
"$BIN/esctl" "$job.c" collect '[-all, MPI_Allreduce]' >"$dir/ctl.out" || die "esctl collect: $(cat "$dir/ctl.out")"
t1=$(mono_ns)
"$BIN/esctl" "$job.c" status >"$dir/ctl.status"
sleep 3
t2=$(mono_ns)
"$BIN/esctl" "$job.c" collect all >>"$dir/ctl.out" || die "esctl collect all: $(cat "$dir/ctl.out")"
t3=$(mono_ns)
wait $lmp || die "LAMMPS under esctl failed"
wait $rec || die "esrecord: $(cat "$dir/ctl.err")"
cat "$dir/ctl.out"
grep -q "^esctl: collect \[-all, MPI_Allreduce\]: applied by 2 of 2 ranks$" "$dir/ctl.out" || die "collect not applied"
grep -q "^esctl: collect all: applied by 2 of 2 ranks$" "$dir/ctl.out" || die "collect all not applied"
[ "$(grep -c "^rank [01]: records \[-all, MPI_Allreduce\] (order 1)$" "$dir/ctl.status")" -eq 2 ] ||
	die "esctl status: $(cat "$dir/ctl.status")"
allreduce=$(sed -n 's/^[[:space:]]*ES_OP_MPI_ALLREDUCE = \([0-9]*\),/\1/p' "$BUILD/gen/es_mpi_ops.h")
python3 "$(dirname "$0")/ar_events.py" list "$dir/ctl" | awk -v t1="$t1" -v t2="$t2" -v t3="$t3" -v a="$allreduce" '
	$4 < t1 && $3 != a { before++ }
	$4 > t1 && $4 < t2 { if ($3 == a) only++; else { other++; if (other < 4) print "recorded while only MPI_Allreduce was asked for: " $0 } }
	$4 > t3 && $3 != a { after++ }
	END { printf "esctl: %d other calls before, %d allreduces and %d others while collect [-all, MPI_Allreduce], %d others after collect all\n", before, only, other, after
	      exit !(before > 0 && only > 0 && other == 0 && after > 0) }' || die "what was recorded did not follow esctl"

# hpcc (Debian's example input on 2 ranks), heartbeat watching: both ranks
# seen progressing; recorded, its messages checked as LAMMPS's (RandomAccess
# polls: MPI_Test on a wildcard receive beside MPI_Testany on the sends)
hpcc_input "$dir"
"$BIN/heartbeat" -p 100 -w 60 "$job.h" >"$dir/hb.txt" 2>&1 &
hb=$!
"$BIN/colopmon" -q --waits --places 0 -w 60 "$job.h" >"$dir/hcol.txt" 2>&1 &
hcol=$!
"$BIN/esrecord" -w 60 -o "$dir/hpcc" "$job.h" 2>"$dir/hrec.err" &
rec=$!
gups=$(hpcc_run "$dir" "$BIN/esrun" -q -j "$job.h") || die "hpcc failed"
wait $hb
wait $hcol || die "colopmon (hpcc) failed: $(cat "$dir/hcol.txt")"
wait $rec || die "esrecord (hpcc): $(cat "$dir/hrec.err")"
"$BIN/esconvert" -q --otf2 "$dir/hpcco" "$dir/hpcc" || die "esconvert (hpcc) failed"
otf2-print "$dir/hpcco/traces.otf2" 2>/dev/null | python3 "$(dirname "$0")/msg_check.py" >"$dir/check" ||
	die "hpcc's messages: $(cat "$dir/check")"
echo "hpcc: $(cat "$dir/check")"
json_ok hpcc "$dir/hpcc"
waits_ok hpcc "$dir/hpcc"
live_ok hpcc "$dir/hcol.txt"
echo "hpcc: MPIRandomAccess $gups GUP/s"
tail -4 "$dir/hb.txt"
grep -q "^MPIRandomAccess_Errors=0" "$dir/hpccoutf.txt" || die "hpcc's RandomAccess found errors"
grep -q "watching 2 threads" "$dir/hb.txt" || die "heartbeat did not see both ranks: $(cat "$dir/hb.txt")"
grep -q "2 threads: 2 progressing" "$dir/hb.txt" || die "heartbeat never saw both ranks progress"
grep -q "rank0.thread0 .*progressed in [1-9]" "$dir/hb.txt" || die "no progress counted for rank 0"
grep -q "rank1.thread0 .*progressed in [1-9]" "$dir/hb.txt" || die "no progress counted for rank 1"
exit 0
