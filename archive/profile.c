/* profile.c - the page an mpiP user expects, from an archive: time in MPI per call, call site and rank, the worst collectives, communicators, the heaviest traffic. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/convert.h"

/*
 * A call's time is its region as ar_thread_items gives it: a poll streak
 * from the event before it on its thread (its polls and what the program
 * did between them: the polls' own time is not recorded) and counted as
 * the polls it made, a nonblocking collective's completion not at all (its
 * wait has the time).  A rank's run is from the end of its MPI_Init to the
 * start of its MPI_Finalize, as mpiP takes it, or its first to last event
 * when it has neither; the tables leave MPI_Init and MPI_Finalize out, as
 * mpiP does.
 *
 * A call site is where the program called MPI (the archive's sites: a
 * thread's numbers) together with the call made there, the same on every
 * rank that runs the same code: sites are told apart by their frames'
 * modules and offsets, which do not move with where a process loaded them.
 *
 * Rows are counted in one pass over each thread's items, found through a
 * hash table: the page costs time linear in the events.
 */

#define NONE 0xffffffffu
#define ALL (-1) /* a row of every rank */

/* What a row counts: an op's calls (site 0) or a call site's (site > 0) on a rank. */
struct stat_row {
	unsigned op;
	uint32_t site; /* 0, or a call site's number on the page */
	int rank;      /* ALL: every rank */
	uint64_t count, total, min, max, bytes;
	uint64_t sent_n, sent_min, sent_max; /* messages sent from the site: bytes is their sum */
};

struct rank_run {
	uint64_t first, last, init_end, fin_start, mpi;
	bool init, fin;
};

struct coll {
	unsigned op;
	uint16_t comm;
	uint32_t arg;
	uint64_t first_in, last_in, last_out, time;
	int last_rank, n;
};

struct pair {
	int from, to;
	uint64_t bytes, count;
};

/* A call site on the page: its call and the frames of the first thread seen there. */
struct psite {
	unsigned op;
	const struct ar_site *where;
	uint64_t hash;
	uint32_t number; /* as printed, from 1, in the order of file and line */
};

struct vec {
	void *v;
	size_t n, cap, size;
};

/* Exact keys to indices + 1 (0: none yet), by open addressing. */
struct map {
	uint64_t *keys;
	uint32_t *vals;
	size_t n, cap;
};

/* A phase on a rank (ALL: every rank): its time, and its calls' */
struct phase_row {
	const char *name; /* the archive's */
	int rank;
	uint64_t count, time, mpi, calls;
};

/* MPI-IO on a file by a rank (ALL: every rank) */
struct io_row {
	const char *file; /* the archive's */
	int rank;
	uint64_t reads, read_bytes, writes, written, calls, time;
};

struct prof {
	const ar_archive *a;
	bool mpi;
	int groups; /* ranks, or threads when no MPI */
	struct rank_run *run;
	struct vec rows, colls, pairs, sites, phases, io;
	struct map row_ix, coll_ix, pair_ix, phase_ix, io_ix;
	uint64_t app_all, mpi_all;
};

static void *push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		void *m = realloc(v->v, v->size * cap);
		if (!m)
			return NULL;
		v->v = m;
		v->cap = cap;
	}
	return memset((char *)v->v + v->size * v->n++, 0, v->size);
}

#define AT(vec, type, i) (&((type *)(vec).v)[i])

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static size_t map_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

/* The value slot of key, 0 in it when new; NULL: no memory. */
static uint32_t *map_at(struct map *m, uint64_t key)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		uint64_t *keys = malloc(sizeof(*keys) * cap);
		uint32_t *vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys), free(vals);
			return NULL;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i]) {
				size_t h = map_slot(m->keys[i], cap);
				while (vals[h])
					h = (h + 1) & (cap - 1);
				keys[h] = m->keys[i];
				vals[h] = m->vals[i];
			}
		free(m->keys), free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	size_t h = map_slot(key, m->cap);
	while (m->vals[h] && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	if (!m->vals[h]) {
		m->keys[h] = key;
		m->n++;
	}
	return &m->vals[h];
}

static void map_free(struct map *m)
{
	free(m->keys), free(m->vals);
}

/* An element of v by an exact key, pushed (zeroed) when new; *fresh says which. */
static void *find(struct vec *v, struct map *m, uint64_t key, bool *fresh)
{
	uint32_t *x = map_at(m, key);
	if (!x)
		return NULL;
	*fresh = !*x;
	if (*x)
		return (char *)v->v + v->size * (*x - 1);
	void *e = push(v);
	if (e)
		*x = (uint32_t)v->n;
	else
		m->n--; /* the key's slot stays free (its value 0) */
	return e;
}

/* --- rows ------------------------------------------------------------------------- */

