#!/bin/sh
# hostile.sh - heartbeat on correct MPI programs under a hostile schedule: each rank in turn starved (SCHED_IDLE beside busy loops on every core); any deadlock it names is a false alarm.
#
# usage: hostile.sh BUILDDIR [ROUNDS]
# Runs each correct scenario of tests/integration/mpi_wait.c (t_waitreq's and
# t_waitfor's) ROUNDS times (default 1) with every rank in turn at
# SCHED_IDLE (chrt -i 0), while a busy loop per core runs at the ranks'
# own priority: the starved rank gets a core only when nothing else wants
# one, so its partners finish, free their communicators and finalize while
# it has yet to take their messages, the schedule that once fooled
# heartbeat.  Ends with
#   hostile: runs=R false_alarms=F
set -u
build=$(cd "${1:?usage: hostile.sh BUILDDIR [ROUNDS]}" && pwd)
rounds=${2:-1}
bench_job=hostile
. "$(dirname "$0")/lib.sh"
lib="$build/lib/libescollect.so"
[ -f "$lib" ] || { echo "hostile: no $lib"; exit 2; }
command -v chrt >/dev/null || { echo "hostile: no chrt (util-linux): skipped"; exit 0; }
# the starved rank, chosen by its mpirun rank
cat >"$dir/starve" <<'EOF'
#!/bin/sh
[ "${OMPI_COMM_WORLD_RANK:-x}" = "$ES_STARVE" ] && exec chrt -i 0 "$@"
exec "$@"
EOF
chmod +x "$dir/starve"
loads=""
stop_loads() { for p in $loads; do kill "$p" 2>/dev/null; done; loads=""; }
trap 'stop_loads; cleanup' EXIT
for _ in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
	sh -c 'while :; do :; done' &
	loads="$loads $!"
done
runs=0 false=0
for _ in $(seq "$rounds"); do
	for sc in halo anyhalo persist ring dups splits intercomm gatherv testany chain any; do
		np=4
		[ "$sc" = any ] && np=3
		r=0
		while [ "$r" -lt "$np" ]; do
			runs=$((runs + 1))
			j="$job.$runs"
			mpirun --oversubscribe --allow-run-as-root --bind-to none -np "$np" -x LD_PRELOAD="$lib" \
				-x ES_JOB="$j" -x ES_STARVE="$r" "$dir/starve" "$build/tests/mpi_wait" "$sc" 2 \
				>"$dir/app" 2>&1 &
			app=$!
			"$bin/heartbeat" -p 400 -w 30 "$j" >"$dir/hb" 2>&1
			wait "$app"
			if grep -q "deadlock" "$dir/hb"; then
				false=$((false + 1))
				echo "  $sc, rank $r starved: $(grep -m1 'deadlock for' "$dir/hb")"
			fi
			rm_segments "$j."
			r=$((r + 1))
		done
	done
done
echo "hostile: runs=$runs false_alarms=$false"
