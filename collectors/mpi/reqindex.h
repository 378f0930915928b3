/* reqindex.h - each thread's index of the requests it follows, and its board's slots: what requests.c's hot paths call inline (requests.h writes the invariants down). */
#ifndef ES_COLLECTORS_MPI_REQINDEX_H
#define ES_COLLECTORS_MPI_REQINDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "collectors/mpi/requests.h"

/* What the board cannot show: the communicator a wildcard receive's source
 * is translated through, a new communicator that MPI_Comm_idup makes. */
struct extra {
	struct es_comm *c; /* held (es_comm_hold) while the request is open */
	void *newcomm;     /* MPI_Comm_idup's */
	uint32_t seed;
};

struct rentry {
	MPI_Request handle; /* MPI_REQUEST_NULL: free */
	int slot;           /* >= 0: on the board; < 0: private record -1 - slot */
};

struct es_rindex {
	struct rentry *tab;
	size_t cap, n;
	int free_slots[ES_REQS_SLOTS], nfree;
	struct extra extra[ES_REQS_SLOTS];
	struct es_req_rec *priv; /* when the board is full */
	struct extra *priv_extra;
	int npriv, cap_priv, *priv_free, npriv_free;
	bool dups; /* two live requests have had one handle */
};
#define MAX_SAME 64 /* live requests one handle may stand for: past that, the oldest is dropped */

/* --- reqindex.c ---------------------------------------------------------------------- */

/* Another thread's slot as it is, if whole; its ver in out->ver. */
bool es__slot_get(const struct es_req_rec *r, struct es_req_rec *out) ES_HIDDEN;
/* This thread's index, made at its first request (NULL: no trace element, or no memory). */
struct es_rindex *es__ri_make(void) ES_HIDDEN;
static inline struct es_rindex *es__ri_of_thread(void)
{
	return __builtin_expect(es_t.ri != NULL, 1) ? es_t.ri : es__ri_make();
}
/* The table twice as large, every entry put again; 0 or -1 (no memory). */
int es__ri_grow(struct es_rindex *ri) ES_HIDDEN;
/* A board slot whose request another thread completed, freed; -1 if none. */
int es__ri_reclaim(struct es_rindex *ri) ES_HIDDEN;
/* A private record, when the board is full (-1 - its index); INT32_MIN: no memory. */
int es__ri_priv_slot(struct es_rindex *ri) ES_HIDDEN;
#ifdef ES_DEBUG
/* The index as requests.h's invariants say it is (BASE_INVARIANT). */
bool es__ri_whole(struct es_rindex *ri) ES_HIDDEN;
#endif

/* --- a slot's words ---------------------------------------------------------------- */

static inline uint64_t *words(struct es_req_rec *r)
{
	return (uint64_t *)r;
}

/* The owner rewrites words 1 to 5 of a slot (handle to size): ver odd while
 * it does, so a reader's copy is whole when ver is even and unchanged. */
