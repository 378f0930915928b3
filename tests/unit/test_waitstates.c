/* test_waitstates.c - the wait-state engine on events made by hand: each pattern's formula, the order events come in, what is given up and why. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "tests/unit/suites.h"
#include "waitstates/internal.h"

#define COMM 77u

static struct es_event ev(uint32_t loc, unsigned op, uint64_t start, uint64_t end)
{
	return (struct es_event){ .start = start, .end = end, .loc = loc, .rank = (int32_t)loc, .op = (uint16_t)op,
				  .peer = ES_NONE, .msg = ES_EVENT_NO_MSG, .site = 0 };
}

/* a message's end: its key, its peer */
static struct es_event end_of(uint32_t loc, unsigned op, uint64_t start, uint64_t end, uint32_t peer, uint64_t key,
			      uint32_t site)
{
	struct es_event e = ev(loc, op, start, end);
	e.peer = peer, e.msg = key, e.comm = COMM, e.members = 4, e.me = loc, e.site = site;
	return e;
}

/* a collective's member: rank = its rank in the communicator */
static struct es_event coll(uint32_t loc, unsigned op, uint64_t start, uint64_t end, uint32_t num, uint32_t members,
			    uint32_t root, uint32_t size)
{
	struct es_event e = ev(loc, op, start, end);
	e.comm = COMM, e.members = members, e.me = loc, e.arg = num, e.peer = root, e.size = size, e.site = 100 + loc;
	return e;
}

static void feed(ws *w, const struct es_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(ws_event(w, &e[i]), 0);
}

/* The seconds (ns) of pattern p on rank at site (0: any site). */
static uint64_t got(const ws *w, enum ws_pattern p, int rank, uint32_t site)
{
	const struct ws_row *r;
	size_t n = ws_rows(w, &r);
	uint64_t ns = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].pattern == p && r[i].rank == rank && (!site || r[i].site == site))
			ns += r[i].ns;
	return ns;
}

static uint64_t total(const ws *w)
{
	const struct ws_row *r;
	size_t n = ws_rows(w, &r);
	uint64_t ns = 0;
	for (size_t i = 0; i < n; i++)
		ns += r[i].ns;
	return ns;
}

/* A blocking receive entered at 100 whose send began at 300: 200 ns of
 * Late Sender on the receiver, whichever end is fed first. */
START_TEST(late_sender_either_order)
{
	struct es_event recv = end_of(1, ES_OP_MPI_RECV, 100, 500, 0, 42, 7);
	struct es_event send = end_of(0, ES_OP_MPI_SEND, 300, 310, 1, 42, 3);
	for (int order = 0; order < 2; order++) {
		ws *w;
		ck_assert_int_eq(ws_create(&w), 0);
		feed(w, order ? &send : &recv, 1);
		feed(w, order ? &recv : &send, 1);
		ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 7), 200);
		ck_assert_uint_eq(total(w), 200);
		struct ws_stats st;
		ws_stats(w, &st);
		ck_assert_uint_eq(st.receives, 1);
		ck_assert_uint_eq(st.unpaired, 0);
		ws_flush(w, UINT64_MAX);
		ws_stats(w, &st);
		ck_assert_uint_eq(st.unpaired, 0);
		ck_assert_uint_eq(ws_mpi_ns(w, 1), 400);
		ws_destroy(w);
	}
}
END_TEST

/* An Irecv completed by a Wait entered at 100, its message sent at 300:
 * the wait is measured from the Wait's enter, at the Wait's site; a
 * Waitall completing two counts only its latest sender. */
