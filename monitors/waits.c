/* waits.c - what each thread of a running job waits for, from its collectors' notes, the ranks' boards and communicators, and the paths to PastSet elements. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "waits_int.h"

/*
 * An MPI thread inside a call waits for what only others can give, and
 * for no more: heartbeat names a deadlock only where nothing it waits for
 * can come.  So each wait is judged against what the ranks' boards say
 * has happened already:
 *  - a receive (or probe) waits for its sender only when no message it
 *    could match is on its way: the sender's count of messages sent on
 *    that channel, less the receiver's count received, less the receives
 *    the receiver posted before it, leaves none;
 *  - a blocking send waits for its receiver only when the receiver posted
 *    no receive that would take it (it has not completed: it is no eager
 *    send); a nonblocking one, which may have completed already, never
 *    holds its wait up, but for a synchronous one;
 *  - a collective waits for the members that have not begun it (their
 *    count of collectives begun there is no higher than its number): all
 *    of them, or for a rooted one's others only the root, and for a
 *    reduction's or gather's others any one of them; members at the same
 *    number that called different operations, or gave different roots,
 *    are a mismatch, and so is a member that has gone past that number
 *    having made another call there (its mpi.calls history says which);
 *  - a wait on requests waits for all (MPI_Wait, Waitall, Test, Testall)
 *    or any (Waitany, Waitsome, Testany, Testsome) of the requests it was
 *    given, each judged as the call that made it.
 * What cannot be told (a board too full to count, requests nobody follows,
 * a count on a communicator whose record is not known) never makes a
 * thread blocked: it is taken to be able to go on.
 *
 * Why no schedule of a correct program can make a rule fire.  Load
 * stretches any gap between two instructions of the job or of heartbeat
 * to any length, so no judgement may rest on what was read at different
 * moments unless the facts themselves say they held together.
 *
 * O (the order of reads; beat.c, hb_waits_build, hb_waits_confirm).  Each period
 * reads (1) every thread's latest tuple, (2) every thread's notes, (3)
 * which ranks have ended (from 1 and 2, and their segments' state now),
 * then judges, reading (4) each board the judgement consults when it
 * first does (a thread's requests, then its channels, once per period;
 * mpi.calls), all after (3).  Then (5) hb_waits_confirm reads again, for every
 * thread a deadlock stands on (its members, its waiters, and every
 * blocked or ended thread below them: wf_deadlock_threads), its notes and
 * the boards read of it: one not still inside the very call (the same
 * start stamp) with those boards unchanged drops the deadlock for this
 * period.  Stamps never repeat, counts only grow and a request slot's ver
 * moves on with every change, so nothing changed and changed back: at
 * any moment between the last read of (4) and the first of (5), every
 * note and board the judgement used held as read, together.  No number
 * of periods is waited for, only facts.
 *
 * Facts that only grow.  A rank inside or past MPI_Finalize, or whose
 * process exited, is ended for ever, and MPI lets it (and its other
 * threads) send, receive or begin nothing more; as (3) comes before (4),
 * its sent counts and collectives begun, read after, are final.  Counts
 * and collectives begun never go down.  A member's call as collective
 * number n on a communicator is fixed once begun.
 *
 * What a thread of the deadlock can do meanwhile.  Inside a blocking
 * receive, a wait, a probe or a collective it posts no send and begins
 * no collective (a send is counted at its own start, a collective begun
 * at its own entry, each with notes of a new start); inside a send its
 * count is added at the call's start, and added after (4) it shows in
 * (5) as a changed board.  So between (4) and (5) no member adds a send
 * or a collective that the judgement missed.
 *
 * R (a receive waits for its senders).  Messages on a channel (sender,
 * receiver, tag, communicator) are taken in the order sent by the receives
 * in the order posted (MPI's non-overtaking rule), so a receive gets one
 * of the sent-less-received messages only after the matching receives
 * posted before it (open_receives counts those, by their start) have
 * taken theirs.  With every sender ended (final count) or a blocked member
 * (no new send, above), sent-less-received at (4) is every message that
 * can ever reach it; when that is fewer than the receives ahead of it and
 * itself, it cannot complete until some member moves.  A probe is judged
 * as the receive it would precede.
 *
 * S (a blocking or synchronous send waits for its receiver).  Its own
 * message is counted from its start, so with none of the channel's
 * messages unreceived it has been received and waits for nobody; with k
 * unreceived, it waits only if the receiver posted no more than k - 1
 * matching receives (the k - 1 ahead take them first).  A standard
 * MPI_Send is judged as one that may wait for its receiver: MPI allows
 * it to, and a program that relies on buffering is erroneous (MBI's
 * BufferingHazard); a nonblocking send but a synchronous one holds no
 * wait up.  An unknown count is no wait.
 *
 * C (a collective waits for the members not there).  A member whose count
 * begun there is no higher than the collective's number has not entered
 * it; ended, it never will, and blocked in the deadlock it cannot begin it
 * without leaving its call (seen at (5)).
 *
 * M (a mismatch).  Members blocked at the same number on a communicator
 * in different calls, roots or byte counts (for calls that need equal
 * ones), or a member gone past that number having made another call
 * there: in a correct program every member makes the same collectives in
 * the same order, so two different calls at one number never happen,
 * whatever the delays.  It assumes every member's collectives are
 * recorded (a collect: list or esctl that records a collective on some
 * ranks only would number them differently).
 *
 * E (a rank that ended).  A thread blocked, by R, S or C, on a rank that
 * ended waits for what that rank will never do: its counts were read
 * after its end (O), and are final.  A rank that sent its last message to
 * the waiter and then ended is no deadlock: that message is counted as
 * sent (F below), and unreceived, it satisfies the receive.
 *
 * F (communicators freed).  A rank may free a communicator with messages
 * it sent there still unreceived (a ring on a duplicate, freed before
 * MPI_Finalize).  A serial is never given twice, so its counts and
 * requests stay the freed communicator's (es_mpi_comm_ever); once its
 * record has rotated out of what the view read, a count on it is not
 * known, and the channel with it.
 *
 * W (a wait on requests).  Each request the wait marked with its start is
 * judged as its call (R, S, C); all or any of them as the wait needs.  A
 * request completed and counted but still on the board would look unmet:
 * its slot must have changed by (5) for the count to have moved by (4)
 * (see the collector's part below).
 *
 * The collector's part.  These arguments need each thread to publish a
 * received message's count only after what says the receive is over:
 * MPI_Sendrecv writes its tuples, then counts (its notes end first).
 * MPI_Recv and MPI_Mrecv count, then write their tuple; requests.c's
 * completed() counts, then writes the completion, then frees or idles the
 * slot.  A thread stopped in the gap of a few instructions between the
 * two stores looks, to any reader, like one still waiting for a message
 * it already holds, and (5) cannot tell it from a real wait.  Counting
 * after the tuple (wrapgen's blocking receives) and after the slot leaves
 * (completed(), and after `done` for another thread's request) closes it;
 * the reading side here needs nothing more.
 *
 * U (members not seen).  A communicator's member that has not listed it
 * yet (a rank that has not reached it, or not started: heartbeat met the
 * others first) is a world rank not known, and a rank whose counts are
 * not known may send or arrive at any time: a wait for any one of several
 * (an any-source receive, a collective that needs any member) that such a
 * member could satisfy is not known, never blocked; a wait for all of
 * them waits at least for those seen.
 *
 * L (a passive-target lock, unlock or flush).  It may wait for another
 * origin's lock, which no board records, and its target serves it from
 * inside any MPI call, so a target blocked elsewhere in MPI holds nothing
 * up: it waits for its target only once the target has ended (a rank
 * that ended serves no epoch), and is otherwise not known.
 *
 * P (PATHS threads).  A read or take waits for the other threads with a
 * path to its element whose latest operation there was a write (or none
 * yet), a write to a full element for the readers: a thread whose path
 * both reads and writes the element is taken for what it did last.
 */

