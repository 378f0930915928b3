#!/bin/sh
# t_record.sh - esrecord keeps a running job in an archive, esconvert makes OTF2 that otf2-print reads and JSON that a parser reads, esprofile counts its calls: all held against what the program did; bad input refused.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itrec$$"
dir=$(mktemp -d)
mnt=""
app=""
cleanup() {
	[ -n "$app" ] && end_job "$app"
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm_segments "$job"
	rm_vader_orphans # those of the ranks killed
	rm -rf "$dir"
}
trap cleanup EXIT
mpi() { mpirun --oversubscribe --allow-run-as-root -np 2 "$@"; }
# plot_adds_up TIMELINE.DAT PROFILE: each rank's boxes (width times the
# share of its lane they fill) sum to its MPITime in esprofile, within 2%
# (and 0.05 ms, for ranks that spent almost nothing there)
plot_adds_up() {
	awk 'FNR == 1 { file++ }
	     file == 1 && NF == 6 && $3 >= 0 { r = int($2 + 0.5); drawn[r] += ($4 - $3) * ($6 - $5) / 0.8 * 1000 }
	     file == 2 && /^@--- MPI time/ { on = 1; next }
	     file == 2 && on && /^@/ { on = 0 }
	     file == 2 && on && $1 ~ /^[0-9]+$/ { prof[$1] = $3 }
	     END {
		n = 0
		for (r in prof) {
			d = drawn[r] - prof[r]; d = d < 0 ? -d : d; n++
			if (d > 0.02 * prof[r] && d > 0.05) {
				printf "rank %s: drawn %.3f ms, profile %.3f ms\n", r, drawn[r], prof[r]; bad = 1
			}
		}
		exit bad || !n
	     }' "$1" "$2"
}

# The recorder first, waiting for the job; the job runs mpi_every, whose calls are known.
"$BIN/esrecord" -w 30 -o "$dir/a" "$job.c" 2>"$dir/rec.err" &
rec=$!
mpi -x ES_EXPECT_DIR="$dir" "$BIN/esrun" -q -j "$job.c" "$BUILD/tests/mpi_every" || die "mpi_every failed"
wait $rec || die "esrecord failed: $(cat "$dir/rec.err")"
cat "$dir/rec.err"
# a tuple each, and a group mark (no call) after each MPI_Win_post and MPI_Win_start (mpi_every's groups: one rank)
calls=$(cat "$dir/expect.r0" "$dir/expect.r1" | wc -l)
events=$((calls + $(cat "$dir/expect.r0" "$dir/expect.r1" | grep -c "^MPI_Win_\(post\|start\) ")))
grep -q "^esrecord: $events events written to $dir/a, 0 discarded before they could be read (the job ended)$" \
	"$dir/rec.err" || die "not every call recorded: $(cat "$dir/rec.err")"
grep -q "^events: $events$" "$dir/a/INFO" || die "INFO: $(cat "$dir/a/INFO")"
# each rank's thread, numbered in the order the recorder met them
cut -f2,3 "$dir/a/threads" | sort >"$dir/named"
printf '%s.r0\trank0.thread0\n%s.r1\trank1.thread0\n' "$job.c" "$job.c" | cmp -s - "$dir/named" ||
	die "threads: $(cat "$dir/a/threads")"
head -1 "$dir/a/comms" | grep -q "^0 1 world 2 0 1$" || die "MPI_COMM_WORLD is not the first communicator"

