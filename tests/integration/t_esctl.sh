#!/bin/sh
# t_esctl.sh - live control of a running job: esctl changes what its ranks record, pauses and resumes them, here and through the job's tuple servers with its secret (a wrong one changes nothing); hostile orders are refused; bad lists and ended jobs get clear errors.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itctl$$"
dir=$(mktemp -d)
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
secret="$dir/secret" wrong="$dir/wrong"
echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$secret"
echo "not-the-secret-of-this-job-$$" >"$wrong"
chmod 600 "$secret" "$wrong"

# the wind tunnel's rows as MPI messages, served for monitors elsewhere
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" --serve any --secret-file "$secret" -j "$job" \
	"$BIN/windtunnel" -j "${job}w" -q -N 128 -m 2 -l 2 -t 100000000 --transport mpi >/dev/null 2>"$dir/job.err" &
app=$!
wait_for 30 grep -q "monitors: --servers" "$dir/job.err" || die "the job did not say where it is served: $(cat "$dir/job.err")"
servers=$(sed -n 's/.*monitors: --servers \([^ )]*\).*/\1/p' "$dir/job.err" | head -1)
written() { "$BIN/psadm" show "$job.r0" | awk '$1 ~ /^mpi\.thread/ { n += $5 } END { print n }'; } # every thread's

# rank 0 says where it is served before rank 1 may have its trace space:
# status once both have one, however long a loaded machine takes
wait_for 30 sh -c "\"$BIN/psadm\" show \"$job.r1\" | grep -q \"^  es.ctl \"" || die "rank 1 never made its control element"
"$BIN/esctl" "$job" status >"$dir/st" || die "esctl status failed"
[ "$(grep -c '^rank [01]: records \[all\] (order 0)$' "$dir/st")" -eq 2 ] || die "status at the start: $(cat "$dir/st")"

# through the tuple servers, with the job's secret
"$BIN/esctl" --servers "$servers" --secret-file "$secret" "$job" collect '[-all, MPI_Allreduce]' >"$dir/out" ||
	die "esctl through the servers: $(cat "$dir/out")"
grep -q "^esctl: collect \[-all, MPI_Allreduce\]: applied by 2 of 2 ranks$" "$dir/out" || die "$(cat "$dir/out")"
# a wrong secret gets nothing, changes nothing
"$BIN/esctl" -w 2 --servers "$servers" --secret-file "$wrong" "$job" collect all >"$dir/bad" 2>&1 &&
	die "esctl with a wrong secret succeeded"
grep -qi "permission denied" "$dir/bad" || die "a wrong secret: unclear error: $(cat "$dir/bad")"
"$BIN/esctl" "$job" status >"$dir/st"
[ "$(grep -c '^rank [01]: records \[-all, MPI_Allreduce\] (order 1)$' "$dir/st")" -eq 2 ] ||
	die "the wrong secret changed something: $(cat "$dir/st")"

# paused, nothing is written; resumed, it is again
"$BIN/esctl" "$job" pause | grep -q "^esctl: pause: applied by 2 of 2 ranks$" || die "pause not applied"
w1=$(written); sleep 1; w2=$(written)
[ "$w1" = "$w2" ] || die "paused, but rank 0 wrote $((w2 - w1)) tuples"
"$BIN/esctl" "$job" status | grep -q "^rank 0: records \[-all, MPI_Allreduce\], paused (order 2)$" || die "status when paused"
"$BIN/esctl" "$job" resume | grep -q "^esctl: resume: applied by 2 of 2 ranks$" || die "resume not applied"
"$BIN/esctl" "$job" collect all | grep -q "^esctl: collect all: applied by 2 of 2 ranks$" || die "collect all not applied"
w1=$(written); sleep 1; w2=$(written)
[ "$w2" -gt "$w1" ] || die "resumed, but rank 0 wrote nothing"

# bad input: the word it did not know and where; nothing sent
out=$("$BIN/esctl" "$job" collect '[all, -MPI_Frobnicate]' 2>&1) && die "a bad list was accepted"
echo "$out" | grep -q "^esctl: collect:1:7: mpi collect: expected all, a group .* got '-MPI_Frobnicate'$" ||
	die "bad list: $out"
