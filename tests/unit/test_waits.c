/* test_waits.c - what heartbeat reads of an MPI job, on trace spaces made here (no mpirun): the communicator reader, and waits.c's judgement of receives, requests and collectives against the ranks' boards. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "monitors/resolve.h"
#include "monitors/waits.h"
#include "scopes/scopes.h"
#include "tests/unit/suites.h"

/*
 * A fake rank is what libescollect would have made for it: a trace space
 * JOB.rR that says its rank, a trace element with notes for its one
 * thread, its boards (requests, channels), mpi.comms and mpi.calls.  The
 * tests write into them as a rank's calls would, then read them as
 * heartbeat does: a scope, es_mpi, hb_waits_build.
 */

enum { MAXR = 4 };
struct fake {
	es_space *sp;
	ps_elem *trace, *reqs_e, *chans_e, *comms, *calls_e;
	_Atomic uint64_t *notes;
	struct es_req_rec *reqs;
	struct es_chan_rec *chans;
	struct es_calls_rec *calls;
	int nchan;
};

static char job[32];
static struct fake rk[MAXR];
static int nranks;

static ps_elem *board(es_space *sp, const char *name, size_t size, uint32_t slots, void **slots_out)
{
	struct ps_elem_attr a = { .tuple_size = (uint32_t)size, .threshold = slots, .mode = PS_BOARD };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(es_space_server(sp), name, &a, &e), 0);
	*slots_out = ps_board(e);
	ck_assert_ptr_nonnull(*slots_out);
	return e;
}

static void comm_rec(int r, uint64_t id, uint32_t serial, uint32_t size, uint32_t me, uint32_t flags)
{
	struct es_comm_rec c = { .id = id, .stamp = es_now(), .serial = serial, .size = size, .me = me,
				 .flags = flags };
	ck_assert_int_eq(ps_write(rk[r].comms, &c, 0, NULL), 0);
}

static void make_job(int n)
{
	static int runs;
	snprintf(job, sizeof(job), "utw%d-%d", (int)getpid(), runs++);
	nranks = n;
	ck_assert_ptr_nonnull(es_clock_init());
	for (int r = 0; r < n; r++) {
		struct fake *f = &rk[r];
		char seg[64], name[PS_NAME_MAX + 1];
		memset(f, 0, sizeof(*f));
		snprintf(seg, sizeof(seg), "%s.r%d", job, r);
		ck_assert_int_eq(es_space_create_rank(seg, 8u << 20, r, n, &f->sp), 0);
		struct es_meta m = { .element = (uint32_t)r };
		snprintf(m.trace, sizeof(m.trace), "mpi.thread0");
		snprintf(m.thread, sizeof(m.thread), "rank%d.thread0", r);
		snprintf(m.where, sizeof(m.where), "MPI rank %d of %d", r, n);
		uint16_t id;
		ck_assert_int_eq(es_space_add(f->sp, &m, 64, false, &id, &f->trace), 0);
		f->notes = ps_elem_notes(f->trace);
		es_mpi_board_name(name, sizeof(name), m.trace, ES_REQS_ELEMENT);
		f->reqs_e = board(f->sp, name, sizeof(struct es_req_rec), ES_REQS_SLOTS, (void **)&f->reqs);
		es_mpi_board_name(name, sizeof(name), m.trace, ES_CHANS_ELEMENT);
		f->chans_e = board(f->sp, name, sizeof(struct es_chan_rec), ES_CHANS_SLOTS, (void **)&f->chans);
		f->nchan = 1; /* slot 0 is the board's header */
		f->calls_e = board(f->sp, ES_CALLS_ELEMENT, sizeof(struct es_calls_rec), ES_CALLS_SLOTS,
				   (void **)&f->calls);
		struct ps_elem_attr ca = { .tuple_size = sizeof(struct es_comm_rec), .threshold = 64,
					   .flags = PS_MULTI_WRITER };
		ck_assert_int_eq(ps_elem_create(es_space_server(f->sp), ES_COMMS_ELEMENT, &ca, &f->comms), 0);
		comm_rec(r, ES_COMM_WORLD_ID, 0, (uint32_t)n, (uint32_t)r, ES_COMMS_WORLD);
		/* MPI_Init, done: the thread has an event */
		struct es_trace t = { .start = es_now(), .op = ES_OP_MPI_INIT, .element = (uint32_t)r,
				      .comm = ES_COMM_NONE };
		t.end = t.start + 1;
		ck_assert_int_eq(ps_write(f->trace, &t, 0, NULL), 0);
	}
}