/* --- a thread inside an MPI call ---------------------------------------------------------------- */


/* What a thread waits for, in words into what: cut to len, as a line of
 * the report may be. */
__attribute__((format(printf, 3, 4))) static void say(char *what, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, len, fmt, ap);
	va_end(ap);
}

/* One request on rank r's boards, judged as the call that made it. */
static int request_clause(struct job *j, int t, int r, const struct es_req_rec *q, char *what, size_t len)
{
	unsigned code = es_op_code(q->op);
	int side = 0;
	const struct es_mpi_comm *c = es_mpi_comm_ever(j->mpi, r, q->serial, &side);
	char p[64], tg[32], oc[240];
	wr_on_comm(c, oc, sizeof(oc));
	wr_tag_words(q->arg, tg, sizeof(tg));
	if (!(q->state & ES_REQ_ACTIVE) || (q->state & ES_REQ_CANCELLED)) {
		say(what, len, "%s (done)", es_op_name(code));
		return wr_clause_new(j, CL_SAT, false) ? 0 : 0;
	}
	if (wr_is_recv_op(code)) {
		wr_peer_words(c, q->peer, p, sizeof(p));
		say(what, len, "%s from %s %s%s", es_op_name(code), p, tg, oc);
		return wr_recv_clause(j, r, q->peer, q->arg, c, side, c ? wr_open_receives(j, r, q->peer, q->arg, c->id, q->start) : 1);
	}
	if (wr_is_coll_code(code)) {
		say(what, len, "%s #%u%s", es_op_name(code), q->arg, oc);
		return wr_coll_clause(j, t, r, code, c, q->arg, q->peer, q->size);
	}
	wr_peer_words(c, q->peer, p, sizeof(p));
	if (code == ES_OP_MPI_ISSEND || code == ES_OP_MPI_SSEND_INIT) {
		say(what, len, "%s to %s %s%s", es_op_name(code), p, tg, oc);
		return wr_send_clause(j, r, q->peer, q->arg, c);
	}
	/* a send that may have gone out already, or one-sided: holds nothing up */
	say(what, len, "%s to %s%s", es_op_name(code), p, oc);
	return wr_clause_new(j, CL_SAT, false) ? 0 : 0;
}

