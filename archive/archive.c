/* archive.c - writes and reads EventSpace archives (archive.h): events as recorded, threads, communicators, INFO last. */
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

#include "archive/archive.h"
#include "archive/clocks.h"
#include "archive/sites.h"

/* Records are written and mapped as they lie in memory. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "archives are little-endian");
_Static_assert(sizeof(struct ar_event) == AR_RECORD, "an event record is 40 bytes");

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
static int sys_fail(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int sys_fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, len, rc, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* The message says it all. */
static int fail(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, len, rc, false, fmt, ap);
	va_end(ap);
	return rc;
}

static void path_of(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* --- writing ------------------------------------------------------------------ */

/*
 * The archive on disk.  A recorder may be killed (SIGKILL: no handler
 * runs) at any instant, or its disk fill, and every reader must open what
 * is left.  These hold at every instant, whatever the writer was doing:
 *
 * 1. DIR is an archive from the moment it exists.  ar_create writes the
 *    skeleton (events with its 8-byte header, every other file empty, and
 *    an INFO that counts no event, "whole: no", "until: 0") in a directory
 *    beside DIR (.NAME.making-XXXXXX) and renames it to DIR.  Where that
 *    cannot be done (DIR holds other files, or its parent is not ours) the
 *    skeleton is written into DIR, events first and INFO last, and a
 *    reader that finds events without INFO reads an archive cut off before
 *    it was begun.  A directory with neither is no archive.  A kill while
 *    the skeleton is written beside DIR leaves that directory, never DIR.
 *
 * 2. Every file but events is written whole beside itself (NAME.tmp) and
 *    renamed over itself: a reader finds the old one or the new one, never
 *    a torn one.  After ar_create every file is always there.
 *
 * 3. What the files say only grows: a thread's index, a communicator's
 *    number, a site, a rank, a phase's or file's number, once written,
 *    keep their meaning.  So files newer than INFO (a checkpoint cut
 *    before its INFO) say at least what INFO's events need.
 *
 * 4. INFO is written last at every checkpoint, after the events it counts
 *    and every other file: "events: N" means the first 8 + 40 N bytes of
 *    events are N whole records, each on a thread that threads lists.
 *
 * 5. events only grows, by whole blocks from where the checkpoint's
 *    records end (the last block written again as it fills): bytes past
 *    INFO's count may be later whole records, a record a kill tore, or a
 *    block's zero padding.  Every record written out is on a thread the
 *    threads file lists by then (flush_events writes it first when a
 *    thread was named since).  Readers read INFO's count; ar_repair keeps
 *    the whole records past it (those on a communicator no file describes
 *    too: readers say what they lack) and cuts events after the last of
 *    them, keeping what it cuts in events.cut unless it is a torn last
 *    record or padding: nothing written whole is lost.
 *
 * 6. Nothing else is ever removed, but by ar_discard (no job was found:
 *    nothing was recorded) and the writer's own NAME.tmp files.
 */

/* A phase's name, by rank and number; sorted so when read. */
struct region {
	int rank;
	uint32_t id;
	char name[256];
};

static int add_region(struct region **v, int *n, int rank, uint32_t id, const char *name)
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

static int by_rank_id(const void *x, const void *y)
{
	const struct region *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}


enum { WBYTES = 80 * 4096 }; /* what a writer gathers before one write: 320 KB */

/*
 * Invariants of the events file: buf holds the bytes after the first off
 * written out (the header first, then 40-byte records); a write takes
 * whole 4 KB blocks when the file is O_DIRECT (no page-cache copy: the
 * recorder's largest cost in the kernel), and the last write pads its
 * block, the file then cut to off.  Where the file system refuses O_DIRECT
 * (tmpfs) the file is written through the page cache.
 */
struct ar_writer {
	char dir[4096];
	char job[PS_NAME_MAX + 1];
	int fd;                /* the events file; -1 once closed */
	bool direct;
	unsigned char *buf;    /* WBYTES, 4 KB aligned */
	size_t len;            /* bytes in buf */
	uint64_t off;          /* bytes written out */
	uint64_t written;
	struct ar_thread *threads;
	int nthreads;
	struct ar_comm *comms; /* by number */
	int ncomms;
	struct ar_sites *sites; /* made at the first ar_set_site */
	struct ar_rank *ranks;  /* by rank; rank -1 where none said */
	int nranks;
	struct region *regions, *files;
	int nregions, nfiles;
	struct ar_death *died;
	int ndied;
	struct ar_clocks *clocks; /* made at the first clock given */
	bool sync;             /* the files synced as written: at the end, not at checkpoints */
	unsigned dirty;        /* the files changed since last written (enum part_bit) */
	bool made;             /* DIR was made by it (not there before) */
};

/* A checkpoint writes again only the files whose contents changed. */
enum part_bit { P_THREADS = 1, P_COMMS = 2, P_SITES = 4, P_RANKS = 8, P_REGIONS = 16, P_FILES = 32, P_CLOCKS = 64 };

static void free_writer(ar_writer *w);

/* What a writer starts from: nothing on disk yet. */
static ar_writer *writer_new(const char *job)
{
	ar_writer *w = calloc(1, sizeof(*w));
	void *buf = NULL;
	if (!w || posix_memalign(&buf, 4096, WBYTES)) {
		free(w);
		return NULL;
	}
	w->buf = buf;
	w->fd = -1;
	snprintf(w->job, sizeof(w->job), "%s", job);
	uint32_t v = AR_VERSION;
	memcpy(w->buf, "ESAR", 4);
	memcpy(w->buf + 4, &v, 4);
	w->len = 8;
	return w;
}

static int write_all(int fd, const unsigned char *p, size_t n, uint64_t off);
static int write_parts(ar_writer *w, bool all, char *err, size_t errlen);
static int write_info(ar_writer *w, bool whole, const struct ar_end *end, char *err, size_t errlen);

/* Every file an archive holds, events first (the mark of an archive), INFO last. */
static const char *const parts[] = { "events", "threads", "comms", "sites", "ranks", "regions", "files", "clocks",
				     "INFO" };

/* Removes what a writer made in dir (its files, each one's .tmp), and dir
 * itself when the writer made it. */
static void remove_parts(const char *dir, bool made)
{
	char p[4210];
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, parts[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%s.tmp", dir, parts[i]);
		unlink(p);
	}
	if (made)
		rmdir(dir);
}

/*
 * The skeleton, in w->dir: events with its header (kept open, to append
 * to), then every other file empty, then an INFO that counts no event
 * ("until: 0": nothing recorded yet).  Not synced: a kill leaves the page
 * cache, and a crash of the machine is not what a checkpoint guards.
 */
static int write_skeleton(ar_writer *w, char *err, size_t errlen)
{
	char p[4200];
	path_of(p, sizeof(p), w->dir, "events");
	w->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); /* never an old file, nor a link */
	if (w->fd < 0)
		return errno == EEXIST ? fail(err, errlen, -EEXIST, "%s: already holds an archive (events)", w->dir)
				       : sys_fail(err, errlen, -errno, "%s", p);
	int rc = write_all(w->fd, w->buf, w->len, 0); /* kept in buf too: the first block is written again */
	if (rc)
		return sys_fail(err, errlen, rc, "%s", p);
	int fl = fcntl(w->fd, F_GETFL);
	w->direct = fl >= 0 && fcntl(w->fd, F_SETFL, fl | O_DIRECT) == 0;
	if ((rc = write_parts(w, true, err, errlen)))
		return rc;
	return write_info(w, false, &(struct ar_end){ .why = NULL }, err, errlen);
}

/* A failed skeleton's files gone, and its events closed. */
static void undo_skeleton(ar_writer *w, bool made)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	remove_parts(w->dir, made);
}

/*
 * DIR made whole at once (invariant 1 above): the skeleton written in a
 * directory beside it, then renamed to DIR (over DIR only if DIR is an
 * empty directory).  1 when that cannot be done (DIR holds other files,
 * DIR's parent is not ours to write in, a write failed): then in place.
 */
static int create_aside(ar_writer *w, const char *dir, char *err, size_t errlen)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	size_t base = n;
	while (base > 0 && dir[base - 1] != '/')
		base--;
	snprintf(w->dir, sizeof(w->dir), "%.*s.%.*s.making-XXXXXX", (int)base, dir, (int)(n - base), dir + base);
	if (!mkdtemp(w->dir))
		return 1;
	if (!write_skeleton(w, err, errlen) && !rename(w->dir, dir))
		return 0;
	undo_skeleton(w, true);
	return 1;
}

