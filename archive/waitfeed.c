/* waitfeed.c - an archive's events fed to the wait-state engine in each thread's order, with what only the archive knows: communicators, messages paired by their numbers. */
#include <errno.h>

#include "archive/convert.h"

/*
 * The archive's events go to the engine in the file's order, which keeps
 * each thread's (the engine needs no more).  What only the archive knows
 * goes with each: its communicator's id, size and this rank's rank in it
 * (an intercommunicator's collectives are not judged: its groups wait on
 * each other, not as one), the key both ends of a message share (the
 * lower of their event indices, as messages.c pairs them), its call site
 * as the caller keys them; a phase's name, as the caller keys it.  A
 * call that had not returned when the archive was made is not judged.
 */

static void resolve(const ar_archive *a, const struct es_trace *t, int rank, struct ws_event *e)
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

int ar_waits_feed(const ar_archive *a, ws *w, const struct ar_wait_keys *k)
{
	int nt = ar_nthreads(a), rc = 0;
	struct ar_msgs m = { 0 };
	if (ar_msgs_match(a, &m))
		return -ENOMEM;
	const struct ar_event *ev = ar_events(a);
	for (size_t i = 0, n = ar_nevents(a); i < n && !rc; i++) {
		const struct es_trace *t = &ev[i].t;
		uint32_t th = ev[i].thread;
		int rank = (int)th < nt ? ar_thread(a, (int)th)->rank : -1;
		if (rank < 0 || (t->op & ES_OP_UNFINISHED))
			continue;
		struct ws_event e = { .start = t->start, .end = t->end, .loc = th, .rank = rank, .op = t->op,
				      .peer = t->element, .arg = t->arg, .size = t->size, .msg = WS_MSG_NONE };
		resolve(a, t, rank, &e);
		if (ar_is_phase(t) && k && k->phase) {
			char buf[32];
			e.site = k->phase(k->arg, ar_phase_name(a, (int)th, t, buf, sizeof(buf)));
		} else if (!ar_is_phase(t) && k && k->site) {
			e.site = k->site(k->arg, (int)th, t);
		}
		uint32_t o = m.other[i];
		if (o < AR_MSG_ALONE)
			e.msg = o < i ? o : i;
		rc = ws_event(w, &e);
	}
	if (!rc)
		ws_flush(w, UINT64_MAX);
	ar_msgs_free(&m);
	return rc;
}

