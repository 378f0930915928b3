/* requests.c - the requests libescollect follows from the call that makes them to the wait or test that completes them; the channels' message counts. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/reqindex.h"
#include "collectors/mpi/wrap.h"

/*
 * Each thread follows the requests it made (requests.h says the invariants):
 * its index maps a handle to a slot on its board, where monitors see the
 * request, or to a record of its own when the board is full.  Nothing here
 * takes a lock: a thread writes only its own index and board, and of
 * another's board only the words waiter and done.
 */

/* --- making ----------------------------------------------------------------------------- */

/* A request was made: the polls that hold handles hold them again at
 * their next poll (es_poll_moved), since the program may have put it in
 * the array one polls, where a completing poll would otherwise take the
 * handle it held for that place (another request's, or none). */
static void drop_held(void)
{
	for (uint32_t m = es_t.held; m; m &= m - 1) {
		es_t.streak[__builtin_ctz(m)].recheck = true;
		es_t.streak[__builtin_ctz(m)].key = 0;
	}
	es_t.held = 0;
}

static struct rentry *follow(MPI_Request req, struct es_req_rec *v, struct es_comm *hold)
{
	struct rentry *e;
	struct es_rindex *ri = es__ri_of_thread();
	if (!ri || req == MPI_REQUEST_NULL)
		return NULL;
	/* MPI gave the handle again: the requests it stood for that another
	 * thread completed are done; the others live on beside this one,
	 * unless the library's shared handle is known (es_g.done_req): then no
	 * other stands for two, and MPI freed the one it stood for unseen
	 * (its completion stays unknown, never this one's) */
	size_t at = SIZE_MAX; /* where the index takes req, while nothing moved its entries */
	bool one = es_g.done_req != MPI_REQUEST_NULL;
	for (int k = 0, first = 1; (e = first ? probe(ri, req, &at) : find_nth(ri, req, k)); first = 0) {
		struct es_req_rec *r = rec_of(ri, e->slot);
		uint64_t done = e->slot >= 0 ? __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) : 0;
		at = SIZE_MAX;
		if (es_req_done_by_other(done, r->ver) || k == MAX_SAME - 1 || one) {
			forget(ri, e);
		} else {
			ri->dups = true;
			k++;
		}
	}
	if (!ri->nfree)
		at = SIZE_MAX; /* reclaim may free an entry */
	int slot = ri->nfree ? ri->free_slots[--ri->nfree] : es_t.reqs ? es__ri_reclaim(ri) : -1;
	if (slot < 0 && (slot = es__ri_priv_slot(ri)) == INT32_MIN)
		return NULL; /* no memory: this one goes unfollowed */
	v->handle = es_handle_of(req);
	if (slot >= 0) {
		slot_put(&es_t.reqs[slot], v);
		__atomic_store_n(&es_t.reqs[slot].done, 0, __ATOMIC_RELAXED);
	} else {
		ri->priv[-1 - slot] = *v;
	}
	struct rentry *in = at != SIZE_MAX && (ri->n + 1) * 2 <= ri->cap ? put_at(ri, at, req, slot)
									    : insert(ri, req, slot);
	if (!in) {
		release(ri, slot);
		return NULL;
	}
	if (hold) {
		es_comm_hold(hold);
		extra_of(ri, slot)->c = hold;
	}
	if (!es_route.reqs)
		es_route.reqs = 1;
	return in;
}

static bool is_recv(unsigned op)
{
	op = es_op_code(op);
	return op == ES_OP_MPI_IRECV || op == ES_OP_MPI_RECV_INIT || op == ES_OP_MPI_IMRECV;
}

