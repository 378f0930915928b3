/* test_waitfor.c - the wait-for graph: roots of stalls, cycles, mismatches, ended ranks, the AND-OR of collectives and any-source receives. */
#define _GNU_SOURCE
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "waitfor/waitfor.h"
#include "pastset/pastset.h"
#include "tests/unit/suites.h"

static wf_graph *g;

static void setup(void)
{
	ck_assert_int_eq(wf_create(&g), 0);
}

static void teardown(void)
{
	wf_destroy(g);
}

/* A rank with one thread: "rankN.thread0", labelled rankN; t says the rest. */
static int add_rank(int r, struct wf_thread t)
{
	char name[32], label[16];
	snprintf(name, sizeof(name), "rank%d.thread0", r);
	snprintf(label, sizeof(label), "rank%d", r);
	t.name = name;
	t.label = label;
	t.unit = r;
	int i = wf_add(g, &t);
	ck_assert_int_ge(i, 0);
	return i;
}

static int rank(int r, enum wf_state st, double secs, const char *what)
{
	return add_rank(r, (struct wf_thread){ .state = st, .secs = secs, .what = what, .coll = -1 });
}

/* rank r inside a receive from `from` */
static int recv_from(int r, int from, double secs, const char *what)
{
	int i = rank(r, WF_WAIT, secs, what);
	ck_assert_int_eq(wf_wait(g, i, from), 0);
	return i;
}

static int coll(int r, unsigned op, uint32_t num, const int *on, int non, const char *what)
{
	int i = add_rank(r, (struct wf_thread){ .state = WF_WAIT, .secs = 3, .what = what, .all = true,
						.coll = 5, .coll_op = op, .coll_num = num,
						.coll_name = "communicator 005 (ranks 0, 1)" });
	for (int k = 0; k < non; k++)
		ck_assert_int_eq(wf_wait(g, i, on[k]), 0);
	return i;
}

/* What wf_report says, for comparison (freed by the next call). */
static char *report(void)
{
	static char *text;
	size_t len;
	free(text);
	text = NULL;
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(wf_report(g, f, ""), 0);
	fclose(f);
	return text;
}

START_TEST(chain_to_a_computing_rank)
{
	rank(3, WF_COMPUTE, 2.0, "computes (not in MPI)");
	recv_from(2, 3, 1.9, "in MPI_Recv from 3 tag 0");
	recv_from(1, 2, 1.8, "in MPI_Recv from 2 tag 0");
	recv_from(0, 1, 1.7, "in MPI_Recv from 1 tag 0");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 1);
	ck_assert_str_eq(report(), "stall: rank3.thread0 computes (not in MPI) for 2.0 s; 3 threads wait "
				   "for it: rank2 directly, rank1 and rank0 through it\n"); /* nearest first */
}
END_TEST

START_TEST(cycle_of_three)
{
	recv_from(0, 1, 1.5, "in MPI_Recv from 1 tag 5");
	recv_from(1, 2, 1.2, "in MPI_Recv from 2 tag 6");
	recv_from(2, 0, 1.4, "in MPI_Recv from 0 tag 7");
	recv_from(3, 0, 1.0, "in MPI_Recv from 0 tag 8"); /* waits for the cycle, not in it */
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_int_eq(wf_stalls(g), 0);
	/* B after "A <-" waits for A; the first waits for the last; it lasts as long as its newest wait */
	ck_assert_str_eq(report(), "deadlock for 1.2 s: rank0 in MPI_Recv from 1 tag 5 <- rank2 in "
				   "MPI_Recv from 0 tag 7 <- rank1 in MPI_Recv from 2 tag 6; 1 more thread "
				   "waits for it: rank3\n");
}
END_TEST

/* The same cycle met in another order (a monitor meets the ranks' threads
 * in the order their segments came): named the same, from rank 0. */