START_TEST(late_sender_at_the_wait)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(0, ES_OP_MPI_ISEND, 300, 305, 1, 1, 3),
		ev(1, ES_OP_MPI_IRECV, 0, 5),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 0, 450, 0, 1, 5),
		end_of(1, ES_OP_MPI_WAIT, 100, 460, ES_NONE, ES_EVENT_NO_MSG, 9),
		/* Waitall [1000, 2000] of two: sent at 1300 and 1700 */
		end_of(2, ES_OP_MPI_ISEND, 1300, 1305, 1, 2, 3),
		end_of(3, ES_OP_MPI_ISEND, 1700, 1705, 1, 3, 3),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 900, 1990, 2, 2, 5),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 910, 1995, 3, 3, 5),
		end_of(1, ES_OP_MPI_WAITALL, 1000, 2000, ES_NONE, ES_EVENT_NO_MSG, 11),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 9), 200);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 11), 700);
	const struct ws_row *r;
	size_t n = ws_rows(w, &r);
	for (size_t i = 0; i < n; i++)
		if (r[i].site == 9)
			ck_assert(r[i].op == ES_OP_MPI_WAIT && r[i].of == ES_OP_MPI_IRECV);
	ws_destroy(w);
}
END_TEST

/* A buffered send that comes after its receive (whose call was waiting
 * for it) is judged: the message is gone at once, and that is no error. */
START_TEST(send_after_its_receive)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(1, ES_OP_MPI_RECV, 100, 500, 0, 42, 7),
		end_of(0, ES_OP_MPI_BSEND, 300, 310, 1, 42, 3),
		end_of(0, ES_OP_MPI_SENDRECV, 600, 700, 1, 43, 3),
		end_of(1, ES_OP_MPI_SENDRECV | ES_OP_DONE, 650, 710, 0, 43, 8),
	};
	feed(w, e, 4);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 7), 200);
	ws_flush(w, UINT64_MAX);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.unpaired, 0);
	ck_assert_uint_eq(st.receives, 2);
	ws_destroy(w);
}
END_TEST

/* A receive a test completed never waited; nor is a send a test completed
 * counted as a Late Receiver. */
START_TEST(tests_never_wait)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(0, ES_OP_MPI_ISEND, 300, 305, 1, 1, 3),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 0, 450, 0, 1, 5),
		end_of(1, ES_OP_MPI_TEST, 100, 460, ES_NONE, ES_EVENT_NO_MSG, 9),
	};
	feed(w, e, 3);
	ws_flush(w, UINT64_MAX);
	ck_assert_uint_eq(total(w), 0);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.by_test, 1);
	ck_assert_uint_eq(st.receives, 1);
	ws_destroy(w);
}
END_TEST

/* Rank 2 waits 400 ns for rank 0's message (sent at 500), then receives
 * rank 1's, sent at 50: it waited while an older message was there, so
 * those 400 ns are also Wrong Order, from a different source. */
START_TEST(wrong_order)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(0, ES_OP_MPI_SEND, 500, 505, 2, 1, 3),
		end_of(1, ES_OP_MPI_SEND, 50, 55, 2, 2, 3),
		end_of(2, ES_OP_MPI_RECV, 100, 510, 0, 1, 20),
		end_of(2, ES_OP_MPI_RECV, 520, 530, 1, 2, 21),
	};
	feed(w, e, 4);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 2, 20), 400);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER_WO, 2, 20), 400);
	ck_assert_uint_eq(got(w, WS_LSWO_DIFFERENT, 2, 20), 400);
	ck_assert_uint_eq(got(w, WS_LSWO_SAME, 2, 0), 0);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 2, 21), 0);
	ws_destroy(w);
	/* in order: no Wrong Order */
	ck_assert_int_eq(ws_create(&w), 0);
	e[1].start = 515, e[1].end = 516;
	feed(w, e, 4);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER_WO, 2, 0), 0);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 2, 0), 400);
	ws_destroy(w);
}
END_TEST

/* A synchronous send entered at 100 that returned after its receive was
 * posted at 500 waited 400 ns; an eager one that returned at once did not. */