void es_req_made(MPI_Request req, unsigned op, const struct es_comm *c, uint32_t peer, uint32_t arg,
		 uint64_t size, uint64_t start, uint64_t end, unsigned state)
{
#ifdef ES_BENCH_NOREQ /* tests/bench/mpi.sh's library only: what following requests costs a call */
	return;
#endif
	if (es_t.held)
		drop_held();
	if (req == es_g.done_req && req != MPI_REQUEST_NULL && !(state & ES_REQ_PERSISTENT)) {
		if (state & ES_REQ_QUIET)
			return;
		/* MPI completed it within the call and gave it the handle it gives
		 * every such request: it completed here, when its call ended
		 * (MPI_PROC_NULL's receive: nothing came), and no wait could tell
		 * it from the others */
		es_write(op | ES_OP_DONE, start, end ? end : es_now(), peer, size, arg, c ? (uint16_t)c->serial : ES_COMM_NONE,
			 MPI_SUCCESS);
		return;
	}
	/* a quiet request's call read no clock: monitors order receives by
	 * when they were posted (waits.c, rule R), so it is stamped here */
	if (!start && (state & ES_REQ_QUIET) && !(state & ES_REQ_PERSISTENT))
		start = es_now();
	struct es_req_rec v = { .start = start, .op = (uint16_t)op, .state = (uint16_t)state,
				.serial = c ? c->serial : ES_NONE, .peer = peer, .arg = arg,
				.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size };
	/* a receive from any source learns its source's world rank through c at its completion */
	follow(req, &v, is_recv(op) && peer == ES_NONE ? (struct es_comm *)c : NULL);
	BASE_INVARIANT("each entry of the index stands for one slot or record holding its handle",
		     !es_t.ri || es__ri_whole(es_t.ri));
}

void es_req_idup(MPI_Request req, struct es_comm *parent, MPI_Comm *newcomm, uint32_t seed)
{
	if (req == es_g.done_req && req != MPI_REQUEST_NULL) { /* completed in its call */
		es_comm_made(parent, seed, *newcomm, ES_MADE_CHILD, 0);
		return;
	}
	struct es_rindex *ri = es_t.ri;
	struct rentry *e = ri && req != MPI_REQUEST_NULL ? find(ri, req) : NULL;
	if (!e)
		return;
	struct extra *x = extra_of(ri, e->slot);
	es_comm_release(x->c);
	es_comm_hold(parent);
	*x = (struct extra){ parent, newcomm, seed };
}

/* --- finding what a wait was given ---------------------------------------------------------- */

static MPI_Request handle_at(const MPI_Request *c, const MPI_Fint *f, int i)
{
	return c ? c[i] : PMPI_Request_f2c(f[i]);
}

/* Another thread's board slot holding req, whole. */
static bool find_other(MPI_Request req, struct es_ref *ref, struct es_req_rec *copy)
{
	int n = __atomic_load_n(&es_g.nthreads, __ATOMIC_ACQUIRE);
	for (int k = 0; k < n && k < ES_MAX_THREADS; k++) {
		struct es_req_rec *b = atomic_load_explicit(&es_g.boards[k], memory_order_acquire);
		if (!b || b == es_t.reqs)
			continue;
		for (int s = 0; s < (int)ES_REQS_SLOTS; s++)
			if (__atomic_load_n(&b[s].handle, __ATOMIC_RELAXED) == es_handle_of(req) &&
			    es__slot_get(&b[s], copy) && copy->handle == es_handle_of(req) &&
			    !es_req_done_by_other(copy->done, copy->ver)) {
				*ref = (struct es_ref){ ES_REF_OTHER, k, s, copy->ver };
				return true;
			}
	}
	return false;
}

/* How many times held[i] comes before i. */
static int same_before(const MPI_Request *held, int i)
{
	int k = 0;
	for (int j = 0; j < i; j++)
		k += held[j] == held[i];
	return k;
}

/* Finds each request and marks it waited for at t0; the number not followed. */
static inline __attribute__((always_inline)) int find_refs(const MPI_Request *held, int n, struct es_ref *ref,
							      uint64_t t0, bool *recv, int *followed)
{
	struct es_rindex *ri = es_t.ri;
	int unknown = 0;
	*followed = 0;
	for (int i = 0; i < n; i++) {
		struct es_req_rec copy;
		ref[i].kind = ES_REF_NONE;
		if (held[i] == MPI_REQUEST_NULL || held[i] == es_g.done_req)
			continue; /* none, or one that completed in its call (es_req_made) */
		struct rentry *e = ri ? find(ri, held[i]) : NULL;
		if (e && ri->dups && find_nth(ri, held[i], 1))
			e = find_nth(ri, held[i], same_before(held, i)); /* the k-th time given: the k-th request */
		if (e) {
			struct es_req_rec *r = rec_of(ri, e->slot);
			ref[i] = (struct es_ref){ ES_REF_MINE, -1, e->slot, 0 };
			if (t0 && e->slot >= 0)
				__atomic_store_n(&r->waiter, t0, __ATOMIC_RELAXED);
			*recv |= is_recv(r->op) || (r->state & ES_REQ_CANCELLED); /* statuses needed */
		} else if (es_g.nthreads > 1 && find_other(held[i], &ref[i], &copy)) {
			struct es_req_rec *b = atomic_load_explicit(&es_g.boards[ref[i].owner], memory_order_relaxed);
			if (t0)
				__atomic_store_n(&b[ref[i].slot].waiter, t0, __ATOMIC_RELAXED);
			*recv |= is_recv(copy.op) || (copy.state & ES_REQ_CANCELLED);
		} else {
			unknown++;
			continue;
		}
		++*followed;
	}
	return unknown;
}