/* The skeleton written into DIR itself, events first and INFO last: a
 * reader that finds events without INFO reads an archive cut off before
 * anything was recorded (invariant 1). */
static int create_in_place(ar_writer *w, const char *dir, bool made, char *err, size_t errlen)
{
	char p[4200];
	int rc = ps_mkdir_out(dir, 0700); /* a trace is its owner's, as its segments are */
	if (rc)
		return sys_fail(err, errlen, rc, "%s", dir);
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	path_of(p, sizeof(p), dir, "events");
	struct stat st;
	if (lstat(p, &st) == 0)
		return fail(err, errlen, -EEXIST, "%s: already holds an archive (events)", dir);
	/* an INFO left from an earlier archive would make this one look whole */
	path_of(p, sizeof(p), dir, "INFO");
	if (unlink(p) && errno != ENOENT)
		return sys_fail(err, errlen, -errno, "%s", p);
	if ((rc = write_skeleton(w, err, errlen)))
		undo_skeleton(w, made);
	return rc;
}

int ar_create(const char *dir, const char *job, ar_writer **out, char *err, size_t errlen)
{
	*out = NULL;
	if (strlen(dir) >= sizeof(((ar_writer *)0)->dir) - 32)
		return sys_fail(err, errlen, -ENAMETOOLONG, "%s", dir);
	ar_writer *w = writer_new(job);
	if (!w)
		return sys_fail(err, errlen, -ENOMEM, "%s", dir);
	struct stat st;
	bool existed = lstat(dir, &st) == 0;
	int rc = create_aside(w, dir, err, errlen);
	if (rc > 0)
		rc = create_in_place(w, dir, !existed, err, errlen);
	if (rc) {
		free_writer(w);
		return rc;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->made = !existed;
	*out = w;
	return 0;
}

int ar_set_thread(ar_writer *w, int index, const char *process, const char *name)
{
	if (index < 0 || index > 1 << 20)
		return -EINVAL;
	if (index >= w->nthreads) {
		struct ar_thread *t = realloc(w->threads, sizeof(*t) * (size_t)(index + 1));
		if (!t)
			return -ENOMEM;
		memset(t + w->nthreads, 0, sizeof(*t) * (size_t)(index + 1 - w->nthreads));
		w->threads = t;
		w->nthreads = index + 1;
	}
	struct ar_thread *t = &w->threads[index], was = *t;
	snprintf(t->process, sizeof(t->process), "%s", process);
	snprintf(t->name, sizeof(t->name), "%s", name);
	if (strcmp(was.process, t->process) || strcmp(was.name, t->name))
		w->dirty |= P_THREADS;
	return 0;
}

static bool same_comm(const struct ar_comm *c, uint64_t id, unsigned flags, const uint32_t size[2],
		      const int *const members[2])
{
	if (!c->members[0] || c->id != id || c->flags != flags || c->size[0] != size[0] || c->size[1] != size[1])
		return false;
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < size[s]; i++)
			if (c->members[s][i] != (members[s] ? members[s][i] : -1))
				return false;
	return true;
}

int ar_set_comm(ar_writer *w, int n, uint64_t id, unsigned flags, const uint32_t size[2],
		const int *const members[2])
{
	if (n < 0 || n >= (int)ES_COMM_NONE || size[0] > 1u << 24 || size[1] > 1u << 24)
		return -EINVAL;
	if (n >= w->ncomms) {
		struct ar_comm *c = realloc(w->comms, sizeof(*c) * (size_t)(n + 1));
		if (!c)
			return -ENOMEM;
		memset(c + w->ncomms, 0, sizeof(*c) * (size_t)(n + 1 - w->ncomms));
		w->comms = c;
		w->ncomms = n + 1;
	}
	struct ar_comm *c = &w->comms[n];
	if (same_comm(c, id, flags, size, members))
		return 0; /* said again at a checkpoint: nothing to write */
	w->dirty |= P_COMMS;
	free(c->members[0]), free(c->members[1]);
	*c = (struct ar_comm){ .id = id, .flags = flags, .size = { size[0], size[1] } };
	for (int s = 0; s < 2; s++) {
		if (!(c->members[s] = malloc(sizeof(int32_t) * (size[s] + 1))))
			return -ENOMEM;
		for (uint32_t i = 0; i < size[s]; i++)
			c->members[s][i] = members[s] ? members[s][i] : -1;
	}
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n, uint64_t off)
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

static int write_threads(ar_writer *w, char *err, size_t errlen);

/* Writes out what buf holds (O_DIRECT: its whole blocks, or at the end all
 * of it, its last block padded and the file cut back); threads first when
 * a thread was named since it was written, so that a record on disk is on
 * a thread the file on disk lists (invariant 5: repair stops at none). */
static int flush_events(ar_writer *w, bool last)
{
	if (w->dirty & P_THREADS) {
		int rc = write_threads(w, NULL, 0);
		if (rc)
			return rc;
		w->dirty &= ~(unsigned)P_THREADS;
	}
	size_t n = w->direct && !last ? w->len & ~(size_t)4095 : w->len;
	size_t out = w->direct ? (n + 4095) & ~(size_t)4095 : n;
	memset(w->buf + n, 0, out - n);
	int rc = out ? write_all(w->fd, w->buf, out, w->off) : 0;
	if (rc)
		return rc;
	w->off += n;
	memmove(w->buf, w->buf + n, w->len - n);
	w->len -= n;
	if (last && out > n && ftruncate(w->fd, (off_t)w->off))
		return -errno;
	return 0;
}

/* The tail too, kept in buf: the next flush writes its block again, over
 * the same bytes and more (a checkpoint's events are on disk as whole
 * records whatever happens after it). */
static int write_tail(ar_writer *w)
{
	size_t out = w->direct ? (w->len + 4095) & ~(size_t)4095 : w->len;
	memset(w->buf + w->len, 0, out - w->len);
	return out ? write_all(w->fd, w->buf, out, w->off) : 0;
}

int ar_write_run(ar_writer *w, const struct es_trace *t, size_t n, uint32_t thread)
{
	for (size_t i = 0; i < n; i++) {
		if (w->len + AR_RECORD > WBYTES) {
			int rc = flush_events(w, false);
			if (rc)
				return rc;
		}
		unsigned char *e = w->buf + w->len;
		memcpy(e, &t[i], sizeof(t[i]));
		memcpy(e + sizeof(t[i]), &thread, sizeof(thread));
		w->len += AR_RECORD;
	}
	w->written += n;
	return 0;
}

int ar_write(ar_writer *w, const struct es_trace *t, uint32_t thread)
{
	return ar_write_run(w, t, 1, thread);
}

/* The events file written out whole and closed: 0 or -errno. */
static int close_events(ar_writer *w)
{
	int rc = flush_events(w, true);
	if (!rc && fsync(w->fd))
		rc = -errno;
	if (close(w->fd) && !rc)
		rc = -errno;
	w->fd = -1;
	return rc;
}

uint64_t ar_written(const ar_writer *w)
{
	return w->written;
}

/* Closes f (synced first when sync); 0 or a negative errno. */
static int close_file(FILE *f, bool sync)
{
	int bad = ferror(f);
	if (fflush(f) || (sync && fsync(fileno(f))))
		bad = 1;
	int rc = bad ? (errno ? -errno : -EIO) : 0;
	if (fclose(f) && !rc)
		rc = errno ? -errno : -EIO;
	return rc;
}

/* A file of the archive is written whole beside it (NAME.tmp) and renamed
 * over it: a reader, at any moment, finds the last whole one. */
struct part {
	FILE *f;
	char tmp[4210], path[4200];
};

static int part_open(const char *dir, const char *name, struct part *pt, char *err, size_t errlen)
{
	path_of(pt->path, sizeof(pt->path), dir, name);
	snprintf(pt->tmp, sizeof(pt->tmp), "%s.tmp", pt->path);
	pt->f = ps_fopen_out(pt->tmp, 0600);
	return pt->f ? 0 : sys_fail(err, errlen, -errno, "%s", pt->tmp);
}

static int part_close(struct part *pt, bool sync, char *err, size_t errlen)
{
	int rc = close_file(pt->f, sync);
	if (!rc && rename(pt->tmp, pt->path))
		rc = -errno;
	if (rc) {
		unlink(pt->tmp);
		return sys_fail(err, errlen, rc, "%s", pt->path);
	}
	return 0;
}

