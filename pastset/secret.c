/* secret.c - shared-secret files: refused unless only their owner can read them, on both sides. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* A secret others can read is no secret: refused, on both sides, and
 * said in words. */
static int secret_open(const char *file, char *why, size_t len, int *fd_out)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK); /* a FIFO must not hang us */
	struct stat st;
	int rc = 0;
	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "%s", strerror(errno));
	} else if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = PS_EINVAL;
		snprintf(why, len, "not a regular file");
	} else if (st.st_uid != geteuid()) {
		rc = PS_EACCES;
		snprintf(why, len, "owned by another user (it must be yours)");
	} else if (st.st_mode & 077) {
		rc = PS_EACCES;
		snprintf(why, len, "group or others may read or write it (chmod 600 it)");
	} else if (st.st_size == 0 || st.st_size > PS_SECRET_MAX + 2) {
		rc = PS_EINVAL;
		snprintf(why, len, "%s", st.st_size ? "longer than 256 bytes" : "empty");
	}
	if (rc && fd >= 0)
		close(fd);
	*fd_out = rc ? -1 : fd;
	return rc;
}

/* The secret, its final newlines cut: 0, or PS_EINVAL with why when it is
 * shorter than PS_SECRET_MIN or longer than PS_SECRET_MAX. */
static int secret_take(int fd, char *out, size_t *len, char *why, size_t wlen)
{
	ssize_t n = read(fd, out, PS_SECRET_MAX + 1);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		n--;
	if (n < PS_SECRET_MIN || n > PS_SECRET_MAX) {
		snprintf(why, wlen, n > PS_SECRET_MAX ? "longer than %d bytes" : "shorter than %d bytes, "
			 "which can be guessed (make one with: head -c 24 /dev/urandom | base64 > FILE)",
			 n > PS_SECRET_MAX ? PS_SECRET_MAX : PS_SECRET_MIN);
		return PS_EINVAL;
	}
	*len = (size_t)n;
	return 0;
}

int ps_secret_check(const char *file, char *why, size_t len)
{
	char scratch[8], buf[PS_SECRET_MAX + 1];
	int fd;
	size_t n;
	if (!why)
		why = scratch, len = sizeof(scratch);
	if (!file || !*file) {
		snprintf(why, len, "no file named");
		return PS_EINVAL;
	}
	int rc = secret_open(file, why, len, &fd);
	if (!rc) {
		rc = secret_take(fd, buf, &n, why, len);
		close(fd);
	}
	return rc;
}

int ps_secret_read(const char *file, char *out, size_t *len, char *why, size_t wlen)
{
	char scratch[8];
	if (!why)
		why = scratch, wlen = sizeof(scratch);
	int fd, rc = secret_open(file, why, wlen, &fd);
	if (rc)
		return rc;
	rc = secret_take(fd, out, len, why, wlen);
	close(fd);
	return rc;
}