static inline bool hold_handles(MPI_Request **held, MPI_Request *small, int cap_small, int *cap, const MPI_Request *c,
			 const MPI_Fint *f, int n)
{
	if (n > cap_small && n > *cap) {
		MPI_Request *h = *held != small ? realloc(*held, sizeof(*h) * (size_t)n) : malloc(sizeof(*h) * (size_t)n);
		if (!h)
			return false;
		*held = h;
		*cap = n;
	} else if (n <= cap_small && *held != small) {
		free(*held);
		*held = small;
		*cap = 0;
	}
	for (int i = 0; i < n; i++)
		(*held)[i] = handle_at(c, f, i);
	return true;
}

int es_wait_begin(struct es_wait *w, const MPI_Request *c, MPI_Fint *f, int n, uint64_t t0)
{
	memset(w, 0, offsetof(struct es_wait, held_small));
	w->c = c;
	w->f = f;
	w->held = w->held_small;
	w->ref = w->ref_small;
#ifdef ES_BENCH_NOREQ /* no request is followed: a wait finds none of its own */
	return 0;
#endif
	int cap = 0;
	if ((!c && !f) || n <= 0 || !hold_handles(&w->held, w->held_small, 8, &cap, c, f, n))
		return 0;
	if (n > 8 && !(w->ref = malloc(sizeof(*w->ref) * (size_t)n))) {
		w->ref = w->ref_small;
		return n;
	}
	w->n = n;
	return find_refs(w->held, n, w->ref, t0, &w->recv, &w->followed);
}

MPI_Status *es_wait_statuses(struct es_wait *w, MPI_Status *given, int n)
{
	if (given != MPI_STATUSES_IGNORE || !w->recv || n <= 0)
		return given;
	w->st = n <= 8 ? w->st_small : malloc(sizeof(MPI_Status) * (size_t)n);
	return w->st ? w->st : given;
}

MPI_Fint *es_wait_fstatuses(struct es_wait *w, MPI_Fint *given, int n)
{
	if (given != MPI_F_STATUSES_IGNORE || !w->recv || n <= 0)
		return given;
	w->fst = n <= 8 ? w->fst_small : malloc(sizeof(MPI_Fint) * ES_F_STATUS_INTS * (size_t)n);
	return w->fst ? w->fst : given;
}

/* --- completing ----------------------------------------------------------------------------- */

/* One request completed, with its status (NULL: not known), or failed:
 * its tuple, its channel, and it leaves (or, persistent, goes inactive). */
static void completed_slow(const struct es_ref *ref, const MPI_Status *st, bool failed, uint64_t now);

/* The common case, out of the slow one's way: a nonpersistent request
 * on this thread's board, neither cancelled nor failed, with no extra
 * (a wildcard's communicator, an idup's): its fields read where they
 * are, its tuple, its channel, and its slot and entry freed. */
static inline void completed(const struct es_ref *ref, const MPI_Status *st, bool failed, uint64_t now)
{
	struct es_rindex *ri = es_t.ri;
	if (__builtin_expect(ref->kind != ES_REF_MINE || ref->slot < 0 || failed, 0))
		return completed_slow(ref, st, failed, now);
	struct es_req_rec *r = &es_t.reqs[ref->slot];
	struct extra *x = &ri->extra[ref->slot];
	unsigned op = r->op;
	bool recv = is_recv(op);
	if (__builtin_expect((r->state & (ES_REQ_PERSISTENT | ES_REQ_CANCELLED | ES_REQ_QUIET)) || x->c || x->newcomm ||
			     (recv && (!st || st->MPI_SOURCE < 0 ||
				       atomic_load_explicit(&es_g.cancels, memory_order_relaxed))), 0))
		return completed_slow(ref, st, failed, now);
	uint32_t peer = r->peer, arg = r->arg, serial = r->serial;
	uint64_t size = r->size;
	MPI_Request h = (MPI_Request)(uintptr_t)r->handle;
	if (recv) {
		/* its source was named (a wildcard's has an extra): MPI agrees */
		arg = st->MPI_TAG >= 0 ? (uint32_t)st->MPI_TAG : arg;
		size = es_got(st, MPI_SUCCESS);
	}
	struct es_num m = recv && peer != ES_NONE && serial != ES_NONE ? es_chan_at(peer, arg, serial, ES_CHAN_RECVD)
									: ES_NUM_NONE;
	es_write_msg(op | ES_OP_DONE, r->start, now, peer, size, arg, (uint16_t)serial, MPI_SUCCESS, m);
	struct rentry *e = find_slot(ri, h, ref->slot);
	BASE_INVARIANT("a request a wait completes is its owner's entry until its completion is written", e != NULL);
	if (e)
		forget(ri, e);
	/* counted once its completion and its slot's end are visible (rule R) */
	es_chan_done(m);
}

