#!/bin/sh
# t_attack.sh - nobody but the job's owner: another user, a foreign Host, cross-origin POSTs, slow clients and wrong keys against esview, wrong secrets (from one address and from many) against the job's tuple server; the job's data never leaks, the owner's browser and esctl are served, the job runs on.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
command -v chromium >/dev/null || die "no chromium (mk/deps.sh installs it)"
[ "$(id -u)" = 0 ] || die "t_attack plays another user (setpriv): run it as root, as CI does"
job="itatk$$"
dir=$(mktemp -d)
chmod 755 "$dir" # another user runs attack.py from here
app="" view=""
cleanup() {
	[ -n "$view" ] && kill "$view" 2>/dev/null && wait "$view" 2>/dev/null
	ip netns del "esatk_$$" 2>/dev/null; ip link del "esak$$" 2>/dev/null
	[ -n "$app" ] && end_job "$app"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
attack="$dir/attack.py"
cp "$(dirname "$0")/attack.py" "$attack" && chmod 755 "$attack"
other() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; } # user nobody
secret="$dir/secret" key="$dir/key"
echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$secret"
echo "view+key/$$=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$key" # a '+' as base64 has
chmod 600 "$secret" "$key"
dom() {
	profile=$(mktemp -d -p "$dir")
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
		--virtual-time-budget=3000 --dump-dom "$1" 2>/dev/null
}
frames() { sed -n 's/.*data-frames="\([0-9]*\)".*/\1/p' | head -1; }
written() { "$BIN/psadm" show "$job.r0" | awk '$1 ~ /^mpi\.thread/ { n += $5 } END { print n }'; }
# at most this many guesses answered in S seconds by 16 clients at once,
# each held up to 2 s (pastset/guard.c), with the first few free
bound() { echo $((16 * ($1 / 2 + 2) + 10)); }

# the job: the wind tunnel's rows as MPI messages, its tuple servers on loopback with a secret
mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" --serve loopback --secret-file "$secret" -j "$job" \
	"$BIN/windtunnel" -j "${job}w" -q -N 128 -m 2 -l 2 -t 100000000 --transport mpi >/dev/null 2>"$dir/job.err" &
app=$!
wait_for 30 grep -q "monitors: --servers" "$dir/job.err" || die "the job did not say where it is served: $(cat "$dir/job.err")"
servers=$(sed -n 's/.*monitors: --servers \([^ )]*\).*/\1/p' "$dir/job.err" | head -1)
sport=$(echo "$servers" | sed 's/^[^:]*:\([0-9]*\).*/\1/')
before=$(written)

