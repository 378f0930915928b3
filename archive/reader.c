/* reader.c - opens EventSpace archives (archive.h) whole, partial or cut off, and says what they lack; each rank's stamps moved onto rank 0's host's clock. */
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
		return ar__sys_fail(err, errlen, -errno, "%s", dir);
	if (!S_ISDIR(st.st_mode))
		return ar__fail(err, errlen, -ENOTDIR, "%s: not an archive (a directory)", dir);
	ar__path(p, sizeof(p), dir, "events");
	if (lstat(p, &st))
		return ar__fail(err, errlen, -ENOENT, "%s: no archive: neither INFO nor events (the files "
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
	ar__path(p, sizeof(p), dir, "INFO");
	int rc = 0;
	FILE *f = ar__open_in(p, err, errlen, &rc);
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
				return ar__fail(err, errlen, -EINVAL, "%s:%d: a job name of at most %d characters",
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
				return rc == -ENOMEM ? ar__sys_fail(err, errlen, rc, "%s", p)
						     : ar__fail(err, errlen, rc, "%s:%d: expected died: RANK PID "
							    "LAST_NS SEEN_NS", p, lineno);
			}
		}
		else if (!strchr(line, ':')) {
			fclose(f);
			return ar__fail(err, errlen, -EINVAL, "%s:%d: expected KEY: VALUE", p, lineno);
		}
	}
	fclose(f);
	if (version == 1)
		return ar__fail(err, errlen, -EINVAL, "%s:1: archive: 1, from EventSpace before 0.14, whose "
			    "tuples named communicators otherwise: read it with that version", p);
	if (version != AR_VERSION && version != 2) /* 2 has no sites: none is found */
		return ar__fail(err, errlen, -EINVAL, "%s:1: expected archive: %d, got version %d", p,
			    AR_VERSION, version);
	a->version = version;
	if (!have_events)
		return ar__fail(err, errlen, -EINVAL, "%s: expected an events: line", p);
	return 0;
}

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
		return ar__fail(err, errlen, -EINVAL, "%s: expected ESAR version %d%s", p, a->version,
			    a->no_info ? "" : ", as INFO says");
	if (a->no_info) {
		size_t n = 0;
		while (8 + (n + 1) * AR_RECORD <= len && ar__salvageable(a, m + 8 + n * AR_RECORD))
			n++;
		a->declared = n;
	} else if ((len - 8) / AR_RECORD != a->declared) {
		return ar__fail(err, errlen, -EINVAL, "%s: %zu events, INFO says %llu", p, (len - 8) / AR_RECORD,
			    (unsigned long long)a->declared);
	}
	a->nevents = (size_t)a->declared;
	return 0;
}

static int map_events(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	ar__path(p, sizeof(p), dir, "events");
	int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not hold us */
	if (fd < 0)
		return ar__sys_fail(err, errlen, -errno, "%s", p);
	struct stat st;
	if (fstat(fd, &st)) {
		int rc = -errno;
		close(fd);
		return ar__sys_fail(err, errlen, rc, "%s", p);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return ar__fail(err, errlen, -EINVAL, "%s: not a regular file", p);
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
		return ar__fail(err, errlen, -EINVAL, "%s: %zu bytes: fewer than the %llu events its INFO "
			    "counts", p, len, (unsigned long long)a->declared);
	}
	if (len < 8 || (!a->no_info && (len - 8) % AR_RECORD)) {
		close(fd);
		return ar__fail(err, errlen, -EINVAL, "%s: %zu bytes: expected the 8-byte header and "
			    "%d-byte records", p, len, AR_RECORD);
	}
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return ar__sys_fail(err, errlen, -errno, "%s", p);
	a->map = m;
	a->maplen = len;
	return take_events(a, p, m, len, err, errlen);
}

