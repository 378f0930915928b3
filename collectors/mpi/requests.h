/* requests.h - the requests libescollect follows and the channels it counts messages on (requests.c, reqindex.c): what the wrappers and the other parts call. */
#ifndef ES_MPI_REQUESTS_H
#define ES_MPI_REQUESTS_H

#include "collectors/mpi/record.h"

/* --- channels (requests.c) --------------------------------------------------------------- */

/* A message to or from peer (a world rank) on c with tag: its place
 * (ES_NUM_NONE when it has no channel: no communicator, any source). */
ES_INLINE struct es_num es_chan(const struct es_comm *c, uint32_t peer, uint32_t tag, uint32_t dir)
{
	return c && peer != ES_NONE ? es_chan_at(peer, tag, c->serial, dir) : ES_NUM_NONE;
}
/* A send: counted before its call (its place returned, for its tuple) */
ES_INLINE struct es_num es_chan_send(const struct es_comm *c, uint32_t peer, uint32_t tag)
{
	struct es_num m = es_chan(c, peer, tag, 0);
	es_chan_done(m);
	return m;
}
/* A receive that ended in its call: its tuple numbered, then counted */
ES_INLINE void es_end_recv(unsigned op, uint64_t t0, const struct es_comm *c, uint32_t src, uint64_t bytes,
			   uint32_t tag, int rc, int want)
{
	struct es_num m = rc == MPI_SUCCESS ? es_chan(c, src, tag, ES_CHAN_RECVD) : ES_NUM_NONE;
	if (want)
		es_write_msg(op, t0, es_now(), src, bytes, tag, es_serial16(c), rc, m);
	es_chan_done(m);
}

/*
 * Polls.  A poll that completes nothing reads no clock and writes
 * nothing: it counts itself in its thread's streak for that call.  The
 * first poll of a streak takes the streak's one stamp (before the call,
 * as it cannot know whether it will complete), notes it and, for a poll
 * on requests, keeps the handles it was given and marks them waited for.
 * The poll that completes writes the streak as one tuple (from its first
 * poll to now, arg = the polls it took), if polls are recorded, and the
 * completions of the requests it completed, always.
 */
ES_INLINE int es_poll_begin(int slot, uint64_t *t0)
{
	struct es_streak *s = &es_t.streak[slot];
	if (s->polls) {
		*t0 = s->start;
		return 0;
	}
	*t0 = es_now();
	return 1;
}

/* note: polls are recorded, so the notes say so (a poll followed only
 * for its requests leaves them alone) */
ES_INLINE void es_poll_miss(int slot, uint64_t t0, int fresh, int note_it, unsigned op, uint32_t note,
				uint64_t arg, uint64_t comm)
{
	struct es_streak *s = &es_t.streak[slot];
	if (fresh) {
		s->start = t0;
		s->polls = 1;
		if (note_it && es_elem())
			es_note_call(es_t.notes, t0, op, note, arg, comm);
	} else {
		s->polls++;
	}
}

static inline void es_poll_end(int slot, unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
			       uint16_t comm, int rc)
{
	struct es_streak *s = &es_t.streak[slot];
	uint32_t polls = s->polls < UINT32_MAX ? (uint32_t)s->polls + 1 : UINT32_MAX;
	s->polls = 0;
	s->key = 0;
	if (es_want(op))
		es_write(op, t0, t1, element, bytes, polls, comm, rc);
}

/* Whether the streak's array held a live request when MPI said it is
 * done: MPI_Testall over null requests is, at once, having completed
 * nothing (a loop that tests what it finished gets many such), and is a
 * fruitless poll.  An array not held (too long to copy) counts as live. */
static inline int es_poll_live(int slot)
{
	const struct es_streak *s = &es_t.streak[slot];
	if (!s->n)
		return 1;
	for (int i = 0; i < s->n; i++)
		if (s->held[i] != MPI_REQUEST_NULL)
			return 1;
	return 0;
}

/* Whether a poll of an array must hold its handles again, though inside
 * a streak: it was given another array than the streak holds (a loop that
 * polls two arrays with one call), or the thread has made a request since
 * (es_t.held: the program may have put it in this array). */
static inline int es_poll_moved(int slot, const MPI_Request *c, const MPI_Fint *f, int n)
{
	const struct es_streak *s = &es_t.streak[slot];
	return s->array != (c ? (const void *)c : (const void *)f) || s->n != n || s->recheck;
}

