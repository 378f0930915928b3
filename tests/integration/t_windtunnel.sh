#!/bin/sh
# t_windtunnel.sh - the wind tunnel under mpirun: particles conserved, momentum balanced, the same lattice whatever the processes, threads, slices and transport.
set -u
. "$(dirname "$0")/lib.sh"
wt="$BUILD/bin/windtunnel"
[ -x "$wt" ] || { echo "no $wt (sanitizer build): skipped"; exit 0; }
job="itwt$$"
cleanup() { rm_segments "$job"; }
trap cleanup EXIT
run() { # run NP ARGS...: prints the digest line; fails unless conserved
	np=$1; shift
	out=$(mpirun --oversubscribe --allow-run-as-root -np "$np" "$wt" -q -j "$job$np" "$@") ||
		die "windtunnel -np $np $* failed: $out"
	echo "$out" | grep -q ": conserved$" || die "not conserved (-np $np $*): $out"
	echo "$out" | grep -q "momentum .*: balanced$" || die "momentum does not balance (-np $np $*): $out"
	echo "$out" | grep -q "every matrix alike" || die "matrices differ (-np $np $*)"
	echo "$out" | awk '/lattice digest/ {print $4}'
}
d1=$(run 1 -N 64 -t 60 -m 2 -l 3) || exit 1
d2=$(run 2 -N 64 -t 60 -m 2 -l 3) || exit 1
d3=$(run 3 -N 64 -t 60 -m 2 -l 3) || exit 1
d4=$(run 1 -N 64 -t 60 -m 2 -l 1) || exit 1
d5=$(run 2 -N 64 -t 60 -m 1 -l 6 -c) || exit 1
echo "digests: $d1 $d2 $d3 $d4 $d5"
[ "$d1" = "$d2" ] && [ "$d1" = "$d3" ] || die "the lattice depends on the number of processes"
[ "$d1" = "$d4" ] && [ "$d1" = "$d5" ] || die "the lattice depends on the slicing or the collectors"
# ranks on different pathmap hosts: rows and totals through tuple servers
d9=$(run 3 -N 64 -t 60 -m 2 -l 3 --hosts 3) || exit 1
d10=$(run 3 -N 64 -t 60 -m 2 -l 3 --hosts 2 -c) || exit 1
[ "$d1" = "$d9" ] && [ "$d1" = "$d10" ] || die "the lattice depends on the hosts"
# moving slices between hosts is a pathmap edit: the same lattice
pm=$(mktemp --suffix=.yaml) pm2=$(mktemp --suffix=.yaml)
run 2 -N 64 -t 60 -m 2 -l 3 --hosts 2 --pathmap-out "$pm" >/dev/null || exit 1
sed -e 's/threads: \[m0.s0, m0.s1, m0.s2\]/threads: [m0.s0, m1.s1, m0.s2]/' \
    -e 's/threads: \[m1.s0, m1.s1, m1.s2\]/threads: [m1.s0, m0.s1, m1.s2]/' "$pm" >"$pm2"
cmp -s "$pm" "$pm2" && die "the edit did not take"
"$BIN/pathmap" show "$pm2" | grep -q "m0.s1: \[h0's tuple server\] -> m0.s0.dn" || die "the edit moved no row across hosts"
d11=$(mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" -q -N 64 -t 60 -m 2 -l 3 --pathmap "$pm2" |
	awk '/lattice digest/ {print $4}')
[ "$d1" = "$d11" ] || die "an edited pathmap gave another lattice: $d11"
msg=$(mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" -q -N 64 -t 60 -m 2 -l 4 --pathmap "$pm2" 2>&1) &&
	die "a pathmap of another slicing accepted"
echo "$msg" | grep -q "$pm2: 6 threads, but 2 matrices x 4 slices need 8" || die "misfit not explained: $msg"
rm_segments "$(awk '/^name:/ {print $2}' "$pm2")\."
rm -f "$pm" "$pm2"
d7=$(run 1 -N 64 -t 60 -m 2 -l 3 --transport mpi) || exit 1
d8=$(run 3 -N 64 -t 60 -m 2 -l 3 --transport mpi) || exit 1
[ "$d1" = "$d7" ] && [ "$d1" = "$d8" ] || die "the lattice depends on the transport"
# plain MPI messages, recorded by libescollect.so
lib="$(cd "$BUILD/lib" && pwd)/libescollect.so"
mpirun --oversubscribe --allow-run-as-root -np 2 -x LD_PRELOAD="$lib" -x ES_JOB="$job.e" "$wt" -q \
	-N 64 -t 60 -m 2 -l 3 --transport mpi >/dev/null || die "windtunnel under libescollect failed"
"$BIN/psadm" show "$job.e.r0" | grep -q "mpi.thread" || die "no MPI calls recorded"
# without -c: no trace spaces, and a monitor says why rather than that the job is not there
mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" -q -N 64 -t 100000000 -m 2 -l 2 -j "$job.nc" >/dev/null 2>&1 &
nc=$!
wait_for 30 sh -c "\"$BIN/psadm\" list | grep -q '^$job.nc\.'" || die "the wind tunnel made no segment"
out=$("$BIN/esctl" -w 0 "$job.nc" objects 2>&1) && die "esctl saw objects without -c: $out"
kill "$nc"; wait "$nc" 2>/dev/null
rm_segments "$job.nc."
[ "$out" = "esctl: job '$job.nc' has segments on this host (psadm list) but no trace spaces: it runs without collectors (an MPI program: under esrun; the wind tunnel: -c)" ] ||
	die "without -c, esctl said: $out"
png=$(mktemp --suffix=.png)
run 2 -N 64 -t 60 -m 2 -l 3 --picture "$png" >/dev/null || exit 1
head -c 8 "$png" | od -An -c | grep -q "P   N   G" || die "--picture did not write a PNG"
[ "$(od -An -tu1 -j16 -N8 "$png" | tr -s ' ')" = " 0 0 0 64 0 0 0 32" ] || die "picture size is not 64 x 32 cells (2 x 2 sites each)"
rm -f "$png"
d6=$(run 2 -N 64 -t 40 -m 2 -l 4 --model fhp2) || exit 1
[ "$d6" != "$d1" ] || die "FHP-II gave FHP-I's lattice"
left=$("$BIN/psadm" list | awk '{print $1}' | grep "^$job" | grep -v '\.[tr][0-9]*$')
[ -z "$left" ] || die "segments left behind besides trace spaces: $left"
mpirun --oversubscribe --allow-run-as-root -np 1 "$wt" --size huge >/dev/null 2>&1 && die "bad size accepted"
mpirun --oversubscribe --allow-run-as-root -np 1 "$wt" --help | grep -q "FHP" || die "no help"
# wrong arguments are told in the user's terms
msg=$(mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" --hosts 3 -q 2>&1) && die "--hosts 3 on 2 processes accepted"
echo "$msg" | grep -q "windtunnel: --hosts 3: only 2 processes, and each host needs one" || die "unclear --hosts error: $msg"
sf=$(mktemp); chmod 644 "$sf"; echo secret >"$sf"
msg=$(mpirun --oversubscribe --allow-run-as-root -np 1 "$wt" --listen any --secret-file "$sf" -q 2>&1) && die "a readable secret accepted"
rm -f "$sf"
echo "$msg" | grep -q "windtunnel: --secret-file $sf: group or others may read or write it (chmod 600 it)" || die "unclear secret error: $msg"
exit 0
