#!/bin/sh
# run.sh - make bench: every benchmark of tests/bench/list in turn, each to its end; says which gave no summary line, or failed, and ends 1 if any did.
# usage: run.sh BUILDDIR   (BENCH_LIST=FILE: another list, for its test)
set -u
build=${1:?usage: run.sh BUILDDIR}
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out" "$out.rc" "$out.list"' EXIT
t0=$(date +%s) n=0 bad=""
# the list's benchmarks (helpers and comments aside), read before any runs:
# a benchmark reading stdin must not eat the list
grep -v '^#\|^helper \|^$' "${BENCH_LIST:-$here/list}" >"$out.list"
while read -r name cmd args; do
	n=$((n + 1))
	t=$(date +%s)
	case $cmd in
	bench/*) set -- "$build/$cmd" $args ;;
	*) set -- sh "$cmd" $args "$build" ;;
	esac
	{ "$@" </dev/null 2>&1; echo $? >"$out.rc"; } | tee "$out"
	rc=$(cat "$out.rc")
	if [ "$rc" -ne 0 ]; then
		bad="$bad $name($cmd${args:+ $args}: exit $rc)"
	elif ! grep -q "^$name: " "$out"; then
		bad="$bad $name($cmd${args:+ $args}: no summary line)"
	fi
	echo "bench: $name ($cmd${args:+ $args}) took $(($(date +%s) - t)) s"
done <"$out.list"
echo "bench: $n benchmarks in $(($(date +%s) - t0)) s${bad:+; not whole:$bad}"
[ -z "$bad" ]
