#!/bin/sh
# leftovers.sh - what make check and make bench leave behind: none of the processes they start, none of the shared-memory segments their jobs make.
#
#   leftovers.sh start FILE   notes what is there already
#   leftovers.sh check FILE   names, and fails on, any process of ours or
#                             segment that has appeared since and stayed
set -u
mode=${1:?usage: leftovers.sh start|check FILE} file=${2:?usage: leftovers.sh start|check FILE}

# Processes the tests and benchmarks start: our programs (from a build
# directory), MPI's launchers and daemons, the servers and browsers the
# view's tests use.  "PID command", the shell running this and make aside.
ours() {
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[ "$pid" = "$$" ] || [ "$pid" = "$PPID" ] && continue
		cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
		case "$cmd" in
		*leftovers.sh*|make\ *|*/make\ *) ;;
		*build/release/*|*build/san/*|*build/tsan/*|mpirun\ *|*/mpirun\ *|prterun*|*/prterun*|prted*|*/prted*|\
		*orted*|*http.server*|*chromium*|*esrun\ *) echo "$pid $cmd" ;;
		esac
	done
}

segments() {
	ls /dev/shm 2>/dev/null
}

case $mode in
start)
	{ ours | awk '{ print "p", $1 }'; segments | sed 's/^/s /'; } >"$file"
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
	segs=$(segments | awk -v f="$file" 'BEGIN { while ((getline l < f) > 0) { split(l, w, " "); if (w[1] == "s") had[w[2]] = 1 } }
		!($1 in had)')
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