/*
 * The fast path.  A poll's entry point (wrappers.c) compares the streak's
 * key with the key of what it was given, and when they are equal makes
 * MPI's call and, when that completes nothing, only counts it (poll_NAME):
 * no stamp, no request looked at, no order looked for, one line of the
 * thread's data read and written.  hpcc's RandomAccess makes a fruitless
 * MPI_Testany every 30 ns, so each instruction here is a point of its
 * speed.  Invariants:
 *  - key != 0 only inside a streak (polls != 0) whose poll went through
 *    rec_NAME and armed it (es_poll_arm), and, for a poll of an array,
 *    only while the streak holds that array's n handles and no request
 *    was made since (!recheck): exactly when es_poll_moved would say no.
 *  - Whatever breaks that clears it: a streak's end (es_poll_end), its
 *    handles taken again (es_poll_hold, from either language's binding),
 *    a request made (requests.c's drop_held).  So a poll whose key matches
 *    may skip everything rec_NAME would have found it need not do.
 *  - A poll of one request (MPI_Test) or of none (MPI_Iprobe) has key
 *    ES_POLL_ONE: its streak is all there is to match, as before.
 * An order of esctl is not looked for inside a streak: a fruitless poll
 * writes nothing, and the completing one asks es_want before it writes.
 */
#define ES_POLL_ONE ((uintptr_t)1)
static inline uintptr_t es_poll_key(const void *array, int n)
{
	/* user addresses fit in 47 bits, so an array's address and its count
	 * (below 2^15: a longer array is held each time) never meet ES_POLL_ONE
	 * nor each other */
	return (uintptr_t)array ^ (uintptr_t)(unsigned)n << 48;
}

/* After rec_NAME's fruitless poll: the next may take the fast path
 * (array NULL: a poll of one request or none) */
static inline void es_poll_arm(int slot, const void *array, int n)
{
	struct es_streak *s = &es_t.streak[slot];
	if (!array)
		s->key = s->polls ? ES_POLL_ONE : 0;
	else
		s->key = s->polls && s->array == array && s->n == n && n > 0 && n < (1 << 15) && !s->recheck
			 ? es_poll_key(array, n) : 0;
}

/* es_poll_end, out of line: the completing poll of a streak, from poll_NAME */
void es_poll_done(int slot, unsigned op, uint64_t t1, uint32_t element, uint64_t bytes, uint16_t comm, int rc) ES_HIDDEN
	__attribute__((cold, noinline));

/* --- requests (requests.c) ------------------------------------------------------------ */

/*
 * Invariants (the request's life, as SQLite's pager writes its states):
 *  - A request a recorded call made (Isend..., Irecv, a nonblocking
 *    collective, an init call, MPI_Rput..., MPI_Comm_idup) is followed by
 *    the thread that made it, its owner: an entry in the owner's index,
 *    by handle, and a slot on its board (or, when the board is full, a
 *    record kept privately, which monitors do not see).
 *  - A request made with the library's shared completed handle
 *    (es_g.done_req: Open MPI gives it to every send it completed within
 *    the call) completed in its call: its completion is written there and
 *    it is not followed, since no wait could tell it from the others.
 *    Every other handle stands for one live request: one given again
 *    means MPI freed the request it stood for without our seeing its
 *    completion, which stays unknown (its entry goes, and can never take
 *    another's completion).  Where no shared handle was found (another
 *    MPI), one handle may stand for several live requests: its entries
 *    keep their order, and a wait given it k times takes its k oldest.
 *  - Only the owner writes its index and its board's slots, except the
 *    words waiter and done.  A slot's ver is odd while the owner rewrites
 *    it and moves on with every change.
 *  - The call that completes a request writes its completion tuple once,
 *    in its own thread: a nonpersistent request then leaves index and
 *    board (its handle is MPI_REQUEST_NULL, and MPI may give it to the
 *    next request); a persistent one stays, inactive, until
 *    MPI_Request_free.  A thread that completes another's request marks
 *    the slot done; its owner drops it when it meets the handle again or
 *    needs the room.
 *  - A wait or test marks the slots of the requests it was given with its
 *    start stamp (waiter) before it calls MPI, after its notes; its notes'
 *    element counts the requests it was given that nobody follows.
 */
/* end: the making call's end stamp, a completion's end if MPI completed
 * the request within the call (0: not known, the clock is read then) */
void es_req_made(MPI_Request req, unsigned op, const struct es_comm *c, uint32_t peer, uint32_t arg,
		 uint64_t size, uint64_t start, uint64_t end, unsigned state) ES_HIDDEN;
/* MPI_Comm_idup: the communicator it makes over parent is met when the
 * request completes (C only: a Fortran one is met at its first use). */
void es_req_idup(MPI_Request req, struct es_comm *parent, MPI_Comm *newcomm, uint32_t seed) ES_HIDDEN;

