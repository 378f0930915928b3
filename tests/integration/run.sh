#!/bin/sh
# run.sh - runs every integration test (tests/integration/t_*.sh) against the build in $1.
set -u
build=${1:?usage: run.sh BUILDDIR}
bin=$build/bin
pass=0 fail=0
for t in "$(dirname "$0")"/t_*.sh; do
	name=$(basename "$t" .sh)
	log=$(mktemp)
	if BUILD=$build BIN=$bin sh "$t" >"$log" 2>&1; then
		pass=$((pass + 1)); echo "  ok   $name"
	else
		fail=$((fail + 1)); echo "  FAIL $name"; sed 's/^/       /' "$log"
	fi
	rm -f "$log"
done
echo "integration: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
