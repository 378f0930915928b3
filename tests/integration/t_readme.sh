#!/bin/sh
# t_readme.sh - what the README and docs/ quote the programs as printing, they print: its examples run as it describes them (heartbeat on the demo's stalled ring, esctl steering a job, psadm on a job one of whose ranks was killed), and every quoted message is found in their output (tests/integration/readme_check.py).
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itrm$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm_vader_orphans # the killed rank's
	rm -rf "$dir"
}
trap cleanup EXIT
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"

# the demo's ring, one rank stuck in its computation: heartbeat's stall lines
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job.ring" \
	"$BUILD/tests/ring_demo" 5 >/dev/null 2>&1 &
app=$!
"$BIN/heartbeat" -p 500 -w 10 "$job.ring" >"$dir/heartbeat" 2>&1
wait $app || die "ring_demo failed"
app=""

# a job steered as the README steers run1, then one of its ranks killed
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.run" "$BUILD/tests/mpi_toggle" "$dir" \
	>/dev/null 2>&1 &
app=$!
wait_for 60 test -e "$dir/running" || die "mpi_toggle did not start"
wait_for 60 sh -c "\"$BIN/psadm\" show \"$job.run.r1\" | grep -q \"^  es.ctl \"" || die "rank 1 never made its control element"
{
	"$BIN/esctl" "$job.run" collect '[-all, MPI_Allreduce]'
	"$BIN/esctl" "$job.run" status
	"$BIN/esctl" "$job.run" pause
	"$BIN/esctl" "$job.run" resume
	"$BIN/esctl" "$job.run" collect all
} >"$dir/esctl" 2>&1 || die "esctl: $(cat "$dir/esctl")"
pid=$(pgrep -f "mpi_toggle $dir" | tail -1)
[ -n "$pid" ] || die "no rank of mpi_toggle found"
kill -9 "$pid"
end_job "$app"
app=""
"$BIN/psadm" list >"$dir/psadm" 2>&1

# a program's object steered as the README steers tunnel: an MPI program
# whose object is named as the wind tunnel's (mpi_objects' sim renamed)
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.obj" "$BUILD/tests/mpi_objects" "$dir/none" tunnel \
	>/dev/null 2>&1 &
app=$!
wait_for 60 sh -c "\"$BIN/esctl\" $job.obj objects | grep -c '^rank [01]: tunnel' | grep -qx 2" || die "mpi_objects: no object"
{
	"$BIN/esctl" "$job.obj" set tunnel.inflow=0.6
	"$BIN/esctl" "$job.obj" set tunnel.inflow=2
	"$BIN/esctl" "$job.obj" call tunnel.stop
} >"$dir/steer" 2>&1
wait $app || die "mpi_objects failed: $(cat "$dir/steer")"
app=""

cat "$(dirname "$0")/../../README.md" "$(dirname "$0")"/../../docs/*.md >"$dir/docs.md"
python3 "$(dirname "$0")/readme_check.py" "$dir/docs.md" "$dir/heartbeat" "$dir/esctl" "$dir/psadm" \
	"$dir/steer" ||
	die "the README quotes what the programs do not print (their output: $(cat "$dir/heartbeat" "$dir/esctl" "$dir/psadm" "$dir/steer"))"

# a README a newcomer reads: short, every layer's folder with its own
# README, and every link of the README, docs/ and the folders' READMEs
# to a file that is there
src=$(cd "$(dirname "$0")/../.." && pwd)
lines=$(wc -l <"$src/README.md")
[ "$lines" -le 250 ] || die "the README is $lines lines, over 250"
for l in $(sed -n 's/^LAYERS="\(.*\)"/\1/p' "$src/mk/layers.sh"); do
	[ -f "$src/${l%%:*}/README.md" ] || die "${l%%:*}/ has no README.md"
done
for f in "$src/README.md" "$src"/docs/*.md "$src"/*/README.md; do
	d=$(dirname "$f")
	for l in $(grep -o '](\([^)#]*\)[#)]' "$f" | sed 's/^](//; s/[#)]$//' | grep -v '^https\?:\|^mailto:'); do
		[ -e "$d/$l" ] || die "${f#"$src"/} links to $l, which is not there"
	done
done
echo "t_readme: the quoted output found, $lines lines, every folder's README and link there"
