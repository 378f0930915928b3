/* profile.c - a profile of an archive counted in one pass (profile.h): calls, call sites, ranks, collectives, traffic, phases and I/O. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/profile.h"

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

/* An element of v by an exact key, pushed (zeroed) when new; *fresh says
 * which.  m maps each key to its element's index. */
static void *find(struct base_vec *v, struct base_tab *m, uint64_t key, bool *fresh)
{
	uint32_t *x = base_tab_get(m, key);
	*fresh = !x;
	if (x)
		return (char *)v->v + v->size * *x;
	void *e = base_vec_push(v);
	if (e && base_tab_set32(m, key, (uint32_t)(v->n - 1)) < 0)
		v->n--, e = NULL; /* as it was */
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
	return es_message(op) > 0 || es_op_matched(op);
}

/* A poll streak counts as the polls it made, its time spread over them
 * evenly (a poll's own time is not recorded): min <= mean <= max holds. */
static void count(struct stat_row *r, const struct es_trace *e, uint64_t d)
{
	const struct es_op_info *info = es_op_info(e->op);
	uint64_t calls = info && info->kind == ES_KIND_POLL && e->arg ? e->arg : 1, each = d / calls;
	r->count += calls;
	r->regions++;
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
static uint64_t site_hash(unsigned op, const struct ar_site *s)
{
	uint64_t h = base_hash_fold(BASE_HASH_SEED, op);
	for (int i = 0; i < s->nframes; i++) {
		const struct ar_frame *f = &s->frames[i];
		if (f->line)
			h = base_hash_fold(base_hash_str(base_hash_str(h, f->file), f->function), (uint64_t)f->line);
		else
			h = base_hash_fold(base_hash_str(h, f->module), f->offset);
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

/* A site already on the page with hash h and these frames, or 0.  The
 * index finds the first of a hash; the rare other of the same hash is
 * looked for among all (never in a recording: hashes are 64 bits). */
static uint32_t known_site(struct prof *p, uint64_t h, unsigned op, const struct ar_site *where, uint32_t first)
{
	const struct psite *q = BASE_AT(p->sites, struct psite, first - 1);
	if (q->op == op && same_site(q->where, where))
		return first;
	for (size_t i = 0; i < p->sites.n; i++) {
		q = BASE_AT(p->sites, struct psite, i);
		if (q->hash == h && q->op == op && same_site(q->where, where))
			return (uint32_t)i + 1;
	}
	return 0;
}

/* The page's index + 1 of thread t's site s called with op; 0: not
 * known.  Looked up once per thread, site and call, in one table for all
 * threads: a thread's lookups cost nothing for the threads that made none. */
uint32_t prof_site_key(struct prof *p, int t, uint16_t s, unsigned op)
{
	if (!s || s >= ES_SITES_SLOTS) /* no thread names a site past its board's: not known */
		return 0;
	uint64_t key = (uint64_t)(uint32_t)t << 32 | (uint64_t)s << 16 | (op & 0xffff);
	uint32_t *c = base_tab_get(&p->site_of, key);
	if (c)
		return *c;
	const struct ar_site *where = ar_site(p->a, t, s);
	uint64_t h = where ? site_hash(op, where) : 0;
	uint32_t *first = where ? base_tab_get(&p->site_ix, h) : NULL;
	uint32_t k = first ? known_site(p, h, op, where, *first) : 0;
	if (where && !k) {
		struct psite *q = base_vec_push(&p->sites);
		if (q) {
			*q = (struct psite){ .op = op, .where = where, .hash = h };
			k = (uint32_t)p->sites.n;
			if (!first && base_tab_set32(&p->site_ix, h, k) < 0)
				p->sites.n--, k = 0;
		}
		p->oom |= !k;
	}
	if (!p->oom && base_tab_set32(&p->site_of, key, k) < 0)
		p->oom = true; /* answered, not kept: the profile fails so */
	return k;
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
	if (e->comm < ar_ncomms(p->a)) {
		struct comm_tot *k = &p->comms[e->comm];
		k->colls += fresh;
		k->coll_time += t1 - t0;
		k->coll_bytes += e->size;
	}
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
	if (e->comm < ar_ncomms(p->a))
		p->comms[e->comm].msgs++, p->comms[e->comm].msg_bytes += e->size;
	q->bytes += e->size;
	q->count++;
	return 0;
}

/* The row of (name, rank) in v (rows that begin with their struct named),
 * made if new: its index + 1, 0 when out of memory.  Keyed by the name's
 * hash and the rank; a key another name took moves on to the next. */
static uint32_t named_row(struct base_vec *v, struct base_tab *m, const char *name, int rank)
{
	uint64_t h = base_hash_str(BASE_HASH_SEED, name);
	for (uint64_t key = (h << 24) ^ (uint32_t)(rank + 1);; key++) {
		bool fresh;
		struct named *r = find(v, m, key, &fresh);
		if (!r)
			return 0;
		if (fresh)
			*r = (struct named){ name, rank };
		if (fresh || (!strcmp(r->name, name) && r->rank == rank))
			return (uint32_t)(((char *)r - (char *)v->v) / v->size) + 1;
	}
}

/* An I/O call of rank g: its file's row, a read or a write by the call's name. */
static int add_io(struct prof *p, const struct es_trace *e, int g, uint64_t d)
{
	const char *file = e->element != NONE ? ar_file_name(p->a, g, e->element) : NULL;
	uint32_t x = named_row(&p->io, &p->io_ix, file ? file : "(a file opened before recording)", g);
	if (!x)
		return -ENOMEM;
	struct io_row *r = BASE_AT(p->io, struct io_row, x - 1);
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

/* A region of thread t (group g) from t0 to t1, depth the regions around it. */
static int add_call(struct prof *p, int t, int g, const struct es_trace *e, uint64_t t0, uint64_t t1,
		    size_t depth)
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
	uint32_t site = p->mpi ? prof_site_key(p, t, ES_TRACE_SITE(e), code) : 0;
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
	if (!rc && p->mpi && es_op_matched(e->op) && !(e->op & ES_OP_UNFINISHED))
		rc = add_coll(p, e, g, t0, t1);
	if (!rc && p->mpi && e->element != NONE && !(e->op & ES_OP_FAILED) && es_message(e->op) > 0 &&
	    e->element < (uint32_t)p->groups)
		rc = add_pair(p, e, g);
	return rc;
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
		uint32_t r = named_row(&p->phases, &p->phase_ix, name, g);
		if (!r)
			return -ENOMEM;
		op->row[op->n] = r;
		op->start[op->n++] = it->time;
		return 0;
	}
	if (it->kind != AR_LEAVE || !op->n)
		return 0;
	op->n--;
	struct phase_row *r = BASE_AT(p->phases, struct phase_row, op->row[op->n] - 1);
	r->count++;
	r->time += it->time - op->start[op->n];
	return 0;
}

static int add_thread(struct prof *p, int t, int g)
{
	const struct ar_event *ev = ar_events(p->a);
	struct ar_item *items;
	size_t n;
	int rc = ar_thread_items(p->a, t, &items, &n, NULL);
	if (rc || !n)
		return rc;
	uint64_t *enter = malloc(sizeof(uint64_t) * (n + 1));
	struct open_phases op = { malloc(sizeof(uint32_t) * (n + 1)), malloc(sizeof(uint64_t) * (n + 1)), 0 };
	size_t depth = 0;
	if (!enter || !op.row || !op.start)
		rc = -ENOMEM;
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
		rc = add_call(p, t, g, e, t0, items[i].time, depth);
		unsigned code = es_op_code(e->op);
		if (!rc && op.n && depth == 0 && code != ES_OP_MPI_INIT && code != ES_OP_MPI_FINALIZE) {
			struct phase_row *r = BASE_AT(p->phases, struct phase_row, op.row[op.n - 1] - 1);
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
	p->comms = calloc((size_t)ar_ncomms(a) + 1, sizeof(*p->comms));
	int rc = p->run && p->comms ? 0 : -ENOMEM;
	for (int g = 0; g < p->groups && !rc; g++)
		p->run[g].first = UINT64_MAX;
	for (int t = 0; t < nt && !rc; t++) {
		int g = p->mpi ? ar_thread(a, t)->rank : t;
		if (g >= 0) /* not a thread of no rank in an MPI job */
			rc = add_thread(p, t, g);
	}
	return rc;
}

/* --- numbering, totals ------------------------------------------------------------- */

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
		order[i] = BASE_AT(p->sites, struct psite, i);
	qsort(order, n, sizeof(*order), by_place);
	for (size_t i = 0; i < n; i++) {
		order[i]->number = (uint32_t)i + 1;
		renum[order[i] - BASE_AT(p->sites, struct psite, 0)] = (uint32_t)i + 1;
	}
	for (size_t i = 0; i < p->rows.n; i++) {
		struct stat_row *r = BASE_AT(p->rows, struct stat_row, i);
		if (r->site)
			r->site = renum[r->site - 1];
	}
	free(order), free(renum);
	return 0;
}

const struct psite *prof_site_at(const struct prof *p, uint32_t key)
{
	return key && key <= p->sites.n ? BASE_AT(p->sites, struct psite, key - 1) : NULL;
}

const struct psite *prof_site(const struct prof *p, uint32_t number)
{
	for (size_t i = 0; i < p->sites.n; i++)
		if (BASE_AT(p->sites, struct psite, i)->number == number)
			return BASE_AT(p->sites, struct psite, i);
	return NULL;
}

/* The coefficient of variation of a site's time across the ranks that called it. */
double prof_cov(const struct prof *p, const struct stat_row *all)
{
	double sum = 0, sq = 0;
	int n = 0;
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = BASE_AT(p->rows, struct stat_row, i);
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


/* The * rows of phases and files, over all ranks, after each rank's. */
static int add_all_rows(struct prof *p)
{
	size_t n = p->phases.n;
	for (size_t i = 0; i < n; i++) {
		struct phase_row r = *BASE_AT(p->phases, struct phase_row, i);
		uint32_t x = named_row(&p->phases, &p->phase_ix, r.key.name, ALL);
		if (!x)
			return -ENOMEM;
		struct phase_row *all = BASE_AT(p->phases, struct phase_row, x - 1);
		all->count += r.count, all->time += r.time, all->mpi += r.mpi, all->calls += r.calls;
	}
	n = p->io.n;
	for (size_t i = 0; i < n; i++) {
		struct io_row r = *BASE_AT(p->io, struct io_row, i);
		uint32_t x = named_row(&p->io, &p->io_ix, r.key.name, ALL);
		if (!x)
			return -ENOMEM;
		struct io_row *all = BASE_AT(p->io, struct io_row, x - 1);
		all->reads += r.reads, all->read_bytes += r.read_bytes, all->writes += r.writes;
		all->written += r.written, all->calls += r.calls, all->time += r.time;
	}
	return 0;
}

uint64_t prof_app(const struct prof *p, int g)
{
	const struct rank_run *r = &p->run[g];
	if (r->first == UINT64_MAX)
		return 0;
	uint64_t from = r->init ? r->init_end : r->first, to = r->fin ? r->fin_start : r->last;
	return to > from ? to - from : 0;
}

int prof_build(struct prof *p, const ar_archive *a)
{
	*p = (struct prof){ .a = a };
	p->rows.size = sizeof(struct stat_row);
	p->colls.size = sizeof(struct coll);
	p->pairs.size = sizeof(struct pair);
	p->sites.size = sizeof(struct psite);
	p->phases.size = sizeof(struct phase_row);
	p->io.size = sizeof(struct io_row);
	return gather(p);
}

int prof_finish(struct prof *p)
{
	int rc = number_sites(p);
	if (!rc)
		rc = add_all_rows(p);
	for (int g = 0; !rc && g < p->groups; g++) {
		p->app_all += prof_app(p, g);
		p->mpi_all += p->run[g].mpi;
	}
	return rc;
}

void prof_free(struct prof *p)
{
	free(p->run), free(p->comms), free(p->rows.v), free(p->colls.v), free(p->pairs.v), free(p->sites.v), free(p->phases.v);
	free(p->io.v);
	ws_destroy(p->waits);
	ws_analysis_free(&p->why);
	free(p->caused_by);
	for (size_t i = 0; i < p->nphase_names; i++)
		free(p->phase_names[i]);
	free(p->phase_names);
	base_tab_free(&p->row_ix), base_tab_free(&p->coll_ix), base_tab_free(&p->pair_ix), base_tab_free(&p->phase_ix);
	base_tab_free(&p->io_ix), base_tab_free(&p->site_of), base_tab_free(&p->site_ix);
}

int prof_end(struct prof *p, int rc, FILE *out, char *err, size_t errlen)
{
	prof_free(p);
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