static void drop_job(void)
{
	for (int r = 0; r < nranks; r++) {
		char seg[64];
		snprintf(seg, sizeof(seg), "%s.r%d", job, r);
		/* the handles are ours: a test that makes a second job would lose them */
		ps_elem_close(rk[r].trace);
		ps_elem_close(rk[r].reqs_e);
		ps_elem_close(rk[r].chans_e);
		ps_elem_close(rk[r].comms);
		ps_elem_close(rk[r].calls_e);
		es_space_destroy(rk[r].sp);
		ps_shm_unlink(seg);
	}
}

/* Rank r is inside op now (its notes). */
static uint64_t inside(int r, unsigned op, uint32_t element, uint64_t arg, uint64_t comm)
{
	uint64_t t0 = es_now();
	es_note_call(rk[r].notes, t0, op, element, arg, comm);
	return t0;
}

/* Rank r sent (or received) n messages to (from) peer with tag on serial. */
static void chan(int r, uint32_t peer, uint32_t tag, uint32_t serial, bool recvd, uint64_t n)
{
	struct es_chan_rec *c = &rk[r].chans[rk[r].nchan++];
	*c = (struct es_chan_rec){ peer, tag, serial, ES_CHAN_USED | (recvd ? ES_CHAN_RECVD : 0), n };
}

/* A request on rank r's board, waited for by the call that started at waiter. */
static void request(int r, int slot, unsigned op, uint32_t peer, uint32_t arg, uint32_t serial, uint64_t waiter)
{
	rk[r].reqs[slot] = (struct es_req_rec){ .ver = 2, .handle = 0x1000u + (unsigned)slot, .start = es_now(),
						.op = (uint16_t)op, .state = ES_REQ_ACTIVE, .serial = serial,
						.peer = peer, .arg = arg, .size = 4, .waiter = waiter };
}

/* Rank r began collectives on serial: ops[0..n) as numbers 0..n-1. */
static void began(int r, uint32_t serial, const unsigned *ops, int n)
{
	struct es_calls_rec *c = &rk[r].calls[serial % ES_CALLS_SLOTS];
	for (int k = 0; k < n; k++)
		c->last[k % ES_CALLS_HISTORY] = ES_CALLS_ENTRY(ops[k], ES_NONE);
	c->begun = (uint64_t)n;
}

/* heartbeat's look at the job now: its report, and how many deadlocks;
 * between, if given, is what the job does after the look and before its
 * confirmation (hb_waits_confirm), the interleaving a loaded machine makes. */
static char text[4096];
static int judge_between(void (*between)(void))
{
	es_scope *s;
	es_mpi *m;
	wf_graph *g;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_LATEST;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(es_mpi_open(s, &m), 0);
	ck_assert_int_eq(es_mpi_refresh(m), 0);
	ck_assert_int_eq(wf_create(&g), 0);
	int n = es_scope_threads(s);
	ck_assert_int_eq(n, nranks);
	struct es_trace beat[MAXR];
	bool progressed[MAXR] = { 0 }, lost[MAXR] = { 0 }, in[MAXR];
	double idle[MAXR] = { 0 };
	struct es_flight fl[MAXR];
	ck_assert_int_le(es_scope_width(s), MAXR);
	ck_assert_int_eq(es_scope_pull(s, beat), 0);
	for (int t = 0; t < n; t++) {
		ck_assert_int_eq(es_mpi_rank_of(m, t), t);
		in[t] = es_scope_in_flight(s, t, &fl[t]);
	}
	struct hb_look lk = { beat, progressed, lost, idle, in, fl, m };
	ck_assert_int_eq(hb_waits_build(g, s, &lk), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	if (between)
		between();
	ck_assert_int_eq(hb_waits_confirm(g, s, &lk), 0);
	memset(text, 0, sizeof(text)); /* a report of nothing writes nothing */
	FILE *out = fmemopen(text, sizeof(text), "w");
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(wf_report(g, out, ""), 0);
	fclose(out);
	int d = wf_deadlocks(g);
	wf_destroy(g);
	es_mpi_close(m);
	es_scope_destroy(s);
	return d;
}

static int judge(void)
{
	return judge_between(NULL);
}

static bool says(const char *what)
{
	if (strstr(text, what))
		return true;
	fprintf(stderr, "expected \"%s\" in:\n%s", what, text);
	return false;
}

/* Two receives from each other: a deadlock; once a message one of them
 * could take is counted on its way (sent, not yet received), none. */
START_TEST(receives_against_messages_on_their_way)
{
	make_job(2);
	inside(0, ES_OP_MPI_RECV, 1, 5, 0);
	inside(1, ES_OP_MPI_RECV, 0, 5, 0);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("deadlock for"));
	ck_assert(says("rank0 in MPI_Recv from 1 tag 5 <- rank1 in MPI_Recv from 0 tag 5"));
	chan(1, 0, 5, 0, false, 3); /* rank 1 sent three to rank 0 ... */
	chan(0, 1, 5, 0, true, 2);  /* ... of which rank 0 received two */
	ck_assert_int_eq(judge(), 0);
	chan(0, 1, 5, 0, true, 1);  /* the third as well: none on its way */
	ck_assert_int_eq(judge(), 1);
	drop_job();
}
END_TEST

