/* resolve.c - the live resolver: each consumed tuple's communicator from the ranks' boards and its message's key from its channel's numbers, once, for every live reader. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "monitors/resolve.h"

struct comm { /* a rank's serial (low 16 bits), as looked up since the last refresh */
	uint64_t id;
	uint32_t size, me;
	bool known, intra; /* intra: its collectives are judged */
};

struct mon_rs {
	es_numr *numr;         /* the threads' channels' numbers */
	struct base_tab comms; /* (rank, serial) -> struct comm */
	uint64_t unnumbered;   /* message ends whose number could not be read */
};

int mon_rs_create(mon_rs **out)
{
	mon_rs *r = calloc(1, sizeof(*r));
	if (!r || es_numr_create(&r->numr)) {
		free(r);
		return -ENOMEM;
	}
	base_tab_init(&r->comms, sizeof(struct comm));
	*out = r;
	return 0;
}

void mon_rs_destroy(mon_rs *r)
{
	if (!r)
		return;
	es_numr_destroy(r->numr);
	base_tab_free(&r->comms);
	free(r);
}

void mon_rs_refreshed(mon_rs *r)
{
	base_tab_clear(&r->comms);
}

uint64_t mon_rs_unnumbered(const mon_rs *r)
{
	return r->unnumbered;
}

static struct comm *comm_of(mon_rs *r, es_mpi *mpi, int rank, const struct es_trace *t)
{
	uint64_t k = (uint64_t)(uint32_t)rank << 16 | t->comm;
	struct comm *c = base_tab_put(&r->comms, k, NULL);
	if (!c || c->known)
		return c && c->id ? c : NULL;
	c->known = true;
	int side = 0;
	/* as at the tuple's time: a communicator or window freed since is still its */
	const struct es_mpi_comm *m = mpi ? es_mpi_comm_of(mpi, rank, t->comm, 0xffff, t->start, &side) : NULL;
	if (!m || side < 0 || side > 1)
		return NULL;
	c->id = m->id;
	/* an intercommunicator's messages are paired, its collectives not
	 * judged (archive/waitfeed.c) */
	c->intra = !(m->flags & ES_COMMS_INTER);
	c->size = m->size[side];
	for (uint32_t i = 0; i < c->size; i++)
		if (m->members[side] && m->members[side][i] == rank)
			c->me = i;
	return c->id ? c : NULL;
}

uint64_t mon_rs_comm_id(mon_rs *r, es_mpi *mpi, int rank, const struct es_trace *t)
{
	const struct comm *c = t->comm == ES_COMM_NONE || rank < 0 ? NULL : comm_of(r, mpi, rank, t);
	return c ? c->id : 0;
}

int mon_rs_event(mon_rs *r, es_mpi *mpi, const struct es_trace *t, int thread, int rank, struct es_event *out)
{
	const struct comm *c = t->comm == ES_COMM_NONE || rank < 0 ? NULL : comm_of(r, mpi, rank, t);
	struct es_msg_end m;
	int rc = c && thread >= 0 ? es_numr_read(r->numr, (uint32_t)thread, rank, c->id, t, &m) : ES_NUMR_NONE;
	if (rc < 0)
		return rc;
	if (es_is_channel_mark(t->op))
		return MON_RS_MARK; /* only numbers; a group mark is the engine's */
	bool end = es_message(t->op) && t->element != ES_NONE;
	r->unnumbered += end && (rc == ES_NUMR_NONE || rc == ES_NUMR_SHARED);
	*out = (struct es_event){ .start = t->start, .end = t->end, .loc = (uint32_t)thread, .rank = rank, .op = t->op,
				  .peer = t->element, .arg = t->arg, .size = t->size,
				  .msg = rc ? ES_EVENT_NO_MSG : m.key, .site = (uint32_t)thread << 16 | ES_TRACE_SITE(t) };
	if (c && c->intra)
		out->comm = c->id, out->members = c->size, out->me = c->me;
	return 0;
}