static int write_threads(ar_writer *w, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, "threads", &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < w->nthreads; i++)
		fprintf(f, "%d\t%s\t%s\n", i, w->threads[i].process[0] ? w->threads[i].process : "-",
			w->threads[i].name[0] ? w->threads[i].name : "-");
	return part_close(&pt, w->sync, err, errlen);
}

static int write_comms(ar_writer *w, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, "comms", &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < w->ncomms; i++) {
		const struct ar_comm *c = &w->comms[i];
		unsigned fl = c->flags;
		fprintf(f, "%d %llx %s", i, (unsigned long long)c->id, fl & ES_COMMS_WORLD ? "world" :
			fl & ES_COMMS_WINDOW ? "window" : fl & ES_COMMS_INTER ? "inter" : "comm");
		/* every rank in it, by its rank there; - where no rank said */
		for (int s = 0; s < ((fl & ES_COMMS_INTER) ? 2 : 1); s++) {
			fprintf(f, "%s %u", s ? " |" : "", c->size[s]);
			for (uint32_t r = 0; r < c->size[s]; r++)
				if (c->members[s] && c->members[s][r] >= 0)
					fprintf(f, " %d", c->members[s][r]);
				else
					fputs(" -", f);
		}
		fputc('\n', f);
	}
	return part_close(&pt, w->sync, err, errlen);
}

static void free_comms(struct ar_comm *c, int n)
{
	for (int i = 0; i < n; i++)
		free(c[i].members[0]), free(c[i].members[1]), free(c[i].rank_of);
	free(c);
}

int ar_set_site(ar_writer *w, int thread, int site, const struct ar_frame *frames, int n)
{
	if (!w->sites && !(w->sites = ar_sites_create()))
		return -ENOMEM;
	w->dirty |= P_SITES;
	return ar_sites_add(w->sites, thread, site, frames, n);
}

/* ranks grown to hold r, new ones marked unsaid */
static int hold_rank(struct ar_rank **ranks, int *n, int r)
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

int ar_set_region(ar_writer *w, int rank, uint32_t id, const char *name)
{
	w->dirty |= P_REGIONS;
	return add_region(&w->regions, &w->nregions, rank, id, name);
}

int ar_set_file(ar_writer *w, int rank, uint32_t id, const char *name)
{
	w->dirty |= P_FILES;
	return add_region(&w->files, &w->nfiles, rank, id, name);
}

/* regions or files: RANK NUMBER NAME lines */
static int write_names(ar_writer *w, const char *file, const struct region *v, int n, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, file, &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < n; i++)
		fprintf(f, "%d\t%u\t%s\n", v[i].rank, v[i].id, v[i].name);
	return part_close(&pt, w->sync, err, errlen);
}

int ar_set_rank(ar_writer *w, const struct ar_rank *r)
{
	int rc = hold_rank(&w->ranks, &w->nranks, r->rank);
	if (rc)
		return rc;
	struct ar_rank *t = &w->ranks[r->rank], was = *t;
	*t = *r;
	/* a field holds no tab or newline: the file is a line per rank */
	for (char *c = t->host; *c; c++)
		*c = *c == '\t' || *c == '\n' ? ' ' : *c;
	for (char *c = t->cmd; *c; c++)
		*c = *c == '\t' || *c == '\n' ? ' ' : *c;
	if (was.rank != t->rank || was.pid != t->pid || was.wall_ns != t->wall_ns || was.ns != t->ns ||
	    strcmp(was.host, t->host) || strcmp(was.cmd, t->cmd))
		w->dirty |= P_RANKS;
	return 0;
}

static int write_ranks(ar_writer *w, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, "ranks", &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < w->nranks; i++) {
		const struct ar_rank *r = &w->ranks[i];
		if (r->rank >= 0)
			fprintf(f, "%d\t%s\t%d\t%llu\t%llu\t%s\n", r->rank, r->host[0] ? r->host : "-", r->pid,
				(unsigned long long)r->wall_ns, (unsigned long long)r->ns, r->cmd[0] ? r->cmd : "-");
	}
	return part_close(&pt, w->sync, err, errlen);
}

static int hold_clocks(ar_writer *w)
{
	return w->clocks || (w->clocks = ar_clocks_new()) ? 0 : -ENOMEM;
}

int ar_set_clock_shift(ar_writer *w, int rank, int64_t shift_ns)
{
	int rc = hold_clocks(w);
	if (!rc && (rc = ar_clocks_shift(w->clocks, rank, shift_ns)) > 0)
		w->dirty |= P_CLOCKS;
	return rc < 0 ? rc : 0;
}

int ar_add_sync(ar_writer *w, const struct ar_sync *s)
{
	int rc = hold_clocks(w);
	if (!rc && (rc = ar_clocks_add(w->clocks, s)) > 0)
		w->dirty |= P_CLOCKS;
	return rc < 0 ? rc : 0;
}

/* clocks: only an archive given one (a job of this collector's) */
static int write_clocks(ar_writer *w, char *err, size_t errlen)
{
	if (!w->clocks)
		return 0;
	struct part pt;
	int rc = part_open(w->dir, "clocks", &pt, err, errlen);
	if (rc)
		return rc;
	ar_clocks_print(w->clocks, pt.f);
	return part_close(&pt, w->sync, err, errlen);
}

static int write_sites(ar_writer *w, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, "sites", &pt, err, errlen);
	if (rc)
		return rc;
	if (ar_sites_count(w->sites) && (rc = ar_sites_print(w->sites, pt.f))) {
		fclose(pt.f);
		unlink(pt.tmp);
		return fail(err, errlen, rc, "%s: a site was given twice", pt.path);
	}
	return part_close(&pt, w->sync, err, errlen);
}

int ar_set_died(ar_writer *w, const struct ar_death *d)
{
	if (d->rank < 0)
		return -EINVAL;
	for (int i = 0; i < w->ndied; i++)
		if (w->died[i].rank == d->rank)
			return 0; /* a rank dies once */
	struct ar_death *v = realloc(w->died, sizeof(*v) * (size_t)(w->ndied + 1));
	if (!v)
		return -ENOMEM;
	w->died = v;
	w->died[w->ndied++] = *d;
	return 0;
}

static void free_writer(ar_writer *w)
{
	free(w->buf);
	ar_sites_destroy(w->sites);
	free(w->ranks);
	free(w->regions), free(w->files);
	free(w->threads);
	free(w->died);
	ar_clocks_free(w->clocks);
	free_comms(w->comms, w->ncomms);
	free(w);
}

/* Every file but events and INFO that changed since written (all of them
 * at the end), as the writer knows them now. */
static int write_parts(ar_writer *w, bool all, char *err, size_t errlen)
{
	unsigned d = all ? ~0u : w->dirty;
	int rc = 0;
	if ((d & P_THREADS && (rc = write_threads(w, err, errlen))) ||
	    (d & P_COMMS && (rc = write_comms(w, err, errlen))) ||
	    (d & P_SITES && (rc = write_sites(w, err, errlen))) ||
	    (d & P_RANKS && (rc = write_ranks(w, err, errlen))) ||
	    (d & P_REGIONS && (rc = write_names(w, "regions", w->regions, w->nregions, err, errlen))) ||
	    (d & P_FILES && (rc = write_names(w, "files", w->files, w->nfiles, err, errlen))) ||
	    (d & P_CLOCKS && (rc = write_clocks(w, err, errlen))))
		return rc;
	w->dirty = 0;
	return 0;
}

/* INFO, last: whole, or a checkpoint's (whole: no, until: when) */
static int write_info(ar_writer *w, bool whole, const struct ar_end *end, char *err, size_t errlen)
{
	struct part pt;
	int rc = part_open(w->dir, "INFO", &pt, err, errlen);
	if (rc)
		return rc;
	fprintf(pt.f, "archive: %d\njob: %s\nevents: %llu\nlost: %llu\nbefore_attach: %llu\n"
		"threads: %d\nclock: ns, CLOCK_MONOTONIC\n", AR_VERSION, w->job,
		(unsigned long long)w->written, (unsigned long long)end->lost,
		(unsigned long long)end->before, w->nthreads);
	if (whole)
		fprintf(pt.f, "ended: %s\n", end->why ? end->why : "-");
	else
		fprintf(pt.f, "whole: no\nuntil: %llu\n", (unsigned long long)end->until_ns);
	for (int i = 0; i < w->ndied; i++)
		fprintf(pt.f, "died: %d %d %llu %llu %d\n", w->died[i].rank, w->died[i].pid,
			(unsigned long long)w->died[i].last_ns, (unsigned long long)w->died[i].seen_ns,
			w->died[i].signal);
	return part_close(&pt, w->sync, err, errlen);
}

