/* batch.c - batches: the newest tuple of many elements, remote ones in one round trip per server (LATEST_MANY), local ones in one sweep. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

/* --- batches ------------------------------------------------------------------- */

static void cache_fail(struct ps__relem *re, int rc)
{
	re->cached = true;
	re->cached_rc = rc;
}

/* One round of a batch: the connections it asks, and what each is asked. */
struct batch {
	ps_elem *const *e;
	int n;
	bool *seen;                /* per element: asked, failed or local */
	int *order;                /* the elements asked, grouped by connection */
	unsigned char *q;          /* LATEST_MANY's request */
	struct ps__rconn **conns;  /* this round's connections, in address order */
	int *first;                /* per connection: its first element not yet seen */
	int *start, *count, *sent; /* per connection: its run of order; send_req's result (1: none) */
	uint64_t *deadline;
	int nc, used;
};

/* The connections of the elements not yet seen, in address order, so that
 * two batches lock them in the same order and never deadlock. */
static int batch_conns(struct batch *b)
{
	b->nc = 0;
	for (int i = 0; i < b->n; i++) {
		if (b->seen[i])
			continue;
		struct ps__rconn *c = b->e[i]->remote->c;
		int k = 0;
		while (k < b->nc && b->conns[k] != c)
			k++;
		if (k == b->nc) {
			b->conns[b->nc] = c;
			b->first[b->nc++] = i;
		}
	}
	for (int x = 1; x < b->nc; x++)
		for (int y = x; y > 0 && (uintptr_t)b->conns[y] < (uintptr_t)b->conns[y - 1]; y--) {
			struct ps__rconn *tc = b->conns[y];
			int tf = b->first[y];
			b->conns[y] = b->conns[y - 1], b->first[y] = b->first[y - 1];
			b->conns[y - 1] = tc, b->first[y - 1] = tf;
		}
	return b->nc;
}

/* Asks connection k for the newest tuple of as many of its elements as
 * one reply holds.  Its lock stays held while a reply is to be read. */
static void send_many(struct batch *b, int k)
{
	struct ps__rconn *c = b->conns[k];
	uint32_t m = 0;
	size_t bytes = PSW_STATUS_LEN;
	b->start[k] = b->used;
	ps__conn_lock(c);
	int r = ps__conn_ready(c);
	unsigned char *handles = b->q + PSW_COUNT_LEN;
	for (int i = b->first[k]; i < b->n && m < PSW_MANY_MAX; i++) {
		ps_elem *e = b->e[i];
		if (b->seen[i] || e->remote->c != c)
			continue;
		if (m && bytes + PSW_TUPLE_REP_LEN + e->tuple_size > PSW_MAX_PAYLOAD)
			break;
		int er = r ? r : ps__relem_ready(e);
		b->seen[i] = true;
		if (er) {
			cache_fail(e->remote, er);
			continue;
		}
		bytes += PSW_TUPLE_REP_LEN + e->tuple_size;
		b->order[b->used++] = i;
		handles += psw_handle_put(handles, e->remote->handle);
		m++;
	}
	b->count[k] = (int)m;
	psw_count_put(b->q, m);
	b->deadline[k] = c->deadline;
	b->sent[k] = m ? ps__send_req(c, PSW_LATEST_MANY, b->q, (size_t)(handles - b->q), b->deadline[k]) : 1;
	if (b->sent[k]) /* nothing to read back: let the others go on */
		pthread_mutex_unlock(&c->lock);
	for (int j = 0; b->sent[k] < 0 && j < b->count[k]; j++)
		cache_fail(b->e[b->order[b->start[k] + j]]->remote, b->sent[k]);
}

/* Reads connection k's reply into its elements' caches and drops its
 * lock; returns how many answered (even "no tuple yet"). */
