#!/bin/sh
# t_sites.sh - esprofile's call sites against programs whose calls sit on known lines: C (one frame and call paths) and Fortran (each binding), with counts, bytes and polls as the program made them.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itsite$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
src=tests/integration/mpi_sites.c

# profile NAME ESRUN-ARGS... PROGRAM: a 2-rank run recorded in $dir/NAME.ar, its profile in $dir/NAME
profile() {
	name=$1
	shift
	"$BIN/esrecord" -w 30 -o "$dir/$name.ar" "$job.$name" 2>"$dir/$name.err" &
	rec=$!
	mpirun --oversubscribe --allow-run-as-root -np 2 -x MPI_SITES_POLLS="$dir/polls" \
		"$BIN/esrun" -q -j "$job.$name" "$@" >"$dir/$name.app" 2>&1 || die "$name: the program failed: $(cat "$dir/$name.app")"
	wait $rec || die "$name: esrecord failed: $(cat "$dir/$name.err")"
	"$BIN/esprofile" -o "$dir/$name" "$dir/$name.ar" || die "$name: esprofile failed"
}

# The call sites table: "ID LEV FILE LINE FUNCTION [CALL]" rows
sites() { awk '/^@--- Call sites/ { on = 1; getline; next } /^$/ { on = 0 } on' "$dir/$1"; }
# The line of a marker in the source
line_of() { grep -n "$1 \*/" "$src" | cut -d: -f1; }
# The site whose first frame is FILE:LINE calling CALL, from FUNCTION
site_at() { # NAME LINE CALL FUNCTION
	sites "$1" | awk -v l="$2" -v c="$3" -v f="$4" '$2 == 0 && $3 == "mpi_sites.c" && $4 == l && $6 == c && $5 == f { print $1 }'
}
# A site's count on a rank (or *), from the time statistics
count_of() { # NAME SITE RANK
	awk -v s="$2" -v r="$3" '/^@--- Call site time statistics/ { on = 1; getline; next } /^$/ { on = 0 }
		on && $2 == s && $3 == r { print $4 }' "$dir/$1"
}

profile one "$BUILD/tests/mpi_sites"
polls=$(cat "$dir/polls")
# marker call function count-rank0 count-rank1 (- none)
while read -r marker call fn c0 c1; do
	l=$(line_of "site:$marker")
	[ -n "$l" ] || die "no marker site:$marker in $src"
	id=$(site_at one "$l" "$call" "$fn")
	[ "$(echo "$id" | wc -w)" -eq 1 ] || die "site:$marker: not one site at $src:$l calling $call from $fn: '$id'
$(sites one)"
	[ "$c1" = POLLS ] && c1=$polls
	for r in 0 1; do
		eval want=\$c$r
		got=$(count_of one "$id" $r)
		[ "${got:--}" = "$want" ] || die "site:$marker (site $id) on rank $r: count ${got:-none}, expected $want"
	done
done <<EOF
sendrecv Sendrecv exchange 6 6
allreduce_a Allreduce reduce_twice 3 3
allreduce_b Allreduce reduce_twice 3 3
barrier_fn Barrier barrier_from 4 4
barrier_main Barrier main 1 1
gatherv Gatherv main 1 1
send Send main 1 -
send_small Send main 1 -
recv Recv main - 2
irecv Irecv main - 1
barrier_poll0 Barrier main 1 -
barrier_poll1 Barrier main - 1
test Test main - POLLS
send_poll Send main 1 -
EOF
[ "$(sites one | awk '$2 == 0' | wc -l)" -eq 14 ] || die "not 14 call sites: $(sites one)"
# bytes sent from each site, as the program sent them
sent() { # SITE RANK: count max mean min sum
	awk -v s="$1" -v r="$2" '/^@--- Call site message sent/ { on = 1; getline; next } /^$/ { on = 0 }
		on && $2 == s && $3 == r { print $4, $5, $6, $7, $8 }' "$dir/one"
}
id=$(site_at one "$(line_of site:sendrecv)" Sendrecv exchange)
[ "$(sent "$id" '*')" = "12 512 512.0 512 6144" ] || die "Sendrecv's bytes: $(sent "$id" '*')"
id=$(site_at one "$(line_of site:send)" Send main)
[ "$(sent "$id" 0)" = "1 400 400.0 400 400" ] || die "the first Send's bytes: $(sent "$id" 0)"
id=$(site_at one "$(line_of site:send_small)" Send main)
[ "$(sent "$id" 0)" = "1 40 40.0 40 40" ] || die "the second Send's bytes: $(sent "$id" 0)"
# an in-place gather: the root's own share (3 ints), rank 1's 5
id=$(site_at one "$(line_of site:gatherv)" Gatherv main)
[ "$(sent "$id" 0)" = "1 12 12.0 12 12" ] || die "the in-place Gatherv's root: $(sent "$id" 0)"
[ "$(sent "$id" 1)" = "1 20 20.0 20 20" ] || die "the Gatherv's rank 1: $(sent "$id" 1)"
grep -q "^@--- Aggregate time by call site" "$dir/one" || die "no aggregate time by call site"
# the communicator's totals: 13 collectives of 80 bytes (12 Allreduces' 4,
# the Gatherv's 12 and 20), 15 messages of 6,588 bytes (12 Sendrecvs' 512,
# 400, 40 and 4)
awk '/^@--- Communicators/ { on = 1; getline; next } on && $1 == "WORLD" { print $2, $3, $5, $6, $7; exit }' \
	"$dir/one" | grep -q "^2 13 80 15 6588$" || die "WORLD's totals: $(grep -A2 '^@--- Communicators' "$dir/one")"
