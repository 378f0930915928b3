#!/bin/sh
# view.sh - what esview costs a job, against heartbeat at the same rate, side by side on LAMMPS and the wind tunnel; and ten browsers against one.
#
# usage: view.sh BUILDDIR [PAIRS]
# Every run records every call (esrun) and is watched by one monitor:
# heartbeat pulling ten times a second (-p 100), or esview at its default
# rate (ten pulls a second, heartbeat's judgement once a second); first
# alone, then each with a browser asking ten times a second (esview's
# data; beside heartbeat, a static page as big).  Runs alternate
# hb view | view hb | ..., so each pair's ratio is the job's throughput
# under esview over that under heartbeat (above 1: the view cost less),
# and each border puts one setting twice in a row: the null pairs, what a
# change that costs nothing measures here.  Then esview with ten browsers
# against one on the wind tunnel, with esview's own CPU seconds.  The
# browsers are one Python process keeping a connection each, asking what
# the page asks; they stand in for browsers on the user's own machine, so
# they run here at nice 19 (what they still take is in the ratios).
# Ends with: view: lammps=R (null N) lammps_browser=R (null N) windtunnel_browser=R (null N) ten_browsers=R (null N) esview_cpu_s=ONE->TEN
set -u
build=$(cd "${1:?usage: view.sh BUILDDIR [PAIRS]}" && pwd)
pairs=${2:-7}
. "$(dirname "$0")/../apps/apps.sh"
bench_job=bview
. "$(dirname "$0")/lib.sh"
[ -x "$bin/esview" ] && [ -f "$build/lib/libescollect.so" ] || { echo "view: $build has no esview or libescollect.so"; exit 2; }

# browsers N PORT: N clients, each asking for /data ten times a second, until killed
browsers() {
	nice -n 19 python3 -c 'import http.client, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(n)]
while True:
    t = time.monotonic()
    for c in conns:
        try:
            c.request("GET", "/data?shown=2512&bins=425")
            c.getresponse().read()
        except Exception:
            c.close()
    time.sleep(max(0.0, 0.1 - (time.monotonic() - t)))' "$1" "$2" &
	clients=$!
}

# static: a server of one file as big as esview's answer on a wind tunnel
# (20 KB), saying its URL as esview does: the control for browsers beside
# heartbeat, which has no page
static() {
	mkdir -p "$dir/static"
	head -c 20000 /dev/zero | tr '\0' 'x' >"$dir/static/data"
	# exec: run with &, $! must be the server's own pid, for the kill that ends it
	exec nice -n 19 python3 -c 'import http.server, os, sys
os.chdir(sys.argv[1])
class Q(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), Q)
print("esview: job static at http://127.0.0.1:%d/" % s.server_address[1], flush=True)
s.serve_forever()' "$dir/static"
}