static inline __attribute__((always_inline)) void slot_put(struct es_req_rec *r, const struct es_req_rec *v)
{
	BASE_INVARIANT("only the owner writes a slot: its ver is even when the owner begins",
		     !(__atomic_load_n(&r->ver, __ATOMIC_RELAXED) & 1));
	uint64_t ver = __atomic_load_n(&r->ver, __ATOMIC_RELAXED) | 1;
	__atomic_store_n(&r->ver, ver, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	const uint64_t *src = (const uint64_t *)v;
	for (int i = 1; i <= 5; i++)
		__atomic_store_n(&words(r)[i], src[i], __ATOMIC_RELAXED);
	__atomic_store_n(&r->ver, ver + 1, __ATOMIC_RELEASE);
}

/* A slot no request holds: its handle 0 (readers pass over it). */
static inline void slot_free(struct es_req_rec *r)
{
	BASE_INVARIANT("only the owner writes a slot: its ver is even when the owner begins",
		     !(__atomic_load_n(&r->ver, __ATOMIC_RELAXED) & 1));
	uint64_t ver = __atomic_load_n(&r->ver, __ATOMIC_RELAXED) | 1;
	__atomic_store_n(&r->ver, ver, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&r->handle, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->ver, ver + 1, __ATOMIC_RELEASE);
}


/* --- the index ---------------------------------------------------------------------- */

static inline size_t hash(MPI_Request r, size_t cap)
{
	return base_hash_slot(es_handle_of(r), cap);
}


/* The k-th entry for r (from 0), oldest first: one handle may stand for
 * several live requests (Open MPI gives every send it completed at once
 * the same one), and probing keeps their order (so does erase). */
static inline struct rentry *find_nth(struct es_rindex *ri, MPI_Request r, int k)
{
	for (size_t i = hash(r, ri->cap), n = 0; n < ri->cap; n++, i = base_probe(i, ri->cap)) {
		if (ri->tab[i].handle == r && k-- == 0)
			return &ri->tab[i];
		if (ri->tab[i].handle == MPI_REQUEST_NULL)
			return NULL;
	}
	return NULL;
}

static inline struct rentry *find(struct es_rindex *ri, MPI_Request r)
{
	return find_nth(ri, r, 0);
}

/* find(), and when r has no entry *empty is where its probe ended: where
 * insert would put it, while no entry moves. */
static inline struct rentry *probe(struct es_rindex *ri, MPI_Request r, size_t *empty)
{
	for (size_t i = hash(r, ri->cap), n = 0; n < ri->cap; n++, i = base_probe(i, ri->cap)) {
		if (ri->tab[i].handle == r)
			return &ri->tab[i];
		if (ri->tab[i].handle == MPI_REQUEST_NULL) {
			*empty = i;
			return NULL;
		}
	}
	return NULL;
}

/* The entry for r on slot. */
static inline struct rentry *find_slot(struct es_rindex *ri, MPI_Request r, int slot)
{
	for (size_t i = hash(r, ri->cap), n = 0; n < ri->cap; n++, i = base_probe(i, ri->cap)) {
		if (ri->tab[i].handle == r && ri->tab[i].slot == slot)
			return &ri->tab[i];
		if (ri->tab[i].handle == MPI_REQUEST_NULL)
			return NULL;
	}
	return NULL;
}


static inline struct rentry *put_at(struct es_rindex *ri, size_t i, MPI_Request r, int slot)
{
	ri->tab[i] = (struct rentry){ r, slot };
	ri->n++;
	return &ri->tab[i];
}

/* Its entry, or NULL if the index could not grow. */
static inline struct rentry *insert(struct es_rindex *ri, MPI_Request r, int slot)
{
	if ((ri->n + 1) * 2 > ri->cap && es__ri_grow(ri))
		return NULL;
	size_t i = hash(r, ri->cap);
	while (ri->tab[i].handle != MPI_REQUEST_NULL)
		i = base_probe(i, ri->cap);
	return put_at(ri, i, r, slot);
}

/* Removes e, keeping every other entry findable (backward-shift deletion). */
static inline void erase(struct es_rindex *ri, struct rentry *e)
{
	size_t i = (size_t)(e - ri->tab);
	ri->n--;
	for (;;) {
		ri->tab[i].handle = MPI_REQUEST_NULL;
		size_t j = i;
		for (;;) {
			j = base_probe(j, ri->cap);
			if (ri->tab[j].handle == MPI_REQUEST_NULL)
				return;
			size_t h = hash(ri->tab[j].handle, ri->cap);
			if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j))
				break;
		}
		ri->tab[i] = ri->tab[j];
		i = j;
	}
}

static inline struct es_req_rec *rec_of(struct es_rindex *ri, int slot)
{
	return slot >= 0 ? &es_t.reqs[slot] : &ri->priv[-1 - slot];
}

static inline struct extra *extra_of(struct es_rindex *ri, int slot)
{
	return slot >= 0 ? &ri->extra[slot] : &ri->priv_extra[-1 - slot];
}

/* A slot or private record free again. */
static inline void release(struct es_rindex *ri, int slot)
{
	struct extra *x = extra_of(ri, slot);
	if (__builtin_expect(x->c || x->newcomm, 0)) {
		es_comm_release(x->c);
		*x = (struct extra){ 0 };
	}
	if (slot >= 0) {
		slot_free(&es_t.reqs[slot]);
		ri->free_slots[ri->nfree++] = slot;
	} else {
		ri->priv[-1 - slot].handle = 0;
		ri->priv_free[ri->npriv_free++] = -1 - slot;
	}
}

/* Forgets the entry: its slot is free again. */
static inline void forget(struct es_rindex *ri, struct rentry *e)
{
	release(ri, e->slot);
	erase(ri, e);
}





#endif
