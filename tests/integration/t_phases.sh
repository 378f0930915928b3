#!/bin/sh
# t_phases.sh - phases named with es_region.h and MPI_Pcontrol (C and Fortran): esprofile's phase table as the programs made them, OTF2 regions, JSON slices, the timeline's marks; the programs run bare too.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itph$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
mpi() { mpirun --oversubscribe --allow-run-as-root -np 2 "$@"; }

# Without EventSpace the calls go to libesregion.so, which does nothing
mpi "$BUILD/tests/mpi_phases" >"$dir/bare" 2>&1 || die "mpi_phases without EventSpace: $(cat "$dir/bare")"
mpi "$BUILD/tests/mpi_phases_f" >"$dir/bare" 2>&1 || die "mpi_phases_f without EventSpace: $(cat "$dir/bare")"

# record PROGRAM: its archive in $dir/PROGRAM, its profile's phase rows in $dir/PROGRAM.phases
record() {
	"$BIN/esrecord" -w 30 -o "$dir/$1" "$job.$1" 2>"$dir/$1.err" &
	rec=$!
	mpi "$BIN/esrun" -q -j "$job.$1" "$BUILD/tests/$1" >"$dir/$1.app" 2>&1 || die "$1 failed: $(cat "$dir/$1.app")"
	wait $rec || die "$1: esrecord failed: $(cat "$dir/$1.err")"
	"$BIN/esprofile" -o "$dir/$1.prof" "$dir/$1" || die "$1: esprofile failed"
	# NAME RANK COUNT CALLS (names may hold a space: Pcontrol 2)
	awk '/^@--- Phases/ { on = 1; getline; next } /^$/ { on = 0 }
	     on { calls = $NF; n = $(NF - 4); r = $(NF - 5); NF -= 6; print $0 "|" r "|" n "|" calls }' \
		"$dir/$1.prof" | sort >"$dir/$1.phases"
}

record mpi_phases
# name, then per rank: times entered and the calls inside (mpi_phases.c says why)
for r in 0 1; do
	printf '%s\n' "Pcontrol 2|$r|1|1" "Pcontrol 3|$r|1|1" "inner|$r|1|1" "last|$r|1|1" "setup|$r|1|2" \
		"solve|$r|1|0" "step|$r|3|3"
done | sort >"$dir/want"
grep -v '|\*|' "$dir/mpi_phases.phases" | cmp -s - "$dir/want" ||
	die "mpi_phases' phases: $(cat "$dir/mpi_phases.phases"), expected $(cat "$dir/want")"
grep -q '^step|\*|6|6$' "$dir/mpi_phases.phases" || die "step over all ranks: $(cat "$dir/mpi_phases.phases")"

# OTF2: each phase a region, entered as often as the program did
"$BIN/esconvert" -q --otf2 "$dir/o" "$dir/mpi_phases" || die "esconvert --otf2 failed"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print: $(cat "$dir/p.err")"
n=$(grep -c '^ENTER .*Region: "step"' "$dir/p.txt")
[ "$n" -eq 6 ] || die "OTF2: $n ENTERs of step, expected 6"
grep -q '^ENTER .*Region: "Pcontrol 3"' "$dir/p.txt" || die "OTF2: no Pcontrol 3 region"
# JSON: phases are slices of category phase, calls nested inside
"$BIN/esconvert" -q --json "$dir/j.json" "$dir/mpi_phases" || die "esconvert --json failed"
python3 - "$dir/j.json" <<'PY' || die "the JSON's phases: see above"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
phases = sorted(e["name"] for e in ev if e["cat"] == "phase" and e["pid"] == 0)
want = sorted(["setup", "solve", "step", "step", "step", "inner", "Pcontrol 2", "Pcontrol 3", "last"])
if phases != want:
    print("rank 0's phase slices: %s, expected %s" % (phases, want)); sys.exit(1)
solve = [e for e in ev if e["name"] == "solve" and e["pid"] == 0][0]
inside = [e for e in ev if e["pid"] == 0 and e["name"] == "MPI_Allreduce"]
if len(inside) != 3 or any(not (solve["ts"] <= e["ts"] and e["ts"] + e["dur"] <= solve["ts"] + solve["dur"] + 0.002) for e in inside):
    print("MPI_Allreduce slices not inside solve: %s" % inside); sys.exit(1)
PY
# the timeline marks where rank 0's phases began
"$BIN/esconvert" -q --plot "$dir/pics" "$dir/mpi_phases" || die "esconvert --plot failed"
for name in setup solve "Pcontrol 2" last; do
	grep -q "^set label [0-9]* '$name' at " "$dir/pics/timeline.gp" || die "the timeline does not mark $name"
done

record mpi_phases_f
for r in 0 1; do printf '%s\n' "Pcontrol 5|$r|1|1" "fsolve|$r|1|2"; done | sort >"$dir/want"
grep -v '|\*|' "$dir/mpi_phases_f.phases" | cmp -s - "$dir/want" ||
	die "mpi_phases_f's phases: $(cat "$dir/mpi_phases_f.phases"), expected $(cat "$dir/want")"
exit 0