# the JSON's slices name their arguments: rank 0's first Send
"$BIN/esconvert" -q --json "$dir/one.json" "$dir/one.ar" || die "esconvert --json failed"
python3 - "$dir/one.json" "tests/integration/mpi_sites.c:$(line_of site:send)" <<'PY' || die "the JSON's MPI_Send slice: see above"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sends = [e for e in ev if e.get("ph") == "X" and e["name"] == "MPI_Send" and e["args"].get("site") == sys.argv[2]]
want = {"bytes": 400, "to": 1, "tag": 7, "comm": "MPI_COMM_WORLD", "site": sys.argv[2], "function": "main"}
if len(sends) != 1 or sends[0]["args"] != want:
    print("MPI_Send slices at %s: %s, expected one with %s" % (sys.argv[2], [s["args"] for s in sends], want))
    sys.exit(1)
colls = [e for e in ev if e.get("ph") == "X" and e["name"] == "MPI_Allreduce"]
if not colls or any(set(c["args"]) != {"bytes", "number", "comm", "site", "function"} for c in colls):
    print("MPI_Allreduce slices' arguments: %s" % [c["args"] for c in colls])
    sys.exit(1)
PY
# esprofile --json: the same rows, for scripts
"$BIN/esprofile" --json -o "$dir/one.json" "$dir/one.ar" || die "esprofile --json failed"
python3 - "$dir/one.json" "$(line_of site:sendrecv)" "$(sites one | wc -l)" <<'PY' || die "esprofile --json: see above"
import json, sys
p = json.load(open(sys.argv[1]))
line, nsites = int(sys.argv[2]), int(sys.argv[3])
sr = [s for s in p["sites"] if s["call"] == "MPI_Sendrecv" and s["frames"][0]["line"] == line]
def bad(why): print(why); sys.exit(1)
if len(p["sites"]) != nsites or len(sr) != 1 or sr[0]["frames"][0]["function"] != "exchange":
    bad("sites: %s" % p["sites"])
st = {(r["site"], r["rank"]): r for r in p["site_stats"]}
if st[(sr[0]["site"], 0)]["count"] != 6 or st[(sr[0]["site"], -1)]["sent"] != {"count": 12, "bytes": 6144, "min": 512, "max": 512}:
    bad("Sendrecv's site rows: %s" % [r for k, r in st.items() if k[0] == sr[0]["site"]])
if any(k[0] not in {s["site"] for s in p["sites"]} for k in st):
    bad("a site row of no site")
calls = {(c["call"], c["rank"]): c["count"] for c in p["calls"]}
if calls[("MPI_Sendrecv", -1)] != 12 or len(p["ranks"]) != 2 or p["ranks"][1]["host"] == "":
    bad("calls or ranks: %s %s" % (calls, p["ranks"]))
