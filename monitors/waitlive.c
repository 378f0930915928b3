/* waitlive.c - the wait-state engine fed live the resolver's events (resolve.c): each period's wait states and who caused them, call sites named. */
#define _GNU_SOURCE /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waitlive.h"

/*
 * The live resolver (resolve.c) makes each tuple an event; this keeps the
 * engine those events are fed to, and says each period what it found.  A
 * wait that waits past WL_HORIZON_S for its other end is given up.
 */
#define HORIZON_NS (WL_HORIZON_S * 1000000000ull)

struct name { /* a thread's call site, named once */
	char *s;
};
struct wl {
	ws *w;
	uint64_t *prev;  /* each row's ns at the last period */
	size_t nprev;
	uint64_t prev_mpi;
	int32_t *rank_of; /* by scope thread */
	size_t nthreads;
	struct base_tab names; /* (thread, site) -> struct name */
	char unnamed[600]; /* a name not kept, until the next call */
};

int wl_create(wl **out)
{
	wl *l = calloc(1, sizeof(*l));
	if (!l || ws_create(&l->w)) {
		if (l)
			ws_destroy(l->w);
		free(l);
		return -ENOMEM;
	}
	ws_keep_waits(l->w);
	base_tab_init(&l->names, sizeof(struct name));
	*out = l;
	return 0;
}

void wl_destroy(wl *l)
{
	if (!l)
		return;
	ws_destroy(l->w);
	struct name *n;
	for (size_t at = 0; (n = base_tab_next(&l->names, &at, NULL));)
		free(n->s);
	base_tab_free(&l->names);
	free(l->prev), free(l->rank_of);
	free(l);
}

const ws *wl_engine(const wl *l)
{
	return l->w;
}

int wl_event(wl *l, const struct es_event *e)
{
	if (e->rank < 0)
		return 0;
	if ((size_t)e->loc >= l->nthreads) {
		size_t n = (size_t)e->loc + 16;
		int32_t *v = realloc(l->rank_of, sizeof(*v) * n);
		if (!v)
			return -ENOMEM;
		for (size_t i = l->nthreads; i < n; i++)
			v[i] = -1;
		l->rank_of = v, l->nthreads = n;
	}
	l->rank_of[e->loc] = e->rank;
	return ws_event(l->w, e);
}

static int by_ns(const void *a, const void *b)
{
	const struct wl_row *x = a, *y = b;
	return x->ns > y->ns ? -1 : x->ns < y->ns;
}

int wl_period(wl *l, uint64_t now_ns, struct wl_period *out)
{
	*out = (struct wl_period){ 0 };
	ws_flush(l->w, now_ns == UINT64_MAX ? UINT64_MAX : now_ns > HORIZON_NS ? now_ns - HORIZON_NS : 0);
	const struct ws_row *rows;
	size_t n = ws_rows(l->w, &rows);
	if (n > l->nprev) {
		uint64_t *p = realloc(l->prev, sizeof(*p) * n);
		if (!p)
			return -ENOMEM;
		memset(p + l->nprev, 0, sizeof(*p) * (n - l->nprev));
		l->prev = p, l->nprev = n;
	}
	uint32_t *slot_of = malloc(sizeof(uint32_t) * (n + 1));
	out->rows = malloc(sizeof(*out->rows) * (n + 1));
	if (!slot_of || !out->rows) {
		free(slot_of), wl_period_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t d = rows[i].ns - l->prev[i];
		l->prev[i] = rows[i].ns;
		slot_of[i] = UINT32_MAX;
		if (!d)
			continue;
		slot_of[i] = (uint32_t)out->n;
		out->rows[out->n++] = (struct wl_row){ rows[i].pattern, rows[i].op, rows[i].of, rows[i].rank, -1,
						       (int)(rows[i].site >> 16), (uint16_t)rows[i].site, d };
		out->ns[rows[i].pattern] += d;
	}
	const struct ws_wait *k;
	size_t nk = ws_waits(l->w, &k);
	uint32_t *by = malloc(sizeof(*by) * (n + 1)); /* the period's waits' causers, by row */
	out->waits = nk ? malloc(sizeof(*out->waits) * nk) : NULL;
	for (size_t i = 0; out->waits && i < nk; i++)
		out->waits[out->nwaits++] = (struct wl_wait){ (int)k[i].waiter,
							      k[i].waiter < l->nthreads ? l->rank_of[k[i].waiter] : -1,
							      k[i].from, k[i].ns, rows[k[i].row].pattern };
	bool known = by && !ws_causers(l->w, by);
	for (size_t i = 0; known && i < n; i++)
		if (slot_of[i] != UINT32_MAX && by[i] < l->nthreads)
			out->rows[slot_of[i]].by = l->rank_of[by[i]];
	free(by), free(slot_of);
	ws_waits_clear(l->w);
	qsort(out->rows, out->n, sizeof(*out->rows), by_ns);
	uint64_t mpi = 0;
	for (int r = 0; r < ws_ranks(l->w); r++)
		mpi += ws_mpi_ns(l->w, r);
	out->mpi_ns = mpi - l->prev_mpi;
	l->prev_mpi = mpi;
	return 0;
}

