/* numbers.c - the readers' side of messages' numbers: each thread's channels followed in the order it wrote them, one table for every reader (archives, esview, the live wait states). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "pastset/pastset.h"

/*
 * A channel, for a reader, is what its caller says tells channels apart
 * (peer, tag, communicator, direction: `chan`) on one thread: a number is
 * a thread's (collectors.h).  Its entry holds the latest mark's count;
 * an end before any mark is read whole or not at all (es_num_of).  The
 * table stays at most half full; entries live as long as the reader (a
 * job has as many channels as its threads talk to peers by tags).
 */
struct ent {
	uint64_t key, base;
	bool used, known;
};

struct es_numr {
	struct ent *t;
	size_t cap, n;
};

int es_numr_create(es_numr **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void es_numr_destroy(es_numr *r)
{
	if (r)
		free(r->t);
	free(r);
}

static int grow(es_numr *r)
{
	size_t nc = r->cap ? r->cap * 2 : 256;
	struct ent *nt = calloc(nc, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++) {
		if (!r->t[i].used)
			continue;
		size_t h = ps_hash_slot(r->t[i].key, nc);
		while (nt[h].used)
			h = ps_probe(h, nc);
		nt[h] = r->t[i];
	}
	free(r->t);
	r->t = nt, r->cap = nc;
	return 0;
}

static struct ent *entry(es_numr *r, uint64_t key)
{
	if ((r->n + 1) * 2 > r->cap && grow(r))
		return NULL;
	size_t h = ps_hash_slot(key, r->cap);
	while (r->t[h].used && r->t[h].key != key)
		h = ps_probe(h, r->cap);
	if (!r->t[h].used) {
		r->t[h] = (struct ent){ .key = key, .used = true };
		r->n++;
	}
	return &r->t[h];
}

int es_numr_end(es_numr *r, uint32_t thread, uint64_t chan, const struct es_trace *t, uint64_t *num)
{
	bool mark = es_is_channel_mark(t->op);
	if (!mark && !(t->op & ES_OP_NUMBERED))
		return ES_NUMR_NONE;
	struct ent *e = entry(r, ps_hash_fold(ps_hash_fold(PS_HASH_SEED, thread), chan));
	if (!e)
		return -ENOMEM;
	if (mark) {
		e->base = es_mark_count(t);
		e->known = true;
		return ES_NUMR_MARK;
	}
	return es_num_of((uint16_t)t->seq, e->known, e->base, num) ? 0 : ES_NUMR_NONE;
}