START_TEST(late_receiver)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(0, ES_OP_MPI_SSEND, 100, 600, 1, 1, 3),
		end_of(1, ES_OP_MPI_RECV, 500, 610, 0, 1, 4),
		end_of(0, ES_OP_MPI_SEND, 1000, 1010, 1, 2, 5),
		end_of(1, ES_OP_MPI_RECV, 1500, 1510, 0, 2, 4),
		/* an Isend completed by a Wait that outlived the receive's post */
		end_of(0, ES_OP_MPI_ISEND, 2000, 2001, 1, 3, 6),
		end_of(0, ES_OP_MPI_ISEND | ES_OP_DONE, 2000, 2900, 1, ES_EVENT_NO_MSG, 6),
		end_of(0, ES_OP_MPI_WAIT, 2100, 2910, ES_NONE, ES_EVENT_NO_MSG, 8),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 2800, 2905, 0, 3, 4),
		end_of(1, ES_OP_MPI_WAIT, 2850, 2906, ES_NONE, ES_EVENT_NO_MSG, 9),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ck_assert_uint_eq(got(w, WS_LATE_RECEIVER, 0, 3), 400);
	ck_assert_uint_eq(got(w, WS_LATE_RECEIVER, 0, 5), 0);
	ck_assert_uint_eq(got(w, WS_LATE_RECEIVER, 0, 8), 700);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 0), 0);
	ws_flush(w, UINT64_MAX);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.unpaired, 0);
	ck_assert_uint_eq(st.sends, 3);
	ws_destroy(w);
}
END_TEST

/* Three members begin a barrier at 0, 100, 300 and leave at 310, 320,
 * 330: they wait 300, 200, 0 and complete in 0, 10, 20. */
START_TEST(barrier)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_BARRIER, 0, 310, 0, 3, ES_NONE, 0),
		coll(2, ES_OP_MPI_BARRIER, 300, 330, 0, 3, ES_NONE, 0),
		coll(1, ES_OP_MPI_BARRIER, 100, 320, 0, 3, ES_NONE, 0),
	};
	feed(w, e, 2);
	ck_assert_uint_eq(total(w), 0); /* not all in yet */
	feed(w, e + 2, 1);
	ck_assert_uint_eq(got(w, WS_WAIT_BARRIER, 0, 100), 300);
	ck_assert_uint_eq(got(w, WS_WAIT_BARRIER, 1, 101), 200);
	ck_assert_uint_eq(got(w, WS_WAIT_BARRIER, 2, 0), 0);
	ck_assert_uint_eq(got(w, WS_BARRIER_COMPLETION, 0, 0), 0);
	ck_assert_uint_eq(got(w, WS_BARRIER_COMPLETION, 1, 0), 10);
	ck_assert_uint_eq(got(w, WS_BARRIER_COMPLETION, 2, 0), 20);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.colls, 1);
	ws_destroy(w);
}
END_TEST

/* Rooted and prefix collectives: a late root makes the others wait in a
 * broadcast (not when it sends nothing); an early root waits in a reduce;
 * a scan's member waits for the latest lower rank. */
