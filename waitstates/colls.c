/* colls.c - collective wait states: each operation's members matched by communicator and number, then Wait at Barrier, N×N, Late Broadcast, Early Reduce, Early Scan, Wait at Fence and the completions. */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/*
 * A collective is judged when every member's call came (a nonblocking
 * one's: every member's post and the completion of its request), and is
 * forgotten then, or when ws_flush gives up on it.  Members are kept by
 * their rank in the communicator; waitstates.h has the formulas.
 */

enum family { F_NONE, F_BARRIER, F_NXN, F_1TON, F_NTO1, F_SCAN, F_FENCE };

static enum family family(unsigned code)
{
	if (code >= ES_OP_MPI_IBARRIER && code <= ES_OP_MPI_IEXSCAN)
		code -= 32; /* calls.def: a nonblocking collective is its blocking form + 32 */
	switch (code) {
	case ES_OP_MPI_BARRIER:
		return F_BARRIER;
	case ES_OP_MPI_ALLREDUCE: case ES_OP_MPI_ALLGATHER: case ES_OP_MPI_ALLGATHERV: case ES_OP_MPI_ALLTOALL:
	case ES_OP_MPI_ALLTOALLV: case ES_OP_MPI_ALLTOALLW: case ES_OP_MPI_REDUCE_SCATTER:
	case ES_OP_MPI_REDUCE_SCATTER_BLOCK:
		return F_NXN;
	case ES_OP_MPI_BCAST: case ES_OP_MPI_SCATTER: case ES_OP_MPI_SCATTERV:
		return F_1TON;
	case ES_OP_MPI_REDUCE: case ES_OP_MPI_GATHER: case ES_OP_MPI_GATHERV:
		return F_NTO1;
	case ES_OP_MPI_SCAN: case ES_OP_MPI_EXSCAN:
		return F_SCAN;
	case ES_OP_MPI_WIN_FENCE:
		return F_FENCE;
	default:
		return F_NONE;
	}
}

bool ws__is_coll(unsigned op)
{
	const struct es_op_info *in = es_op_info(op);
	return in && (in->kind == ES_KIND_COLL || in->kind == ES_KIND_ICOLL);
}

static struct coll *at(ws *w, uint32_t i)
{
	return BASE_AT(w->colls, struct coll, i);
}

static uint64_t coll_key(uint64_t comm, uint32_t num)
{
	return base_hash_fold(base_hash_fold(0x9ae16a3b2f90404full, comm), num);
}

/* The collective (comm, num), made when make; NIL when absent or no
 * memory, or when another has its key (64 bits: never seen). */
static uint32_t find(ws *w, const struct es_event *e, bool make)
{
	uint64_t k = coll_key(e->comm, e->arg);
	uint32_t *v = base_tab_get(&w->coll_ix, k);
	if (v)
		return at(w, *v)->comm == e->comm && at(w, *v)->num == e->arg ? *v : NIL;
	if (!make)
		return NIL;
	struct member *m = calloc(e->members, sizeof(*m));
	uint32_t i = w->coll_free;
	if (m && i == NIL && base_vec_push(&w->colls))
		i = (uint32_t)(w->colls.n - 1);
	else if (m && i != NIL)
		w->coll_free = at(w, i)->next_free;
	if (!m || i == NIL || base_tab_set32(&w->coll_ix, k, i) < 0) {
		if (m && i != NIL)
			at(w, i)->m = NULL, at(w, i)->next_free = w->coll_free, w->coll_free = i;
		free(m);
		return NIL;
	}
	*at(w, i) = (struct coll){ .key = k, .born = e->end, .comm = e->comm, .num = e->arg, .members = e->members,
				   .root = ES_NONE, .op = (uint16_t)es_op_code(e->op),
				   .nb = es_op_info(e->op)->kind == ES_KIND_ICOLL, .m = m, .next_free = NIL };
	return i;
}

