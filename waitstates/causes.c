/* causes.c - why the waits happened: Scalasca's delay analysis (short- and long-term costs, indirect waiting) and the critical path, over what ws_keep kept. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* waitstates.h says what is computed; here, how.  Every thread's kept
 * calls, phases (flattened into a timeline of the innermost phase), its
 * waits and its synchronizations (each wait on both ends, each collective
 * on every member) are sorted once; an interval's activities are then
 * read by binary search.  The waits are taken latest first, so that a
 * wait's long-term cost Φ is whole before its own delayer is charged. */

struct point {
	uint64_t t;
	uint32_t key; /* the innermost phase from t on; 0: none */
};
struct sync {
	uint64_t t;
	uint32_t id;
	bool coll; /* id: a kept collective's, else a kept wait's */
};
struct prep {
	struct hcall *calls;   /* the thread's own (kept in order), or a sorted copy (owned) */
	size_t ncalls, hint, whint; /* hints: where the last search for a call, a wait ended */
	bool own_calls;
	struct point *line;
	size_t nline;
	uint32_t *waits; /* waits this thread waited in, by end */
	size_t nwaits;
	struct sync *syncs;
	size_t nsyncs;
	uint64_t first, last;
};

struct act {
	uint32_t key;
	bool phase;
	int64_t ns;
};
struct acts {
	struct act *v;
	size_t n, cap;
};

struct an {
	const ws *w;
	const struct ws_wait *hw;
	struct prep *p; /* by thread */
	size_t nlocs;
	double *phi;    /* long-term cost on each kept wait */
	struct acts a, b;
	struct base_tab cost_ix;
	struct base_vec costs, path;
	struct base_tab path_ix;
	int err;
};

static void act_add(struct an *z, struct acts *m, uint32_t key, bool phase, int64_t ns)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].key == key && m->v[i].phase == phase) {
			m->v[i].ns += ns;
			return;
		}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct act *v = realloc(m->v, sizeof(*v) * cap);
		if (!v) {
			z->err = -ENOMEM;
			return;
		}
		m->v = v, m->cap = cap;
	}
	m->v[m->n++] = (struct act){ key, phase, ns };
}

static uint64_t wait_end(const struct ws_wait *h)
{
	return h->from + h->ns;
}

/* --- each thread's calls, timeline, waits and synchronizations, sorted ------------ */

