/* files.c - what the archive's writer, reader and repair share: errors that name the file, a file written whole beside itself, files read only when regular. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/internal.h"

/* err gets the message, and the system's words for rc when errno_text */
static int vfail(char *err, size_t len, int rc, bool errno_text, const char *fmt, va_list ap)
{
	if (err && len) {
		int n = vsnprintf(err, len, fmt, ap);
		if (errno_text && n >= 0 && (size_t)n < len)
			snprintf(err + n, len - (size_t)n, ": %s", strerror(-rc));
	}
	return rc;
}

/* A system call failed on what fmt names. */
int ar__sys_fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, len, rc, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* The message says it all. */
int ar__fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, len, rc, false, fmt, ap);
	va_end(ap);
	return rc;
}

void ar__path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

int ar__add_region(struct region **v, int *n, int rank, uint32_t id, const char *name)
{
	if (rank < 0 || !id || !name)
		return -EINVAL;
	struct region *g = realloc(*v, sizeof(*g) * (size_t)(*n + 1));
	if (!g)
		return -ENOMEM;
	*v = g;
	g = &g[(*n)++];
	g->rank = rank;
	g->id = id;
	snprintf(g->name, sizeof(g->name), "%s", name);
	for (char *c = g->name; *c; c++)
		*c = *c == '\t' || *c == '\n' ? ' ' : *c; /* a line each */
	return 0;
}

int ar__by_rank_id(const void *x, const void *y)
{
	const struct region *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int ar__write_all(int fd, const unsigned char *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t k = pwrite(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/* Closes f (synced first when sync); 0 or a negative errno. */
int ar__close_file(FILE *f, bool sync)
{
	int bad = ferror(f);
	if (fflush(f) || (sync && fsync(fileno(f))))
		bad = 1;
	int rc = bad ? (errno ? -errno : -EIO) : 0;
	if (fclose(f) && !rc)
		rc = errno ? -errno : -EIO;
	return rc;
}

int ar__part_open(const char *dir, const char *name, struct ar__part *pt, char *err, size_t errlen)
{
	ar__path(pt->path, sizeof(pt->path), dir, name);
	snprintf(pt->tmp, sizeof(pt->tmp), "%s.tmp", pt->path);
	pt->f = base_fopen_out(pt->tmp, 0600);
	return pt->f ? 0 : ar__sys_fail(err, errlen, -errno, "%s", pt->tmp);
}

int ar__part_close(struct ar__part *pt, bool sync, char *err, size_t errlen)
{
	int rc = ar__close_file(pt->f, sync);
	if (!rc && rename(pt->tmp, pt->path))
		rc = -errno;
	if (rc) {
		unlink(pt->tmp);
		return ar__sys_fail(err, errlen, rc, "%s", pt->path);
	}
	return 0;
}

void ar__free_comms(struct ar_comm *c, int n)
{
	for (int i = 0; i < n; i++)
		free(c[i].members[0]), free(c[i].members[1]), free(c[i].by_world);
	free(c);
}

/* A file of the archive, to read: only a regular file (a FIFO put there
 * would hold the reader forever). */
FILE *ar__open_in(const char *p, char *err, size_t errlen, int *rc)
{
	FILE *f = base_fopen_in(p);
	if (f)
		return f;
	*rc = errno == EINVAL ? ar__fail(err, errlen, -EINVAL, "%s: not a regular file", p)
			      : ar__sys_fail(err, errlen, -errno, "%s", p);
	return NULL;
}

/* A file an archive may lack (an older one, or one of no MPI job): NULL
 * with *rc 0 when it is not there, or the error naming it. */
FILE *ar__open_optional(const char *p, char *err, size_t errlen, int *rc)
{
	FILE *f = base_fopen_in(p);
	*rc = 0;
	if (!f && errno != ENOENT)
		*rc = errno == EINVAL ? ar__fail(err, errlen, -EINVAL, "%s: not a regular file", p)
				      : ar__sys_fail(err, errlen, -errno, "%s", p);
	return f;
}

/* A record past the checkpoint (or, without INFO, any) that the recorder
 * wrote whole: an op a collector writes, on a thread the archive knows,
 * stamps in order.  The block padding after the last is zeros, and fails;
 * so does a record a kill tore (its tail zeros: no op).  A communicator no
 * checkpoint described does not make it fail: the record is kept (nothing
 * written is lost), and readers say what the archive lacks of it. */
bool ar__salvageable(const ar_archive *a, const unsigned char *r)
{
	struct ar_event e;
	memcpy(&e.t, r, sizeof(e.t));
	memcpy(&e.thread, r + sizeof(e.t), sizeof(e.thread));
	unsigned code = es_op_code(e.t.op);
	return e.t.start && e.t.end >= e.t.start && code && code < 256 && e.thread < (uint32_t)a->nthreads;
}

/* Seconds from the archive's first stamp to ns. */
double ar__into(const ar_archive *a, uint64_t ns)
{
	return a->first_ns == UINT64_MAX || ns < a->first_ns ? 0 : (double)(ns - a->first_ns) / 1e9;
}

/* ranks grown to hold r, new ones marked unsaid */
int ar__hold_rank(struct ar_rank **ranks, int *n, int r)
{
	if (r < 0 || r > 1 << 24)
		return -EINVAL;
	if (r < *n)
		return 0;
	struct ar_rank *v = realloc(*ranks, sizeof(*v) * (size_t)(r + 1));
	if (!v)
		return -ENOMEM;
	for (int i = *n; i <= r; i++)
		v[i] = (struct ar_rank){ .rank = -1 };
	*ranks = v;
	*n = r + 1;
	return 0;
}
