#!/bin/sh
# t_waits.sh - wait states on ground truth: mpi_waits (C) and mpi_waits_f (Fortran) delay one rank per step by D ms; esprofile finds each pattern at the delayed call's site and rank, as long as the programs' own clocks say, and nothing else; a balanced run shows only what the scheduler did.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itws$$"
dir=$(mktemp -d)
app="" view=""
cleanup() {
	[ -n "$view" ] && kill "$view" 2>/dev/null && wait "$view" 2>/dev/null
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT

# run PROGRAM D NAME: recorded under esrun on 3 ranks; $dir/NAME.json, its truth in $dir/NAME/;
# colopmon watches it live, its wait states (--waits) in $dir/NAME.live and a trigger on Late
# Sender (--wait-above) keeping its snapshot in $dir/NAME.snap
run() {
	mkdir -p "$dir/$3"
	"$BIN/esrecord" -w 30 -o "$dir/$3.ar" "$job.$3" 2>"$dir/$3.err" &
	rec=$!
	"$BIN/colopmon" --waits --places 0 -w 30 "$job.$3" >"$dir/$3.live" 2>&1 &
	col=$!
	"$BIN/colopmon" -q --wait-above late_sender:20 --snapshot "$dir/$3.snap" -w 30 "$job.$3" >"$dir/$3.trig" 2>&1 &
	trig=$!
	mpirun --oversubscribe --allow-run-as-root -np 3 "$BIN/esrun" -q -j "$job.$3" "$BUILD/tests/$1" "$2" "$dir/$3" \
		>"$dir/$3.app" 2>&1 || die "$1 $2 failed: $(cat "$dir/$3.app")"
	wait $rec || die "$1: esrecord failed: $(cat "$dir/$3.err")"
	wait $col || die "$1: colopmon --waits failed: $(cat "$dir/$3.live")"
	wait $trig || die "$1: colopmon --wait-above failed: $(cat "$dir/$3.trig")"
	"$BIN/esprofile" --json -o "$dir/$3.json" "$dir/$3.ar" || die "$1: esprofile --json failed"
}

# live NAME: colopmon's wait states are the profile's: each pattern's total, each place's time
# and count, the ends judged (live_check.py)
live() {
	python3 "$(dirname "$0")/live_check.py" "$dir/$1.live" "$dir/$1.json" "$1" ||
		die "$1: colopmon --waits and esprofile differ"
}

# check NAME FILE D|--balanced: every wait state of FILE as the program's clock says
check() {
	case $3 in --balanced) how=--balanced ;; *) how="--delay $3" ;; esac
	python3 "$(dirname "$0")/waits_check.py" "$dir/$1.json" "$dir/$1"/truth* --file "$2" $how || die "$1: see above"
}

