#!/bin/sh
# t_messages.sh - every message of a program whose messages are easy to get wrong (a split numbered backwards, Sendrecv rings, any-source requests, persistent requests) and of hpcc RandomAccess's polling loop has one send and one receive between the right world ranks on the right communicator: in OTF2 (otf2-print, and an independent checker of MPI's order), in the JSON (never backwards) and in esprofile's traffic; a short job's recordings keep its ranks, sites and communicators; and every way a request completes (mpi_complete), each request completed once, as its own.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itmsg$$"
dir=$(mktemp -d)
cleanup() { rm_segments "$job"; rm -rf "$dir"; }

trap cleanup EXIT

"$BIN/esrecord" -w 30 -o "$dir/a" "$job" 2>"$dir/rec.err" &
rec=$!
mpirun --oversubscribe --allow-run-as-root -np 4 "$BIN/esrun" -q -j "$job" "$BUILD/tests/mpi_msgs" "$dir" ||
	die "mpi_msgs failed"
wait $rec || die "esrecord failed: $(cat "$dir/rec.err")"
cat "$dir/rec.err"
# what the program sent: FROM TO TAG BYTES world|sub, in world ranks
cat "$dir"/msgs.r* | sort >"$dir/want"
[ "$(wc -l <"$dir/want")" -eq 31 ] || die "mpi_msgs listed $(wc -l <"$dir/want") messages, not 31"

# OTF2: each send and each receive once, their ends named through the
# communicator's group (otf2-print gives the location it resolves to)
"$BIN/esconvert" --otf2 "$dir/o" "$dir/a" 2>"$dir/conv.err" || die "esconvert: $(cat "$dir/conv.err")"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print failed: $(cat "$dir/p.err")"
[ -s "$dir/p.err" ] && die "otf2-print warned: $(cat "$dir/p.err")"
# an event's location is the archive's thread number, in the order the
# recorder met the threads: its rank by the thread's name
awk -F '\t' '{ r = $3; sub(/^rank/, "", r); sub(/\..*/, "", r); print $1, r }' "$dir/a/threads" >"$dir/rank_of"
kind='NR == FNR { rank[$1] = $2; next } { c = ($0 ~ /Communicator: "MPI_COMM_WORLD"/) ? "world" : "sub" }'
sed -n 's/^MPI_I*SEND  *\([0-9]*\) .*Receiver: [0-9]* ("rank\([0-9]*\)\.thread0" <[0-9]*>).*Tag: \([0-9]*\), Length: \([0-9]*\).*$/\1 \2 \3 \4 &/p' \
	"$dir/p.txt" | awk "$kind"' { print rank[$1], $2, $3, $4, c }' "$dir/rank_of" - | sort >"$dir/sends"
sed -n 's/^MPI_I*RECV  *\([0-9]*\) .*Sender: [0-9]* ("rank\([0-9]*\)\.thread0" <[0-9]*>).*Tag: \([0-9]*\), Length: \([0-9]*\).*$/\2 \1 \3 \4 &/p' \
	"$dir/p.txt" | awk "$kind"' { print $1, rank[$2], $3, $4, c }' "$dir/rank_of" - | sort >"$dir/recvs"
# each rank's thread, numbered in the order the recorder met them (a
# number, once given, stays: the events carry it)
printf '%s.r0\trank0.thread0\n%s.r1\trank1.thread0\n%s.r2\trank2.thread0\n%s.r3\trank3.thread0\n' \
	"$job" "$job" "$job" "$job" | cmp -s - "$(cut -f2,3 "$dir/a/threads" | sort >"$dir/named"; echo "$dir/named")" ||
	die "threads: $(cat "$dir/a/threads")"
diff "$dir/want" "$dir/sends" >"$dir/d1" || die "OTF2's sends differ from the program's: $(cat "$dir/d1")"
diff "$dir/want" "$dir/recvs" >"$dir/d2" || die "OTF2's receives differ from the program's sends: $(cat "$dir/d2")"
# the split's first message, by name: world rank 0 to the split's rank 0, world rank 3
loc0=$(awk '$2 == 0 { print $1 }' "$dir/rank_of")
grep -q "^MPI_SEND  *$loc0 "'.*Receiver: 0 ("rank3.thread0" <[0-9]*>), Communicator: "communicator [0-9a-f]* (4 ranks)" <[0-9]*>, Tag: 1, Length: 8$' \
	"$dir/p.txt" || die "rank 0's send on the split not to its rank 0, world rank 3"