START_TEST(cycle_named_from_rank_0)
{
	recv_from(2, 0, 1.4, "in MPI_Recv from 0 tag 7");
	recv_from(1, 2, 1.2, "in MPI_Recv from 2 tag 6");
	recv_from(0, 1, 1.5, "in MPI_Recv from 1 tag 5");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_str_eq(report(), "deadlock for 1.2 s: rank0 in MPI_Recv from 1 tag 5 <- rank2 in "
				   "MPI_Recv from 0 tag 7 <- rank1 in MPI_Recv from 2 tag 6\n");
}
END_TEST

START_TEST(waiting_for_oneself)
{
	recv_from(0, 0, 2, "in MPI_Recv from 0 tag 1");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: rank0 in MPI_Recv from 0 tag 1\n");
}
END_TEST

START_TEST(any_source_with_a_sender_left)
{
	/* rank0 receives from any; rank1 computes, so rank0 can still go on */
	int r0 = rank(0, WF_WAIT, 2, "in MPI_Recv from any source tag 3");
	ck_assert_int_eq(wf_wait(g, r0, 1), 0);
	ck_assert_int_eq(wf_wait(g, r0, 2), 0);
	rank(1, WF_COMPUTE, 2.5, "computes (not in MPI)");
	recv_from(2, 0, 2, "in MPI_Recv from 0 tag 3");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 1);
	ck_assert_str_eq(report(), "stall: rank1.thread0 computes (not in MPI) for 2.5 s; 2 threads wait "
				   "for it: rank0 directly, rank2 through it\n");
}
END_TEST

START_TEST(any_source_knot)
{
	int r0 = rank(0, WF_WAIT, 2, "in MPI_Recv from any source tag 3");
	ck_assert_int_eq(wf_wait(g, r0, 1), 0);
	ck_assert_int_eq(wf_wait(g, r0, 2), 0);
	ck_assert_int_eq(wf_wait(g, r0, 1), 0); /* twice counts once */
	recv_from(1, 0, 2, "in MPI_Recv from 0 tag 3");
	recv_from(2, 0, 2, "in MPI_Recv from 0 tag 4");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_ptr_nonnull(strstr(report(), "deadlock for 2.0 s: rank0 in MPI_Recv from any source tag 3 <- "));
	ck_assert_ptr_nonnull(strstr(report(), "1 more thread waits for it"));
}
END_TEST

START_TEST(collective_needs_every_member)
{
	/* 0 and 1 in the allreduce; 2 progresses elsewhere, 3 is inside it too */
	int two[] = { 2 };
	coll(0, ES_OP_MPI_ALLREDUCE, 4, two, 1, "in MPI_Allreduce #4 on MPI_COMM_WORLD");
	coll(1, ES_OP_MPI_ALLREDUCE, 4, two, 1, "in MPI_Allreduce #4 on MPI_COMM_WORLD");
	rank(2, WF_PROGRESS, 0, "progresses");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 1);
	ck_assert_str_eq(report(), "stall: rank2.thread0 progresses; 2 threads wait for it: rank0 and "
				   "rank1 directly\n");
}
END_TEST

START_TEST(collective_blocked_by_one_of_two)
{
	/* an all-wait on a member that computes and one that ended: cannot go on */
	int on[] = { 1, 2 };
	coll(0, ES_OP_MPI_BARRIER, 0, on, 2, "in MPI_Barrier #0 on MPI_COMM_WORLD");
	rank(1, WF_COMPUTE, 1, "computes (not in MPI)");
	rank(2, WF_ENDED, 4, "has ended (past MPI_Finalize)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_int_eq(wf_stalls(g), 0);
	ck_assert_str_eq(report(), "deadlock for 3.0 s: rank2 has ended (past MPI_Finalize); 1 thread "
				   "waits for it: rank0 in MPI_Barrier #0 on MPI_COMM_WORLD\n");
}
END_TEST

START_TEST(collective_mismatch)
{
	int one[] = { 1 }, zero[] = { 0 };
	coll(0, ES_OP_MPI_BARRIER, 3, one, 1, "in MPI_Barrier #3");
	coll(1, ES_OP_MPI_ALLREDUCE, 3, zero, 1, "in MPI_Allreduce #3");
	recv_from(2, 0, 1, "in MPI_Recv from 0 tag 0");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1); /* the mismatch, not also their cycle */
	ck_assert_str_eq(report(), "deadlock for 3.0 s: collective mismatch on communicator 005 (ranks "
				   "0, 1): rank0 in MPI_Barrier #3, rank1 in MPI_Allreduce #3; 1 more "
				   "thread waits for it: rank2\n");
}
END_TEST