# The checker itself, on a reduce made by hand: its two senders delayed alike, so the scheduler
# decides which entered MPI last.  It takes either of a tie (rank 2 entered 10 us before rank 1
# by the program's stamps, but was still in its call when rank 1 entered), never the root nor
# a rank that left before the other came, and the delay's cost goes with the cause given.  With
# SYNC 1 the ranks left a sync barrier 300 ms before the reduce (the 200 ms delay, and 100 ms the
# scheduler held them outside it): the delay phase's cost may then be as little as 2/3 of the wait.
# tie LEAVE2_MS CAUSED_BY COST1 COST2 [SYNC]: waits_check's verdict on that reduce
tie() {
	mkdir -p "$dir/tie" && python3 - "$dir/tie" "$@" <<'PY' || die "tie: no fixture"
import json, sys
d, leave2, by, c1, c2 = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
sync = len(sys.argv) > 6 and sys.argv[6] == "1"
t = {0: 1.0e9, 1: 1.2e9, 2: 1.2e9 - 1e4}
leave = {0: 1.2e9 + 2e6, 1: 1.2e9 + 5e5, 2: 1.2e9 - 1e4 + leave2 * 1e6}
for r in t:
    with open("%s/truth.%d" % (d, r), "w") as f:
        if sync:
            f.write("sync %d %.0f 140 %.0f\n" % (r, 0.9e9 - 1e3, 0.9e9))
        f.write("reduce %d %.0f 146 %.0f\n" % (r, t[r], leave[r]))
json.dump({"wait_states": [{"pattern": "early_reduce", "rank": 0, "line": 146, "file": "t/mpi_waits.c",
                            "seconds": 0.2, "caused_by": by}],
           "delay_costs": [{"rank": 1, "phase": "delay", "seconds": c1}, {"rank": 2, "phase": "delay", "seconds": c2}],
           "critical_path": {"seconds": 0.2, "ranks": [{"on_path_seconds": 0.2}],
                             "activities": [{"phase": "delay", "seconds": 0.2}]},
           "wait_ranks": []}, open("%s/prof.json" % d, "w"))
PY
	python3 "$(dirname "$0")/waits_check.py" "$dir/tie/prof.json" "$dir/tie"/truth.* --delay 200 >"$dir/tie.out"
}
tie 1 1 0.2 0 || die "waits_check refused the rank its stamps made last: $(cat "$dir/tie.out")"
tie 1 2 0 0.2 || die "waits_check refused the other rank of a tie: $(cat "$dir/tie.out")"
tie 1 0 0.2 0 && die "waits_check took the root as its own cause: $(cat "$dir/tie.out")"
tie 1 2 0.2 0 && die "waits_check took a tie's other rank with the cost left on the first: $(cat "$dir/tie.out")"
tie 0.001 2 0 0.2 && die "waits_check took a rank that left before the last came: $(cat "$dir/tie.out")"
tie 1 1 0.15 0 1 || die "waits_check refused a delay charged 3/4 of a wait the scheduler stretched: $(cat "$dir/tie.out")"
tie 1 1 0.1 0 1 && die "waits_check took a delay charged half of a wait it made 2/3 of: $(cat "$dir/tie.out")"
tie 1 1 0.15 0 && die "waits_check took a delay charged 3/4 of a wait nothing stretched: $(cat "$dir/tie.out")"

run mpi_waits 200 c
check c mpi_waits.c 200
live c
grep -q "^wait Late Sender: rank 0, MPI_Recv at late_sender (.*mpi_waits.c:[0-9]*): [0-9.]* ms, caused by rank 1$" \
	"$dir/c.live" || die "colopmon --waits named no Late Sender caused by rank 1: $(grep '^wait' "$dir/c.live")"
grep -q "snapshot of job .* Late Sender was [0-9.]*% of the ranks' time in MPI over the last second" "$dir/c.trig" ||
	die "colopmon --wait-above late_sender:20 did not fire: $(cat "$dir/c.trig")"
"$BIN/esprofile" -o "$dir/snap.prof" "$dir/c.snap" || die "esprofile of the trigger's snapshot failed"
grep -q "^Late Sender  " "$dir/snap.prof" || die "the snapshot holds no Late Sender: $(cat "$dir/snap.prof")"
run mpi_waits 0 balanced
check balanced mpi_waits.c --balanced
live balanced
run mpi_waits_f 200 f
check f mpi_waits_f.F90 200