# esview without a key: its user's alone
"$BIN/esview" -w 30 "$job" >"$dir/view.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://127.0.0.1:[0-9]*/$" "$dir/view.out" || die "no URL: $(cat "$dir/view.out")"
url=$(sed -n "s/^esview: job $job at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
port=$(echo "$url" | sed 's/.*:\([0-9]*\)\/$/\1/')
wait_for 30 sh -c "curl -sf '${url}data' | grep -q '\"rank\":1'" || die "no data for both ranks"
# another user gets neither the data, nor the page (its token), nor a change
for what in data "" waitfor.svg; do
	other curl -s -w '\n%{http_code}' "$url$what" >"$dir/got" # written by root's shell: nobody may not
	code=$(tail -n 1 "$dir/got")
	[ "$code" = 403 ] || die "another user got /$what: $code"
	grep -q 'es-token\|"threads"\|<svg' "$dir/got" && die "another user got the job's data from /$what"
	grep -q "^esview serves only the user who started it, not uid 65534" "$dir/got" || die "unclear: $(cat "$dir/got")"
done
[ "$(other curl -s -o /dev/null -w '%{http_code}' -X POST -H "Origin: $url" "${url}rate?hz=1")" = 403 ] ||
	die "another user changed the rate"
# a page of another site: a name that points here (DNS rebinding), cross-origin POSTs
code=$(curl -s -o "$dir/got" -w '%{http_code}' -H "Host: evil.example:$port" "${url}data")
[ "$code" = 403 ] && ! grep -q '"threads"' "$dir/got" || die "a foreign Host got the data: $code"
tok=$(curl -sf "$url" | sed -n 's/.*name="es-token" content="\([0-9a-f]*\)".*/\1/p')
[ ${#tok} = 64 ] || die "no token in the page"
for origin in "http://evil.example" "null" ""; do # the last: no Origin at all
	code=$(curl -s -o /dev/null -w '%{http_code}' -X POST ${origin:+-H "Origin: $origin"} "${url}arm?deadlock=1")
	[ "$code" = 403 ] || die "a POST from Origin '$origin' without the token: $code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -X POST ${origin:+-H "Origin: $origin"} -H "X-ES-Token: $tok" "${url}rate?hz=1")
	[ "$code" = 403 ] || die "a POST from Origin '$origin' with the token: $code"
done
curl -sf "${url}data" | grep -q '"rate":10,"trigger":{"deadlock":false,' || die "a refused POST changed something"
# slow clients, from another user (200 of them, connecting again as they are closed), while a browser
# and a stream of requests are served
other /usr/bin/python3 "$attack" slow "$port" 10 200 >"$dir/slow.out" &
slow=$!
sleep 1
/usr/bin/python3 "$attack" legit "$port" 6 /data >"$dir/legit.out" 2>"$dir/legit.err" & legit=$!
dom "$url" >"$dir/dom1" || die "chromium failed"
wait $legit
wait $slow
[ "$(frames <"$dir/dom1")" -gt 3 ] || die "beside slow clients the browser drew $(frames <"$dir/dom1") frames"
grep -q "^ok [1-9][0-9]* failed 0$" "$dir/legit.out" || die "beside slow clients: $(cat "$dir/legit.out" "$dir/legit.err")"
grep -q "^opened [0-9]*$" "$dir/slow.out" || die "the slow clients: $(cat "$dir/slow.out")"
echo "esview beside $(cat "$dir/slow.out") slow clients: $(cat "$dir/legit.out") requests"
kill "$view"; wait "$view" 2>/dev/null; view=""

# esview with a key: wrong keys from another user are held; the key's holder is served meanwhile
"$BIN/esview" -w 30 --view-secret "$key" "$job" >"$dir/view2.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job at http://127.0.0.1:[0-9]*/?key=KEY$" "$dir/view2.out" || die "$(cat "$dir/view2.out")"
port=$(sed -n 's/.*:\([0-9]*\)\/?key=KEY$/\1/p' "$dir/view2.out")
k=$(cat "$key")
wait_for 30 sh -c "curl -sf 'http://127.0.0.1:$port/data?key=$k' | grep -q '\"rank\":1'" || die "the key (with its '+' as typed) got nothing"
other /usr/bin/python3 "$attack" keys "$port" 8 16 >"$dir/keys.out" &
flood=$!
sleep 1
/usr/bin/python3 "$attack" legit "$port" 6 "/data?key=$(echo "$k" | sed 's/+/%2B/g; s,/,%2F,g; s/=/%3D/g')" >"$dir/legit.out" 2>"$dir/legit.err" &
legit=$!
dom "http://127.0.0.1:$port/?key=$k" >"$dir/dom2" || die "chromium failed"
wait $legit
wait $flood
[ "$(frames <"$dir/dom2")" -gt 3 ] || die "beside wrong keys the browser drew $(frames <"$dir/dom2") frames"
grep -q "^ok [1-9][0-9]* failed 0$" "$dir/legit.out" || die "beside wrong keys: $(cat "$dir/legit.out" "$dir/legit.err")"
read -r _ answers _ leaked _ other_ <"$dir/keys.out"
[ "$leaked" = 0 ] || die "a wrong key got the data: $(cat "$dir/keys.out")"
[ "$answers" -le "$(bound 8)" ] || die "wrong keys answered too fast: $(cat "$dir/keys.out") in 8 s"
echo "esview: $answers wrong keys answered in 8 s (16 at once; $other_ otherwise); the key's holder: $(cat "$dir/legit.out")"
kill "$view"; wait "$view" 2>/dev/null; view=""

# the job's tuple server: wrong secrets from another user, from one address and from many of
# 127/8, while the owner's esctl works through it
other /usr/bin/python3 "$attack" hello "$sport" 8 16 >"$dir/hello1.out" & h1=$!
other /usr/bin/python3 "$attack" hello "$sport" 8 16 rotate >"$dir/hello2.out" & h2=$!
sleep 1
n=0
while kill -0 $h1 2>/dev/null && [ $n -lt 4 ]; do
	"$BIN/esctl" --servers "$servers" --secret-file "$secret" "$job" status >"$dir/st" 2>&1 ||
		die "esctl through the tuple server beside wrong secrets: $(cat "$dir/st")"
	[ "$(grep -c '^rank [01]: records \[all\] (order 0)$' "$dir/st")" = 2 ] || die "status: $(cat "$dir/st")"
	n=$((n + 1))
done
wait $h1 $h2
[ $n -ge 2 ] || die "esctl answered only $n times in 8 s"
for f in hello1 hello2; do
	read -r _ refused _ passed _ dropped <"$dir/$f.out"
	[ "$passed" = 0 ] || die "a wrong secret passed: $(cat "$dir/$f.out")"
	[ "$refused" -le "$(bound 8)" ] || die "wrong secrets answered too fast: $(cat "$dir/$f.out") in 8 s"
done
echo "tuple server: wrong secrets from one address: $(cat "$dir/hello1.out"), from many: $(cat "$dir/hello2.out") in 8 s; esctl answered $n times"

# another host (a network namespace of its own, on a veth pair): esview on
# loopback is out of its reach; listening on every address, it needs the key
id=$$
net="10.$((100 + id % 100)).$((id / 100 % 250))"
ns="esatk_$id" veth="esak$id"
if ip netns add "$ns" 2>/dev/null; then
	hostside() { ip netns exec "$ns" "$@"; }
	ip link add "$veth" type veth peer name eth0 netns "$ns" && ip addr add "$net.254/24" dev "$veth" &&
		ip link set "$veth" up && ip -n "$ns" addr add "$net.1/24" dev eth0 && ip -n "$ns" link set eth0 up ||
		die "veth into $ns"
	"$BIN/esview" -w 30 "$job" >"$dir/view3.out" 2>&1 &
	view=$!
	wait_for 30 grep -q "^esview: job $job at http://127.0.0.1:[0-9]*/$" "$dir/view3.out" || die "$(cat "$dir/view3.out")"
	port=$(sed -n 's/.*:\([0-9]*\)\/$/\1/p' "$dir/view3.out")
	hostside curl -s -m 5 "http://$net.254:$port/data" >/dev/null && die "another host reached esview on loopback"
	kill "$view"; wait "$view" 2>/dev/null
	"$BIN/esview" -w 30 --addr 0.0.0.0 --view-secret "$key" "$job" >"$dir/view4.out" 2>&1 &
	view=$!
	wait_for 30 grep -q "^esview: job $job at http://0.0.0.0:[0-9]*/?key=KEY$" "$dir/view4.out" || die "$(cat "$dir/view4.out")"
	port=$(sed -n 's/.*:\([0-9]*\)\/?key=KEY$/\1/p' "$dir/view4.out")
	there="http://$net.254:$port"
	wait_for 30 sh -c "ip netns exec '$ns' curl -sf '$there/data?key=$k' | grep -q '\"rank\":1'" || die "the key from another host got nothing"
	for ask in "/data" "/data?key=wrong$k" "/?key=wrong" "/waitfor.svg"; do
		code=$(hostside curl -s -o "$dir/got" -w '%{http_code}' "$there$ask")
		[ "$code" = 403 ] && ! grep -q '"threads"\|es-token\|<svg' "$dir/got" || die "another host without the key got $ask: $code"
	done
	code=$(hostside curl -s -o /dev/null -w '%{http_code}' -H "Host: evil.example:$port" "$there/data?key=$k")
	[ "$code" = 403 ] || die "a foreign Host from another host, with the key: $code"
	kill "$view"; wait "$view" 2>/dev/null; view=""
	ip netns del "$ns"; ip link del "$veth" 2>/dev/null
	echo "another host: esview on loopback unreachable; on every address, nothing without the key"
else
	echo "another host: skipped (this machine does not allow network namespaces)"
fi

# the job ran on throughout
after=$(written)
[ "$after" -gt "$before" ] || die "the job stopped: $before tuples, then $after"
kill -0 "$app" || die "the job died"
echo "t_attack: ok"