START_TEST(rooted_and_scan)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_BCAST, 500, 510, 0, 3, 0, 8),
		coll(1, ES_OP_MPI_BCAST, 100, 520, 0, 3, 0, 8),
		coll(2, ES_OP_MPI_BCAST, 200, 530, 0, 3, 0, 8),
		coll(0, ES_OP_MPI_BCAST, 1500, 1510, 1, 3, 0, 0), /* nothing sent */
		coll(1, ES_OP_MPI_BCAST, 1100, 1520, 1, 3, 0, 0),
		coll(2, ES_OP_MPI_BCAST, 1200, 1530, 1, 3, 0, 0),
		coll(0, ES_OP_MPI_REDUCE, 2000, 2410, 2, 3, 0, 8),
		coll(1, ES_OP_MPI_REDUCE, 2200, 2210, 2, 3, 0, 8),
		coll(2, ES_OP_MPI_REDUCE, 2400, 2405, 2, 3, 0, 8),
		coll(0, ES_OP_MPI_SCAN, 3300, 3400, 3, 3, ES_NONE, 8),
		coll(1, ES_OP_MPI_SCAN, 3100, 3400, 3, 3, ES_NONE, 8),
		coll(2, ES_OP_MPI_SCAN, 3200, 3400, 3, 3, ES_NONE, 8),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ck_assert_uint_eq(got(w, WS_LATE_BROADCAST, 0, 0), 0);
	ck_assert_uint_eq(got(w, WS_LATE_BROADCAST, 1, 0), 400);
	ck_assert_uint_eq(got(w, WS_LATE_BROADCAST, 2, 0), 300);
	ck_assert_uint_eq(got(w, WS_EARLY_REDUCE, 0, 0), 400);
	ck_assert_uint_eq(got(w, WS_EARLY_REDUCE, 1, 0) + got(w, WS_EARLY_REDUCE, 2, 0), 0);
	ck_assert_uint_eq(got(w, WS_EARLY_SCAN, 0, 0), 0);
	ck_assert_uint_eq(got(w, WS_EARLY_SCAN, 1, 0), 200);
	ck_assert_uint_eq(got(w, WS_EARLY_SCAN, 2, 0), 100);
	ws_destroy(w);
}
END_TEST

/* A fence whose members' calls overlap: each waits for the last to come;
 * one whose calls do not (a member left before another came) is not
 * judged a wait, as Scalasca's heuristic has it. */
START_TEST(fence)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_WIN_FENCE, 0, 310, 0, 3, ES_NONE, 0),
		coll(1, ES_OP_MPI_WIN_FENCE, 300, 320, 0, 3, ES_NONE, 0),
		coll(2, ES_OP_MPI_WIN_FENCE, 100, 330, 0, 3, ES_NONE, 0),
		coll(0, ES_OP_MPI_WIN_FENCE, 1000, 1010, 1, 3, ES_NONE, 0),
		coll(1, ES_OP_MPI_WIN_FENCE, 1300, 1320, 1, 3, ES_NONE, 0),
		coll(2, ES_OP_MPI_WIN_FENCE, 1100, 1330, 1, 3, ES_NONE, 0),
	};
	feed(w, e, 6);
	ck_assert_uint_eq(got(w, WS_WAIT_FENCE, 0, 0), 300);
	ck_assert_uint_eq(got(w, WS_WAIT_FENCE, 2, 0), 200);
	ck_assert_uint_eq(got(w, WS_WAIT_FENCE, 1, 0), 0);
	ck_assert_uint_eq(total(w), 500);
	ws_destroy(w);
}
END_TEST

static struct es_event win(uint32_t loc, unsigned op, uint64_t start, uint64_t end, uint32_t site)
{
	struct es_event e = ev(loc, op, start, end);
	e.comm = 99, e.members = 2, e.me = loc, e.site = site;
	return e;
}

/* a group mark after a Win_post or Win_start (collectors.h) */
static struct es_event member(uint32_t loc, unsigned call, uint32_t who)
{
	struct es_event e = win(loc, ES_OP_MPI_CHANNEL | ES_OP_DONE, 0, 0, 0);
	e.peer = who, e.arg = call, e.size = 1;
	return e;
}

/* General active target synchronization, the origin's events fed first
 * and then the other way: a target that posts late keeps its origin in
 * MPI_Win_complete (Late Post); an origin that completes late keeps its
 * target in MPI_Win_wait (Early Wait). */
