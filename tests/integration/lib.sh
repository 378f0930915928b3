# lib.sh - helpers the integration tests share: failing with a reason, waiting with a bound.
die() { echo "FAILED: $*" >&2; exit 1; }
# The tests read jobs' trace spaces after the jobs end (psadm show, monitors
# that come later): kept, whatever the default keep policy; each test
# removes its own.  t_blackbox tests the default (unset there).
export ES_KEEP=always
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
# rm_segments PREFIX: removes this host's segments whose names start with PREFIX.
rm_segments() {
	for s in $("$BIN/psadm" list | awk '{print $1}' | grep "^$1"); do "$BIN/psadm" rm "$s" >/dev/null; done
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
