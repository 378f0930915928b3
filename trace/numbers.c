/* numbers.c - the readers' side of messages' numbers: each thread's channels followed in the order it wrote them, and a message's two ends joined by one key, for every reader (archives, esview, the live wait states). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "base/base.h"

/*
 * A channel is (sender, receiver, communicator, tag, direction); a number
 * is a thread's (collectors.h).  The table holds two kinds of entry: a
 * thread's channel, with its latest mark's count (an end before any mark
 * is read whole or not at all: es_num_of), and a channel's owner, the
 * first thread of its rank seen on it (a second thread's ends are
 * ES_NUMR_SHARED: its numbers are its own, and would meet the owner's).
 * The table stays at most half full; entries live as long as the reader
 * (a job has as many channels as its threads talk to peers by tags).
 */
enum { ENT_THREAD = 1, ENT_OWNER };
struct ent {
	uint64_t key, base;
	uint32_t owner;
	uint8_t kind; /* 0: free */
	bool known;
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
		if (!r->t[i].kind)
			continue;
		size_t h = base_hash_slot(r->t[i].key, nc);
		while (nt[h].kind)
			h = base_probe(h, nc);
		nt[h] = r->t[i];
	}
	free(r->t);
	r->t = nt, r->cap = nc;
	return 0;
}

static struct ent *entry(es_numr *r, uint8_t kind, uint64_t key)
{
	if ((r->n + 1) * 2 > r->cap && grow(r))
		return NULL;
	size_t h = base_hash_slot(key, r->cap);
	while (r->t[h].kind && (r->t[h].key != key || r->t[h].kind != kind))
		h = base_probe(h, r->cap);
	if (!r->t[h].kind) {
		r->t[h] = (struct ent){ .key = key, .kind = kind };
		r->n++;
	}
	return &r->t[h];
}

int es_numr_read(es_numr *r, uint32_t thread, int rank, uint64_t comm, const struct es_trace *t,
		 struct es_msg_end *out)
{
	bool mark = es_is_channel_mark(t->op);
	int dir = mark ? (t->op & ES_OP_RECV ? -1 : 1) : es_is_mark(t->op) ? 0 : es_message(t->op);
	if (!dir || t->element == ES_NONE || rank < 0)
		return ES_NUMR_NOT;
	*out = (struct es_msg_end){ .from = dir > 0 ? (uint32_t)rank : t->element,
				    .to = dir > 0 ? t->element : (uint32_t)rank, .tag = t->arg, .recv = dir < 0 };
	out->link = base_hash_fold(base_hash_fold(base_hash_fold(base_hash_fold(BASE_HASH_SEED, out->from), out->to), comm),
				 out->tag);
	if (!mark && !(t->op & ES_OP_NUMBERED))
		return ES_NUMR_NONE;
	uint64_t chan = base_hash_fold(out->link, out->recv);
	struct ent *o = entry(r, ENT_OWNER, chan);
	if (!o)
		return -ENOMEM;
	if (!o->known)
		o->owner = thread, o->known = true;
	uint32_t owner = o->owner; /* o moves when the table grows */
	struct ent *e = entry(r, ENT_THREAD, base_hash_fold(base_hash_fold(BASE_HASH_SEED, thread), chan));
	if (!e)
		return -ENOMEM;
	if (mark) {
		e->base = es_mark_count(t);
		e->known = true;
		return ES_NUMR_MARK;
	}
	if (owner != thread)
		return ES_NUMR_SHARED;
	if (!es_num_of((uint16_t)t->seq, e->known, e->base, &out->num))
		return ES_NUMR_NONE;
	out->key = base_hash_fold(out->link, out->num);
	return 0;
}