START_TEST(late_post_early_wait)
{
	struct es_event origin[] = {
		win(0, ES_OP_MPI_WIN_START, 100, 105, 20), member(0, ES_OP_MPI_WIN_START, 1),
		win(0, ES_OP_MPI_WIN_COMPLETE, 110, 520, 21),
		win(0, ES_OP_MPI_WIN_START, 1000, 1001, 20), member(0, ES_OP_MPI_WIN_START, 1),
		win(0, ES_OP_MPI_WIN_COMPLETE, 1400, 1450, 21),
	};
	struct es_event target[] = {
		win(1, ES_OP_MPI_WIN_POST, 500, 510, 11), member(1, ES_OP_MPI_WIN_POST, 0),
		win(1, ES_OP_MPI_WIN_WAIT, 515, 530, 12),
		win(1, ES_OP_MPI_WIN_POST, 1000, 1001, 11), member(1, ES_OP_MPI_WIN_POST, 0),
		win(1, ES_OP_MPI_WIN_WAIT, 1002, 1500, 12),
	};
	for (int order = 0; order < 2; order++) {
		ws *w;
		ck_assert_int_eq(ws_create(&w), 0);
		ws_keep(w);
		feed(w, order ? target : origin, 6);
		feed(w, order ? origin : target, 6);
		ck_assert_uint_eq(got(w, WS_LATE_POST, 0, 21), 390);
		ck_assert_uint_eq(got(w, WS_EARLY_WAIT, 1, 12), 398);
		ck_assert_uint_eq(total(w), 788);
		const struct ws_wait *k;
		ck_assert_uint_eq(ws_waits(w, &k), 2);
		ck_assert(k[0].delayer != k[0].waiter && k[1].delayer != k[1].waiter);
		ws_flush(w, UINT64_MAX);
		struct ws_stats st;
		ws_stats(w, &st);
		ck_assert_uint_eq(st.incomplete, 0);
		ws_destroy(w);
	}
}
END_TEST

/* An Ibcast whose root posts at 500: rank 1 posted at 10 and waits in
 * MPI_Wait from 100: 400 ns of Late Broadcast at the Wait; rank 2's
 * request completed by a test is not judged. */
START_TEST(nonblocking_collective_at_its_wait)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_IBCAST, 500, 505, 0, 3, 0, 8),
		coll(1, ES_OP_MPI_IBCAST, 10, 15, 0, 3, 0, 8),
		coll(2, ES_OP_MPI_IBCAST, 20, 25, 0, 3, 0, 8),
		coll(1, ES_OP_MPI_IBCAST | ES_OP_DONE, 10, 515, 0, 3, 0, 8),
		end_of(1, ES_OP_MPI_WAIT, 100, 520, ES_NONE, ES_EVENT_NO_MSG, 55),
		coll(2, ES_OP_MPI_IBCAST | ES_OP_DONE, 20, 600, 0, 3, 0, 8),
		end_of(2, ES_OP_MPI_TEST, 30, 610, ES_NONE, ES_EVENT_NO_MSG, 56),
		coll(0, ES_OP_MPI_IBCAST | ES_OP_DONE, 500, 700, 0, 3, 0, 8),
		end_of(0, ES_OP_MPI_WAIT, 506, 710, ES_NONE, ES_EVENT_NO_MSG, 57),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ck_assert_uint_eq(got(w, WS_LATE_BROADCAST, 1, 55), 400);
	ck_assert_uint_eq(total(w), 400);
	const struct ws_row *r;
	ck_assert_uint_eq(ws_rows(w, &r), 1);
	ck_assert(r[0].op == ES_OP_MPI_WAIT && r[0].of == ES_OP_MPI_IBCAST);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.by_test, 1);
	ck_assert_uint_eq(st.colls, 1);
	ws_destroy(w);
}
END_TEST

/* A receive whose send never comes holds its thread's later receives
 * back (Wrong Order needs them in order) until ws_flush gives up on it:
 * then it is said unpaired and the rest are judged. */
