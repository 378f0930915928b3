/* waits.c - an archive's wait states for the profile: its events fed to the waitstates engine in each thread's order, messages paired by their numbers, call sites the profile's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive/profile.h"

/*
 * The archive's events go to the engine in the file's order, which keeps
 * each thread's (the engine needs no more).  What only the archive knows
 * goes with each: its communicator's id, size and this rank's rank in it
 * (an intercommunicator's collectives are not judged: its groups wait on
 * each other, not as one), the key both ends of a message share (the
 * lower of their event indices, as messages.c pairs them), its call site
 * as the profile numbers them; a phase's name, as a key of its own.  A
 * call that had not returned when the archive was made is not judged.
 * The engine keeps what the delay analysis and the critical path need.
 */

/* A phase name's key (its index + 1; names are few), 0 when no memory. */
static uint32_t phase_key(struct prof *p, const char *name)
{
	for (size_t i = 0; i < p->nphase_names; i++)
		if (!strcmp(p->phase_names[i], name))
			return (uint32_t)i + 1;
	char **v = realloc(p->phase_names, sizeof(*v) * (p->nphase_names + 1));
	if (!v)
		return 0;
	p->phase_names = v;
	if (!(v[p->nphase_names] = strdup(name)))
		return 0;
	return (uint32_t)++p->nphase_names;
}

const char *prof_phase_name(const struct prof *p, uint32_t key)
{
	return key && key <= p->nphase_names ? p->phase_names[key - 1] : "(outside phases)";
}

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

int prof_waits(struct prof *p)
{
	const ar_archive *a = p->a;
	int nt = ar_nthreads(a), rc = ws_create(&p->waits);
	struct ar_msgs m = { 0 };
	if (!rc)
		ws_keep(p->waits);
	uint32_t **cache = calloc((size_t)nt + 1, sizeof(*cache));
	if (!rc)
		rc = cache ? ar_msgs_match(a, &m) : -ENOMEM;
	const struct ar_event *ev = ar_events(a);
	for (size_t i = 0, n = ar_nevents(a); i < n && !rc; i++) {
		const struct es_trace *t = &ev[i].t;
		uint32_t th = ev[i].thread;
		int rank = (int)th < nt ? ar_thread(a, (int)th)->rank : -1;
		if (rank < 0 || (t->op & ES_OP_UNFINISHED))
			continue;
		if (!cache[th] && !(cache[th] = calloc((size_t)ES_SITES_SLOTS * 4, sizeof(uint32_t)))) {
			rc = -ENOMEM;
			break;
		}
		struct ws_event e = { .start = t->start, .end = t->end, .loc = th, .rank = rank, .op = t->op,
				      .peer = t->element, .arg = t->arg, .size = t->size, .msg = WS_MSG_NONE,
				      .site = prof_site_key(p, (int)th, ES_TRACE_SITE(t), es_op_code(t->op), cache[th]) };
		resolve(a, t, rank, &e);
		if (ar_is_phase(t)) {
			char buf[32];
			e.site = phase_key(p, ar_phase_name(a, (int)th, t, buf, sizeof(buf)));
		}
		uint32_t o = m.other[i];
		if (o < AR_MSG_ALONE)
			e.msg = o < i ? o : i;
		rc = ws_event(p->waits, &e);
	}
	if (!rc)
		ws_flush(p->waits, UINT64_MAX);
	if (!rc)
		rc = ws_analyse(p->waits, &p->why);
	for (int t = 0; cache && t < nt; t++)
		free(cache[t]);
	free(cache);
	ar_msgs_free(&m);
	return rc;
}