# OTF2, read back by otf2-print: no warning, and what the program did
"$BIN/esconvert" --otf2 "$dir/o" "$dir/a" 2>"$dir/conv.err" || die "esconvert: $(cat "$dir/conv.err")"
cat "$dir/conv.err"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print failed: $(cat "$dir/p.err")"
[ -s "$dir/p.err" ] && die "otf2-print warned: $(cat "$dir/p.err")"
regions=$(sed -n 's/.*threads: \([0-9]*\) regions.*/\1/p' "$dir/conv.err")
dones=$(grep -c '/done' "$dir/expect.r0" "$dir/expect.r1" | awk -F: '{ n += $2 } END { print n }')
[ "$regions" -eq $((calls - dones)) ] || die "$regions regions for $calls calls of which $dones completions"
[ "$(grep -c '^ENTER ' "$dir/p.txt")" -eq "$regions" ] || die "ENTER events are not one per region"
# per location: time never goes back, every LEAVE closes the region last entered
awk '$1 == "ENTER" || $1 == "LEAVE" || $1 ~ /^MPI_/ {
	l = $2; t = $3 + 0
	if (t < last[l]) { print "time goes back on location " l " at " t; bad = 1 }
	last[l] = t
	if ($1 == "ENTER") stack[l, ++depth[l]] = $5
	if ($1 == "LEAVE") { if (depth[l] < 1 || stack[l, depth[l]] != $5) { print "unmatched LEAVE " $0; bad = 1 }; depth[l]-- }
} END { for (l in depth) if (depth[l]) { print "location " l " left open"; bad = 1 }; exit bad }' "$dir/p.txt" ||
	die "regions do not nest"
# the first calls, as mpi_every makes them
loc0=$(awk -F'\t' '$3 == "rank0.thread0" { print $1 }' "$dir/a/threads") # a location per thread, as numbered
loc1=$(awk -F'\t' '$3 == "rank1.thread0" { print $1 }' "$dir/a/threads")
grep "^MPI_SEND  *$loc0 " "$dir/p.txt" | head -2 | sed 's/.*Receiver: //' >"$dir/first"
printf '%s\n' "1 (\"rank1.thread0\" <$loc1>), Communicator: \"MPI_COMM_WORLD\" <0>, Tag: 1, Length: 16" \
	"1 (\"rank1.thread0\" <$loc1>), Communicator: \"MPI_COMM_WORLD\" <0>, Tag: 2, Length: 16" | cmp -s - "$dir/first" ||
	die "rank 0's first sends: $(cat "$dir/first")"
# every message has both ends: as many sends (MPI_SEND, MPI_ISEND) from
# rank a to rank b with a tag and length as receives (MPI_RECV, MPI_IRECV);
# a location is its thread's number in the archive, which need not be its
# rank's (the recorder meets the ranks in either order): each made a rank
rank_of() { awk -v f="$1" -v l0="$loc0" -v l1="$loc1" '{ $f = $f == l0 ? 0 : $f == l1 ? 1 : "?" $f } 1'; }
sed -n 's/^MPI_I*SEND  *\([0-9]*\) .*Receiver: \([0-9]*\) .*Tag: \([0-9]*\), Length: \([0-9]*\).*$/\1 \2 \3 \4/p' "$dir/p.txt" |
	rank_of 1 | sort >"$dir/sends"
sed -n 's/^MPI_I*RECV  *\([0-9]*\) .*Sender: \([0-9]*\) .*Tag: \([0-9]*\), Length: \([0-9]*\).*$/\2 \1 \3 \4/p' "$dir/p.txt" |
	rank_of 2 | sort >"$dir/recvs"
[ "$(wc -l <"$dir/sends")" -gt 20 ] || die "too few sends: $(cat "$dir/sends")"
diff "$dir/sends" "$dir/recvs" >"$dir/unmatched" || die "sends and receives do not pair: $(cat "$dir/unmatched")"
# each request: its MPI_ISEND before its MPI_ISEND_COMPLETE, its
# MPI_IRECV_REQUEST before its MPI_IRECV, on one location
awk '$1 ~ /^MPI_I(SEND|RECV)/ { r = $NF; k = $2 " " r
	if ($1 == "MPI_ISEND" || $1 == "MPI_IRECV_REQUEST") { if (k in open) { print "request reused open: " $0; bad = 1 }; open[k] = $1 }
	else { want = $1 == "MPI_ISEND_COMPLETE" ? "MPI_ISEND" : "MPI_IRECV_REQUEST"
	       if (open[k] != want) { print "completes nothing open: " $0; bad = 1 }; delete open[k] } }
     END { for (k in open) { print "never completed: " k " " open[k]; bad = 1 }; exit bad }' "$dir/p.txt" ||
	die "requests do not pair"
