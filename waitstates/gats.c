/* gats.c - one-sided general active target synchronization: Late Post (an origin waits for its targets' MPI_Win_post) and Early Wait (a target waits in MPI_Win_wait for its origins' MPI_Win_complete). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/*
 * An origin's access epoch (MPI_Win_start ... MPI_Win_complete) and a
 * target's exposure epoch (MPI_Win_post ... MPI_Win_wait) name each other
 * in their groups (the group marks after the calls, collectors.h); the
 * k-th access epoch of origin o to target t on a window meets the k-th
 * exposure epoch of t to o there.  Each (window, o, t) has two channels:
 * POSTS carries t's MPI_Win_post enters to o's access epochs, COMPLETES
 * o's MPI_Win_complete enters to t's exposure epochs; a channel queues
 * whichever side comes first, times or epochs waiting for them.
 *
 *  - Late Post (Scalasca's): P the latest post of the epoch's targets; if
 *    E(complete) < P < L(complete), the origin waited P − E(complete) in
 *    MPI_Win_complete; else if E(start) < P < L(start), P − E(start) in
 *    MPI_Win_start (an MPI whose start blocks).
 *  - Early Wait: C the latest complete of the epoch's origins; the target
 *    waited min(C, L(wait)) − E(wait) when C > E(wait).
 * An epoch ended by MPI_Win_test is not judged.  Invariants: an epoch is
 * freed once judged or flushed, and its generation moves on, so that a
 * channel's queued reference to it is recognised as stale.
 */

enum { POSTS, COMPLETES };

struct epoch {
	uint64_t win, born;
	uint32_t *targets, n, cap; /* an access epoch's targets' world ranks */
	uint64_t e_open, l_open; /* MPI_Win_start's or MPI_Win_post's enter, leave */
	uint64_t e_end, l_end;   /* MPI_Win_complete's or MPI_Win_wait's */
	uint64_t last;           /* the latest partner's time so far */
	uint32_t loc, last_loc, site_open, site_end, members, got, gen, next_free;
	uint16_t op_open, op_end;
	bool post, open, ended, test, live;
};

/* A channel's queue: times (with the partner's thread) or epochs waiting. */
struct qent {
	uint64_t t;
	uint32_t loc, epoch, gen, next;
	bool is_epoch;
};
struct chanq {
	uint32_t head, tail;
};

struct gats {
	struct base_vec epochs, q, chans;
	uint32_t free_epoch, free_q;
	struct base_tab chan_ix, current; /* (window, o, t, channel) -> chans; (thread, window, kind) -> epoch */
};

static struct gats *g_of(ws *w)
{
	if (!w->gats && (w->gats = calloc(1, sizeof(struct gats)))) {
		w->gats->epochs.size = sizeof(struct epoch);
		w->gats->q.size = sizeof(struct qent);
		w->gats->chans.size = sizeof(struct chanq);
		w->gats->free_epoch = w->gats->free_q = NIL;
	}
	return w->gats;
}

static struct epoch *ep(struct gats *g, uint32_t i)
{
	return BASE_AT(g->epochs, struct epoch, i);
}

static uint64_t current_key(uint32_t loc, uint64_t win, bool post)
{
	return base_hash_fold(base_hash_fold(base_hash_fold(0x67617473ull, loc), win), post);
}

static uint64_t chan_key(uint64_t win, uint32_t o, uint32_t t, int kind)
{
	return base_hash_fold(base_hash_fold(base_hash_fold(base_hash_fold(0x6368616eull, win), o), t), (uint64_t)kind);
}

static void free_epoch(struct gats *g, uint32_t i)
{
	struct epoch *e = ep(g, i);
	free(e->targets);
	e->targets = NULL;
	e->live = false;
	e->gen++;
	e->next_free = g->free_epoch;
	g->free_epoch = i;
}

