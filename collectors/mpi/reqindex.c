/* reqindex.c - the request index's slower half: made for a thread, grown, a slot reclaimed or a private record made when the board is full, another's slot copied whole, and (debug builds) the index checked whole. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/reqindex.h"

/* Another thread's slot as it is, if whole; its ver in *ver. */
bool es__slot_get(const struct es_req_rec *r, struct es_req_rec *out)
{
	uint64_t v1 = __atomic_load_n(&r->ver, __ATOMIC_ACQUIRE);
	for (int i = 1; i < 8; i++)
		words(out)[i] = __atomic_load_n(&((const uint64_t *)r)[i], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	out->ver = v1;
	return !(v1 & 1) && __atomic_load_n(&r->ver, __ATOMIC_RELAXED) == v1;
}

struct es_rindex *es__ri_make(void)
{
	struct es_rindex *ri = es_t.ri;
	if (ri || !es_elem())
		return ri;
	if (!(ri = calloc(1, sizeof(*ri))) || !(ri->tab = calloc(1024, sizeof(*ri->tab)))) {
		free(ri);
		return NULL;
	}
	ri->cap = 1024;
	for (size_t i = 0; i < ri->cap; i++)
		ri->tab[i].handle = MPI_REQUEST_NULL;
	for (int s = 0; s < (int)ES_REQS_SLOTS; s++)
		ri->free_slots[s] = (int)ES_REQS_SLOTS - 1 - s; /* slot 0 first */
	ri->nfree = es_t.reqs ? (int)ES_REQS_SLOTS : 0;
	es_t.ri = ri;
	return ri;
}

int es__ri_grow(struct es_rindex *ri)
{
	size_t cap = ri->cap * 2, oldcap = ri->cap;
	struct rentry *old = ri->tab, *t = malloc(cap * sizeof(*t));
	if (!t)
		return -1;
	for (size_t i = 0; i < cap; i++)
		t[i].handle = MPI_REQUEST_NULL;
	ri->tab = t;
	ri->cap = cap;
	ri->n = 0;
	/* from just after a free slot, so that each cluster's entries, and
	 * those of one handle, go in in their order (the table is never full) */
	size_t z = 0;
	while (old[z].handle != MPI_REQUEST_NULL)
		z++;
	for (size_t k = 1; k <= oldcap; k++) {
		const struct rentry *o = &old[(z + k) & (oldcap - 1)];
		if (o->handle != MPI_REQUEST_NULL)
			insert(ri, o->handle, o->slot);
	}
	free(old);
	return 0;
}

/* A board slot whose request another thread completed, freed; -1 if none. */
int es__ri_reclaim(struct es_rindex *ri)
{
	for (int s = 0; s < (int)ES_REQS_SLOTS; s++) {
		struct es_req_rec *r = &es_t.reqs[s];
		uint64_t done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
		struct rentry *e;
		if (r->handle && es_req_done_by_other(done, r->ver) &&
		    (e = find_slot(ri, (MPI_Request)(uintptr_t)r->handle, s))) {
			forget(ri, e);
			return ri->free_slots[--ri->nfree];
		}
	}
	return -1;
}

/* A private record, when the board is full: not seen by monitors. */
int es__ri_priv_slot(struct es_rindex *ri)
{
	if (ri->npriv_free)
		return -1 - ri->priv_free[--ri->npriv_free];
	if (ri->npriv == ri->cap_priv) {
		int cap = ri->cap_priv ? ri->cap_priv * 2 : 64;
		struct es_req_rec *p = realloc(ri->priv, sizeof(*p) * (size_t)cap);
		if (p)
			ri->priv = p;
		struct extra *x = p ? realloc(ri->priv_extra, sizeof(*x) * (size_t)cap) : NULL;
		if (x)
			ri->priv_extra = x;
		int *f = x ? realloc(ri->priv_free, sizeof(*f) * (size_t)cap) : NULL;
		if (!f)
			return INT32_MIN;
		ri->priv_free = f;
		ri->cap_priv = cap;
	}
	ri->priv_extra[ri->npriv] = (struct extra){ 0 };
	return -1 - ri->npriv++;
}

#ifdef ES_DEBUG
/* The index as requests.h's invariants say it is: each entry findable where
 * it is and standing for a slot or private record that holds its handle;
 * every board slot either free or an entry's, never both. */
bool es__ri_whole(struct es_rindex *ri)
{
	size_t n = 0;
	int on_board = 0;
	for (size_t i = 0; i < ri->cap; i++) {
		struct rentry *e = &ri->tab[i];
		if (e->handle == MPI_REQUEST_NULL)
			continue;
		n++;
		on_board += e->slot >= 0;
		if (rec_of(ri, e->slot)->handle != es_handle_of(e->handle) || !find_slot(ri, e->handle, e->slot))
			return false;
	}
	return n == ri->n && (!es_t.reqs || on_board + ri->nfree == (int)ES_REQS_SLOTS);
}
#endif
