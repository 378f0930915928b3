/* wrap.h - what the generated wrappers (wrappers.c, from calls.def) use beyond record.h and requests.h: the expressions calls.def writes, and the Fortran bindings' conversions. */
#ifndef ES_MPI_WRAP_H
#define ES_MPI_WRAP_H

#include "collectors/mpi/record.h"
#include "collectors/mpi/requests.h"

/* --- what the expressions in calls.def use ------------------------------------- */

ES_INLINE uint32_t peer(int r)
{
	return r < 0 ? ES_NONE : (uint32_t)r;
}

/*
 * A datatype's size, for the bytes of nearly every call: MPI's own
 * PMPI_Type_size costs a call and some 250 instructions, twice an Isend.
 * The predefined types (never freed, so never given to another type) are
 * met at MPI_Init and kept by handle in a table each lookup reads one slot
 * of; any other type asks MPI.  Invariant: a key is a predefined type's
 * handle and size its size, set before the first wrapper runs and never
 * changed; 0 is never a key.
 */
#define ES_TYPES_HASH 256u
struct es_types {
	uint64_t key[ES_TYPES_HASH];
	uint32_t size[ES_TYPES_HASH];
};
extern struct es_types es_types ES_HIDDEN;
void es_types_setup(void) ES_HIDDEN;
uint64_t es__bytes(int count, MPI_Datatype type) ES_HIDDEN;

ES_INLINE uint32_t es_type_hash(uint64_t k)
{
	return (uint32_t)base_hash_slot(k, ES_TYPES_HASH);
}

ES_INLINE uint64_t es_bytes(int count, MPI_Datatype type)
{
	uint64_t k = es_handle_of(type);
	uint32_t h = es_type_hash(k);
	if (__builtin_expect(es_types.key[h] == k && k, 1))
		return count > 0 ? (uint64_t)count * es_types.size[h] : 0;
	return es__bytes(count, type);
}
uint64_t es_sum(const int counts[], int n, MPI_Datatype type) ES_HIDDEN;
uint64_t es_sumw(const int counts[], const MPI_Datatype *ct, const MPI_Fint *ft, int n) ES_HIDDEN;
/* The bytes a status says came; an I/O call's says no source, and counts
 * all the same */
ES_INLINE uint64_t es_io_got(const MPI_Status *st, int rc)
{
	if (rc != MPI_SUCCESS)
		return 0;
#if defined(OPEN_MPI) && OPEN_MPI
	/* Open MPI's status keeps the bytes received (what MPI_Get_count
	 * divides): two calls fewer on every completed receive */
	return (uint64_t)st->_ucount;
#else
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return (uint64_t)n;
#endif
}
/* A receive's bytes (0: failed, or from MPI_PROC_NULL) */
ES_INLINE uint64_t es_got(const MPI_Status *st, int rc)
{
	return rc == MPI_SUCCESS && st->MPI_SOURCE >= 0 ? es_io_got(st, rc) : 0;
}
int es_comm_size(MPI_Comm comm) ES_HIDDEN;
uint64_t es_root_share(int root, MPI_Comm comm, uint64_t bytes) ES_HIDDEN;
int es_outdeg(MPI_Comm comm) ES_HIDDEN;

/* The source a status names, as a world rank of c (ES_NONE: none). */
ES_INLINE uint32_t es_src(const struct es_comm *c, const MPI_Status *st, int rc, int fallback)
{
	return rc == MPI_SUCCESS && st->MPI_SOURCE >= 0 ? es_world(c, st->MPI_SOURCE) : es_world(c, fallback);
}

ES_INLINE uint32_t es_tagof(const MPI_Status *st, int rc, int fallback)
{
	return rc == MPI_SUCCESS && st->MPI_SOURCE >= 0 && st->MPI_TAG >= 0 ? (uint32_t)st->MPI_TAG
									      : peer(fallback);
}

/* what a pointer argument points to, or none when it is NULL: read before
 * the call, which has not yet refused it (MPI's error is the caller's) */
#define DEREF(p, none) ((p) ? *(p) : (none))

/* the expressions' words: c_ is the call's communicator or window */
#define W(r) es_world(c_, (r))
#define ROOT(r) es_root(c_, (r))
#define bytes(c, t) es_bytes((c), (t))
#define got(s) es_got((s), rc)
#define iogot(s) es_io_got((s), rc)
/* this rank's entry of a per-rank array (counts) of the call's communicator */
#define MINE(counts) (c_ && c_->me < c_->size ? (counts)[c_->me] : 0)
#define src(s, fb) es_src(c_, (s), rc, (fb))
#define tagof(s, fb) es_tagof((s), rc, (fb))
#define sum(c, n, t) es_sum((c), (n), (t))
#define sumw es_sumw
#define size_of(c) es_comm_size(c)
#define root_share(r, c, b) es_root_share((r), (c), (b))
#define outdeg(c) es_outdeg(c)

#define ES_STATUS_INIT { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG, .MPI_ERROR = MPI_SUCCESS }

/* --- Fortran ------------------------------------------------------------------------ */

/* The MPI library's own Fortran entry point for a call ("send": Open MPI's
 * ompi_send_f, else mpi_send_), found once; NULL (said once) if none. */
void *es__f_real(void **cache, const char *lower) ES_HIDDEN;
static inline void *es_f_real(void **cache, const char *lower)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	return f ? f : es__f_real(cache, lower);
}

/* MPICH's mpi_f08 routine NAME_f08 (wrapgen_emit.c's f08_mpich), found as es_f_real finds
 * the others; and whether a status argument of one is the f08 module's
 * MPI_STATUS_IGNORE (STATUSES: MPI_STATUSES_IGNORE), an object of its own. */
void *es__f08_real(void **cache, const char *lower) ES_HIDDEN;
static inline void *es_f08_real(void **cache, const char *lower)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	return f ? f : es__f08_real(cache, lower);
}
int es_f08_ignore(const void *status, int statuses) ES_HIDDEN;

/* Whether a Fortran buffer is MPI_IN_PLACE (a common block, not C's constant). */
int es_f_in_place(const void *buf) ES_HIDDEN;

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are read as int arrays");
/* A Fortran status: the C one's words (MPI_STATUS_SIZE), with room to spare */
#define ES_F_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))
#define ES_F_STATUS_SIZE (ES_F_STATUS_INTS + 2)
#define ES_F_ALIAS(fn) __attribute__((alias(#fn), visibility("default")))
/*
 * An MPI routine's Fortran names.  Open MPI's Fortran bindings call PMPI_
 * (or ompi_*_f) and never the C MPI_ entry points, so libescollect defines
 * them.  MPICH's mpif.h and `use mpi` bindings call the C MPI_ functions,
 * which the C entry points record: under MPICH the Fortran names stay
 * hidden in the library (an entry point of ours that called MPICH's would
 * come back through our C one: each call recorded twice, MPI_Init run
 * twice).  The difference between the two MPIs' bindings is stated here.
 */
#if defined(MPICH_VERSION)
#define ES_F_MPI_ALIAS(fn) __attribute__((alias(#fn), visibility("hidden")))
#else
#define ES_F_MPI_ALIAS(fn) ES_F_ALIAS(fn)
#endif

#endif
