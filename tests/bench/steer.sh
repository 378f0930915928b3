#!/bin/sh
# steer.sh - steering against MOSS's tables: a sensor of 12 bytes and of 10 KB, the round trip from a publication to its action applied by a monitor's rule here and through a tuple server on another host (a network namespace), a rule migrated into the application, a counting handler's cost an event; and the wind tunnel's speed with its object published and four handlers loaded, beside null pairs.
#
# usage: steer.sh BUILDDIR [PAIRS]
# Ends with: steer: sensor_ns_12B=.. sensor_ns_10KB=.. roundtrip_us=.. roundtrip_remote_us=.. migrated_us=.. handler_ns_per_event=.. rules16_firing_ns=.. rules16_idle_ns=.. flood_slowest_us=..
set -u
build=$(cd "${1:?usage: steer.sh BUILDDIR [PAIRS]}" && pwd)
pairs=${2:-7}
bench_job=bst
. "$(dirname "$0")/lib.sh"
steer=$build/bench/steer
[ -x "$steer" ] || { echo "steer: no $steer: make bench builds it"; exit 2; }

local=$("$steer" local "$build/lib/handlers/count.so" 2>&1) || { echo "steer: $local"; exit 1; }
echo "$local" | grep -v "^steer-local:"
line=$(echo "$local" | sed -n 's/^steer-local: //p')
get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# through a tuple server on another host: the application serves its
# segment on a bridge, the monitor runs in a network namespace of its own
remote=-
ns="stn$$" pre="10.$((100 + $$ % 100)).$(($$ / 100 % 250))"
if ip netns add "$ns" 2>/dev/null; then
	ip link add "stv$$" type veth peer name eth0 netns "$ns" && ip addr add "$pre.1/24" dev "stv$$" &&
		ip link set "stv$$" up && ip -n "$ns" addr add "$pre.2/24" dev eth0 && ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up || echo "steer: no veth into $ns"
	echo "steer-secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/secret"
	chmod 600 "$dir/secret"
	"$steer" serve "$pre.1" "$dir/secret" "$dir/port" 500 >"$dir/far" 2>&1 &
	app=$!
	n=0; while [ ! -s "$dir/port" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	read -r port seg <"$dir/port"
	ip netns exec "$ns" "$steer" monitor "$pre.1:$port/$seg" "$dir/secret" >"$dir/farmon" 2>&1 &
	mon=$!
	wait $app
	kill $mon 2>/dev/null; wait $mon 2>/dev/null
	remote=$(sed -n 's/^steer: roundtrip_remote_us=//p' "$dir/far")
	echo "steer: round trip through a tuple server on another host (a network namespace): ${remote:--} us"
	[ -n "$remote" ] || { remote=-; cat "$dir/far" "$dir/farmon"; }
	ip netns del "$ns" 2>/dev/null; ip link del "stv$$" 2>/dev/null
else
	echo "steer: no network namespace (not root?): the remote round trip is not measured"
fi

# the wind tunnel: with its object published (every totals' allreduce,
# about 12 Hz) and colopmon running four handlers, against without either
# (colopmon still watching), in interleaved pairs; site updates a second
run() { # run bare|steered: its site updates a second
	j="$job.$1"
	if [ "$1" = bare ]; then extra=--no-object; hs=""; else extra=""; hs=1; fi
	mpirun --oversubscribe --allow-run-as-root -np 2 "$bin/windtunnel" -s small -t 2000 -c -j "$j" --stats-every 50 \
		-q $extra >"$dir/wt.$1" 2>&1 &
	w=$!
	if [ -n "$hs" ]; then
		"$bin/colopmon" -q -w 10 --handler "$build/lib/handlers/count.so" --handler "$build/lib/handlers/count.so:filter=write" \
			--handler "$build/lib/handlers/msgsize.so" --handler "$build/tests/handler_test.so:tag=four" "$j" >/dev/null 2>&1 &
	else
		"$bin/colopmon" -q -w 10 "$j" >/dev/null 2>&1 &
	fi
	c=$!
	wait $w; wait $c
	rm_segments "$j"
	sed -n 's/.* site updates in .*: \([0-9.e+]*\) per second.*/\1/p' "$dir/wt.$1"
}
: >"$dir/r"; : >"$dir/null"
prev=""
for i in $(seq 1 "$pairs"); do
	if [ $((i % 2)) = 1 ]; then a=$(run bare); b=$(run steered); else b=$(run steered); a=$(run bare); fi
	[ -n "$a" ] && [ -n "$b" ] || continue
	ratio "$b" "$a" >>"$dir/r"
	[ -n "$prev" ] && ratio "$a" "$prev" >>"$dir/null"
	prev=$a
done
wt=$(median <"$dir/r") null=$(median <"$dir/null")
echo "steer: the wind tunnel with its object published and four handlers in colopmon, over without either:" \
	"median $wt ($(spread <"$dir/r")) over $pairs pairs; null (bare over the pair before) $null ($(spread <"$dir/null"))"
echo "steer: sensor_ns_12B=$(get sensor_ns_12B) sensor_ns_10KB=$(get sensor_ns_10KB) roundtrip_us=$(get roundtrip_us)" \
	"roundtrip_remote_us=$remote migrated_us=$(get migrated_us) handler_ns_per_event=$(get handler_ns_per_event)" \
	"rules16_firing_ns=$(get rules16_firing_ns) rules16_idle_ns=$(get rules16_idle_ns) flood_slowest_us=$(get flood_slowest_us)"