# collectives: on both ranks, with their communicator; the nonblocking ones completed
for l in 0 1; do
	grep -q "^MPI_COLLECTIVE_END  *$l .*Operation: EXSCAN, Communicator: \"MPI_COMM_WORLD\"" "$dir/p.txt" ||
		die "no MPI_Exscan on WORLD on location $l"
done
grep -q '^NON_BLOCKING_COLLECTIVE_COMPLETE .*Operation: REDUCE, .*Root: 1 (' "$dir/p.txt" ||
	die "no MPI_Ireduce completed with root 1"
grep -q '^MPI_COLLECTIVE_END .*Operation: DESTROY_HANDLE, Communicator: "communicator [0-9a-f]* (2 ranks)"' \
	"$dir/p.txt" || die "no MPI_Comm_free on the communicator it frees"
icolls=$(cat "$dir/expect.r0" "$dir/expect.r1" | grep -E '^MPI_(I[a-z_]*|Comm_idup)/done ' |
	grep -cvE '^MPI_I(recv|send|bsend|ssend|rsend|mrecv)/')
[ "$(grep -c '^NON_BLOCKING_COLLECTIVE_COMPLETE ' "$dir/p.txt")" -eq "$icolls" ] ||
	die "not every nonblocking collective completed"

# Trace-event JSON, read by a JSON parser: every slice, nested; every
# message an arrow; a window keeps a part
"$BIN/esconvert" --json "$dir/t.json" "$dir/a" 2>"$dir/json.err" || die "esconvert --json: $(cat "$dir/json.err")"
cat "$dir/json.err"
msgs=$(wc -l <"$dir/sends")
python3 "$(dirname "$0")/json_check.py" "$dir/t.json" "$regions" "$msgs" || die "the JSON is wrong"
"$BIN/esconvert" -q --json "$dir/w.json" --window :0.001 "$dir/a" || die "esconvert --window failed"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); x = [e for e in d["traceEvents"] if e["ph"] == "X"]
sys.exit(not (0 < len(x) < int(sys.argv[2]) and all(e["ts"] <= 1000 for e in x)))' "$dir/w.json" "$regions" ||
	die "--window :0.001 kept what it should not"
out=$("$BIN/esconvert" --json "$dir/x.json" --window 2:1 "$dir/a" 2>&1) && die "--window 2:1 taken"
echo "$out" | grep -q "^esconvert: --window: expected A:B" || die "--window 2:1: $out"

# The profile: per rank, as many of each call as the program made (its
# completions and MPI_Init/Finalize are not calls there; a poll streak
# counts its polls, the tuple's arg, * where the program cannot tell), and
# their bytes
"$BIN/esprofile" -o "$dir/prof.txt" "$dir/a" || die "esprofile failed"
for r in 0 1; do
	grep -v '/done ' "$dir/expect.r$r" | sed 's|/[a-z]* | |' | grep -v '^MPI_Init \|^MPI_Finalize ' |
		awk '{ p = $1 ~ /^MPI_(Test|Testany|Testall|Testsome|Iprobe|Improbe|Request_get_status|Win_test)$/
		       n[$1] += p && $4 != "*" ? $4 : 1; anyn[$1] += p && $4 == "*"
		       b[$1] += ($3 == "-" || $3 == "*") ? 0 : $3; any[$1] += $3 == "*" }
		     END { for (c in n) print c, anyn[c] ? "*" : n[c], any[c] ? "*" : b[c] }' | sort >"$dir/want.$r"
	awk -v r=$r '/^@--- Per rank/ { on = 1; next } /^@---/ { on = 0 } on && $2 == r { print $1, $3, $7 }' \
		"$dir/prof.txt" | sort >"$dir/got.$r"
	awk 'NR == FNR { want[$1] = $2 " " $3; next }
	     { split(want[$1], w, " "); if (!($1 in want) || (w[1] != "*" && w[1] != $2) || (w[2] != "*" && w[2] != $3)) { print "rank " r ": " $0 " (expected " want[$1] ")"; bad = 1 }; delete want[$1] }
	     END { for (c in want) { print "rank " r ": no " c; bad = 1 }; exit bad }' r=$r "$dir/want.$r" "$dir/got.$r" ||
		die "the profile's counts or bytes differ from the program's calls"
