#!/bin/sh
# install.sh - puts EventSpace where users look for it: programs, a libescollect for each MPI, the libraries with their headers, a pkg-config file and man pages.
# usage: install.sh BUILDDIR PREFIX   (DESTDIR, if set, is put before PREFIX, as packagers expect)
set -eu
build=${1:?usage: install.sh BUILDDIR PREFIX} prefix=${2:?usage: install.sh BUILDDIR PREFIX}
root=${DESTDIR:-}$prefix
version=$("$build/bin/esrecord" --version | awk '{ print $NF }')
src=$(cd "$(dirname "$0")/.." && pwd)

# the programs users run, with a line each for their man page
programs='psadm|manage PastSet segments and serve them over TCP
pathmap|check and show pathmaps
heartbeat|which threads of a job progress, and where the stalled ones wait
geteventmon|every event of a job, with an exact count of what was lost
colopmon|MPI collectives and PATHS tree operations matched across ranks
esctl|change what a running job records, pause and resume it; list, set and call its objects, run rules, query handlers
esview|a running job in the browser: lanes of its ranks, who waits for whom, its balance, triggers
esrun|run an MPI program with EventSpace collectors on its MPI calls
esrecord|record a running job into an archive
esconvert|turn an archive into OTF2, trace-event JSON and pictures
esprofile|an mpiP-style profile of a job or an archive'
libs="libesview libesmon libesarchive libwaitfor libwaitstates libscopes libcollectors libpathmaps libpaths libsteering libtrace libpastset libbase"
headers="base/base.h pastset/pastset.h trace/trace.h paths/paths.h steering/steering.h pathmaps/pathmaps.h collectors/collectors.h scopes/scopes.h waitstates/waitstates.h waitfor/waitfor.h archive/archive.h monitors/monitors.h"

install -d "$root/bin" "$root/lib/pkgconfig" "$root/include/eventspace" "$root/share/man/man1"
echo "$programs" | while IFS='|' read -r p summary; do
	install -m 755 "$build/bin/$p" "$root/bin/$p"
	sh "$src/mk/man.sh" "$build/bin/$p" "$summary" >"$root/share/man/man1/$p.1"
done
# the process a monitor runs each handler in: found beside the monitors
install -m 755 "$build/bin/eshandler" "$root/bin/eshandler"
# a collector for each MPI built (libescollect-openmpi.so, -mpich.so), as
# esrun finds them; libescollect.so is Open MPI's, the name it always had
collectors=""
for c in "$build"/lib/libescollect-*.so; do
	[ -f "$c" ] || continue
	name=$(basename "$c" .so | sed 's/^libescollect-//')
	install -m 755 "$c" "$root/lib/libescollect-$name.so"
	collectors="$collectors${collectors:+ }$name"
done
[ -f "$build/lib/libescollect-openmpi.so" ] && ln -sf libescollect-openmpi.so "$root/lib/libescollect.so"
# what a program links to name its phases: es_region.h and a library that does nothing
[ -f "$build/lib/libesregion.so" ] && install -m 755 "$build/lib/libesregion.so" "$root/lib/libesregion.so"
install -m 644 "$src/collectors/mpi/es_region.h" "$root/include/es_region.h"
# ... and to expose its objects (es_object.h, the same library); a handler's
# header, and the two example handlers
install -m 644 "$src/collectors/mpi/es_object.h" "$root/include/es_object.h"
install -m 644 "$src/handlers/es_handler.h" "$root/include/es_handler.h"
install -d "$root/lib/eventspace/handlers"
for h in "$build"/lib/handlers/*.so; do
	[ -f "$h" ] && install -m 755 "$h" "$root/lib/eventspace/handlers/$(basename "$h")"
done
for l in $libs; do
	install -m 644 "$build/lib/$l.a" "$root/lib/$l.a"
done
# headers keep their folders: they include each other as "layer/layer.h"
for h in $headers; do
	install -d "$root/include/eventspace/$(dirname "$h")"
	install -m 644 "$src/$h" "$root/include/eventspace/$h"
done
install -m 644 "$build/gen/es_mpi_ops.h" "$root/include/eventspace/es_mpi_ops.h"
cat >"$root/lib/pkgconfig/eventspace.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include/eventspace

Name: EventSpace
Description: watching parallel programs run: PastSet, PATHS, collectors, scopes, archives, monitors
Version: $version
# the MPIs with a collector, each in escollect_NAME (LD_PRELOAD it, or let esrun choose)
collectors=$collectors
$(for n in $collectors; do echo "escollect_$n=\${libdir}/libescollect-$n.so"; done)
Requires.private: yaml-0.1 hwloc liburing libdw
Cflags: -I\${includedir}
Libs: -L\${libdir} $(echo "$libs" | sed 's/lib\([a-z]*\)/-l\1/g') -lyaml -lhwloc -luring -ldw -pthread -lrt -lm
PC
echo "installed EventSpace $version in ${DESTDIR:-}$prefix"