out=$("$BIN/esctl" "$job" frobnicate 2>&1); [ $? -eq 2 ] || die "a bad command did not exit 2"
echo "$out" | grep -q "^esctl: expected JOB and collect LIST, pause, resume, status, objects, set, call, rule, unrule, changes, rules or query, got 'frobnicate'" ||
	die "bad command: $out"
"$BIN/esctl" "$job" status | grep -q "order 4)$" || die "a refused order was written"

# hostile orders from whoever may write es.ctl: a number that would wrap the
# next, and bytes that are no order; each rank refuses them, status says so
# in text, and esctl's next order is numbered after the one applied
"$BUILD/tests/ctl_forge" "$job.r0" 18446744073709551615 clean || die "ctl_forge failed"
wait_for 30 sh -c "'$BIN/esctl' '$job' status | grep -q '^rank 0: records [[]all[]] (order 4); refused 1 order; the latest written is no order it will apply (its number does not follow the order applied)$'" ||
	die "the order numbered 2^64-1 was not refused: $("$BIN/esctl" "$job" status)"
"$BIN/esctl" "$job" collect '[-all, MPI_Allreduce]' >"$dir/out" || die "esctl after a hostile order: $(cat "$dir/out")"
grep -q "^esctl: collect \[-all, MPI_Allreduce\]: applied by 2 of 2 ranks$" "$dir/out" || die "$(cat "$dir/out")"
"$BIN/esctl" "$job" status >"$dir/st"
grep -q "^rank 0: records \[-all, MPI_Allreduce\] (order 5); refused 1 order$" "$dir/st" || die "after: $(cat "$dir/st")"
"$BUILD/tests/ctl_forge" "$job.r1" 6 list || die "ctl_forge failed"
wait_for 30 sh -c "'$BIN/esctl' '$job' status | grep -q '^rank 1: .*refused 1 order; the latest written is no order it will apply (not an order: what to record is neither 0 nor 1)$'" ||
	die "an order of bytes was not refused: $("$BIN/esctl" "$job" status)"
"$BIN/esctl" "$job" status >"$dir/st"
LC_ALL=C grep -q '[^ -~]' "$dir/st" && die "status printed what is not text: $(od -c "$dir/st" | head)"
grep -q "^rank 1: records \[-all, MPI_Allreduce\] (order 5)" "$dir/st" || die "rank 1 changed: $(cat "$dir/st")"
"$BIN/esctl" "$job" collect all | grep -q "^esctl: collect all: applied by 2 of 2 ranks$" || die "collect all after a refusal"
# one numbered two past the order applied, with one order written since: refused,
# and esctl's next is numbered after the applied one, not after it
"$BUILD/tests/ctl_forge" "$job.r0" 8 clean || die "ctl_forge failed"
wait_for 30 sh -c "'$BIN/esctl' '$job' status | grep -q '^rank 0: records [[]all[]] (order 6); refused 2 orders'" ||
	die "the order numbered 8 was not refused: $("$BIN/esctl" "$job" status)"
"$BIN/esctl" "$job" collect '[-all, MPI_Allreduce]' >"$dir/out" || die "esctl after an order out of turn: $(cat "$dir/out")"
grep -q "^esctl: collect \[-all, MPI_Allreduce\]: applied by 2 of 2 ranks$" "$dir/out" || die "$(cat "$dir/out")"
"$BIN/esctl" "$job" status | grep -q "^rank 0: records \[-all, MPI_Allreduce\] (order 7); refused 2 orders$" ||
	die "after an order out of turn: $("$BIN/esctl" "$job" status)"

# an ended job: nothing to steer
end_job "$app"; app=""
out=$("$BIN/esctl" -w 1 "$job" pause 2>&1) && die "esctl steered a job that ended"
echo "$out" | grep -q "^esctl: rank 0 ($job.r0) has \(died\|ended\): nothing to steer$" || die "ended job: $out"
echo "t_esctl: ok"
