#!/bin/sh
# leftovers.sh - what make check and make bench leave behind: none of the processes they start, none of the shared-memory segments their jobs make.
#
#   leftovers.sh start FILE   notes what is there already
#   leftovers.sh check FILE   names, and fails on, any process of ours or
#                             segment that has appeared since and stayed
set -u
mode=${1:?usage: leftovers.sh start|check FILE} file=${2:?usage: leftovers.sh start|check FILE}

# Processes the tests and benchmarks start: those that carry this run's
# ES_LEFTOVERS (the Makefile exports it to everything it starts), so that
# another make check running beside is none of ours; "PID command", the
# shell running this and its parent aside.
ours() {
	[ -n "${ES_LEFTOVERS:-}" ] || return 0
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qx "ES_LEFTOVERS=$ES_LEFTOVERS" || continue
		mine "$pid" && continue
		echo "$pid $(tr '\0' ' ' 2>/dev/null <"$p/cmdline")"
	done
}

# Whether pid is this script, its parent or a child of its parent, or a
# child of its own (its pipelines) down to three generations.
mine() {
	q=$1
	for g in 0 1 2 3; do
		[ "$q" = "$$" ] && return 0
		[ "$g" -le 1 ] && [ "$q" = "$PPID" ] && return 0 # its parent, or beside it in a pipeline
		q=$(awk '{ print $4 }' 2>/dev/null </proc/"$q"/stat) || return 1
		[ -n "$q" ] || return 1
	done
	return 1
}

# Segments in /dev/shm that no process maps: in use, a segment is some
# running job's (ours or another's beside); unmapped and still there, one
# a job left.
segments() {
	for f in /dev/shm/*; do
		[ -e "$f" ] || continue
		grep -qs "$f" /proc/[0-9]*/maps || echo "${f#/dev/shm/}"
	done
}

case $mode in
start)
	{ ours | awk '{ print "p", $1 }'; ls /dev/shm | sed 's/^/s /'; } >"$file"
	;;
check)
	[ -f "$file" ] || { echo "leftovers.sh: $file: no note of what was there before" >&2; exit 2; }
	# a process ending as its job ends is not left behind: a moment to go
	n=0
	while :; do
		left=$(ours | awk -v f="$file" 'BEGIN { while ((getline l < f) > 0) { split(l, w, " "); if (w[1] == "p") had[w[2]] = 1 } }
			!($1 in had)')
		[ -z "$left" ] || [ $n -ge 40 ] && break
		n=$((n + 1)); sleep 0.25
	done
	# a test beside may be about to remove what its job just left: what
	# stays for 2 s more
	new() { segments | awk -v f="$file" 'BEGIN { while ((getline l < f) > 0) { split(l, w, " "); if (w[1] == "s") had[w[2]] = 1 } }
		!($1 in had)'; }
	segs=$(new)
	[ -n "$segs" ] && sleep 2 && segs=$(new | grep -Fx "$segs")
	rm -f "$file"
	if [ -n "$left$segs" ]; then
		echo "leftovers: left behind:" >&2
		[ -n "$left" ] && echo "$left" | sed 's/^/  process /' >&2
		[ -n "$segs" ] && echo "$segs" | sed 's|^|  /dev/shm/|' >&2
		exit 1
	fi
	echo "leftovers: no process and no segment left behind"
	;;
*)
	echo "leftovers.sh: expected start or check, got '$mode'" >&2
	exit 2
	;;
esac
