/* expect.c - readers that wait for segments not made yet, and the release that leaves a job's segments for them until they have read them. */
#define _GNU_SOURCE /* dirfd, openat */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "segment.h"

/*
 * A note is a file in /dev/shm, "pastset-expect.PREFIX.PID", made by the
 * reader with O_EXCL and holding "PID START\n" (ps_proc_start: a pid and
 * its start name one process for good).  The protocol between a job's
 * last process (ps_shm_release) and the readers, each of which takes its
 * own note away before it releases:
 *  - a job leaves its segments when, after closing its own, it finds a
 *    live note whose prefix they begin with; it never waits;
 *  - a reader, at its end, removes its note first and then releases the
 *    segments it read (ps_shm_release): the last of the job and its
 *    readers to look finds every segment closed and no note, and removes
 *    them, whatever the order they end in (each looks after its own step
 *    is visible to the others);
 *  - a note is trusted only when it is the caller's own user's, or
 *    root's: no other user keeps a job's segments on the host; a note
 *    whose reader is gone is not waited for, and its owner's next look
 *    removes it.
 */

#define NOTE_PREFIX "pastset-expect."

struct ps_expect {
	char path[PS_NAME_MAX + 64];
};

static bool prefix_ok(const char *prefix)
{
	size_t n = prefix ? strlen(prefix) : 0;
	if (!n || n > PS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((prefix[i] >= 'a' && prefix[i] <= 'z') || (prefix[i] >= 'A' && prefix[i] <= 'Z') ||
		      (prefix[i] >= '0' && prefix[i] <= '9') || prefix[i] == '.' || prefix[i] == '_' || prefix[i] == '-'))
			return false;
	return true;
}

int ps_shm_expect(const char *prefix, ps_expect **out)
{
	if (!out || !prefix_ok(prefix))
		return PS_EINVAL;
	ps_expect *e = calloc(1, sizeof(*e));
	if (!e)
		return PS_ENOMEM;
	snprintf(e->path, sizeof(e->path), "/dev/shm/" NOTE_PREFIX "%s.%d", prefix, (int)getpid());
	unlink(e->path); /* an earlier process's of this pid: gone, as this one lives */
	int fd = open(e->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int rc = ps__neg_errno(errno);
		free(e);
		return rc;
	}
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%d %llu\n", (int)getpid(), (unsigned long long)ps_proc_start(0));
	bool ok = write(fd, buf, (size_t)n) == n;
	close(fd);
	if (!ok) {
		unlink(e->path);
		free(e);
		return -EIO;
	}
	*out = e;
	return 0;
}

void ps_shm_expect_end(ps_expect *e)
{
	if (!e)
		return;
	unlink(e->path);
	free(e);
}

/* Whether the note `name` (in directory fd d) is a live reader's that the
 * caller trusts; one of the caller's own whose reader is gone is removed. */
static bool note_live(int d, const char *name)
{
	int fd = openat(d, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	struct stat st;
	char buf[64];
	ssize_t n = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	uid_t me = geteuid();
	if (n <= 0 || (st.st_uid != me && st.st_uid != 0))
		return false;
	buf[n] = 0;
	int pid = 0;
	unsigned long long start = 0;
	bool live = sscanf(buf, "%d %llu", &pid, &start) == 2 && pid > 0 && (kill(pid, 0) == 0 || errno == EPERM) &&
		    ps_proc_start(pid) == start;
	if (!live && st.st_uid == me)
		unlinkat(d, name, 0);
	return live;
}

bool ps_shm_expected(const char *name)
{
	DIR *dir = name ? opendir("/dev/shm") : NULL;
	if (!dir)
		return false;
	bool found = false;
	const size_t np = strlen(NOTE_PREFIX);
	for (struct dirent *de; !found && (de = readdir(dir));) {
		const char *p = de->d_name, *dot = strrchr(p, '.');
		if (strncmp(p, NOTE_PREFIX, np) || !dot || dot <= p + np)
			continue;
		size_t plen = (size_t)(dot - (p + np)); /* the prefix, between the note's prefix and its pid */
		if (!strncmp(name, p + np, plen) && note_live(dirfd(dir), p))
			found = true;
	}
	closedir(dir);
	return found;
}

int ps_shm_expect_sweep(void)
{
	DIR *dir = opendir("/dev/shm");
	if (!dir)
		return ps__neg_errno(errno);
	int gone = 0;
	const size_t np = strlen(NOTE_PREFIX);
	for (struct dirent *de; (de = readdir(dir));) {
		struct stat st;
		if (strncmp(de->d_name, NOTE_PREFIX, np) || fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_uid != geteuid())
			continue;
		gone += !note_live(dirfd(dir), de->d_name) && faccessat(dirfd(dir), de->d_name, F_OK, AT_EACCESS) != 0;
	}
	closedir(dir);
	return gone;
}

int ps_shm_release(const char *const *names, int n)
{
	struct ps_shm_info in;
	int there = 0;
	/* the last of the group to end removes it: each one closed its own
	 * first, so at least the last to look sees every one closed */
	for (int i = 0; i < n; i++) {
		int rc = ps_shm_info(names[i], &in);
		if (rc == PS_ENOENT)
			continue; /* on another host, or removed already */
		if (rc || in.state != PS_SHM_CLOSED)
			return 0;
		there++;
		if (ps_shm_expected(names[i]))
			return 0; /* a reader that waited for them releases them when it has read them */
	}
	int removed = 0;
	for (int i = 0; i < n; i++)
		if (!ps_shm_info(names[i], &in) && in.state == PS_SHM_CLOSED && in.keep != PS_KEEP_ALWAYS &&
		    !ps_shm_unlink(names[i]))
			removed++;
	return there ? removed : 0;
}
