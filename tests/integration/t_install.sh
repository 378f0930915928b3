#!/bin/sh
# t_install.sh - make install's tree: programs with --version and man pages matching --help, a program built against the installed pkg-config file, esrun finding the collector for each program's MPI beside it (Open MPI's, MPICH's), named in the pkg-config file.
set -u
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$BUILD/lib/libescollect.so" ] || { echo "no libescollect.so (sanitizer build): skipped"; exit 0; }
dir=$(mktemp -d)
job="itinst$$"
cleanup() { rm_segments "$job"; rm -rf "$dir"; }
trap cleanup EXIT
pfx="$dir/prefix"
sh "$src/mk/install.sh" "$BUILD" "$pfx" || die "install.sh failed"
for p in psadm pathmap heartbeat geteventmon colopmon esctl esview esrun esrecord esconvert esprofile; do
	[ -x "$pfx/bin/$p" ] || die "$p not installed"
	[ "$("$pfx/bin/$p" --version)" = "$p (EventSpace) $("$BIN/esrecord" --version | awk '{ print $NF }')" ] ||
		die "$p --version: $("$pfx/bin/$p" --version)"
	page="$pfx/share/man/man1/$p.1"
	[ -s "$page" ] || die "no man page for $p"
	# every line of --help is in the page, as roff keeps it
	"$pfx/bin/$p" --help | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" | while IFS= read -r line; do
		grep -qxF -- "$line" "$page" || { echo "$p.1 lacks: $line"; exit 1; }
	done || die "$p's man page differs from its --help"
	grep -q "^\.TH $(echo "$p" | tr a-z A-Z) 1 " "$page" || die "$p.1 has no .TH"
	# the environment every program reads, and how it is used
	grep -q "^\.SH ENVIRONMENT" "$page" && grep -q "^\.B ES_KEEP" "$page" || die "$p.1 has no ENVIRONMENT"
	grep -q "^\.SH EXAMPLES" "$page" || die "$p.1 has no EXAMPLES"
done
# a collector for each MPI, named for it; the pkg-config file says which
for m in openmpi mpich; do
	[ -f "$pfx/lib/libescollect-$m.so" ] || die "libescollect-$m.so not installed: $(ls "$pfx/lib")"
	got=$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --variable="escollect_$m" eventspace)
	[ "$got" = "$pfx/lib/libescollect-$m.so" ] || die "pkg-config escollect_$m: '$got'"
done
[ "$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --variable=collectors eventspace)" = "mpich openmpi" ] ||
	die "pkg-config collectors: $(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --variable=collectors eventspace)"
[ "$(readlink "$pfx/lib/libescollect.so")" = libescollect-openmpi.so ] || die "libescollect.so is not Open MPI's"

# a program of a user's, built against what was installed, nothing else
cat >"$dir/user.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <pastset/pastset.h>
#include <archive/archive.h>
int main(void)
{
	ps_server *srv;
	ps_elem *e;
	struct ps_elem_attr attr = { .tuple_size = 8, .threshold = 4 };
	long in = 42, out = 0;
	char err[256];
	ar_archive *a;
	if (ps_server_create_local(&srv) || ps_elem_create(srv, "x", &attr, &e) ||
	    ps_write(e, &in, 0, NULL) || ps_read(e, 0, &out, 0, NULL) || out != 42)
		return 1;
	if (ar_open("/no/such/archive", &a, err, sizeof(err)) == 0 || !strstr(err, "/no/such/archive: No such file or directory"))
		return 2;
	ps_elem_close(e);
	ps_server_destroy(srv);
	puts("user program: ok");
	return 0;
}
C
flags=$(PKG_CONFIG_PATH="$pfx/lib/pkgconfig" pkg-config --cflags --libs eventspace) || die "pkg-config does not know eventspace"
echo "$flags" | grep -q -- "-I$pfx/include/eventspace" || die "pkg-config flags: $flags"
cc -std=c11 -Wall -Werror "$dir/user.c" -o "$dir/user" $flags || die "a program does not build against the install"
"$dir/user" || die "the user's program failed"

# the installed esrun finds the installed collector for each program's MPI
mpirun --oversubscribe --allow-run-as-root -np 2 -x ES_KEEP=always "$pfx/bin/esrun" -q -j "$job" \
	"$BUILD/tests/mpi_fortran90" >/dev/null || die "the installed esrun failed"
"$pfx/bin/psadm" show "$job.r1" | grep -q "mpi.thread0" || die "nothing recorded through the installed esrun"
mpiexec.hydra -n 2 -genv ES_KEEP always "$pfx/bin/esrun" -q -j "$job.m" "$BUILD/mpich/tests/ring_demo" 1 >/dev/null ||
	die "the installed esrun failed under MPICH"
"$pfx/bin/psadm" show "$job.m.r1" | grep -q "mpi.thread0" || die "nothing recorded of an MPICH program"
# the README's package list is mk/deps.sh's, word for word
python3 - "$src/README.md" "$src/mk/deps.sh" <<'PY' || die "README's packages differ from mk/deps.sh's"
import re, sys
readme, deps = open(sys.argv[1]).read(), open(sys.argv[2]).read()
listed = re.search(r"The packages are `([^`]*)`", readme).group(1).split()
listed += re.search(r"`make bench` adds `([^`]*)`", readme).group(1).split()
need = re.findall(r"^\s*need (\S+)", deps, re.M)
if sorted(listed) != sorted(need):
    print("deps.sh:", sorted(need), "\nREADME: ", sorted(listed))
    sys.exit(1)
PY
exit 0