static int by_start(const void *a, const void *b)
{
	const struct hcall *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_phase_start(const void *a, const void *b)
{
	const struct hphase *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the outer first */
}

static int by_sync(const void *a, const void *b)
{
	const struct sync *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_wait_end(const void *a, const void *b, void *hw)
{
	const struct ws_wait *h = hw;
	uint64_t x = wait_end(&h[*(const uint32_t *)a]), y = wait_end(&h[*(const uint32_t *)b]);
	return x < y ? -1 : x > y;
}

static bool sorted(const void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((const char *)v + (i - 1) * size, (const char *)v + i * size) > 0)
			return false;
	return true;
}

/* The innermost phase over time: phases nest in a thread, so a stack of
 * the open ones, walked in order of their starts and ends. */
static int timeline(struct prep *p, const struct loc *l)
{
	size_t n = l->hphases.n;
	struct hphase *ph = malloc(sizeof(*ph) * (n + 1));
	uint32_t *stack = malloc(sizeof(*stack) * (n + 1));
	uint64_t *ends = malloc(sizeof(*ends) * (n + 1));
	p->line = malloc(sizeof(*p->line) * (2 * n + 1));
	if (!ph || !stack || !ends || !p->line) {
		free(ph), free(stack), free(ends);
		return -ENOMEM;
	}
	if (n) /* memcpy and qsort must not be given a NULL array even of no element */
		memcpy(ph, l->hphases.v, sizeof(*ph) * n);
	if (n > 1)
		qsort(ph, n, sizeof(*ph), by_phase_start);
	size_t depth = 0;
	for (size_t i = 0; i <= n; i++) {
		uint64_t next = i < n ? ph[i].start : UINT64_MAX;
		while (depth && ends[depth - 1] <= next) { /* phases that end before the next starts */
			uint64_t t = ends[--depth];
			p->line[p->nline++] = (struct point){ t, depth ? stack[depth - 1] : 0 };
		}
		if (i == n)
			break;
		stack[depth] = ph[i].key, ends[depth++] = ph[i].end;
		p->line[p->nline++] = (struct point){ ph[i].start, ph[i].key };
	}
	free(ph), free(stack), free(ends);
	return 0;
}

static int prepare(struct an *z)
{
	const ws *w = z->w;
	z->nlocs = w->locs.n;
	z->p = calloc(z->nlocs + 1, sizeof(*z->p));
	if (!z->p)
		return -ENOMEM;
	for (size_t k = 0; k < z->nlocs; k++) {
		const struct loc *l = BASE_AT(w->locs, struct loc, k);
		struct prep *p = &z->p[k];
		p->ncalls = l->hcalls.n;
		if (timeline(p, l) < 0)
			return -ENOMEM;
		p->calls = l->hcalls.v; /* a thread's calls come in its order: sorted but for clock jitter */
		if (!sorted(p->calls, p->ncalls, sizeof(struct hcall), by_start)) {
			if (!(p->calls = malloc(sizeof(struct hcall) * (p->ncalls + 1))))
				return -ENOMEM;
			p->own_calls = true;
			memcpy(p->calls, l->hcalls.v, sizeof(struct hcall) * p->ncalls);
			qsort(p->calls, p->ncalls, sizeof(struct hcall), by_start);
		}
		p->first = p->ncalls ? p->calls[0].start : 0;
		for (size_t i = 0; i < p->ncalls; i++)
			p->last = p->calls[i].end > p->last ? p->calls[i].end : p->last;
	}
	size_t nw = w->hwaits.n;
	for (size_t j = 0; j < nw; j++) { /* count, then fill */
		z->p[z->hw[j].waiter].nwaits++;
		z->p[z->hw[j].waiter].nsyncs++;
		z->p[z->hw[j].delayer].nsyncs++;
	}
	for (size_t j = 0; j < w->hcolls.n; j++) {
		const struct hcoll *c = BASE_AT(w->hcolls, struct hcoll, j);
		for (uint32_t i = 0; i < c->n; i++)
			z->p[BASE_AT(w->hmembers, struct hmember, c->first + i)->loc].nsyncs++;
	}
	for (size_t k = 0; k < z->nlocs; k++) {
		struct prep *p = &z->p[k];
		p->waits = malloc(sizeof(uint32_t) * (p->nwaits + 1));
		p->syncs = malloc(sizeof(struct sync) * (p->nsyncs + 1));
		if (!p->waits || !p->syncs)
			return -ENOMEM;
		p->nwaits = p->nsyncs = 0;
	}
	for (uint32_t j = 0; j < nw; j++) {
		const struct ws_wait *h = &z->hw[j];
		z->p[h->waiter].waits[z->p[h->waiter].nwaits++] = j;
		z->p[h->waiter].syncs[z->p[h->waiter].nsyncs++] = (struct sync){ wait_end(h), j, false };
		z->p[h->delayer].syncs[z->p[h->delayer].nsyncs++] = (struct sync){ h->cause, j, false };
	}
	for (uint32_t j = 0; j < w->hcolls.n; j++) {
		const struct hcoll *c = BASE_AT(w->hcolls, struct hcoll, j);
		for (uint32_t i = 0; i < c->n; i++) {
			const struct hmember *m = BASE_AT(w->hmembers, struct hmember, c->first + i);
			z->p[m->loc].syncs[z->p[m->loc].nsyncs++] = (struct sync){ m->left, j, true };
		}
	}
	for (size_t k = 0; k < z->nlocs; k++) { /* mostly found in order already: sorted only when not */
		bool in_order = true;
		for (size_t i = 1; i < z->p[k].nwaits && in_order; i++)
			in_order = by_wait_end(&z->p[k].waits[i - 1], &z->p[k].waits[i], (void *)z->hw) <= 0;
		if (!in_order)
			qsort_r(z->p[k].waits, z->p[k].nwaits, sizeof(uint32_t), by_wait_end, (void *)z->hw);
		if (!sorted(z->p[k].syncs, z->p[k].nsyncs, sizeof(struct sync), by_sync))
			qsort(z->p[k].syncs, z->p[k].nsyncs, sizeof(struct sync), by_sync);
	}
	return 0;
}

/* --- an interval's activities ----------------------------------------------------------- */

/* The first i of 0 .. n - 1 whose end(i) is after a (ends rise with i),
 * searched from *hint, where the last search ended, widening: the waits
 * are taken in order of time, so the next is near, where a whole binary
 * search over a long thread would miss the cache at every step. */
static inline size_t gallop(size_t n, size_t *hint, uint64_t a, uint64_t (*end)(const void *, size_t), const void *ctx)
{
	size_t h = *hint < n ? *hint : 0, lo, hi, step = 1;
	if (!n)
		return 0;
	if (end(ctx, h) <= a) {
		lo = h + 1, hi = lo;
		while (hi < n && end(ctx, hi) <= a)
			lo = hi + 1, hi = lo + step, step *= 2;
		hi = hi < n ? hi : n;
	} else {
		hi = h, lo = h;
		while (lo > 0 && end(ctx, lo - 1) > a)
			hi = lo - 1, lo = lo > step ? lo - step : 0, step *= 2;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (end(ctx, mid) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	*hint = lo;
	return lo;
}

struct wctx {
	const struct ws_wait *hw;
	const uint32_t *waits;
};

static uint64_t wait_end_at(const void *ctx, size_t i)
{
	const struct wctx *c = ctx;
	return wait_end(&c->hw[c->waits[i]]);
}

static uint64_t call_end_at(const void *ctx, size_t i)
{
	return ((const struct hcall *)ctx)[i].end;
}

/* The first of thread p's waits (by end) that ends after a: a thread waits
 * in one call at a time, so its waits are in order of their starts too. */
static size_t first_wait_after(const struct an *z, struct prep *p, uint64_t a)
{
	struct wctx c = { z->hw, p->waits };
	return gallop(p->nwaits, &p->whint, a, wait_end_at, &c);
}

/* The first of thread p's calls that ends after a. */
static size_t first_call_after(struct prep *p, uint64_t a)
{
	return gallop(p->ncalls, &p->hint, a, call_end_at, p->calls);
}

/* The computation from x to y, by the innermost phase. */
static void gap(struct an *z, const struct prep *p, struct acts *m, uint64_t x, uint64_t y)
{
	size_t lo = 0, hi = p->nline; /* the first point after x */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->line[mid].t <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t key = lo ? p->line[lo - 1].key : 0;
	for (size_t i = lo; i < p->nline && p->line[i].t < y; i++) {
		act_add(z, m, key, true, (int64_t)(p->line[i].t - x));
		x = p->line[i].t, key = p->line[i].key;
	}
	act_add(z, m, key, true, (int64_t)(y - x));
}

/* Thread k's activities from a to b into m (cleared), its waits taken out
 * of their calls; its waiting there. */
static uint64_t interval(struct an *z, uint32_t k, uint64_t a, uint64_t b, struct acts *m)
{
	struct prep *p = &z->p[k];
	m->n = 0;
	if (b <= a)
		return 0;
	size_t lo = first_call_after(p, a);
	uint64_t at = a, waited = 0;
	for (size_t i = lo; i < p->ncalls && p->calls[i].start < b; i++) {
		uint64_t s = p->calls[i].start > a ? p->calls[i].start : a;
		uint64_t e = p->calls[i].end < b ? p->calls[i].end : b;
		if (e <= at)
			continue;
		s = s > at ? s : at;
		if (s > at)
			gap(z, p, m, at, s);
		act_add(z, m, p->calls[i].site, false, (int64_t)(e - s));
		at = e;
	}
	if (at < b)
		gap(z, p, m, at, b);
	const struct ws_row *rows = z->w->rows.v;
	for (size_t i = first_wait_after(z, p, a); i < p->nwaits && z->hw[p->waits[i]].from < b; i++) {
		const struct ws_wait *h = &z->hw[p->waits[i]];
		if (h->from < a)
			continue;
		uint64_t ns = wait_end(h) <= b ? h->ns : b - h->from;
		act_add(z, m, rows[h->row].site, false, -(int64_t)ns);
		waited += ns;
	}
	return waited;
}

/* --- delay costs ------------------------------------------------------------------------ */

/* The other end, on thread q, of thread p's synchronization s; false when
 * q was not in it. */
static bool shared(struct an *z, const struct sync *s, uint32_t q, uint64_t *on_q)
{
	if (!s->coll) {
		const struct ws_wait *h = &z->hw[s->id];
		if (h->waiter == q || h->delayer == q) {
			*on_q = h->waiter == q ? wait_end(h) : h->cause;
			return true;
		}
		return false;
	}
	const struct hcoll *c = BASE_AT(z->w->hcolls, struct hcoll, s->id);
	const struct hmember *m = BASE_AT(z->w->hmembers, struct hmember, c->first);
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m[mid].loc < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n && m[lo].loc == q) {
		*on_q = m[lo].left;
		return true;
	}
	return false;
}

/* Where p's and q's interval before their synchronization at (sp, sq) begin. */
static void last_sync(struct an *z, uint32_t p, uint32_t q, uint64_t sp, uint64_t sq, uint64_t *ap, uint64_t *aq)
{
	const struct prep *pp = &z->p[p];
	*ap = pp->first, *aq = z->p[q].first;
	size_t lo = 0, hi = pp->nsyncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pp->syncs[mid].t < sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, looked = 0; i-- > 0 && looked < 100000; looked++) {
		uint64_t on_q;
		if (shared(z, &pp->syncs[i], q, &on_q) && on_q < sq) {
			*ap = pp->syncs[i].t, *aq = on_q;
			return;
		}
	}
}

static struct ws_cost *cost_of(struct an *z, int32_t rank, uint32_t key, bool phase)
{
	uint64_t k = (uint64_t)(uint32_t)rank << 33 | (uint64_t)phase << 32 | key;
	uint32_t *v = base_tab_get(&z->cost_ix, k);
	if (v)
		return BASE_AT(z->costs, struct ws_cost, *v);
	struct ws_cost *c = base_vec_push(&z->costs);
	if (!c || base_tab_set32(&z->cost_ix, k, (uint32_t)(z->costs.n - 1)) < 0) {
		z->err = -ENOMEM;
		return NULL;
	}
	*c = (struct ws_cost){ .rank = rank, .key = key, .phase = phase };
	return c;
}

static int by_end_desc(const void *a, const void *b, void *hw)
{
	return by_wait_end(b, a, hw);
}

static void delay_one(struct an *z, uint32_t j, uint64_t *indirect)
{
	const struct ws_wait *h = &z->hw[j];
	uint32_t p = h->delayer, q = h->waiter;
	uint64_t ap, aq;
	last_sync(z, p, q, h->cause, h->from, &ap, &aq);
	uint64_t wp = interval(z, p, ap, h->cause, &z->a);
	interval(z, q, aq, h->from, &z->b);
	double sum = (double)wp;
	for (size_t i = 0; i < z->a.n; i++) { /* δ(c) = max(0, t_p(c) − t_q(c)), in a.ns */
		int64_t tq = 0;
		for (size_t k = 0; k < z->b.n; k++)
			if (z->b.v[k].key == z->a.v[i].key && z->b.v[k].phase == z->a.v[i].phase)
				tq = z->b.v[k].ns;
		z->a.v[i].ns = z->a.v[i].ns > tq ? z->a.v[i].ns - tq : 0;
		sum += (double)z->a.v[i].ns;
	}
	if (sum <= 0)
		return;
	double gs = (double)h->ns / sum, gl = z->phi[j] / sum;
	gs = gs > 1 ? 1 : gs;
	int32_t rank = BASE_AT(z->w->locs, struct loc, p)->rank;
	for (size_t i = 0; i < z->a.n; i++) {
		struct ws_cost *c = z->a.v[i].ns ? cost_of(z, rank, z->a.v[i].key, z->a.v[i].phase) : NULL;
		if (c)
			c->short_ns += (uint64_t)(gs * (double)z->a.v[i].ns), c->long_ns += (uint64_t)(gl * (double)z->a.v[i].ns);
	}
	indirect[h->row] += (uint64_t)(gs * (double)wp);
	struct prep *pp = &z->p[p]; /* p's own waits in the interval carry the cost further back */
	for (size_t i = first_wait_after(z, pp, ap); i < pp->nwaits && z->hw[pp->waits[i]].from < h->cause; i++) {
		const struct ws_wait *k = &z->hw[pp->waits[i]];
		if (k->from >= ap)
			z->phi[pp->waits[i]] += (gs + gl) * (double)k->ns;
	}
}

static int delays(struct an *z, struct ws_analysis *out)
{
	size_t n = z->w->hwaits.n;
	uint32_t *order = malloc(sizeof(uint32_t) * (n + 1));
	z->phi = calloc(n + 1, sizeof(double));
	out->nrows = z->w->rows.n;
	out->indirect_ns = calloc(out->nrows + 1, sizeof(uint64_t));
	if (!order || !z->phi || !out->indirect_ns) {
		free(order);
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < n; j++)
		order[j] = j;
	qsort_r(order, n, sizeof(uint32_t), by_end_desc, (void *)z->hw);
	for (size_t i = 0; i < n && !z->err; i++)
		delay_one(z, order[i], out->indirect_ns);
	free(order);
	return z->err;
}

/* --- the critical path -------------------------------------------------------------------- */

static void path_add(struct an *z, int32_t rank, const struct acts *m)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].ns <= 0)
			continue;
		uint64_t k = (uint64_t)(uint32_t)rank << 33 | (uint64_t)m->v[i].phase << 32 | m->v[i].key;
		uint32_t *v = base_tab_get(&z->path_ix, k);
		struct ws_share *s = v ? BASE_AT(z->path, struct ws_share, *v) : base_vec_push(&z->path);
		if (!s || (!v && base_tab_set32(&z->path_ix, k, (uint32_t)(z->path.n - 1)) < 0)) {
			z->err = -ENOMEM;
			return;
		}
		if (!v)
			*s = (struct ws_share){ .rank = rank, .key = m->v[i].key, .phase = m->v[i].phase };
		s->ns += (uint64_t)m->v[i].ns;
	}
}

