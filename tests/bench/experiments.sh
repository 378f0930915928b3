#!/bin/sh
# experiments.sh - the EventSpace paper's section 6 on this machine: collector cost, wind-tunnel slowdown with every collector on, observe rate against slowdown; writes docs/results/.
set -u
build=${1:?usage: experiments.sh BUILDDIR [remote]}
only=${2:-}   # remote: only section 5, into docs/results/remote.md
bench_job=exp
. "$(dirname "$0")/lib.sh"   # bin, a scratch $dir, $job, rm_segments, median
res=docs/results
mkdir -p "$res"
pairs=${PAIRS:-10}   # interleaved pairs of runs, without and with, for every slowdown
mpirun="mpirun --oversubscribe --allow-run-as-root -np 2"

# one wind-tunnel run: seconds (the slowest process), site updates per
# second per core, CPU seconds of its slice threads
run() { # run SIZE STEPS [args...]
	size=$1 steps=$2; shift 2
	out=$($mpirun "$bin/windtunnel" -q -s "$size" -t "$steps" -j "$job" ${RUN_ARGS:-} "$@") || { echo "wind tunnel failed" >&2; exit 1; }
	echo "$out" | grep -q ": conserved" || { echo "wind tunnel not conserved" >&2; exit 1; }
	rm_segments "$job"
	echo "$out" | awk '/site updates in/ {s = $6; u = $11} /CPU s$/ {c = $(NF - 2)} END {print s, u, c}'
}

# pairs SIZE STEPS "ARGS" [OBSERVER...]: $pairs interleaved pairs of runs,
# the second of each with the observers (observe MODE/RATE) watching, or
# with -c if there are none; which of the two goes first alternates, so
# that neither is always the one after a quiet moment.  Prints "median lo
# hi" of the wall-time ratios, the same of the CPU-time ratios, the plain
# runs' median seconds and site updates/s/core, the observers' median
# elements and rate, and "median lo hi" of the null pairs.
#
# The null pairs are a control that costs no runs: the alternation puts two
# runs of the same setting side by side at every pair's border (off on | on
# off | off on ...), and the ratio of the second to the first is what a
# change that costs nothing measures on this machine.  However little
# EventSpace costs, a slowdown's interval is not narrower than about theirs.
pairs() {
	size=$1 steps=$2 args=$3; shift 3
	obs="$*"
	: >"$dir/t"; : >"$dir/c"; : >"$dir/u"; : >"$dir/r"; : >"$dir/seq"
	for i in $(seq "$pairs"); do
		for half in $([ $((i % 2)) = 1 ] && echo "off on" || echo "on off"); do
			if [ "$half" = off ]; then
				set -- $(run "$size" "$steps" $args)
				off_t=$1 off_u=$2 off_c=$3
				echo "off $1" >>"$dir/seq"
				continue
			fi
			pids=""
			for o in $obs; do
				"$build/bench/observe" "$job" "${o#*/}" 120 "${o%/*}" >>"$dir/r" &
				pids="$pids $!"
			done
			if [ -n "$obs" ]; then set -- $(run "$size" "$steps" $args); else set -- $(run "$size" "$steps" $args -c); fi
			on_t=$1 on_c=$3
			echo "on $1" >>"$dir/seq"
			[ -n "$pids" ] && wait $pids
		done
		echo "$off_t $on_t" >>"$dir/t"
		echo "$off_c $on_c" >>"$dir/c"
		echo "$off_t $off_u" >>"$dir/u"
	done
	awk 'NR > 1 && $1 == last { print t, $2 } { last = $1; t = $2 }' "$dir/seq" >"$dir/null"
	null=$("$build/bench/interval" <"$dir/null" 2>/dev/null | cut -d' ' -f1-3)
	set -- $("$build/bench/interval" <"$dir/t") $("$build/bench/interval" <"$dir/c")
	echo "$1 $2 $3 $5 $6 $7 $(awk '{print $1}' "$dir/u" | median) $(awk '{print $2}' "$dir/u" | median) \
		$( [ -s "$dir/r" ] && awk '{print $1}' "$dir/r" | median || echo -) $( [ -s "$dir/r" ] && awk '{print $2}' "$dir/r" | median || echo -) \
		${null:-- - -}"
}

if [ "$only" != remote ]; then
echo "== 1. collector cost: on the wind tunnel's own paths (three collectors on each, the middle"
echo "==    one timed by the outer, as the paper does), and on a path in a tight loop beside LTTng-UST"
$mpirun "$bin/windtunnel" -q -s small -t 300 --nested -j "$job" >/dev/null || { echo "nested run failed" >&2; exit 1; }
set -- $("$build/bench/nested" "$job")
rm_segments "$job"
wt_median=$1 wt_mean=$2 wt_events=$3
echo "   on the wind tunnel's paths: median $wt_median ns, mean $wt_mean ns over $wt_events events"
coll=$("$build/bench/collector" | tail -n 1)
echo "   in a tight loop: $coll"