START_TEST(flush_gives_up)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		end_of(1, ES_OP_MPI_RECV, 100, 200, 0, 1, 4),
		end_of(1, ES_OP_MPI_RECV, 300, 500, 0, 2, 5),
		end_of(0, ES_OP_MPI_SEND, 400, 410, 1, 2, 3),
		coll(0, ES_OP_MPI_BARRIER, 0, 310, 0, 3, ES_NONE, 0),
	};
	feed(w, e, 4);
	ck_assert_uint_eq(total(w), 0);
	ws_flush(w, 150); /* nothing queued before 150 yet: the first receive was queued at 200 */
	ck_assert_uint_eq(total(w), 0);
	ws_flush(w, 250);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 5), 100);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.unpaired, 1);
	ck_assert_uint_eq(st.given_up, 1);
	ck_assert_uint_eq(st.incomplete, 0);
	ws_flush(w, UINT64_MAX);
	ws_stats(w, &st);
	ck_assert_uint_eq(st.incomplete, 1);
	ck_assert_uint_eq(st.unpaired, 1);
	ws_destroy(w);
}
END_TEST

/* A completion whose thread's next event is no wait or test (its wait was
 * not seen: a reader out of the thread's order, a lost tuple) is paired,
 * not judged, and said; its call waits for the other end from the
 * completion's end, not from the start of time, so a live reader's
 * horizon does not give it up at once.  An end with no key is said alone
 * when it names a peer; MPI_PROC_NULL's is no message. */
START_TEST(unseen_call_and_unkeyed_ends)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		ev(1, ES_OP_MPI_IRECV, 0, 5),
		end_of(1, ES_OP_MPI_IRECV | ES_OP_DONE, 0, 400, 0, 1, 5),
		end_of(1, ES_OP_MPI_SEND, 410, 420, 0, 2, 6), /* not the wait it came in */
		end_of(0, ES_OP_MPI_SEND, 10, 20, 1, ES_EVENT_NO_MSG, 3),
		end_of(0, ES_OP_MPI_SEND, 30, 40, ES_NONE, ES_EVENT_NO_MSG, 3),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.unseen_calls, 1);
	ck_assert_uint_eq(st.unpaired, 1); /* the send with a peer and no key */
	ws_flush(w, 300); /* before the completion's end: still waited for */
	ws_stats(w, &st);
	ck_assert_uint_eq(st.given_up, 0);
	ck_assert_uint_eq(st.receives, 0);
	struct es_event send = end_of(0, ES_OP_MPI_ISEND, 50, 55, 1, 1, 3);
	feed(w, &send, 1);
	ws_stats(w, &st);
	ck_assert_uint_eq(st.receives, 1); /* paired: counted */
	ck_assert_uint_eq(total(w), 0);    /* not judged: its call is not known */
	ws_flush(w, UINT64_MAX);
	ws_stats(w, &st);
	ck_assert_uint_eq(st.given_up, 0);
	ws_destroy(w);
}
END_TEST

/* A rank's time in MPI as a profile counts it: a poll's streak (its tuple
 * after the calls made while it polled) from the end of the call before
 * it; a call around others once; one inside another not again. */
START_TEST(mpi_time_outermost)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	struct es_event e[] = {
		ev(0, ES_OP_MPI_SEND, 10, 20),     /* 10 */
		ev(0, ES_OP_MPI_SEND, 30, 40),     /* 10 */
		ev(0, ES_OP_MPI_TESTANY, 5, 50),   /* a streak: from 40, 10 */
		ev(0, ES_OP_MPI_BARRIER, 60, 70),  /* 10 */
		ev(0, ES_OP_MPI_ALLREDUCE, 80, 85),
		ev(0, ES_OP_MPI_BCAST, 82, 84),    /* inside the allreduce (written after it): not again */
		ev(0, ES_OP_MPI_REDUCE, 90, 95),
		ev(0, ES_OP_MPI_ALLTOALL, 88, 100), /* around the reduce: 12 in place of its 5 */
		ev(1, ES_OP_MPI_BARRIER, 0, 1000),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ck_assert_uint_eq(ws_mpi_ns(w, 0), 10 + 10 + 10 + 10 + 5 + 12);
	ck_assert_uint_eq(ws_mpi_ns(w, 1), 1000);
	struct ws_stats st;
	ws_stats(w, &st);
	ck_assert_uint_eq(st.mpi_nested_lost, 0);
	/* a call around more calls than a thread remembers: said */
	for (uint64_t i = 0; i < TOPS_KEEP + 10; i++) {
		struct es_event c = ev(2, ES_OP_MPI_SEND, 2000 + 10 * i, 2005 + 10 * i);
		feed(w, &c, 1);
	}
	struct es_event around = ev(2, ES_OP_MPI_ALLTOALL, 1000, 2000 + 10 * (TOPS_KEEP + 10));
	feed(w, &around, 1);
	ws_stats(w, &st);
	ck_assert_uint_eq(st.mpi_nested_lost, 1);
	ws_destroy(w);
}
END_TEST