done
grep -q '^WORLD  *2  *[1-9]' "$dir/prof.txt" || die "no WORLD in the profile's communicators"
awk '/^@--- Heaviest/ { on = 1; next } on && $1 == 0 && $2 == 1 { found = $3 > 0 && $4 > 0 } END { exit !found }' \
	"$dir/prof.txt" || die "no traffic from rank 0 to rank 1 in the profile"
# Pictures: PNG files, drawn from the same numbers
"$BIN/esconvert" -q --plot "$dir/pics" "$dir/a" || die "esconvert --plot failed"
for png in timeline matrix; do
	[ "$(head -c 8 "$dir/pics/$png.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] || die "$png.png is no PNG"
done
# the trace's owner's alone, as the archive is: pictures, their data and scripts, OTF2, JSON
open=$(find "$dir/pics" "$dir/o" "$dir/t.json" -perm /077 | head -3)
[ -z "$open" ] || die "outputs others may read: $open $(ls -l $open)"
sent=$(awk '/^@--- Heaviest/ { on = 1; next } on && $1 == 0 && $2 == 1 { print $4 }' "$dir/prof.txt")
[ "$(awk 'NR == 1 { print $2 }' "$dir/pics/matrix.dat")" = "$sent" ] || die "matrix.dat: $(cat "$dir/pics/matrix.dat"), profile: $sent"
for r in 0 1; do
	awk -v r=$r '$2 > r - 0.5 && $2 < r + 0.5 { n++ } END { exit !n }' "$dir/pics/timeline.dat" ||
		die "the timeline has nothing for rank $r"
done
# what the timeline draws adds up to the profile's MPI time, rank by rank,
# here and on a job whose waits last a second, over hundreds of bins
plot_adds_up "$dir/pics/timeline.dat" "$dir/prof.txt" || die "the timeline's MPI time is not the profile's"
"$BIN/esrecord" -w 30 -o "$dir/long" "$job.l" 2>"$dir/long.err" &
rec=$!
mpi "$BIN/esrun" -q -j "$job.l" "$BUILD/tests/mpi_wait" halo 1 >/dev/null || die "mpi_wait halo failed"
wait $rec || die "esrecord (halo) failed: $(cat "$dir/long.err")"
"$BIN/esprofile" -o "$dir/long.txt" "$dir/long" && "$BIN/esconvert" -q --plot "$dir/longpics" "$dir/long" ||
	die "no profile or pictures of the halo job"
plot_adds_up "$dir/longpics/timeline.dat" "$dir/long.txt" || die "the timeline under-draws the halo job's waits"
# the calls' labels: inside the frame, none over another (text 6.5 px a
# character on a plot some 1,150 px wide, a third of a lane high)
for gp in "$dir/pics/timeline.gp" "$dir/longpics/timeline.gp"; do
	awk -F"'" '/^set xrange/ { sub(/.*:/, ""); sub(/].*/, ""); span = $0 + 0 }
		/^set label [0-9]* .MPI_/ { n++; split($3, p, /[ ,]/); x[n] = p[3]; y[n] = p[4]; w[n] = length($2) * 6.5 / 1150 * span }
		END {
			for (i = 1; i <= n; i++) {
				if (x[i] - w[i] / 2 < -1e-9 || x[i] + w[i] / 2 > span + 1e-9) { print "outside: " i; bad = 1 }
				for (j = 1; j < i; j++) {
					dy = y[i] - y[j]; dx = x[i] - x[j]
					if ((dy < 0 ? -dy : dy) < 0.26 && (dx < 0 ? -dx : dx) < (w[i] + w[j]) / 2) { print "over: " i " " j; bad = 1 }
				}
			}
			exit bad || !n
		}' "$gp" || die "labels outside the frame or over each other: $(grep '^set label' "$gp")"
done
out=$("$BIN/esconvert" --plot "$dir/it's" "$dir/a" 2>&1) && die "a plot directory with a quote was taken"
echo "$out" | grep -q "cannot have quotes" || die "quote in plot directory: $out"