/* The row for (op, site, rank), made if new; NULL: no memory. */
static struct stat_row *row(struct prof *p, unsigned op, uint32_t site, int rank)
{
	bool fresh;
	uint64_t key = (uint64_t)(op & 0xff) << 56 | (uint64_t)(site & 0xffffff) << 32 | (uint32_t)(rank + 1);
	struct stat_row *r = find(&p->rows, &p->row_ix, key, &fresh);
	if (r && fresh)
		*r = (struct stat_row){ .op = op, .site = site, .rank = rank, .min = UINT64_MAX, .sent_min = UINT64_MAX };
	return r;
}

/* Whether the call sends what its size says: a send, or a collective (as mpiP counts them). */
static bool sends(unsigned op)
{
	return ar_message(op) > 0 || es_op_matched(op);
}

/* A poll streak counts as the polls it made, its time spread over them
 * evenly (a poll's own time is not recorded): min <= mean <= max holds. */
static void count(struct stat_row *r, const struct es_trace *e, uint64_t d)
{
	const struct es_op_info *info = es_op_info(e->op);
	uint64_t calls = info && info->kind == ES_KIND_POLL && e->arg ? e->arg : 1, each = d / calls;
	r->count += calls;
	r->total += d;
	r->min = each < r->min ? each : r->min;
	r->max = each > r->max ? each : r->max;
	if (r->site == 0 || !sends(e->op) || !e->size) {
		if (r->site == 0)
			r->bytes += e->size;
		return;
	}
	r->bytes += e->size;
	r->sent_n++;
	r->sent_min = e->size < r->sent_min ? e->size : r->sent_min;
	r->sent_max = e->size > r->sent_max ? e->size : r->sent_max;
}

/* --- call sites ------------------------------------------------------------------- */

/* A frame is its source line where DWARF gave one (a loop the compiler
 * unrolled calls MPI from several addresses of one line), else its
 * address in its module. */