# The collectors' slowdown is the figure closest to 1: twice the pairs, so
# that its interval can tell 1% from 2%.
echo "== 2. slowdown with every collector on: $((2 * pairs)) interleaved pairs of runs, median ratio [95% interval]"
printf "| size | steps | plain s | slowdown [95%% interval] | CPU-time slowdown [95%% interval] | null pairs [95%% interval] | site updates/s/core |\n|---|---|---|---|---|---|---|\n" >"$res/slowdown.md"
for spec in "small 2000" "large 30"; do
	set -- $spec
	name=$1 steps=$2
	set -- $(pairs=$((2 * pairs)) pairs "$name" "$steps" "")
	echo "   $name: plain $7 s; with collectors $1 [$2, $3]; CPU time $4 [$5, $6]; null pairs ${11} [${12}, ${13}]; $8 site updates/s/core"
	printf "| %s | %s | %s | %s [%s, %s] | %s [%s, %s] | %s [%s, %s] | %s |\n" "$name" "$steps" "$7" "$1" "$2" "$3" "$4" "$5" "$6" "${11}" "${12}" "${13}" "$8" >>"$res/slowdown.md"
	eval "slow_$name=$1 slow_${name}_hi=$3 sups_$name=$8"
done
fi

# The wind tunnel the observers watch: small, collectors on; and the
# paper's scale, 160 threads with three collectors on each path (--nested):
# 2252 trace elements, as the paper's 140 threads x 16 had 2240.
watched="-c"
big="-c --nested -m 8 -l 20"

# 5. Watched through the tuple server (what a monitor on another host does,
# here over loopback): the server is a thread in the wind tunnel's first
# process, so its cost is the application's.
remote_section() {
	port=$((20000 + $$ % 20000))
	echo "== 5. the full view through the job's tuple server (--serve, loopback)"
	printf "| observer | trace elements | observe rate (Hz) | slowdown [95%% interval] |\n|---|---|---|---|\n" >"$res/remote.md"
	set -- $(RUN_ARGS="--serve --port $port" OBSERVE_SERVERS="127.0.0.1:$port" pairs small 1000 "$watched" all/max)
	rslow=$1 rslow_hi=$3
	echo "   remote full view (${9} elements), as fast as it can: ${10} Hz, slowdown $1 [$2, $3]"
	printf "| remote, every element, as fast as it can | %s | %s | %s [%s, %s] |\n" "$9" "${10}" "$1" "$2" "$3" >>"$res/remote.md"
	set -- $(RUN_ARGS="--serve --port $port" OBSERVE_SERVERS="127.0.0.1:$port" pairs small 1000 "$watched" all/100)
	rslow100=$1
	echo "   remote full view (${9} elements) at most 100 Hz: ${10} Hz, slowdown $1 [$2, $3]"
	printf "| remote, every element, at most 100 Hz | %s | %s | %s [%s, %s] |\n" "$9" "${10}" "$1" "$2" "$3" >>"$res/remote.md"
}
if [ "$only" = remote ]; then
	remote_section
	echo "experiments: remote_slowdown_at_max=$rslow remote_slowdown_at_100hz=$rslow100"
	exit 0
fi

echo "== 3. each kind of monitor on the running wind tunnel (small, collectors on, 2 processes,"
echo "==    182 trace elements; the observer as fast as it can; $pairs pairs each)"
printf "| monitor / view | trace elements | observe rate (Hz) | slowdown [95%% interval] | CPU-time slowdown |\n|---|---|---|---|---|\n" >"$res/monitors.md"
for spec in "one:geteventmon, one element:one/max" "thread:geteventmon, a thread view:thread:m0.s1/max" \
	    "all:geteventmon, every element:all/max" "beat:heartbeat (latest per thread):beat/max" \
	    "consume:geteventmon/colopmon consuming every event:consume/max"; do
	name=$(echo "$spec" | cut -d: -f2); obs=$(echo "$spec" | cut -d: -f3-)
	set -- $(pairs small 1000 "$watched" "$obs")
	echo "   $name: $9 elements, ${10} Hz, slowdown $1 [$2, $3], CPU time $4"
	printf "| %s | %s | %s | %s [%s, %s] | %s |\n" "$name" "$9" "${10}" "$1" "$2" "$3" "$4" >>"$res/monitors.md"
done
set -- $(pairs small 1000 "$watched" all/max beat/max consume/max thread:m0.s1/max)
echo "   four monitors at once: slowdown $1 [$2, $3]"
printf "| four at once (every element, heartbeat, consuming, a thread) | | | %s [%s, %s] | %s |\n" "$1" "$2" "$3" "$4" >>"$res/monitors.md"