# JSON: an arrow per message, none backwards
"$BIN/esconvert" --json "$dir/t.json" "$dir/a" 2>"$dir/json.err" || die "esconvert --json: $(cat "$dir/json.err")"
regions=$(sed -n 's/.*threads: \([0-9]*\) regions.*/\1/p' "$dir/conv.err")
python3 "$(dirname "$0")/json_check.py" "$dir/t.json" "$regions" 31 || die "the JSON is wrong"

# ... and the same read by an independent checker (tests/integration/msg_check.py:
# MPI's non-overtaking order, from otf2-print's text alone)
python3 "$(dirname "$0")/msg_check.py" 31 <"$dir/p.txt" >"$dir/check" || die "msg_check: $(cat "$dir/check")"

# hpcc RandomAccess's polling loop (mpi_poll: a wildcard Irecv completed by
# MPI_Test beside an Isend completed by MPI_Testany(1, ...)): every message
# once, each end right, none received before it was sent; and a short job
# (0.05 s) recorded whole, fifty times: its ranks, sites and communicators
for i in $(seq 1 50); do
	"$BIN/esrecord" -w 30 -o "$dir/poll$i" "$job.p$i" 2>"$dir/prec.err" &
	rec=$!
	mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.p$i" "$BUILD/tests/mpi_poll" 200 "$dir" ||
		die "mpi_poll failed"
	wait $rec || die "esrecord failed: $(cat "$dir/prec.err")"
	for f in ranks sites comms; do
		[ -s "$dir/poll$i/$f" ] || die "recording $i of a short job has no $f: $(ls "$dir/poll$i")"
	done
done
grep -q "^0 sent 200 to 1, received 200 from 1$" "$dir/poll.r0" || die "mpi_poll: $(cat "$dir"/poll.r*)"
"$BIN/esconvert" --otf2 "$dir/po" "$dir/poll1" 2>"$dir/pconv.err" || die "esconvert: $(cat "$dir/pconv.err")"
otf2-print "$dir/po/traces.otf2" >"$dir/pp.txt" 2>"$dir/pp.err" || die "otf2-print failed: $(cat "$dir/pp.err")"
python3 "$(dirname "$0")/msg_check.py" 400 <"$dir/pp.txt" >"$dir/check" ||
	die "the polling loop's messages: $(cat "$dir/check")"

# every way a request completes (mpi_complete: Test, Testany, Testsome,
# Testall, Wait, Waitany, Waitsome, Waitall in polling loops over different
# requests at once, persistent requests across starts, a cancelled receive,
# a send MPI_Cancel was called on, a send freed while active, generalized
# requests, matched probes, Open MPI's shared completed request, sends made
# into a polled array): every message once, each end right, and
# each request completed once, as its own, as the program saw it complete
# (req_check.py: the program's own list of its requests against OTF2's ids)
# (under the collector built with its invariants checked, -DES_DEBUG: a
# request board or index that breaks one aborts the rank, saying which)
debug="$(cd "$BUILD/lib/debug" && pwd)/libescollect.so"
"$BIN/esrecord" -w 30 -o "$dir/c" "$job.c" 2>"$dir/crec.err" &
rec=$!
mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$debug" -x ES_JOB="$job.c" \
	"$BUILD/tests/mpi_complete" 30 "$dir" >"$dir/complete.out" 2>&1 ||
	die "mpi_complete failed: $(grep -m3 "invariant\|rror" "$dir/complete.out")"
