#!/bin/sh
# t_view.sh - esview in a real browser (Debian's chromium, headless): the page of a running wind tunnel shows its ranks and its lanes advance; a second browser changes nothing for the first; off loopback, a wrong key gets no data.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
command -v chromium >/dev/null || die "no chromium (mk/deps.sh installs it)"
job="itview$$"
dir=$(mktemp -d)
app="" view=""
cleanup() {
	[ -n "$view" ] && kill "$view" 2>/dev/null && wait "$view" 2>/dev/null
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
# dom URL: the page as chromium has it after 3 s of its own time (the data polled 10 times a second)
dom() { # a profile of its own each: two browsers at once must not share one
	profile=$(mktemp -d -p "$dir")
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
		--virtual-time-budget=3000 --dump-dom "$1" 2>/dev/null
}
frames() { sed -n 's/.*data-frames="\([0-9]*\)".*/\1/p' | head -1; }
added() { sed -n 's/.*data-added="\([0-9]*\)".*/\1/p' | head -1; }

mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job" "$BIN/windtunnel" -q -N 128 -m 2 -l 2 \
	-t 100000000 --transport mpi >/dev/null 2>&1 &
app=$!
"$BIN/esview" -w 30 "$job" >"$dir/view.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://127.0.0.1:[0-9]*/$" "$dir/view.out" || die "no URL: $(cat "$dir/view.out")"
url=$(sed -n "s/^esview: job $job at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"rank\":1'" || die "no data for both ranks: $(curl -s "${url}data" | head -c 300)"
# the data: JSON with both ranks' threads and their calls
curl -sf "${url}data" >"$dir/data.json" || die "GET /data failed"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ranks = {t["rank"] for t in d["threads"]}
assert ranks == {0, 1}, ranks
assert d["events"] and all(len(e) == 5 for e in d["events"]), "no calls"
assert any(o[1] == "point-to-point" for o in d["ops"].values()), d["ops"]' "$dir/data.json" || die "the data is wrong"
# the page, in a browser: both ranks listed, frames drawn, and the lanes advance
dom "$url" >"$dir/dom1" || die "chromium failed"
for r in 0 1; do
	grep -q "<li class=\"rank\" data-rank=\"$r\">rank $r: 3 thread(s)</li>" "$dir/dom1" || die "rank $r not shown: $(grep -o 'id="status">[^<]*' "$dir/dom1")"
done
[ "$(frames <"$dir/dom1")" -gt 3 ] || die "the page drew $(frames <"$dir/dom1") frames"
sleep 1
# two browsers at once: both see the job move on
dom "$url" >"$dir/dom2" & b2=$!
dom "$url" >"$dir/dom3"
wait $b2
[ "$(added <"$dir/dom2")" -gt "$(added <"$dir/dom1")" ] || die "the lanes did not advance: $(added <"$dir/dom1") then $(added <"$dir/dom2")"
[ "$(frames <"$dir/dom3")" -gt 3 ] || die "a second browser drew $(frames <"$dir/dom3") frames"
# a picture of it, as a browser draws it (VIEW_SHOT=FILE keeps it: the README's)
profile=$(mktemp -d -p "$dir")
(cd "$dir" && timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
	--window-size=1100,330 --virtual-time-budget=3000 --screenshot="$dir/view.png" "$url" >/dev/null 2>&1)
[ "$(head -c 8 "$dir/view.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || die "no screenshot"
[ -n "${VIEW_SHOT:-}" ] && cp "$dir/view.png" "$VIEW_SHOT"
kill "$view"; wait "$view" 2>/dev/null; view=""

# off loopback: the key is needed, a wrong one gets nothing
echo "view-secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/key"
chmod 600 "$dir/key"
out=$("$BIN/esview" --addr 0.0.0.0 "$job" 2>&1) && die "esview listened off loopback without a secret"
echo "$out" | grep -q "^esview: --addr 0.0.0.0: a listener off loopback needs --view-secret FILE$" || die "no-secret: $out"
"$BIN/esview" --addr 0.0.0.0 --view-secret "$dir/key" -w 30 "$job" >"$dir/view2.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://0.0.0.0:[0-9]*/?key=SECRET$" "$dir/view2.out" || die "$(cat "$dir/view2.out")"
port=$(sed -n 's/.*:\([0-9]*\)\/?key=SECRET$/\1/p' "$dir/view2.out")
key=$(cat "$dir/key")
wait_for 30 curl -sf "http://127.0.0.1:$port/data?key=$key" || die "the right key got nothing"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/data")" = 403 ] || die "no key got data"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/data?key=wrong-$key")" = 403 ] || die "a wrong key got data"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/?key=wrong")" = 403 ] || die "a wrong key got the page"
echo "t_view: ok"
