#!/bin/sh
# layers.sh - fails when a layer includes a higher layer's header or a library needs a higher library.
#
#   sh mk/layers.sh [ROOT [LIBDIR]]     (ROOT: the tree, default .; LIBDIR: its built libraries)
#
# The layers, bottom up (docs/ARCHITECTURE.md): each may use only the ones
# below it; layers of one rank do not use each other.  handlers/ is the
# handler libraries' header (standard headers only) and their examples.
#
# A program (a file with main) is held to its folder's layer, but for the
# layers above it PROGRAMS says it may use, each with its reason:
#   archive/esprofile.c  monitors: it profiles a live job by recording it
#                        first, through the monitors' recorder (mon_record)
#   pastset/psadm.c      trace: the one rule for job names (es_job_ok)
#   pathmaps/pathmap.c   collectors: it knows the collectors' wrapper types
#                        so that it can check their parameters, while the
#                        pathmaps library stays below the collectors
PROGRAMS="archive/esprofile.c:monitors pastset/psadm.c:trace pathmaps/pathmap.c:collectors"
set -u
root=${1:-.}
libdir=${2:-}
LAYERS="base:0 handlers:0 pastset:1 trace:2 paths:3 steering:3 waitstates:3 waitfor:3 pathmaps:4 archive:4 collectors:5 scopes:6 windtunnel:6 monitors:7 view:8"
# each library, by the layer whose sources it holds
LIBS="base:libbase.a pastset:libpastset.a trace:libtrace.a paths:libpaths.a steering:libsteering.a pathmaps:libpathmaps.a collectors:libcollectors.a
      scopes:libscopes.a waitstates:libwaitstates.a waitfor:libwaitfor.a windtunnel:libwindtunnel.a archive:libesarchive.a monitors:libesmon.a
      view:libesview.a"

# the prefixes each library's exported names begin with (docs/ARCHITECTURE.md):
# an installed library never exports a name another program could also use
PREFIXES="base:base_ pastset:ps_,psw_ trace:es_ paths:paths_ steering:st_ pathmaps:pm_ collectors:es_
          scopes:es_ waitstates:ws_ waitfor:wf_ windtunnel:wt_ archive:ar_ monitors:mon_,wr_,hb_,cm_,co_,mh_,wl_
          view:lv_,vd_,vw_,vo_"

rank_of() { # layer -> rank, or nothing for what is not a layer (system headers, generated ones)
	for l in $LAYERS; do [ "${l%%:*}" = "$1" ] && echo "${l#*:}" && return; done
}

bad=0
for l in $LAYERS; do
	layer=${l%%:*} rank=${l#*:}
	[ -d "$root/$layer" ] || continue
	for f in $(find "$root/$layer" -name '*.[ch]' | sort); do
		allowed=""
		for p in $PROGRAMS; do [ "$root/${p%%:*}" = "$f" ] && allowed=${p#*:}; done
		# "layer/x.h" names another folder; a bare "x.h" is this folder's own
		for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([a-z_]*\)\/[^"]*".*/\1/p' "$f" | sort -u); do
			r=$(rank_of "$inc")
			[ -z "$r" ] || [ "$inc" = "$layer" ] || [ "$inc" = "$allowed" ] && continue
			if [ "$r" -ge "$rank" ]; then
				line=$(grep -n "#[ \t]*include[ \t]*\"$inc/" "$f" | head -1 | cut -d: -f1)
				echo "layers: ${f#"$root"/}:$line: $layer (rank $rank) includes a header of $inc (rank $r): a layer may use only the ones below it"
				bad=1
			fi
		done
	done
done

# ... and through other headers: a header a file reaches by a chain of
# includes counts as its own include (archive.h including a header that
# includes pathmaps.h puts the archive on the pathmap model).  Only chains
# of two or more are said here; the loop above says the direct ones.
files=$(for l in $LAYERS; do [ -d "$root/${l%%:*}" ] && find "$root/${l%%:*}" -name '*.[ch]'; done | sort)
if [ -n "$files" ]; then
	# FILE<TAB>INCLUDED, the included resolved to a path under root
	every=$(find "$root" -path "$root/build" -prune -o -path "$root/.git" -prune -o -name '*.[ch]' -print | sort)
	edges=$(for f in $every; do
		d=$(dirname "$f")
		sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			case $inc in
			*/*) t="$root/$inc" ;;
			*) t="$d/$inc" ;;
			esac
			[ -f "$t" ] && printf '%s\t%s\n' "${f#"$root"/}" "${t#"$root"/}"
		done
	done)
	mains=$(grep -l '^int main(' $files 2>/dev/null | sed "s|^$root/||")
	out=$(printf '%s\n' "$edges" | awk -F'\t' -v layers="$LAYERS" -v mains="$mains" '
		BEGIN { n = split(layers, L, " "); for (i = 1; i <= n; i++) { split(L[i], p, ":"); rank[p[1]] = p[2] }
			m = split(mains, M, "\n"); for (i = 1; i <= m; i++) ismain[M[i]] = 1 }
		NF == 2 { adj[$1] = adj[$1] SUBSEP $2; seen_file[$1] = 1 }
		function layer_of(f,   a) { split(f, a, "/"); return a[1] }
		function walk(f, chain, depth,   k, a, i, g, lg) {
			if (depth > 12 || (f in visited)) return
			visited[f] = 1
			k = split(adj[f], a, SUBSEP)
			for (i = 2; i <= k; i++) {
				g = a[i]; lg = layer_of(g)
				if (depth >= 1 && (lg in rank) && lg != from && rank[lg] >= rank[from] && !((from, lg) in said)) {
					said[from, lg] = 1
					print "layers: " start ": " from " (rank " rank[from] ") reaches a header of " lg " (rank " rank[lg] ") through " chain " -> " g ": a layer may use only the ones below it"
				}
				walk(g, chain " -> " g, depth + 1)
			}
		}
		END { for (f in seen_file) { start = f; from = layer_of(f); if (!(from in rank) || (f in ismain)) continue
			delete visited; delete said; walk(f, f, 0) } }')
	if [ -n "$out" ]; then
		echo "$out" | sort
		bad=1
	fi
fi

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
# ... and exports only names with its layer's prefixes
if [ -n "$libdir" ]; then
	for e in $LIBS; do
		layer=${e%%:*} lib=$libdir/${e#*:}
		pre=""
		for p in $PREFIXES; do [ "${p%%:*}" = "$layer" ] && pre=${p#*:}; done
		re="^($(echo "$pre" | sed 's/,/|/g'))"
		for sym in $(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | grep -Ev "$re|^__" | sort -u); do # (__: the compiler's, as ASan's __odr_asan_gen_)
			echo "layers: ${e#*:} ($layer) exports $sym, a name without its prefix (${pre})"
			bad=1
		done
	done
fi
[ "$bad" -eq 0 ] && echo "layers: every include and every library points down"
exit "$bad"