static bool waits_any(unsigned code)
{
	return code == ES_OP_MPI_WAITANY || code == ES_OP_MPI_WAITSOME || code == ES_OP_MPI_TESTANY ||
	       code == ES_OP_MPI_TESTSOME;
}

/* A wait or test: the requests marked with its start, on its rank's
 * boards.  Its words name the requests it waits for; those that can
 * complete are only counted (all are named when none waits). */
static int requests_clauses(struct job *j, int t, int r, const struct es_flight *f, char *what, size_t len)
{
	char waiting[600] = "", ready[600] = "";
	size_t wused = 0, rused = 0;
	int found = 0, nwait = 0, nready = 0;
	for (int k = j->rank_first[r]; k < j->rank_first[r + 1]; k++) {
		const struct es_req_rec *q;
		int nq = es_mpi_requests(j->mpi, j->by_rank[k], &q);
		for (int i = 0; i < nq; i++) {
			if (q[i].waiter != f->start)
				continue;
			char w[300];
			int before = j->ncl;
			int rc = request_clause(j, t, r, &q[i], w, sizeof(w));
			if (rc)
				return rc;
			bool waits = j->ncl > before && j->cl[j->ncl - 1].kind != CL_SAT;
			char *buf = waits ? waiting : ready;
			size_t *used = waits ? &wused : &rused;
			int *n = waits ? &nwait : &nready;
			if (*n < 4 && *used < sizeof(waiting))
				*used += (size_t)snprintf(buf + *used, sizeof(waiting) - *used, "%s%s", *n ? ", " : "", w);
			else if (*n == 4 && *used < sizeof(waiting))
				*used += (size_t)snprintf(buf + *used, sizeof(waiting) - *used, ", ...");
			(*n)++;
			found++;
		}
	}
	size_t used = strlen(what);
	if (nwait && used < len)
		used += (size_t)snprintf(what + used, len - used, ": %s", waiting);
	if (nwait && nready && used < len)
		used += (size_t)snprintf(what + used, len - used, "; %d more that can complete", nready);
	else if (nready && used < len)
		used += (size_t)snprintf(what + used, len - used, ": %s", ready);
	uint32_t unknown = f->element == ES_NONE ? 0 : f->element;
	if (unknown && used < len)
		snprintf(what + used, len - used, "%s%u not followed", found ? "; " : ": ", unknown);
	if (unknown || !found)
		wr_clause_new(j, CL_UNKNOWN, false);
	return 0;
}