/* A Waitall on an Irecv and an Isend against a barrier the receiver's
 * sender is in: the wait names the receive it waits for and counts the
 * send that can complete; the barrier waits for the rank not in it. */
START_TEST(requests_and_a_collective)
{
	make_job(2);
	uint64_t w = inside(0, ES_OP_MPI_WAITALL, 0, 2, ES_NONE);
	request(0, 0, ES_OP_MPI_IRECV, 1, 7, 0, w);
	request(0, 1, ES_OP_MPI_ISEND, 1, 7, 0, w);
	request(0, 2, ES_OP_MPI_IRECV, 1, 9, 0, 0); /* open, but not this wait's */
	static const unsigned barrier[] = { ES_OP_MPI_BARRIER };
	began(1, 0, barrier, 1);
	inside(1, ES_OP_MPI_BARRIER, ES_NONE, 0, 0);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("rank0 in MPI_Waitall: MPI_Irecv from 1 tag 7; 1 more that can complete <- "
		       "rank1 in MPI_Barrier #0 on MPI_COMM_WORLD"));
	/* rank 0 began the barrier too (it is somewhere else in MPI now):
	 * rank 1 waits for nobody, and rank 0 for a rank that can go on */
	began(0, 0, barrier, 1);
	ck_assert_int_eq(judge(), 0);
	drop_job();
}
END_TEST

/* A member gone past number 0 with another call (its history says
 * MPI_Iscan) against one inside MPI_Ialltoall #0: a mismatch; with the
 * same call there, none. */
START_TEST(gone_past_with_another_call)
{
	make_job(2);
	uint64_t w0 = inside(0, ES_OP_MPI_WAIT, 0, 1, ES_NONE);
	request(0, 0, ES_OP_MPI_IALLTOALL, ES_NONE, 0, 0, w0);
	static const unsigned mine[] = { ES_OP_MPI_IALLTOALL };
	began(0, 0, mine, 1);
	uint64_t w1 = inside(1, ES_OP_MPI_WAIT, 0, 1, ES_NONE);
	request(1, 0, ES_OP_MPI_IALLTOALL, ES_NONE, 1, 0, w1);
	static const unsigned theirs[] = { ES_OP_MPI_ISCAN, ES_OP_MPI_IALLTOALL };
	began(1, 0, theirs, 2);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Ialltoall #0, rank1 went past "
		       "MPI_Iscan #0"));
	static const unsigned same[] = { ES_OP_MPI_IALLTOALL, ES_OP_MPI_IALLTOALL };
	began(1, 0, same, 2);
	judge();
	ck_assert_ptr_null(strstr(text, "mismatch"));
	drop_job();
}
END_TEST

/* MPI_Reduce with root 0 on rank 0, root 1 on the others, one of which
 * has gone past it and ended: rank 0 waits for the others (roots differ),
 * rank 1 for rank 0: a mismatch, whoever went past. */
