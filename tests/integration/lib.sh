# lib.sh - helpers the integration tests share: failing with a reason, waiting with a bound.
die() { echo "FAILED: $*" >&2; exit 1; }
# The tests read jobs' trace spaces after the jobs end (psadm show, monitors
# that come later): kept, whatever the default keep policy; each test
# removes its own.  t_blackbox tests the default (unset there).
export ES_KEEP=always
# The MPI the tests run under: openmpi, or mpich in run.sh's MPICH run
# (BUILD is then the build as an MPICH user has it: build/*/mpich).
MPI=${ES_TEST_MPI:-openmpi}
# wait_for SECONDS COMMAND...: retries COMMAND every 50 ms until it succeeds.
wait_for() {
	n=$(($1 * 20)); shift
	while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; n=$((n - 1)); done
	return 1
}
# end_job PID: ends a job started in the background: SIGTERM, then SIGKILL
# if it has not gone within 10 s (mpirun itself has been seen to hang after
# its ranks died of the TERM it passed on), so a test never waits forever.
end_job() {
	kill "$1" 2>/dev/null
	n=200
	while kill -0 "$1" 2>/dev/null && [ "$n" -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
# rm_segments PREFIX: removes this host's segments whose names start with PREFIX, and the notes
# of monitors that waited for them (pastset.h: ps_shm_expect) a test killed before they could
rm_segments() {
	for s in $("$BIN/psadm" list | awk '{print $1}' | grep "^$1"); do "$BIN/psadm" rm "$s" >/dev/null; done
	rm -f /dev/shm/pastset-expect."$1"*
}
# view_post URL WHAT: a POST to esview at URL (http://HOST:PORT/) as its own
# page makes one: with the page's token and its Origin.
view_post() {
	tok=$(curl -sf "$1" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')
	curl -sf -X POST -H "X-ES-Token: $tok" -H "Origin: $(echo "$1" | sed 's,^\(http://[^/]*\)/.*,\1,')" "$1$2"
}
# rm_vader_orphans: Open MPI's shared-memory segments (/dev/shm/vader_segment.*)
# that a job whose ranks were killed left behind: those no live process maps,
# untouched for 2 s (a job just starting has mapped its own by then), so that
# another job's, running beside, are never touched.
rm_vader_orphans() {
	for f in /dev/shm/vader_segment.*; do
		[ -O "$f" ] || continue
		[ -n "$(find "$f" -mmin -0.034 2>/dev/null)" ] && continue
		grep -qs "$f" /proc/[0-9]*/maps && continue
		rm -f "$f"
	done
	return 0
}
# netns_up P: three network namespaces P0_$$ (a monitor's workstation),
# P1_$$ and P2_$$ (a job's hosts) on a bridge Pb$$, at PRE.1 to .3 (the
# bridge PRE.254); sets br, ns0, ns1, ns2 and pre.  Status 1 where the
# machine allows none (netns_down P removes what was made, either way).
netns_up() {
	pre="10.$((100 + $$ % 100)).$(($$ / 100 % 250))"
	br="$1b$$" ns0="${1}0_$$" ns1="${1}1_$$" ns2="${1}2_$$"
	ip link add "$br" type bridge 2>/dev/null && ip netns add "$ns0" 2>/dev/null || return 1
	ip addr add "$pre.254/24" dev "$br" && ip link set "$br" up || die "bridge $br"
	for i in 0 1 2; do
		ns="$1${i}_$$"
		[ "$i" = 0 ] || ip netns add "$ns" || die "netns $ns"
		ip link add "$1v${i}_$$" type veth peer name eth0 netns "$ns" &&
			ip link set "$1v${i}_$$" master "$br" up &&
			ip -n "$ns" addr add "$pre.$((i + 1))/24" dev eth0 &&
			ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || die "veth into $ns"
	done
}
netns_down() {
	for i in 0 1 2; do ip netns del "$1${i}_$$" 2>/dev/null; ip link del "$1v${i}_$$" 2>/dev/null; done
	ip link del "$1b$$" 2>/dev/null
	return 0
}
# at0 COMMAND...: in netns_up's ns0, with an empty /dev/shm of its own:
# only the network leads to the job
at0() { ip netns exec "$ns0" unshare -m sh -c 'mount -t tmpfs none /dev/shm && exec "$@"' sh "$@"; }
