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
# an element no process holds (no processes at all): said so, not "(null)"
lone=$(mktemp --suffix=.yaml)
printf 'pathmap: 1\nname: j\napplication:\n  elements:\n    - { name: a, tuple_size: 8 }\n  threads: []\nmapping:\n  processes: []\n' >"$lone"
out=$("$BIN/pathmap" show "$lone") || die "show of a pathmap without processes failed"
rm -f "$lone"
echo "$out" | grep -q "(null)" && die "show printed (null): $out"
echo "$out" | grep -q "a .*not placed (no thread uses it)" || die "an unplaced element not said so: $out"
bad=$(mktemp --suffix=.yaml)
trap 'rm -f "$bad"' EXIT
printf 'pathmap: 1\nname: j\napplication:\n  elements:\n    - { name: a, tuple_size: 8 }\n  threads:\n    - { name: t0, uses: [a, nope] }\n' >"$bad"
msg=$("$BIN/pathmap" check "$bad" 2>&1); rc=$?
[ $rc -eq 1 ] || die "bad pathmap: exit $rc, not 1"
[ "$msg" = "$bad:7:29: thread 't0' uses undefined element 'nope': expected the name of an element in application.elements" ] || die "message: $msg"
"$BIN/pathmap" check /no/such.yaml 2>&1 | grep -q "/no/such.yaml: No such file" || die "missing file"
"$BIN/pathmap" frob >/dev/null 2>&1; [ $? -eq 2 ] || die "bad command not exit 2"
"$BIN/pathmap" --help | grep -q "pathmap check" || die "no help"
# across hosts: show says who serves where, and the daemon command each host needs
sec=$(mktemp); echo s3cret >"$sec"; chmod 640 "$sec" # short, and others may read it: both said in turn
srv=$(mktemp --suffix=.yaml)
trap 'rm -f "$bad" "$srv" "$sec"' EXIT
printf 'pathmap: 1\nname: far\napplication:\n  elements:\n    - { name: a, tuple_size: 8 }\n  threads:\n    - { name: t0, uses: [a] }\n    - { name: t1, uses: [a] }\ncluster:\n  hosts:\n    - { name: h0, cores: 1, address: 10.0.0.1 }\n    - { name: h1, cores: 1, address: 10.0.0.2 }\nmapping:\n  processes:\n    - { name: p0, host: h0, threads: [t0] }\n    - { name: p1, host: h1, threads: [t1] }\nservers: { runs: daemon, listen: host, port: 7000, secret_file: %s }\n' "$sec" >"$srv"
out=$("$BIN/pathmap" show "$srv") || die "show of a daemon pathmap failed: $out"
echo "$out" | grep -q "^servers: a node daemon on each host, on each host's address, port 7000, secret in $sec" || die "servers not shown: $out"
echo "$out" | grep -q "^  h1: psadm serve far. --addr 10.0.0.2 --port 7000 --secret-file $sec --writable" || die "daemon command not shown: $out"
echo "$out" | grep -q "t1: \[h0's tuple server\] -> a" || die "remote hop not shown: $out"
# check also asks whether this host could run it: the secret file is readable by others
msg=$("$BIN/pathmap" check "$srv" 2>&1) && die "check accepted a secret others can read"
echo "$msg" | grep -qx "$srv:17:65: servers secret_file '$sec': group or others may read or write it (chmod 600 it)" || die "secret message: $msg"
chmod 600 "$sec"
msg=$("$BIN/pathmap" check "$srv" 2>&1) && die "check accepted a secret of 6 bytes"
echo "$msg" | grep -q "servers secret_file '$sec': shorter than 16 bytes, which can be guessed" ||
	die "short secret message: $msg"
echo "s3cret-of-sixteen-letters" >"$sec"
"$BIN/pathmap" check "$srv" >/dev/null || die "check refused a good secret"
# the MPI calls a pathmap names are checked too, where they are written
mpi=$(mktemp --suffix=.yaml)
printf 'pathmap: 1\nname: x\nmpi:\n  collect: [one-sided, MPI_Sned]\n' >"$mpi"
msg=$("$BIN/pathmap" check "$mpi" 2>&1) && die "check accepted MPI_Sned"
rm -f "$mpi"
echo "$msg" | grep -q "^$mpi:4:24: mpi collect: expected all, a group" || die "MPI name message: $msg"
exit 0