# and of a live job, recorded to its end
mkdir "$dir/tmp"
TMPDIR="$dir/tmp" "$BIN/esprofile" -w 30 -o "$dir/live.txt" "$job.live" 2>"$dir/live.err" &
prof=$!
mkdir -p "$dir/live" && mpi -x ES_EXPECT_DIR="$dir/live" "$BIN/esrun" -q -j "$job.live" "$BUILD/tests/mpi_every" >/dev/null 2>&1 || die "mpi_every (live) failed"
wait $prof || die "esprofile of a live job failed: $(cat "$dir/live.err")"
[ -z "$(ls "$dir/tmp")" ] || die "esprofile left its scratch archive: $(ls -R "$dir/tmp")"
grep -q "^@ esprofile (EventSpace [0-9.]*): job $job.live, $events events$" "$dir/live.txt" || die "live profile: $(head -3 "$dir/live.txt")"

# A PATHS job: the wind tunnel with collectors
wt="$BUILD/bin/windtunnel"
"$BIN/esrecord" -w 30 -o "$dir/w" "$job.wt" 2>"$dir/recw.err" &
rec=$!
mpi "$wt" -q -j "$job.wt" -N 64 -t 30 -m 1 -l 6 -c >/dev/null || die "the wind tunnel failed"
wait $rec || die "esrecord (wind tunnel) failed: $(cat "$dir/recw.err")"
n=$(sed -n 's/^esrecord: \([0-9]*\) events written to .*, 0 discarded .*/\1/p' "$dir/recw.err")
[ "${n:-0}" -gt 100 ] || die "the wind tunnel's archive: $(cat "$dir/recw.err")"
"$BIN/esconvert" -q --otf2 "$dir/wo" "$dir/w" || die "esconvert (wind tunnel) failed"
otf2-print "$dir/wo/traces.otf2" >"$dir/wp.txt" 2>"$dir/wp.err" || die "otf2-print (wind tunnel) failed"
[ -s "$dir/wp.err" ] && die "otf2-print warned: $(cat "$dir/wp.err")"
[ "$(grep -c '^ENTER  .*Region: "\(write\|read\|take\|read_latest\)"' "$dir/wp.txt")" -eq "$n" ] ||
	die "the wind tunnel's $n events are not each a region"

