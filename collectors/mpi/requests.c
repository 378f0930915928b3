/* requests.c - the requests libescollect follows: nonblocking collectives until they complete, persistent requests' init calls. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/record.h"

/*
 * Two tables keyed by the request handle, each behind its own lock: they
 * are touched only by programs that use nonblocking collectives or
 * persistent requests, and then once per such call (the common path of a
 * wait asks es_route.nbc_outstanding, one relaxed load, and goes on).  A handle
 * is a slot MPI reuses once the request is freed, so an entry leaves when
 * its request completes (nonblocking collectives) or is replaced when the
 * handle comes back from another init call (persistent requests).
 */
struct table {
	pthread_mutex_t lock;
	struct es_req_entry *slot; /* open addressing; req == MPI_REQUEST_NULL: free */
	size_t cap, n;
};

static struct table nbc = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct table persist = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t hash(MPI_Request r, size_t cap)
{
	return (size_t)(((uintptr_t)r >> 4) * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

static struct es_req_entry *find(struct table *t, MPI_Request r)
{
	for (size_t i = t->cap ? hash(r, t->cap) : 0, k = 0; k < t->cap; k++, i = (i + 1) & (t->cap - 1)) {
		if (t->slot[i].req == r)
			return &t->slot[i];
		if (t->slot[i].req == MPI_REQUEST_NULL)
			return NULL;
	}
	return NULL;
}

static int put(struct table *t, const struct es_req_entry *e);

static int grow(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct es_req_entry *old = t->slot, *s = malloc(cap * sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < cap; i++)
		s[i].req = MPI_REQUEST_NULL;
	size_t oldcap = t->cap;
	t->slot = s;
	t->cap = cap;
	t->n = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].req != MPI_REQUEST_NULL)
			put(t, &old[i]);
	free(old);
	return 0;
}

/* Inserts or replaces; -1 if there is no memory (the request is then not followed). */
static int put(struct table *t, const struct es_req_entry *e)
{
	struct es_req_entry *have = find(t, e->req);
	if (have) {
		*have = *e;
		return 0;
	}
	if ((t->n + 1) * 2 > t->cap && grow(t))
		return -1;
	size_t i = hash(e->req, t->cap);
	while (t->slot[i].req != MPI_REQUEST_NULL)
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = *e;
	t->n++;
	return 0;
}

/* Removes e, keeping every other entry findable (backward-shift deletion). */
static void drop(struct table *t, struct es_req_entry *e)
{
	size_t i = (size_t)(e - t->slot);
	t->n--;
	for (;;) {
		t->slot[i].req = MPI_REQUEST_NULL;
		size_t j = i;
		for (;;) {
			j = (j + 1) & (t->cap - 1);
			if (t->slot[j].req == MPI_REQUEST_NULL)
				return;
			size_t h = hash(t->slot[j].req, t->cap);
			/* can the entry at j move to the hole at i? */
			if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j))
				break;
		}
		t->slot[i] = t->slot[j];
		i = j;
	}
}

static void clear(struct table *t)
{
	pthread_mutex_lock(&t->lock);
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
	pthread_mutex_unlock(&t->lock);
}

void es_requests_reset(void)
{
	clear(&nbc);
	clear(&persist);
	atomic_store(&es_route.nbc_outstanding, 0);
}

/* --- nonblocking collectives ----------------------------------------------------- */

void es_nbc_started(MPI_Request req, unsigned op, uint64_t t0, uint32_t element, uint64_t size,
		    uint32_t arg)
{
	struct es_req_entry e = { .req = req, .t0 = t0, .size = size, .element = element, .arg = arg,
				  .op = (uint16_t)op };
	if (req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&nbc.lock);
	if (!put(&nbc, &e))
		atomic_store_explicit(&es_route.nbc_outstanding, (int)nbc.n, memory_order_relaxed);
	pthread_mutex_unlock(&nbc.lock);
}

static MPI_Request handle(const MPI_Request *c, const MPI_Fint *f, int i)
{
	return c ? c[i] : PMPI_Request_f2c(f[i]);
}

void es__reqs_find(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f, int n)
{
	r->idx = r->idx_small;
	r->e = r->e_small;
	r->cap = 4;
	if ((!c && !f) || n <= 0)
		return;
	pthread_mutex_lock(&nbc.lock);
	for (int i = 0; i < n && nbc.n; i++) {
		MPI_Request q = handle(c, f, i);
		struct es_req_entry *e = q != MPI_REQUEST_NULL ? find(&nbc, q) : NULL;
		if (!e)
			continue;
		if (r->n == r->cap) {
			int cap = r->cap * 2;
			int *idx = malloc(sizeof(int) * (size_t)cap);
			struct es_req_entry *ee = malloc(sizeof(*ee) * (size_t)cap);
			if (!idx || !ee) {
				free(idx);
				free(ee);
				break; /* the rest go unfollowed: their completions are not written */
			}
			memcpy(idx, r->idx, sizeof(int) * (size_t)r->n);
			memcpy(ee, r->e, sizeof(*ee) * (size_t)r->n);
			if (r->idx != r->idx_small) {
				free(r->idx);
				free(r->e);
			}
			r->idx = idx;
			r->e = ee;
			r->cap = cap;
		}
		r->idx[r->n] = i;
		r->e[r->n++] = *e;
	}
	pthread_mutex_unlock(&nbc.lock);
}

/* A completed request is MPI_REQUEST_NULL in its caller's array now. */
void es__reqs_done(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f)
{
	uint64_t now = es_now();
	for (int k = 0; k < r->n; k++) {
		if (handle(c, f, r->idx[k]) != MPI_REQUEST_NULL)
			continue;
		const struct es_req_entry *e = &r->e[k];
		pthread_mutex_lock(&nbc.lock);
		struct es_req_entry *in = find(&nbc, e->req);
		if (in)
			drop(&nbc, in);
		atomic_store_explicit(&es_route.nbc_outstanding, (int)nbc.n, memory_order_relaxed);
		pthread_mutex_unlock(&nbc.lock);
		if (in && es_want(e->op))
			es_write(e->op | ES_OP_DONE, e->t0, now, e->element, e->size, e->arg, MPI_SUCCESS);
	}
	if (r->idx != r->idx_small) {
		free(r->idx);
		free(r->e);
	}
	r->n = 0;
}

/* --- persistent requests ------------------------------------------------------------ */

void es_persist(MPI_Request req, unsigned op, uint32_t element, uint64_t size, uint32_t arg)
{
	struct es_req_entry e = { .req = req, .size = size, .element = element, .arg = arg,
				  .op = (uint16_t)op };
	if (req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&persist.lock);
	put(&persist, &e);
	pthread_mutex_unlock(&persist.lock);
}

void es_started(unsigned op, uint64_t t0, const MPI_Request *c, const MPI_Fint *f, int n, int rc)
{
	uint64_t t1 = es_now();
	for (int i = 0; i < n && (c || f); i++) {
		MPI_Request q = handle(c, f, i);
		struct es_req_entry e = { .element = ES_NONE };
		pthread_mutex_lock(&persist.lock);
		const struct es_req_entry *in = find(&persist, q);
		if (in)
			e = *in;
		pthread_mutex_unlock(&persist.lock);
		unsigned flags = e.op == ES_OP_MPI_RECV_INIT ? ES_OP_RECV : 0;
		es_write(op | flags, t0, t1, e.element, e.size, e.arg, rc);
	}
}
