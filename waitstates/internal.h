/* internal.h - what the wait-state engine's files share: its tables, each thread's queue of completing calls, messages and collectives in flight. */
#ifndef ES_WAITSTATES_INTERNAL_H
#define ES_WAITSTATES_INTERNAL_H

#include "base/base.h" /* its tables, vectors and hash */
#include "waitstates/waitstates.h"

#define NIL UINT32_MAX
#define LSWO_KEEP 100 /* Late Sender waits a thread remembers (Scalasca's) */

/*
 * A message in flight, from whichever end came first until both came and
 * every call that judges it has.  Invariants:
 *  - it is in w->msgs under its key while alive (key != ES_EVENT_NO_MSG);
 *  - uses counts the queued calls (items) that name it; it is freed when
 *    both ends came and uses is 0, or when flushed.
 */
struct msg {
	uint64_t key;
	uint64_t sent;   /* E(S): the sending call's enter */
	uint64_t posted; /* E(Q): the receive's posting call's enter */
	uint64_t born;   /* when its first end came (ns), for ws_flush */
	int32_t from, to;
	uint32_t from_loc, to_loc;
	uint32_t uses;
	uint32_t wait_loc[2]; /* the thread whose queued call judges its receive [0], its send [1]; NIL */
	bool have_send, have_recv;
	uint32_t next_free;
};

/* An end a queued call completes: a receive (judged as Late Sender) or a
 * send that may have waited for its receiver (Late Receiver). */
struct item {
	uint32_t msg; /* its index in w->msgs: the item's use keeps it there */
	bool recv;
};

/* A call that completes message ends, in its thread's order: judged when
 * every end it completes has its other end (or was given up). */
struct call {
	uint64_t enter, leave, queued;
	uint32_t site, first, n; /* items first .. first + n - 1 of the thread's */
	uint16_t op, of; /* the call; what it completes (0: itself) */
	bool test;   /* a test or poll: never a wait state */
	bool may_lr; /* a send completion that may have waited for its receiver */
	bool known;  /* the call is known (a completion's wait may not be) */
};

/* A Late Sender wait a thread remembers, for Wrong Order. */
struct ls_seen {
	uint64_t sent; /* E(S) of its message */
	uint64_t ns;
	int32_t from;
	uint32_t site;
	uint16_t op, of;
};

/* What ws_keep keeps for ws_analyse (causes.c): each thread's calls and
 * phases, each wait with the thread that caused it, each collective's
 * members as they left it. */
struct hcall {
	uint64_t start, end;
	uint32_t site;
};
struct hphase {
	uint64_t start, end;
	uint32_t key;
};
struct hmember {
	uint32_t loc;
	uint64_t left;
};
struct hcoll {
	uint32_t first, n; /* into w->hmembers, sorted by loc */
};

/* A completion (op | ES_OP_DONE) waiting for the call it came in. */
struct done {
	struct es_event e;
};

struct loc {
	int32_t rank;
	struct base_vec calls, items, dones; /* calls[head ..], items[ihead ..] pending */
	size_t head, ihead;
	size_t committed; /* items before this are some queued call's */
	uint16_t of;      /* the completions' call, for the call ws__p2p_call_end queues */
	bool may_lr;      /* ... and whether one of them is a send that may have waited */
	struct ls_seen seen[LSWO_KEEP];  /* a ring: the newest at (nseen - 1) % LSWO_KEEP */
	uint32_t nseen;
	uint64_t seen_max; /* no remembered wait's message was sent later than this */
	struct base_tab isends; /* a send request's start -> its message's key (Late Receiver) */
	struct base_vec hcalls, hphases; /* kept (ws_keep): calls inside MPI, phases */
	struct base_vec tops;    /* the latest outermost MPI calls counted (struct span), for count_mpi */
	uint64_t forgot;    /* the end of the latest one no longer in tops */
};
#define TOPS_KEEP 4096 /* outermost calls a thread remembers: a poll's streak around more is counted
			* whole, its calls inside it too for the rest (ws_stats's mpi_nested_lost) */
struct span {
	uint64_t s, e;
};

/* A collective's member as it came: a blocking call's begin and end, or a
 * nonblocking one's post and the wait that completed it. */
struct member {
	uint64_t b, e;         /* begin, end (nonblocking: post, post's leave) */
	uint64_t wb, we;       /* the completing wait's enter, leave (nonblocking) */
	uint32_t site, wsite;  /* the call's, the wait's */
	uint16_t wop;          /* the wait's call */
	int32_t rank;
	uint32_t size, loc;
	bool in, waited, by_test;
};

struct coll {
	uint64_t key, born;
	uint64_t comm;
	uint32_t num, members, came, done_waits, root; /* root: a world rank or ES_NONE */
	uint16_t op;
	bool nb;
	struct member *m; /* by rank in the communicator */
	uint32_t next_free;
};

struct ws {
	struct base_vec locs;   /* struct loc, by loc number */
	struct base_vec msgs;   /* struct msg, a pool */
	uint32_t msg_free;
	struct base_tab msg_ix;
	struct base_vec colls;  /* struct coll, a pool */
	uint32_t coll_free;
	struct base_tab coll_ix;
	struct base_vec rows;   /* struct ws_row */
	struct base_tab row_ix;
	struct base_vec mpi_ns; /* uint64_t by rank */
	struct ws_stats st;
	bool keep, keep_waits;
	struct base_vec hwaits, hcolls, hmembers;
	struct gats *gats; /* one-sided epochs in flight (gats.c), made when first met */
};

/* engine.c */
/* Adds ns to its row: the row's index, or NIL (none: ns 0, or no memory). */
uint32_t ws__add(ws *w, enum ws_pattern p, int32_t rank, uint32_t site, uint16_t op, uint16_t of, uint64_t ns);
/* A wait found: its row's time, and (ws_keep) the wait kept with who caused it. */
void ws__wait(ws *w, enum ws_pattern p, const struct loc *l, uint32_t loc, uint32_t site, uint16_t op, uint16_t of,
	      uint64_t from, uint64_t ns, uint32_t delayer, uint64_t cause);
struct loc *ws__loc(ws *w, uint32_t loc);
/* p2p.c */
int ws__p2p(ws *w, struct loc *l, const struct es_event *e);
/* A completion d that came in call `in` (NULL: not known): its end, an
 * item of the call ws__p2p_call_end queues next. */
int ws__p2p_done(ws *w, struct loc *l, const struct es_event *d, const struct es_event *in);
/* at: when call is NULL (not known), the time the horizon judges it by */
int ws__p2p_call_end(ws *w, struct loc *l, const struct es_event *call, uint64_t at);
void ws__p2p_flush(ws *w, uint64_t before);
void ws__p2p_free(ws *w);
/* gats.c: MPI_Win_post and MPI_Win_start open an epoch, their group
 * marks give its members, MPI_Win_complete, _wait and _test end it */
int ws__gats_open(ws *w, const struct es_event *e);
int ws__gats_member(ws *w, const struct es_event *e);
int ws__gats_end(ws *w, const struct es_event *e);
void ws__gats_flush(ws *w, uint64_t before);
void ws__gats_free(ws *w);
/* colls.c */
bool ws__is_coll(unsigned op);
int ws__coll(ws *w, const struct es_event *e);
int ws__coll_done(ws *w, const struct es_event *done, const struct es_event *wait);
void ws__coll_flush(ws *w, uint64_t before);
void ws__coll_free(ws *w);

#endif