/* Whether world rank r has ended (find_ended said so of its threads). */
static bool rank_ended(const struct job *j, uint32_t r)
{
	if (r == ES_NONE || (int)r > j->maxrank)
		return false;
	int first = j->rank_first[r];
	return first < j->rank_first[r + 1] && j->ended[j->by_rank[first]];
}

/* What an MPI thread inside a call waits for: its clauses, and its words. */
static int mpi_clauses(struct job *j, int t, char *what, size_t len, bool *any)
{
	const struct es_flight *f = &j->fl[t];
	int r = j->rank[t];
	unsigned code = es_op_code(f->op);
	const struct es_op_info *info = es_op_info(code);
	const char *in = info && info->kind == ES_KIND_POLL ? "polling" : "in";
	uint32_t serial = (uint32_t)f->comm, second = (uint32_t)(f->comm >> 32);
	uint32_t tag = (uint32_t)f->arg, tag2 = (uint32_t)(f->arg >> 32);
	int side = 0;
	const struct es_mpi_comm *c = serial != ES_NONE ? es_mpi_comm_ever(j->mpi, r, serial, &side) : NULL;
	char p[64], p2[64], tg[32], tg2[32], oc[240];
	wr_on_comm(c, oc, sizeof(oc));
	wr_tag_words(tag, tg, sizeof(tg));
	wr_tag_words(tag2, tg2, sizeof(tg2));
	wr_peer_words(c, f->element, p, sizeof(p));
	*any = false;
	int rc;
	switch (code) {
	case ES_OP_MPI_RECV: case ES_OP_MPI_PROBE: case ES_OP_MPI_MPROBE: case ES_OP_MPI_IPROBE: case ES_OP_MPI_IMPROBE:
		snprintf(what, len, "%s %s from %s %s%s", in, es_op_name(code), p, tg, oc);
		return wr_recv_clause(j, r, f->element, tag, c, side,
				   1 + (c ? wr_open_receives(j, r, f->element, tag, c->id, f->start) : 0));
	case ES_OP_MPI_SEND: case ES_OP_MPI_SSEND: case ES_OP_MPI_RSEND:
		snprintf(what, len, "%s %s to %s %s%s", in, es_op_name(code), p, tg, oc);
		return wr_send_clause(j, r, f->element, tag, c);
	case ES_OP_MPI_SENDRECV: case ES_OP_MPI_SENDRECV_REPLACE:
		wr_peer_words(c, second, p2, sizeof(p2));
		snprintf(what, len, "%s %s to %s %s, from %s %s%s", in, es_op_name(code), p2, tg2, p, tg, oc);
		/* its send may have gone out already (an eager one does): it waits
		 * for what it receives; once that has come, still inside, for its
		 * send's receiver */
		rc = wr_recv_clause(j, r, f->element, tag, c, side,
				 1 + (c ? wr_open_receives(j, r, f->element, tag, c->id, f->start) : 0));
		if (rc || !j->ncl || j->cl[j->ncl - 1].kind != CL_SAT)
			return rc;
		j->ncl--;
		return wr_send_clause(j, r, second, tag2, c);
	case ES_OP_MPI_WAIT: case ES_OP_MPI_WAITALL: case ES_OP_MPI_WAITANY: case ES_OP_MPI_WAITSOME:
	case ES_OP_MPI_TEST: case ES_OP_MPI_TESTALL: case ES_OP_MPI_TESTANY: case ES_OP_MPI_TESTSOME:
		snprintf(what, len, "%s %s", in, es_op_name(code));
		*any = waits_any(code);
		return requests_clauses(j, t, r, f, what, len);
	case ES_OP_MPI_WIN_LOCK: case ES_OP_MPI_WIN_UNLOCK: case ES_OP_MPI_WIN_FLUSH:
	case ES_OP_MPI_WIN_FLUSH_LOCAL: {
		snprintf(what, len, "%s %s on %s%s", in, es_op_name(code), p, oc);
		/* rule L: only a target that ended holds it up for certain */
		bool gone = rank_ended(j, f->element);
		struct clause *cl = wr_clause_new(j, gone ? CL_WAIT : CL_UNKNOWN, false);
		return cl && gone ? wr_target_add(j, cl, (int)f->element, -1) : 0;
	}
	default:
		break;
	}
	if (wr_is_coll_code(code)) {
		char root[80] = "";
		if (f->element != ES_NONE)
			snprintf(root, sizeof(root), " root %s", p);
		char cw[200];
		wr_comm_words(c, cw, sizeof(cw));
		snprintf(what, len, "%s %s #%u%s on %s", in, es_op_name(code), tag, root, cw);
		return wr_coll_clause(j, t, r, code, c, tag, f->element, tag2);
	}
	snprintf(what, len, "%s %s (whom it waits for is not recorded)", in, es_op_name(code));
	wr_clause_new(j, CL_UNKNOWN, false);
	return 0;
}

