/* waitfeed.c - an archive's events fed to the wait-state engine in each thread's order, with what only the archive knows: communicators, messages paired by their numbers. */
#include <errno.h>
#include <stdlib.h>

#include "archive/convert.h"

/*
 * The archive's events go to the engine each thread's in its order, the
 * threads merged by the events' ends: the engine needs only the first,
 * and the second keeps what it holds in flight (a message's end waiting
 * for the other) as small as the job's own, where the file's order (a
 * recorder's pull of each thread after another) would hold a pull's
 * worth.  What only the archive knows
 * goes with each: its communicator's id, size and this rank's rank in it
 * (an intercommunicator's collectives are not judged: its groups wait on
 * each other, not as one), the key both ends of a message share (the
 * lower of their event indices, as messages.c pairs them), its call site
 * as the caller keys them; a phase's name, as the caller keys it.  A
 * call that had not returned when the archive was made is not judged.
 */

static void resolve(const ar_archive *a, const struct es_trace *t, int rank, struct es_event *e)
{
	const struct ar_comm *c = t->comm == ES_COMM_NONE ? NULL : ar_comm(a, t->comm);
	if (!c || (c->flags & ES_COMMS_INTER))
		return;
	int me = ar_comm_rank(c, rank);
	if (me < 0)
		return;
	e->comm = c->id;
	e->members = c->size[0];
	e->me = (uint32_t)me;
}

bool ar_wait_event(const ar_archive *a, const struct ar_msgs *m, size_t i, const struct ar_wait_keys *k,
		   struct es_event *e)
{
	const struct ar_event *ev = &ar_events(a)[i];
	const struct es_trace *t = &ev->t;
	uint32_t th = ev->thread;
	int rank = (int)th < ar_nthreads(a) ? ar_thread(a, (int)th)->rank : -1;
	if (rank < 0 || (t->op & ES_OP_UNFINISHED))
		return false;
	*e = (struct es_event){ .start = t->start, .end = t->end, .loc = th, .rank = rank, .op = t->op,
				.peer = t->element, .arg = t->arg, .size = t->size, .msg = ES_EVENT_NO_MSG };
	resolve(a, t, rank, e);
	if (ar_is_phase(t) && k && k->phase) {
		char buf[32];
		e->site = k->phase(k->arg, ar_phase_name(a, (int)th, t, buf, sizeof(buf)));
	} else if (!ar_is_phase(t) && k && k->site) {
		e->site = k->site(k->arg, (int)th, t);
	}
	uint32_t o = m->other[i];
	if (o < AR_MSG_ALONE)
		e->msg = o < i ? o : i;
	return true;
}

/* A heap of threads by the end of their next event. */
struct head {
	uint64_t t;
	uint32_t thread, at;
};

static void sift(struct head *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && h[l].t < h[m].t)
			m = l;
		if (l + 1 < n && h[l + 1].t < h[m].t)
			m = l + 1;
		if (m == i)
			return;
		struct head x = h[i];
		h[i] = h[m], h[m] = x;
		i = m;
	}
}

int ar_waits_order(const ar_archive *a, uint32_t **out, size_t *n)
{
	int nt = ar_nthreads(a);
	size_t k = 0, nh = 0;
	struct head *h = malloc(sizeof(*h) * ((size_t)nt + 1));
	*out = malloc(sizeof(uint32_t) * (ar_nevents(a) + 1));
	if (!h || !*out) {
		free(h), free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	const struct ar_event *ev = ar_events(a);
	for (int t = 0; t < nt; t++) {
		const uint32_t *idx;
		if (ar_thread_events(a, t, &idx))
			h[nh++] = (struct head){ ev[idx[0]].t.end, (uint32_t)t, 0 };
	}
	for (size_t i = nh; i-- > 0;)
		sift(h, nh, i);
	while (nh) {
		const uint32_t *idx;
		size_t ne = ar_thread_events(a, (int)h[0].thread, &idx);
		(*out)[k++] = idx[h[0].at];
		if (++h[0].at < ne)
			h[0].t = ev[idx[h[0].at]].t.end;
		else
			h[0] = h[--nh];
		sift(h, nh, 0);
	}
	free(h);
	*n = k;
	return 0;
}

int ar_waits_feed(const ar_archive *a, const struct ar_msgs *given, ws *w, const struct ar_wait_keys *k)
{
	struct ar_msgs own = { 0 };
	const struct ar_msgs *m = given ? given : &own;
	uint32_t *order = NULL;
	size_t n = 0;
	int rc = !given && ar_msgs_match(a, &own) ? -ENOMEM : ar_waits_order(a, &order, &n);
	struct es_event e;
	for (size_t i = 0; i < n && !rc; i++)
		if (ar_wait_event(a, m, order[i], k, &e))
			rc = ws_event(w, &e);
	if (!rc)
		ws_flush(w, UINT64_MAX);
	free(order);
	ar_msgs_free(&own);
	return rc;
}