grep "invariant broken" "$dir/complete.out" && die "mpi_complete broke an invariant"
wait $rec || die "esrecord failed: $(cat "$dir/crec.err")"
cat "$dir/crec.err"; grep -q " 0 discarded" "$dir/crec.err" || die "mpi_complete's recording lost events: $(cat "$dir/crec.err")"
sent=$(cat "$dir"/complete.msgs.r* | wc -l)
[ "$sent" -eq 2160 ] || die "mpi_complete listed $sent messages, not 2160"
"$BIN/esconvert" --otf2 "$dir/co" "$dir/c" 2>"$dir/cconv.err" || die "esconvert: $(cat "$dir/cconv.err")"
otf2-print "$dir/co/traces.otf2" >"$dir/cp.txt" 2>"$dir/cp.err" || die "otf2-print failed: $(cat "$dir/cp.err")"
[ -s "$dir/cp.err" ] && die "otf2-print warned: $(cat "$dir/cp.err")"
python3 "$(dirname "$0")/msg_check.py" "$sent" <"$dir/cp.txt" >"$dir/check" ||
	die "mpi_complete's messages: $(cat "$dir/check")"
echo "mpi_complete: $(cat "$dir/check")"
python3 "$(dirname "$0")/req_check.py" "$dir/c/threads" "$dir/complete.reqs" <"$dir/cp.txt" >"$dir/rcheck" 2>&1 ||
	die "mpi_complete's requests: $(cat "$dir/rcheck")"
echo "mpi_complete: $(cat "$dir/rcheck")"
# and in the archive itself (OTF2 drops a completion whose request is
# complete already): no request completes twice; each rank's persistent
# requests complete once per start (3 sends and 3 receives a round), none
# of the inactive ones a wait is given beside them
python3 "$(dirname "$0")/ar_events.py" done "$dir/c" >"$dir/cdone" || die "mpi_complete's completions: $(cat "$dir/cdone")"
[ "$(awk '$2 == 160 || $2 == 164 { n[$1 " " $2] = $3 } END { for (k in n) if (n[k] == 90) ok++; print ok + 0 }' \
	"$dir/cdone")" -eq 6 ] || die "mpi_complete's persistent requests did not complete 90 times each: $(cat "$dir/cdone")"
# the same calls counted alike by every output, polls included: esprofile's
# regions are OTF2's Enter events and the JSON's slices, call by call, and
# its count (each poll one) is the JSON's slices with their polls
"$BIN/esprofile" --json -o "$dir/cprof.json" "$dir/c" || die "esprofile --json of mpi_complete failed"
"$BIN/esconvert" -q --json "$dir/c.json" "$dir/c" || die "esconvert --json of mpi_complete failed"
python3 - "$dir/cprof.json" "$dir/c.json" "$dir/cp.txt" <<'PY' || die "mpi_complete's calls counted differently: see above"
import collections, json, re, sys
prof = {r["call"]: r for r in json.load(open(sys.argv[1]))["calls"] if r["rank"] == -1}
slices, polls = collections.Counter(), collections.Counter()
for e in json.load(open(sys.argv[2]))["traceEvents"]:
    name = e.get("name", "").split("/")[0] # MPI_Startall/recv: a receive it started
    if e.get("ph") == "X" and name.startswith("MPI_") and not e["name"].endswith("/done"):
        slices[name] += 1
        polls[name] += e["args"].get("polls", 1) or 1
enters = collections.Counter(m.group(1) for m in re.finditer(r'^ENTER .*Region: "(MPI_[A-Za-z_]*)"', open(sys.argv[3]).read(), re.M))
bad = [(c, r["regions"], slices[c], enters[c], r["count"], polls[c]) for c, r in prof.items()
       if c not in ("MPI_Init", "MPI_Finalize") and not (r["regions"] == slices[c] == enters[c] and r["count"] == polls[c])]
print("call, esprofile regions, JSON slices, OTF2 enters, esprofile count, JSON polls:", bad) if bad else None
sys.exit(bool(bad) or not any(polls[c] > slices[c] for c in prof))
PY

# esprofile: each pair's messages and bytes, Sendrecv's among them
"$BIN/esprofile" -o "$dir/prof.txt" "$dir/a" || die "esprofile failed"
awk '{ n[$1 " " $2]++; b[$1 " " $2] += $4 } END { for (k in n) print k, n[k], b[k] }' "$dir/want" | sort >"$dir/pairs"
awk '/^@--- Heaviest/ { on = 1; getline; next } /^@---/ { on = 0 } on && NF >= 4 { print $1, $2, $3, $4 }' \
	"$dir/prof.txt" | sort >"$dir/traffic"
diff "$dir/pairs" "$dir/traffic" >"$dir/d3" || die "esprofile's traffic differs from the program's: $(cat "$dir/d3")"
exit 0