static int read_threads(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200], line[600];
	ar__path(p, sizeof(p), dir, "threads");
	int rc = 0;
	FILE *f = ar__open_optional(p, err, errlen, &rc);
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
			rc = ar__fail(err, errlen, -EINVAL, "%s:%d: expected %d TAB PROCESS TAB NAME", p, lineno,
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
		enum es_space_kind kind;
		int r;
		t->rank = es_space_of(seg ? seg + 1 : t->process, NULL, &kind, &r) &&
			  kind == ES_SPACE_RANK ? r : -1;
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
	ar__path(p, sizeof(p), dir, "comms");
	int rc = 0;
	FILE *f = ar__open_optional(p, err, errlen, &rc);
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
			ar__fail(err, errlen, rc, "%s:%d: expected NUMBER ID world|comm|window|inter SIZE RANKS... "
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
	    ar__hold_rank(&a->ranks, &a->nranks, (int)r))
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
	ar__path(p, sizeof(p), dir, "ranks");
	int rc = 0;
	FILE *f = ar__open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	for (int lineno = 1; fgets(line, sizeof(line), f); lineno++)
		if (read_rank_line(a, line)) {
			rc = ar__fail(err, errlen, -EINVAL, "%s:%d: expected RANK HOST PID WALL_NS NS COMMAND, "
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
	ar__path(p, sizeof(p), dir, file);
	int rc = 0;
	FILE *f = ar__open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	for (int lineno = 1; !rc && fgets(line, sizeof(line), f); lineno++) {
		line[strcspn(line, "\n")] = 0;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL, *e1, *e2;
		long r = strtol(line, &e1, 10);
		unsigned long id = t1 ? strtoul(t1 + 1, &e2, 10) : 0;
		if (!t2 || e1 != t1 || e2 != t2 || r < 0 || r >= bound || !id || id > UINT32_MAX || !t2[1])
			rc = ar__fail(err, errlen, -EINVAL, "%s:%d: expected RANK NUMBER NAME, tab-separated (RANK "
				  "below %d, NUMBER from 1)", p, lineno, bound);
		else
			rc = ar__add_region(v, nv, (int)r, (uint32_t)id, t2 + 1);
	}
	fclose(f);
	if (!rc && *nv)
		qsort(*v, (size_t)*nv, sizeof(**v), ar__by_rank_id);
	return rc;
}

/* The clocks file, when there is one: then each rank's stamps go onto
 * rank 0's host's clock (clocks.c).  The events are the file's, mapped
 * privately: a moved page is the reader's copy, the file stays as recorded. */
static int read_clocks(ar_archive *a, const char *dir, char *err, size_t errlen)
{
	char p[4200];
	ar__path(p, sizeof(p), dir, "clocks");
	int rc = 0;
	FILE *f = ar__open_optional(p, err, errlen, &rc);
	if (!f)
		return rc;
	rc = ar_clocks_read(f, p, a->rank_bound, &a->clocks, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	for (int r = 0; r < a->rank_bound; r++) {
		const struct ar_sync *pts;
		if (ar_clocks_moves(a->clocks, r)) {
			a->moved++;
			a->points += ar_clocks_points(a->clocks, r, &pts);
		}
	}
	if (a->moved && a->nevents && mprotect(a->map, a->maplen, PROT_READ | PROT_WRITE))
		return ar__sys_fail(err, errlen, -errno, "%s/events", dir);
	struct ar_event *ev = a->moved && a->nevents ? (struct ar_event *)((char *)a->map + 8) : NULL;
	for (size_t i = 0; ev && i < a->nevents; i++) {
		int r = ev[i].thread < (uint32_t)a->nthreads ? a->threads[ev[i].thread].rank : -1;
		if (!ar_clocks_moves(a->clocks, r))
			continue;
		int64_t d0 = ar_clocks_delta(a->clocks, r, ev[i].t.start), d1 = ar_clocks_delta(a->clocks, r, ev[i].t.end);
		ev[i].t.start += (uint64_t)d0;
		ev[i].t.end += (uint64_t)d1;
		int64_t most = d0 < 0 ? -d0 : d0; /* within 1.5 * AR_CLOCK_SPAN: no overflow */
		if (most > a->most_moved)
			a->most_moved = most;
	}
	for (int r = 0; r < a->nranks && r < a->rank_bound; r++)
		if (a->ranks[r].rank >= 0 && ar_clocks_moves(a->clocks, r))
			a->ranks[r].ns += (uint64_t)ar_clocks_delta(a->clocks, r, a->ranks[r].ns);
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
	ar__path(p, sizeof(p), dir, "sites");
	if (!(a->sites = ar_sites_create()))
		return ar__sys_fail(err, errlen, -ENOMEM, "%s", p);
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
	ar__path(p, sizeof(p), dir, "threads");
	for (int t = 0; t < a->nthreads; t++)
		if (a->threads[t].rank >= a->rank_bound)
			return ar__fail(err, errlen, -EINVAL, "%s:%d: rank %d (%s), but the archive holds %d threads "
				    "and MPI_COMM_WORLD %u ranks: expected a rank below %d", p, t + 1,
				    a->threads[t].rank, a->threads[t].process, a->nthreads, world, a->rank_bound);
	ar__path(p, sizeof(p), dir, "INFO");
	for (int i = 0; i < a->ndied; i++)
		if (a->died[i].rank >= a->rank_bound)
			return ar__fail(err, errlen, -EINVAL, "%s: died: rank %d, but the archive's ranks are below %d",
				    p, a->died[i].rank, a->rank_bound);
	return 0;
}

int ar_open(const char *dir, ar_archive **out, char *err, size_t errlen)
{
	*out = NULL;
	ar_archive *a = calloc(1, sizeof(*a));
	if (!a)
		return ar__sys_fail(err, errlen, -ENOMEM, "%s", dir);
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
			ar__fail(err, errlen, -EINVAL, "%s/events: event %zu has op %u, which no collector writes", dir,
			     i, (unsigned)ar_events(a)[i].t.op);
			ar_close(a);
			return -EINVAL;
		}
		if (ar_events(a)[i].thread >= (uint32_t)a->nthreads) {
			ar__fail(err, errlen, -EINVAL, "%s/events: event %zu is on thread %u of %d%s", dir, i,
			     ar_events(a)[i].thread, a->nthreads, a->absent & P_THREADS ? " (no threads file)" : "");
			ar_close(a);
			return -EINVAL;
		}
	}
	if (index_threads(a)) {
		ar_close(a);
		return ar__sys_fail(err, errlen, -ENOMEM, "%s", dir);
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
	ar__free_comms(a->comms, a->ncomms);
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
	const struct region *g = n ? bsearch(&key, v, (size_t)n, sizeof(key), ar__by_rank_id) : NULL;
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
	if (c && c->by_world) {
		uint64_t key = (uint64_t)(uint32_t)world << 33;
		uint32_t lo = 0, hi = c->nby; /* the first at or after key */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (c->by_world[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		return world >= 0 && lo < c->nby && c->by_world[lo] >> 33 == (uint64_t)world
			       ? (int)(uint32_t)c->by_world[lo] : -1;
	}
	for (int s = 0; c && s < 2; s++)
		for (uint32_t i = 0; i < c->size[s]; i++)
			if (c->members[s][i] == world)
				return (int)i;
	return -1;
}

static int by_key(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* A communicator's ranks by world rank, so that a message's peer is found
 * at once: the first group's rank first, the lowest of repeats, as the
 * scan above finds it. */
static int index_comm(struct ar_comm *c)
{
	if (!(c->by_world = malloc(sizeof(uint64_t) * ((size_t)c->size[0] + c->size[1] + 1))))
		return -ENOMEM;
	for (int s = 0; s < 2; s++)
		for (uint32_t i = 0; i < c->size[s]; i++)
			if (c->members[s][i] >= 0)
				c->by_world[c->nby++] = (uint64_t)c->members[s][i] << 33 | (uint64_t)s << 32 | i;
	qsort(c->by_world, c->nby, sizeof(uint64_t), by_key);
	return 0;
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
				dir, a->nevents, ar__into(a, a->until_ns), dir);
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
				      d->rank, d->pid, sig, ar__into(a, d->last_ns), ar__into(a, d->seen_ns));
	}
	return n;
}

size_t ar_missing_note(const ar_archive *a, char *buf, size_t len)
{
	int ranks = 0, unsaid = 0, comms = 0;
	/* each rank once: every rank is below rank_bound (check_ranks) */
	unsigned char *seen_rank = calloc((size_t)a->rank_bound / 8 + 1, 1);
	for (int i = 0; i < a->nthreads && seen_rank; i++) {
		int r = a->threads[i].rank;
		if (r < 0 || seen_rank[r / 8] & 1u << (r % 8))
			continue;
		seen_rank[r / 8] |= (unsigned char)(1u << (r % 8));
		ranks++, unsaid += !ar_rank(a, r);
	}
	free(seen_rank);
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