int ar_checkpoint(ar_writer *w, const struct ar_end *end, char *err, size_t errlen)
{
	int rc = flush_events(w, false);
	if (!rc)
		rc = write_tail(w);
	if (rc) {
		char p[4200];
		path_of(p, sizeof(p), w->dir, "events");
		return sys_fail(err, errlen, rc, "%s", p);
	}
	w->sync = false; /* a kill leaves the page cache: only the end is synced */
	if ((rc = write_parts(w, false, err, errlen)))
		return rc;
	return write_info(w, false, end, err, errlen);
}

int ar_finish(ar_writer *w, const struct ar_end *end, char *err, size_t errlen)
{
	int rc = close_events(w);
	if (rc) {
		char p[4200];
		path_of(p, sizeof(p), w->dir, "events");
		sys_fail(err, errlen, rc, "%s", p);
		free_writer(w);
		return rc;
	}
	w->sync = true;
	if (!(rc = write_parts(w, true, err, errlen)))
		rc = write_info(w, true, end, err, errlen);
	free_writer(w);
	return rc;
}

void ar_abandon(ar_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free_writer(w);
}

void ar_discard(ar_writer *w)
{
	if (!w)
		return;
	undo_skeleton(w, w->made);
	free_writer(w);
}

/* --- reading ------------------------------------------------------------------ */

struct ar_archive {
	char job[PS_NAME_MAX + 1];
	uint64_t lost, declared;
	void *map;
	size_t maplen, nevents;
	struct ar_thread *threads;
	int nthreads;
	struct ar_comm *comms;
	int ncomms;
	struct ar_sites *sites;
	int version;
	struct ar_rank *ranks;
	int nranks;
	struct region *regions, *files;
	int nregions, nfiles;
	bool partial;         /* INFO said "whole: no": a checkpoint's, its recorder stopped */
	bool no_info;         /* no INFO: cut off before ar_create wrote it (partial too) */
	bool repaired;        /* whole by ar_repair: what it lacks its recorder may not have written yet */
	unsigned absent;      /* the files it lacks that every archive now has (enum part_bit) */
	int rank_bound;       /* every rank it names is below (check_ranks) */
	uint64_t first_ns;    /* the earliest start (UINT64_MAX: no event), found at open */
	uint64_t until_ns;
	struct ar_death *died;
	int ndied;
	uint32_t *by_thread;  /* event indices, each thread's together, in the file's order */
	size_t *first;        /* thread t's are by_thread[first[t] .. first[t + 1]) */
	struct ar_clocks *clocks; /* the clocks file, or NULL */
	int moved;            /* ranks whose stamps the reader moved (clocks.c) */
	int64_t most_moved;   /* by at most (ns, either way) */
	int points;           /* clock points of the ranks moved */
};

/* A file of the archive, to read: only a regular file (a FIFO put there
 * would hold the reader forever). */
static FILE *open_in(const char *p, char *err, size_t errlen, int *rc)
{
	FILE *f = ps_fopen_in(p);
	if (f)
		return f;
	*rc = errno == EINVAL ? fail(err, errlen, -EINVAL, "%s: not a regular file", p)
			      : sys_fail(err, errlen, -errno, "%s", p);
	return NULL;
}

/* A file an archive may lack (an older one, or one of no MPI job): NULL
 * with *rc 0 when it is not there, or the error naming it. */
static FILE *open_optional(const char *p, char *err, size_t errlen, int *rc)
{
	FILE *f = ps_fopen_in(p);
	*rc = 0;
	if (!f && errno != ENOENT)
		*rc = errno == EINVAL ? fail(err, errlen, -EINVAL, "%s: not a regular file", p)
				      : sys_fail(err, errlen, -errno, "%s", p);
	return f;
}

static int read_death(ar_archive *a, const char *s)
{
	struct ar_death d = { .signal = 0 };
	unsigned long long last, seen;
	int n = sscanf(s, "%d %d %llu %llu %d", &d.rank, &d.pid, &last, &seen, &d.signal);
	if (n < 4 || d.rank < 0 || d.rank > 1 << 24 || d.signal < 0 || d.signal > 64)
		return -EINVAL;
	d.last_ns = last, d.seen_ns = seen;
	struct ar_death *v = realloc(a->died, sizeof(*v) * (size_t)(a->ndied + 1));
	if (!v)
		return -ENOMEM;
	a->died = v;
	v[a->ndied++] = d;
	return 0;
}

/*
 * A directory without INFO: an archive whose recorder was stopped while it
 * made its skeleton in place (events is there, INFO not yet), or one an
 * older recorder left before its first checkpoint.  Read as partial, its
 * events the whole records its file holds (map_events); a directory
 * without events either is no archive.
 */
static int without_info(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	struct stat st;
	if (stat(dir, &st))
		return sys_fail(err, errlen, -errno, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, -ENOTDIR, "%s: not an archive (a directory)", dir);
	path_of(p, sizeof(p), dir, "events");
	if (lstat(p, &st))
		return fail(err, errlen, -ENOENT, "%s: no archive: neither INFO nor events (the files "
			    "esrecord writes first) is there", dir);
	a->partial = a->no_info = true;
	a->version = AR_VERSION; /* or what the events header says, when it is there */
	snprintf(a->job, sizeof(a->job), "-");
	return 0;
}

/* INFO: the whole archive's word on itself */
static int read_info(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200], line[512];
	path_of(p, sizeof(p), dir, "INFO");
	int rc = 0;
	FILE *f = open_in(p, err, errlen, &rc);
	if (!f)
		return rc == -ENOENT ? without_info(a, dir, err, errlen) : rc;
	int version = 0, lineno = 0;
	bool have_events = false;
	rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		unsigned long long v;
		char word[256];
		if (sscanf(line, "archive: %d", &version) == 1)
			continue;
		if (sscanf(line, "job: %255s", word) == 1) {
			if (strlen(word) >= sizeof(a->job)) {
				fclose(f);
				return fail(err, errlen, -EINVAL, "%s:%d: a job name of at most %d characters",
					    p, lineno, PS_NAME_MAX);
			}
			memcpy(a->job, word, strlen(word) + 1);
		}
		else if (sscanf(line, "events: %llu", &v) == 1)
			a->declared = v, have_events = true;
		else if (sscanf(line, "lost: %llu", &v) == 1)
			a->lost = v;
		else if (sscanf(line, "whole: %255s", word) == 1)
			a->partial = !strcmp(word, "no"), a->repaired = !strcmp(word, "repaired");
		else if (sscanf(line, "until: %llu", &v) == 1)
			a->until_ns = v;
		else if (!strncmp(line, "died:", 5)) {
			if ((rc = read_death(a, line + 5))) {
				fclose(f);
				return rc == -ENOMEM ? sys_fail(err, errlen, rc, "%s", p)
						     : fail(err, errlen, rc, "%s:%d: expected died: RANK PID "
							    "LAST_NS SEEN_NS", p, lineno);
			}
		}
		else if (!strchr(line, ':')) {
			fclose(f);
			return fail(err, errlen, -EINVAL, "%s:%d: expected KEY: VALUE", p, lineno);
		}
	}
	fclose(f);
	if (version == 1)
		return fail(err, errlen, -EINVAL, "%s:1: archive: 1, from EventSpace before 0.14, whose "
			    "tuples named communicators otherwise: read it with that version", p);
	if (version != AR_VERSION && version != 2) /* 2 has no sites: none is found */
		return fail(err, errlen, -EINVAL, "%s:1: expected archive: %d, got version %d", p,
			    AR_VERSION, version);
	a->version = version;
	if (!have_events)
		return fail(err, errlen, -EINVAL, "%s: expected an events: line", p);
	return 0;
}

static bool salvageable(const ar_archive *a, const unsigned char *r);

/* Version and records of a mapped events file: as INFO counts them, or
 * (no INFO) the whole records from the first on. */