/* The thread's clauses, into the graph: READY or BLIND when none holds it
 * up, WAIT on the rest otherwise. */
static int emit_mpi(struct job *j, struct wf_thread *w, bool any)
{
	int wait = 0, sat = 0, unknown = 0;
	for (int i = 0; i < j->ncl; i++) {
		wait += j->cl[i].kind == CL_WAIT;
		sat += j->cl[i].kind == CL_SAT;
		unknown += j->cl[i].kind == CL_UNKNOWN;
	}
	if (any ? sat || unknown || !wait : !wait) {
		w->state = unknown ? WF_BLIND : WF_READY;
		return wf_add(j->g, w) < 0 ? PS_ENOMEM : 0;
	}
	w->state = WF_WAIT;
	w->all = !any;
	int k = wf_add(j->g, w), rc = k < 0 ? k : 0;
	for (int i = 0; i < j->ncolls && !rc; i++)
		rc = wf_coll_bytes(j->g, k, j->colls[i].comm, j->colls[i].op, j->colls[i].num, j->colls[i].root,
				   j->colls[i].bytes, j->colls[i].name);
	for (int i = 0; i < j->ncl && !rc; i++) {
		const struct clause *cl = &j->cl[i];
		if (cl->kind != CL_WAIT)
			continue;
		if (cl->n == 1) {
			const struct target *x = &j->tg[cl->first];
			rc = x->gate >= 0 ? wf_wait_gate(j->g, k, x->gate) : wf_wait(j->g, k, x->unit);
			continue;
		}
		int gate = wf_gate(j->g, cl->all, cl->all ? "all of" : "any of");
		if (gate < 0)
			return gate;
		for (int x = 0; x < cl->n && !rc; x++) {
			const struct target *tt = &j->tg[cl->first + x];
			rc = tt->gate >= 0 ? wf_gate_gate(j->g, gate, tt->gate) : wf_gate_wait(j->g, gate, tt->unit);
		}
		if (!rc)
			rc = wf_wait_gate(j->g, k, gate);
	}
	return rc;
}

/* --- PATHS threads ---------------------------------------------------------------------------- */

/* A PATHS thread inside a PastSet operation: the other threads with a
 * path to the element that may write it (a take or read waits for them),
 * or read it (a write to a full flow element waits for them). */