static const struct ws_cost *cost(const struct ws_analysis *a, int rank, uint32_t key, bool phase)
{
	for (size_t i = 0; i < a->ncosts; i++)
		if (a->costs[i].rank == rank && a->costs[i].key == key && a->costs[i].phase == phase)
			return &a->costs[i];
	return NULL;
}

static uint64_t on_path(const struct ws_analysis *a, int rank, uint32_t key, bool phase)
{
	for (size_t i = 0; i < a->npath; i++)
		if (a->path[i].rank == rank && a->path[i].key == key && a->path[i].phase == phase)
			return a->path[i].ns;
	return 0;
}

/* After a barrier, rank 1 computes 200 ns in phase 5 before it sends to
 * rank 0, which waits 195: the cost is rank 1's phase; the critical path
 * runs through rank 1's barrier and phase, then rank 0's receive. */
START_TEST(delay_and_path)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	ws_keep(w);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		coll(1, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		coll(2, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		end_of(1, ES_OP_MPI_PCONTROL, 10, 210, ES_NONE, ES_EVENT_NO_MSG, 5),
		end_of(1, ES_OP_MPI_SEND, 210, 215, 0, 1, 3),
		end_of(0, ES_OP_MPI_RECV, 15, 220, 1, 1, 4),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ws_flush(w, UINT64_MAX);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 0, 4), 195);
	struct ws_analysis a;
	ck_assert_int_eq(ws_analyse(w, &a), 0);
	const struct ws_cost *c = cost(&a, 1, 5, true);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->short_ns, 195);
	ck_assert_uint_eq(c->long_ns, 0);
	ck_assert_uint_eq(a.ncosts, 1);
	ck_assert_uint_eq(a.path_ns, 220);
	ck_assert_uint_eq(on_path(&a, 1, 5, true), 200);
	ck_assert_uint_eq(on_path(&a, 1, 100 + 1, false), 10); /* rank 1's barrier */
	ck_assert_uint_eq(on_path(&a, 0, 4, false), 10);       /* rank 0's receive after its wait */
	ck_assert_uint_eq(a.on_path_ns[0], 10);
	ck_assert_uint_eq(a.on_path_ns[1], 210);
	ck_assert_uint_eq(a.on_path_ns[2], 0);
	ck_assert_uint_eq(a.off_path_ns[0], 15); /* 5 ns before its receive, 10 in its barrier (site 100: the path went through site 101) */
	ws_analysis_free(&a);
	ws_destroy(w);
}
END_TEST

/* Rank 2 computes 100 ns in phase 7 before sending to rank 1, which then
 * sends to rank 0: rank 0's wait is mostly rank 1's own waiting
 * (indirect), and its long-term cost lands on rank 2's phase. */