/* MBI's CallOrdering_Allgather_Exscan_nok under MPICH: rank 0 inside
 * MPI_Exscan #0 (whose recursive doubling waits for rank 1), rank 1 inside
 * MPI_Allgather #0: a mismatch, rank 0 waiting too, though no rank is
 * below it; a scan against a scan, none. */
START_TEST(a_scan_waits_for_higher_ranks_too)
{
	make_job(2);
	static const unsigned exscan[] = { ES_OP_MPI_EXSCAN }, allgather[] = { ES_OP_MPI_ALLGATHER };
	began(0, 0, exscan, 1);
	began(1, 0, allgather, 1);
	inside(0, ES_OP_MPI_EXSCAN, ES_NONE, 0, 0);
	inside(1, ES_OP_MPI_ALLGATHER, ES_NONE, 0, 0);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Exscan #0, rank1 in MPI_Allgather #0"));
	/* rank 1 not there yet (it has begun no collective): rank 0 waits for it */
	rk[1].calls[0].begun = 0;
	inside(1, ES_OP_MPI_RECV, 0, 3, 0);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("rank0 in MPI_Exscan #0 on MPI_COMM_WORLD <- rank1 in MPI_Recv from 0 tag 3"));
	drop_job();
}
END_TEST

START_TEST(roots_differ_one_member_gone)
{
	make_job(3);
	static const unsigned reduce[] = { ES_OP_MPI_REDUCE };
	for (int r = 0; r < 3; r++)
		began(r, 0, reduce, 1);
	rk[0].calls[0].last[0] = ES_CALLS_ENTRY(ES_OP_MPI_REDUCE, 0);
	rk[1].calls[0].last[0] = ES_CALLS_ENTRY(ES_OP_MPI_REDUCE, 1);
	rk[2].calls[0].last[0] = ES_CALLS_ENTRY(ES_OP_MPI_REDUCE, 1);
	inside(0, ES_OP_MPI_REDUCE, 0, 0, 0);
	inside(1, ES_OP_MPI_REDUCE, 1, 0, 0);
	inside(2, ES_OP_MPI_FINALIZE, 2, 0, ES_NONE);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("collective mismatch on MPI_COMM_WORLD: rank0 in MPI_Reduce #0 root 0, rank1 in "
		       "MPI_Reduce #0 root 1"));
	drop_job();
}
END_TEST

/* The communicator reader: a split numbered backwards, a serial whose
 * low 16 bits come again after its freeing, an intercommunicator's
 * sides, counts of collectives, messages. */