static uint64_t text_hash(uint64_t h, const char *t)
{
	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t site_hash(unsigned op, const struct ar_site *s)
{
	uint64_t h = 0xcbf29ce484222325ull ^ op;
	for (int i = 0; i < s->nframes; i++) {
		const struct ar_frame *f = &s->frames[i];
		if (f->line) {
			h = text_hash(text_hash(h, f->file), f->function);
			h = (h ^ (uint64_t)f->line) * 0x100000001b3ull;
		} else {
			h = text_hash(h, f->module);
			h = (h ^ f->offset) * 0x100000001b3ull;
		}
	}
	return h;
}

static bool same_frame(const struct ar_frame *x, const struct ar_frame *y)
{
	if (x->line || y->line)
		return x->line == y->line && !strcmp(x->file, y->file) && !strcmp(x->function, y->function);
	return x->offset == y->offset && !strcmp(x->module, y->module);
}

static bool same_site(const struct ar_site *x, const struct ar_site *y)
{
	if (x->nframes != y->nframes)
		return false;
	for (int i = 0; i < x->nframes; i++)
		if (!same_frame(&x->frames[i], &y->frames[i]))
			return false;
	return true;
}

/* The page's index + 1 of thread t's site s called with op; 0: not known. */
static uint32_t site_of(struct prof *p, int t, uint16_t s, unsigned op, uint32_t *cache)
{
	if (!s)
		return 0;
	uint32_t *c = &cache[(size_t)s * 4 + (op & 3)];
	if (*c && AT(p->sites, struct psite, *c - 1)->op == op)
		return *c;
	const struct ar_site *where = ar_site(p->a, t, s);
	if (!where)
		return 0;
	uint64_t h = site_hash(op, where);
	for (size_t i = 0; i < p->sites.n; i++) { /* sites are few: hundreds in LAMMPS */
		const struct psite *q = AT(p->sites, struct psite, i);
		if (q->hash == h && q->op == op && same_site(q->where, where))
			return *c = (uint32_t)i + 1;
	}
	struct psite *q = push(&p->sites);
	if (!q)
		return 0;
	*q = (struct psite){ .op = op, .where = where, .hash = h };
	return *c = (uint32_t)p->sites.n;
}

/* --- one pass over the events --------------------------------------------------------- */

static int add_coll(struct prof *p, const struct es_trace *e, int g, uint64_t t0, uint64_t t1)
{
	unsigned code = es_op_code(e->op);
	bool fresh;
	struct coll *c = find(&p->colls, &p->coll_ix, (uint64_t)(code & 0xff) << 56 | (uint64_t)e->comm << 32 | e->arg,
			      &fresh);
	if (!c)
		return -ENOMEM;
	if (fresh)
		*c = (struct coll){ code, e->comm, e->arg, t0, t0, t1, 0, g, 0 };
	c->n++;
	c->time += t1 - t0;
	c->first_in = t0 < c->first_in ? t0 : c->first_in;
	c->last_out = t1 > c->last_out ? t1 : c->last_out;
	if (t0 >= c->last_in) {
		c->last_in = t0;
		c->last_rank = g;
	}
	return 0;
}

static int add_pair(struct prof *p, const struct es_trace *e, int g)
{
	bool fresh;
	struct pair *q = find(&p->pairs, &p->pair_ix, (uint64_t)(uint32_t)g << 32 | e->element, &fresh);
	if (!q)
		return -ENOMEM;
	if (fresh)
		*q = (struct pair){ g, (int)e->element, 0, 0 };
	q->bytes += e->size;
	q->count++;
	return 0;
}

/* An I/O call of rank g: its file's row, a read or a write by the call's name. */
static int add_io(struct prof *p, const struct es_trace *e, int g, uint64_t d)
{
	const char *file = e->element != NONE ? ar_file_name(p->a, g, e->element) : NULL;
	file = file ? file : "(a file opened before recording)";
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = file; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	for (uint64_t key = (h << 24) ^ (uint32_t)(g + 1);; key++) { /* a name's hash taken: the next key */
		bool fresh;
		struct io_row *r = find(&p->io, &p->io_ix, key, &fresh);
		if (!r)
			return -ENOMEM;
		if (fresh)
			*r = (struct io_row){ .file = file, .rank = g };
		else if (strcmp(r->file, file) || r->rank != g)
			continue;
		const char *name = es_op_name(e->op);
		r->calls++;
		r->time += d;
		if (strstr(name, "_end")) /* a split operation counts at its begin */
			;
		else if (strstr(name, "read")) /* MPI_File_read..., _iread... */
			r->reads++, r->read_bytes += e->size;
		else if (strstr(name, "write"))
			r->writes++, r->written += e->size;
		return 0;
	}
}

/* A region of thread t (group g) from t0 to t1, depth the regions around it. */
static int add_call(struct prof *p, int t, int g, const struct es_trace *e, uint64_t t0, uint64_t t1,
		    size_t depth, uint32_t *cache)
{
	unsigned code = es_op_code(e->op);
	struct rank_run *r = &p->run[g];
	r->first = t0 < r->first ? t0 : r->first;
	r->last = t1 > r->last ? t1 : r->last;
	if (code == ES_OP_MPI_INIT) { /* MPI_Init_thread records as MPI_Init */
		r->init = true;
		r->init_end = t1;
		return 0; /* outside the run, as mpiP counts it */
	}
	if (code == ES_OP_MPI_FINALIZE) {
		r->fin = true;
		r->fin_start = t0;
		return 0;
	}
	if (depth == 0)
		r->mpi += t1 - t0; /* the outermost only: nested time is counted once */
	uint32_t site = p->mpi ? site_of(p, t, ES_TRACE_SITE(e), code, cache) : 0;
	int keys[4][2] = { { 0, g }, { 0, ALL }, { 1, g }, { 1, ALL } };
	for (int k = 0; k < (site ? 4 : 2); k++) {
		struct stat_row *s = row(p, code, keys[k][0] ? site : 0, keys[k][1]);
		if (!s)
			return -ENOMEM;
		count(s, e, t1 - t0);
	}
	int rc = 0;
	const struct es_op_info *info = es_op_info(e->op);
	if (p->mpi && info && info->group == ES_GROUP_IO)
		rc = add_io(p, e, g, t1 - t0);
	if (!rc && p->mpi && es_op_matched(e->op))
		rc = add_coll(p, e, g, t0, t1);
	if (!rc && p->mpi && e->element != NONE && !(e->op & ES_OP_FAILED) && ar_message(e->op) > 0 &&
	    e->element < (uint32_t)p->groups)
		rc = add_pair(p, e, g);
	return rc;
}

/* The row of phase name on rank, made if new; its index + 1, 0: no memory. */
static uint32_t phase_row(struct prof *p, const char *name, int rank)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	for (uint64_t key = (h << 24) ^ (uint32_t)(rank + 1);; key++) { /* a name's hash taken: the next key */
		bool fresh;
		struct phase_row *r = find(&p->phases, &p->phase_ix, key, &fresh);
		if (!r)
			return 0;
		if (fresh)
			*r = (struct phase_row){ .name = name, .rank = rank };
		if (fresh || (!strcmp(r->name, name) && r->rank == rank))
			return (uint32_t)(r - AT(p->phases, struct phase_row, 0)) + 1;
	}
}

/* A thread's phases open around its calls: their rows. */
struct open_phases {
	uint32_t *row;
	uint64_t *start;
	size_t n;
};

static int phase_item(struct prof *p, int t, int g, const struct ar_item *it, struct open_phases *op)
{
	if (it->kind == AR_ENTER) {
		char buf[32];
		const char *name = ar_phase_name(p->a, t, &ar_events(p->a)[it->event].t, buf, sizeof(buf));
		if (name == buf) /* not the archive's: the page outlives buf */
			name = "(unnamed)";
		uint32_t r = phase_row(p, name, g);
		if (!r)
			return -ENOMEM;
		op->row[op->n] = r;
		op->start[op->n++] = it->time;
		return 0;
	}
	if (it->kind != AR_LEAVE || !op->n)
		return 0;
	op->n--;
	struct phase_row *r = AT(p->phases, struct phase_row, op->row[op->n] - 1);
	r->count++;
	r->time += it->time - op->start[op->n];
	return 0;
}