void wl_period_free(struct wl_period *p)
{
	free(p->rows), free(p->waits);
	*p = (struct wl_period){ 0 };
}

static int by_place(const void *a, const void *b)
{
	const struct wl_place *x = a, *y = b;
	if (x->pattern != y->pattern || x->rank != y->rank || x->op != y->op || x->of != y->of)
		return x->pattern != y->pattern ? x->pattern - y->pattern : x->rank != y->rank ? (x->rank < y->rank ? -1 : 1)
		       : x->op != y->op ? x->op - y->op : x->of - y->of;
	return strcmp(x->where, y->where);
}

static int by_place_ns(const void *a, const void *b)
{
	const struct wl_place *x = a, *y = b;
	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) : by_place(a, b);
}

int wl_places(wl *l, es_mpi *mpi, ar_symbols *sym, struct wl_place **out, size_t *n)
{
	const struct ws_row *r;
	size_t nr = ws_rows(l->w, &r), k = 0;
	struct wl_place *p = calloc(nr + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		int thread = (int)(r[i].site >> 16);
		p[k] = (struct wl_place){ r[i].pattern, r[i].op, r[i].of, r[i].rank,
					  strdup(wl_name(l, mpi, sym, thread, r[i].rank, (uint16_t)r[i].site)), r[i].ns,
					  r[i].count };
		if (!p[k++].where)
			return wl_places_free(p, k), -ENOMEM;
	}
	qsort(p, k, sizeof(*p), by_place);
	size_t m = 0; /* merged: a rank's threads at one site */
	for (size_t i = 0; i < k; i++) {
		if (m && !by_place(&p[m - 1], &p[i])) {
			p[m - 1].ns += p[i].ns, p[m - 1].count += p[i].count;
			free(p[i].where);
		} else {
			p[m++] = p[i];
		}
	}
	qsort(p, m, sizeof(*p), by_place_ns);
	*out = p, *n = m;
	return 0;
}

void wl_places_free(struct wl_place *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		free(p[i].where);
	free(p);
}

void wl_site_name(ar_symbols *sym, const struct es_site_rec *sites, int n, const struct es_module_rec *mods, int nm,
		  uint16_t s, char *buf, size_t len)
{
	snprintf(buf, len, "site %u", s);
	if (n <= s || !sites[s].frames)
		return;
	uint64_t pc = sites[s].pc[0];
	for (int i = 0; i < nm; i++) {
		if (pc < mods[i].base || pc >= mods[i].end)
			continue;
		struct ar_symbol sy;
		const char *base = strrchr(mods[i].path, '/');
		base = base ? base + 1 : mods[i].path;
		if (sym && !ar_symbols_lookup(sym, mods[i].path, pc - mods[i].base, &sy) && sy.function)
			snprintf(buf, len, sy.file && sy.line ? "%s (%s:%d)" : "%s (%s)", sy.function,
				 sy.file && sy.line ? sy.file : base, sy.line);
		else
			snprintf(buf, len, "%.200s+0x%llx", base, (unsigned long long)(pc - mods[i].base));
		return;
	}
}

const char *wl_name(wl *l, es_mpi *mpi, ar_symbols *sym, int thread, int rank, uint16_t site)
{
	uint64_t k = (uint64_t)(uint32_t)thread << 16 | site;
	struct name *n = base_tab_put(&l->names, k, NULL);
	if (n && n->s)
		return n->s;
	const struct es_site_rec *sites = NULL;
	const struct es_module_rec *mods = NULL;
	int ns = mpi ? es_mpi_sites(mpi, thread, &sites) : 0, nm = mpi ? es_mpi_modules(mpi, rank, &mods) : 0;
	char buf[600];
	wl_site_name(sym, sites, ns, mods, nm, site, buf, sizeof(buf));
	if (n && site < ns && sites[site].frames) /* a site not on its board yet is looked up again */
		n->s = strdup(buf);
	return n && n->s ? n->s : (snprintf(l->unnamed, sizeof(l->unnamed), "%s", buf), l->unnamed);
}
