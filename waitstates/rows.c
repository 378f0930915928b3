/* rows.c - what the patterns' files add to: the rows of waits, the waits kept with who caused them, each thread's state, the engine's vectors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The engine (engine.c) hands events to the patterns' files (p2p.c,
 * colls.c, gats.c); they add what they find here, and call nothing of the
 * engine's, so that data goes one way: engine -> patterns -> rows. */

struct loc *ws__loc(ws *w, uint32_t n)
{
	while (w->locs.n <= n) {
		struct loc *l = base_vec_push(&w->locs);
		if (!l)
			return NULL;
		l->rank = -1;
		l->calls.size = sizeof(struct call);
		l->hcalls.size = sizeof(struct hcall);
		l->hphases.size = sizeof(struct hphase);
		l->items.size = sizeof(struct item);
		l->dones.size = sizeof(struct done);
		l->tops.size = sizeof(struct span);
	}
	return BASE_AT(w->locs, struct loc, n);
}

static uint64_t row_key(enum ws_pattern p, int32_t rank, uint32_t site, uint16_t op, uint16_t of)
{
	uint64_t h = base_hash_fold(0xcbf29ce484222325ull, p);
	h = base_hash_fold(h, (uint32_t)rank);
	h = base_hash_fold(h, site);
	return base_hash_fold(h, (uint64_t)op << 16 | of);
}

/* Adds a wait of ns to its row.  A row is found by a hash of its fields:
 * the rows are few (patterns x sites x ranks), so a collision is looked
 * past, never merged. */
uint32_t ws__add(ws *w, enum ws_pattern p, int32_t rank, uint32_t site, uint16_t op, uint16_t of, uint64_t ns)
{
	if (!ns)
		return NIL;
	uint64_t k = row_key(p, rank, site, op, of);
	for (uint64_t probe = k;; probe = base_hash_fold(probe, 1)) {
		uint32_t *v = base_tab_get(&w->row_ix, probe);
		struct ws_row *r;
		if (!v) {
			if (!(r = base_vec_push(&w->rows)))
				return NIL;
			if (base_tab_set32(&w->row_ix, probe, (uint32_t)(w->rows.n - 1)) < 0) {
				w->rows.n--;
				return NIL;
			}
			*r = (struct ws_row){ .pattern = (uint8_t)p, .op = op, .of = of, .rank = rank, .site = site };
		} else {
			r = BASE_AT(w->rows, struct ws_row, *v);
			if (r->pattern != p || r->rank != rank || r->site != site || r->op != op || r->of != of)
				continue;
		}
		r->ns += ns;
		r->count++;
		if (ns > r->worst_ns)
			r->worst_ns = ns;
		return (uint32_t)(r - (struct ws_row *)w->rows.v);
	}
}

void ws__wait(ws *w, enum ws_pattern p, const struct loc *l, uint32_t loc, uint32_t site, uint16_t op, uint16_t of,
	      uint64_t from, uint64_t ns, uint32_t delayer, uint64_t cause)
{
	uint32_t row = ws__add(w, p, l->rank, site, op, of, ns);
	struct ws_wait *h;
	if (row == NIL || !(w->keep || w->keep_waits) || delayer == NIL || !(h = base_vec_push(&w->hwaits)))
		return;
	*h = (struct ws_wait){ .from = from, .ns = ns, .cause = cause, .row = row, .waiter = loc, .delayer = delayer };
}


static int by_row_delayer(const void *a, const void *b)
{
	const struct ws_wait *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->delayer < y->delayer ? -1 : x->delayer > y->delayer;
}

int ws_causers(const ws *w, uint32_t *out)
{
	size_t n = w->hwaits.n, nr = w->rows.n;
	struct ws_wait *v = n ? malloc(sizeof(*v) * n) : NULL;
	uint64_t *best = nr ? calloc(nr, sizeof(*best)) : NULL;
	if ((n && !v) || (nr && !best)) {
		free(v), free(best);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		out[i] = UINT32_MAX;
	if (n) {
		memcpy(v, w->hwaits.v, sizeof(*v) * n);
		qsort(v, n, sizeof(*v), by_row_delayer);
	}
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum = i && v[i].row == v[i - 1].row && v[i].delayer == v[i - 1].delayer ? sum + v[i].ns : v[i].ns;
		if (v[i].row < nr && sum > best[v[i].row])
			best[v[i].row] = sum, out[v[i].row] = v[i].delayer;
	}
	free(v), free(best);
	return 0;
}
