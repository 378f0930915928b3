/* record.h - what libescollect's wrappers call: a recorded call as a trace tuple, poll streaks, requests, communicators. */
#ifndef ES_MPI_RECORD_H
#define ES_MPI_RECORD_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "collectors/collectors.h"

/*
 * The wrappers in wrappers.c (written by wrapgen from calls.def) are the
 * only callers.  Everything here is hidden inside libescollect.so: the
 * library exports MPI's names and nothing of its own.
 *
 * The common path of a recorded call takes no lock and makes no system
 * call: a load of es_route.collect[op], two clock reads, two stores into the
 * thread's notes and one write into the thread's own trace element.
 */

#define ES_HIDDEN __attribute__((visibility("hidden")))

/* --- the process and its threads ------------------------------------------- */

/*
 * What an entry point reads to decide, in one page: whether to record the
 * call, whether nonblocking collectives are waiting for a wait or test to
 * complete them, and where the MPI library's own routine is.  Programs like
 * hpcc's RandomAccess call MPI between random accesses that evict the TLB,
 * and each further page on the pass-through path (our GOT, a global
 * elsewhere) is a further page walk per call.  The entry points themselves
 * sit together in .text.es_entry for the same reason.
 */
struct es_route {
	unsigned char collect[256]; /* by op code: record it; all zero while not tracing */
	atomic_int nbc_outstanding; /* nonblocking collectives not yet completed */
	void (*pmpi[256])(void);    /* by op code: PMPI_NAME, for the pass-through */
} __attribute__((aligned(4096)));
extern struct es_route es_route ES_HIDDEN; /* in wrappers.c, which knows every PMPI name */

struct es_proc {
	int rank, size;
	uint32_t threshold;         /* tuples per thread's trace element */
	es_space *sp;
	char job[PS_NAME_MAX + 1];
	int keyval, win_keyval;     /* our attribute on communicators and windows */
	pthread_mutex_t lock;
	int nthreads;
	ps_elem *elems[4096];       /* one per thread that ever called MPI */
	int nelems;
	ps_elem *comms;             /* "mpi.comms": the communicators met, for monitors */
	uint32_t comm_hash[4096];
	int ncomms;
	ps_tcp *tcp;                /* this node's tuple server, on its first rank */
};
extern struct es_proc es_g ES_HIDDEN;

/* A thread's run of fruitless polls of one kind: when it began, how many. */
struct es_streak {
	uint64_t start;
	uint64_t polls; /* wide enough never to saturate: a fruitless poll only adds one */
};

struct es_thread {
	ps_elem *elem; /* its trace element, made at its first recorded call */
	_Atomic uint64_t *notes;
	uint32_t seq;
	uint16_t id;
	bool tried;
	struct es_streak streak[ES_MPI_NPOLLS];
	/* the status a poll inside a streak passed MPI (poll_NAME in wrappers.c):
	 * kept here, not in a register saved across the call, for the one poll
	 * that completes; a poll made from inside MPI's call (a generalized
	 * request's callback) may overwrite it, and then the completing poll
	 * records that one's source and size, nothing worse */
	MPI_Status *poll_st;
	MPI_Status poll_status; /* when the program passed MPI_STATUS_IGNORE */
};
/* initial-exec: a preloaded library's TLS is a fixed offset, no call */
extern __thread struct es_thread es_t ES_HIDDEN __attribute__((tls_model("initial-exec")));

ps_elem *es_thread_elem(void) ES_HIDDEN; /* makes it; NULL if it cannot */

static inline ps_elem *es_elem(void)
{
	return __builtin_expect(es_t.elem != NULL, 1) ? es_t.elem : es_thread_elem();
}

static inline int es_want(unsigned op)
{
	return es_route.collect[op];
}

static inline void es_write(unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
			    uint32_t arg, int rc)
{
	ps_elem *e = es_elem();
	if (!e)
		return;
	struct es_trace t = { .start = t0, .end = t1, .seq = es_t.seq++,
			      .op = (uint16_t)(op | (rc != MPI_SUCCESS ? ES_OP_FAILED : 0)),
			      .collector = es_t.id, .element = element,
			      .size = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes, .arg = arg };
	ps_write(e, &t, 0, NULL);
}