static int add_thread(struct prof *p, int t, int g, uint32_t *cache)
{
	const struct ar_event *ev = ar_events(p->a);
	struct ar_item *items;
	size_t n;
	int rc = ar_thread_items(p->a, t, &items, &n, NULL);
	if (rc)
		return rc;
	uint64_t *enter = malloc(sizeof(uint64_t) * (n + 1));
	struct open_phases op = { malloc(sizeof(uint32_t) * (n + 1)), malloc(sizeof(uint64_t) * (n + 1)), 0 };
	size_t depth = 0;
	if (!enter || !op.row || !op.start)
		rc = -ENOMEM;
	memset(cache, 0, sizeof(uint32_t) * ES_SITES_SLOTS * 4);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct es_trace *e = &ev[items[i].event].t;
		if (ar_is_phase(e)) {
			rc = phase_item(p, t, g, &items[i], &op);
			continue;
		}
		if (items[i].kind == AR_ENTER)
			enter[depth++] = items[i].time;
		if (items[i].kind != AR_LEAVE || !depth)
			continue;
		uint64_t t0 = enter[--depth];
		rc = add_call(p, t, g, e, t0, items[i].time, depth, cache);
		unsigned code = es_op_code(e->op);
		if (!rc && op.n && depth == 0 && code != ES_OP_MPI_INIT && code != ES_OP_MPI_FINALIZE) {
			struct phase_row *r = AT(p->phases, struct phase_row, op.row[op.n - 1] - 1);
			r->mpi += items[i].time - t0;
			r->calls++;
		}
	}
	free(enter), free(op.row), free(op.start);
	free(items);
	return rc;
}

static int gather(struct prof *p)
{
	const ar_archive *a = p->a;
	int nt = ar_nthreads(a), nranks = 0;
	for (int t = 0; t < nt; t++)
		nranks = ar_thread(a, t)->rank + 1 > nranks ? ar_thread(a, t)->rank + 1 : nranks;
	p->mpi = nranks > 0;
	p->groups = p->mpi ? nranks : nt; /* rows per rank, or per thread when no MPI */
	p->run = calloc((size_t)p->groups + 1, sizeof(*p->run));
	uint32_t *cache = malloc(sizeof(uint32_t) * ES_SITES_SLOTS * 4);
	int rc = p->run && cache ? 0 : -ENOMEM;
	for (int g = 0; g < p->groups && !rc; g++)
		p->run[g].first = UINT64_MAX;
	for (int t = 0; t < nt && !rc; t++) {
		int g = p->mpi ? ar_thread(a, t)->rank : t;
		if (g >= 0) /* not a thread of no rank in an MPI job */
			rc = add_thread(p, t, g, cache);
	}
	free(cache);
	return rc;
}

/* --- the page ------------------------------------------------------------------------ */

static int by_total(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->rank - y->rank;
}

static int by_bytes_sent(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return by_total(a, b);
}

static int by_site_rank(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if ((x->rank == ALL) != (y->rank == ALL))
		return x->rank == ALL ? 1 : -1; /* the * row last, as mpiP */
	return x->rank - y->rank;
}

static int by_imbalance(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	uint64_t i = x->last_in - x->first_in, j = y->last_in - y->first_in;
	if (i != j)
		return i > j ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return x->arg < y->arg ? -1 : x->arg > y->arg;
}

static int by_pair_bytes(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->from != y->from ? x->from - y->from : x->to - y->to;
}