# watched MONITOR[:BROWSERS] JOB CMD...: runs CMD (the job, named JOB) under
# the monitor; prints CMD's figure, and esview's CPU seconds in $dir/cpu
watched() {
	mon=${1%%:*} nb=${1#*:} name=$2; shift 2
	clients=""
	srv=""
	if [ "$mon" = heartbeat ]; then
		"$bin/heartbeat" -q -p 100 -w 60 "$name" >/dev/null 2>&1 &
		m=$!
		if [ "$nb" != "$1" ]; then # its browsers ask a static page as big as esview's answer
			static >"$dir/esview.out" &
			srv=$!
		fi
	else
		"$bin/esview" -w 60 "$name" >"$dir/esview.out" 2>&1 &
		m=$!
	fi
	v=$("$@") || { kill $m; exit 1; }
	if [ "$mon" = esview ]; then
		port=$(sed -n 's/.*:\([0-9]*\)\/$/\1/p' "$dir/esview.out")
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$m/stat" >"$dir/cpu"
	fi
	[ -n "$clients" ] && kill "$clients" 2>/dev/null && wait "$clients" 2>/dev/null
	kill $m $srv 2>/dev/null
	wait $m $srv 2>/dev/null
	rm_segments "$name"
	echo "$v"
}

# The browsers start once esview prints its port: a wrapper around the job.
with_browsers() { # with_browsers N CMD...
	n=$1; shift
	rm -f "$dir/esview.out"
	(
		i=0
		while ! grep -q "^esview: job .* at http" "$dir/esview.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
		port=$(sed -n 's/.*:\([0-9]*\)\/$/\1/p' "$dir/esview.out")
		browsers "$n" "$port"
		echo "$clients" >"$dir/clients"
		wait
	) &
	wrapper=$!
	v=$("$@")
	rc=$?
	kill "$(cat "$dir/clients" 2>/dev/null)" 2>/dev/null
	kill $wrapper 2>/dev/null
	wait $wrapper 2>/dev/null
	rm -f "$dir/clients"
	[ $rc = 0 ] && echo "$v"
}

# the wind tunnel's site updates per second per core
windtunnel() {
	mpirun --oversubscribe --allow-run-as-root -np 2 "$bin/esrun" -q -j "$1" "$bin/windtunnel" -q -s small -t 1500 \
		--transport mpi | awk '/site updates in/ { print $11 }'
}
lammps() { lammps_melt "$dir" 4000 "$bin/esrun" -q -j "$1"; }

# alternate NAME A B N WORKLOAD: N pairs of (A, B) in alternating order; ratio B / A
alternate() {
	name=$1 a=$2 b=$3 n=$4 work=$5
	: >"$dir/$name.ratios"; : >"$dir/$name.null"; : >"$dir/$name.cpu_a"; : >"$dir/$name.cpu_b"
	prev="" prevw=""
	for i in $(seq "$n"); do
		for w in $([ $((i % 2)) = 1 ] && echo "$a $b" || echo "$b $a"); do
			j="$job.$name$i${w%%:*}"
			nb=${w#*:}
			if [ "$nb" != "$w" ]; then
				x=$(with_browsers "$nb" watched "$w" "$j" "$work" "$j") || exit 1
			else
				x=$(watched "$w" "$j" "$work" "$j") || exit 1
			fi
			if [ "$w" = "$a" ]; then
				xa=$x
				[ -f "$dir/cpu" ] && cat "$dir/cpu" >>"$dir/$name.cpu_a"
			else
				xb=$x
				[ -f "$dir/cpu" ] && cat "$dir/cpu" >>"$dir/$name.cpu_b"
			fi
			rm -f "$dir/cpu"
			[ "$prevw" = "$w" ] && ratio "$x" "$prev" >>"$dir/$name.null"
			prev=$x prevw=$w
		done
		r=$(ratio "$xb" "$xa")
		echo "$r" >>"$dir/$name.ratios"
		printf "  %-10s pair %d: %s %s, %s %s: %s\n" "$name" "$i" "$a" "$xa" "$b" "$xb" "$r"
	done
}

echo "view: interleaved pairs at 2 ranks, every call recorded: heartbeat at 10 pulls a second against esview at its default rate"
alternate lammps heartbeat esview "$pairs" lammps
lr=$(median <"$dir/lammps.ratios") ln=$(median <"$dir/lammps.null")
echo "  LAMMPS melt steps/s under esview / under heartbeat: median $lr (pairs $(spread <"$dir/lammps.ratios")); null pairs $ln ($(spread <"$dir/lammps.null"))"
echo "view: ... each with a browser on this machine asking ten times a second (heartbeat's asks a static page as big)"
alternate lammpsb heartbeat:1 esview:1 "$pairs" lammps
lb=$(median <"$dir/lammpsb.ratios") lbn=$(median <"$dir/lammpsb.null")
echo "  LAMMPS melt steps/s, with browsers: median $lb (pairs $(spread <"$dir/lammpsb.ratios")); null pairs $lbn ($(spread <"$dir/lammpsb.null"))"
alternate windtunnel heartbeat:1 esview:1 "$pairs" windtunnel
wr=$(median <"$dir/windtunnel.ratios") wn=$(median <"$dir/windtunnel.null")
echo "  wind tunnel site updates/s, with browsers: median $wr (pairs $(spread <"$dir/windtunnel.ratios")); null pairs $wn ($(spread <"$dir/windtunnel.null"))"
alternate browsers esview:1 esview:10 "$pairs" windtunnel
br=$(median <"$dir/browsers.ratios") bn=$(median <"$dir/browsers.null")
c1=$(median <"$dir/browsers.cpu_a") c10=$(median <"$dir/browsers.cpu_b")
echo "  wind tunnel under esview with ten browsers / with one: median $br (pairs $(spread <"$dir/browsers.ratios")); null pairs $bn ($(spread <"$dir/browsers.null"))"
echo "  esview's CPU seconds a run (median): one browser $c1, ten $c10"
echo "view: lammps=$lr (null $ln) lammps_browser=$lb (null $lbn) windtunnel_browser=$wr (null $wn) ten_browsers=$br (null $bn) esview_cpu_s=$c1->$c10"
