# lib.sh - helpers the integration tests share: failing with a reason, waiting with a bound.
die() { echo "FAILED: $*" >&2; exit 1; }
# wait_for SECONDS COMMAND...: retries COMMAND every 50 ms until it succeeds.
wait_for() {
	n=$(($1 * 20)); shift
	while [ "$n" -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; n=$((n - 1)); done
	return 1
}
# rm_segments PREFIX: removes this host's segments whose names start with PREFIX.
rm_segments() {
	for s in $("$BIN/psadm" list | awk '{print $1}' | grep "^$1"); do "$BIN/psadm" rm "$s" >/dev/null; done
}