static void completed_slow(const struct es_ref *ref, const MPI_Status *st, bool failed, uint64_t now)
{
	struct es_rindex *ri = es_t.ri;
	struct es_req_rec v, *mine = NULL, *other = NULL;
	struct extra *x = NULL;
	struct rentry *e = NULL;
	if (ref->kind == ES_REF_MINE) {
		mine = rec_of(ri, ref->slot);
		v = *mine;
		x = extra_of(ri, ref->slot);
		e = find_slot(ri, (MPI_Request)(uintptr_t)v.handle, ref->slot);
	} else {
		other = &atomic_load_explicit(&es_g.boards[ref->owner], memory_order_relaxed)[ref->slot];
		if (!es__slot_get(other, &v) || v.ver != ref->ver)
			return; /* its owner moved on meanwhile */
	}
	if ((v.state & ES_REQ_PERSISTENT) && !(v.state & ES_REQ_ACTIVE))
		return; /* inactive (not started, or completed before): a wait passes over it */
	if (other)
		__atomic_store_n(&other->done, v.ver, __ATOMIC_RELEASE);
	unsigned op = v.op, flags = ES_OP_DONE;
	uint32_t peer = v.peer, arg = v.arg;
	uint64_t size = v.size;
	int cancelled = failed;
	if (st && is_recv(op) && !cancelled) {
		/* only a request MPI_Cancel was called on can have been cancelled */
		if (atomic_load_explicit(&es_g.cancels, memory_order_relaxed))
			PMPI_Test_cancelled(st, &cancelled);
		if (!cancelled && st->MPI_SOURCE >= 0) {
			peer = x && x->c ? es_world(x->c, st->MPI_SOURCE) : v.peer;
			arg = st->MPI_TAG >= 0 ? (uint32_t)st->MPI_TAG : arg;
			size = es_got(st, MPI_SUCCESS);
		} else if (!cancelled) {
			peer = ES_NONE; /* MPI_PROC_NULL: nothing came */
		}
	} else if (st && !cancelled && (v.state & ES_REQ_CANCELLED)) {
		/* a send MPI_Cancel was called on is cancelled only if MPI says so
		 * (Open MPI cancels none: it completes as sent) */
		PMPI_Test_cancelled(st, &cancelled);
	} else if (v.state & ES_REQ_CANCELLED) {
		cancelled = 1;
	}
	struct es_num m = is_recv(op) && !cancelled && peer != ES_NONE && v.serial != ES_NONE
				  ? es_chan_at(peer, arg, v.serial, ES_CHAN_RECVD) : ES_NUM_NONE;
	/* followed because the call that made it is recorded, its end is too;
	 * one followed only for its message's count (quiet) writes nothing */
	if (!(v.state & ES_REQ_QUIET))
		es_write_msg(op | flags | (cancelled ? ES_OP_FAILED : 0), v.start, now, peer, size, arg,
			     (uint16_t)v.serial, MPI_SUCCESS, m);
	if (x && x->newcomm) /* MPI_Comm_idup: its communicator is whole now */
		es_comm_made(x->c, x->seed, *(MPI_Comm *)x->newcomm, ES_MADE_CHILD, 0);
	if (mine && e && (v.state & ES_REQ_PERSISTENT)) {
		v.state &= (uint16_t)~(ES_REQ_ACTIVE | ES_REQ_CANCELLED);
		if (ref->slot >= 0)
			slot_put(mine, &v);
		else
			*mine = v;
	} else if (mine && e) {
		forget(ri, e);
	}
	/* counted once its completion and its slot's end are visible (rule R) */
	es_chan_done(m);
}