static int by_place(const void *a, const void *b)
{
	const struct psite *x = *(const struct psite *const *)a, *y = *(const struct psite *const *)b;
	const struct ar_frame *f = &x->where->frames[0], *g = &y->where->frames[0];
	int c = strcmp(f->file, g->file);
	if (c)
		return c;
	if (f->line != g->line)
		return f->line < g->line ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Sites numbered in the order of file and line; rows' site numbers follow. */
static int number_sites(struct prof *p)
{
	size_t n = p->sites.n;
	struct psite **order = malloc(sizeof(*order) * (n + 1));
	uint32_t *renum = malloc(sizeof(*renum) * (n + 1));
	if (!order || !renum) {
		free(order), free(renum);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = AT(p->sites, struct psite, i);
	qsort(order, n, sizeof(*order), by_place);
	for (size_t i = 0; i < n; i++) {
		order[i]->number = (uint32_t)i + 1;
		renum[order[i] - AT(p->sites, struct psite, 0)] = (uint32_t)i + 1;
	}
	for (size_t i = 0; i < p->rows.n; i++) {
		struct stat_row *r = AT(p->rows, struct stat_row, i);
		if (r->site)
			r->site = renum[r->site - 1];
	}
	free(order), free(renum);
	return 0;
}

static const struct psite *site_numbered(const struct prof *p, uint32_t number)
{
	for (size_t i = 0; i < p->sites.n; i++)
		if (AT(p->sites, struct psite, i)->number == number)
			return AT(p->sites, struct psite, i);
	return NULL;
}

/* "MPI_Send" without "MPI_", as mpiP names calls in its site tables */
static const char *short_name(unsigned op)
{
	const char *n = es_op_name(op);
	return !strncmp(n, "MPI_", 4) ? n + 4 : n;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* "2026-11-24 21:50:01" of the wall-clock time at an archive stamp, by rank 0's word */
static void wall_time(const struct ar_rank *r, uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)((ns + r->wall_ns - r->ns) / 1000000000ull);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

/* The hosts the ranks ran on, each once: how many, and the first few named. */
static int hosts(const struct prof *p, char *buf, size_t len)
{
	int n = 0;
	size_t used = 0;
	buf[0] = 0;
	for (int r = 0; r < p->groups; r++) {
		const struct ar_rank *x = ar_rank(p->a, r);
		bool seen = !x;
		for (int q = 0; q < r && !seen; q++)
			seen = ar_rank(p->a, q) && !strcmp(ar_rank(p->a, q)->host, x->host);
		if (seen)
			continue;
		if (n++ < 8 && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", n > 1 ? ", " : "", x->host);
	}
	return n;
}

/* mpiP's header: what ran, where, when, and what measured it */
static void print_header(const struct prof *p, FILE *out)
{
	const ar_archive *a = p->a;
	const struct ar_rank *r0 = p->mpi ? ar_rank(a, 0) : NULL;
	fprintf(out, "@ esprofile (EventSpace %s): job %s, %zu events", ES_VERSION, ar_job(a), ar_nevents(a));
	if (ar_lost(a))
		fprintf(out, " (%llu more were lost: the figures are short of them)", (unsigned long long)ar_lost(a));
	fputc('\n', out);
	if (r0)
		fprintf(out, "@ Command      : %s\n", r0->cmd);
	if (p->mpi) {
		char names[512];
		int n = hosts(p, names, sizeof(names));
		fprintf(out, "@ Ranks        : %d on %d host%s%s%s%s\n", p->groups, n, n == 1 ? "" : "s",
			n ? " (" : "", names, n > 8 ? ", ...)" : n ? ")" : "");
	}
	uint64_t first = UINT64_MAX, last = 0;
	for (size_t i = 0; i < ar_nevents(a); i++) {
		const struct es_trace *t = &ar_events(a)[i].t;
		first = t->start < first ? t->start : first;
		last = t->end > last ? t->end : last;
	}
	if (r0 && first <= last) {
		char from[32], to[32];
		wall_time(r0, first, from, sizeof(from));
		wall_time(r0, last, to, sizeof(to));
		fprintf(out, "@ Start time   : %s\n@ Stop time    : %s\n", from, to);
	}
	for (int r = 0; p->mpi && r < p->groups && r < 64; r++) {
		const struct ar_rank *x = ar_rank(a, r);
		if (x)
			fprintf(out, "@ Rank %-7d: %s, pid %d\n", r, x->host, x->pid);
	}
	fprintf(out, "@ time: a call from its start to its end; a poll streak from its first poll, "
		"counted as the polls it made\n");
}

static void print_runs(struct prof *p, FILE *out)
{
	fprintf(out, "\n@--- %s time (ms): the run, and in %s ---\n", p->mpi ? "MPI" : "Operation",
		p->mpi ? "MPI" : "operations");
	fprintf(out, "%-8s %14s %14s %8s\n", p->mpi ? "Rank" : "Thread", "AppTime", p->mpi ? "MPITime" : "OpTime",
		p->mpi ? "MPI%" : "Op%");
	for (int g = 0; g < p->groups; g++) {
		struct rank_run *r = &p->run[g];
		if (r->first == UINT64_MAX)
			continue;
		uint64_t from = r->init ? r->init_end : r->first, to = r->fin ? r->fin_start : r->last;
		uint64_t app = to > from ? to - from : 0;
		p->app_all += app;
		p->mpi_all += r->mpi;
		char label[PS_NAME_MAX + 8];
		if (p->mpi)
			snprintf(label, sizeof(label), "%d", g);
		else
			snprintf(label, sizeof(label), "%s", ar_thread(p->a, g)->name);
		fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", label, ms(app), ms(r->mpi), pct(r->mpi, app));
	}
	fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", "*", ms(p->app_all), ms(p->mpi_all), pct(p->mpi_all, p->app_all));
}

static void print_sites(const struct prof *p, FILE *out)
{
	fprintf(out, "\n@--- Call sites: %zu ---\n", p->sites.n);
	fprintf(out, "%4s %3s %-28s %6s %-24s %s\n", "ID", "Lev", "File/Address", "Line", "Parent_Funct",
		"MPI_Call");
	for (uint32_t id = 1; id <= p->sites.n; id++) {
		const struct psite *s = site_numbered(p, id);
		for (int k = 0; k < s->where->nframes; k++) {
			const struct ar_frame *f = &s->where->frames[k];
			char place[64];
			if (f->line)
				snprintf(place, sizeof(place), "%s", base_name(f->file));
			else
				snprintf(place, sizeof(place), "%s+0x%llx", base_name(f->module),
					 (unsigned long long)f->offset);
			fprintf(out, "%4u %3d %-28s %6d %-24s %s\n", id, k, place, f->line, f->function,
				k ? "" : short_name(s->op));
		}
	}
}

/* The coefficient of variation of a site's time across the ranks that called it. */
static double cov(const struct prof *p, const struct stat_row *all)
{
	double sum = 0, sq = 0;
	int n = 0;
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = AT(p->rows, struct stat_row, i);
		if (r->site == all->site && r->op == all->op && r->rank != ALL) {
			sum += (double)r->total;
			sq += (double)r->total * (double)r->total;
			n++;
		}
	}
	if (n < 2 || sum == 0)
		return 0;
	double mean = sum / n, var = sq / n - mean * mean;
	return var > 0 ? sqrt(var) / mean : 0;
}

static void print_site_tops(struct prof *p, FILE *out, int top)
{
	struct stat_row *rows = p->rows.v;
	qsort(rows, p->rows.n, sizeof(*rows), by_total);
	fprintf(out, "\n@--- Aggregate time by call site (top %d, descending) ---\n", top);
	fprintf(out, "%-24s %5s %12s %8s %8s %10s %8s\n", "Call", "Site", "Time (ms)", "App%", "MPI%", "Count", "COV");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++)
		if (rows[i].site && rows[i].rank == ALL) {
			shown++;
			fprintf(out, "%-24s %5u %12.3f %8.2f %8.2f %10llu %8.2f\n", short_name(rows[i].op), rows[i].site,
				ms(rows[i].total), pct(rows[i].total, p->app_all), pct(rows[i].total, p->mpi_all),
				(unsigned long long)rows[i].count, cov(p, &rows[i]));
		}
	qsort(rows, p->rows.n, sizeof(*rows), by_bytes_sent);
	uint64_t sent_all = 0;
	for (size_t i = 0; i < p->rows.n; i++)
		if (rows[i].site && rows[i].rank == ALL)
			sent_all += rows[i].bytes;
	fprintf(out, "\n@--- Aggregate sent message size by call site (top %d, descending, bytes) ---\n", top);
	fprintf(out, "%-24s %5s %10s %14s %12s %8s\n", "Call", "Site", "Count", "Total", "Avrg", "Sent%");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++)
		if (rows[i].site && rows[i].rank == ALL && rows[i].sent_n) {
			shown++;
			fprintf(out, "%-24s %5u %10llu %14llu %12.1f %8.2f\n", short_name(rows[i].op), rows[i].site,
				(unsigned long long)rows[i].sent_n, (unsigned long long)rows[i].bytes,
				(double)rows[i].bytes / (double)rows[i].sent_n, pct(rows[i].bytes, sent_all));
		}
}

static void print_site_stats(struct prof *p, FILE *out)
{
	struct stat_row *rows = p->rows.v;
	qsort(rows, p->rows.n, sizeof(*rows), by_site_rank);
	size_t n = 0;
	for (size_t i = 0; i < p->rows.n; i++)
		n += rows[i].site != 0;
	fprintf(out, "\n@--- Call site time statistics (all, milliseconds): %zu ---\n", n);
	fprintf(out, "%-24s %5s %5s %10s %12s %12s %12s %12s %8s %8s\n", "Name", "Site", "Rank", "Count", "Max",
		"Mean", "Min", "Total", "App%", "MPI%");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = &rows[i];
		if (!r->site)
			continue;
		uint64_t app = p->app_all, mpi = p->mpi_all;
		if (r->rank != ALL) {
			const struct rank_run *g = &p->run[r->rank];
			uint64_t from = g->init ? g->init_end : g->first, to = g->fin ? g->fin_start : g->last;
			app = to > from ? to - from : 0;
			mpi = g->mpi;
		}
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		uint64_t calls = r->count ? r->count : 1;
		fprintf(out, "%-24s %5u %5s %10llu %12.4f %12.4f %12.4f %12.4f %8.2f %8.2f\n", short_name(r->op),
			r->site, rank, (unsigned long long)r->count, ms(r->max), ms(r->total) / (double)calls,
			ms(r->min == UINT64_MAX ? 0 : r->min), ms(r->total), pct(r->total, app), pct(r->total, mpi));
	}
	fprintf(out, "\n@--- Call site message sent statistics (all, sent bytes) ---\n");
	fprintf(out, "%-24s %5s %5s %10s %12s %12s %12s %14s\n", "Name", "Site", "Rank", "Count", "Max", "Mean",
		"Min", "Sum");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = &rows[i];
		if (!r->site || !r->sent_n)
			continue;
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		fprintf(out, "%-24s %5u %5s %10llu %12llu %12.1f %12llu %14llu\n", short_name(r->op), r->site, rank,
			(unsigned long long)r->sent_n, (unsigned long long)r->sent_max,
			(double)r->bytes / (double)r->sent_n, (unsigned long long)r->sent_min,
			(unsigned long long)r->bytes);
	}
}