static int take_events(ar_archive *a, const char *p, const unsigned char *m, size_t len, char *err,
		       size_t errlen)
{
	uint32_t v;
	memcpy(&v, m + 4, 4);
	if (a->no_info && (v == 2 || v == AR_VERSION))
		a->version = (int)v;
	if (memcmp(m, "ESAR", 4) || v != (uint32_t)a->version)
		return fail(err, errlen, -EINVAL, "%s: expected ESAR version %d%s", p, a->version,
			    a->no_info ? "" : ", as INFO says");
	if (a->no_info) {
		size_t n = 0;
		while (8 + (n + 1) * AR_RECORD <= len && salvageable(a, m + 8 + n * AR_RECORD))
			n++;
		a->declared = n;
	} else if ((len - 8) / AR_RECORD != a->declared) {
		return fail(err, errlen, -EINVAL, "%s: %zu events, INFO says %llu", p, (len - 8) / AR_RECORD,
			    (unsigned long long)a->declared);
	}
	a->nevents = (size_t)a->declared;
	return 0;
}

static int map_events(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	path_of(p, sizeof(p), dir, "events");
	int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not hold us */
	if (fd < 0)
		return sys_fail(err, errlen, -errno, "%s", p);
	struct stat st;
	if (fstat(fd, &st)) {
		int rc = -errno;
		close(fd);
		return sys_fail(err, errlen, rc, "%s", p);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s: not a regular file", p);
	}
	size_t len = (size_t)st.st_size;
	if (a->no_info && len < 8) { /* killed before its header was written: nothing recorded */
		close(fd);
		return 0;
	}
	/* a checkpoint's file may go on past its events (the recorder's next
	 * writes, a block's padding): only the records INFO counts are read */
	if (a->partial && !a->no_info && len >= 8 && len - 8 >= a->declared * AR_RECORD)
		len = 8 + (size_t)a->declared * AR_RECORD;
	else if (a->partial && !a->no_info) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s: %zu bytes: fewer than the %llu events its INFO "
			    "counts", p, len, (unsigned long long)a->declared);
	}
	if (len < 8 || (!a->no_info && (len - 8) % AR_RECORD)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s: %zu bytes: expected the 8-byte header and "
			    "%d-byte records", p, len, AR_RECORD);
	}
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return sys_fail(err, errlen, -errno, "%s", p);
	a->map = m;
	a->maplen = len;
	return take_events(a, p, m, len, err, errlen);
}

static int read_threads(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200], line[600];
	path_of(p, sizeof(p), dir, "threads");
	int rc = 0;
	FILE *f = open_optional(p, err, errlen, &rc);
	if (!f) {
		a->absent |= rc ? 0 : P_THREADS; /* cut off before its first: none known */
		return rc;
	}
	int lineno = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		char *proc = strchr(line, '\t'), *name = proc ? strchr(proc + 1, '\t') : NULL;
		char *end;
		long i = strtol(line, &end, 10);
		if (!name || end != proc || i != a->nthreads) {
			rc = fail(err, errlen, -EINVAL, "%s:%d: expected %d TAB PROCESS TAB NAME", p, lineno,
				  a->nthreads);
			break;
		}
		*proc++ = 0;
		*name++ = 0;
		name[strcspn(name, "\n")] = 0;
		struct ar_thread *t = realloc(a->threads, sizeof(*t) * (size_t)(a->nthreads + 1));
		if (!t) {
			rc = -ENOMEM;
			break;
		}
		a->threads = t;
		t = &t[a->nthreads++];
		snprintf(t->process, sizeof(t->process), "%s", proc);
		snprintf(t->name, sizeof(t->name), "%s", name);
		const char *seg = strrchr(t->process, '/'); /* after HOST:PORT/, if any */
		enum pm_space_kind kind;
		int r;
		t->rank = pm_space_of(seg ? seg + 1 : t->process, NULL, &kind, &r) &&
			  kind == PM_SPACE_RANK ? r : -1;
	}
	fclose(f);
	return rc;
}

/* One group of a comms line: SIZE and as many ranks (or -). */
static int read_group(char **s, uint32_t *size, int32_t **members)
{
	char *end;
	unsigned long n = strtoul(*s, &end, 10);
	if (end == *s || n > 1u << 24)
		return -EINVAL;
	*s = end;
	if (!(*members = malloc(sizeof(int32_t) * (n + 1))))
		return -ENOMEM;
	*size = (uint32_t)n;
	for (unsigned long r = 0; r < n; r++) {
		while (**s == ' ')
			(*s)++;
		if (**s == '-') {
			(*members)[r] = -1;
			(*s)++;
			continue;
		}
		long v = strtol(*s, &end, 10);
		if (end == *s || v < 0 || v > INT32_MAX)
			return -EINVAL;
		(*members)[r] = (int32_t)v;
		*s = end;
	}
	return 0;
}

static int index_comm(struct ar_comm *c);

static int read_comm_line(ar_archive *a, char *line)
{
	char *s = line, *end, kind[16];
	long n = strtol(s, &end, 10);
	if (end == s || n != a->ncomms)
		return -EINVAL;
	s = end;
	unsigned long long id = strtoull(s, &end, 16);
	int used = 0;
	if (end == s || sscanf(end, " %15s%n", kind, &used) != 1)
		return -EINVAL;
	s = end + used;
	unsigned flags = !strcmp(kind, "world") ? ES_COMMS_WORLD : !strcmp(kind, "window") ? ES_COMMS_WINDOW
		       : !strcmp(kind, "inter") ? ES_COMMS_INTER : !strcmp(kind, "comm") ? 0 : UINT32_MAX;
	if (flags == UINT32_MAX)
		return -EINVAL;
	struct ar_comm *c = realloc(a->comms, sizeof(*c) * (size_t)(a->ncomms + 1));
	if (!c)
		return -ENOMEM;
	a->comms = c;
	c = &c[a->ncomms++];
	*c = (struct ar_comm){ .id = id, .flags = flags };
	int rc = read_group(&s, &c->size[0], &c->members[0]);
	if (!rc && (flags & ES_COMMS_INTER)) {
		while (*s == ' ')
			s++;
		rc = *s == '|' ? (s++, read_group(&s, &c->size[1], &c->members[1])) : -EINVAL;
	}
	if (!rc && !c->members[1] && !(c->members[1] = malloc(sizeof(int32_t))))
		rc = -ENOMEM;
	while (!rc && (*s == ' ' || *s == '\n'))
		s++;
	if (!rc && *s)
		rc = -EINVAL;
	return rc ? rc : index_comm(c);
}

static int read_comms(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	path_of(p, sizeof(p), dir, "comms");
	int rc = 0;
	FILE *f = open_optional(p, err, errlen, &rc);
	if (!f) {
		a->absent |= rc ? 0 : P_COMMS; /* an older recorder's, cut off before it named one */
		return rc;
	}
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		lineno++;
		if ((rc = read_comm_line(a, line)) == -EINVAL)
			fail(err, errlen, rc, "%s:%d: expected NUMBER ID world|comm|window|inter SIZE RANKS... "
			     "(| SIZE RANKS... for inter)", p, lineno);
	}
	free(line);
	fclose(f);
	return rc;
}

static int read_rank_line(ar_archive *a, char *line)
{
	char *f[6], *p = line;
	line[strcspn(line, "\n")] = 0;
	for (int i = 0; i < 6; i++) {
		f[i] = p;
		p = i < 5 ? strchr(p, '\t') : NULL;
		if (i < 5 && !p)
			return -EINVAL;
		if (p)
			*p++ = 0;
	}
	char *end[4];
	long r = strtol(f[0], &end[0], 10), pid = strtol(f[2], &end[1], 10);
	unsigned long long wall = strtoull(f[3], &end[2], 10), ns = strtoull(f[4], &end[3], 10);
	if (*end[0] || *end[1] || *end[2] || *end[3] || end[0] == f[0] || r < 0 || r >= a->rank_bound ||
	    hold_rank(&a->ranks, &a->nranks, (int)r))
		return -EINVAL;
	struct ar_rank *t = &a->ranks[r];
	*t = (struct ar_rank){ .rank = (int)r, .pid = (int)pid, .wall_ns = wall, .ns = ns };
	snprintf(t->host, sizeof(t->host), "%s", f[1]);
	snprintf(t->cmd, sizeof(t->cmd), "%s", f[5]);
	return 0;
}