/* Whether request i of the wait completed, its status, and whether it
 * failed (a status's MPI_ERROR counts only when MPI said to look there). */
static bool which_done(const struct es_wait *w, int i, int rc, enum es_which which, int count,
		       const int *indices, bool fortran, const MPI_Status *sts, const MPI_Fint *fsts,
		       MPI_Status *st_out, const MPI_Status **st, bool *failed)
{
	int k = -1;
	bool persistent = false;
	if (w->ref[i].kind == ES_REF_MINE)
		persistent = rec_of(es_t.ri, w->ref[i].slot)->state & ES_REQ_PERSISTENT;
	if (which == ES_WHICH_ALL) {
		k = count > 0 ? i : -1;
	} else {
		for (int j = 0; j < count && k < 0; j++)
			if (indices[j] - (fortran ? 1 : 0) == i)
				k = which == ES_WHICH_SOME ? j : 0;
	}
	/* a nonpersistent request that completed is MPI_REQUEST_NULL now, even
	 * when MPI said so only in a status's error */
	bool now_null = handle_at(w->c, w->f, i) == MPI_REQUEST_NULL;
	if (k < 0 && !(now_null && !persistent && rc != MPI_SUCCESS))
		return false;
	*st = NULL;
	if (k >= 0 && sts && sts != MPI_STATUSES_IGNORE)
		*st = &sts[k];
	else if (k >= 0 && fsts && fsts != MPI_F_STATUSES_IGNORE &&
		 PMPI_Status_f2c(fsts + (size_t)k * ES_F_STATUS_INTS, st_out) == MPI_SUCCESS)
		*st = st_out;
	*failed = rc != MPI_SUCCESS && (rc != MPI_ERR_IN_STATUS || !*st || (*st)->MPI_ERROR != MPI_SUCCESS);
	if (rc == MPI_ERR_IN_STATUS && *st && (*st)->MPI_ERROR == MPI_ERR_PENDING)
		return false;
	return !persistent ? now_null || k >= 0 : true;
}

static void complete_all(struct es_wait *w, int rc, enum es_which which, int count, const int *indices,
			 const MPI_Status *sts, const MPI_Fint *fsts, uint64_t t1)
{
	if (!w->followed || (count <= 0 && rc == MPI_SUCCESS))
		return;
	/* the call's end stamp, which its own tuple ends at: one clock read
	 * (11 ns on these machines) fewer on every wait that completes */
	uint64_t now = t1 ? t1 : es_now();
	if (which == ES_WHICH_ALL && rc == MPI_SUCCESS && count > 0 && !fsts) {
		/* the common case, a wait on all that succeeded: every one completed */
		const MPI_Status *all = sts && sts != MPI_STATUSES_IGNORE ? sts : NULL;
		for (int i = 0; i < w->n; i++)
			if (w->ref[i].kind != ES_REF_NONE)
				completed(&w->ref[i], all ? &all[i] : NULL, false, now);
		return;
	}
	bool fortran = w->c == NULL;
	for (int i = 0; i < w->n; i++) {
		MPI_Status tmp;
		const MPI_Status *st;
		bool failed;
		if (w->ref[i].kind != ES_REF_NONE &&
		    which_done(w, i, rc, which, count, indices, fortran, sts, fsts, &tmp, &st, &failed))
			completed(&w->ref[i], st, failed, now);
	}
}

static void wait_free(struct es_wait *w)
{
	if (w->held != w->held_small)
		free(w->held);
	if (w->ref != w->ref_small)
		free(w->ref);
	if (w->st && w->st != w->st_small)
		free(w->st);
	if (w->fst && w->fst != w->fst_small)
		free(w->fst);
}

void es_wait_end(struct es_wait *w, int rc, enum es_which which, int count, const int *indices,
		 const MPI_Status *sts, const MPI_Fint *fsts, uint64_t t1)
{
	complete_all(w, rc, which, count, indices, sts, fsts, t1);
	wait_free(w);
	BASE_INVARIANT("each entry of the index stands for one slot or record holding its handle",
		     !es_t.ri || es__ri_whole(es_t.ri));
}

/* --- polls ----------------------------------------------------------------------------------- */

void es_poll_done(int slot, unsigned op, uint64_t t1, uint32_t element, uint64_t bytes, uint16_t comm, int rc)
{
	es_poll_end(slot, op, es_t.streak[slot].start, t1, element, bytes, comm, rc);
}