PY
# OTF2: each call's Enter names its call site as a source code location
"$BIN/esconvert" -q --otf2 "$dir/o" "$dir/one.ar" || die "esconvert --otf2 failed"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print: $(cat "$dir/p.err")"
[ -s "$dir/p.err" ] && die "otf2-print warned: $(cat "$dir/p.err")"
n=$(grep -A1 '^ENTER .*Region: "MPI_Sendrecv"' "$dir/p.txt" |
	grep -c "\"callsite\" <0>; SOURCE_CODE_LOCATION; \"tests/integration/mpi_sites.c:$(line_of site:sendrecv)\"")
[ "$n" -eq 12 ] || die "OTF2: $n of 12 MPI_Sendrecv enters name their call site"
# the header: what ran, where and when
grep -q "^@ Command      : .*/tests/mpi_sites$" "$dir/one" || die "header: no command: $(head -8 "$dir/one")"
grep -q "^@ Ranks        : 2 on 1 host ($(hostname))$" "$dir/one" || die "header: ranks: $(head -8 "$dir/one")"
grep -q "^@ Start time   : 20[0-9][0-9]-[01][0-9]-[0-3][0-9] [0-9:]*$" "$dir/one" || die "header: start: $(head -8 "$dir/one")"
grep -q "^@ Stop time    : [0-9-]* [0-9:]*$" "$dir/one" || die "header: stop: $(head -8 "$dir/one")"
grep -q "^@ Rank 1      : $(hostname), pid [0-9]*$" "$dir/one" || die "header: rank 1: $(head -8 "$dir/one")"

# Call paths of two frames: exchange's Sendrecv from each of its two callers
profile two -k 2 "$BUILD/tests/mpi_sites"
for caller in exchange_loop:5 exchange_once:1; do
	l=$(line_of "caller:${caller%:*}")
	id=$(sites two | awk -v l="$l" '$2 == 1 && $3 == "mpi_sites.c" && $4 == l && $5 == "main" { print $1 }')
	[ "$(echo "$id" | wc -w)" -eq 1 ] || die "-k 2: no one path through $src:$l: '$id'
$(sites two)"
	sites two | awk -v id="$id" -v l="$(line_of site:sendrecv)" '$1 == id && $2 == 0 && $4 == l && $6 == "Sendrecv" { ok = 1 } END { exit !ok }' ||
		die "-k 2: the path through $src:$l does not start at the Sendrecv"
	[ "$(count_of two "$id" 0)" = "${caller#*:}" ] || die "-k 2: ${caller%:*}: count $(count_of two "$id" 0)"
done
# -k 0: no call site kept, none on the page
profile zero -k 0 "$BUILD/tests/mpi_sites"
grep -q "^@--- Call sites" "$dir/zero" && die "-k 0: call sites on the page"
grep -q "^MPI_Sendrecv  *0  *6 " "$dir/zero" || die "-k 0: the calls not counted: $(cat "$dir/zero")"
out=$(mpirun --oversubscribe --allow-run-as-root -np 1 "$BIN/esrun" -k 8 true 2>&1) && die "esrun -k 8 ran"
echo "$out" | grep -q "^esrun: --callpath '8': expected frames, 0 to 7$" || die "esrun -k 8: $out"

# Fortran: every binding's calls at their lines of mpi_fortran.F90 (mpi_f08
# through Open MPI's own binding library, unwound past it)
for b in 77 90 08; do
	mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_EXPECT_DIR="$dir" "$BIN/esrun" -q -j "$job.f$b" \
		"$BUILD/tests/mpi_fortran$b" >"$dir/f$b.app" 2>&1 &
	app=$!
	"$BIN/esprofile" -w 30 -o "$dir/f$b" "$job.f$b" 2>"$dir/f$b.err" || die "f$b: esprofile failed: $(cat "$dir/f$b.err")"
	wait $app || die "mpi_fortran$b failed: $(cat "$dir/f$b.app")"
	n=$(sites "f$b" | awk '$2 == 0' | wc -l)
	[ "$n" -ge 30 ] || die "f$b: $n call sites: $(sites "f$b")"
	# named as the program is, not gfortran's MAIN__
	sites "f$b" | awk '$2 == 0 && ($3 != "mpi_fortran.F90" || $5 != "mpi_fortran") { print; bad = 1 } END { exit bad }' ||
		die "f$b: a call site outside the program mpi_fortran"
	# with the mpi and mpi_f08 modules gfortran's line table puts some
	# calls at the program's last lines (addr2line reads them the same):
	# the lines are held to the program's own only with mpif.h
	[ "$b" = 77 ] || continue
	# (a call continued on a second line is at either; gfortran's line
	# table puts a call at the end of a DO WHILE body at the loop's line)
	sites "f$b" | awk '$2 == 0 { print $4, $6 }' >"$dir/f$b.lines"
	while read -r l call; do
		sed -n "$((l - 1)),$((l + 1))p" tests/integration/mpi_fortran.F90 | grep -qi "call MPI_$call(" ||
			die "f$b: site at mpi_fortran.F90:$l is not a call of MPI_$call: $(sed -n "${l}p" tests/integration/mpi_fortran.F90)"
	done <"$dir/f$b.lines"