# A recorder killed with SIGKILL at any moment leaves an archive that
# every reader opens, saying first that it holds nothing, that it is
# incomplete, or what it lacks; --repair keeps at least what they read, and
# OTF2 of the result reads back.  The moments are events of its life, not
# times the machine's speed decides: its archive there while it waits for
# its job; attached, its threads named; a checkpoint with events; its
# communicators named; and the same in a PATHS job, which has none.
opened() { # ARCHIVE WHAT [FIRST]: every reader opens it, FIRST (a regex) said first
	a=$1 first=${3:-"$1 (was cut off before it recorded anything|is incomplete)|$1: the archive lacks"}
	n=$(sed -n 's/^events: //p' "$a/INFO")
	# a moment the job's pace decides may come with its end (under load the
	# communicators were first named in the last checkpoint): the recorder
	# finished before the kill, and its whole archive has nothing to say first
	if [ -s "$a/INFO" ] && ! grep -q "^whole:" "$a/INFO" && [ -z "${3:-}" ]; then
		echo "killed $2: the recording had finished"
		first=".*"
	fi
	for how in otf2 json plot; do
		"$BIN/esconvert" --$how "$a.$how" "$a" >/dev/null 2>"$a.err" || die "$2: esconvert --$how: $(cat "$a.err")"
		[ "$first" = ".*" ] || head -1 "$a.err" | grep -qE "^esconvert: ($first)" ||
			die "$2: esconvert --$how said first: $(cat "$a.err")"
	done
	"$BIN/esprofile" "$a" >"$a.prof" 2>"$a.err" || die "$2: esprofile: $(cat "$a.err")"
	[ "$first" = ".*" ] || head -1 "$a.err" | grep -qE "^esprofile: ($first)" ||
		die "$2: esprofile said first: $(cat "$a.err")"
	"$BIN/esrecord" --repair "$a" >"$a.rep" 2>&1 || die "$2: --repair: $(cat "$a.rep")"
	kept=$(sed -n 's/.*repaired: \([0-9]*\) events.*/\1/p' "$a.rep")
	[ "$first" = ".*" ] && grep -q "whole already: nothing to repair" "$a.rep" && kept=$n
	[ "${kept:-0}" -ge "$n" ] || die "$2: --repair kept ${kept:-none} of $n events: $(cat "$a.rep")"
	"$BIN/esconvert" -q --otf2 "$a.fixed" "$a" 2>"$a.err" || die "$2: esconvert, repaired: $(cat "$a.err")"
	otf2-print "$a.fixed/traces.otf2" >/dev/null 2>"$a.err" || die "$2: otf2-print, repaired: $(cat "$a.err")"
	[ -s "$a.err" ] && die "$2: otf2-print warned, repaired: $(cat "$a.err")"
	"$BIN/esprofile" --json "$a" >/dev/null 2>"$a.err" || die "$2: esprofile, repaired: $(cat "$a.err")"
	echo "killed $2: $n events read, $kept after --repair"
}
kill_when() { # WHAT JOB CONDITION...: a recorder of JOB into $dir/k.WHAT, killed once CONDITION holds
	"$BIN/esrecord" -w 30 -o "$dir/k.$1" "$2" 2>"$dir/k.$1.rec" &
	krec=$!
	what=$1; shift 2
	wait_for 30 "$@" || { kill -9 $krec; die "$what: the moment never came: $(cat "$dir/k.$what.rec")"; }
	kill -9 $krec
	wait $krec 2>/dev/null
}
kill_when wait "$job.kw" test -e "$dir/k.wait/INFO"
opened "$dir/k.wait" "waiting for its job" "$dir/k.wait was cut off before it recorded anything: its recorder stopped \(killed, or its disk filled\) before it attached to its job"
for kind in mpi paths; do
	if [ $kind = mpi ]; then
		mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.k$kind" "$wt" -q -j "$job.t$kind" -N 64 -m 1 -l 2 -t 1000000 --transport mpi >/dev/null 2>&1 &
	else
		mpirun --oversubscribe --allow-run-as-root -np 2 "$wt" -q -j "$job.k$kind" -N 64 -m 1 -l 2 -t 1000000 -c >/dev/null 2>&1 &
	fi
	app=$!
	kill_when "$kind.attached" "$job.k$kind" test -s "$dir/k.$kind.attached/threads"
	opened "$dir/k.$kind.attached" "$kind: attached"
	kill_when "$kind.events" "$job.k$kind" grep -q "^events: [1-9]" "$dir/k.$kind.events/INFO"
	opened "$dir/k.$kind.events" "$kind: a checkpoint with events"
	if [ $kind = mpi ]; then
		kill_when "$kind.comms" "$job.k$kind" test -s "$dir/k.$kind.comms/comms"
		opened "$dir/k.$kind.comms" "$kind: communicators named"
	fi
	end_job $app; app=""
done

# Bad input: one clear line, and nothing that looks like a whole archive
out=$("$BIN/esrecord" -w 0 -o "$dir/none" "$job.nosuch" 2>&1) && die "esrecord of no job succeeded"
[ "$out" = "esrecord: job '$job.nosuch': no trace spaces on this host (it has ended, has not started, or runs on other hosts: --servers)" ] || die "no job: $out"
[ -e "$dir/none" ] && die "an archive made for a job that does not exist"
ls -A "$dir" | grep -q making && die "esrecord left the directory it makes an archive in: $(ls -A "$dir")"
out=$("$BIN/esrecord" -w 0 -o "$dir/a" "$job.c" 2>&1) && die "esrecord over an archive succeeded"
echo "$out" | grep -q "^esrecord: $dir/a: already holds an archive" || die "over an archive: $out"
out=$("$BIN/esrecord" -w 0 -o /proc/no/such "$job.c" 2>&1) && die "esrecord into an unwritable place succeeded"
[ "$out" = "esrecord: /proc/no/such: No such file or directory" ] || die "unwritable place: $out"
out=$("$BIN/esconvert" --otf2 "$dir/o" "$dir/a" 2>&1) && die "esconvert into an existing directory succeeded"
echo "$out" | grep -q "^esconvert: $dir/o: exists" || die "existing OTF2 directory: $out"
# without INFO: read as the whole records its events file holds, said first
mv "$dir/a/INFO" "$dir/INFO.saved"
"$BIN/esconvert" --otf2 "$dir/o2" "$dir/a" 2>"$dir/noinfo.err" || die "esconvert without INFO: $(cat "$dir/noinfo.err")"
head -1 "$dir/noinfo.err" | grep -q "^esconvert: $dir/a has no INFO: its recorder stopped (killed) before it wrote it; read as the $events whole events its files hold" ||
	die "without INFO: $(cat "$dir/noinfo.err")"