static void print_calls(struct prof *p, FILE *out, int top)
{
	struct stat_row *rows = p->rows.v;
	qsort(rows, p->rows.n, sizeof(*rows), by_total);
	fprintf(out, "\n@--- Aggregate time, every %s (top %d, descending) ---\n", p->mpi ? "rank" : "thread", top);
	fprintf(out, "%-30s %12s %8s %8s %10s %12s %12s %14s\n", "Call", "Time (ms)", "App%", "MPI%", "Count",
		"Mean (us)", "Max (us)", "Bytes");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank != ALL || s->site)
			continue;
		shown++;
		fprintf(out, "%-30s %12.3f %8.2f %8.2f %10llu %12.3f %12.3f %14llu\n", es_op_name(s->op),
			ms(s->total), pct(s->total, p->app_all), pct(s->total, p->mpi_all), (unsigned long long)s->count,
			(double)s->total / (double)s->count / 1e3, (double)s->max / 1e3, (unsigned long long)s->bytes);
	}
	fprintf(out, "\n@--- Per %s: every call ---\n", p->mpi ? "rank" : "thread");
	fprintf(out, "%-30s %6s %10s %12s %12s %12s %14s\n", "Call", p->mpi ? "Rank" : "Thread", "Count",
		"Time (ms)", "Mean (us)", "Max (us)", "Bytes");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank == ALL || s->site)
			continue;
		fprintf(out, "%-30s %6d %10llu %12.3f %12.3f %12.3f %14llu\n", es_op_name(s->op), s->rank,
			(unsigned long long)s->count, ms(s->total), (double)s->total / (double)s->count / 1e3,
			(double)s->max / 1e3, (unsigned long long)s->bytes);
	}
}