echo "== 4. the full view at the paper's scale: 160 threads, three collectors on each path,"
echo "==    every trace element pulled; rate against slowdown ($pairs pairs each)"
printf "| configuration | trace elements | observe rate (Hz) | slowdown [95%% interval] | CPU-time slowdown [95%% interval] | null pairs [95%% interval] |\n|---|---|---|---|---|---|\n" >"$res/tradeoff.md"
: >"$res/tradeoff.dat"
for cfg in max 1000 100; do
	set -- $(pairs small 1200 "$big" "all/$cfg")
	label=$([ "$cfg" = max ] && echo "as fast as it can" || echo "at most $cfg Hz")
	echo "   full view ($9 elements), $label: ${10} Hz, slowdown $1 [$2, $3], CPU time $4 [$5, $6]; null pairs ${11} [${12}, ${13}]"
	printf "| %s | %s | %s | %s [%s, %s] | %s [%s, %s] | %s [%s, %s] |\n" "$label" "$9" "${10}" "$1" "$2" "$3" "$4" "$5" "$6" "${11}" "${12}" "${13}" >>"$res/tradeoff.md"
	echo "${10} $1 $2 $3" >>"$res/tradeoff.dat"
	[ "$cfg" = 1000 ] && rate_all=${10} elements_all=$9 slow_rate_all=$1 slow_rate_all_hi=$3
done

remote_section

if command -v gnuplot >/dev/null 2>&1; then
	gnuplot <<GP
set terminal png size 640,400
set output "$res/tradeoff.png"
set title "Observing every trace element of the wind tunnel (160 threads, 2 processes)"
set xlabel "observe rate (full pulls per second)"
set ylabel "wind-tunnel slowdown, median and 95% interval"
set logscale x
set grid
plot "$res/tradeoff.dat" using 1:2:3:4 with yerrorbars pt 7 title "full view, 2252 trace elements", \\
     "" using 1:2 with lines notitle, 1.02 with lines dt 2 title "1.02"
GP
	echo "== plot: $res/tradeoff.png"
fi
{
	echo "# Experiments (EventSpace paper, section 6), $(date -u +%Y-%m-%d)"
	echo
	echo "Measured by \`make experiments\` on this machine ($(nproc) cores). A slowdown is"
	echo "the median over $pairs interleaved pairs of wind-tunnel runs (one without, one"
	echo "with; which goes first alternates) of their ratio, with the 95% percentile"
	echo "bootstrap interval of that median in brackets: an interval that holds 1.00"
	echo "cannot tell the cost from the noise of this shared virtual machine.  The"
	echo "CPU-time slowdown is the same for the CPU time of the wind tunnel's own"
	echo "threads: what the observed program paid itself, whatever else ran."
	echo
	echo "The null pairs are a control taken from the same runs: the alternation"
	echo "puts two runs of the same setting next to each other at every pair's"
	echo "border, and the median of the second's time over the first's, with its"
	echo "interval, is what a change that costs nothing measures here.  A slowdown"
	echo "interval no wider than the null pairs' is as narrow as this machine allows."
	echo
	echo "## 1. Collector cost"
	echo
	echo "On the wind tunnel's own paths (small, 2 processes, 32 threads), three"
	echo "collectors on each path, the middle one timed by the outer: median"
	echo "**$wt_median ns**, mean $wt_mean ns, over $wt_events events. Between two of a"
	echo "thread's steps (milliseconds, megabytes of lattice) its trace elements"
	echo "leave the cache, so each event pays a few cache misses; the mean also"
	echo "catches the odd preemption between two stamps (32 threads on 2 cores)."
	echo
	echo "On a path in a tight loop (warm cache), beside an LTTng-UST tracepoint"
	echo "carrying the same fields in a live overwrite session:"
	echo
	echo "\`$coll\`"
	echo
	echo "## 2. Slowdown with a collector on every path and tree edge"
	echo
	echo "Small and large, 8 matrices x 4 slices, 32 threads on 2 processes, from"
	echo "$((2 * pairs)) pairs each.  The site updates/s/core are the plain runs' median."
	echo
	cat "$res/slowdown.md"
	echo
	echo "## 3. Each kind of monitor on the running wind tunnel"
	echo
	cat "$res/monitors.md"
	echo
	echo "## 4. Observing every trace element at the paper's scale: rate against slowdown"
	echo
	echo "The wind tunnel with 160 threads (8 matrices x 20 slices) and three collectors"
	echo "on every path (\`-c --nested\`): 2252 trace elements, the paper's 140 threads x 16"
	echo "had 2240.  Each run's observer pulls one tuple from every element."
	echo
	cat "$res/tradeoff.md"
	echo
	echo "## 5. Watched from elsewhere, through the job's tuple server"
	echo
	echo "The server is a thread in the wind tunnel's first process (\`--serve\`);"
	echo "the observer asks it over loopback for the newest tuple of every trace"
	echo "element, one request per pull. Both runs of each pair have the server."
	echo
	cat "$res/remote.md"
	echo
	[ -f "$res/tradeoff.png" ] && echo "![trade-off]($(basename "$res")/tradeoff.png)" | sed 's|results/||'
} >"$res/README.md"
echo "experiments: slowdown_small=$slow_small slowdown_small_hi=$slow_small_hi slowdown_large=$slow_large slowdown_large_hi=$slow_large_hi rate_all=$rate_all elements_all=$elements_all slowdown_at_rate_all_hi=$slow_rate_all_hi sups_per_core_small=$sups_small sups_per_core_large=$sups_large"
