#!/bin/sh
# attack.sh - what an attack on a job's doors costs the job: LAMMPS's melt on 2 ranks, its tuple servers on loopback with a secret and esview (a key) watching, alone and while another user floods the tuple server with wrong secrets and esview with wrong keys and slow clients, side by side.
#
# usage: attack.sh BUILDDIR [RUNS]
# Interleaved runs (alone, attacked, alone, attacked...) of the same job,
# each its wall time from mpirun's start to its end; the attackers (user
# nobody, at nice 19 so that what is measured is what the doors cost the
# job, not the attackers' own CPU on a 2-core machine) start once the job
# says where it is served.  Per pair attacked / alone; the null control is
# each run alone against the one before it.
# Ends with: attack: lammps=R (null N)
set -u
build=$(cd "${1:?usage: attack.sh BUILDDIR [RUNS]}" && pwd)
runs=${2:-8}
bench_job=batk
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "attack: plays another user (setpriv): run as root; skipped"; exit 0; }
[ -f "$build/lib/libescollect.so" ] || { echo "attack: build $build first"; exit 2; }
. "$(dirname "$0")/../apps/apps.sh" # apps_dir: in.melt
chmod 755 "$dir"
cp "$(dirname "$0")/../integration/attack.py" "$dir/attack.py" && chmod 755 "$dir/attack.py"
(umask 077; echo "secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/secret"
	echo "key-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')" >"$dir/key")
# user nobody at nice 19 (a command, not a function: $! must be its pid, to stop it)
other="nice -n 19 setpriv --reuid=65534 --regid=65534 --clear-groups"

# run N attacked: the job's wall time in seconds
run() {
	j="$job$1"
	t0=$(date +%s.%N)
	(cd "$dir" && exec mpirun --oversubscribe --allow-run-as-root -np 2 "$bin/esrun" --serve loopback \
		--secret-file "$dir/secret" -j "$j" lmp -in "$apps_dir/in.melt" -var steps 4000 -log none \
		-screen "lmp$1.out" >/dev/null 2>"$dir/job$1.err") &
	app=$!
	n=0
	until grep -q "monitors: --servers" "$dir/job$1.err" 2>/dev/null || [ $n -ge 200 ]; do sleep 0.05; n=$((n + 1)); done
	port=$(sed -n 's/.*monitors: --servers [^:]*:\([0-9]*\).*/\1/p' "$dir/job$1.err" | head -1)
	[ -n "$port" ] || { echo "attack: the job did not say where it is served: $(cat "$dir/job$1.err")" >&2; exit 1; }
	"$bin/esview" -w 10 --view-secret "$dir/key" "$j" >"$dir/view$1.out" 2>&1 &
	view=$!
	pids=""
	if [ "$2" = 1 ] && [ -n "$port" ]; then
		n=0
		until grep -q "^esview: job" "$dir/view$1.out" || [ $n -ge 200 ]; do sleep 0.05; n=$((n + 1)); done
		vport=$(sed -n 's/.*:\([0-9]*\)\/?key=KEY$/\1/p' "$dir/view$1.out")
		$other /usr/bin/python3 "$dir/attack.py" hello "$port" 60 16 >/dev/null & pids="$pids $!"
		$other /usr/bin/python3 "$dir/attack.py" keys "$vport" 60 16 >/dev/null & pids="$pids $!"
		$other /usr/bin/python3 "$dir/attack.py" slow "$vport" 60 100 >/dev/null & pids="$pids $!"
	fi
	wait "$app" || { echo "attack: the job failed: $(cat "$dir/job$1.err")" >&2; exit 1; }
	t1=$(date +%s.%N)
	# shellcheck disable=SC2086 # the attackers' pids
	[ -n "$pids" ] && kill $pids 2>/dev/null
	kill "$view" 2>/dev/null
	wait 2>/dev/null
	rm_segments "$j"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
echo "attack: $runs interleaved pairs of LAMMPS's melt (2 ranks, 4000 steps, its tuple servers and esview),"
echo "        alone and attacked (16 wrong-secret and 16 wrong-key guessers, 100 slow clients, user nobody at nice 19)"
prev=""
for i in $(seq 1 "$runs"); do
	a=$(run "a$i" 0) b=$(run "b$i" 1)
	echo "$a $b" >>"$dir/pairs"
	[ -n "$prev" ] && echo "$prev $a" >>"$dir/null"
	prev=$a
	echo "  pair $i: alone $a s, attacked $b s"
done
r=$(awk '{ printf "%.4f\n", $2 / $1 }' "$dir/pairs" | median)
nl=$(awk '{ printf "%.4f\n", $2 / $1 }' "$dir/null" | median)
echo "  attacked / alone, median of $runs pairs: $r ($(awk '{ printf "%.4f\n", $2 / $1 }' "$dir/pairs" | spread)); null pairs: $nl"
echo "attack: lammps=$r (null $nl)"