/* A communicator or window as the notes and mpi.comms hold it (a pointer
 * in Open MPI, an int in MPICH). */
#define es_handle(h) ((uint64_t)(uintptr_t)(h))

/* The call starts: its stamp, and the notes say what the thread is inside
 * and whom it waits for (note: a rank of comm; arg: the tag, or a
 * collective's id and number). */
static inline __attribute__((always_inline)) uint64_t es_begin(unsigned op, uint32_t note, uint32_t arg,
								uint64_t comm)
{
	uint64_t t0 = es_now();
	if (es_elem())
		es_note_call(es_t.notes, t0, op, note, arg, comm);
	return t0;
}

static inline void es_end(unsigned op, uint64_t t0, uint32_t element, uint64_t bytes, uint32_t arg,
			  int rc)
{
	es_write(op, t0, es_now(), element, bytes, arg, rc);
}

/*
 * Polls.  A poll that completes nothing reads no clock and writes
 * nothing: it counts itself in its thread's streak for that call.  The
 * first poll of a streak takes the streak's one stamp (before the call,
 * as it cannot know whether it will complete).  The poll that completes
 * writes the streak as one tuple: from its first poll to now, arg = the
 * polls it took.  The first fruitless poll of a streak notes it: until a
 * poll completes, or another recorded call begins, the thread is inside
 * the streak (in a loop of MPI_Test, it waits as much as in MPI_Wait).
 */
static inline int es_poll_begin(int slot, uint64_t *t0)
{
	struct es_streak *s = &es_t.streak[slot];
	if (s->polls) {
		*t0 = s->start;
		return 0;
	}
	*t0 = es_now();
	return 1;
}

static inline void es_poll_miss(int slot, uint64_t t0, int fresh, unsigned op, uint32_t note,
				uint32_t arg, uint64_t comm)
{
	struct es_streak *s = &es_t.streak[slot];
	if (fresh) {
		s->start = t0;
		s->polls = 1;
		if (es_t.notes)
			es_note_call(es_t.notes, t0, op, note, arg, comm);
	} else {
		s->polls++;
	}
}

static inline void es_poll_end(int slot, unsigned op, uint64_t t0, uint32_t element, uint64_t bytes,
			       int rc)
{
	struct es_streak *s = &es_t.streak[slot];
	uint32_t polls = s->polls < UINT32_MAX ? (uint32_t)s->polls + 1 : UINT32_MAX;
	s->polls = 0;
	es_write(op, t0, es_now(), element, bytes, polls, rc);
}

/* es_poll_end, out of line: the completing poll of a streak, from poll_NAME */
void es_poll_done(int slot, unsigned op, uint32_t element, uint64_t bytes, int rc) ES_HIDDEN
	__attribute__((cold, noinline));

/* --- requests: nonblocking collectives and persistent requests ----------------- */

/*
 * A nonblocking collective's request is remembered from its call until a
 * wait or test completes it, which then writes the collective's second
 * tuple (op | ES_OP_DONE).  Waits and tests look only while some are
 * outstanding.  Requests come as C handles (c) or Fortran ones (f): one
 * of the two is NULL.
 */
struct es_req_entry {
	MPI_Request req;
	uint64_t t0, size;
	uint32_t element, arg;
	uint16_t op;
};
struct es_reqs {
	int n, cap;
	int *idx;
	struct es_req_entry *e;
	int idx_small[4];
	struct es_req_entry e_small[4];
};
static inline int es_nbc_pending(void)
{
	return atomic_load_explicit(&es_route.nbc_outstanding, memory_order_relaxed) != 0;
}

void es__reqs_find(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f, int n) ES_HIDDEN;
void es__reqs_done(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f) ES_HIDDEN;

static inline void es_reqs_before(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f, int n)
{
	r->n = 0;
	if (es_nbc_pending())
		es__reqs_find(r, c, f, n);
}

static inline void es_reqs_after(struct es_reqs *r, const MPI_Request *c, const MPI_Fint *f)
{
	if (r->n)
		es__reqs_done(r, c, f);
}

