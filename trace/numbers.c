/* numbers.c - the readers' side of messages' numbers: each thread's channels followed in the order it wrote them, and a message's two ends joined by one key, for every reader (archives, esview, the live wait states). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "base/base.h"

/*
 * A channel is (sender, receiver, communicator, tag, direction); a number
 * is a thread's (collectors.h).  Two tables hold two kinds of entry: a
 * thread's channel, with its latest mark's count (an end before any mark
 * is read whole or not at all: es_num_of), and a channel's owner, the
 * first thread of its rank seen on it (a second thread's ends are
 * ES_NUMR_SHARED: its numbers are its own, and would meet the owner's).
 * Entries live as long as the reader
 * (a job has as many channels as its threads talk to peers by tags).
 */
struct chan_owner {
	uint32_t owner;
	bool known;
};
struct chan_thread {
	uint64_t base; /* its latest mark's count */
	bool known;
};

struct es_numr {
	struct base_tab owners;  /* a channel -> struct chan_owner */
	struct base_tab threads; /* (a thread, a channel) -> struct chan_thread */
};

int es_numr_create(es_numr **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	base_tab_init(&(*out)->owners, sizeof(struct chan_owner));
	base_tab_init(&(*out)->threads, sizeof(struct chan_thread));
	return 0;
}

void es_numr_destroy(es_numr *r)
{
	if (r)
		base_tab_free(&r->owners), base_tab_free(&r->threads);
	free(r);
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
	struct chan_owner *o = base_tab_put(&r->owners, chan, NULL);
	if (!o)
		return -ENOMEM;
	if (!o->known)
		o->owner = thread, o->known = true;
	struct chan_thread *e = base_tab_put(&r->threads, base_hash_fold(base_hash_fold(BASE_HASH_SEED, thread), chan), NULL);
	if (!e)
		return -ENOMEM;
	if (mark) {
		e->base = es_mark_count(t);
		e->known = true;
		return ES_NUMR_MARK;
	}
	if (o->owner != thread)
		return ES_NUMR_SHARED;
	if (!es_num_of((uint16_t)t->seq, e->known, e->base, &out->num))
		return ES_NUMR_NONE;
	out->key = base_hash_fold(out->link, out->num);
	return 0;
}
