#!/bin/sh
# layers.sh - fails when a layer includes a higher layer's header or a library needs a higher library.
#
#   sh mk/layers.sh [ROOT [LIBDIR]]     (ROOT: the tree, default .; LIBDIR: its built libraries)
#
# The layers, bottom up (docs/ARCHITECTURE.md): each may use only the ones
# below it; layers of one rank do not use each other.  Programs (a file with
# main) sit above every layer and may include anything: `pathmap` knows the
# collectors' wrapper types so that it can check their parameters, while
# the pathmaps library stays below the collectors.
set -u
root=${1:-.}
libdir=${2:-}
LAYERS="pastset:0 trace:1 paths:2 steering:2 waitstates:2 pathmaps:3 archive:3 collectors:4 scopes:5 windtunnel:5 monitors:6"
# each library, by the layer whose sources it holds
LIBS="pastset:libpastset.a trace:libtrace.a paths:libpaths.a steering:libsteering.a pathmaps:libpathmaps.a collectors:libcollectors.a
      scopes:libscopes.a waitstates:libwaitstates.a windtunnel:libwindtunnel.a archive:libesarchive.a monitors:libesmon.a"

rank_of() { # layer -> rank, or nothing for what is not a layer (system headers, generated ones)
	for l in $LAYERS; do [ "${l%%:*}" = "$1" ] && echo "${l#*:}" && return; done
}

bad=0
for l in $LAYERS; do
	layer=${l%%:*} rank=${l#*:}
	[ -d "$root/$layer" ] || continue
	for f in $(find "$root/$layer" -name '*.[ch]' | sort); do
		grep -q '^int main(' "$f" && continue
		# "layer/x.h" names another folder; a bare "x.h" is this folder's own
		for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([a-z_]*\)\/[^"]*".*/\1/p' "$f" | sort -u); do
			r=$(rank_of "$inc")
			[ -z "$r" ] || [ "$inc" = "$layer" ] && continue
			if [ "$r" -ge "$rank" ]; then
				line=$(grep -n "#[ \t]*include[ \t]*\"$inc/" "$f" | head -1 | cut -d: -f1)
				echo "layers: ${f#"$root"/}:$line: $layer (rank $rank) includes a header of $inc (rank $r): a layer may use only the ones below it"
				bad=1
			fi
		done
	done
done

# Each library's undefined symbols must be defined by itself or by a library
# of a lower layer.
if [ -n "$libdir" ]; then
	defs=$(mktemp)
	trap 'rm -f "$defs"' EXIT
	for e in $LIBS; do
		layer=${e%%:*} lib=$libdir/${e#*:}
		[ -f "$lib" ] || { echo "layers: $lib is missing: build first"; exit 1; }
		nm -g --defined-only "$lib" 2>/dev/null | awk -v L="$layer" 'NF == 3 { print $3, L }' >>"$defs"
	done
	sort -o "$defs" "$defs"
	for e in $LIBS; do
		layer=${e%%:*} lib=$libdir/${e#*:} rank=$(rank_of "${e%%:*}")
		for hit in $(nm -g --undefined-only "$lib" 2>/dev/null | awk 'NF >= 2 { print $NF }' |
			     sort -u | join - "$defs" | awk '{ print $1 ":" $2 }'); do
			sym=${hit%%:*} owner=${hit#*:}
			[ "$owner" = "$layer" ] && continue
			r=$(rank_of "$owner")
			if [ "$r" -ge "$rank" ]; then
				echo "layers: ${e#*:} ($layer, rank $rank) needs $sym from the $owner library (rank $r): a library may link only the ones below it"
				bad=1
			fi
		done
	done
fi
[ "$bad" -eq 0 ] && echo "layers: every include and every library points down"
exit "$bad"
