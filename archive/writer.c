/* writer.c - writes EventSpace archives (archive.h): events as recorded, then threads, communicators, sites, ranks, names, clocks, INFO last, at each checkpoint and at the end. */
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
#include "archive/archive.h"
#include "archive/sites.h"

/* Records are written and mapped as they lie in memory. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "archives are little-endian");
_Static_assert(sizeof(struct ar_event) == AR_RECORD, "an event record is 40 bytes");

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
	ar__path(p, sizeof(p), w->dir, "events");
	w->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); /* never an old file, nor a link */
	if (w->fd < 0)
		return errno == EEXIST ? ar__fail(err, errlen, -EEXIST, "%s: already holds an archive (events)", w->dir)
				       : ar__sys_fail(err, errlen, -errno, "%s", p);
	int rc = ar__write_all(w->fd, w->buf, w->len, 0); /* kept in buf too: the first block is written again */
	if (rc)
		return ar__sys_fail(err, errlen, rc, "%s", p);
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
	int rc = base_mkdir_out(dir, 0700); /* a trace is its owner's, as its segments are */
	if (rc)
		return ar__sys_fail(err, errlen, rc, "%s", dir);
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	ar__path(p, sizeof(p), dir, "events");
	struct stat st;
	if (lstat(p, &st) == 0)
		return ar__fail(err, errlen, -EEXIST, "%s: already holds an archive (events)", dir);
	/* an INFO left from an earlier archive would make this one look whole */
	ar__path(p, sizeof(p), dir, "INFO");
	if (unlink(p) && errno != ENOENT)
		return ar__sys_fail(err, errlen, -errno, "%s", p);
	if ((rc = write_skeleton(w, err, errlen)))
		undo_skeleton(w, made);
	return rc;
}

int ar_create(const char *dir, const char *job, ar_writer **out, char *err, size_t errlen)
{
	*out = NULL;
	if (strlen(dir) >= sizeof(((ar_writer *)0)->dir) - 32)
		return ar__sys_fail(err, errlen, -ENAMETOOLONG, "%s", dir);
	ar_writer *w = writer_new(job);
	if (!w)
		return ar__sys_fail(err, errlen, -ENOMEM, "%s", dir);
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
	int rc = out ? ar__write_all(w->fd, w->buf, out, w->off) : 0;
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
	return out ? ar__write_all(w->fd, w->buf, out, w->off) : 0;
}

int ar_write_run(ar_writer *w, const struct es_trace *t, size_t n, uint32_t thread)
{
	BASE_INVARIANT("every record is on a thread named before it (invariant 5)",
		     !n || ((int)thread < w->nthreads && w->threads[thread].name[0]));
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
	BASE_INVARIANT("buf holds the bytes after the first off written out: the header and a record per event",
		     w->off + w->len == 8 + (uint64_t)AR_RECORD * w->written);
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

static int write_threads(ar_writer *w, char *err, size_t errlen)
{
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "threads", &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < w->nthreads; i++)
		fprintf(f, "%d\t%s\t%s\n", i, w->threads[i].process[0] ? w->threads[i].process : "-",
			w->threads[i].name[0] ? w->threads[i].name : "-");
	return ar__part_close(&pt, w->sync, err, errlen);
}

static int write_comms(ar_writer *w, char *err, size_t errlen)
{
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "comms", &pt, err, errlen);
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
	return ar__part_close(&pt, w->sync, err, errlen);
}

int ar_set_site(ar_writer *w, int thread, int site, const struct ar_frame *frames, int n)
{
	if (!w->sites && !(w->sites = ar_sites_create()))
		return -ENOMEM;
	w->dirty |= P_SITES;
	return ar_sites_add(w->sites, thread, site, frames, n);
}

int ar_set_region(ar_writer *w, int rank, uint32_t id, const char *name)
{
	w->dirty |= P_REGIONS;
	return ar__add_region(&w->regions, &w->nregions, rank, id, name);
}

int ar_set_file(ar_writer *w, int rank, uint32_t id, const char *name)
{
	w->dirty |= P_FILES;
	return ar__add_region(&w->files, &w->nfiles, rank, id, name);
}

/* regions or files: RANK NUMBER NAME lines */
static int write_names(ar_writer *w, const char *file, const struct region *v, int n, char *err, size_t errlen)
{
	struct ar__part pt;
	int rc = ar__part_open(w->dir, file, &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < n; i++)
		fprintf(f, "%d\t%u\t%s\n", v[i].rank, v[i].id, v[i].name);
	return ar__part_close(&pt, w->sync, err, errlen);
}

int ar_set_rank(ar_writer *w, const struct ar_rank *r)
{
	int rc = ar__hold_rank(&w->ranks, &w->nranks, r->rank);
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
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "ranks", &pt, err, errlen);
	if (rc)
		return rc;
	FILE *f = pt.f;
	for (int i = 0; i < w->nranks; i++) {
		const struct ar_rank *r = &w->ranks[i];
		if (r->rank >= 0)
			fprintf(f, "%d\t%s\t%d\t%llu\t%llu\t%s\n", r->rank, r->host[0] ? r->host : "-", r->pid,
				(unsigned long long)r->wall_ns, (unsigned long long)r->ns, r->cmd[0] ? r->cmd : "-");
	}
	return ar__part_close(&pt, w->sync, err, errlen);
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
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "clocks", &pt, err, errlen);
	if (rc)
		return rc;
	ar_clocks_print(w->clocks, pt.f);
	return ar__part_close(&pt, w->sync, err, errlen);
}

static int write_sites(ar_writer *w, char *err, size_t errlen)
{
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "sites", &pt, err, errlen);
	if (rc)
		return rc;
	if (ar_sites_count(w->sites) && (rc = ar_sites_print(w->sites, pt.f))) {
		fclose(pt.f);
		unlink(pt.tmp);
		return ar__fail(err, errlen, rc, "%s: a site was given twice", pt.path);
	}
	return ar__part_close(&pt, w->sync, err, errlen);
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
	ar__free_comms(w->comms, w->ncomms);
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
	struct ar__part pt;
	int rc = ar__part_open(w->dir, "INFO", &pt, err, errlen);
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
	return ar__part_close(&pt, w->sync, err, errlen);
}

int ar_checkpoint(ar_writer *w, const struct ar_end *end, char *err, size_t errlen)
{
	int rc = flush_events(w, false);
	if (!rc)
		rc = write_tail(w);
	if (rc) {
		char p[4200];
		ar__path(p, sizeof(p), w->dir, "events");
		return ar__sys_fail(err, errlen, rc, "%s", p);
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
		ar__path(p, sizeof(p), w->dir, "events");
		ar__sys_fail(err, errlen, rc, "%s", p);
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
