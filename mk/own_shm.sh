#!/bin/sh
# own_shm.sh - runs a command with a /dev/shm of its own, so that make check and make bench judge only the segments their own jobs made.
#
#   own_shm.sh COMMAND...
#
# A mount namespace with a fresh tmpfs on /dev/shm: every job the tests
# start, and every monitor, sees only the segments made inside it, so the
# leftovers check (mk/leftovers.sh) never takes a job that another process
# on the machine starts meanwhile for one of ours, nor another make check's
# beside.  It needs root (the machines run as root); elsewhere the command
# runs on the machine's /dev/shm, as it says.
set -u
if [ -z "${ES_OWN_SHM:-}" ] && [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2>/dev/null; then
	ES_OWN_SHM=1 exec unshare --mount --propagation private \
		sh -c 'mount -t tmpfs -o mode=1777 eventspace-shm /dev/shm && exec "$@"' sh "$@"
fi
[ -n "${ES_OWN_SHM:-}" ] ||
	echo "note: not root: /dev/shm is the machine's, and a job another process starts meanwhile is taken for ours" >&2
exec "$@"