START_TEST(communicators_as_the_ranks_listed_them)
{
	make_job(2);
	const uint64_t back = 0xb0b, later = 0xc0c, inter = 0x1e1;
	comm_rec(0, back, 3, 2, 1, 0); /* world rank 0 is rank 1 there */
	comm_rec(1, back, 7, 2, 0, 0);
	comm_rec(0, inter, 4, 1, 0, ES_COMMS_INTER);
	comm_rec(1, inter, 4, 1, 0, ES_COMMS_INTER | ES_COMMS_SIDE1);
	uint64_t before_free = es_now();
	comm_rec(0, back, 3, 2, 1, ES_COMMS_FREED);
	comm_rec(0, later, 3 + 65536, 2, 0, 0); /* the same low bits, after */
	comm_rec(1, later, 8, 2, 1, 0);
	static const unsigned three[] = { ES_OP_MPI_BARRIER, ES_OP_MPI_BCAST, ES_OP_MPI_BARRIER };
	began(1, 7, three, 3);
	chan(0, 1, 4, 3 + 65536, false, 5);
	chan(1, 0, 4, 8, true, 2);
	es_scope *s;
	es_mpi *m;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(es_mpi_open(s, &m), 0);
	ck_assert_int_eq(es_mpi_ranks(m), 2);
	const struct es_mpi_comm *c = es_mpi_comm(m, back);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->size[0], 2);
	ck_assert_int_eq(c->members[0][0], 1); /* its rank 0 is world rank 1 */
	ck_assert_int_eq(c->members[0][1], 0);
	/* serial 3 now names nothing; its low bits name the later one now and
	 * the split before it was freed */
	ck_assert_ptr_null(es_mpi_comm_of(m, 0, 3, UINT32_MAX, UINT64_MAX, NULL));
	c = es_mpi_comm_of(m, 0, 3, 0xffff, UINT64_MAX, NULL);
	ck_assert(c && c->id == later);
	uint64_t at = es_clock_ns(es_space_clock(rk[0].sp), before_free);
	c = es_mpi_comm_of(m, 0, 3, 0xffff, at, NULL);
	ck_assert(c && c->id == back);
	int side = -1;
	c = es_mpi_comm_of(m, 1, 4, UINT32_MAX, UINT64_MAX, &side);
	ck_assert(c && c->id == inter && (c->flags & ES_COMMS_INTER) && side == 1);
	ck_assert_int_eq(c->members[0][0], 0);
	ck_assert_int_eq(c->members[1][0], 1);
	ck_assert_int_eq(es_mpi_calls(m, 1, back), 3);
	unsigned op;
	uint32_t root;
	ck_assert(es_mpi_coll_at(m, 1, back, 1, &op, &root) && op == ES_OP_MPI_BCAST && root == ES_NONE);
	ck_assert(!es_mpi_coll_at(m, 1, back, 3, &op, &root)); /* not begun */
	ck_assert_int_eq(es_mpi_calls(m, 0, 0xdead), -1);
	uint64_t sent, recvd;
	ck_assert(es_mpi_messages(m, 0, 1, later, 4, &sent, &recvd));
	ck_assert_uint_eq(sent, 5);
	ck_assert_uint_eq(recvd, 2);
	ck_assert(es_mpi_messages(m, 0, 1, back, 4, &sent, &recvd) && sent == 0);
	ck_assert(!es_mpi_messages(m, 0, 9, later, 4, &sent, &recvd)); /* no such rank */
	/* what is written after the attach comes in with a refresh */
	comm_rec(1, 0x5ee, 9, 2, 1, 0);
	ck_assert_ptr_null(es_mpi_comm(m, 0x5ee));
	ck_assert_int_eq(es_mpi_refresh(m), 0);
	ck_assert_ptr_nonnull(es_mpi_comm(m, 0x5ee));
	es_mpi_close(m);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

/* The live resolver (monitors/resolve.c): both ends of a message, named
 * by each rank's own serial of the communicator, resolve to its id, each
 * rank's place in it and one key; an end without a number gets none and
 * is counted; a channel's mark is taken in, no event; an
 * intercommunicator's tuples have no communicator for the wait states
 * (its collectives are not judged), though its id is known. */
