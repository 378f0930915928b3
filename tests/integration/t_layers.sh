#!/bin/sh
# t_layers.sh - make layers' check: the real tree passes; an include (direct, through another header, or a program's beyond what it may use) or a library that points up fails, naming the file.
set -u
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
sh "$src/mk/layers.sh" "$src" "$BUILD/lib" >/dev/null || die "the tree breaks its own layering: sh mk/layers.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/base" "$dir/pastset" "$dir/paths" "$dir/scopes" "$dir/monitors" "$dir/windtunnel" "$dir/archive" "$dir/waitstates" "$dir/trace" "$dir/lib"
cd "$dir" || die "no temporary folder"
# headers: down is fine, up or sideways is not, programs may include anything
printf '#include "pastset/pastset.h"\n#include "internal.h"\n' >paths/ok.c
printf '#include "pastset/pastset.h"\n#include "scopes/scopes.h"\n' >paths/up.h
printf '#include "monitors/monitors.h"\n' >windtunnel/side.c
# base/ is everyone's and uses nobody's
printf '#include "pastset/pastset.h"\n' >base/up.h
printf '#include "base/base.h"\n' >pastset/ok.c
# the trace format at the bottom, the wait states beside PATHS, the archive above them beside
# the pathmaps and below the collectors: neither reaches the pathmap model or the trace spaces
printf '#include "pastset/pastset.h"\n#include "paths/paths.h"\n' >trace/up.h
printf '#include "collectors/collectors.h"\n#include "monitors/monitors.h"\n' >archive/up.c
printf '#include "windtunnel/windtunnel.h"\n#include "pathmaps/pathmaps.h"\n' >archive/side.h
printf '#include "waitstates/waitstates.h"\n#include "trace/trace.h"\n' >archive/ok.c
printf '#include "scopes/scopes.h"\n#include "paths/paths.h"\n' >waitstates/side.h
printf '#include "archive/archive.h"\n' >monitors/ok.c
# a program is held to its folder's layer, but for what layers.sh's PROGRAMS lets it use
printf '#include "scopes/scopes.h"\nint main(void) { return 0; }\n' >pastset/tool.c
printf '#include "trace/trace.h"\nint main(void) { return 0; }\n' >pastset/psadm.c
out=$(sh "$src/mk/layers.sh" "$dir") && die "an include that points up passed"
echo "$out" | grep -q "^layers: paths/up.h:2: paths (rank 3) includes a header of scopes" || die "up: $out"
echo "$out" | grep -q "^layers: windtunnel/side.c:1: windtunnel (rank 6) includes a header of monitors" || die "sideways: $out"
echo "$out" | grep -q "^layers: base/up.h:1: base (rank 0) includes a header of pastset (rank 1)" || die "base up: $out"
echo "$out" | grep -q "^layers: trace/up.h:2: trace (rank 2) includes a header of paths (rank 3)" || die "trace up: $out"
echo "$out" | grep -q "^layers: archive/up.c:1: archive (rank 4) includes a header of collectors (rank 5)" || die "archive up: $out"
echo "$out" | grep -q "^layers: archive/up.c:2: archive (rank 4) includes a header of monitors (rank 7)" || die "archive up: $out"
echo "$out" | grep -q "^layers: archive/side.h:1: archive (rank 4) includes a header of windtunnel (rank 6)" || die "archive up: $out"
echo "$out" | grep -q "^layers: archive/side.h:2: archive (rank 4) includes a header of pathmaps (rank 4)" || die "archive sideways: $out"
echo "$out" | grep -q "^layers: waitstates/side.h:1: waitstates (rank 3) includes a header of scopes (rank 6)" || die "waitstates up: $out"
echo "$out" | grep -q "^layers: waitstates/side.h:2: waitstates (rank 3) includes a header of paths (rank 3)" || die "waitstates sideways: $out"
echo "$out" | grep -q "^layers: pastset/tool.c:1: pastset (rank 1) includes a header of scopes (rank 6)" ||
	die "a program above its layer passed: $out"
