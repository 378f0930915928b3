#!/bin/sh
# demo.sh - the EventSpace demo: the wind tunnel under mpirun with collectors on every path and monitors watching live, then an MPI program with a stuck rank.
set -u
build=$1
bin=$build/bin
job="wt$$"
tmp_hb=$(mktemp)
snap=$(mktemp -u)
cleanup() { for s in $("$bin/psadm" list | awk '{print $1}' | grep "^$job\|^ring$$\|^dead$$\|^far$$"); do "$bin/psadm" rm "$s" >/dev/null; done; rm -f "${srv:-}" "$tmp_hb"; rm -rf "$snap"; }
trap cleanup EXIT
echo "== 1. The wind tunnel: 8 matrices of 1920 x 960 sites, 4 slices each, 32 threads in 2 MPI"
echo "==    processes, border rows through PastSet elements, a collector on every path and tree edge."
echo "==    heartbeat and colopmon watch it from other processes while it runs."
echo
ES_KEEP=always mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_KEEP "$bin/windtunnel" -s small -t 12000 \
	-c -j "$job" --stats-every 50 -q &
app=$!
colop=$(mktemp) viewout=$(mktemp) hbout=$(mktemp)
"$bin/colopmon" -q -w 10 "$job" >"$colop" &
"$bin/esview" -w 10 "$job" >"$viewout" 2>&1 &
view=$!
"$bin/heartbeat" -p 1000 -w 10 "$job" >"$hbout" 2>&1 &
hb=$!
n=0; while ! grep -q "http://" "$viewout" && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
url=$(sed -n 's/^esview: job [^ ]* at //p' "$viewout")
echo "==    In a browser, while it runs: $url (esview: the job as lanes, who waits for whom, its"
echo "==    balance, and the tunnel's object: its values, and boxes that set them)"
echo
echo "== Steering: the tunnel exposes an object (steering/): its inflow and the plate's column,"
echo "==    writable, its mass flow and drag, published after each allreduce of the totals."
n=0; while ! "$bin/esctl" "$job" objects 2>/dev/null | grep -q "tunnel" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
"$bin/esctl" "$job" objects | sed 's/^/   /'
flow() { "$bin/esctl" "$job" objects 2>/dev/null | awk '$1 == "mass_flow" || $1 == "drag" || $1 == "step" { n = $1; getline; printf "%s %s  ", n, $2 } END { print "" }'; }
echo "== The mass flow out of the far end, twice a second; then the inflow raised from esctl:"
for i in 1 2 3; do printf "   "; flow; sleep 0.5; done
echo "   \$ esctl $job set tunnel.inflow=0.6"
"$bin/esctl" "$job" set tunnel.inflow=0.6 | sed 's/^/   /'
for i in 1 2 3 4 5 6 7 8; do printf "   "; flow; sleep 0.5; done
echo "== ... and the plate moved further in, as esview's box does (a POST with its page's token):"
tok=$(curl -sf "$url" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')
printf "   esview says: "
curl -sf -X POST -H "X-ES-Token: $tok" -H "Origin: ${url%/}" "${url}set?where=$job.t0&obj=tunnel&field=plate&value=1200" ||
	echo "(not asked)"
for i in 1 2 3 4; do printf "   "; flow; sleep 0.5; done
echo "== Every change, with who asked for it:"
"$bin/esctl" "$job" changes | sed 's/^/   /'
wait $app || { echo "demo: the wind tunnel failed" >&2; exit 1; }
wait $hb
echo
echo "== What heartbeat said of it, watching every second from another process:"
grep -v "^  m[0-9]" "$hbout" | tail -n 6; rm -f "$hbout"
# the ended job stays in esview (its trace spaces are kept) until the user
# has looked: Enter, or a minute; without a terminal the demo goes on
url=$(sed -n 's/^esview: job [^ ]* at //p' "$viewout")
if [ -t 0 ] && [ -n "$url" ]; then
	echo "==    esview still shows the ended job at $url"
	printf "==    press Enter to go on (the demo goes on by itself in 60 s) "
	timeout 60 sh -c 'read line' </dev/tty || echo
fi
kill $view 2>/dev/null; wait $view 2>/dev/null; rm -f "$viewout"
wait
echo
echo "== What colopmon saw of the totals' allreduce tree (contributions arriving at each node):"
tail -n 2 "$colop"; rm -f "$colop"
echo
echo "== Its trace spaces stay after the job (ES_KEEP=always; by default a job that ends cleanly"
echo "== removes them, and one whose process died keeps them for esrecord --remains):"
"$bin/psadm" list | grep "^$job"
echo "   e.g. $bin/geteventmon $job | head   (every event, and exactly how many were lost)"
echo
echo "== 2. Unmodified MPI code: 4 ranks pass a ring and allreduce, every MPI call recorded by"
echo "==    libescollect.so. One rank gets stuck in its own computation for two seconds:"
echo "==    heartbeat follows who waits for whom back to it (the 'stall:' lines)."
echo
lib="$(cd "$build/lib" && pwd)/libescollect.so"
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="ring$$" \
	"$build/tests/ring_demo" 5 &
app=$!
"$bin/heartbeat" -p 500 -w 10 "ring$$"
wait $app || { echo "demo: the MPI program failed" >&2; exit 1; }
echo
echo "== 3. The same ring with a bug: a third of the way in, every rank sends synchronously to"
echo "==    its right (MPI_Ssend) before it receives from its left. Nobody can go on, and"
echo "==    heartbeat names the cycle (exit status 3: a deadlock), then the job is ended."
echo
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="dead$$" \
	"$build/tests/ring_demo" 3 deadlock >/dev/null 2>&1 &
app=$!
# until heartbeat names the deadlock (-x), however loaded the machine; 30 s at most
"$bin/heartbeat" -p 500 -n 60 -w 10 -x --snapshot "$snap" "dead$$" >"$tmp_hb" 2>&1
hb=$?
grep -v "^  rank[0-9].thread" "$tmp_hb"
kill $app 2>/dev/null; wait $app 2>/dev/null
[ $hb -eq 3 ] || { echo "demo: heartbeat named no deadlock (status $hb)" >&2; exit 1; }
echo
echo "== heartbeat --snapshot kept the moment as an archive: each rank's last call, unfinished:"
"$bin/esconvert" -q --json "$snap.json" "$snap" && grep -o '"name":"MPI_Ssend"[^}]*"unfinished":true[^}]*' "$snap.json" |
	sed 's/^/   /' | head -4
rm -f "$snap.json"
echo
echo
echo "== 4. Across hosts: the same wind tunnel with its 2 ranks on 2 (pathmap) hosts; rows and totals"
echo "==    between them go through tuple servers the ranks found at start-up, and heartbeat"
echo "==    watches through those servers only, as it would from a workstation outside the cluster."
echo
srv=$(mktemp -u)
mpirun --oversubscribe --allow-run-as-root -np 2 "$bin/windtunnel" -s small -t 300 -c -q -j "far$$" \
	--hosts 2 --servers-out "$srv" >/dev/null &
app=$!
n=0; while [ ! -s "$srv" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
echo "   tuple servers: $(cat "$srv")"
"$bin/heartbeat" -p 500 -n 4 -w 10 --servers "$(cat "$srv")" "far$$" | grep --line-buffered -v "^  m[0-9]"
wait $app || { echo "demo: the wind tunnel across hosts failed" >&2; exit 1; }
echo
echo "== To watch your own program: mpirun -x LD_PRELOAD=$lib -x ES_JOB=NAME ./app"
echo "   then $bin/heartbeat NAME, $bin/geteventmon NAME or $bin/colopmon NAME;"
echo "   from another host add -x ES_SERVE=any -x ES_SECRET_FILE=F, then heartbeat --servers LIST."
