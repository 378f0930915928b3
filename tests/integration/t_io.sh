#!/bin/sh
# t_io.sh - MPI-IO recorded: every kind of read and write of a program of known bytes held to esprofile's I/O table, OTF2's I/O events and the JSON; and a real program writing through parallel HDF5.
set -u
. "$(dirname "$0")/lib.sh"
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
job="itio$$"
dir=$(mktemp -d)
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT

# record NAME PROGRAM ARGS...: its archive in $dir/NAME, the profile's I/O rows in $dir/NAME.io
record() {
	name=$1
	shift
	"$BIN/esrecord" -w 30 -o "$dir/$name" "$job.$name" 2>"$dir/$name.err" &
	rec=$!
	mpirun --oversubscribe --allow-run-as-root -np 2 "$BIN/esrun" -q -j "$job.$name" "$@" >"$dir/$name.app" 2>&1 ||
		die "$name failed: $(cat "$dir/$name.app")"
	wait $rec || die "$name: esrecord failed: $(cat "$dir/$name.err")"
	"$BIN/esprofile" -o "$dir/$name.prof" "$dir/$name" || die "$name: esprofile failed"
	# FILE RANK READS BYTES-READ WRITES BYTES-WRITTEN CALLS
	awk '/^@--- I\/O/ { on = 1; getline; next } /^$/ { on = 0 } on { print $1, $2, $3, $4, $5, $6, $7 }' \
		"$dir/$name.prof" >"$dir/$name.io"
}

mkdir "$dir/files"
record io "$BUILD/tests/mpi_io" "$dir/files"
# mpi_io.c says what each rank reads and writes
printf '%s\n' "$dir/files/data 0 5 760 8 908 18" "$dir/files/data 1 5 760 8 908 18" \
	"$dir/files/data * 10 1520 16 1816 36" "$dir/files/other 0 0 0 1 1000 3" "$dir/files/other * 0 0 1 1000 3" |
	cmp -s - "$dir/io.io" || die "the I/O table: $(cat "$dir/io.io")"
"$BIN/esconvert" -q --otf2 "$dir/o" "$dir/io" || die "esconvert --otf2 failed"
otf2-print "$dir/o/traces.otf2" >"$dir/p.txt" 2>"$dir/p.err" || die "otf2-print: $(cat "$dir/p.err")"
[ -s "$dir/p.err" ] && die "otf2-print warned: $(cat "$dir/p.err")"
[ "$(grep -c '^IO_OPERATION_BEGIN ' "$dir/p.txt")" -eq 27 ] || die "OTF2: not 27 I/O operations begun"
[ "$(grep -c '^IO_OPERATION_COMPLETE ' "$dir/p.txt")" -eq 27 ] || die "OTF2: not 27 I/O operations complete"
grep -q "^IO_OPERATION_BEGIN .*Handle: \"$dir/files/other\" .*Mode: WRITE.*Bytes Request: 1000," "$dir/p.txt" ||
	die "OTF2: no write of 1000 bytes to other"
"$BIN/esconvert" -q --json "$dir/j.json" "$dir/io" || die "esconvert --json failed"
python3 - "$dir/j.json" "$dir/files/data" <<'PY' || die "the JSON's I/O slices: see above"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X" and e["cat"] == "I/O"]
w = [e for e in ev if e["name"] == "MPI_File_write_at" and e["pid"] == 1]
if len(w) != 1 or w[0]["args"].get("file") != sys.argv[2] or w[0]["args"]["bytes"] != 400:
    print("rank 1's MPI_File_write_at: %s" % w); sys.exit(1)
PY

# Fortran: the file's name without its blanks, each rank's 160 bytes out and in
record iof "$BUILD/tests/mpi_io_f" "$dir/files"
printf '%s\n' "$dir/files/fdata 0 1 160 1 160 5" "$dir/files/fdata 1 1 160 1 160 5" "$dir/files/fdata * 2 320 2 320 10" |
	cmp -s - "$dir/iof.io" || die "Fortran's I/O table: $(cat "$dir/iof.io")"

# parallel HDF5: the file it made, with at least the dataset's bytes
# written (2 x 65536 doubles) and read back (Open MPI only: Debian's
# parallel HDF5 installed here, libhdf5-openmpi-dev, is built for it)
if [ "$MPI" = mpich ]; then
	echo "t_io: HDF5 not run under MPICH (no HDF5 built for it here)"
	exit 0
fi
record h5 "$BUILD/tests/mpi_hdf5" "$dir/files/t.h5"
awk -v f="$dir/files/t.h5" '$1 == f && $2 == "*" { ok = $6 >= 1048576 && $4 >= 1048576 && $5 >= 2 } END { exit !ok }' \
	"$dir/h5.io" || die "HDF5's I/O: $(cat "$dir/h5.io")"
for r in 0 1; do
	awk -v f="$dir/files/t.h5" -v r=$r '$1 == f && $2 == r && $5 >= 1 { ok = 1 } END { exit !ok }' "$dir/h5.io" ||
		die "HDF5: rank $r wrote nothing: $(cat "$dir/h5.io")"
done
exit 0