START_TEST(resolved_once_by_the_live_resolver)
{
	make_job(2);
	const uint64_t dup = 0xd0d, inter = 0x1e1;
	comm_rec(0, dup, 3, 2, 1, 0); /* world rank 0 is rank 1 there */
	comm_rec(1, dup, 7, 2, 0, 0);
	comm_rec(0, inter, 4, 1, 0, ES_COMMS_INTER);
	es_scope *s;
	es_mpi *m;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(es_mpi_open(s, &m), 0);
	mon_rs *r;
	ck_assert_int_eq(mon_rs_create(&r), 0);
	uint64_t now = es_clock_ns(es_space_clock(rk[0].sp), es_now());
	struct es_trace snd = { .start = now, .end = now + 10, .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .comm = 3,
				.element = 1, .arg = 4, .size = 8, .seq = 5u << 16 | ES_NUM_WHOLE | 0 };
	struct es_trace rcv = { .start = now, .end = now + 20, .op = ES_OP_MPI_RECV | ES_OP_NUMBERED, .comm = 7,
				.element = 0, .arg = 4, .size = 8, .seq = 6u << 16 | ES_NUM_WHOLE | 0 };
	struct es_event a, b;
	ck_assert_int_eq(mon_rs_event(r, m, &snd, 0, 0, &a), 0);
	ck_assert_int_eq(mon_rs_event(r, m, &rcv, 1, 1, &b), 0);
	ck_assert_uint_eq(a.comm, dup);
	ck_assert_uint_eq(b.comm, dup);
	ck_assert_uint_eq(a.members, 2);
	ck_assert_uint_eq(a.me, 1);
	ck_assert_uint_eq(b.me, 0);
	ck_assert(a.msg != ES_EVENT_NO_MSG && a.msg == b.msg);
	ck_assert_uint_eq(a.site, 0u << 16 | 5);
	ck_assert_uint_eq(b.site, 1u << 16 | 6);
	ck_assert_uint_eq(b.loc, 1);
	ck_assert_int_eq(b.rank, 1);
	/* the next send has no number: alone, counted */
	struct es_trace bare = snd;
	bare.op = ES_OP_MPI_SEND;
	ck_assert_int_eq(mon_rs_event(r, m, &bare, 0, 0, &a), 0);
	ck_assert_uint_eq(a.msg, ES_EVENT_NO_MSG);
	ck_assert_uint_eq(mon_rs_unnumbered(r), 1);
	/* a channel's mark: numbers only */
	struct es_trace mark = { .start = now, .end = now, .op = ES_OP_MPI_CHANNEL, .comm = 3, .element = 1, .arg = 4,
				 .size = 40000 };
	ck_assert_int_eq(mon_rs_event(r, m, &mark, 0, 0, &a), MON_RS_MARK);
	/* an intercommunicator's: paired by its id, not judged as a group */
	struct es_trace in = snd;
	in.comm = 4;
	ck_assert_int_eq(mon_rs_event(r, m, &in, 0, 0, &a), 0);
	ck_assert_uint_eq(a.comm, 0);
	ck_assert(a.msg != ES_EVENT_NO_MSG);
	ck_assert_uint_eq(mon_rs_comm_id(r, m, 0, &in), inter);
	mon_rs_destroy(r);
	es_mpi_close(m);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

/* Rank 1 sent its last message to rank 0 on a duplicate, freed the
 * duplicate and went into MPI_Finalize while rank 0 had yet to take it
 * (t_waitreq's dups and persist, when rank 0 got no core for a while):
 * no deadlock, the message is on its way.  Once rank 0 has it and waits
 * for another, rank 1 will never send it: a deadlock.  A count on a
 * serial whose communicator is not known leaves the wait unknown. */
START_TEST(ended_after_its_last_send_on_a_freed_duplicate)
{
	make_job(2);
	const uint64_t dup = 0xd0;
	comm_rec(0, dup, 5, 2, 0, 0);
	comm_rec(1, dup, 6, 2, 1, 0);
	chan(0, 1, 2, 5, false, 1); /* rank 0's send, received by rank 1 */
	chan(1, 0, 2, 6, true, 1);
	chan(1, 0, 2, 6, false, 1); /* rank 1's send to rank 0, then the free */
	comm_rec(1, dup, 6, 2, 1, ES_COMMS_FREED);
	inside(0, ES_OP_MPI_SENDRECV, 1, 2 | (uint64_t)2 << 32, 5 | (uint64_t)1 << 32);
	inside(1, ES_OP_MPI_FINALIZE, 1, 0, ES_NONE);
	ck_assert_int_eq(judge(), 0);
	ck_assert_ptr_null(strstr(text, "deadlock"));
	chan(0, 1, 2, 5, true, 1); /* rank 0 took it, and waits for another */
	inside(0, ES_OP_MPI_RECV, 1, 2, 5);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("rank1 has ended (inside MPI_Finalize); 1 thread waits for it: rank0 in MPI_Recv from 1 "
		       "tag 2 on communicator"));
	chan(1, 0, 2, 9, false, 1); /* on a serial rank 1's records do not name */
	ck_assert_int_eq(judge(), 0);
	drop_job();
}
END_TEST

/* Rank 0 in a Sendrecv on A whose receive has come and whose send rank 1
 * has received, rank 1 already in its next Sendrecv, on B, for rank 0's
 * next message (t_waitreq's dups, rank 0 slow): rank 0 waits for nobody,
 * no cycle.  Had rank 1 not received it, rank 0's send would wait for
 * rank 1, which cannot take it from inside the other call: a deadlock. */
