#!/bin/sh
# t_view.sh - esview on a PATHS job's stalled thread, then in a real browser (Debian's chromium, headless): the page of a running wind tunnel shows its ranks and its lanes advance, unfolds a rank, takes its pull rate from the page; a second and a slow browser do not disturb the first; 72 ranks fold by node; deadlocks (MPI_Ssend, MPI_Wait) show in red and a trigger freezes the view and keeps an archive; off loopback, a wrong key gets no data.
set -u
. "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null || die "no chromium (mk/deps.sh installs it)"
job="itview$$"
dir=$(mktemp -d)
app="" view="" v1="" v2=""
cleanup() {
	for v in "$view" "$v1" "$v2"; do [ -n "$v" ] && kill "$v" 2>/dev/null && wait "$v" 2>/dev/null; done
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
# dom URL: the page as chromium has it after 3 s of its own time (the data polled 10 times a second)
dom() { # a profile of its own each: two browsers at once must not share one
	profile=$(mktemp -d -p "$dir")
	# (120 s: a bound on a browser that hangs, far beyond a loaded machine's start)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
		--virtual-time-budget=3000 --dump-dom "$1" 2>"$profile.err"
	st=$?
	[ $st -eq 0 ] || echo "chromium on $1: exit status $st$([ $st -eq 124 ] && echo ' (timed out)'); its last words: $(tail -3 "$profile.err")" >&2
	return $st
}
frames() { sed -n 's/.*data-frames="\([0-9]*\)".*/\1/p' | head -1; }
added() { sed -n 's/.*data-added="\([0-9]*\)".*/\1/p' | head -1; }

# A PATHS job (app_stall: threads t0 and t1 work, t2 takes from an element
# no thread writes): a lane each, its deadlock named; the sanitizer builds
# run this part too.
"$BUILD/tests/app_stall" "$job.paths" 30 >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 --period 300 "$job.paths" >"$dir/view0.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job.paths at http" "$dir/view0.out" || die "$(cat "$dir/view0.out")"
url=$(sed -n "s/^esview: job $job.paths at \(http:[^ ]*\)$/\1/p" "$dir/view0.out")
wait_for 30 sh -c "curl -sf '${url}data' | grep -q 'deadlock for [0-9.]* s: t2 in take on t2->never'" ||
	die "no deadlock named: $(curl -s "${url}data" | tail -c 600)"
curl -sf "${url}data" >"$dir/paths.json" || die "GET /data failed"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [l["label"] for l in d["lanes"]] == ["t0", "t1", "t2"], d["lanes"]
assert all(l["id"].startswith("t:") and not l["parent"] for l in d["lanes"]), d["lanes"]
assert d["bins"] and {b[0] for b in d["bins"]} >= {0, 1}, "t0 and t1 draw nothing"
assert [i[2] for i in d["inside"] if i[0] == 2] == ["take"], d["inside"]
assert d["waits"]["stalled"] >= 1 and d["waits"]["graph"] > 0, d["waits"]' "$dir/paths.json" || die "the PATHS job's data is wrong"
curl -sf "${url}waitfor.svg" | grep -q '<svg' || die "no graph"
for i in 1 2 3 4 5; do curl -sf "${url}data?shown=$((i * 300))&bins=$((i * 100))" >/dev/null || die "GET /data $i failed"; done
view_post "$url" "arm?stall=30" >/dev/null && view_post "$url" "rate?hz=20" >/dev/null || die "POST failed"
curl -sf "${url}data" | grep -q '"rate":20,"trigger":{"deadlock":false,"stall_s":30,' || die "not armed: $(curl -s "${url}data" | tail -c 300)"
kill "$view"; wait "$view"; rc=$?
[ $rc = 0 ] || die "esview ended with status $rc: $(cat "$dir/view0.out")"
view=""
end_job "$app"; app=""

# The rest watches MPI programs through libescollect.so, which a sanitizer build has not.
[ -f "$BUILD/lib/libescollect.so" ] || { echo "t_view: ok (the PATHS job only: no libescollect.so in a sanitizer build)"; exit 0; }

mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job" "$BIN/windtunnel" -j "${job}w" -q -N 128 -m 2 -l 2 \
	-t 100000000 --transport mpi >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 "$job" >"$dir/view.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://127.0.0.1:[0-9]*/$" "$dir/view.out" || die "no URL: $(cat "$dir/view.out")"
url=$(sed -n "s/^esview: job $job at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"rank\":1'" || die "no data for both ranks: $(curl -s "${url}data" | head -c 300)"
# the waiting relation follows at its own period: all six threads, once
# a loaded machine has let it look
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"waits\":{[^}]*\"threads\":6'" ||
	die "the waiting relation never had the six threads: $(curl -s "${url}data" | grep -o '\"waits\":{[^}]*}')"
# a message line, once a receive and its send have both been read (a
# loaded machine may give the view its first dozen events only by now)
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"msgs\":\[\['" ||
	die "no message drawn: $(curl -s "${url}data" | grep -o '"msgs[a-z_]*":[^]]*\|"added":[0-9]*')"
# the data: JSON with both ranks' threads and their calls
curl -sf "${url}data" >"$dir/data.json" || die "GET /data failed"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ranks = {t["rank"] for t in d["threads"]}
assert ranks == {0, 1}, ranks
assert [l["id"] for l in d["lanes"]] == ["r:0", "r:1"], d["lanes"]
assert d["bins"] and all(len(b) == 4 and 0 < b[3] <= 1000 for b in d["bins"]), "no calls"
# (its messages go by MPI_Isend and MPI_Irecv, completed by waits: a bin
# is drawn in the colour of the class it spent most in)
p2p = {d["classes"].index("point-to-point"), d["classes"].index("waits and polls")}
assert any(b[2] in p2p for b in d["bins"]), "no point-to-point calls nor their waits"
assert len(d["colours"]) == len(d["classes"]) and d["colours"][d["classes"].index("waits and polls")] == "#d62728", d["colours"]
assert {r for r, pct in d["mpi"]} == {0, 1} and all(0 < pct <= 100 for r, pct in d["mpi"]), d["mpi"]
assert d["traffic"]["bytes"], "no bytes sent"
assert d["colls"] and d["colls"][0]["name"] == "MPI_Allreduce" and d["colls"][0]["members"] == 2, d["colls"]
# (a receive read before its send is said, as one whose send was not recorded)
assert d["msgs"] or {"msgs_note", "msgs_alone", "msgs_backwards"} & set(d), \
    ("neither messages nor why not", {k: v for k, v in d.items() if k.startswith("msgs") or k == "added"})
assert d["waits"]["threads"] == 6, d["waits"]' "$dir/data.json" || die "the data is wrong"
# hovering rank 0's lane names a call there: its name, duration, bytes,
# and where the wind tunnel made it (DWARF: function, file and line)
at=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(int(d["from_ns"] + d["shown_ms"] * 1e6 - 2e8))' "$dir/data.json")
curl -sf "${url}call?lane=0&at=$at&tol=1000000000" >"$dir/call.json" || die "GET /call failed"
python3 -c 'import json, re, sys
c = json.load(open(sys.argv[1]))["call"]
assert c and c["name"].startswith("MPI_") and c["thread"].startswith("rank0.") and c["dur_ms"] >= 0, c
assert "bytes" in c or c["in_progress"], c
assert c["in_progress"] or re.fullmatch(r"\S+ \(\S+\.c:[0-9]+\)", c.get("site", "")), c' "$dir/call.json" ||
	die "the call under the pointer: $(cat "$dir/call.json")"
curl -s -o /dev/null -w "%{http_code}" "${url}call?lane=0" | grep -q 400 || die "a question without its time answered"
# the page, in a browser: both ranks listed, frames drawn, and the lanes advance
dom "$url" >"$dir/dom1" || die "chromium failed"
for r in 0 1; do
	grep -q "<li class=\"rank\" data-rank=\"$r\">rank $r: 3 thread(s)</li>" "$dir/dom1" || die "rank $r not shown: $(grep -o 'id="status">[^<]*' "$dir/dom1")"
done
[ "$(frames <"$dir/dom1")" -gt 3 ] || die "the page drew $(frames <"$dir/dom1") frames"
grep -q 'data-lanes="r:0 r:1"' "$dir/dom1" || die "lanes: $(grep -o 'data-lanes="[^"]*"' "$dir/dom1")"
grep -q 'data-axis="[0-9]* ms"' "$dir/dom1" || die "no time axis drawn"
grep -q 'data-scale="[0-9.]* \(B\|KiB\|MiB\)"' "$dir/dom1" || die "the traffic matrix has no scale: $(grep -o '<canvas id="traffic"[^>]*>' "$dir/dom1")"
# the key: the classes drawn, in every picture's colours; no PATHS class for an MPI job
grep -q '<i style="background:#d62728"></i>waits and polls' "$dir/dom1" || die "key: $(grep -o 'id="key">.\{0,300\}' "$dir/dom1")"
grep -q '<i style="background:#7f7f7f"></i>PATHS operations' "$dir/dom1" && die "key: an MPI job's key lists PATHS operations"
# armed elsewhere (another browser, --trigger): the page's boxes say what is armed
view_post "$url" "arm?stall=60&imbalance=60000" >/dev/null || die "POST /arm failed"
dom "$url" >"$dir/dom-armed" || die "chromium failed"
grep -q 'id="t-stall" checked' "$dir/dom-armed" && grep -q 'id="t-imb" checked' "$dir/dom-armed" &&
	grep -q 'id="t-imb-ms" size="5" value="60000"' "$dir/dom-armed" && ! grep -q 'id="t-deadlock" checked' "$dir/dom-armed" ||
	die "the boxes do not say what is armed: $(grep -o '<input type="checkbox"[^>]*>\|id="t-[a-z-]*" size="[0-9]*" value="[^"]*"' "$dir/dom-armed")"
view_post "$url" "arm" >/dev/null || die "POST /arm (disarm) failed"
# a rank unfolded (as a click on its name does): its three threads, each its own lane
dom "${url}?open=r:1" >"$dir/dom-open" || die "chromium failed"
grep -q 'data-lanes="r:0 t:[0-9]* t:[0-9]* t:[0-9]*"' "$dir/dom-open" || die "unfolded: $(grep -o 'data-lanes="[^"]*"' "$dir/dom-open")"
# the pull rate, from the page's slider
view_post "$url" "rate?hz=5" >/dev/null || die "POST /rate failed"
curl -sf "${url}data" | grep -q '"rate":5,' || die "the rate was not taken"
view_post "$url" "rate?hz=10" >/dev/null
# two browsers at once, and a slow one that asks for the biggest answer and
# reads 64 bytes every 0.2 s through a 4 KB socket buffer: the first still
# draws, and the job moves on
port=$(echo "$url" | sed 's/.*:\([0-9]*\)\/$/\1/')
python3 -c 'import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /data?shown=10000&bins=4000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
got = 0
while got < 10**6:
    b = s.recv(64)
    if not b:
        sys.exit(1)
    got += len(b)
    time.sleep(0.2)' "$port" & slow=$!
dom "$url" >"$dir/dom2" & b2=$!
dom "$url" >"$dir/dom3"
wait $b2
[ "$(added <"$dir/dom2")" -gt "$(added <"$dir/dom1")" ] || die "the lanes did not advance: $(added <"$dir/dom1") then $(added <"$dir/dom2")"
[ "$(frames <"$dir/dom3")" -gt 3 ] || die "a second browser drew $(frames <"$dir/dom3") frames"
[ "$(frames <"$dir/dom2")" -gt 3 ] || die "beside a slow browser, one drew $(frames <"$dir/dom2") frames"
kill -0 $slow 2>/dev/null || die "the slow browser was not slow: the test proves nothing"
kill $slow; wait $slow 2>/dev/null
# the job ends: the page says so, nobody progressing or stalled
end_job "$app"; app=""
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"job_ended\":true'" || die "the ended job not said: $(curl -s "${url}data" | grep -o '\"waits\":{[^}]*}')"
curl -sf "${url}data" | grep -q '"waits":{[^}]*"progressing":0,"stalled":0,' || die "the ended job still progressing: $(curl -s "${url}data" | grep -o '\"waits\":{[^}]*}')"
dom "$url" >"$dir/dom-ended" || die "chromium failed"
grep -q "threads: the job has ended<" "$dir/dom-ended" || die "the page does not say the job ended: $(grep -o 'id="waitline">[^<]*' "$dir/dom-ended")"
kill "$view"; wait "$view" 2>/dev/null; view=""

# Many ranks (72, more than the 64 a page lists): one lane per node, opened
# into its ranks; the page still draws ten frames a second of its time.
lib="$BUILD/lib/libescollect.so"
mpirun --oversubscribe --allow-run-as-root -np 72 -x LD_PRELOAD="$lib" -x ES_JOB="$job.many" \
	"$BUILD/tests/ring_demo" 20 >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 60 "$job.many" >"$dir/view5.out" 2>&1 &
view=$!
wait_for 60 grep -q "^esview: job $job.many at http" "$dir/view5.out" || die "$(cat "$dir/view5.out")"
url=$(sed -n "s/^esview: job $job.many at \(http:[^ ]*\)$/\1/p" "$dir/view5.out")
wait_for 60 sh -c "curl -sf '${url}data' | grep -q '\"name\":\"rank71.thread0\"'" || die "not all 72 ranks"
dom "$url" >"$dir/dom-many" || die "chromium failed"
grep -q 'data-lanes="n:0"' "$dir/dom-many" || die "not folded by node: $(grep -o 'data-lanes="[^"]*"' "$dir/dom-many")"
grep -q '<ul id="ranks">72 ranks</ul>' "$dir/dom-many" || die "ranks: $(grep -o '<ul id="ranks">[^/]*' "$dir/dom-many")"
[ "$(frames <"$dir/dom-many")" -ge 20 ] || die "72 ranks: $(frames <"$dir/dom-many") frames in 3 s"
# questions alike in their first 300 characters are two questions (esview's cache kept 100 of them)
pad=$(seq 1000 1060 | sed 's/^/r:/' | tr '\n' ',' | sed 's/,$//')
n1=$(curl -sf "${url}data?open=$pad" | grep -o '"id":"r:[0-9]*"' | wc -l)
n2=$(curl -sf "${url}data?open=$pad,n:0" | grep -o '"id":"r:[0-9]*"' | wc -l)
[ "$n1" = 0 ] && [ "$n2" = 72 ] || die "a long open= list: $n1 then $n2 rank lanes"
dom "${url}?open=n:0" >"$dir/dom-many2" || die "chromium failed"
lanes=$(sed -n 's/.*data-lanes="\([^"]*\)".*/\1/p' "$dir/dom-many2" | head -1)
[ "$lanes" = "$(seq 0 71 | sed 's/^/r:/' | tr '\n' ' ' | sed 's/ $//')" ] || die "the node unfolded: $lanes"
kill "$view"; wait "$view" 2>/dev/null; view=""
end_job "$app"; app=""

# A deadlock (ring_demo's unsafe ring of MPI_Ssend): the trigger, armed from
# the page, freezes the view with the cycle in red and keeps an archive.
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job.dead" \
	"$BUILD/tests/ring_demo" 3 deadlock >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 --period 500 --snapshot "$dir/snap" "$job.dead" >"$dir/view3.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job.dead at http" "$dir/view3.out" || die "$(cat "$dir/view3.out")"
url=$(sed -n "s/^esview: job $job.dead at \(http:[^ ]*\)$/\1/p" "$dir/view3.out")
view_post "$url" "arm?deadlock=1" >/dev/null || die "POST /arm failed"
wait_for 60 grep -q "^esview: trigger: a deadlock named; the view is frozen$" "$dir/view3.out" ||
	die "no trigger: $(cat "$dir/view3.out")"
wait_for 60 grep -q "^esview: snapshot of job $job.dead in $dir/snap/1: a deadlock named" "$dir/view3.out" ||
	die "no snapshot: $(cat "$dir/view3.out")"
dom "$url" >"$dir/dom-dead" || die "chromium failed"
cycle="rank0 in MPI_Ssend to 1 tag 2 &lt;- rank3 in MPI_Ssend to 0 tag 2 &lt;- rank2 in MPI_Ssend to 3 tag 2 &lt;- rank1 in MPI_Ssend to 2 tag 2"
grep -q "<li class=\"deadlock\">deadlock for [0-9.]* s: $cycle</li>" "$dir/dom-dead" ||
	die "the deadlock not named in red: $(grep -o '<ul id="findings">.*</ul>' "$dir/dom-dead")"
grep -q '<svg' "$dir/dom-dead" && grep -q 'stroke="#cc0000"' "$dir/dom-dead" || die "no graph with the cycle in red"
grep -q 'data-frozen="true"' "$dir/dom-dead" || die "the view is not frozen"
grep -q 'data-inside="MPI_Ssend MPI_Ssend MPI_Ssend MPI_Ssend"' "$dir/dom-dead" ||
	die "each rank's call not on its lane: $(grep -o 'data-inside="[^"]*"' "$dir/dom-dead")"
grep -q "archive: $dir/snap/1" "$dir/dom-dead" || die "the page does not say where the archive is"
# a picture of it, as a browser draws it (VIEW_SHOT=FILE keeps it: the README's)
profile=$(mktemp -d -p "$dir")
(cd "$dir" && timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
	--window-size=1100,760 --virtual-time-budget=3000 --screenshot="$dir/view.png" "$url" >/dev/null 2>&1)
[ "$(head -c 8 "$dir/view.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || die "no screenshot"
[ -n "${VIEW_SHOT:-}" ] && cp "$dir/view.png" "$VIEW_SHOT"
grep -q "^esview: a deadlock named$" "$dir/snap/1/TRIGGER" || die "TRIGGER: $(cat "$dir/snap/1/TRIGGER")"
grep -q "^deadlock for [0-9.]* s: rank0 in MPI_Ssend to 1 tag 2 <- " "$dir/snap/1/waitfor" || die "waitfor: $(cat "$dir/snap/1/waitfor")"
"$BIN/esprofile" "$dir/snap/1" >"$dir/profile" 2>&1 || die "esprofile cannot read the archive: $(cat "$dir/profile")"
grep -q "MPI_Ssend" "$dir/profile" || die "the archive has not the calls: $(head "$dir/profile")"
# armed again (nothing): it runs again
view_post "$url" "arm" >/dev/null && curl -sf "${url}data" | grep -q '"frozen":false' || die "not running again"
kill "$view"; wait "$view" 2>/dev/null; view=""
# two viewers keeping their archives in one directory: each its own number;
# past --snapshots a trigger still freezes the view and keeps none
for i in 1 2; do
	"$BIN/esview" -w 30 --period 500 --trigger deadlock --snapshot "$dir/shared" --snapshots 1 "$job.dead" \
		>"$dir/shared$i.out" 2>&1 &
	eval "v$i=\$!"
done
for i in 1 2; do
	wait_for 60 grep -q "^esview: snapshot of job $job.dead in $dir/shared/[12]: a deadlock named" "$dir/shared$i.out" ||
		die "viewer $i kept no archive: $(cat "$dir/shared$i.out")"
done
[ "$(sed -n "s|^esview: snapshot of job $job.dead in $dir/shared/\([12]\):.*|\1|p" "$dir/shared1.out" "$dir/shared2.out" |
	sort | tr '\n' ' ')" = "1 2 " ] || die "the viewers took the same number: $(cat "$dir/shared1.out" "$dir/shared2.out")"
for n in 1 2; do grep -q "^esview: a deadlock named$" "$dir/shared/$n/TRIGGER" || die "archive $n: no TRIGGER"; done
url=$(sed -n "s/^esview: job $job.dead at \(http:[^ ]*\)$/\1/p" "$dir/shared1.out")
view_post "$url" "arm?deadlock=1" >/dev/null || die "POST /arm failed"
wait_for 30 grep -q "^esview: trigger: a deadlock named; the view is frozen; archive: none: 1 archive(s), [0-9]* MB, kept already: the most --snapshots 1 and --snapshot-bytes 1024 MB allow (the first are kept)$" "$dir/shared1.out" ||
	die "past --snapshots: $(cat "$dir/shared1.out")"
[ ! -e "$dir/shared/3" ] || die "a third archive was kept"
kill "$v1" "$v2"; wait "$v1" "$v2" 2>/dev/null; v1="" v2=""
end_job "$app"; app=""

# A deadlock through requests (mpi_wait's waitcycle: each rank in MPI_Wait on
# an MPI_Irecv from the next): named in red, each rank's call on its lane.
mpirun --oversubscribe --allow-run-as-root -np 3 -x LD_PRELOAD="$lib" -x ES_JOB="$job.wait" \
	"$BUILD/tests/mpi_wait" waitcycle 0 >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 --period 500 --trigger deadlock --snapshot "$dir/wsnap" "$job.wait" >"$dir/view6.out" 2>&1 &
view=$!
wait_for 60 grep -q "^esview: snapshot of job $job.wait in $dir/wsnap/1: a deadlock named" "$dir/view6.out" ||
	die "no snapshot: $(cat "$dir/view6.out")"
url=$(sed -n "s/^esview: job $job.wait at \(http:[^ ]*\)$/\1/p" "$dir/view6.out")
dom "$url" >"$dir/dom-wait" || die "chromium failed"
cycle="rank0 in MPI_Wait: MPI_Irecv from 1 tag 5 &lt;- rank2 in MPI_Wait: MPI_Irecv from 0 tag 5 &lt;- rank1 in MPI_Wait: MPI_Irecv from 2 tag 5"
grep -q "<li class=\"deadlock\">deadlock for [0-9.]* s: $cycle</li>" "$dir/dom-wait" ||
	die "the wait cycle not named in red: $(grep -o '<ul id="findings">.*</ul>' "$dir/dom-wait")"
grep -q 'data-inside="MPI_Wait MPI_Wait MPI_Wait"' "$dir/dom-wait" ||
	die "each rank's MPI_Wait not on its lane: $(grep -o 'data-inside="[^"]*"' "$dir/dom-wait")"
kill "$view"; wait "$view" 2>/dev/null; view=""
end_job "$app"; app=""

# The imbalance trigger, armed at start: mpi_late's last rank comes 3 s
# late to allreduce #3 (a loaded machine made #1 61 ms unequal: a trigger
# at 20 ms fired there, rightly)
mpirun --oversubscribe --allow-run-as-root -np 4 -x LD_PRELOAD="$lib" -x ES_JOB="$job.late" \
	"$BUILD/tests/mpi_late" 3000 >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 --trigger imbalance=1500 --snapshot "$dir/late" "$job.late" >"$dir/view4.out" 2>&1 &
view=$!
wait_for 60 grep -q "^esview: snapshot of job $job.late in $dir/late/1: " "$dir/view4.out" || die "no snapshot: $(cat "$dir/view4.out")"
grep -q "^esview: MPI_Allreduce #3: imbalance [0-9.]* ms (trigger above 1500 ms), last in: rank 3$" "$dir/late/1/TRIGGER" ||
	die "TRIGGER: $(cat "$dir/late/1/TRIGGER")"
kill "$view"; wait "$view" 2>/dev/null; view=""
wait "$app"; app=""
"$BIN/esview" --trigger stall=x "$job" >"$dir/bad" 2>&1 && die "a bad trigger was taken"
grep -q "^esview: --trigger stall=x: at 'stall=x': expected deadlock, stall=SECONDS, imbalance=MS (numbers above 0) or wait=PATTERN:PCT (a wait-state pattern, late_sender...; a share of MPI time from 0 to 100)$" "$dir/bad" ||
	die "bad trigger: $(cat "$dir/bad")"
"$BIN/esview" --window 1e5 "$job" >"$dir/bad" 2>&1 && die "a window of 1e5 s was taken"
grep -q "^esview: --window 100000: expected at most 3600 seconds" "$dir/bad" || die "--window 1e5: $(cat "$dir/bad")"
"$BIN/esview" --snapshot-bytes 3T "$job" >"$dir/bad" 2>&1 && die "--snapshot-bytes 3T was taken"
grep -q "^esview: --snapshot-bytes: expected a number of bytes, with K, M or G after it if you like, not '3T'$" "$dir/bad" ||
	die "--snapshot-bytes 3T: $(cat "$dir/bad")"

# off loopback: the key is needed, a wrong one gets nothing
echo "view-secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/key"
chmod 600 "$dir/key"
out=$("$BIN/esview" --addr 0.0.0.0 "$job" 2>&1) && die "esview listened off loopback without a secret"
echo "$out" | grep -q "^esview: --addr 0.0.0.0: a listener off loopback needs --view-secret FILE$" || die "no-secret: $out"
"$BIN/esview" --addr 0.0.0.0 --view-secret "$dir/key" -w 30 "$job" >"$dir/view2.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://0.0.0.0:[0-9]*/?key=KEY$" "$dir/view2.out" || die "$(cat "$dir/view2.out")"
port=$(sed -n 's/.*:\([0-9]*\)\/?key=KEY$/\1/p' "$dir/view2.out")
key=$(cat "$dir/key")
wait_for 30 curl -sf "http://127.0.0.1:$port/data?key=$key" || die "the right key got nothing"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/data")" = 403 ] || die "no key got data"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/data?key=wrong-$key")" = 403 ] || die "a wrong key got data"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/?key=wrong")" = 403 ] || die "a wrong key got the page"
out=$("$BIN/esview" -p "$port" "$job" 2>&1) && die "a second esview took a port in use"
echo "$out" | grep -q "^esview: --port $port: in use on 127.0.0.1 (another program listens there; --port 0 picks a free one)$" ||
	die "port in use: $out"
echo "t_view: ok"
