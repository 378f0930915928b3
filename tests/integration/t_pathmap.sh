#!/bin/sh
# t_pathmap.sh - the pathmap command checks and shows the examples, and rejects a bad pathmap with its position.
set -u
. "$(dirname "$0")/lib.sh"
top="$(dirname "$0")/../.."
ex="$top/pathmaps/examples"
out=$("$BIN/pathmap" check "$ex"/*.yaml) || die "examples rejected: $out"
[ "$(echo "$out" | grep -c 'is valid')" -eq 3 ] || die "not all three examples valid"
out=$("$BIN/pathmap" show "$ex/two-processes.yaml") || die "show failed"
echo "$out" | grep -q "row.1 .* in shared segment demo2.node0" || die "row.1 not placed in the node segment"
echo "$out" | grep -q "node 2 (root): node0 node1; runs on t2" || die "runs_on not shown"
echo "$out" | grep -q "t1: collector -> pass -> row.1" || die "collector path not shown"
bad=$(mktemp --suffix=.yaml)
trap 'rm -f "$bad"' EXIT
printf 'pathmap: 1\nname: j\napplication:\n  elements:\n    - { name: a, tuple_size: 8 }\n  threads:\n    - { name: t0, uses: [a, nope] }\n' >"$bad"
msg=$("$BIN/pathmap" check "$bad" 2>&1); rc=$?
[ $rc -eq 1 ] || die "bad pathmap: exit $rc, not 1"
[ "$msg" = "$bad:7:29: thread 't0' uses undefined element 'nope': expected the name of an element in application.elements" ] || die "message: $msg"
"$BIN/pathmap" check /no/such.yaml 2>&1 | grep -q "/no/such.yaml: cannot open" || die "missing file"
"$BIN/pathmap" frob >/dev/null 2>&1; [ $? -eq 2 ] || die "bad command not exit 2"
"$BIN/pathmap" --help | grep -q "pathmap check" || die "no help"