static int paths_waits(struct job *j, int t, struct wf_thread *w)
{
	const struct es_flight *f = &j->fl[t];
	unsigned code = es_op_code(f->op);
	char what[200], nobody[160];
	const struct es_leaf *me = es_scope_leaf(j->s, f->leaf);
	bool for_writers = code != ES_OP_WRITE;
	snprintf(what, sizeof(what), "in %s on %s", es_op_name(code),
		 me->meta.where[0] ? me->meta.where : "its element");
	snprintf(nobody, sizeof(nobody), "which no other thread %s", for_writers ? "writes" : "reads");
	w->what = what;
	w->nobody = nobody;
	w->state = WF_WAIT;
	w->all = false;
	int k = wf_add(j->g, w), rc = k < 0 ? k : 0;
	for (int i = 0; i < es_scope_leaves(j->s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(j->s, i);
		if (l->thread == t || l->meta.element != me->meta.element || l->rank >= 0)
			continue;
		struct es_trace last;
		unsigned lc = ps_read_latest(l->elem, &last, NULL) == 0 ? es_op_code(last.op) : 0;
		/* never used yet: it may do either */
		bool writes = lc == 0 || lc == ES_OP_WRITE;
		bool reads = lc == 0 || lc == ES_OP_READ || lc == ES_OP_READ_LATEST || lc == ES_OP_TAKE;
		if (for_writers ? writes : reads)
			rc = wf_wait(j->g, k, UNIT_PATHS + l->thread);
	}
	return rc;
}

/* --- the job ------------------------------------------------------------------------------------ */

static int by_rank_cmp(const void *a, const void *b, void *rank)
{
	const int *r = rank, x = *(const int *)a, y = *(const int *)b;
	return r[x] != r[y] ? r[x] - r[y] : x - y;
}

static void free_job(struct job *j)
{
	free(j->rank);
	free(j->first_leaf);
	free(j->rank_first);
	free(j->by_rank);
	free(j->ended);
	free(j->hubs);
	free(j->tg);
	free(j->past);
}

/* Which threads have ended: a rank's all, when one of them is inside or
 * past MPI_Finalize; any thread whose process has gone (its segment has
 * no live writer). */
static void find_ended(struct job *j)
{
	const char *prev = NULL;
	int prev_state = 0;
	struct ps_remote_attr ra = mon_ra();
	for (int t = 0; t < j->n; t++) {
		if (j->first_leaf[t] < 0 || j->look->lost[t])
			continue;
		const char *seg = es_scope_leaf(j->s, j->first_leaf[t])->segment;
		if (!prev || strcmp(prev, seg)) {
			prev = seg;
			prev_state = ps_state_at(seg, &ra);
		}
		if (j->in[t] && es_op_code(j->fl[t].op) == ES_OP_MPI_FINALIZE)
			j->ended[t] = "has ended (inside MPI_Finalize)";
		else if (!es_trace_empty(&j->look->beat[t]) &&
			 es_op_code(j->look->beat[t].op) == ES_OP_MPI_FINALIZE)
			j->ended[t] = "has ended (past MPI_Finalize)";
		else if (prev_state == PS_SHM_CLOSED)
			j->ended[t] = "has ended (its process exited)";
		else if (prev_state == PS_SHM_STALE)
			j->ended[t] = "has died (its process ended without closing its trace space)";
	}
	/* after MPI_Finalize no thread of the rank may call MPI */
	for (int r = 0; r <= j->maxrank; r++) {
		const char *why = NULL;
		for (int k = j->rank_first[r]; k < j->rank_first[r + 1] && !why; k++)
			why = j->ended[j->by_rank[k]];
		for (int k = j->rank_first[r]; k < j->rank_first[r + 1] && why; k++)
			j->ended[j->by_rank[k]] = why;
	}
}

static int job_init(struct job *j)
{
	j->rank = calloc((size_t)j->n + 1, sizeof(int));
	j->first_leaf = calloc((size_t)j->n + 1, sizeof(int));
	if (!j->rank || !j->first_leaf)
		return PS_ENOMEM;
	for (int t = 0; t < j->n; t++)
		j->first_leaf[t] = j->rank[t] = -1;
	for (int i = 0; i < es_scope_leaves(j->s); i++) {
		const struct es_leaf *l = es_scope_leaf(j->s, i);
		if (j->first_leaf[l->thread] < 0) {
			j->first_leaf[l->thread] = i;
			j->rank[l->thread] = l->rank;
			if (l->rank > j->maxrank)
				j->maxrank = l->rank;
		}
	}
	j->ended = calloc((size_t)j->n + 1, sizeof(char *));
	j->rank_first = calloc((size_t)j->maxrank + 3, sizeof(int));
	j->by_rank = calloc((size_t)j->n + 1, sizeof(int));
	if (!j->ended || !j->rank_first || !j->by_rank)
		return PS_ENOMEM;
	for (int t = 0; t < j->n; t++)
		if (j->rank[t] >= 0)
			j->rank_first[j->rank[t] + 1]++;
	/* each rank's threads together, for the look at every thread of a rank */
	for (int r = 0; r <= j->maxrank; r++)
		j->rank_first[r + 1] += j->rank_first[r];
	for (int t = 0, k = 0; t < j->n; t++)
		if (j->rank[t] >= 0)
			j->by_rank[k++] = t;
	qsort_r(j->by_rank, (size_t)(j->rank_first[j->maxrank + 1]), sizeof(int), by_rank_cmp, j->rank);
	return 0;
}

static int one_thread(struct job *j, int t)
{
	const struct hb_look *look = j->look;
	int r = j->rank[t];
	char label[PS_NAME_MAX + 16], what[600];
	if (r >= 0 && j->rank_first[r + 1] - j->rank_first[r] == 1)
		snprintf(label, sizeof(label), "rank%d", r);
	else
		snprintf(label, sizeof(label), "%s", es_scope_thread(j->s, t));
	struct wf_thread w = { .name = es_scope_thread(j->s, t), .label = label,
			       .unit = r >= 0 ? r : UNIT_PATHS + t, .coll = -1 };
	const struct es_trace *b = &look->beat[t];
	if (look->lost[t] || j->first_leaf[t] < 0) {
		w.state = WF_UNSEEN;
		w.what = "(its tuple server did not answer)";
	} else if (j->ended[t]) {
		w.state = WF_ENDED;
		w.what = j->ended[t];
		w.secs = j->in[t] ? j->fl[t].since_ns / 1e9 : look->idle_s[t];
	} else if (look->progressed[t]) {
		w.state = WF_PROGRESS;
		w.what = "progresses";
	} else if (j->in[t]) {
		w.secs = j->fl[t].since_ns / 1e9;
		if (es_op_code(j->fl[t].op) < ES_OP_MPI_INIT)
			return paths_waits(j, t, &w);
		bool any;
		wr_clauses_start(j);
		what[0] = 0;
		int rc = j->mpi && r >= 0 ? mpi_clauses(j, t, what, sizeof(what), &any) : 0;
		if (rc)
			return rc;
		if (!j->mpi || r < 0) {
			snprintf(what, sizeof(what), "in %s (whom it waits for is not recorded)",
				 es_op_name(j->fl[t].op));
			wr_clause_new(j, CL_UNKNOWN, false);
			any = false;
		}
		w.what = what;
		return emit_mpi(j, &w, any);
	} else if (es_trace_empty(b)) {
		w.state = WF_UNSEEN;
		w.what = "(no event yet)";
	} else {
		w.state = WF_COMPUTE;
		w.what = r >= 0 ? "computes (not in MPI)" : "computes (between operations)";
		w.secs = look->idle_s[t];
	}
	int k = wf_add(j->g, &w);
	return k < 0 ? k : 0;
}

int hb_waits_build(wf_graph *g, const es_scope *s, const struct hb_look *look)
{
	if (!g || !s || !look)
		return PS_EINVAL;
	struct job j = { .s = s, .look = look, .mpi = look->mpi, .g = g, .n = es_scope_threads(s),
			 .fl = look->fl, .in = look->in };
	int rc = job_init(&j);
	if (!rc) {
		/* the ended ranks before any board is read (rule O) */
		find_ended(&j);
		/* every thread, in the scope's order: graph index = scope thread */
		for (int t = 0; t < j.n && !rc; t++)
			rc = one_thread(&j, t);
		if (!rc)
			rc = wr_add_past(&j);
	}
	free_job(&j);
	return rc;
}

/* Rule O's step (5): a deadlock stands only if every thread it stands on
 * is still inside the very call its notes said (the same start) with its
 * boards as they were read, all read again now, after everything the
 * judgement used; a rank that ended stays ended.  Anything else drops it
 * for this period, to be judged afresh at the next: no number of periods
 * decides, only whether the facts agree. */
int hb_waits_confirm(wf_graph *g, const es_scope *s, const struct hb_look *look)
{
	int n = es_scope_threads(s);
	int *t = malloc(sizeof(int) * (size_t)(n + 1));
	if (!t)
		return PS_ENOMEM;
	for (int i = wf_deadlocks(g); i-- > 0;) {
		int k = wf_deadlock_threads(g, i, t, n);
		bool same = k >= 0;
		for (int x = 0; x < k && same; x++) {
			struct es_flight now;
			int th = t[x];
			if (th >= n || !look->in[th] || wf_state_of(g, th) == WF_ENDED)
				continue;
			same = es_scope_in_flight(s, th, &now) && now.start == look->fl[th].start &&
			       (!look->mpi || es_mpi_boards_same(look->mpi, th) == 1);
		}
		if (!same)
			wf_drop_deadlock(g, i);
	}
	free(t);
	return 0;
}
