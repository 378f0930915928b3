#!/bin/sh
# t_remote.sh - across hosts: the wind tunnel's ranks each in a network namespace of its own (own /dev/shm too), a monitor in a third watching them through their tuple servers only.
set -u
. "$(dirname "$0")/lib.sh"
wt="$BUILD/bin/windtunnel"
shim="$(cd "$BUILD/lib" 2>/dev/null && pwd)/libnetns_shim.so"
[ -x "$wt" ] && [ -f "$shim" ] || { echo "no $wt (sanitizer build): skipped"; exit 0; }
[ "$(id -u)" = 0 ] || { echo "skipped: network namespaces need root"; exit 0; }
command -v ip >/dev/null || { echo "skipped: no ip command (iproute2)"; exit 0; }

# Three namespaces on a bridge: es1 and es2 are the job's hosts, es0 the
# monitor's workstation.  Names and subnet unique to this run.
secret=$(mktemp) wrong=$(mktemp) out=$(mktemp) srv=$(mktemp -u) arch=$(mktemp -u)
cleanup() {
	[ -n "${app:-}" ] && end_job "$app"
	netns_down es
	rm -f "$secret" "$wrong" "$out" "$srv" "$arch.err"
	rm -rf "$arch" "$arch.otf2"
	rm_vader_orphans # those of the ranks killed
}
trap cleanup EXIT
netns_up es || { echo "skipped: this machine does not allow network namespaces (ip netns add failed)"; exit 0; }
chmod 600 "$secret" "$wrong"
echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$secret"
echo "not-the-secret-of-this-job" >"$wrong"

# mpirun talks to its ranks before they move; MPI itself over the bridge
mpi() {
	mpirun --oversubscribe --allow-run-as-root --mca btl self,tcp --mca btl_tcp_if_include "$br" \
		-x PMIX_MCA_gds=hash -x LD_PRELOAD="$shim" -x ES_TEST_NETNS="$ns1,$ns2" "$@"
}
# at0 (lib.sh): in es0, with an empty /dev/shm of its own

job="itrm$$"
# one matrix in four slices over the two hosts: border rows cross between them
args="-N 64 -m 1 -l 4 -t 60 -q"
# 1. The same lattice on two hosts as on one.
one=$(mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" $args -j "${job}a" | awk '/lattice digest/ {print $4}')
pm=$(mktemp --suffix=.yaml)
two=$(mpi -np 2 "$wt" $args -j "${job}b" --hosts 2 --listen any --secret-file "$secret" --servers-out "$srv" \
	--pathmap-out "$pm") ||
	die "windtunnel across namespaces failed: $two"
echo "$two" | grep -q ": conserved$" || die "not conserved across hosts: $two"
digest=$(echo "$two" | awk '/lattice digest/ {print $4}')
echo "digests: one host $one, two hosts $digest"
[ -n "$one" ] && [ "$one" = "$digest" ] || die "two hosts gave another lattice"
grep -q "^$pre.2:[0-9]*,$pre.3:[0-9]*$" "$srv" || die "servers not on the namespaces' addresses: $(cat "$srv")"
"$BIN/pathmap" show "$pm" | grep -q "m0.s2: \[h0's tuple server\] -> m0.s1.dn" || die "no row crossed the hosts"
rm -f "$pm"
rm -f "$srv"

# 2. A long run, watched from es0 while it goes.
mpi -np 2 "$wt" -N 128 -m 1 -l 4 -t 100000000 -c -q -j "${job}c" --stats-every 50 --hosts 2 \
	--listen any --secret-file "$secret" --servers-out "$srv" >"$out" 2>&1 &
app=$!
wait_for 30 test -s "$srv" || die "no tuple servers: $(cat "$out")"
servers=$(cat "$srv")
# watch WHEN: heartbeat from es0 until every thread of both hosts has been
# seen progressing: in the periods of one look, or, on a loaded machine
# where a thread's period holds no operation (the stats thread writes every
# 50 steps), of the looks until then (60 s at most); a stall is a judgement
# of the moment (status 1), a deadlock or an error not
watch() {
	progressed=""
	t_end=$(($(date +%s) + 60))
	while :; do
		hb=$(at0 "$BIN/heartbeat" -p 300 -n 3 -w 10 --servers "$servers" --secret-file "$secret" "${job}c")
		st=$?
		[ $st -le 1 ] || die "heartbeat from es0 $1 failed (status $st): $hb"
		echo "$hb" | grep -q "watching 5 threads" || die "heartbeat $1 did not see both hosts' threads: $hb"
		progressed=$( (echo "$progressed"; echo "$hb" | sed -n 's/^  *\([^ ]*\)  *[a-zA-Z ]*: progressed in [1-9][0-9]* periods.*/\1/p') |
			grep . | sort -u)
		[ "$(echo "$progressed" | grep -c .)" -ge 5 ] && return 0
		[ "$(date +%s)" -lt "$t_end" ] || die "heartbeat $1 saw these threads progress only: $progressed; last: $hb"
	done
}
watch "at first"
echo "$hb" | head -3
ev=$(at0 "$BIN/geteventmon" -n 3 -p 200 -w 10 --servers "$servers" --secret-file "$secret" "${job}c" 2>&1) ||
	die "geteventmon from es0 failed: $ev"
echo "$ev" | grep -q " m0\.s0 " && echo "$ev" | grep -q " m0\.s3 " ||
	die "geteventmon lacks events of one host"
echo "$ev" | tail -1
# recorded from es0 into an archive until told to stop, then converted
at0 "$BIN/esrecord" -w 10 --servers "$servers" --secret-file "$secret" -o "$arch" "${job}c" 2>"$arch.err" &
rec=$!
sleep 2
pkill -TERM -f "esrecord .* -o $arch " # itself: ip netns exec may stand between
wait "$rec" || die "esrecord from es0 failed: $(cat "$arch.err")"
cat "$arch.err"
grep -q "^ended: stopped" "$arch/INFO" || die "the archive does not say it was stopped: $(cat "$arch/INFO")"
grep -q "	m0\.s0$" "$arch/threads" && grep -q "	m0\.s3$" "$arch/threads" || die "the archive lacks a host's threads"
"$BIN/esconvert" --otf2 "$arch.otf2" "$arch" || die "the remote archive does not convert"
# the wrong secret is refused; the job does not notice
bad=$(at0 "$BIN/heartbeat" -n 1 -w 1 --servers "$servers" --secret-file "$wrong" "${job}c" 2>&1) &&
	die "a wrong secret was accepted"
echo "$bad" | grep -qi "permission denied" || die "a wrong secret: unclear error: $bad"
# a monitor killed mid-pull leaves the job running
at0 "$BIN/geteventmon" -p 1 --servers "$servers" --secret-file "$secret" "${job}c" >/dev/null 2>&1 &
mon=$!
sleep 0.5
kill -9 "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
kill -0 "$app" 2>/dev/null || die "the job died with its monitor: $(cat "$out")"
watch "after the killed monitor"
end_job "$app"
app=
exit 0