rm -rf "$dir/o2"
mv "$dir/INFO.saved" "$dir/a/INFO"
out=$("$BIN/esprofile" "$dir/nosuch" 2>&1) && die "esprofile of no archive succeeded"
[ "$out" = "esprofile: $dir/nosuch: No such file or directory" ] || die "esprofile of no archive: $out"
sed -i "s/^events: $events\$/events: $((events + 1))/" "$dir/a/INFO"
out=$("$BIN/esconvert" --otf2 "$dir/o2" "$dir/a" 2>&1) && die "esconvert of a short archive succeeded"
echo "$out" | grep -q "^esconvert: $dir/a/events: $events events, INFO says $((events + 1))$" || die "short archive: $out"
# a full disk: a small tmpfs, where the recorder can mount one, that the
# wind tunnel's MPI messages fill in seconds
mkdir "$dir/small"
if mount -t tmpfs -o size=512k tmpfs "$dir/small" 2>/dev/null; then
	mnt="$dir/small"
	mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.full" "$BIN/windtunnel" -q -j "$job.tfull" -N 256 -m 2 -l 2 -t 1000000 --transport mpi \
		>/dev/null 2>&1 &
	app=$!
	"$BIN/esrecord" -w 30 -o "$dir/small/a" "$job.full" 2>"$dir/full.err"
	rc=$?
	end_job $app; app=""
	[ $rc -ne 0 ] || die "esrecord on a full disk succeeded: $(cat "$dir/full.err")"
	grep -q "^esrecord: $dir/small/a/[a-zA-Z.]*: No space left on device; the archive stands as its last checkpoint left it (read as it is, or esrecord --repair $dir/small/a)$" \
		"$dir/full.err" || die "full disk: $(cat "$dir/full.err")"
	# what the last checkpoint counted is readable, and said first to be
	# incomplete (or, when the disk filled before a checkpoint counted an
	# event, which the job's pace decides, to hold none yet)
	grep -q "^whole: no$" "$dir/small/a/INFO" || die "full disk: INFO: $(cat "$dir/small/a/INFO")"
	"$BIN/esprofile" "$dir/small/a" 2>"$dir/full.prof" >/dev/null || die "full disk: esprofile: $(cat "$dir/full.prof")"
	head -1 "$dir/full.prof" | grep -qE "^esprofile: $dir/small/a( is incomplete: its recorder stopped| was cut off before it recorded anything: its recorder stopped \(killed, or its disk filled\) before a checkpoint counted an event|: the archive lacks what its job said)" ||
		die "full disk: the archive does not open as incomplete: $(cat "$dir/full.prof")"
	# room made, --repair keeps what the recorder wrote whole before the disk filled
	mount -o remount,size=2m "$mnt" || die "full disk: no room made"
	"$BIN/esrecord" --repair "$dir/small/a" >"$dir/full.rep" 2>&1 || die "full disk: --repair: $(cat "$dir/full.rep")"
	[ "$(sed -n 's/.*repaired: \([0-9]*\) events.*/\1/p' "$dir/full.rep")" -gt 100 ] ||
		die "full disk: few events kept: $(cat "$dir/full.rep")"
	"$BIN/esprofile" "$dir/small/a" 2>"$dir/full.prof" >/dev/null || die "full disk, repaired: $(cat "$dir/full.prof")"
else
	echo "cannot mount a tmpfs here: the full-disk case not run"
fi
exit 0
