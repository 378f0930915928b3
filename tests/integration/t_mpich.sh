#!/bin/sh
# t_mpich.sh - the collector built for MPICH (libescollect-mpich.so, the same sources as Open MPI's) under MPICH's own mpiexec, chosen by esrun: a C program's every call, message and call site recorded and read back by an independent checker, Fortran programs' (mpif.h, use mpi) calls each recorded once, heartbeat and esview naming a deadlock, and the same programs giving the same answers under both MPIs (the other tests' MPICH run: run.sh).
set -u
. "$(dirname "$0")/lib.sh"
lib="$(cd "$BUILD/lib" 2>/dev/null && pwd)/libescollect-mpich.so"
[ -f "$lib" ] || { echo "t_mpich: no libescollect-mpich.so (a sanitizer build): skipped"; exit 0; }
command -v mpiexec.hydra >/dev/null || die "no mpiexec.hydra: make deps installs Debian's mpich"
readelf -d "$lib" | grep -q "NEEDED.*libmpich\.so" || die "libescollect-mpich.so is not linked with MPICH: $(readelf -d "$lib" | grep NEEDED)"
readelf -d "$BUILD/lib/libescollect-openmpi.so" | grep -q "NEEDED.*libmpi\.so\.40" || die "libescollect-openmpi.so is not Open MPI's"
prog="$BUILD/mpich/tests/ring_demo"
job="itmpich$$"
dir=$(mktemp -d)
app="" rec="" view=""
cleanup() {
	[ -n "$view" ] && end_job "$view"
	[ -n "$app" ] && end_job "$app"
	[ -n "$rec" ] && end_job "$rec"
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT

# 1. Run by esrun, which picks the collector for MPICH by the library the
# program loads; recorded from its start (esrecord waits for it): 100 steps of a ring
# on 2 ranks, a Sendrecv each and an Allreduce every tenth; rank 1 stuck
# in its own work for 2 s once, so the job lasts long enough to be found
"$BIN/esrecord" -w 60 -o "$dir/a" "$job.r" 2>"$dir/rec.err" &
rec=$!
mpiexec.hydra -n 2 "$BIN/esrun" -q -j "$job.r" "$prog" 1 >"$dir/app.out" 2>&1 ||
	die "ring_demo under MPICH failed: $(cat "$dir/app.out")"
wait "$rec" || die "esrecord failed: $(cat "$dir/rec.err")"
rec=""
grep -q " 0 discarded" "$dir/rec.err" || die "the recording lost events: $(cat "$dir/rec.err")"
for f in ranks sites comms; do
	[ -s "$dir/a/$f" ] || die "the archive has no $f: $(ls "$dir/a")"
done
"$BIN/esprofile" "$dir/a" >"$dir/prof" 2>"$dir/prof.err" || die "esprofile: $(cat "$dir/prof.err")"
grep -q "^@ Ranks        : 2 on 1 host" "$dir/prof" || die "ranks: $(grep '^@ Ranks' "$dir/prof")"
grep -q "^Sendrecv  *[0-9]  *[0-9.]*  *[0-9.]*  *[0-9.]*  *200 " "$dir/prof" || die "not 200 Sendrecvs: $(cat "$dir/prof")"
grep -q "^Allreduce  *[0-9]  *[0-9.]*  *[0-9.]*  *[0-9.]*  *20 " "$dir/prof" || die "not 20 Allreduces: $(cat "$dir/prof")"
# the call sites named from DWARF, as under Open MPI
grep -q "ring_demo.c  *[0-9][0-9]* main  *Sendrecv" "$dir/prof" || die "the Sendrecv's site unnamed: $(cat "$dir/prof")"
# OTF2, read by otf2-print and an independent checker of MPI's order: every
# message once, each end right, none received before it was sent
"$BIN/esconvert" --otf2 "$dir/o" "$dir/a" 2>"$dir/conv.err" || die "esconvert: $(cat "$dir/conv.err")"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print failed: $(cat "$dir/p.err")"
python3 "$(dirname "$0")/msg_check.py" 200 <"$dir/p.txt" >"$dir/check" || die "the messages: $(cat "$dir/check")"
echo "t_mpich: $(cat "$dir/check")"

# 2. Fortran through mpif.h and `use mpi`: MPICH's bindings call the C
# entry points, which record them once each, every call and its arguments
# as the program wrote them down (mpi_expect; the Fortran names of ours
# stay hidden under MPICH: wrap.h)
for b in 77 90; do
	mkdir -p "$dir/f$b"
	mpiexec.hydra -n 2 -genv LD_PRELOAD "$lib" -genv ES_JOB "$job.f$b" -genv ES_KEEP always \
		-genv ES_EXPECT_DIR "$dir/f$b" "$BUILD/mpich/tests/mpi_fortran$b" >"$dir/f$b.out" 2>&1 ||
		die "Fortran ($b) under MPICH failed: $(tail -5 "$dir/f$b.out")"
	"$BUILD/tests/mpi_expect" "$job.f$b" 2 "$dir/f$b" >"$dir/f$b.check" 2>&1 ||
		die "Fortran ($b) calls recorded wrong under MPICH: $(tail -5 "$dir/f$b.check")"
	echo "t_mpich: Fortran $b: $(tail -1 "$dir/f$b.check")"
	rm_segments "$job.f$b"
done

# 3. The unsafe ring (each rank's Ssend to its right before its receive):
# heartbeat names the deadlock, every rank in its call
mpiexec.hydra -n 2 -genv LD_PRELOAD "$lib" -genv ES_JOB "$job.d" "$prog" 3 deadlock >"$dir/dl.out" 2>&1 &
app=$!
"$BIN/heartbeat" -p 300 -w 30 -x "$job.d" >"$dir/hb" 2>&1
st=$?
[ $st = 3 ] || die "heartbeat: status $st, not 3 (a deadlock): $(cat "$dir/hb")"
grep -q "deadlock .*rank0 in MPI_Ssend to 1 tag 2 <- rank1 in MPI_Ssend to 0 tag 2" "$dir/hb" ||
	die "the deadlock: $(cat "$dir/hb")"
# esview on the same deadlock: its data names the cycle and draws the
# ranks' lanes with message lines between them
"$BIN/esview" -w 30 --period 300 "$job.d" >"$dir/view.out" 2>&1 &
view=$!
wait_for 30 grep -q "^esview: job $job.d at http://127.0.0.1:[0-9]*/$" "$dir/view.out" || die "no URL: $(cat "$dir/view.out")"
url=$(sed -n "s/^esview: job $job.d at \(http:[^ ]*\)$/\1/p" "$dir/view.out")
wait_for 60 sh -c "curl -sf '${url}data' | grep -q 'deadlock for [0-9.]* s: rank0 in MPI_Ssend to 1 tag 2 <- rank1 in MPI_Ssend to 0 tag 2'" ||
	die "esview named no deadlock: $(curl -s "${url}data" | grep -o '"findings":[^]]*')"
curl -sf "${url}data" | grep -q '"msgs":\[\[' || die "esview drew no message: $(curl -s "${url}data" | grep -o '"msgs[^]]*')"
kill "$view"; wait "$view" 2>/dev/null; view=""
end_job "$app"
app=""
# 4. The same programs under both MPIs give the same answers: their calls
# and sites, messages, collectives, communicators, phases and I/O, as
# esprofile --json has them (same_check.py), each job's trace read whole
# after it ended (esrecord --remains: no race with a short job's start)
same() { # NAME NP ARGS...: the program NAME under each MPI, then compared
	name=$1 np=$2
	shift 2
	for m in openmpi mpich; do
		rm -rf "$dir/run" && mkdir "$dir/run"
		if [ $m = openmpi ]; then
			mpirun --oversubscribe --allow-run-as-root -np "$np" "$BIN/esrun" -q -j "$job.s$m" \
				"$BUILD/tests/$name" "$@" >"$dir/$m.out" 2>&1
		else
			mpiexec.hydra -n "$np" "$BIN/esrun" -q -j "$job.s$m" "$BUILD/mpich/tests/$name" "$@" >"$dir/$m.out" 2>&1
		fi || die "$name under $m failed: $(tail -3 "$dir/$m.out")"
		rm -rf "$dir/$m.ar"
		"$BIN/esrecord" --remains -o "$dir/$m.ar" "$job.s$m" 2>"$dir/$m.rec" || die "esrecord --remains: $(cat "$dir/$m.rec")"
		"$BIN/esprofile" --json -o "$dir/$m.json" "$dir/$m.ar" || die "esprofile of $name under $m"
		rm_segments "$job.s$m"
	done
	python3 "$(dirname "$0")/same_check.py" "$dir/openmpi.json" "$dir/mpich.json" >"$dir/same" ||
		die "$name under Open MPI and MPICH: $(cat "$dir/same")"
	echo "t_mpich: $name: $(cat "$dir/same")"
}
same mpi_msgs 4 "$dir/run"
same mpi_io 2 "$dir/run"
same mpi_phases 2
same mpi_sites 2
echo "t_mpich: ok (recorded and checked; the deadlock named; the same answers under both MPIs)"