# esview: the last second's wait states beside the balance, each caused by the rank that was late;
# the trigger wait=late_sender:20 freezes the view and keeps the black box; the page's table,
# and its lanes coloured by pattern (?waits=1)
if command -v chromium >/dev/null; then
	mkdir -p "$dir/v"
	# (its Late Sender step again until the trigger fired: a loaded machine
	# once ended the program before esview had seen a second of it)
	mpirun --oversubscribe --allow-run-as-root -np 3 "$BIN/esrun" -q -j "$job.v" "$BUILD/tests/mpi_waits" 300 "$dir/v" \
		"$dir/v/until" >"$dir/v.app" 2>&1 &
	app=$!
	"$BIN/esview" -w 30 --trigger wait=late_sender:20 --snapshot "$dir/vsnap" "$job.v" >"$dir/view.out" 2>&1 &
	view=$!
	wait_for 120 grep -q "^esview: snapshot of job $job.v in $dir/vsnap/1: Late Sender was [0-9.]*% of the ranks' time in MPI in the last second" \
		"$dir/view.out" || die "no wait trigger: $(cat "$dir/view.out")"
	touch "$dir/v/until"
	url=$(sed -n "s/^esview: job $job.v at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
	curl -sf "${url}data" >"$dir/v.json" || die "GET /data failed"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["waitstates"]
rows = [r for r in d["rows"] if r["pattern"] == "late_sender" and r["rank"] == 0 and r["by"] == 1]
assert rows and rows[0]["ms"] > 250 and "mpi_waits.c:" in rows[0]["site"], d["rows"]
assert d["patterns"]["late_sender"] > 250 and d["bars"], d
j = d["judged"]  # what it judged since the start, and what it could not
assert j["receives"] > 0 and j["unpaired"] == 0 and j["unseen_calls"] == 0, j' "$dir/v.json" || die "esview's wait states: $(cat "$dir/v.json" | tail -c 800)"
	profile=$(mktemp -d -p "$dir")
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" --virtual-time-budget=3000 \
		--dump-dom "${url}?waits=1" >"$dir/dom" 2>/dev/null || die "chromium failed"
	grep -q '<tr class="ws" data-pattern="late_sender" data-rank="0" data-by="1">' "$dir/dom" ||
		die "the page's wait states: $(grep -o '<table id="wstates">.\{0,600\}' "$dir/dom")"
	grep -q 'data-waitbars="[1-9][0-9]*"' "$dir/dom" || die "the lanes' waiting time not drawn"
	grep -q 'ms in MPI; since the start [1-9][0-9]* receives' "$dir/dom" ||
		die "the page does not say what it judged: $(grep -o '<div id="wsline">.\{0,300\}' "$dir/dom")"
	kill "$view"; wait "$view" 2>/dev/null; view=""
	wait "$app" || die "mpi_waits under esview failed: $(cat "$dir/v.app")"
	app=""
	"$BIN/esprofile" "$dir/vsnap/1" >"$dir/vsnap.prof" || die "esprofile of esview's snapshot failed"
fi

# the page says them with Scalasca's names, and what it judged
"$BIN/esprofile" -o "$dir/c.prof" "$dir/c.ar" || die "esprofile failed"
for p in "Late Sender" "Late Sender, Wrong Order (different source)" "Late Receiver" "Wait at Barrier" \
	"Wait at NxN" "Late Broadcast" "Early Reduce" "Early Scan" "Late Post" "Early Wait"; do
	grep -q "^$p  " "$dir/c.prof" || die "the page has no $p row: $(sed -n '/Wait states/,$p' "$dir/c.prof")"
done
grep -q "MPI_Wait(Ibcast)" "$dir/c.prof" || die "the Ibcast's wait not named on the page"
grep -q "^judged: 5 receives, 5 sends that may have waited, 23 collectives and one-sided epochs; 6 calls of no pattern (neighbourhood, communicators, windows made)$" "$dir/c.prof" ||
	die "judged: $(grep '^judged' "$dir/c.prof")"

# OTF2: each pattern a metric, its last value on each location the seconds that location waited so
"$BIN/esconvert" -q --otf2 "$dir/o" "$dir/c.ar" || die "esconvert --otf2 failed"
otf2-print "$dir/o/traces.otf2" >"$dir/o.txt" 2>"$dir/o.err" || die "otf2-print: $(cat "$dir/o.err")"
python3 - "$dir/o.txt" "$dir/c.json" <<'PY' || die "OTF2's wait-state metrics: see above"
import json, re, sys
from collections import defaultdict
last = {}
for ln in open(sys.argv[1]):
    m = re.match(r'METRIC\s+(\d+)\s+\d+\s+Metric: \d+, 1 Value: \("([^"]+)" <\d+>; DOUBLE; ([-0-9.e+]+)\)', ln)
    if m:
        last[(int(m.group(1)), m.group(2))] = float(m.group(3))
otf2 = defaultdict(float)
for (loc, name), v in last.items():
    otf2[name] += v
prof = defaultdict(float)
for w in json.load(open(sys.argv[2]))["wait_states"]:
    if "Wrong Order" not in w["name"] and "Completion" not in w["name"]:
        prof[w["name"]] += w["seconds"]
bad = [n for n in set(otf2) | set(prof) if abs(otf2[n] - prof[n]) > 1e-4 * prof[n] + 1e-5]
if bad or len(prof) < 7:
    print("OTF2 %s, the profile %s" % (dict(otf2), dict(prof))); sys.exit(1)
PY
exit 0