START_TEST(a_send_received_waits_for_nobody)
{
	for (int received = 1; received >= 0; received--) {
		make_job(2);
		const uint64_t a = 0xa, b = 0xb;
		for (int r = 0; r < 2; r++) {
			comm_rec(r, a, 5, 2, (uint32_t)r, 0);
			comm_rec(r, b, 6, 2, (uint32_t)r, 0);
		}
		chan(1, 0, 2, 5, false, 1); /* rank 1's send on A: on its way to rank 0 */
		chan(0, 1, 2, 5, false, 1); /* rank 0's, on A ... */
		if (received)
			chan(1, 0, 2, 5, true, 1); /* ... which rank 1 received */
		chan(1, 0, 2, 6, false, 1); /* rank 1's send on B */
		inside(0, ES_OP_MPI_SENDRECV, 1, 2 | (uint64_t)2 << 32, 5 | (uint64_t)1 << 32);
		inside(1, ES_OP_MPI_SENDRECV, 0, 2 | (uint64_t)2 << 32, 6 | (uint64_t)0 << 32);
		ck_assert_int_eq(judge(), received ? 0 : 1);
		if (!received)
			ck_assert(says("rank0 in MPI_Sendrecv to 1 tag 2, from 1 tag 2 on communicator"));
		drop_job();
	}
}
END_TEST

/* Two receives posted from rank 1, which sent one message and ended:
 * MPI gives it to the first posted, so MPI_Waitany on both can complete;
 * MPI_Waitall cannot (its second never comes). */
START_TEST(receives_posted_before_take_first)
{
	for (int all = 0; all < 2; all++) {
		make_job(2);
		uint64_t w = inside(0, all ? ES_OP_MPI_WAITALL : ES_OP_MPI_WAITANY, 0, 2, ES_NONE);
		request(0, 0, ES_OP_MPI_IRECV, 1, 4, 0, w);
		request(0, 1, ES_OP_MPI_IRECV, 1, 4, 0, w); /* posted after: a later start */
		chan(1, 0, 4, 0, false, 1);
		inside(1, ES_OP_MPI_FINALIZE, 1, 0, ES_NONE);
		ck_assert_int_eq(judge(), all);
		if (all)
			ck_assert(says("rank1 has ended (inside MPI_Finalize); 1 thread waits for it: rank0 in "
				       "MPI_Waitall: MPI_Irecv from 1 tag 4"));
		drop_job();
	}
}
END_TEST

/* Rank 0 inside MPI_Win_lock on rank 1, rank 1 already in MPI_Win_free:
 * the target serves the lock from inside MPI, so no deadlock; once rank 1
 * has ended, nobody will serve it. */
START_TEST(a_lock_waits_only_for_a_target_that_ended)
{
	make_job(2);
	const uint64_t win = 0x3e1;
	for (int r = 0; r < 2; r++)
		comm_rec(r, win, 4, 2, (uint32_t)r, ES_COMMS_WINDOW);
	static const unsigned wfree[] = { ES_OP_MPI_WIN_FREE };
	began(1, 4, wfree, 1);
	inside(0, ES_OP_MPI_WIN_LOCK, 1, 0, 4);
	inside(1, ES_OP_MPI_WIN_FREE, ES_NONE, 0, 4);
	ck_assert_int_eq(judge(), 0);
	ck_assert_ptr_null(strstr(text, "deadlock"));
	inside(1, ES_OP_MPI_FINALIZE, 1, 0, ES_NONE);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("rank1 has ended (inside MPI_Finalize); 1 thread waits for it: rank0 in MPI_Win_lock on 1"));
	drop_job();
}
END_TEST

/* A communicator of three that rank 2 has not listed yet (it has not
 * reached it, or heartbeat met it late: t_waitreq's anyhalo with the last
 * rank starved): rank 0's any-source receive may hear from it, so rank 0
 * and rank 1, waiting for each other, are no deadlock; once rank 2 has
 * listed it and waits too, they are. */
START_TEST(a_member_not_seen_may_be_the_sender)
{
	make_job(3);
	const uint64_t x = 0x77;
	comm_rec(0, x, 3, 3, 0, 0);
	comm_rec(1, x, 3, 3, 1, 0);
	inside(0, ES_OP_MPI_RECV, ES_NONE, 3, 3);
	inside(1, ES_OP_MPI_RECV, 0, 3, 3);
	ck_assert_int_eq(judge(), 0);
	ck_assert_ptr_null(strstr(text, "deadlock"));
	comm_rec(2, x, 3, 3, 2, 0);
	inside(2, ES_OP_MPI_RECV, 0, 3, 3);
	ck_assert_int_eq(judge(), 1);
	ck_assert(says("rank0 in MPI_Recv from any source tag 3 on communicator"));
	drop_job();
}
END_TEST