/* "WORLD", or the communicator's number in the archive */
static void comm_label(const struct ar_comm *cm, int number, char *buf, size_t len)
{
	if (cm && (cm->flags & ES_COMMS_WORLD))
		snprintf(buf, len, "WORLD");
	else
		snprintf(buf, len, "%d%s", number, cm && (cm->flags & ES_COMMS_INTER) ? " inter" : "");
}

static void print_colls(struct prof *p, FILE *out, int top)
{
	struct coll *colls = p->colls.v;
	qsort(colls, p->colls.n, sizeof(*colls), by_imbalance);
	fprintf(out, "\n@--- Collectives with the worst imbalance (top %d): from the first rank in "
		"to the last ---\n", top);
	fprintf(out, "%-30s %6s %12s %10s %14s %12s\n", "Call", "Number", "Communicator", "Last in",
		"Imbalance (us)", "Ranks");
	for (size_t i = 0; i < p->colls.n && (int)i < top; i++) {
		const struct coll *c = &colls[i];
		const struct ar_comm *cm = ar_comm(p->a, c->comm);
		char comm[32];
		comm_label(cm, c->comm, comm, sizeof(comm));
		fprintf(out, "%-30s %6u %12s %10d %14.3f %7d of %u\n", es_op_name(c->op), c->arg, comm, c->last_rank,
			(double)(c->last_in - c->first_in) / 1e3, c->n, cm ? cm->size[0] + cm->size[1] : 0);
	}
	fprintf(out, "\n@--- Communicators: their collectives ---\n");
	fprintf(out, "%-12s %6s %12s %14s  %s\n", "Communicator", "Size", "Collectives", "Time (ms)", "World ranks");
	for (int k = 0; k < ar_ncomms(p->a); k++) {
		const struct ar_comm *cm = ar_comm(p->a, k);
		uint64_t n = 0, time = 0;
		for (size_t i = 0; i < p->colls.n; i++)
			if (colls[i].comm == k)
				n++, time += colls[i].time;
		if (!n)
			continue;
		char name[32];
		comm_label(cm, k, name, sizeof(name));
		fprintf(out, "%-12s %6u %12llu %14.3f ", name, cm->size[0] + cm->size[1], (unsigned long long)n, ms(time));
		for (int side = 0; side < 2; side++)
			for (uint32_t r = 0; r < cm->size[side] && r < 16; r++)
				fprintf(out, "%s %d", side && !r ? " |" : "", cm->members[side][r]);
		fprintf(out, "%s\n", cm->size[0] > 16 || cm->size[1] > 16 ? " ..." : "");
	}
}

static int by_phase(const void *a, const void *b)
{
	const struct phase_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if ((x->rank == ALL) != (y->rank == ALL))
		return x->rank == ALL ? 1 : -1;
	return x->rank - y->rank;
}