static int read_many(struct batch *b, int k)
{
	struct ps__rconn *c = b->conns[k];
	size_t len = 0, off = PSW_STATUS_LEN;
	int done = 0, r = ps__recv_rep(c, PSW_LATEST_MANY, c->tag, &len, b->deadline[k]);
	if (!r && (len < PSW_STATUS_LEN || psw_get32(c->buf)))
		r = len < PSW_STATUS_LEN ? PS_EPROTO : (int)psw_get32(c->buf);
	for (int j = 0; j < b->count[k]; j++) {
		ps_elem *e = b->e[b->order[b->start[k] + j]];
		struct ps__relem *re = e->remote;
		struct psw_tuple_rep t;
		if (r || (r = psw_tuple_rep_get(c->buf + off, len - off, &t))) {
			cache_fail(re, r);
			continue;
		}
		if (t.status == PSW_EBADH) { /* no tuple follows; open it again next time */
			re->gen = 0;
			cache_fail(re, PS_ELOST);
			off += PSW_TUPLE_REP_LEN;
			continue;
		}
		if (len < off + PSW_TUPLE_REP_LEN + e->tuple_size) {
			cache_fail(re, r = PS_EPROTO);
			continue;
		}
		re->cached = true;
		re->cached_rc = t.status;
		re->cached_idx = t.index;
		memcpy(re->cache, c->buf + off + PSW_TUPLE_REP_LEN, e->tuple_size);
		ps__to_ours(re, re->cache);
		off += PSW_TUPLE_REP_LEN + e->tuple_size;
		done++;
	}
	if (!r && off != len)
		c->broken = true; /* out of step with it: start again */
	pthread_mutex_unlock(&c->lock);
	return done;
}

static bool fetched(struct ps__relem *re)
{
	pthread_mutex_lock(&re->c->lock);
	bool f = re->cached;
	pthread_mutex_unlock(&re->c->lock);
	return f;
}

/*
 * One LATEST_MANY per connection, sent to every connection before any reply
 * is read, so a batch over n servers costs one round trip, not n.  A server
 * that fails fails its own elements' reads (cached as their result), not the
 * others'.
 */
