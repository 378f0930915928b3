#!/bin/sh
# t_psadm.sh - a writer killed mid-run leaves a stale segment that psadm shows (its job died), reads, keeps by the default policy and cleans with --all.
set -u
. "$(dirname "$0")/lib.sh"
seg="it-psadm-$$"
"$BIN/psadm" rm "$seg" >/dev/null 2>&1
"$BIN/psdemo" writer "$seg" 30 >/dev/null &
pid=$!
trap 'kill -9 $pid 2>/dev/null; "$BIN/psadm" rm "$seg" >/dev/null 2>&1' EXIT
wait_for 5 sh -c "'$BIN/psadm' list | grep -q '^$seg .* live'" || die "segment never listed live"
sleep 0.2
kill -9 "$pid"; wait "$pid" 2>/dev/null
"$BIN/psadm" list | grep -q "^$seg .* stale" || die "killed writer's segment not listed stale"
out=$("$BIN/psadm" show "$seg") || die "show failed"
echo "$out"
written=$(echo "$out" | awk '$1 == "thread0.trace" { print $5 }')
[ "${written:-0}" -gt 0 ] || die "no tuples shown for the killed writer"
"$BIN/psadm" list | grep -q "^job $seg: died: $seg (pid $pid) gone without closing; its remains are kept" ||
	die "the job's line does not say it died: $("$BIN/psadm" list)"
# the keep policy (failed, the default): a dead job's remains stay until --all
"$BIN/psadm" clean --dry-run "$seg" | grep -q "^kept $seg: its process died" || die "clean would not keep the remains"
"$BIN/psadm" clean --all --dry-run "$seg" | grep -q "would remove $seg" || die "dry run did not name it"
# a prefix keeps clean to one job's segments (another make check's are not ours)
"$BIN/psadm" clean --all --dry-run "x$seg" | grep -q "$seg" && die "clean of another prefix named $seg"
"$BIN/psadm" list | grep -q "^$seg " || die "dry run removed it"
"$BIN/psadm" clean --all "$seg" | grep -q "removed $seg" || die "clean --all did not remove it"
"$BIN/psadm" list | grep -q "^$seg " && die "still listed after clean"
# a job by the name users type: psadm list says how to remove a dead one's remains, and psadm rm
# JOB removes every segment of it whose process has ended (one still running is kept, and said)
jb="it-psadmj-$$"
"$BIN/psdemo" writer "$jb.r0" 30 >/dev/null &
p0=$!
"$BIN/psdemo" writer "$jb.r1" 30 >/dev/null &
p1=$!
trap 'kill -9 $pid $p0 $p1 2>/dev/null; "$BIN/psadm" rm "$seg" "$jb" >/dev/null 2>&1' EXIT
wait_for 5 sh -c "'$BIN/psadm' list | grep -q '^$jb.r1 .* live'" || die "the job's segments never listed live"
sleep 0.2
kill -9 "$p0"; wait "$p0" 2>/dev/null
"$BIN/psadm" list | grep -q "^job $jb: live" || die "the job is not live: $("$BIN/psadm" list | grep "$jb")"
out=$("$BIN/psadm" rm "$jb") || die "psadm rm $jb failed: $out"
echo "$out" | grep -q "^removed $jb.r0$" && echo "$out" | grep -q "^kept $jb.r1: its process runs$" || die "psadm rm $jb: $out"
kill -9 "$p1"; wait "$p1" 2>/dev/null
"$BIN/psadm" list | grep -q "^job $jb: died: .* (psadm rm $jb removes them)" || die "list: $("$BIN/psadm" list | grep "$jb")"
"$BIN/psadm" rm "$jb" | grep -q "^removed $jb.r1$" || die "psadm rm $jb did not remove the dead rank's remains"
"$BIN/psadm" list | grep -q "^$jb\." && die "the job's segments are still listed"
"$BIN/psadm" rm "$jb" 2>&1 | grep -q "psadm: $jb: no segment and no job of that name (psadm list)" || die "rm of a job gone"
# a creator that died before finishing the header leaves debris clean removes once old
junk="it-junk-$$"
head -c 100 /dev/zero >"/dev/shm/pastset.$junk"
touch -d '1 minute ago' "/dev/shm/pastset.$junk"
"$BIN/psadm" list | grep -q "^$junk .*still being made, or its maker died making it" || die "incomplete segment not listed as such"
"$BIN/psadm" clean "$junk" | grep -q "removed $junk" || die "incomplete segment not cleaned"
# errors: clear message, non-zero status, nothing else touched
"$BIN/psadm" show "$seg" 2>&1 | grep -q "no such segment" || die "show of a removed segment"
"$BIN/psadm" show "bad/name" 2>&1 | grep -q "bad name" || die "bad name not reported"
"$BIN/psadm" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || die "bad command not exit 2"
"$BIN/psadm" clean --bogus 2>&1 | grep -q "clean: unexpected '--bogus' (expected --dry-run, --all and at most one PREFIX" ||
	die "bad clean option not named"
"$BIN/psadm" >/dev/null 2>&1; [ $? -eq 2 ] || die "no command not exit 2"
exit 0