/* ranks: optional (an archive of no MPI job has none) */
static int read_ranks(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200], line[1024];
	path_of(p, sizeof(p), dir, "ranks");
	int rc = 0;
	FILE *f = open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	for (int lineno = 1; fgets(line, sizeof(line), f); lineno++)
		if (read_rank_line(a, line)) {
			rc = fail(err, errlen, -EINVAL, "%s:%d: expected RANK HOST PID WALL_NS NS COMMAND, "
				  "tab-separated, RANK below %d (the archive's threads and MPI_COMM_WORLD's "
				  "ranks)", p, lineno, a->rank_bound);
			break;
		}
	fclose(f);
	return rc;
}

/* regions or files: optional, RANK NUMBER NAME */
static int read_names(const char *dir, const char *file, int bound, struct region **v, int *nv, char *err,
		      size_t errlen)
{
	char p[4200], line[400];
	path_of(p, sizeof(p), dir, file);
	int rc = 0;
	FILE *f = open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	for (int lineno = 1; !rc && fgets(line, sizeof(line), f); lineno++) {
		line[strcspn(line, "\n")] = 0;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL, *e1, *e2;
		long r = strtol(line, &e1, 10);
		unsigned long id = t1 ? strtoul(t1 + 1, &e2, 10) : 0;
		if (!t2 || e1 != t1 || e2 != t2 || r < 0 || r >= bound || !id || id > UINT32_MAX || !t2[1])
			rc = fail(err, errlen, -EINVAL, "%s:%d: expected RANK NUMBER NAME, tab-separated (RANK "
				  "below %d, NUMBER from 1)", p, lineno, bound);
		else
			rc = add_region(v, nv, (int)r, (uint32_t)id, t2 + 1);
	}
	fclose(f);
	if (!rc && *nv)
		qsort(*v, (size_t)*nv, sizeof(**v), by_rank_id);
	return rc;
}

/* The clocks file, when there is one: then each rank's stamps go onto
 * rank 0's host's clock (clocks.c).  The events are the file's, mapped
 * privately: a moved page is the reader's copy, the file stays as recorded. */
static int read_clocks(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	path_of(p, sizeof(p), dir, "clocks");
	int rc = 0;
	FILE *f = open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	rc = ar_clocks_read(f, p, &a->clocks, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	/* a rank moves when its line is not 0 at every point (then nowhere):
	 * on rank 0's host it is 0 by construction */
	bool *moves = calloc((size_t)a->rank_bound + 1, sizeof(*moves));
	if (!moves)
		return sys_fail(err, errlen, -ENOMEM, "%s", p);
	for (int r = 0; r < a->rank_bound; r++) {
		const struct ar_sync *pts;
		int n = ar_clocks_points(a->clocks, r, &pts), k = 0;
		while (k < n && !ar_clocks_delta(a->clocks, r, pts[k].at_ns))
			k++;
		if (k < n) {
			moves[r] = true;
			a->moved++;
			a->points += n;
		}
	}
	if (a->moved && a->nevents && mprotect(a->map, a->maplen, PROT_READ | PROT_WRITE)) {
		free(moves);
		return sys_fail(err, errlen, -errno, "%s/events", dir);
	}
	struct ar_event *ev = a->moved && a->nevents ? (struct ar_event *)((char *)a->map + 8) : NULL;
	for (size_t i = 0; ev && i < a->nevents; i++) {
		int r = ev[i].thread < (uint32_t)a->nthreads ? a->threads[ev[i].thread].rank : -1;
		if (r < 0 || r >= a->rank_bound || !moves[r])
			continue;
		int64_t d0 = ar_clocks_delta(a->clocks, r, ev[i].t.start), d1 = ar_clocks_delta(a->clocks, r, ev[i].t.end);
		ev[i].t.start += (uint64_t)d0;
		ev[i].t.end += (uint64_t)d1;
		int64_t most = d0 < 0 ? -d0 : d0;
		if (most > a->most_moved)
			a->most_moved = most;
	}
	for (int r = 0; r < a->nranks && r < a->rank_bound; r++)
		if (a->ranks[r].rank >= 0 && moves[r])
			a->ranks[r].ns += (uint64_t)ar_clocks_delta(a->clocks, r, a->ranks[r].ns);
	free(moves);
	return 0;
}

int ar_sync_points(const ar_archive *a, int rank, const struct ar_sync **out)
{
	return ar_clocks_points(a->clocks, rank, out);
}

size_t ar_clocks_note(const ar_archive *a, char *buf, size_t len)
{
	if (!a->moved) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	double ms = (double)a->most_moved / 1e6;
	return (size_t)snprintf(buf, len, "clocks: %d rank%s moved onto rank 0's host's clock by up to %.3f ms, "
				"from %d points measured by MPI ping-pong", a->moved, a->moved == 1 ? "" : "s", ms,
				a->points);
}

static int read_sites(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	path_of(p, sizeof(p), dir, "sites");
	if (!(a->sites = ar_sites_create()))
		return sys_fail(err, errlen, -ENOMEM, "%s", p);
	return a->version >= 3 ? ar_sites_read(a->sites, p, a->nthreads, err, errlen) : 0;
}

static int index_threads(ar_archive *a);

/*
 * What a reader may allocate by rank is bounded by what the archive
 * holds: a rank is below the number of its threads or of MPI_COMM_WORLD's
 * members (a recording of some hosts' ranks has fewer threads than the
 * job has ranks), each of which the files spell out.  A rank beyond is
 * refused with its line, before anything is sized by it.
 */
static int check_ranks(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	uint32_t world = 0;
	for (int i = 0; i < a->ncomms; i++)
		if (a->comms[i].flags & ES_COMMS_WORLD)
			world = a->comms[i].size[0] > world ? a->comms[i].size[0] : world;
	a->rank_bound = (int)world > a->nthreads ? (int)world : a->nthreads;
	char p[4200];
	path_of(p, sizeof(p), dir, "threads");
	for (int t = 0; t < a->nthreads; t++)
		if (a->threads[t].rank >= a->rank_bound)
			return fail(err, errlen, -EINVAL, "%s:%d: rank %d (%s), but the archive holds %d threads "
				    "and MPI_COMM_WORLD %u ranks: expected a rank below %d", p, t + 1,
				    a->threads[t].rank, a->threads[t].process, a->nthreads, world, a->rank_bound);
	path_of(p, sizeof(p), dir, "INFO");
	for (int i = 0; i < a->ndied; i++)
		if (a->died[i].rank >= a->rank_bound)
			return fail(err, errlen, -EINVAL, "%s: died: rank %d, but the archive's ranks are below %d",
				    p, a->died[i].rank, a->rank_bound);
	return 0;
}

int ar_open(const char *dir, ar_archive **out, char *err, size_t errlen)
{
	*out = NULL;
	ar_archive *a = calloc(1, sizeof(*a));
	if (!a)
		return sys_fail(err, errlen, -ENOMEM, "%s", dir);
	int rc;
	/* events after threads: without INFO, a record is taken only on a known thread */
	if ((rc = read_info(a, dir, err, errlen)) || (rc = read_threads(a, dir, err, errlen)) ||
	    (rc = read_comms(a, dir, err, errlen)) || (rc = check_ranks(a, dir, err, errlen)) ||
	    (rc = map_events(a, dir, err, errlen)) ||
	    (rc = read_sites(a, dir, err, errlen)) || (rc = read_ranks(a, dir, err, errlen)) ||
	    (rc = read_names(dir, "regions", a->rank_bound, &a->regions, &a->nregions, err, errlen)) ||
	    (rc = read_names(dir, "files", a->rank_bound, &a->files, &a->nfiles, err, errlen)) ||
	    (rc = read_clocks(a, dir, err, errlen))) {
		ar_close(a);
		return rc;
	}
	a->first_ns = UINT64_MAX;
	for (size_t i = 0; i < a->nevents; i++) {
		if (ar_events(a)[i].t.start < a->first_ns)
			a->first_ns = ar_events(a)[i].t.start;
		/* the converters index tables by op code: below 256, as collectors.h's are */
		if (es_op_code(ar_events(a)[i].t.op) >= 256) {
			fail(err, errlen, -EINVAL, "%s/events: event %zu has op %u, which no collector writes", dir,
			     i, (unsigned)ar_events(a)[i].t.op);
			ar_close(a);
			return -EINVAL;
		}
		if (ar_events(a)[i].thread >= (uint32_t)a->nthreads) {
			fail(err, errlen, -EINVAL, "%s/events: event %zu is on thread %u of %d%s", dir, i,
			     ar_events(a)[i].thread, a->nthreads, a->absent & P_THREADS ? " (no threads file)" : "");
			ar_close(a);
			return -EINVAL;
		}
	}
	if (index_threads(a)) {
		ar_close(a);
		return sys_fail(err, errlen, -ENOMEM, "%s", dir);
	}
	*out = a;
	return 0;
}

/* Each thread's events found at once (a counting sort by thread): every
 * reader then goes through a thread's events alone, in time linear in
 * them however many threads there are. */
static int index_threads(ar_archive *a)
{
	const struct ar_event *ev = ar_events(a);
	a->first = calloc((size_t)a->nthreads + 2, sizeof(*a->first));
	a->by_thread = malloc(sizeof(*a->by_thread) * (a->nevents + 1));
	if (!a->first || !a->by_thread)
		return -ENOMEM;
	for (size_t i = 0; i < a->nevents; i++)
		a->first[ev[i].thread + 1]++;
	for (int t = 0; t < a->nthreads; t++)
		a->first[t + 1] += a->first[t];
	size_t *next = malloc(sizeof(*next) * ((size_t)a->nthreads + 1));
	if (!next)
		return -ENOMEM;
	memcpy(next, a->first, sizeof(*next) * ((size_t)a->nthreads + 1));
	for (size_t i = 0; i < a->nevents; i++)
		a->by_thread[next[ev[i].thread]++] = (uint32_t)i;
	free(next);
	return 0;
}

size_t ar_thread_events(const ar_archive *a, int t, const uint32_t **idx)
{
	*idx = a->by_thread + a->first[t];
	return a->first[t + 1] - a->first[t];
}

void ar_close(ar_archive *a)
{
	if (!a)
		return;
	if (a->map)
		munmap(a->map, a->maplen);
	free_comms(a->comms, a->ncomms);
	ar_sites_destroy(a->sites);
	free(a->ranks);
	free(a->regions), free(a->files);
	free(a->by_thread), free(a->first);
	free(a->threads);
	free(a->died);
	ar_clocks_free(a->clocks);
	free(a);
}

static const char *name_of(const struct region *v, int n, int rank, uint32_t id)
{
	struct region key = { .rank = rank, .id = id };
	const struct region *g = n ? bsearch(&key, v, (size_t)n, sizeof(key), by_rank_id) : NULL;
	return g ? g->name : NULL;
}

const char *ar_region_name(const ar_archive *a, int rank, uint32_t id)
{
	return name_of(a->regions, a->nregions, rank, id);
}

const char *ar_file_name(const ar_archive *a, int rank, uint32_t id)
{
	return name_of(a->files, a->nfiles, rank, id);
}

const struct ar_rank *ar_rank(const ar_archive *a, int r)
{
	return r >= 0 && r < a->nranks && a->ranks[r].rank == r ? &a->ranks[r] : NULL;
}

const struct ar_site *ar_site(const ar_archive *a, int thread, int site)
{
	return site ? ar_sites_find(a->sites, thread, site) : NULL;
}

int ar_nsites(const ar_archive *a)
{
	return ar_sites_count(a->sites);
}

const char *ar_job(const ar_archive *a) { return a->job; }
size_t ar_nevents(const ar_archive *a) { return a->nevents; }
uint64_t ar_lost(const ar_archive *a) { return a->lost; }
int ar_nthreads(const ar_archive *a) { return a->nthreads; }
const struct ar_thread *ar_thread(const ar_archive *a, int i) { return &a->threads[i]; }
int ar_ncomms(const ar_archive *a) { return a->ncomms; }
const struct ar_comm *ar_comm(const ar_archive *a, int i)
{
	return i >= 0 && i < a->ncomms ? &a->comms[i] : NULL;
}

int ar_comm_rank(const struct ar_comm *c, int world)
{
	if (c && c->rank_of)
		return world >= 0 && (uint32_t)world < c->span ? c->rank_of[world] : -1;
	for (int s = 0; c && s < 2; s++)
		for (uint32_t i = 0; i < c->size[s]; i++)
			if (c->members[s][i] == world)
				return (int)i;
	return -1;
}

/* A communicator's ranks by world rank, so that a message's peer is found
 * at once (the first group's rank first, as the scan above finds it). */
static int index_comm(struct ar_comm *c)
{
	int32_t top = -1;
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < c->size[s]; i++)
			top = c->members[s][i] > top ? c->members[s][i] : top;
	c->span = (uint32_t)(top + 1);
	if (!(c->rank_of = malloc(sizeof(int32_t) * (c->span + 1))))
		return -ENOMEM;
	for (uint32_t w = 0; w < c->span; w++)
		c->rank_of[w] = -1;
	for (int s = 1; s >= 0; s--) /* the first group wins where both hold a rank */
		for (uint32_t i = c->size[s]; i-- > 0;)
			if (c->members[s][i] >= 0)
				c->rank_of[c->members[s][i]] = (int32_t)i;
	return 0;
}