/* Each phase per rank and over all, its calls' time counted in the innermost phase around them. */
static int print_phases(struct prof *p, FILE *out)
{
	size_t n = p->phases.n;
	for (size_t i = 0; i < n; i++) { /* the * rows */
		struct phase_row r = *AT(p->phases, struct phase_row, i);
		uint32_t x = phase_row(p, r.name, ALL);
		if (!x)
			return -ENOMEM;
		struct phase_row *all = AT(p->phases, struct phase_row, x - 1);
		all->count += r.count, all->time += r.time, all->mpi += r.mpi, all->calls += r.calls;
	}
	qsort(p->phases.v, p->phases.n, sizeof(struct phase_row), by_phase);
	fprintf(out, "\n@--- Phases: their time, and the time of the MPI calls made inside each (its "
		"innermost phase) ---\n");
	fprintf(out, "%-28s %5s %8s %14s %14s %8s %10s\n", "Phase", "Rank", "Count", "Time (ms)", "MPI (ms)", "MPI%",
		"Calls");
	for (size_t i = 0; i < p->phases.n; i++) {
		const struct phase_row *r = AT(p->phases, struct phase_row, i);
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		fprintf(out, "%-28s %5s %8llu %14.3f %14.3f %8.2f %10llu\n", r->name, rank, (unsigned long long)r->count,
			ms(r->time), ms(r->mpi), pct(r->mpi, r->time), (unsigned long long)r->calls);
	}
	return 0;
}

static int by_file(const void *a, const void *b)
{
	const struct io_row *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if ((x->rank == ALL) != (y->rank == ALL))
		return x->rank == ALL ? 1 : -1;
	return x->rank - y->rank;
}

/* Each file's reads and writes per rank and over all (Darshan's first page). */
static void print_io(struct prof *p, FILE *out)
{
	size_t n = p->io.n;
	for (size_t i = 0; i < n; i++) { /* the * rows: one per file, after the ranks' */
		struct io_row r = *AT(p->io, struct io_row, i);
		struct io_row *all = NULL;
		for (size_t k = n; k < p->io.n && !all; k++)
			if (!strcmp(AT(p->io, struct io_row, k)->file, r.file))
				all = AT(p->io, struct io_row, k);
		if (!all && (all = push(&p->io)))
			*all = (struct io_row){ .file = r.file, .rank = ALL };
		if (!all)
			return;
		all->reads += r.reads, all->read_bytes += r.read_bytes, all->writes += r.writes;
		all->written += r.written, all->calls += r.calls, all->time += r.time;
	}
	qsort(p->io.v, p->io.n, sizeof(struct io_row), by_file);
	fprintf(out, "\n@--- I/O (MPI-IO): per file and rank, reads and writes as asked (a blocking read's as "
		"read) ---\n");
	fprintf(out, "%-40s %5s %8s %14s %8s %14s %8s %12s\n", "File", "Rank", "Reads", "Bytes read", "Writes",
		"Bytes written", "Calls", "Time (ms)");
	for (size_t i = 0; i < p->io.n; i++) {
		const struct io_row *r = AT(p->io, struct io_row, i);
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		fprintf(out, "%-40s %5s %8llu %14llu %8llu %14llu %8llu %12.3f\n", r->file, rank,
			(unsigned long long)r->reads, (unsigned long long)r->read_bytes, (unsigned long long)r->writes,
			(unsigned long long)r->written, (unsigned long long)r->calls, ms(r->time));
	}
}

static void print_traffic(struct prof *p, FILE *out, int top)
{
	struct pair *pairs = p->pairs.v;
	qsort(pairs, p->pairs.n, sizeof(*pairs), by_pair_bytes);
	fprintf(out, "\n@--- Heaviest point-to-point traffic (top %d): sent from rank to rank ---\n", top);
	fprintf(out, "%6s %6s %10s %14s\n", "From", "To", "Messages", "Bytes");
	for (size_t i = 0; i < p->pairs.n && (int)i < top; i++)
		fprintf(out, "%6d %6d %10llu %14llu\n", pairs[i].from, pairs[i].to, (unsigned long long)pairs[i].count,
			(unsigned long long)pairs[i].bytes);
}

int ar_profile(const ar_archive *a, FILE *out, int top, char *err, size_t errlen)
{
	struct prof p = { .a = a };
	p.rows.size = sizeof(struct stat_row);
	p.colls.size = sizeof(struct coll);
	p.pairs.size = sizeof(struct pair);
	p.sites.size = sizeof(struct psite);
	p.phases.size = sizeof(struct phase_row);
	p.io.size = sizeof(struct io_row);
	int rc = gather(&p);
	if (!rc)
		rc = number_sites(&p);
	if (!rc) {
		print_header(&p, out);
		print_runs(&p, out);
		if (p.mpi && p.sites.n) {
			print_sites(&p, out);
			print_site_tops(&p, out, top);
		}
		print_calls(&p, out, top);
		if (p.mpi && p.sites.n)
			print_site_stats(&p, out);
		if (p.phases.n)
			rc = print_phases(&p, out);
		if (p.io.n)
			print_io(&p, out);
		if (p.mpi) {
			print_colls(&p, out, top);
			print_traffic(&p, out, top);
		}
	}
	free(p.run), free(p.rows.v), free(p.colls.v), free(p.pairs.v), free(p.sites.v), free(p.phases.v), free(p.io.v);
	map_free(&p.row_ix), map_free(&p.coll_ix), map_free(&p.pair_ix), map_free(&p.phase_ix), map_free(&p.io_ix);
	if (rc) {
		snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	if (ferror(out)) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}