int ps_prefetch_latest(ps_elem *const *e, int n)
{
	if (!e || n < 0)
		return PS_EINVAL;
	int far = 0;
	for (int i = 0; i < n && !far; i++)
		far = e[i] && e[i]->remote;
	if (!far)
		return 0; /* all local: nothing to fetch, nothing to allocate (a scope's every pull) */
	size_t m = (size_t)n + 1;
	struct batch b = { .e = e, .n = n, .seen = calloc(m, sizeof(bool)),
			   .order = calloc(m, sizeof(int)),
			   .q = malloc(PSW_COUNT_LEN + PSW_HANDLE_LEN * PSW_MANY_MAX),
			   .conns = calloc(m, sizeof(*b.conns)), .first = calloc(m, sizeof(int)),
			   .start = calloc(m, sizeof(int)), .count = calloc(m, sizeof(int)),
			   .sent = calloc(m, sizeof(int)), .deadline = calloc(m, sizeof(uint64_t)) };
	int done = 0, rc = 0;
	if (!b.seen || !b.order || !b.q || !b.conns || !b.first || !b.start || !b.count ||
	    !b.sent || !b.deadline) {
		rc = PS_ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (!e[i] || !e[i]->remote || fetched(e[i]->remote))
			b.seen[i] = true; /* local, or fetched and not read yet: nothing to fetch */
	/* each round takes, of each connection, what fits one reply */
	while (batch_conns(&b)) {
		b.used = 0;
		for (int k = 0; k < b.nc; k++)
			send_many(&b, k);
		for (int k = 0; k < b.nc; k++)
			if (!b.sent[k])
				done += read_many(&b, k);
	}
out:
	free(b.seen);
	free(b.order);
	free(b.q);
	free(b.conns);
	free(b.first);
	free(b.start);
	free(b.count);
	free(b.sent);
	free(b.deadline);
	return rc ? rc : done;
}

int ps_prefetched(ps_elem *e)
{
	if (!e || !e->remote)
		return 0;
	struct ps__relem *re = e->remote;
	pthread_mutex_lock(&re->c->lock);
	int rc = re->cached ? re->cached_rc : 0;
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}

void ps_prefetch_forget(ps_elem *const *e, int n)
{
	for (int i = 0; e && i < n; i++)
		if (e[i] && e[i]->remote) {
			pthread_mutex_lock(&e[i]->remote->c->lock);
			e[i]->remote->cached = false;
			pthread_mutex_unlock(&e[i]->remote->c->lock);
		}
}

int ps_read_latest_many(ps_elem *const *e, int n, void *out, uint64_t *idx, int *status)
{
	if (!e || n < 0 || !out || !status)
		return PS_EINVAL;
	int rc = ps_prefetch_latest(e, n);
	if (rc < 0)
		return rc;
	unsigned char *o = out;
	int ok = 0;
	for (int i = 0; i < n; i++) {
		uint64_t k = 0;
		status[i] = e[i] ? ps_read_latest(e[i], o, &k) : PS_EINVAL;
		if (idx)
			idx[i] = k;
		ok += status[i] == 0;
		o += e[i] ? e[i]->tuple_size : 0;
	}
	return ok;
}

/*
 * A sweep over local elements misses the cache on nearly every header and
 * slot: the writers own those lines, and between two pulls the application
 * evicts the rest.  Taken one after another the misses cost a memory
 * latency each; fetched this many elements ahead, in two steps (the handle
 * and the header, then the newest slot, whose address needs the header's
 * head), they overlap.
 */
#define AHEAD 64

static inline void ahead_handle(ps_elem *e)
{
	__builtin_prefetch(e);
}

static inline void ahead_header(const ps_elem *e)
{
	if (!e->ops) {
		__builtin_prefetch(&e->h->head);
		__builtin_prefetch(&e->h->tail);
	}
}

static inline void ahead_slot(const ps_elem *e, uint64_t seen)
{
	if (e->ops)
		return;
	uint64_t hd = atomic_load_explicit(&e->h->head, memory_order_relaxed);
	if (hd && hd - 1 != seen)
		__builtin_prefetch(slot_of(e, hd - 1));
}

/* One element's newest into out: 1 if read, else 0 with idx PS_NONE. */
static inline int read_one(ps_elem *e, void *out, uint64_t *idx, int *status)
{
	*status = ps_read_latest(e, out, idx);
	if (*status)
		*idx = PS_NONE;
	return *status == 0;
}

int ps_read_latest_since(ps_elem *const *e, int n, void *out, uint64_t *idx, int *status)
{
	if (!e || n < 0 || (!out && n) || !idx || !status)
		return PS_EINVAL;
	for (int i = 0; i < n; i++)
		if (!e[i])
			return PS_EINVAL;
	for (int i = 0; i < n && i < 2 * AHEAD; i++)
		ahead_handle(e[i]);
	for (int i = 0; i < n && i < AHEAD; i++)
		ahead_header(e[i]);
	unsigned char *o = out;
	int ok = 0, far = 0;
	for (int i = 0; i < n; o += e[i]->tuple_size, i++) {
		if (i + 2 * AHEAD < n)
			ahead_handle(e[i + 2 * AHEAD]);
		if (i + AHEAD < n)
			ahead_header(e[i + AHEAD]);
		if (i + AHEAD / 2 < n)
			ahead_slot(e[i + AHEAD / 2], idx[i + AHEAD / 2]);
		ps_elem *x = e[i];
		if (x->ops) {
			far++; /* after the local ones, all in one fetch */
			continue;
		}
		if (idx[i] != PS_NONE) {
			/* The same newest as last time, and still held (a
			 * taker may have emptied the element since). */
			uint64_t hd = atomic_load_explicit(&x->h->head, memory_order_acquire);
			uint64_t t = atomic_load_explicit(&x->h->tail, memory_order_acquire);
			if (hd && hd - 1 == idx[i] && oldest_of(x, hd, t) < hd) {
				status[i] = PS_SAME;
				ok++;
				continue;
			}
		}
		ok += read_one(x, o, &idx[i], &status[i]);
	}
	if (!far)
		return ok; /* all local: no pass over the handles for remote ones */
	int rc = ps_prefetch_latest(e, n);
	if (rc < 0)
		return rc;
	o = out;
	for (int i = 0; i < n; o += e[i]->tuple_size, i++) {
		if (e[i]->ops)
			ok += read_one(e[i], o, &idx[i], &status[i]);
	}
	return ok;
}