/* Seconds from the archive's first stamp to ns. */
static double into(const ar_archive *a, uint64_t ns)
{
	return a->first_ns == UINT64_MAX || ns < a->first_ns ? 0 : (double)(ns - a->first_ns) / 1e9;
}

size_t ar_partial_note(const ar_archive *a, const char *dir, char *buf, size_t len)
{
	if (!a->partial)
		return (size_t)snprintf(buf, len, "%s", "");
	if (!a->nevents)
		return (size_t)snprintf(buf, len, "%s was cut off before it recorded anything: its recorder "
					"stopped (killed, or its disk filled) %s; read as empty (esrecord --repair "
					"%s finishes it%s)", dir, a->no_info ? "before it wrote its INFO"
					: a->until_ns ? "before a checkpoint counted an event"
					: "before it attached to its job", dir,
					a->until_ns || a->no_info ? ", with what was written after" : "");
	if (a->no_info)
		return (size_t)snprintf(buf, len, "%s has no INFO: its recorder stopped (killed) before it "
					"wrote it; read as the %zu whole events its files hold, how many were lost "
					"not known (esrecord --repair %s finishes it)", dir, a->nevents, dir);
	return (size_t)snprintf(buf, len, "%s is incomplete: its recorder stopped without finishing "
				"it (killed, or its disk filled); read as its last checkpoint left it, "
				"%zu events to %.1f s into the run (esrecord --repair %s finishes it)",
				dir, a->nevents, into(a, a->until_ns), dir);
}

size_t ar_deaths_note(const ar_archive *a, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		*buf = 0;
	for (int i = 0; i < a->ndied && n < len; i++) {
		const struct ar_death *d = &a->died[i];
		char sig[64] = "";
		if (d->signal)
			snprintf(sig, sizeof(sig), " of signal %d (SIG%s)", d->signal, sigabbrev_np(d->signal) ?
				 sigabbrev_np(d->signal) : "?");
		n += (size_t)snprintf(buf + n, len - n, "%srank %d (pid %d) died%s: its last event ended "
				      "%.3f s into the run, found gone at %.3f s", n ? "; " : "",
				      d->rank, d->pid, sig, into(a, d->last_ns), into(a, d->seen_ns));
	}
	return n;
}

size_t ar_missing_note(const ar_archive *a, char *buf, size_t len)
{
	int ranks = 0, unsaid = 0, comms = 0;
	for (int i = 0; i < a->nthreads; i++) {
		int r = a->threads[i].rank, first = 1;
		for (int j = 0; j < i && first; j++)
			first = a->threads[j].rank != r;
		if (r >= 0 && first)
			ranks++, unsaid += !ar_rank(a, r);
	}
	uint16_t seen[64];
	int nseen = 0;
	const struct ar_event *ev = ar_events(a);
	for (size_t i = 0; i < a->nevents && ranks; i++) {
		uint16_t c = ev[i].t.comm;
		/* an MPI rank's: a PATHS collector's comm is no communicator */
		bool known = c == ES_COMM_NONE || ev[i].thread >= (uint32_t)a->nthreads ||
			     a->threads[ev[i].thread].rank < 0 || ar_comm(a, c);
		for (int k = 0; k < nseen && !known; k++)
			known = seen[k] == c;
		if (!known) {
			comms++;
			if (nseen < 64)
				seen[nseen++] = c;
			else
				break; /* enough to say so */
		}
	}
	if (len)
		*buf = 0;
	if (!unsaid && !comms)
		return 0;
	return (size_t)snprintf(buf, len, "the archive lacks what its job said of %d of its %d ranks and of %s%d "
				"communicator%s its events name (its recorder %s): their calls are here, their "
				"processes, messages and collectives are not", unsaid, ranks,
				comms >= 64 ? "at least " : "", comms, comms == 1 ? "" : "s",
				a->partial || a->repaired ? "stopped before it wrote them, or could not read them"
					   : "could not read them");
}