/* The same mismatch, and waiters of a rank that ended, met in another
 * order (rank 1's segment first, under load): named the same, by rank. */
START_TEST(findings_named_by_rank_whatever_the_order_met)
{
	int one[] = { 1 }, zero[] = { 0 };
	recv_from(3, 0, 1, "in MPI_Recv from 0 tag 0");
	recv_from(2, 0, 1, "in MPI_Recv from 0 tag 0");
	coll(1, ES_OP_MPI_ALLREDUCE, 3, zero, 1, "in MPI_Allreduce #3");
	coll(0, ES_OP_MPI_BARRIER, 3, one, 1, "in MPI_Barrier #3");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_str_eq(report(), "deadlock for 3.0 s: collective mismatch on communicator 005 (ranks "
				   "0, 1): rank0 in MPI_Barrier #3, rank1 in MPI_Allreduce #3; 2 more "
				   "threads wait for it: rank2 and rank3\n");
	wf_clear(g);
	recv_from(1, 2, 3, "in MPI_Recv from 2 tag 1");
	recv_from(0, 2, 2, "in MPI_Recv from 2 tag 1");
	rank(2, WF_ENDED, 5, "has ended (inside MPI_Finalize)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: rank2 has ended (inside MPI_Finalize); 2 threads "
				   "wait for it: rank0 in MPI_Recv from 2 tag 1 and rank1 in MPI_Recv from 2 "
				   "tag 1\n");
}
END_TEST

/* Members at different numbers of one communicator: one has gone past the
 * other's collective (a rooted one lets the others run ahead), which is no
 * mismatch; only their waits can make a deadlock. */
START_TEST(different_call_numbers_are_no_mismatch)
{
	int one[] = { 1 }, zero[] = { 0 };
	coll(0, ES_OP_MPI_GATHERV, 1, one, 1, "in MPI_Gatherv #1");
	coll(1, ES_OP_MPI_BCAST, 2, zero, 1, "in MPI_Bcast #2");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_ptr_null(strstr(report(), "mismatch"));
	ck_assert_ptr_nonnull(strstr(report(), "deadlock for 3.0 s: rank0 in MPI_Gatherv #1 <- rank1 in MPI_Bcast #2"));
}
END_TEST