/* Where a request given to a wait is followed: in this thread's index, on
 * another thread's board (at slot, as it was at ver), or nowhere. */
enum es_ref_kind { ES_REF_NONE = 0, ES_REF_MINE, ES_REF_OTHER };
struct es_ref {
	int kind, owner, slot;
	uint64_t ver;
};

/* A wait's or test's requests, from before the call to after it. */
struct es_wait {
	int n;                  /* requests given */
	int followed;           /* how many of them are followed */
	bool recv;              /* some receive (or a request MPI_Cancel was called on) among
				 * them: statuses are needed */
	const MPI_Request *c;   /* the caller's array: C handles, or */
	MPI_Fint *f;            /* Fortran ones */
	MPI_Request *held;      /* their handles before the call */
	struct es_ref *ref;     /* where each is followed */
	MPI_Status *st;         /* ours, when the caller ignores statuses */
	MPI_Fint *fst;          /* Fortran statuses, likewise */
	/* room for a few, in place (es_wait_begin clears what is above) */
	MPI_Request held_small[8];
	struct es_ref ref_small[8];
	MPI_Status st_small[8];
	MPI_Fint fst_small[8 * (sizeof(MPI_Status) / sizeof(MPI_Fint))];
};
/* how es_wait_end learns which completed */
enum es_which { ES_WHICH_ALL = 1, ES_WHICH_INDEX, ES_WHICH_SOME };

/* Before the call: the handles, each one's record found and marked as
 * waited for at t0 (0: no stamp, nothing noted).  Returns how many given
 * requests are not followed. */
int es_wait_begin(struct es_wait *w, const MPI_Request *c, MPI_Fint *f, int n, uint64_t t0) ES_HIDDEN;
/* Statuses to pass MPI: the caller's, or ours when the caller ignores them
 * but a followed receive needs its source, tag and size. */
MPI_Status *es_wait_statuses(struct es_wait *w, MPI_Status *given, int n) ES_HIDDEN;
MPI_Fint *es_wait_fstatuses(struct es_wait *w, MPI_Fint *given, int n) ES_HIDDEN;
/* After the call, at its end stamp t1 (0: none was read, the clock is
 * read if a completion needs it): the completions, from what MPI said: every request
 * (ES_WHICH_ALL: statuses[i] for request i; count 0 when none completed),
 * the one at index (ES_WHICH_INDEX, count 1: *status), or count of them
 * at indices (ES_WHICH_SOME, statuses[k] for indices[k]).  Fortran indices
 * are 1-based.  Frees what es_wait_begin took. */
void es_wait_end(struct es_wait *w, int rc, enum es_which which, int count, const int *indices,
		 const MPI_Status *sts, const MPI_Fint *fsts, uint64_t t1) ES_HIDDEN;

/* Persistent requests started: a tuple per request, with what its init
 * call said, each marked active. */
void es_started(unsigned op, uint64_t t0, const MPI_Request *c, const MPI_Fint *f, int n,
		int rc) ES_HIDDEN;
/* MPI_Request_free, MPI_Cancel: before the call, the request as it was */
void es_req_freed(MPI_Request req) ES_HIDDEN;
void es_req_cancelled(MPI_Request req) ES_HIDDEN;

/* Polls on requests: the streak's first poll keeps the handles and marks
 * them (es_wait_begin's work, kept in the streak), and returns how many
 * nobody follows; the completing poll writes the completions.  MPI_Test's
 * one request is es_t.poll_req, set before each call (only MPI_Test's:
 * another poll of one request, MPI_Testany(1, ...), in the same loop must
 * not be taken for it).  Fortran indices are 1-based. */
int es_poll_hold(int slot, const MPI_Request *c, MPI_Fint *f, int n, uint64_t t0) ES_HIDDEN;
/* The thread's own statuses for n requests, when the caller ignores them */
MPI_Status *es_poll_statuses(int n) ES_HIDDEN;
MPI_Fint *es_poll_fstatuses(int n) ES_HIDDEN;
/* single: MPI_Test's one request as it was before the call (es_t.poll_req);
 * NULL for a poll of an array, even of one, whose streak kept its handles */
void es_poll_completed(int slot, const MPI_Request *single, const MPI_Request *c, MPI_Fint *f, int n,
		       enum es_which which, int count, const int *indices, const MPI_Status *sts,
		       const MPI_Fint *fsts, uint64_t t1) ES_HIDDEN;
void es_requests_setup(void) ES_HIDDEN;
void es_requests_reset(void) ES_HIDDEN;

#endif