/* The array a streak holds, looked at again after a request was made: only
 * the places whose handle changed are found and marked (hpcc's RandomAccess
 * makes a request between most of its polls of 16 receives, and held them
 * all again each time). */
static int rehold_changed(struct es_streak *s, const MPI_Request *c, MPI_Fint *f, int n, uint64_t t0)
{
	int unknown = 0;
	for (int i = 0; i < n; i++) {
		MPI_Request h = handle_at(c, f, i);
		if (h == s->held[i])
			continue;
		s->held[i] = h;
		struct es_ref ref;
		int followed;
		unknown += find_refs(&s->held[i], 1, &ref, t0, &s->recv, &followed);
	}
	return unknown;
}

int es_poll_hold(int slot, const MPI_Request *c, MPI_Fint *f, int n, uint64_t t0)
{
	struct es_streak *s = &es_t.streak[slot];
	const void *array = c ? (const void *)c : (const void *)f;
	/* inside a streak only: a new streak marks every request with its own start */
	bool same = s->recheck && s->polls && s->array == array && s->n == n && n > 0 && s->held;
	s->recheck = false;
	s->key = 0; /* es_poll_arm decides again after the poll */
	if (same) {
		es_t.held |= 1u << slot;
		return rehold_changed(s, c, f, n, t0);
	}
	s->array = array;
	s->n = 0;
	s->recv = false;
	if (!s->held)
		s->held = s->held_small;
	if ((!c && !f) || n <= 0 || !hold_handles(&s->held, s->held_small, 4, &s->held_cap, c, f, n))
		return 0;
	s->n = n;
	es_t.held |= 1u << slot;
	/* marks them waited for: the refs themselves are found again at completion */
	struct es_ref small[8], *ref = n <= 8 ? small : malloc(sizeof(*ref) * (size_t)n);
	int followed, unknown = n;
	if (ref) {
		unknown = find_refs(s->held, n, ref, t0, &s->recv, &followed);
		if (ref != small)
			free(ref);
	}
	return unknown;
}

static __thread void *poll_sts;
static __thread size_t poll_sts_bytes;

static void *poll_room(size_t bytes)
{
	if (bytes > poll_sts_bytes) {
		void *p = realloc(poll_sts, bytes);
		if (!p)
			return NULL;
		poll_sts = p;
		poll_sts_bytes = bytes;
	}
	return poll_sts;
}

MPI_Status *es_poll_statuses(int n)
{
	MPI_Status *s = n > 0 ? poll_room(sizeof(MPI_Status) * (size_t)n) : NULL;
	return s ? s : MPI_STATUSES_IGNORE;
}

MPI_Fint *es_poll_fstatuses(int n)
{
	MPI_Fint *s = n > 0 ? poll_room(sizeof(MPI_Fint) * ES_F_STATUS_INTS * (size_t)n) : NULL;
	return s ? s : MPI_F_STATUSES_IGNORE;
}

void es_poll_completed(int slot, const MPI_Request *single, const MPI_Request *c, MPI_Fint *f, int n,
		       enum es_which which, int count, const int *indices, const MPI_Status *sts,
		       const MPI_Fint *fsts, uint64_t t1)
{
	struct es_streak *s = &es_t.streak[slot];
	const void *array = c ? (const void *)c : (const void *)f;
	struct es_wait w;
	memset(&w, 0, offsetof(struct es_wait, held_small));
	w.c = c;
	w.f = f;
	w.ref = w.ref_small;
	w.held = s->held;
	if (single) {
		w.held = (MPI_Request *)single; /* MPI_Test's, as it was before this call */
	} else {
		if (n <= 0 || array != s->array || n != s->n || !s->held)
			return; /* given other requests than the streak's first poll: not followed */
		/* those that did not complete must be what the first poll was given */
		for (int i = 0; i < n; i++) {
			MPI_Request now = handle_at(c, f, i);
			if (now != MPI_REQUEST_NULL && now != s->held[i])
				return;
		}
	}
	if (n > 8 && !(w.ref = malloc(sizeof(*w.ref) * (size_t)n)))
		return;
	w.n = n;
	find_refs(w.held, n, w.ref, 0, &w.recv, &w.followed);
	complete_all(&w, MPI_SUCCESS, which, count, indices, sts, fsts, t1);
	if (w.ref != w.ref_small)
		free(w.ref);
}

