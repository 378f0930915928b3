/* record.h - the core of what libescollect's parts share: the process and its threads, a recorded call as a trace tuple, poll streaks, call sites, messages' numbers, communicators; requests.h and wrap.h build on it. */
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
 * call: a load of es_route.collect[op], two clock reads, a few stores into
 * the thread's notes and boards and one write into the thread's own trace
 * element.  Locks are taken only where communicators are made or freed.
 *
 * Why the tables here are not base_tab (base/base.h), the one table of
 * the rest of EventSpace: each is the hot path of an application's MPI
 * calls, or read by another process or thread while one writes it, and
 * base_tab is for one thread's memory off the hot path.
 *  - the request index (reqindex.h) and the types' and call sites' caches
 *    are looked up inline on every call: fixed arrays whose probe gcc
 *    inlines, with no function call, no malloc and no growth to copy
 *    while a rank waits in MPI;
 *  - the boards (mpi.chansK, the request board) live in shared memory,
 *    read by monitors while written, and the files' handles are looked up
 *    by the application's threads at once: slots change by atomics and
 *    are never moved (base_tab's backward shift moves them);
 *  - clocks.c's set of hosts runs once at MPI_Init, on memory it is given.
 * They share base.h's hash (base_hash_slot, base_probe), so that one
 * function places every key of EventSpace.
 */

#define ES_HIDDEN __attribute__((visibility("hidden")))
/* What a recorded call's body is made of: small, and inlined whatever the
 * size of the body (gcc's heuristics called es_world four times in
 * MPI_Sendrecv's, for one value) */
#define ES_INLINE static inline __attribute__((always_inline))

/* --- the process and its threads ------------------------------------------- */

/*
 * What an entry point reads to decide, in one page: whether to record the
 * call, whether requests are followed (so that waits and tests must look
 * at theirs), and where the MPI library's own routine is.  Programs like
 * hpcc's RandomAccess call MPI between random accesses that evict the TLB,
 * and each further page on the pass-through path (our GOT, a global
 * elsewhere) is a further page walk per call.  The entry points themselves
 * sit together in .text.es_entry for the same reason.
 */
struct es_route {
	unsigned char collect[256]; /* by op code: record it; all zero while not tracing */
	unsigned char tracing;      /* the job is traced: communicators are followed */
	unsigned char reqs;         /* some request has been followed: waits and tests look */
	unsigned char depth;        /* frames of a call site: 1, a call path (ES_CALLPATH), 0: none */
	/* es.ctl's count of orders written (ps_elem_watch_word), or ctl_seen
	 * itself while there is none: a new order is a count not seen yet */
	const uint64_t *ctl;
	uint64_t ctl_seen;
	void (*pmpi[256])(void);    /* by op code: PMPI_NAME, for the pass-through */
} __attribute__((aligned(4096)));
extern struct es_route es_route ES_HIDDEN; /* in wrappers.c, which knows every PMPI name */

#define ES_MAX_THREADS 64 /* the segment has room for this many threads' elements and boards */
#define ES_COMMS_HELD 16383u /* records mpi.comms holds (comms.c writes the live ones again) */

struct es_comm;

struct es_proc {
	int rank, size;
	uint32_t threshold;         /* tuples per thread's trace element */
	es_space *sp;
	char job[PS_NAME_MAX + 1];
	int keyval, win_keyval;     /* our attribute on communicators and windows */
	pthread_mutex_t lock;       /* threads joining; communicators made and freed */
	int nthreads;
	ps_elem *elems[4 * ES_MAX_THREADS]; /* every thread's trace element and boards */
	int nelems;
	/* the threads' request boards, for a wait in one thread on another's request */
	struct es_req_rec *_Atomic boards[ES_MAX_THREADS];
	ps_elem *comms;             /* "mpi.comms": the communicators met, for monitors */
	ps_elem *calls_elem;        /* "mpi.calls" */
	struct es_calls_rec *calls; /* its slots */
	uint32_t next_serial;
	struct es_comm *live, *live_tail; /* in force, the least recently written first */
	_Atomic uint32_t comm_gen;  /* bumped when one is freed: threads' caches start over */
	_Atomic int cancels;        /* MPI_Cancel was called: a completion must ask if it was cancelled */
	/* the one handle MPI gives every request it completed within the call
	 * (Open MPI's shared empty request: sends it completed inline, those to
	 * MPI_PROC_NULL), found at set-up (requests.c); MPI_REQUEST_NULL if none */
	MPI_Request done_req;
	ps_tcp *tcp;                /* this node's tuple server, on its first rank */
	struct es_module_rec *modules; /* mpi.modules' slots (sites.c), or NULL */
	int nmodules;               /* slots taken, under lock */
	ps_elem *modules_elem;
};
extern struct es_proc es_g ES_HIDDEN;

/* A thread's run of fruitless polls of one kind: when it began, how many,
 * and for the polls that take requests, those its first poll was given
 * (handles as they were then: a completing poll finds its NULL in place of
 * the one that completed). */
struct es_streak {
	uintptr_t key;  /* what a fruitless poll's entry point compares (es_poll_key): first */
	uint64_t polls; /* wide enough never to saturate: a fruitless poll only adds one */
	uint64_t start;
	const void *array;       /* the caller's array of requests, as given */
	bool recheck;            /* a request was made since held was taken: look at it again */
	int n;
	bool recv;               /* some followed receive among them: statuses are needed */
	MPI_Request *held;       /* their handles at the streak's first poll */
	MPI_Request held_small[4];
	int held_cap;
};

#define ES_MSG_HELD 16

struct es_comm_cache {
	MPI_Comm handle;
	struct es_comm *c;
	uint32_t gen;
};

struct es_rindex; /* requests.c: a thread's requests by handle */
struct es_sites;  /* below: a thread's call sites by return address */

#define ES_PHASE_DEPTH 16 /* phases open at once in a thread that are recorded */
struct es_phase {
	uint32_t id; /* its name's number; 0: none left */
	uint64_t start;
};

struct es_thread {
	ps_elem *elem; /* its trace element, made at its first recorded call */
	struct ps_writer w; /* elem's direct path (head NULL: through ps_write) */
	_Atomic uint64_t *notes;
	uint32_t seq;
	uint16_t id;
	bool tried;
	int k;                        /* its number: mpi.threadK */
	struct es_req_rec *reqs;      /* its request board (ES_REQS_SLOTS), or NULL */
	struct es_chan_rec *chans;    /* its channel board (ES_CHANS_SLOTS), or NULL */
	struct es_chans *ch;          /* its channels, as it numbers their messages (requests.c) */
	struct es_chan *chan_last[2]; /* the channel a send, a receive last counted on, or NULL */
	struct es_rindex *ri;
	struct es_streak streak[ES_MPI_NPOLLS];
	/* the status a poll inside a streak (poll_NAME in wrappers.c) gives MPI
	 * when the program passed MPI_STATUS_IGNORE; a poll made from inside
	 * MPI's call (a generalized request's callback) may overwrite it, and
	 * then the completing poll records that one's source and size */
	MPI_Status poll_status;
	MPI_Request poll_req;   /* MPI_Test's request before the call */
	uint32_t held;          /* streaks holding handles, a bit per slot: a request made drops them */
	struct es_comm_cache cc[4];
	/* matched probes' messages, for Mrecv: their communicators (the last
	 * ES_MSG_HELD probed: a program may probe several before it receives) */
	uint64_t msg[ES_MSG_HELD], msg_serial[ES_MSG_HELD];
	unsigned msg_next;
	/* where the program called the recorded call under way: its entry
	 * point's return address, set before the body runs; the body keeps a
	 * copy and puts it back after MPI's call, which may have run a
	 * callback that made a recorded call of its own */
	const void *ra;
	/* the site last named from the table, by its return address: a call's
	 * tuple and its requests' completions name one site, so the table's
	 * hash is taken once a call (the table's numbers are never rewritten,
	 * so the pair stays true) */
	const void *site_ra;
	uint16_t site_id;
	struct es_sites *sites;              /* sites.c's, made at the thread's first site from: */
	struct es_site_rec *site_board;      /* its board mpi.sitesK, core.c's */
	struct es_phase phases[ES_PHASE_DEPTH]; /* phases.c: those open, outermost first */
	int nphases;                  /* open (beyond ES_PHASE_DEPTH: counted only) */
	int pcontrol;                 /* the phase MPI_Pcontrol began: its index + 1; 0: none */
};
_Static_assert(ES_MPI_NPOLLS <= 32, "es_thread.held has a bit per poll");
/* initial-exec: a preloaded library's TLS is a fixed offset, no call */
extern __thread struct es_thread es_t ES_HIDDEN __attribute__((tls_model("initial-exec")));

ps_elem *es_thread_elem(void) ES_HIDDEN; /* core.c: makes it and the boards; NULL if it cannot */
/* A board of the rank's (mpi.calls, mpi.modules...): its slots, *out its
 * element; NULL (and *out NULL) when it cannot be made. */
void *es_rank_board(ps_server *srv, const char *name, size_t rec, uint32_t slots, const char *layout,
		    ps_elem **out) ES_HIDDEN;

ES_INLINE ps_elem *es_elem(void)
{
	return __builtin_expect(es_t.elem != NULL, 1) ? es_t.elem : es_thread_elem();
}

void es__ctl_apply(void) ES_HIDDEN; /* control.c: a new order from esctl */
void es_control_setup(ps_server *srv, const unsigned char collect[256], const char *list) ES_HIDDEN;
void es_control_finalize(void) ES_HIDDEN;

ES_INLINE int es_want(unsigned op)
{
#ifndef ES_NO_CONTROL /* defined only for tests/bench/control.sh's library without it */
	/* one load of a line esctl alone writes: shared in every core's cache */
	if (__builtin_expect(__atomic_load_n(es_route.ctl, __ATOMIC_RELAXED) !=
			     __atomic_load_n(&es_route.ctl_seen, __ATOMIC_RELAXED), 0))
		es__ctl_apply();
#endif
	return es_route.collect[op];
}

/* collect[op] without looking for an order: for code an entry point's
 * es_want has already run before (one look a call is enough) */
ES_INLINE int es_collects(unsigned op)
{
	return es_route.collect[op];
}

ES_INLINE int es_tracing(void)
{
	return es_route.tracing;
}

/* --- call sites (sites.c) -------------------------------------------------------------- */

/*
 * Invariants:
 *  - A thread's site numbers are given by the thread alone, in order from
 *    1; number s is slot s of its board, written whole (frames last,
 *    released) before any tuple names it, and never rewritten.
 *  - key[h] / id[h] is an open-addressed table of the numbers given: key
 *    the return address (one frame), or a hash of the frames (a call
 *    path), never 0.  ES_SITE_UNWIND as an id says that the address is
 *    inside an MPI library's Fortran binding, whose caller must be found
 *    by unwinding on every call.
 *  - Every module a site's frames lie in is on mpi.modules before the
 *    site is on the board.
 */
#define ES_SITES_HASH 8192u /* twice the board's slots */
#define ES_SITE_UNWIND 0xffffu
struct es_sites {
	uintptr_t key[ES_SITES_HASH];
	uint16_t id[ES_SITES_HASH];
	struct es_site_rec *board;
	uint32_t next; /* the number the next new site gets */
};
uint16_t es__site(const void *ra) ES_HIDDEN; /* the slow path: a site not met, or a call path */
void es_sites_setup(ps_server *srv) ES_HIDDEN;  /* the rank's mpi.modules */
void es_sites_finalize(void) ES_HIDDEN;
void es_phases_setup(ps_server *srv) ES_HIDDEN;
/* A Fortran string argument of n characters, its padding blanks dropped (phases.c) */
void es_f_str(char *out, size_t len, const char *s, size_t n) ES_HIDDEN;
/* objects.c: the program's objects (es_object.h) visible in the rank's
 * space from MPI_Init until MPI_Finalize begins; the room they take */
void es_objects_setup(ps_server *srv) ES_HIDDEN;
void es_objects_finalize(void) ES_HIDDEN;
size_t es_objects_bytes(void) ES_HIDDEN;
/* MPI-IO (io.c): an open file's number on mpi.files, ES_NONE if not known */
uint32_t es__file_id(MPI_File fh) ES_HIDDEN;
static inline uint32_t es_file_id(MPI_File fh)
{
	return es__file_id(fh);
}
uint32_t es_file_opened(MPI_File fh, const char *filename) ES_HIDDEN; /* its number, or ES_NONE */
void es_file_closed(MPI_File fh) ES_HIDDEN;
void es_files_setup(ps_server *srv) ES_HIDDEN;
void es_files_finalize(void) ES_HIDDEN;
void es_phases_finalize(void) ES_HIDDEN; /* the calling thread's open phases end */
/* ending.c: fatal signals noted in *fatal (mpi.proc's), then passed on */
void es_ending_setup(int32_t *fatal) ES_HIDDEN;
void es_ending_finalize(void) ES_HIDDEN; /* before the segment is unmapped */

ES_INLINE uint32_t es_site_hash(uintptr_t k)
{
	return (uint32_t)base_hash_slot(k, ES_SITES_HASH);
}

/* The thread's number for the site its recorded call came from: 0 if not known. */
ES_INLINE uint16_t es_site(const void *ra)
{
	if (ra == es_t.site_ra && ra) /* set only at one frame (depth 1), which never changes */
		return es_t.site_id;
	struct es_sites *s = es_t.sites;
	if (__builtin_expect(s != NULL && es_route.depth == 1, 1)) {
		uint32_t h = es_site_hash((uintptr_t)ra);
		if (__builtin_expect(s->key[h] == (uintptr_t)ra && s->id[h] != ES_SITE_UNWIND, 1)) {
			es_t.site_ra = ra;
			es_t.site_id = s->id[h];
			return s->id[h];
		}
	}
	return es_route.depth ? es__site(ra) : 0; /* 0: sites not kept (ES_CALLPATH=0) */
}

void es__write_slow(const struct es_trace *t) ES_HIDDEN; /* an element behind a tuple server */

/* A tuple as it is stored (the thread's element made) */
ES_INLINE void es_put(uint16_t op, uint64_t t0, uint64_t t1, uint32_t seq, uint16_t comm, uint32_t element,
		      uint32_t size, uint32_t arg)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* struct es_trace's bytes as the five words ps_write would store
	 * (the last one the tuple's final four bytes, zero-extended) */
	if (__builtin_expect(es_t.w.head != NULL, 1)) {
		uint64_t i;
		_Atomic uint64_t *w = ps_put_begin(&es_t.w, &i);
		atomic_store_explicit(&w[0], t0, memory_order_relaxed);
		atomic_store_explicit(&w[1], t1, memory_order_relaxed);
		atomic_store_explicit(&w[2], seq | (uint64_t)op << 32 | (uint64_t)comm << 48, memory_order_relaxed);
		atomic_store_explicit(&w[3], element | (uint64_t)size << 32, memory_order_relaxed);
		atomic_store_explicit(&w[4], arg, memory_order_relaxed);
		ps_put_end(&es_t.w, i);
		return;
	}
#endif
	struct es_trace t = { .start = t0, .end = t1, .seq = seq, .op = op, .comm = comm,
			      .element = element, .size = size, .arg = arg };
	es__write_slow(&t);
}

/* A call's tuple, seq's low 16 bits given: the thread's count of calls,
 * or a message's number */
ES_INLINE void es_write_lo(unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
			   uint32_t arg, uint16_t comm, int rc, uint16_t lo)
{
	if (__builtin_expect(!es_elem(), 0))
		return;
	es_put((uint16_t)(op | (rc != MPI_SUCCESS ? ES_OP_FAILED : 0)), t0, t1,
	       (uint32_t)es_site(es_t.ra) << 16 | lo, comm, element,
	       bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes, arg);
}

ES_INLINE void es_write(unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
			    uint32_t arg, uint16_t comm, int rc)
{
	es_write_lo(op, t0, t1, element, bytes, arg, comm, rc, (uint16_t)es_t.seq++);
}

/* --- messages' numbers (requests.c; collectors.h says what they are) ---------------------- */

/*
 * A thread's channels: each (peer, tag, communicator's serial, sent or
 * received) it sent or received a message on, with its count.  Invariants:
 *  - Only the thread reads and writes them; the table only grows, so a
 *    channel's count never starts over.
 *  - count is the messages counted on it; rec, its slot on the board
 *    mpi.chansK (NULL: the board had no room), says the same count to
 *    monitors, stored after each message's tuple (a receive: rule R).
 *  - base is the count of the latest mark written for it (collectors.h),
 *    0 before the first: every numbered tuple written since a mark has a
 *    number below base + ES_CHAN_MARK_EVERY.
 */
struct es_chan {
	uint32_t peer, tag, serial, dir; /* dir 0 or ES_CHAN_RECVD; ES_NONE: a free slot */
	uint64_t count, base;
	struct es_chan_rec *rec;
};

/* A message's channel (NULL: not counted: the thread is not traced, or
 * had no memory for a new channel) and its number there. */
struct es_num {
	struct es_chan *c;
	uint64_t n;
};
#define ES_NUM_NONE ((struct es_num){ NULL, 0 })
struct es_chan *es__chan_find(uint32_t peer, uint32_t tag, uint32_t serial, uint32_t dir) ES_HIDDEN;
void es__chan_mark(struct es_num m) ES_HIDDEN __attribute__((cold, noinline));
void es_chans_free(void) ES_HIDDEN;

/* The next message on a channel: where it is counted, and its number.
 * es_chan_done counts it, once its tuple is written (a receive: rule R)
 * or before the call (a send). */
ES_INLINE struct es_num es_chan_at(uint32_t peer, uint32_t tag, uint32_t serial, uint32_t dir)
{
	/* a halo or a ring sends to and receives from the same few channels:
	 * the one each way last counted is tried before the table's hash */
	struct es_chan *c = es_t.chan_last[dir != 0];
	if (__builtin_expect(!c || c->peer != peer || c->tag != tag || c->serial != serial || c->dir != dir, 0))
		c = es__chan_find(peer, tag, serial, dir);
	return (struct es_num){ c, c ? c->count : 0 };
}

ES_INLINE void es_chan_done(struct es_num m)
{
	if (!m.c)
		return;
	m.c->count = m.n + 1;
	if (m.c->rec)
		__atomic_store_n(&m.c->rec->count, m.n + 1, __ATOMIC_RELEASE);
}

/* A message's tuple: numbered when it was counted and succeeded */
ES_INLINE void es_write_msg(unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
			    uint32_t arg, uint16_t comm, int rc, struct es_num m)
{
	if (!m.c || rc != MPI_SUCCESS) {
		es_write(op, t0, t1, element, bytes, arg, comm, rc);
		return;
	}
	uint16_t low;
	if (m.n < ES_NUM_WHOLE && !m.c->base) { /* base is 0 until the first mark, at 2^15 or more */
		low = (uint16_t)(ES_NUM_WHOLE | m.n);
	} else {
		if (__builtin_expect(m.n - m.c->base >= ES_CHAN_MARK_EVERY, 0))
			es__chan_mark(m);
		low = (uint16_t)(m.n & (ES_NUM_WHOLE - 1));
	}
	es_write_lo(op | ES_OP_NUMBERED, t0, t1, element, bytes, arg, comm, rc, low);
}

/* The call starts: its stamp, and the notes say what the thread is inside
 * and whom it waits for (collectors.h: ES_NOTE_*). */
ES_INLINE uint64_t es_begin(unsigned op, uint32_t note, uint64_t arg,
								uint64_t comm)
{
	uint64_t t0 = es_now();
	if (es_elem())
		es_note_call(es_t.notes, t0, op, note, arg, comm);
	return t0;
}

/* The call ends: its tuple; returns its end stamp */
ES_INLINE uint64_t es_end(unsigned op, uint64_t t0, uint32_t element, uint64_t bytes, uint32_t arg,
			  uint16_t comm, int rc)
{
	uint64_t t1 = es_now();
	es_write(op, t0, t1, element, bytes, arg, comm, rc);
	return t1;
}

/* A message's call ends: its tuple, numbered; returns its end stamp */
ES_INLINE uint64_t es_end_msg(unsigned op, uint64_t t0, uint32_t element, uint64_t bytes, uint32_t arg,
			      uint16_t comm, int rc, struct es_num m)
{
	uint64_t t1 = es_now();
	es_write_msg(op, t0, t1, element, bytes, arg, comm, rc, m);
	return t1;
}

/* --- communicators and windows (comms.c) ---------------------------------------- */

/*
 * Invariants:
 *  - A communicator or window the wrappers saw carries our attribute, a
 *    struct es_comm, from when it is made (or first met) until it is freed;
 *    its record is in mpi.comms before any tuple names its serial.
 *  - id is the same on every member (collectors.h says how it is made);
 *    `made` counts the communicators and windows made collectively over it,
 *    and moves on every member alike, whether it got one or MPI_COMM_NULL.
 *  - A thread's cache holds pointers to attributes; es_g.comm_gen moves
 *    before an attribute is freed, and a cache entry of an older gen is
 *    never used.
 *  - world[i] is the world rank of local rank i (NULL: i itself);
 *    rworld[i] of remote rank i, on an intercommunicator.
 */
struct es_comm {
	_Atomic int refs;        /* the attribute's, and open wildcard receives' (comms.c) */
	uint64_t id;
	uint32_t serial, size, me, rsize, flags; /* flags: enum es_comms_flags */
	uint32_t made;
	int *world, *rworld;
	struct es_calls_rec *calls; /* its slot on mpi.calls: collectives begun */
	uint64_t handle;
	uint64_t last_written;   /* its latest record's index in mpi.comms */
	struct es_comm *prev, *next; /* es_g.live */
};

/* A handle as a number: a pointer in Open MPI, an int in MPICH. */
#define es_handle_of(h) ((uint64_t)(uintptr_t)(h))

struct es_comm *es__comm_info(MPI_Comm comm) ES_HIDDEN; /* finds, or meets, it; NULL: none */
/* A request that must map a source it does not know yet (any source)
 * keeps the communicator's translation alive past its freeing. */
void es_comm_hold(struct es_comm *c) ES_HIDDEN;
void es_comm_release(struct es_comm *c) ES_HIDDEN;
extern struct es_comm es_world_comm ES_HIDDEN;

/* The communicator's attribute, through the thread's cache. */
ES_INLINE struct es_comm *es_comm_of(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		return &es_world_comm;
	uint32_t gen = atomic_load_explicit(&es_g.comm_gen, memory_order_acquire);
	struct es_comm_cache *e = &es_t.cc[((uintptr_t)comm >> 4) & 3];
	if (e->handle == comm && e->gen == gen && e->c)
		return e->c;
	struct es_comm *c = es__comm_info(comm);
	*e = (struct es_comm_cache){ comm, c, gen };
	return c;
}
struct es_comm *es_win_of(MPI_Win win) ES_HIDDEN;

/* World rank of rank r of c (the remote group's, on an intercommunicator);
 * ES_NONE for MPI_ANY_SOURCE, MPI_PROC_NULL or a rank c does not have. */
ES_INLINE uint32_t es_world(const struct es_comm *c, int r)
{
	if (!c || r < 0)
		return ES_NONE;
	if (c->flags & ES_COMMS_INTER)
		return (uint32_t)r < c->rsize && c->rworld ? (uint32_t)c->rworld[r] : ES_NONE;
	if ((uint32_t)r >= c->size)
		return ES_NONE;
	return c->world ? (uint32_t)c->world[r] : (uint32_t)r;
}
/* A collective's root as a world rank: MPI_ROOT (this rank is the root of
 * an intercommunicator's collective) is this rank itself. */
ES_INLINE uint32_t es_root(const struct es_comm *c, int root)
{
	return root == MPI_ROOT ? (uint32_t)es_g.rank : es_world(c, root);
}
ES_INLINE uint16_t es_serial16(const struct es_comm *c)
{
	return c ? (uint16_t)c->serial : ES_COMM_NONE;
}
ES_INLINE uint64_t es_note_comm(const struct es_comm *c, uint32_t second)
{
	return (c ? c->serial : ES_NONE) | (uint64_t)second << 32;
}
/* Collective op begins on c, with root (a world rank, or ES_NONE): its
 * number there.  The history entry first, then the count that makes it
 * current (a reader takes last[n % ES_CALLS_HISTORY] for n < begun). */
ES_INLINE uint32_t es_coll(struct es_comm *c, unsigned op, uint32_t root)
{
	if (!c || !c->calls)
		return 0;
	uint64_t n = __atomic_load_n(&c->calls->begun, __ATOMIC_RELAXED);
	__atomic_store_n(&c->calls->last[n % ES_CALLS_HISTORY], ES_CALLS_ENTRY(op, root), __ATOMIC_RELAXED);
	__atomic_store_n(&c->calls->begun, n + 1, __ATOMIC_RELEASE);
	return (uint32_t)n;
}

/* What made a communicator, for its id. */
enum es_made { ES_MADE_CHILD = 1, ES_MADE_GROUP, ES_MADE_INTER, ES_MADE_WINDOW };
/* After a call that makes a communicator (collectively over parent): made
 * is set on every member, the new one gets its id and record (newcomm may
 * be MPI_COMM_NULL on members that got none).  seed: the parent's count
 * as the call began (es_comm_seed), for a call that completes later. */
uint32_t es_comm_seed(struct es_comm *parent) ES_HIDDEN;
void es_comm_made(struct es_comm *parent, uint32_t seed, MPI_Comm newcomm, enum es_made how,
		  int tag) ES_HIDDEN;
void es_win_made(struct es_comm *parent, uint32_t seed, MPI_Win win) ES_HIDDEN;
/* MPI_Win_post's or MPI_Win_start's group, as group marks (collectors.h) */
void es_win_group(unsigned op, MPI_Group group, const struct es_comm *w) ES_HIDDEN;
void es_comms_setup(void) ES_HIDDEN;
void es_comms_finalize(void) ES_HIDDEN;

/* Matched probes: the message's communicator, for MPI_Mrecv and Imrecv. */
void es_msg_probed(MPI_Message m, const struct es_comm *c) ES_HIDDEN;
struct es_comm *es_msg_comm(MPI_Message m) ES_HIDDEN;

/* --- names on a board (names.c): mpi.files, mpi.regions --- */

/* A board of records whose first word says used and whose rest is a name
 * (es_file_rec, es_region_rec): number n's name in slot n. */
struct es_names {
	void *board; /* slots of rec bytes, or NULL */
	ps_elem *elem;
	size_t rec;
	uint32_t slots, n; /* names given: 1..n-1 */
};
void es_names_open(struct es_names *b, ps_server *srv, const char *elem, size_t rec, uint32_t slots,
		   const char *layout) ES_HIDDEN;
/* The name's number, made if new; 0 when none is left.  Under es_g.lock. */
uint32_t es_names_id(struct es_names *b, const char *name) ES_HIDDEN;
/* Under es_g.lock: the board closed, nothing numbered from then on. */
void es_names_close(struct es_names *b) ES_HIDDEN;

/* --- clocks across hosts (clocks.c; collectors.h says what they measure) --- */

/* In MPI_Init, before the trace spaces are made: the host's ranks take
 * one clock line.  Collective over MPI_COMM_WORLD. */
void es_clocks_node(void) ES_HIDDEN;
/* After it: this rank's place among its host's ranks (0: the first), -1
 * if it could not be learned */
int es_node_rank(void) ES_HIDDEN;
/* Once the rank's trace space is made: its board, and MPI_Init's point;
 * congruent: dups of MPI_COMM_WORLD count too (es_clocks_coll). */
void es_clocks_setup(ps_server *srv, bool congruent) ES_HIDDEN;
/* After every blocking all-collective (a barrier, an all-reduce, -gather,
 * -to-all) while traced, on every rank alike: a point when rank 0 asked
 * for one after it, if comm is one of every rank. */
void es_clocks_coll(MPI_Comm comm) ES_HIDDEN;
void es_clocks_coll_f(MPI_Fint comm) ES_HIDDEN;
/* In MPI_Finalize, before MPI's: its point; then the communicators go. */
void es_clocks_finalize(void) ES_HIDDEN;

#endif
