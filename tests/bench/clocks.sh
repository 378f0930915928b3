#!/bin/sh
# clocks.sh - a ten-minute run on two hosts whose clocks are apart and drift as real ones do (rank 1's 3 ms ahead, gaining 20 ns a second), recorded over TCP: the clock points the ranks measured, and the messages received before they were sent, as recorded and as the readers put them.
#
# usage: clocks.sh BUILDDIR [SECONDS] [PPM]
# Each rank is as on a host of its own (tests/integration/netns_shim.c: its
# own /dev/shm, its CLOCK_MONOTONIC set apart), talking MPI over TCP
# loopback; ES_SYNC_EVERY as users get it (10 s).
set -u
build=$(cd "${1:?usage: clocks.sh BUILDDIR [SECONDS] [PPM]}" && pwd)
secs=${2:-600}
ppm=${3:-0.02}
bench_job=bclk
. "$(dirname "$0")/lib.sh"
shim=$build/lib/libnetns_shim.so
[ -f "$shim" ] && [ "$(id -u)" = 0 ] || { echo "clocks: needs $shim and root (a /dev/shm of each rank's own): skipped"; exit 0; }

echo "clocks: $secs s on two hosts, rank 1's clock 3 ms ahead and gaining $ppm ppm"
mpirun --oversubscribe --allow-run-as-root -np 2 --mca btl self,tcp -x LD_PRELOAD="$shim" -x ES_TEST_HOSTS=1 \
	-x ES_TEST_CLOCK="0/0,3000000/$ppm" -x ES_SERVE=loopback -x ES_SERVERS_OUT="$dir/servers" \
	"$bin/esrun" -q -j "$job" "$build/tests/mpi_clocks" "$secs" >"$dir/job.out" 2>&1 &
app=$!
n=600
while [ ! -s "$dir/servers" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
[ -s "$dir/servers" ] || { echo "clocks: no tuple servers: $(cat "$dir/job.out")"; exit 1; }
"$bin/esrecord" -w 30 --servers "$(cat "$dir/servers")" -o "$dir/a" "$job" 2>"$dir/rec.err" ||
	{ echo "clocks: esrecord failed: $(cat "$dir/rec.err")"; exit 1; }
wait "$app" || { echo "clocks: the job failed: $(cat "$dir/job.out")"; exit 1; }
sed 's/^/  /' "$dir/rec.err"

# check ARCHIVE: messages=.. recv_before_send=.. (OTF2, the independent checker)
check() {
	rm -rf "$dir/c.otf2"
	"$bin/esconvert" --otf2 "$dir/c.otf2" "$1" >"$dir/conv" 2>&1 || { cat "$dir/conv"; exit 1; }
	otf2-print "$dir/c.otf2/traces.otf2" 2>/dev/null |
		python3 "$(dirname "$0")/../integration/msg_check.py" 2>/dev/null | head -1
}
fixed=$(check "$dir/a")
grep "clocks:" "$dir/conv" | sed 's/^/  /'
mkdir "$dir/raw" && cp "$dir/a/"* "$dir/raw/" && rm "$dir/raw/clocks"
raw=$(check "$dir/raw")
echo "  as the readers put them: $fixed"
echo "  as recorded:             $raw"
points=$(grep -c "^sync 1 " "$dir/a/clocks")
python3 - "$dir/a/clocks" <<'EOF'
import sys
p = sorted((int(w[4]), int(w[5]), int(w[6])) for w in (l.split() for l in open(sys.argv[1])) if w[0] == "sync" and w[1] == "1")
(t0, o0, _), (t1, o1, _) = p[0], p[-1]
rtt = sorted(r for _, _, r in p)
print("  rank 1: %d points over %.0f s, %.3f ms apart at first, drifting %.3f ppm; round trips %d to %d ns" %
      (len(p), (t1 - t0) / 1e9, o0 / 1e6, (o1 - o0) / (t1 - t0) * 1e6, rtt[0], rtt[-1]))
EOF
m=$(echo "$fixed" | sed -n 's/.*messages=\([0-9]*\).*/\1/p')
b=$(echo "$fixed" | sed -n 's/.*recv_before_send=\([0-9]*\).*/\1/p')
rb=$(echo "$raw" | sed -n 's/.*recv_before_send=\([0-9]*\).*/\1/p')
echo "clocks: seconds=$secs messages=$m points=$points backwards=$b backwards_as_recorded=$rb"