/* What the job does between heartbeat's look and its confirmation. */
static void rank1_moves(void)
{
	inside(1, ES_OP_MPI_RECV, 0, 7, 0); /* the same call again, a new start: another call */
}
static void rank0_request_completes(void)
{
	/* its completion written: the slot idles (ver moves on), then the count */
	rk[0].reqs[0].state = 0;
	rk[0].reqs[0].ver += 2;
	chan(0, 1, 5, 0, true, 1);
}
static void rank2_moves(void)
{
	inside(2, ES_OP_MPI_RECV, 3, 4, 0);
}

/* A cycle seen by the look is named only if its threads are, read again,
 * in the very calls and with the boards it was judged on: a member that
 * moved, or whose request completed, between the look and the
 * confirmation drops it (a loaded machine makes such interleavings);
 * nothing moved, it stands. */
START_TEST(confirmed_only_on_facts_that_held_together)
{
	make_job(2);
	uint64_t w = inside(0, ES_OP_MPI_WAIT, 0, 1, ES_NONE);
	request(0, 0, ES_OP_MPI_IRECV, 1, 5, 0, w);
	inside(1, ES_OP_MPI_RECV, 0, 7, 0);
	ck_assert_int_eq(judge_between(NULL), 1);
	ck_assert(says("rank0 in MPI_Wait: MPI_Irecv from 1 tag 5 <- rank1 in MPI_Recv from 0 tag 7"));
	ck_assert_int_eq(judge_between(rank1_moves), 0);
	ck_assert_ptr_null(strstr(text, "deadlock"));
	ck_assert_int_eq(judge_between(rank0_request_completes), 0);
	drop_job();
}
END_TEST

/* Rank 0 receives from any source: ranks 1, 2 and 3 are all it could
 * hear from.  Rank 1 waits for rank 0, ranks 2 and 3 for each other: two
 * cycles, and rank 0's stands on rank 2 and 3 being stuck too.  Rank 2
 * moving between the look and the confirmation drops both, though rank 2
 * is neither a member of rank 0's cycle nor waits for it. */
START_TEST(confirmed_on_every_thread_it_stands_on)
{
	make_job(4);
	inside(0, ES_OP_MPI_RECV, ES_NONE, 3, 0);
	inside(1, ES_OP_MPI_RECV, 0, 3, 0);
	inside(2, ES_OP_MPI_RECV, 3, 4, 0);
	inside(3, ES_OP_MPI_RECV, 2, 4, 0);
	ck_assert_int_eq(judge_between(NULL), 2);
	ck_assert(says("rank0 in MPI_Recv from any source tag 3 <- rank1 in MPI_Recv from 0 tag 3"));
	ck_assert(says("rank2 in MPI_Recv from 3 tag 4 <- rank3 in MPI_Recv from 2 tag 4"));
	ck_assert_int_eq(judge_between(rank2_moves), 0);
	drop_job();
}
END_TEST

Suite *waits_suite(void)
{
	Suite *s = suite_create("waits");
	TCase *tc = tcase_create("boards");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, receives_against_messages_on_their_way);
	tcase_add_test(tc, requests_and_a_collective);
	tcase_add_test(tc, gone_past_with_another_call);
	tcase_add_test(tc, roots_differ_one_member_gone);
	tcase_add_test(tc, a_scan_waits_for_higher_ranks_too);
	tcase_add_test(tc, communicators_as_the_ranks_listed_them);
	tcase_add_test(tc, resolved_once_by_the_live_resolver);
	tcase_add_test(tc, ended_after_its_last_send_on_a_freed_duplicate);
	tcase_add_test(tc, a_send_received_waits_for_nobody);
	tcase_add_test(tc, receives_posted_before_take_first);
	tcase_add_test(tc, a_lock_waits_only_for_a_target_that_ended);
	tcase_add_test(tc, a_member_not_seen_may_be_the_sender);
	tcase_add_test(tc, confirmed_only_on_facts_that_held_together);
	tcase_add_test(tc, confirmed_on_every_thread_it_stands_on);
	suite_add_tcase(s, tc);
	return s;
}
