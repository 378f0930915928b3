/* files.c - how EventSpace opens files: what it writes never through another user's link or into their file, what it reads only when it is a regular file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

/*
 * Output names are often in shared directories (/tmp): a name another user
 * made first, as a symbolic link or a hard link to a file of ours, would
 * have us write where they chose.  O_NOFOLLOW refuses the first; a file
 * that is not a plain file of ours with one name refuses the second.  The
 * file is cut to nothing only once it has passed.  A character device or a
 * FIFO of ours or root's (/dev/null, a named pipe another tool reads) is
 * written as it is: there is nothing to cut, and its mode is not ours to
 * change.
 */
FILE *base_fopen_out(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	if (fd < 0)
		return NULL; /* ELOOP for a symbolic link */
	struct stat st;
	int e = 0;
	bool stream = false; /* a device or a pipe: written as it is */
	if (fstat(fd, &st))
		e = errno;
	else if ((stream = S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		e = st.st_uid != geteuid() && st.st_uid != 0 ? EACCES : 0; /* a stranger's */
	else if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		e = EPERM; /* a directory, a socket, or a second name for some file */
	else if (st.st_uid != geteuid())
		e = EACCES;
	else if ((st.st_mode & 07777 & ~mode) && fchmod(fd, st.st_mode & mode & 07777))
		e = errno; /* made before by us, with more open bits than wanted now */
	else if (ftruncate(fd, 0))
		e = errno;
	if (!e && fcntl(fd, F_SETFL, 0))
		e = errno;
	FILE *f = e ? NULL : fdopen(fd, "w");
	if (!f) {
		e = e ? e : errno;
		close(fd);
		errno = e;
	}
	return f;
}

int base_mkdir_out(const char *dir, mode_t mode)
{
	if (!mkdir(dir, mode))
		return 0;
	if (errno != EEXIST)
		return -errno;
	struct stat st;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
	/* another user's directory, or one others may add names to, could
	 * hold links made to catch what we write */
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return -EACCES;
	return 0;
}

/* Opened without waiting (a FIFO with no writer would hold the open
 * forever, MPI_Init with it), then taken only if it is a regular file,
 * and made blocking again for the reads. */
FILE *base_fopen_in(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st))
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	else if (fcntl(fd, F_SETFL, 0))
		e = errno;
	FILE *f = e ? NULL : fdopen(fd, "r");
	if (!f) {
		e = e ? e : errno;
		close(fd);
		errno = e;
	}
	return f;
}

/* Whose files a program may take its code or its orders from: its own
 * user's, or root's. */
static bool trusted_owner(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

/* An absolute path's directory: "/a/b" -> "/a", "/a" -> "/" */
static void up(char *path)
{
	char *slash = strrchr(path, '/');
	if (slash == path)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
}

/* Each directory from dir up to /: a trusted owner's, and nobody else may
 * rename or replace what is in it (not writable by group or others, or
 * sticky as /tmp is, where only an entry's owner may). */
static int trusted_dirs(const char *given, char *dir, char *why, size_t len)
{
	for (;;) {
		struct stat st;
		if (lstat(dir, &st)) {
			int e = errno;
			snprintf(why, len, "%s: its directory %s: %s", given, dir, strerror(e));
			return -e;
		}
		if (!trusted_owner(st.st_uid)) {
			snprintf(why, len, "%s: its directory %s is owned by uid %u, not by you (uid %u) or root",
				 given, dir, (unsigned)st.st_uid, (unsigned)geteuid());
			return -EACCES;
		}
		if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
			snprintf(why, len, "%s: its directory %s is writable by %s (mode %04o): another user could "
				 "put their file there", given, dir, st.st_mode & 002 ? "anyone" : "its group",
				 (unsigned)(st.st_mode & 07777));
			return -EACCES;
		}
		if (!strcmp(dir, "/"))
			return 0;
		up(dir);
	}
}

int base_open_trusted(const char *path, char *why, size_t len)
{
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		int e = errno;
		snprintf(why, len, "%s: %s", path, strerror(e));
		return -e;
	}
	int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st))
		rc = -errno, snprintf(why, len, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL, snprintf(why, len, "%s: not a regular file", path);
	else if (!trusted_owner(st.st_uid))
		rc = -EACCES, snprintf(why, len, "%s is owned by uid %u, not by you (uid %u) or root", path,
				       (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & 022)
		rc = -EACCES, snprintf(why, len, "%s is writable by %s (mode %04o): another user could have "
				       "written it", path, st.st_mode & 002 ? "anyone" : "its group",
				       (unsigned)(st.st_mode & 07777));
	if (!rc) {
		up(real); /* realpath's answer is absolute */
		rc = trusted_dirs(path, real, why, len);
	}
	if (!rc && fcntl(fd, F_SETFL, 0))
		rc = -errno, snprintf(why, len, "%s: %s", path, strerror(errno));
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}