/* --- persistent requests, freeing, cancelling ---------------------------------------------------- */

void es_started(unsigned op, uint64_t t0, const MPI_Request *c, const MPI_Fint *f, int n, int rc)
{
	uint64_t t1 = es_now();
	struct es_rindex *ri = es_t.ri;
	for (int i = 0; i < n && (c || f); i++) {
		MPI_Request q = handle_at(c, f, i);
		struct rentry *e = ri && q != MPI_REQUEST_NULL ? find(ri, q) : NULL;
		struct es_req_rec v = { .peer = ES_NONE, .serial = ES_NONE, .op = 0 };
		struct es_num m = ES_NUM_NONE;
		if (e) {
			struct es_req_rec *r = rec_of(ri, e->slot);
			v = *r;
			if (rc == MPI_SUCCESS) {
				v.state = (uint16_t)((v.state | ES_REQ_ACTIVE) & ~ES_REQ_CANCELLED);
				v.start = t0;
				if (e->slot >= 0)
					slot_put(r, &v);
				else
					*r = v;
				if (!is_recv(v.op) && v.peer != ES_NONE && v.serial != ES_NONE) {
					m = es_chan_at(v.peer, v.arg, v.serial, 0);
					es_chan_done(m);
				}
			}
		}
		if (es_collects(op))
			es_write_msg(op | (is_recv(v.op) ? ES_OP_RECV : 0), t0, t1, v.peer, v.size, v.arg,
				     (uint16_t)v.serial, rc, m);
	}
}

void es_req_freed(MPI_Request req)
{
	struct es_rindex *ri = es_t.ri;
	struct rentry *e = ri && req != MPI_REQUEST_NULL ? find(ri, req) : NULL;
	if (e)
		forget(ri, e);
}

void es_req_cancelled(MPI_Request req)
{
	atomic_store_explicit(&es_g.cancels, 1, memory_order_relaxed);
	struct es_rindex *ri = es_t.ri;
	struct rentry *e = ri && req != MPI_REQUEST_NULL ? find(ri, req) : NULL;
	if (!e)
		return;
	struct es_req_rec *r = rec_of(ri, e->slot), v = *r;
	v.state |= ES_REQ_CANCELLED;
	if (e->slot >= 0)
		slot_put(r, &v);
	else
		*r = v;
}

void es_requests_setup(void)
{
	/* Two requests MPI completes within their calls, alive at once: one
	 * handle for both is the library's shared completed request (Open
	 * MPI's ompi_request_empty, which it also gives every send it
	 * completes inline); two handles, and each stands for its own. */
	MPI_Request a = MPI_REQUEST_NULL, b = MPI_REQUEST_NULL;
	PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &a);
	PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &b);
	es_g.done_req = a == b ? a : MPI_REQUEST_NULL;
	PMPI_Wait(&a, MPI_STATUS_IGNORE);
	PMPI_Wait(&b, MPI_STATUS_IGNORE);
}

void es_requests_reset(void)
{
	struct es_rindex *ri = es_t.ri;
	if (!ri)
		return;
	for (size_t i = 0; i < ri->cap; i++)
		if (ri->tab[i].handle != MPI_REQUEST_NULL)
			es_comm_release(extra_of(ri, ri->tab[i].slot)->c);
	free(ri->tab);
	free(ri->priv);
	free(ri->priv_extra);
	free(ri->priv_free);
	free(ri);
	es_t.ri = NULL;
	es_route.reqs = 0;
}

/* --- channels -------------------------------------------------------------------------------- */

/* A channel's key as one word (pastset.h's hash). */
static uint64_t chan_key(uint32_t peer, uint32_t tag, uint32_t serial, uint32_t dir)
{
	return base_hash_fold(base_hash_fold(BASE_HASH_SEED, (uint64_t)peer << 32 | tag), (uint64_t)serial << 32 | dir);
}

/* A key's slot on the board mpi.chansK: open addressing over slots 1..,
 * the board's own in slot 0.  Keys are never removed; a full board
 * counts only the keys it has, and says so.  NULL when there is no room. */