START_TEST(delay_followed_back)
{
	ws *w;
	ck_assert_int_eq(ws_create(&w), 0);
	ws_keep(w);
	struct es_event e[] = {
		coll(0, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		coll(1, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		coll(2, ES_OP_MPI_BARRIER, 0, 10, 0, 3, ES_NONE, 0),
		end_of(2, ES_OP_MPI_PCONTROL, 10, 110, ES_NONE, ES_EVENT_NO_MSG, 7),
		end_of(2, ES_OP_MPI_SEND, 110, 112, 1, 1, 3),
		end_of(1, ES_OP_MPI_RECV, 12, 113, 2, 1, 4),
		end_of(1, ES_OP_MPI_SEND, 113, 115, 0, 2, 5),
		end_of(0, ES_OP_MPI_RECV, 20, 116, 1, 2, 6),
	};
	feed(w, e, sizeof(e) / sizeof(e[0]));
	ws_flush(w, UINT64_MAX);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 1, 4), 98);
	ck_assert_uint_eq(got(w, WS_LATE_SENDER, 0, 6), 93);
	struct ws_analysis a;
	ck_assert_int_eq(ws_analyse(w, &a), 0);
	const struct ws_cost *c = cost(&a, 2, 7, true);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->short_ns, 98);
	ck_assert_uint_ge(c->long_ns, 89); /* 93 / 101 of rank 1's 98 */
	ck_assert_uint_le(c->long_ns, 91);
	const struct ws_row *r;
	size_t n = ws_rows(w, &r);
	for (size_t i = 0; i < n; i++)
		if (r[i].rank == 0) {
			ck_assert_uint_ge(a.indirect_ns[i], 89);
			ck_assert_uint_le(a.indirect_ns[i], 91);
		} else {
			ck_assert_uint_eq(a.indirect_ns[i], 0);
		}
	ck_assert_uint_eq(a.path_ns, 116);
	ck_assert_uint_eq(on_path(&a, 2, 7, true), 100);
	ws_analysis_free(&a);
	ws_destroy(w);
	ck_assert_int_eq(ws_create(&w) == 0 && ws_analyse(w, &a) == -EINVAL, 1); /* nothing kept */
	ws_analysis_free(&a);
	ws_destroy(w);
}
END_TEST

START_TEST(pattern_names)
{
	ck_assert_int_eq(ws_pattern_of("late_sender"), WS_LATE_SENDER);
	ck_assert_int_eq(ws_pattern_of("late-broadcast"), WS_LATE_BROADCAST);
	ck_assert_int_eq(ws_pattern_of("late"), -1);
	ck_assert_int_eq(ws_pattern_of("late_sender_x"), -1);
	ck_assert_int_eq(ws_pattern_of(NULL), -1);
	ck_assert_int_eq(ws_pattern_parent(WS_LSWO_SAME), WS_LATE_SENDER_WO);
	ck_assert_int_eq(ws_pattern_parent(WS_LATE_SENDER_WO), WS_LATE_SENDER);
	ck_assert_int_eq(ws_pattern_parent(WS_WAIT_BARRIER), -1);
	for (int p = 0; p < WS_NPATTERNS; p++)
		ck_assert_int_eq(ws_pattern_of(ws_pattern_key(p)), p);
	ck_assert_str_eq(ws_pattern_name(WS_WAIT_NXN), "Wait at NxN");
}
END_TEST

Suite *waitstates_suite(void)
{
	Suite *s = suite_create("waitstates");
	TCase *tc = tcase_create("waitstates");
	tcase_add_test(tc, late_sender_either_order);
	tcase_add_test(tc, late_sender_at_the_wait);
	tcase_add_test(tc, tests_never_wait);
	tcase_add_test(tc, send_after_its_receive);
	tcase_add_test(tc, wrong_order);
	tcase_add_test(tc, late_receiver);
	tcase_add_test(tc, barrier);
	tcase_add_test(tc, rooted_and_scan);
	tcase_add_test(tc, fence);
	tcase_add_test(tc, late_post_early_wait);
	tcase_add_test(tc, nonblocking_collective_at_its_wait);
	tcase_add_test(tc, flush_gives_up);
	tcase_add_test(tc, unseen_call_and_unkeyed_ends);
	tcase_add_test(tc, mpi_time_outermost);
	tcase_add_test(tc, delay_and_path);
	tcase_add_test(tc, delay_followed_back);
	tcase_add_test(tc, pattern_names);
	suite_add_tcase(s, tc);
	return s;
}