/* One call with two roots: a mismatch, named with the roots. */
START_TEST(roots_differ)
{
	struct wf_thread t = { .name = "rank0.thread0", .label = "rank0", .unit = 0, .state = WF_WAIT, .secs = 2,
			       .what = "in MPI_Reduce #0 root 0", .all = true, .coll = -1 };
	int a = wf_add(g, &t);
	t.name = "rank1.thread0", t.label = "rank1", t.unit = 1, t.what = "in MPI_Reduce #0 root 1";
	int b = wf_add(g, &t);
	ck_assert_int_eq(wf_wait(g, a, 1), 0);
	ck_assert_int_eq(wf_wait(g, b, 0), 0);
	ck_assert_int_eq(wf_coll(g, a, 7, ES_OP_MPI_REDUCE, 0, 0, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll(g, b, 7, ES_OP_MPI_REDUCE, 0, 1, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: collective mismatch on MPI_COMM_WORLD: rank0 in "
				   "MPI_Reduce #0 root 0, rank1 in MPI_Reduce #0 root 1\n");
}
END_TEST

/* Members of one MPI_Bcast that give different bytes are a mismatch;
 * where the bytes are not known, or may differ (MPI_Gatherv), none. */
START_TEST(bytes_differ_in_a_bcast)
{
	struct wf_thread t = { .name = "rank0.thread0", .label = "rank0", .unit = 0, .state = WF_WAIT, .secs = 2,
			       .what = "in MPI_Bcast #3 root 0", .all = true, .coll = -1 };
	int a = wf_add(g, &t);
	t.name = "rank1.thread0", t.label = "rank1", t.unit = 1;
	int b = wf_add(g, &t);
	ck_assert_int_eq(wf_wait(g, a, 1), 0);
	ck_assert_int_eq(wf_wait(g, b, 0), 0);
	ck_assert_int_eq(wf_coll_bytes(g, a, 7, ES_OP_MPI_BCAST, 3, 0, 40, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll_bytes(g, b, 7, ES_OP_MPI_BCAST, 3, 0, 80, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: collective mismatch on MPI_COMM_WORLD: rank0 in "
				   "MPI_Bcast #3 root 0 with 40 bytes, rank1 in MPI_Bcast #3 root 0 with 80 bytes\n");
	for (int k = 0; k < 2; k++) {
		wf_clear(g);
		t.name = "rank0.thread0", t.label = "rank0", t.unit = 0;
		a = wf_add(g, &t);
		t.name = "rank1.thread0", t.label = "rank1", t.unit = 1;
		b = wf_add(g, &t);
		unsigned op = k ? ES_OP_MPI_GATHERV : ES_OP_MPI_BCAST;
		ck_assert_int_eq(wf_coll_bytes(g, a, 7, op, 3, 0, k ? 40 : ES_NONE, "MPI_COMM_WORLD"), 0);
		ck_assert_int_eq(wf_coll_bytes(g, b, 7, op, 3, 0, 80, "MPI_COMM_WORLD"), 0);
		ck_assert_int_eq(wf_analyze(g), 0);
		ck_assert_ptr_null(strstr(report(), "mismatch"));
	}
}
END_TEST

/* A member that went past the number with another call, now waiting in
 * the next one, against a member still inside the first: a mismatch;
 * members gone past alone, with nobody inside, are none. */
START_TEST(gone_past_with_another_call)
{
	struct wf_thread t = { .name = "rank0.thread0", .label = "rank0", .unit = 0, .state = WF_WAIT, .secs = 2,
			       .what = "in MPI_Wait: MPI_Ialltoall #0", .all = true, .coll = -1 };
	int a = wf_add(g, &t);
	t.name = "rank1.thread0", t.label = "rank1", t.unit = 1, t.what = "in MPI_Wait: MPI_Ialltoall #1";
	int b = wf_add(g, &t);
	ck_assert_int_eq(wf_wait(g, a, 1), 0);
	ck_assert_int_eq(wf_wait(g, b, 0), 0);
	ck_assert_int_eq(wf_coll(g, a, 7, ES_OP_MPI_IALLTOALL, 0, ES_NONE, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll(g, b, 7, ES_OP_MPI_IALLTOALL, 1, ES_NONE, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll_past(g, b, 7, ES_OP_MPI_ISCAN, 0, ES_NONE, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll_past(g, b, 7, ES_OP_MPI_ISCAN, 0, ES_NONE, "MPI_COMM_WORLD"), 0); /* said twice */
	ck_assert_int_eq(wf_coll_past(g, 9, 7, ES_OP_MPI_ISCAN, 0, ES_NONE, "x"), PS_EINVAL);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: collective mismatch on MPI_COMM_WORLD: rank0 in "
				   "MPI_Ialltoall #0, rank1 went past MPI_Iscan #0\n");
	wf_clear(g);
	a = wf_add(g, &t);
	t.name = "rank0.thread0", t.label = "rank0", t.unit = 0;
	b = wf_add(g, &t);
	ck_assert_int_eq(wf_wait(g, a, 0), 0);
	ck_assert_int_eq(wf_wait(g, b, 1), 0);
	ck_assert_int_eq(wf_coll_past(g, a, 7, ES_OP_MPI_ISCAN, 0, ES_NONE, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_coll_past(g, b, 7, ES_OP_MPI_IALLTOALL, 0, ES_NONE, "MPI_COMM_WORLD"), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1); /* the cycle, not a mismatch */
	ck_assert_ptr_null(strstr(report(), "mismatch"));
}
END_TEST

/* A collective's late members behind one gate every member waits for:
 * all of them can go on once the one that computes comes. */
START_TEST(collective_gate)
{
	int gate = wf_gate(g, true, "MPI_Barrier #0: those not there yet");
	ck_assert_int_ge(gate, 0);
	ck_assert_int_eq(wf_gate_wait(g, gate, 3), 0);
	for (int r = 0; r < 3; r++) {
		int i = rank(r, WF_WAIT, 1, "in MPI_Barrier #0");
		ck_assert_int_eq(wf_wait_gate(g, i, gate), 0);
	}
	rank(3, WF_COMPUTE, 2, "computes (not in MPI)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_str_eq(report(), "stall: rank3.thread0 computes (not in MPI) for 2.0 s; 3 threads wait "
				   "for it: rank0, rank1 and rank2 directly\n");
	/* ... and when the late one waits for one of those inside: a deadlock */
	wf_clear(g);
	gate = wf_gate(g, true, "MPI_Barrier #0: those not there yet");
	wf_gate_wait(g, gate, 3);
	for (int r = 0; r < 3; r++)
		wf_wait_gate(g, rank(r, WF_WAIT, 1, "in MPI_Barrier #0"), gate);
	recv_from(3, 0, 1, "in MPI_Recv from 0 tag 1");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 1.0 s: rank0 in MPI_Barrier #0 <- rank3 in MPI_Recv from 0 "
				   "tag 1; 2 more threads wait for it: rank1 and rank2\n");
}
END_TEST

/* MPI_Waitall over an any-source receive and a send: all of [any of 1, 2]
 * and [3]; 2 computes, 3 is blocked on it: blocked. */
START_TEST(all_of_any)
{
	int t0 = add_rank(0, (struct wf_thread){ .state = WF_WAIT, .secs = 1, .what = "in MPI_Waitall",
						  .all = true, .coll = -1 });
	int any = wf_gate(g, false, "any of");
	wf_gate_wait(g, any, 1);
	wf_gate_wait(g, any, 2);
	ck_assert_int_eq(wf_wait_gate(g, t0, any), 0);
	ck_assert_int_eq(wf_wait(g, t0, 3), 0);
	rank(1, WF_ENDED, 1, "has ended (past MPI_Finalize)");
	rank(2, WF_COMPUTE, 1, "computes (not in MPI)");
	recv_from(3, 0, 1, "in MPI_Recv from 0 tag 2");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert(wf_blocked(g, t0));
	ck_assert_ptr_nonnull(strstr(report(), "rank0 in MPI_Waitall <- rank3 in MPI_Recv from 0 tag 2"));
	/* a thread that nothing holds up: ready, not waiting */
	wf_clear(g);
	add_rank(0, (struct wf_thread){ .state = WF_READY, .secs = 1, .what = "in MPI_Recv from 1 tag 0",
					.coll = -1 });
	recv_from(1, 0, 1, "in MPI_Recv from 0 tag 0");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 1);
}
END_TEST

START_TEST(waiting_for_an_ended_rank)
{
	rank(2, WF_ENDED, 5, "has ended (inside MPI_Finalize)");
	recv_from(0, 2, 2, "in MPI_Recv from 2 tag 1");
	recv_from(1, 2, 3, "in MPI_Recv from 2 tag 1");
	recv_from(3, 0, 1, "in MPI_Recv from 0 tag 9");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 2.0 s: rank2 has ended (inside MPI_Finalize); 2 threads "
				   "wait for it: rank0 in MPI_Recv from 2 tag 1 and rank1 in MPI_Recv from 2 "
				   "tag 1; 1 more thread waits for it: rank3\n");
}
END_TEST

START_TEST(element_nobody_writes)
{
	struct wf_thread t = { .name = "t2", .unit = 100, .state = WF_WAIT, .secs = 1.25,
			       .what = "in take on t2->never", .nobody = "never, which no thread writes",
			       .coll = -1 };
	ck_assert_int_ge(wf_add(g, &t), 0);
	struct wf_thread t0 = { .name = "t0", .unit = 101, .state = WF_PROGRESS, .what = "progresses",
				.coll = -1 };
	ck_assert_int_ge(wf_add(g, &t0), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
	ck_assert_str_eq(report(), "deadlock for 1.2 s: t2 in take on t2->never, never, which no thread "
				   "writes\n");
}
END_TEST

START_TEST(another_thread_of_the_rank_can_answer)
{
	/* rank1's thread0 waits for rank0, but its thread1 progresses: no deadlock */
	recv_from(0, 1, 2, "in MPI_Recv from 1 tag 0");
	struct wf_thread a = { .name = "rank1.thread0", .unit = 1, .state = WF_WAIT, .secs = 2,
			       .what = "in MPI_Recv from 0 tag 0", .coll = -1 };
	int i = wf_add(g, &a);
	ck_assert_int_eq(wf_wait(g, i, 0), 0);
	struct wf_thread b = { .name = "rank1.thread1", .unit = 1, .state = WF_PROGRESS,
			       .what = "progresses", .coll = -1 };
	ck_assert_int_ge(wf_add(g, &b), 0);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 1);
	ck_assert_ptr_nonnull(strstr(report(), "stall: rank1.thread1 progresses; 2 threads wait for it"));
}
END_TEST

START_TEST(progress_reports_nothing)
{
	for (int r = 0; r < 4; r++)
		rank(r, WF_PROGRESS, 0, "progresses");
	rank(4, WF_COMPUTE, 3, "computes (not in MPI)"); /* nobody waits for it: no root */
	rank(5, WF_BLIND, 3, "in MPI_Waitall (whom it waits for is not recorded)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 0);
	ck_assert_str_eq(report(), "");
}
END_TEST

START_TEST(blind_and_unknown_waits_are_no_deadlock)
{
	/* rank0 waits for a rank the graph does not hold; rank1 for rank2,
	 * inside a call whose peers are not recorded: neither is a deadlock */
	recv_from(0, 7, 2, "in MPI_Recv from 7 tag 0");
	recv_from(1, 2, 2, "in MPI_Recv from 2 tag 0");
	rank(2, WF_BLIND, 2, "in MPI_Waitall (whom it waits for is not recorded)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_state_of(g, 0), WF_BLIND);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_str_eq(report(), "stall: rank2.thread0 in MPI_Waitall (whom it waits for is not "
				   "recorded) for 2.0 s; 1 thread waits for it: rank1 directly\n");
}
END_TEST

START_TEST(unseen_threads_are_not_judged)
{
	recv_from(0, 1, 2, "in MPI_Recv from 1 tag 0");
	rank(1, WF_UNSEEN, 0, "(its tuple server did not answer)");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 0);
	ck_assert_int_eq(wf_stalls(g), 0);
}
END_TEST

START_TEST(many_waiters_are_counted_not_all_named)
{
	rank(0, WF_COMPUTE, 1, "computes (not in MPI)");
	for (int r = 1; r <= 12; r++)
		recv_from(r, 0, 1, "in MPI_Recv from 0 tag 0");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_ptr_nonnull(strstr(report(), "12 threads wait for it: rank1, rank2, rank3, rank4, "
					       "rank5, rank6, rank7 and 5 more directly"));
}
END_TEST

START_TEST(dot_marks_the_deadlock)
{
	recv_from(0, 1, 1, "in MPI_Recv from 1 tag \"5\"");
	recv_from(1, 0, 1, "in MPI_Recv from 0 tag 7");
	rank(2, WF_PROGRESS, 0, "progresses");
	ck_assert_int_eq(wf_analyze(g), 0);
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	ck_assert_int_eq(wf_dot(g, f, "job j"), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "digraph waitfor {"));
	ck_assert_ptr_nonnull(strstr(text, "n0 -> n1 [color=\"#cc0000\", penwidth=3]"));
	ck_assert_ptr_nonnull(strstr(text, "n1 -> n0 [color=\"#cc0000\", penwidth=3]"));
	ck_assert_ptr_nonnull(strstr(text, "tag \\\"5\\\"")); /* quotes escaped */
	ck_assert_ptr_nonnull(strstr(text, "n2 [label=\"rank2.thread0"));
	ck_assert_ptr_nonnull(strstr(text, "}\n"));
	free(text);
}
END_TEST

START_TEST(bad_calls)
{
	struct wf_thread t = { .name = NULL, .state = WF_WAIT, .coll = -1 };
	ck_assert_int_eq(wf_add(g, &t), PS_EINVAL);
	t.name = "x";
	t.state = 0;
	ck_assert_int_eq(wf_add(g, &t), PS_EINVAL);
	ck_assert_int_eq(wf_add(NULL, &t), PS_EINVAL);
	int p = rank(0, WF_PROGRESS, 0, "progresses");
	ck_assert_int_eq(wf_wait(g, p, 1), PS_EINVAL); /* only a waiting thread waits */
	ck_assert_int_eq(wf_wait(g, 5, 1), PS_EINVAL);
	ck_assert_int_eq(wf_report(g, stdout, ""), PS_EINVAL); /* not analyzed yet */
	ck_assert_int_eq(wf_dot(g, stdout, ""), PS_EINVAL);
	ck_assert_int_eq(wf_create(NULL), PS_EINVAL);
	ck_assert_int_eq(wf_analyze(NULL), PS_EINVAL);
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_add(g, &t), PS_EINVAL); /* cleared first */
	wf_clear(g);
	t.state = WF_COMPUTE;
	ck_assert_int_eq(wf_add(g, &t), 0); /* indices start again */
	ck_assert_int_eq(wf_state_of(g, 0), WF_COMPUTE);
	ck_assert_int_eq(wf_state_of(g, 1), 0);
	wf_destroy(NULL);
}
END_TEST

START_TEST(a_long_chain)
{
	/* deep enough that a recursive walk would notice */
	enum { N = 3000 };
	rank(0, WF_WAIT, 1, "in MPI_Recv from 2999 tag 0");
	ck_assert_int_eq(wf_wait(g, 0, N - 1), 0);
	for (int r = 1; r < N; r++)
		recv_from(r, r - 1, 1, "in MPI_Recv");
	ck_assert_int_eq(wf_analyze(g), 0);
	ck_assert_int_eq(wf_deadlocks(g), 1);
}
END_TEST

Suite *waitfor_suite(void)
{
	Suite *s = suite_create("waitfor");
	TCase *tc = tcase_create("graph");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, chain_to_a_computing_rank);
	tcase_add_test(tc, cycle_of_three);
	tcase_add_test(tc, cycle_named_from_rank_0);
	tcase_add_test(tc, waiting_for_oneself);
	tcase_add_test(tc, any_source_with_a_sender_left);
	tcase_add_test(tc, any_source_knot);
	tcase_add_test(tc, collective_needs_every_member);
	tcase_add_test(tc, collective_blocked_by_one_of_two);
	tcase_add_test(tc, collective_mismatch);
	tcase_add_test(tc, findings_named_by_rank_whatever_the_order_met);
	tcase_add_test(tc, different_call_numbers_are_no_mismatch);
	tcase_add_test(tc, roots_differ);
	tcase_add_test(tc, gone_past_with_another_call);
	tcase_add_test(tc, bytes_differ_in_a_bcast);
	tcase_add_test(tc, collective_gate);
	tcase_add_test(tc, all_of_any);
	tcase_add_test(tc, waiting_for_an_ended_rank);
	tcase_add_test(tc, element_nobody_writes);
	tcase_add_test(tc, another_thread_of_the_rank_can_answer);
	tcase_add_test(tc, progress_reports_nothing);
	tcase_add_test(tc, blind_and_unknown_waits_are_no_deadlock);
	tcase_add_test(tc, unseen_threads_are_not_judged);
	tcase_add_test(tc, many_waiters_are_counted_not_all_named);
	tcase_add_test(tc, dot_marks_the_deadlock);
	tcase_add_test(tc, bad_calls);
	tcase_add_test(tc, a_long_chain);
	suite_add_tcase(s, tc);
	return s;
}