static void forget(ws *w, uint32_t i)
{
	struct coll *c = at(w, i);
	base_tab_del(&w->coll_ix, c->key);
	free(c->m);
	c->m = NULL;
	c->comm = 0;
	c->next_free = w->coll_free;
	w->coll_free = i;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Member i's wait for `until` from `from`, capped by its call's end. */
static uint64_t waited(ws *w, uint64_t from, uint64_t until, uint64_t end)
{
	w->st.clock_violations += until > end;
	until = min64(until, end);
	return until > from ? until - from : 0;
}

static int root_of(const struct coll *c)
{
	for (uint32_t i = 0; i < c->members; i++)
		if ((uint32_t)c->m[i].rank == c->root)
			return (int)i;
	return -1;
}

/* The member that began last among 0 .. upto, and when. */
static uint32_t latest(const struct coll *c, uint32_t upto)
{
	uint32_t k = 0;
	for (uint32_t i = 1; i <= upto && i < c->members; i++)
		k = c->m[i].b > c->m[k].b ? i : k;
	return k;
}

/* Who member i waited for, and till when: NIL when it did not wait by
 * its pattern (a root that does not wait, a rooted one without its root). */
static uint32_t waited_for(const struct coll *c, enum family f, uint32_t i, int r)
{
	switch (f) {
	case F_BARRIER: case F_NXN: case F_FENCE:
		return latest(c, c->members - 1);
	case F_1TON:
		return r >= 0 && (int)i != r && c->m[r].size ? (uint32_t)r : NIL;
	case F_NTO1:
		return (int)i == r ? latest(c, c->members - 1) : NIL;
	case F_SCAN:
		return latest(c, i);
	case F_NONE:
		break;
	}
	return NIL;
}

static const enum ws_pattern pattern_of[] = { [F_BARRIER] = WS_WAIT_BARRIER, [F_NXN] = WS_WAIT_NXN,
					      [F_1TON] = WS_LATE_BROADCAST, [F_NTO1] = WS_EARLY_REDUCE,
					      [F_SCAN] = WS_EARLY_SCAN, [F_FENCE] = WS_WAIT_FENCE };

static void judge_blocking(ws *w, struct coll *c, enum family f)
{
	uint64_t lb = c->m[latest(c, c->members - 1)].b, fe = UINT64_MAX;
	for (uint32_t i = 0; i < c->members; i++)
		fe = min64(fe, c->m[i].e);
	int r = root_of(c);
	for (uint32_t i = 0; i < c->members; i++) {
		const struct member *m = &c->m[i];
		const struct loc *l = ws__loc(w, m->loc);
		if (f == F_BARRIER || f == F_NXN) {
			uint64_t from = min64(lb, m->e) > fe ? min64(lb, m->e) : fe;
			ws__add(w, f == F_BARRIER ? WS_BARRIER_COMPLETION : WS_NXN_COMPLETION, m->rank, m->site, c->op, 0,
				m->e > from ? m->e - from : 0);
		}
		uint32_t k = waited_for(c, f, i, r);
		if (k == NIL || !l)
			continue;
		uint64_t ns = f == F_FENCE ? (fe > lb ? lb - m->b : 0) : waited(w, m->b, c->m[k].b, m->e);
		ws__wait(w, pattern_of[f], l, m->loc, m->site, c->op, 0, m->b, ns, c->m[k].loc, c->m[k].b);
	}
}

/* A nonblocking collective: each member's wait W_i for the latest post P
 * it could not complete without: min(P, L(W_i)) − E(W_i). */
static void judge_nonblocking(ws *w, struct coll *c, enum family f)
{
	int r = root_of(c);
	for (uint32_t i = 0; i < c->members; i++) {
		const struct member *m = &c->m[i];
		const struct loc *l = ws__loc(w, m->loc);
		if (!m->waited || m->by_test) {
			w->st.by_test += m->by_test;
			continue;
		}
		uint32_t k = f == F_FENCE ? NIL : waited_for(c, f, i, r);
		if (k != NIL && l)
			ws__wait(w, pattern_of[f], l, m->loc, m->wsite, m->wop, c->op, m->wb,
				 waited(w, m->wb, c->m[k].b, m->we), c->m[k].loc, c->m[k].b);
	}
}

static int by_loc(const void *a, const void *b)
{
	const struct hmember *x = a, *y = b;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

/* The members as they left it, for ws_analyse's synchronization intervals. */
static void keep(ws *w, const struct coll *c)
{
	size_t first = w->hmembers.n;
	struct hcoll *h = base_vec_push(&w->hcolls);
	for (uint32_t i = 0; h && i < c->members; i++) {
		struct hmember *m = base_vec_push(&w->hmembers);
		if (!m) {
			w->hcolls.n--;
			w->hmembers.n = first;
			return;
		}
		*m = (struct hmember){ c->m[i].loc, c->nb && c->m[i].waited && !c->m[i].by_test ? c->m[i].we : c->m[i].e };
	}
	if (!h)
		return;
	*h = (struct hcoll){ (uint32_t)first, c->members };
	qsort(BASE_AT(w->hmembers, struct hmember, first), c->members, sizeof(struct hmember), by_loc);
}

static void judge_if_whole(ws *w, uint32_t i)
{
	struct coll *c = at(w, i);
	if (c->came < c->members || (c->nb && c->done_waits < c->members))
		return;
	enum family f = family(c->op);
	w->st.colls++;
	if (c->nb)
		judge_nonblocking(w, c, f);
	else
		judge_blocking(w, c, f);
	if (w->keep)
		keep(w, c);
	forget(w, i);
}

int ws__coll(ws *w, const struct es_event *e)
{
	if (family(es_op_code(e->op)) == F_NONE) {
		w->st.not_analysed++;
		return 0;
	}
	if (!e->comm || e->members <= 1 || e->me >= e->members || (e->op & (ES_OP_FAILED | ES_OP_UNFINISHED)))
		return 0;
	uint32_t i = find(w, e, true);
	if (i == NIL)
		return -ENOMEM;
	struct coll *c = at(w, i);
	struct member *m = &c->m[e->me];
	if (m->in)
		return 0; /* the same member twice: a reader's repeat, not a new call */
	*m = (struct member){ .b = e->start, .e = e->end, .site = e->site, .rank = e->rank, .size = e->size,
			      .loc = e->loc, .in = true };
	c->came++;
	if (e->peer != ES_NONE)
		c->root = e->peer;
	judge_if_whole(w, i);
	return 0;
}

int ws__coll_done(ws *w, const struct es_event *d, const struct es_event *wait)
{
	if (family(es_op_code(d->op)) == F_NONE || !d->comm || d->members <= 1 || d->me >= d->members)
		return 0;
	uint32_t i = find(w, d, false);
	if (i == NIL)
		return 0; /* its post was not seen (or judged without it): nothing to judge it by */
	struct member *m = &at(w, i)->m[d->me];
	if (m->waited)
		return 0;
	const struct es_op_info *in = wait ? es_op_info(wait->op) : NULL;
	m->waited = true;
	m->by_test = !in || in->kind != ES_KIND_WAIT || (d->op & ES_OP_FAILED);
	if (wait)
		m->wb = wait->start, m->we = wait->end, m->wsite = wait->site, m->wop = (uint16_t)es_op_code(wait->op);
	at(w, i)->done_waits++;
	judge_if_whole(w, i);
	return 0;
}

void ws__coll_flush(ws *w, uint64_t before)
{
	for (uint32_t i = 0; i < w->colls.n; i++)
		if (at(w, i)->m && at(w, i)->born < before) {
			w->st.incomplete++;
			forget(w, i);
		}
}

void ws__coll_free(ws *w)
{
	for (uint32_t i = 0; i < w->colls.n; i++)
		free(at(w, i)->m);
	base_vec_free(&w->colls);
	base_tab_free(&w->coll_ix);
}