static void judge(ws *w, struct gats *g, uint32_t i)
{
	struct epoch *e = ep(g, i);
	if (!e->ended || e->open || e->got < e->members)
		return;
	const struct loc *l = ws__loc(w, e->loc);
	uint64_t p = e->last;
	if (e->test || !l) {
		w->st.by_test += e->test;
	} else if (!e->post) { /* Late Post */
		if (e->e_end < p && p < e->l_end)
			ws__wait(w, WS_LATE_POST, l, e->loc, e->site_end, e->op_end, 0, e->e_end, p - e->e_end, e->last_loc, p);
		else if (e->e_open < p && p < e->l_open)
			ws__wait(w, WS_LATE_POST, l, e->loc, e->site_open, e->op_open, 0, e->e_open, p - e->e_open,
				 e->last_loc, p);
	} else if (p > e->e_end) { /* Early Wait */
		uint64_t until = p < e->l_end ? p : e->l_end;
		ws__wait(w, WS_EARLY_WAIT, l, e->loc, e->site_end, e->op_end, 0, e->e_end, until - e->e_end, e->last_loc, p);
	}
	w->st.colls++;
	free_epoch(g, i);
}

static void deliver(ws *w, struct gats *g, uint32_t i, uint64_t t, uint32_t from)
{
	struct epoch *e = ep(g, i);
	e->got++;
	if (t >= e->last)
		e->last = t, e->last_loc = from;
	judge(w, g, i);
}

/* One side of channel (win, o, t, kind): a time from thread `from`, or an
 * epoch waiting for one (epoch != NIL); met with what the other queued. */
static int meet(ws *w, struct gats *g, uint64_t key, uint64_t t, uint32_t from, uint32_t epoch)
{
	uint32_t *v = base_tab_get(&g->chan_ix, key);
	struct chanq *c;
	if (!v) {
		if (!(c = base_vec_push(&g->chans)) || base_tab_set32(&g->chan_ix, key, (uint32_t)(g->chans.n - 1)) < 0)
			return -ENOMEM;
		c->head = c->tail = NIL;
	} else {
		c = BASE_AT(g->chans, struct chanq, *v);
	}
	while (c->head != NIL) { /* stale epochs (flushed) first out */
		struct qent *q = BASE_AT(g->q, struct qent, c->head);
		if (!q->is_epoch || (ep(g, q->epoch)->live && ep(g, q->epoch)->gen == q->gen))
			break;
		uint32_t n = q->next;
		q->next = g->free_q, g->free_q = c->head, c->head = n;
	}
	struct qent *h = c->head == NIL ? NULL : BASE_AT(g->q, struct qent, c->head);
	if (h && h->is_epoch != (epoch != NIL)) { /* the other side waits: take it */
		uint32_t hi = c->head;
		c->head = h->next;
		h->next = g->free_q, g->free_q = hi;
		if (epoch == NIL)
			deliver(w, g, h->epoch, t, from);
		else
			deliver(w, g, epoch, h->t, h->loc);
		return 0;
	}
	uint32_t qi = g->free_q;
	if (qi != NIL)
		g->free_q = BASE_AT(g->q, struct qent, qi)->next;
	else if (base_vec_push(&g->q))
		qi = (uint32_t)(g->q.n - 1);
	else
		return -ENOMEM;
	*BASE_AT(g->q, struct qent, qi) = (struct qent){ t, from, epoch, epoch == NIL ? 0 : ep(g, epoch)->gen, NIL,
						     epoch != NIL };
	c = BASE_AT(g->chans, struct chanq, *(uint32_t *)base_tab_get(&g->chan_ix, key));
	if (c->tail != NIL && c->head != NIL)
		BASE_AT(g->q, struct qent, c->tail)->next = qi;
	else
		c->head = qi;
	c->tail = qi;
	return 0;
}

int ws__gats_open(ws *w, const struct es_event *e)
{
	struct gats *g = g_of(w);
	if (!g || !e->comm)
		return g ? 0 : -ENOMEM;
	uint32_t i = g->free_epoch;
	if (i != NIL)
		g->free_epoch = ep(g, i)->next_free;
	else if (base_vec_push(&g->epochs))
		i = (uint32_t)(g->epochs.n - 1);
	else
		return -ENOMEM;
	struct epoch *x = ep(g, i);
	uint32_t gen = x->gen;
	*x = (struct epoch){ .win = e->comm, .born = e->end, .e_open = e->start, .l_open = e->end, .loc = e->loc,
			     .last_loc = NIL, .site_open = e->site, .gen = gen, .op_open = (uint16_t)es_op_code(e->op),
			     .post = es_op_code(e->op) == ES_OP_MPI_WIN_POST, .open = true, .live = true };
	return base_tab_set32(&g->current, current_key(e->loc, e->comm, x->post), i);
}