done

# C++: a template method in a namespace, inlined into main at -O2, named
# as written, by the line the call is on
profile cxx "$BUILD/tests/mpi_sites_cxx"
"$BIN/esprofile" --json -o "$dir/cxx.json" "$dir/cxx.ar" || die "cxx: esprofile --json failed"
l=$(grep -n "// site:cxx" tests/integration/mpi_sites_cxx.cc | cut -d: -f1)
python3 - "$dir/cxx.json" "$l" <<'PY' || die "cxx: the Sendrecv's site not named as written"
import json, sys
p = json.load(open(sys.argv[1]))
sr = [s for s in p["sites"] if s["call"] == "MPI_Sendrecv"]
ok = len(sr) == 1 and sr[0]["frames"][0]["function"] == "solver::Halo<double>::exchange(double*, double*)" \
     and sr[0]["frames"][0]["line"] == int(sys.argv[2]) and sr[0]["frames"][0]["file"].endswith("mpi_sites_cxx.cc")
if not ok:
    print(sr)
sys.exit(not ok)
PY

# a stripped program: no lines, and the header says once why and what to do
cp "$BUILD/tests/mpi_sites" "$dir/stripped" && strip "$dir/stripped" || die "cannot strip a copy of mpi_sites"
profile st "$dir/stripped"
n=$(sites st | awk '$2 == 0' | wc -l)
grep -q "^@ Lines        : $n of $n call sites have no file and line (stripped and perhaps others have no debug information): build with -g, or install the distribution's debug symbols" "$dir/st" ||
	die "stripped: the header does not say why there are no lines: $(head -12 "$dir/st")"
grep -q "^@ Lines" "$dir/one" && die "a program built with -g said to have no lines: $(grep '^@ Lines' "$dir/one")"
# stripped, but exporting its functions: a site in one of them by its name and offset; one in a
# static function, whose code is no exported function's, by the program and offset (never by the
# nearest name before it, which would say the wrong function)
cp "$BUILD/tests/mpi_sites_dyn" "$dir/dynbin" && strip "$dir/dynbin" || die "cannot strip a copy of mpi_sites_dyn"
profile dyn "$dir/dynbin"
sites dyn | awk '$2 == 0 && $5 !~ /^main(\+0x[0-9a-f]+)?$/ && $5 != "-" { bad = 1 } $5 ~ /^main/ { m++ } $5 == "-" { o++ }
	END { exit bad || !m || !o }' || die "dyn: sites not named by the function that holds them: $(sites dyn)"
"$BIN/esprofile" --json -o "$dir/dyn.json" "$dir/dyn.ar" || die "dyn: esprofile --json failed"
python3 - "$dir/dyn.json" <<'PY' || die "dyn: a site without a function has no module and offset"
import json, sys
fr = [s["frames"][0] for s in json.load(open(sys.argv[1]))["sites"] if s["frames"]]
assert any(f["function"] in ("", "-") for f in fr), fr
assert all(f["module"].endswith("/dynbin") and f["offset"] > 0 for f in fr if f["function"] in ("", "-")), fr
PY

# Fortran module procedures as module::name, an internal procedure under its host
profile mod "$BUILD/tests/mpi_module_f"
sites mod | awk '$2 == 0 && $6 == "Sendrecv" && $5 == "halo_mod::exchange" { a = 1 }
	$2 == 0 && $6 == "Barrier" && $5 == "halo_mod::exchange::settle" { b = 1 } END { exit !(a && b) }' ||
	die "mod: module procedures not named module::name: $(sites mod)"
exit 0