echo "$out" | grep -q "pastset/ok.c\|paths/ok.c\|pastset/psadm.c\|monitors/ok.c\|archive/ok.c\|trace/up.h:1" && die "a downward include or a program's allowed one refused: $out"
# through another header: a folder that is no layer (extra/) passes the model on
mkdir -p extra pathmaps
printf '#include "pathmaps/pathmaps.h"\n' >extra/e.h
printf '\n' >pathmaps/pathmaps.h
printf '#include "extra/e.h"\n' >waitstates/t.c
out=$(sh "$src/mk/layers.sh" "$dir") && die "an include through another header passed"
echo "$out" | grep -q "^layers: waitstates/t.c: waitstates (rank 3) reaches a header of pathmaps (rank 4) through waitstates/t.c -> extra/e.h -> pathmaps/pathmaps.h" ||
	die "through: $out"
rm base/up.h paths/up.h windtunnel/side.c archive/up.c archive/side.h waitstates/side.h trace/up.h waitstates/t.c pastset/tool.c
sh "$src/mk/layers.sh" "$dir" >/dev/null || die "a clean tree refused"
# libraries: pastset calling into paths fails; paths calling into pastset is fine
printf 'int paths_fn(void);\nint ps_fn(void) { return paths_fn(); }\n' >a.c
printf 'int ps_fn(void);\nint paths_fn(void) { return 1; }\nint paths_g(void) { return ps_fn(); }\n' >b.c
echo 'typedef int layers_unused;' >e.c
for f in a b e; do cc -c $f.c -o $f.o || die "cc"; done
ar rcs lib/libpastset.a a.o && ar rcs lib/libpaths.a b.o || die "ar"
for l in base trace steering pathmaps collectors scopes waitstates waitfor windtunnel esarchive esmon esview; do ar rcs lib/lib$l.a e.o; done
out=$(sh "$src/mk/layers.sh" "$dir" "$dir/lib") && die "a library that links up passed"
echo "$out" | grep -q "^layers: libpastset.a (pastset, rank 1) needs paths_fn from the paths library" || die "link: $out"
echo "$out" | grep -q "libpaths.a" && die "a library linking down refused: $out"
rm lib/libpastset.a && ar rcs lib/libpastset.a e.o
sh "$src/mk/layers.sh" "$dir" "$dir/lib" >/dev/null || die "clean libraries refused"
# a library exporting a name without its layer's prefix (libwaitstates.a's tab_get, once)
printf 'int tab_get(void) { return 0; }\nint ws__tab_put(void) { return 0; }\n' >w.c
cc -c w.c -o w.o && ar rcs lib/libwaitstates.a w.o || die "cc"
out=$(sh "$src/mk/layers.sh" "$dir" "$dir/lib") && die "an unprefixed name exported passed"
echo "$out" | grep -q "^layers: libwaitstates.a (waitstates) exports tab_get, a name without its prefix (ws_)$" || die "prefix: $out"
echo "$out" | grep -q "ws__tab_put" && die "a prefixed name refused: $out"
rm -f lib/libwaitstates.a && ar rcs lib/libwaitstates.a e.o
# circles: two files of a folder that call each other are refused, naming
# both, unless one says why; the real tree has none unsaid
sh "$src/mk/circles.sh" "$BUILD/obj" "$src" >/dev/null || die "the tree has a circle: sh mk/circles.sh $BUILD/obj"
mkdir -p "$dir/obj/paths" "$dir/paths2"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$dir/paths2/a.c"
printf 'int a(void);\nint b(void) { return 1; }\nint c(void) { return a(); }\n' >"$dir/paths2/b.c"
printf 'int a(void);\nint d(void) { return a(); }\n' >"$dir/paths2/d.c"
for f in a b d; do cc -c "$dir/paths2/$f.c" -o "$dir/obj/paths/$f.o" || die "cc"; done
mkdir -p "$dir/src/paths" && cp "$dir"/paths2/*.c "$dir/src/paths/"
out=$(sh "$src/mk/circles.sh" "$dir/obj" "$dir/src") && die "a circle passed"
echo "$out" | grep -q "^circles: paths: a.c, b.c call each other in a circle, and none of them says why" || die "circle: $out"
echo "$out" | grep -q "d.c" && die "a file that only uses the circle was named: $out"
printf '/* Circle: a.c <-> b.c, because a test says so. */\n' >>"$dir/src/paths/b.c"
sh "$src/mk/circles.sh" "$dir/obj" "$dir/src" >/dev/null || die "a circle that says why refused"
echo "layers: up and sideways refused with file:line, down and programs allowed; circles refused unless said"