/* A group mark: a member of the thread's epoch just opened. */
int ws__gats_member(ws *w, const struct es_event *e)
{
	struct gats *g = w->gats;
	uint32_t *v = g ? base_tab_get(&g->current, current_key(e->loc, e->comm, e->arg == ES_OP_MPI_WIN_POST)) : NULL;
	if (!v || !ep(g, *v)->open)
		return 0;
	struct epoch *x = ep(g, *v);
	uint32_t me = (uint32_t)ws__loc(w, e->loc)->rank;
	x->members++;
	/* a post meets its origins' access epochs (POSTS) and waits for their completes */
	if (x->post) {
		uint32_t i = *v;
		int rc = meet(w, g, chan_key(e->comm, e->peer, me, POSTS), x->e_open, e->loc, NIL);
		return rc ? rc : meet(w, g, chan_key(e->comm, e->peer, me, COMPLETES), 0, NIL, i);
	}
	if (x->n == x->cap) {
		uint32_t cap = x->cap ? x->cap * 2 : 4, *t = realloc(x->targets, sizeof(*t) * cap);
		if (!t)
			return -ENOMEM;
		x->targets = t, x->cap = cap;
	}
	x->targets[x->n++] = e->peer;
	return meet(w, g, chan_key(e->comm, me, e->peer, POSTS), 0, NIL, *v);
}

/* MPI_Win_complete, MPI_Win_wait or MPI_Win_test ended the thread's epoch
 * on the window (its group marks all came before): an access epoch's
 * complete goes to its targets' exposure epochs; the epoch is judged once
 * its partners' times are all in. */
int ws__gats_end(ws *w, const struct es_event *e)
{
	struct gats *g = w->gats;
	unsigned code = es_op_code(e->op);
	bool post = code == ES_OP_MPI_WIN_WAIT || code == ES_OP_MPI_WIN_TEST;
	uint32_t *v = g && e->comm ? base_tab_get(&g->current, current_key(e->loc, e->comm, post)) : NULL;
	if (!v)
		return 0;
	uint32_t i = *v;
	base_tab_del(&g->current, current_key(e->loc, e->comm, post));
	struct epoch *x = ep(g, i);
	x->open = false, x->ended = true, x->test = code == ES_OP_MPI_WIN_TEST;
	x->e_end = e->start, x->l_end = e->end, x->site_end = e->site, x->op_end = (uint16_t)code;
	uint32_t me = (uint32_t)ws__loc(w, e->loc)->rank, gen = x->gen;
	int rc = 0;
	for (uint32_t k = 0; !post && !rc && k < ep(g, i)->n; k++) /* meet may grow the epochs: no pointer kept */
		rc = meet(w, g, chan_key(e->comm, me, ep(g, i)->targets[k], COMPLETES), e->start, e->loc, NIL);
	if (ep(g, i)->live && ep(g, i)->gen == gen)
		judge(w, g, i);
	return rc;
}

void ws__gats_flush(ws *w, uint64_t before)
{
	struct gats *g = w->gats;
	if (!g)
		return;
	for (uint32_t i = 0; i < g->epochs.n; i++)
		if (ep(g, i)->live && ep(g, i)->born < before) {
			w->st.incomplete++;
			free_epoch(g, i);
		}
	for (uint32_t c = 0; c < g->chans.n; c++) { /* times no epoch came for, oldest first */
		struct chanq *q = BASE_AT(g->chans, struct chanq, c);
		while (q->head != NIL) {
			struct qent *h = BASE_AT(g->q, struct qent, q->head);
			bool stale = h->is_epoch ? !ep(g, h->epoch)->live || ep(g, h->epoch)->gen != h->gen : h->t < before;
			if (!stale)
				break;
			uint32_t n = h->next;
			h->next = g->free_q, g->free_q = q->head, q->head = n;
		}
	}
	if (before == UINT64_MAX)
		base_tab_free(&g->current);
}

void ws__gats_free(ws *w)
{
	struct gats *g = w->gats;
	if (!g)
		return;
	for (uint32_t i = 0; i < g->epochs.n; i++)
		free(ep(g, i)->targets);
	base_vec_free(&g->epochs), base_vec_free(&g->q), base_vec_free(&g->chans);
	base_tab_free(&g->chan_ix), base_tab_free(&g->current);
	free(g);
	w->gats = NULL;
}