/* The latest wait of thread k that ended by t, or NIL. */
static uint32_t wait_before(const struct an *z, uint32_t k, uint64_t t)
{
	const struct prep *p = &z->p[k];
	size_t lo = 0, hi = p->nwaits;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (wait_end(&z->hw[p->waits[mid]]) <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? p->waits[lo - 1] : NIL;
}

static int walk_path(struct an *z, struct ws_analysis *out)
{
	uint32_t cur = NIL;
	uint64_t t = 0;
	for (uint32_t k = 0; k < z->nlocs; k++)
		if (z->p[k].ncalls && (cur == NIL || z->p[k].last > t))
			cur = k, t = z->p[k].last;
	for (size_t steps = 0; cur != NIL && steps <= z->w->hwaits.n; steps++) {
		int32_t rank = BASE_AT(z->w->locs, struct loc, cur)->rank;
		uint32_t j = wait_before(z, cur, t);
		const struct ws_wait *h = j == NIL ? NULL : &z->hw[j];
		uint64_t from = h ? wait_end(h) : z->p[cur].first;
		interval(z, cur, from, t, &z->a);
		path_add(z, rank, &z->a);
		if (rank >= 0 && rank < out->nranks && t > from)
			out->on_path_ns[rank] += t - from, out->path_ns += t - from;
		if (!h)
			break;
		cur = h->delayer; /* from when it entered its late call, back */
		t = h->cause < from ? h->cause : from;
	}
	return z->err;
}

/* Each thread's activities beyond the path's time in them. */
static int off_path(struct an *z, struct ws_analysis *out)
{
	for (uint32_t k = 0; k < z->nlocs && !z->err; k++) {
		int32_t rank = BASE_AT(z->w->locs, struct loc, k)->rank;
		if (rank < 0 || rank >= out->nranks || !z->p[k].ncalls)
			continue;
		interval(z, k, z->p[k].first, z->p[k].last, &z->a);
		for (size_t i = 0; i < z->a.n; i++) {
			int64_t on = 0;
			for (size_t s = 0; s < z->path.n; s++) {
				const struct ws_share *x = BASE_AT(z->path, struct ws_share, s);
				if (x->key == z->a.v[i].key && x->phase == z->a.v[i].phase)
					on += (int64_t)x->ns;
			}
			if (z->a.v[i].ns > on)
				out->off_path_ns[rank] += (uint64_t)(z->a.v[i].ns - on);
		}
	}
	return z->err;
}

/* --- the whole -------------------------------------------------------------------------- */

static void an_free(struct an *z)
{
	for (size_t k = 0; z->p && k < z->nlocs; k++)
		free(z->p[k].own_calls ? z->p[k].calls : NULL), free(z->p[k].line), free(z->p[k].waits),
			free(z->p[k].syncs);
	free(z->p), free(z->phi), free(z->a.v), free(z->b.v);
	base_tab_free(&z->cost_ix), base_tab_free(&z->path_ix);
}

int ws_analyse(const ws *w, struct ws_analysis *out)
{
	*out = (struct ws_analysis){ 0 };
	if (!w->keep)
		return -EINVAL;
	struct an z = { .w = w, .hw = w->hwaits.v };
	z.costs.size = sizeof(struct ws_cost);
	z.path.size = sizeof(struct ws_share);
	out->nranks = ws_ranks(w);
	out->on_path_ns = calloc((size_t)out->nranks + 1, sizeof(uint64_t));
	out->off_path_ns = calloc((size_t)out->nranks + 1, sizeof(uint64_t));
	int rc = out->on_path_ns && out->off_path_ns ? prepare(&z) : -ENOMEM;
	if (!rc)
		rc = delays(&z, out);
	if (!rc)
		rc = walk_path(&z, out);
	if (!rc)
		rc = off_path(&z, out);
	out->costs = z.costs.v, out->ncosts = z.costs.n;
	out->path = z.path.v, out->npath = z.path.n;
	an_free(&z);
	return rc;
}

void ws_analysis_free(struct ws_analysis *a)
{
	free(a->costs), free(a->indirect_ns), free(a->path), free(a->on_path_ns), free(a->off_path_ns);
	*a = (struct ws_analysis){ 0 };
}