void es_nbc_started(MPI_Request req, unsigned op, uint64_t t0, uint32_t element, uint64_t size,
		    uint32_t arg) ES_HIDDEN;

/* Persistent requests: what each init call said, for the starts. */
static inline int es_persist_wanted(void)
{
	return es_want(ES_OP_MPI_START) || es_want(ES_OP_MPI_STARTALL);
}
void es_persist(MPI_Request req, unsigned op, uint32_t element, uint64_t size, uint32_t arg) ES_HIDDEN;
void es_started(unsigned op, uint64_t t0, const MPI_Request *c, const MPI_Fint *f, int n,
		int rc) ES_HIDDEN;
void es_requests_reset(void) ES_HIDDEN;

/* --- communicators and windows --------------------------------------------------- */

/*
 * A collective's tuple says which communicator and which call on it:
 * arg = id << 20 | number.  The id (12 bits) hashes the communicator's
 * members, as world ranks, and how many communicators with those members
 * this process had met before: every member computes the same.  The
 * number counts the recorded collectives on it (it wraps at 2^20).  Each
 * rank's element "mpi.comms" lists the ids it met, with their sizes and
 * its rank in each, so that a monitor knows who takes part.  Windows are
 * numbered the same way (their fences, creation and freeing) and listed
 * with the top bit of the fourth word set.
 */
uint32_t es_coll(MPI_Comm comm) ES_HIDDEN;
uint32_t es_win_coll(MPI_Win win) ES_HIDDEN;
void es_comm_met(MPI_Comm comm) ES_HIDDEN;
void es_win_met(MPI_Win win) ES_HIDDEN;
uint32_t es_win_id(MPI_Win win) ES_HIDDEN;
void es_comms_setup(void) ES_HIDDEN;
void es_comms_finalize(void) ES_HIDDEN;

/* --- what the expressions in calls.def use ------------------------------------- */

static inline uint32_t peer(int r)
{
	return r < 0 ? ES_NONE : (uint32_t)r;
}

uint64_t es_bytes(int count, MPI_Datatype type) ES_HIDDEN;
uint64_t es_sum(const int counts[], int n, MPI_Datatype type) ES_HIDDEN;
uint64_t es_sumw(const int counts[], const MPI_Datatype *ct, const MPI_Fint *ft, int n) ES_HIDDEN;
uint64_t es_got(const MPI_Status *st, int rc) ES_HIDDEN;
int es_comm_size(MPI_Comm comm) ES_HIDDEN;
uint64_t es_root_share(int root, MPI_Comm comm, uint64_t bytes) ES_HIDDEN;
int es_outdeg(MPI_Comm comm) ES_HIDDEN;

static inline uint32_t es_src(const MPI_Status *st, int rc, int fallback)
{
	return rc == MPI_SUCCESS && st->MPI_SOURCE >= 0 ? (uint32_t)st->MPI_SOURCE : peer(fallback);
}

static inline uint32_t es_tagof(const MPI_Status *st, int rc, int fallback)
{
	return rc == MPI_SUCCESS && st->MPI_SOURCE >= 0 && st->MPI_TAG >= 0 ? (uint32_t)st->MPI_TAG
									      : peer(fallback);
}

#define bytes(c, t) es_bytes((c), (t))
#define got(s) es_got((s), rc)
#define src(s, fb) es_src((s), rc, (fb))
#define tagof(s, fb) es_tagof((s), rc, (fb))
#define sum(c, n, t) es_sum((c), (n), (t))
#define sumw es_sumw
#define size_of(c) es_comm_size(c)
#define root_share(r, c, b) es_root_share((r), (c), (b))
#define outdeg(c) es_outdeg(c)
#define win_id(w) es_win_id(w)

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

/* Whether a Fortran buffer is MPI_IN_PLACE (a common block, not C's constant). */
int es_f_in_place(const void *buf) ES_HIDDEN;

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are read as int arrays");
/* A Fortran status, with room to spare */
#define ES_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint) + 2)
#define ES_F_ALIAS(fn) __attribute__((alias(#fn), visibility("default")))

#endif