void ar_print_state(const ar_archive *a, const char *prog, const char *dir, FILE *f)
{
	char buf[4800];
	bool empty = a->partial && !a->nevents; /* that first: nothing else matters as much */
	if (empty && ar_partial_note(a, dir, buf, sizeof(buf)))
		fprintf(f, "%s: %s\n", prog, buf);
	if (ar_missing_note(a, buf, sizeof(buf)))
		fprintf(f, "%s: %s: %s\n", prog, dir, buf);
	if (!empty && ar_partial_note(a, dir, buf, sizeof(buf)))
		fprintf(f, "%s: %s\n", prog, buf);
	if (ar_deaths_note(a, buf, sizeof(buf)))
		fprintf(f, "%s: %s: %s\n", prog, dir, buf);
	if (ar_clocks_note(a, buf, sizeof(buf)))
		fprintf(f, "%s: %s\n", prog, buf);
}

bool ar_partial(const ar_archive *a, uint64_t *until_ns)
{
	if (until_ns)
		*until_ns = a->until_ns;
	return a->partial;
}

int ar_ndied(const ar_archive *a)
{
	return a->ndied;
}

const struct ar_death *ar_died(const ar_archive *a, int i)
{
	return i >= 0 && i < a->ndied ? &a->died[i] : NULL;
}

const struct ar_event *ar_events(const ar_archive *a)
{
	static const struct ar_event none[1];
	return a->map ? (const struct ar_event *)((const char *)a->map + 8) : none;
}


/* --- repairing ----------------------------------------------------------------- */

/* A record past the checkpoint (or, without INFO, any) that the recorder
 * wrote whole: an op a collector writes, on a thread the archive knows,
 * stamps in order.  The block padding after the last is zeros, and fails;
 * so does a record a kill tore (its tail zeros: no op).  A communicator no
 * checkpoint described does not make it fail: the record is kept (nothing
 * written is lost), and readers say what the archive lacks of it. */
static bool salvageable(const ar_archive *a, const unsigned char *r)
{
	struct ar_event e;
	memcpy(&e.t, r, sizeof(e.t));
	memcpy(&e.thread, r + sizeof(e.t), sizeof(e.thread));
	unsigned code = es_op_code(e.t.op);
	return e.t.start && e.t.end >= e.t.start && code && code < 256 && e.thread < (uint32_t)a->nthreads;
}

/* An events file of no record, for one a kill left without its header. */
static int write_header(const char *p, int version, char *err, size_t errlen)
{
	unsigned char h[8] = "ESAR";
	uint32_t v = (uint32_t)version;
	memcpy(h + 4, &v, 4);
	int fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? -errno : write_all(fd, h, sizeof(h), 0);
	if (fd >= 0 && !rc && (ftruncate(fd, sizeof(h)) || fsync(fd)))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc ? sys_fail(err, errlen, rc, "%s", p) : 0;
}

/* The bytes of events from off on, before they are cut: kept in
 * events.cut when any past the first record's worth is not zero (records
 * repair could not place, on a thread no file names), so that a repair
 * destroys nothing written; a record torn at the end (the rest of it was
 * never written) and a block's padding are not kept.  *saved: how many. */
static int keep_cut(const char *dir, const char *events, off_t off, uint64_t *saved, char *err, size_t errlen)
{
	char p[4200];
	unsigned char buf[65536];
	*saved = 0;
	int fd = open(events, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sys_fail(err, errlen, -errno, "%s", events);
	bool data = false;
	ssize_t k;
	for (off_t at = off + AR_RECORD; !data && (k = pread(fd, buf, sizeof(buf), at)) > 0; at += k)
		for (ssize_t i = 0; i < k && !data; i++)
			data = buf[i] != 0;
	FILE *f = NULL;
	path_of(p, sizeof(p), dir, "events.cut");
	if (data && !(f = ps_fopen_out(p, 0600))) {
		int rc = -errno;
		close(fd);
		return sys_fail(err, errlen, rc, "%s", p);
	}
	for (off_t at = off; f && (k = pread(fd, buf, sizeof(buf), at)) > 0; at += k)
		*saved += fwrite(buf, 1, (size_t)k, f);
	close(fd);
	int rc = f ? close_file(f, true) : 0;
	return rc ? sys_fail(err, errlen, rc, "%s", p) : 0;
}

/* The records after the checkpoint's that can be kept. */
static int count_after(const ar_archive *a, const char *p, uint64_t *after)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char r[AR_RECORD];
	off_t off = 8 + (off_t)a->nevents * AR_RECORD;
	*after = 0;
	while (pread(fd, r, AR_RECORD, off) == AR_RECORD && salvageable(a, r)) {
		(*after)++;
		off += AR_RECORD;
	}
	close(fd);
	return 0;
}

/* INFO again, whole: its lines but events, whole and until, then ended;
 * without one (a), what the archive's files say, the counts not known. */
static int rewrite_info(const char *dir, const ar_archive *a, uint64_t events, const char *ended, char *err,
			size_t errlen)
{
	char p[4200], line[512];
	path_of(p, sizeof(p), dir, "INFO");
	int rc = 0;
	FILE *in = a->no_info ? NULL : open_in(p, err, errlen, &rc);
	if (!in && !a->no_info)
		return rc;
	struct part pt;
	if ((rc = part_open(dir, "INFO", &pt, err, errlen))) {
		if (in)
			fclose(in);
		return rc;
	}
	while (in && fgets(line, sizeof(line), in))
		if (strncmp(line, "events:", 7) && strncmp(line, "whole:", 6) &&
		    strncmp(line, "until:", 6) && strncmp(line, "ended:", 6))
			fputs(line, pt.f);
	if (in)
		fclose(in);
	else
		fprintf(pt.f, "archive: %d\njob: %s\nlost: not known\nbefore_attach: not known\nthreads: %d\n"
			"clock: ns, CLOCK_MONOTONIC\n", a->version, a->job, a->nthreads);
	fprintf(pt.f, "events: %llu\nwhole: repaired\nended: %s\n", (unsigned long long)events, ended);
	return part_close(&pt, true, err, errlen);
}

int ar_repair(const char *dir, uint64_t *kept, uint64_t *after, char *err, size_t errlen)
{
	ar_archive *a;
	int rc = ar_open(dir, &a, err, errlen);
	if (rc)
		return rc;
	if (!a->partial) {
		ar_close(a);
		return fail(err, errlen, -EALREADY, "%s: whole already: nothing to repair", dir);
	}
	char p[4200], ended[512];
	path_of(p, sizeof(p), dir, "events");
	if ((rc = count_after(a, p, after))) {
		ar_close(a);
		return sys_fail(err, errlen, rc, "%s", p);
	}
	*kept = a->nevents + *after;
	if (a->no_info)
		snprintf(ended, sizeof(ended), "its recorder stopped before it wrote INFO; repaired: the %llu "
			 "whole events its files held", (unsigned long long)*kept);
	else
		snprintf(ended, sizeof(ended), "its recorder stopped without finishing it (killed, or its "
			 "disk filled); repaired: %zu events to its last checkpoint, %.1f s into the run, and "
			 "%llu written after it", a->nevents, into(a, a->until_ns), (unsigned long long)*after);
	/* cut to the records kept (the mapping above is not read again), what
	 * is cut kept aside unless it is padding */
	struct stat st;
	off_t want = 8 + (off_t)*kept * AR_RECORD;
	uint64_t saved = 0;
	if (stat(p, &st))
		rc = sys_fail(err, errlen, -errno, "%s", p);
	else if (st.st_size < 8) /* a kill left it without its header: it holds none */
		rc = write_header(p, a->version, err, errlen);
	else if (!(rc = keep_cut(dir, p, want, &saved, err, errlen)) && truncate(p, want))
		rc = sys_fail(err, errlen, -errno, "%s", p);
	if (saved) {
		size_t n = strlen(ended);
		snprintf(ended + n, sizeof(ended) - n, "; %llu bytes after them that are no whole record on a "
			 "known thread kept in events.cut", (unsigned long long)saved);
	}
	if (!rc)
		rc = rewrite_info(dir, a, *kept, ended, err, errlen);
	ar_close(a);
	return rc;
}