static struct es_chan_rec *board_slot(uint32_t peer, uint32_t tag, uint32_t serial, uint32_t dir)
{
	struct es_chan_rec *b = es_t.chans;
	if (!b)
		return NULL;
	uint32_t h = (uint32_t)base_hash_slot(chan_key(peer, tag, serial, dir), ES_CHANS_SLOTS);
	uint32_t want = ES_CHAN_USED | dir;
	for (uint32_t k = 0, i = h ? h : 1; k < ES_CHANS_SLOTS - 1;
	     k++, i = i + 1 < ES_CHANS_SLOTS ? i + 1 : 1) {
		struct es_chan_rec *r = &b[i];
		uint32_t flags = __atomic_load_n(&r->flags, __ATOMIC_RELAXED);
		if (flags == want && r->peer == peer && r->tag == tag && r->serial == serial)
			return r; /* the thread's table lost it: never, it only grows */
		if (flags)
			continue;
		/* a new key, while three quarters of the board are left */
		if (b[0].count >= (ES_CHANS_SLOTS - 1) * 3 / 4)
			break;
		r->peer = peer;
		r->tag = tag;
		r->serial = serial;
		__atomic_store_n(&r->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->flags, want, __ATOMIC_RELEASE);
		__atomic_store_n(&b[0].count, b[0].count + 1, __ATOMIC_RELAXED);
		return r;
	}
	__atomic_store_n(&b[0].flags, ES_CHAN_FULL, __ATOMIC_RELEASE);
	return NULL;
}

struct es_chans {
	struct es_chan *tab; /* open addressing; cap a power of two, at most half used */
	uint32_t cap, used;
};
/* A program that makes a tag of every step can meet a channel per step:
 * past this many a thread's new channels go unnumbered (their messages
 * unpaired, and said) rather than its memory grow past 20 MB. */
#define ES_CHANS_MAX (1u << 18)


static int chans_grow(struct es_chans *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	struct es_chan *tab = malloc(sizeof(*tab) * cap);
	if (!tab)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		tab[i].dir = ES_NONE;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct es_chan *c = &t->tab[i];
		if (c->dir == ES_NONE)
			continue;
		uint32_t h = (uint32_t)base_hash_slot(chan_key(c->peer, c->tag, c->serial, c->dir), cap);
		while (tab[h].dir != ES_NONE)
			h = (uint32_t)base_probe(h, cap);
		tab[h] = *c;
	}
	free(t->tab);
	t->tab = tab;
	t->cap = cap;
	es_t.chan_last[0] = es_t.chan_last[1] = NULL; /* they moved */
	return 0;
}

/* The thread's channel, made when new; NULL when the thread is not
 * traced or has no memory for it. */
struct es_chan *es__chan_find(uint32_t peer, uint32_t tag, uint32_t serial, uint32_t dir)
{
	if (!es_t.ch && (!es_elem() || !(es_t.ch = calloc(1, sizeof(*es_t.ch)))))
		return NULL;
	struct es_chans *t = es_t.ch;
	if (!t->cap && chans_grow(t))
		return NULL;
	struct es_chan *c;
	for (int tries = 0; tries < 2; tries++) {
		uint32_t h = (uint32_t)base_hash_slot(chan_key(peer, tag, serial, dir), t->cap);
		for (c = &t->tab[h]; c->dir != ES_NONE; h = (uint32_t)base_probe(h, t->cap), c = &t->tab[h])
			if (c->peer == peer && c->tag == tag && c->serial == serial && c->dir == dir)
				goto found;
		if ((t->used + 1) * 2 <= t->cap)
			break; /* c: the free slot for it */
		if (t->used >= ES_CHANS_MAX || chans_grow(t))
			return NULL;
	}
	*c = (struct es_chan){ .peer = peer, .tag = tag, .serial = serial, .dir = dir,
			       .rec = board_slot(peer, tag, serial, dir) };
	t->used++;
found:
	es_t.chan_last[dir != 0] = c;
	return c;
}

void es_chans_free(void)
{
	if (es_t.ch)
		free(es_t.ch->tab);
	free(es_t.ch);
	es_t.ch = NULL;
	es_t.chan_last[0] = es_t.chan_last[1] = NULL;
}

/* The channel's count in full, before a numbered tuple that would leave
 * ES_CHAN_MARK_EVERY behind the last mark written (collectors.h) */
void es__chan_mark(struct es_num m)
{
	struct es_chan *c = m.c;
	if (!es_elem())
		return;
	uint64_t now = es_now();
	es_put((uint16_t)(ES_OP_MPI_CHANNEL | (c->dir ? ES_OP_RECV : 0)), now, now, (uint32_t)(m.n >> 32),
	       (uint16_t)c->serial, c->peer, (uint32_t)m.n, c->tag);
	c->base = m.n;
}
