/* test_view.c - the live view's data: lanes folded by node and rank, calls binned at the detail asked, messages paired by number, the balance, and JSON that names cannot break. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "view/view.h"
#include "tests/unit/suites.h"

static const uint64_t ms = 1000000;

static char *ask(lv *v, uint64_t now, uint64_t shown, int bins, const char *open)
{
	struct lv_ask a = { .now_ns = now, .shown_ns = shown, .bins = bins, .open = open, .max_lanes = 256,
			    .max_msgs = 400 };
	char *j = NULL;
	size_t len;
	ck_assert_int_eq(lv_json(v, "job1", &a, ",\"x\":1", &j, &len), 0);
	ck_assert_uint_eq(len, strlen(j));
	return j;
}

static void add(lv *v, uint32_t thread, uint64_t start, uint64_t end, unsigned op, uint32_t peer, uint32_t bytes)
{
	struct lv_event e = { .start = start, .end = end, .thread = thread, .peer = peer, .bytes = bytes, .tag = 7,
			      .op = (uint16_t)op };
	lv_add(v, &e);
}

#define WORLD 0x51 /* a communicator's id, as every rank names it */

/* A message's end as the collector writes it: numbered n on its channel
 * (tag 7), whole below 2^15, else from the channel's mark (collectors.h) */
static void msg(lv *v, uint32_t thread, uint64_t start, uint64_t end, unsigned op, uint32_t peer, uint64_t n)
{
	struct lv_event e = { .start = start, .end = end, .thread = thread, .peer = peer, .bytes = 8, .tag = 7,
			      .op = (uint16_t)(op | ES_OP_NUMBERED), .comm_id = WORLD,
			      .seq = n < ES_NUM_WHOLE ? ES_NUM_WHOLE | (uint32_t)n : (uint32_t)(n & (ES_NUM_WHOLE - 1)) };
	lv_add(v, &e);
}

/* A channel's mark: its count in full (collectors.h) */
static void mark(lv *v, uint32_t thread, uint32_t peer, bool recv, uint64_t count)
{
	struct lv_event e = { .thread = thread, .peer = peer, .bytes = (uint32_t)count, .tag = 7, .comm_id = WORLD,
			      .op = (uint16_t)(ES_OP_MPI_CHANNEL | (recv ? ES_OP_RECV : 0)), .seq = (uint32_t)(count >> 32) };
	lv_add(v, &e);
}

/* Calls binned: each bin the class that took most of it and the share of
 * the lane's time; only what lies within the time shown; the oldest
 * dropped when the ring is full. */
START_TEST(bins_and_ring)
{
	lv *v;
	ck_assert_int_eq(lv_create(4, &v), 0);
	const struct lv_thread th[2] = { { "rank0.thread0", 0, "" }, { "rank1.thread0", 1, "" } };
	ck_assert_int_eq(lv_set_threads(v, th, 2), 0);
	/* rank 0: an allreduce over 0-4 ms (dropped: the ring keeps four) */
	add(v, 0, 0, 4 * ms, ES_OP_MPI_ALLREDUCE, ES_NONE, 0);
	/* rank 0: a barrier 5-7 ms; rank 1: a send 5-6 ms, a recv 8-10 ms */
	add(v, 0, 5 * ms, 7 * ms, ES_OP_MPI_BARRIER, ES_NONE, 0);
	add(v, 1, 5 * ms, 6 * ms, ES_OP_MPI_SEND, 0, 100);
	add(v, 1, 8 * ms, 10 * ms, ES_OP_MPI_RECV, 0, 100);
	add(v, 0, 9 * ms, 10 * ms, ES_OP_MPI_BARRIER, ES_NONE, 0);
	ck_assert_uint_eq(lv_added(v), 5);
	/* shown: 4 to 10 ms, in three bins of 2 ms */
	char *j = ask(v, 10 * ms, 6 * ms, 3, "");
	ck_assert_msg(strstr(j, "{\"job\":\"job1\",\"shown_ms\":6.000,"), "%s", j);
	ck_assert_msg(strstr(j, "\"lanes\":[{\"id\":\"r:0\",\"label\":\"rank 0\",\"threads\":1,\"depth\":0,\"parent\":\"\"},"
				"{\"id\":\"r:1\",\"label\":\"rank 1\",\"threads\":1,\"depth\":0,\"parent\":\"\"}]"), "%s", j);
	/* (classes: es_class, point-to-point 0, collectives 2)
	 * lane 0: bin 0 (4-6 ms) 1 ms of barrier = 500 permille, bin 1 1 ms, bin 2 1 ms;
	 * lane 1: bin 0 the send, 1 ms; bin 2 the recv, 2 ms; a call that ends
	 * where a bin begins is not in it */
	ck_assert_msg(strstr(j, "\"bins\":[[0,0,2,500],[0,1,2,500],[0,2,2,500],[1,0,0,500],[1,2,0,1000]]"), "%s", j);
	ck_assert_msg(strstr(j, ",\"x\":1}"), "extra members, last: %s", j);
	/* over the calls held (the last second's): each rank inside MPI 3 of
	 * the 5 ms since the oldest began; 100 bytes 1 -> 0 */
	ck_assert_msg(strstr(j, "\"mpi\":[[0,60.0],[1,60.0]]"), "%s", j);
	ck_assert_msg(strstr(j, "\"traffic\":{\"ranks\":2,\"bytes\":[[1,0,100]]}"), "%s", j);
	free(j);
	/* at 9.5 ms, when only the first three had been added (upto): the
	 * recv not shown; a call threads are said to be inside, up to now */
	struct lv_event in = { .start = 8 * ms, .end = 9500 * 1000, .thread = 1, .peer = 0, .op = ES_OP_MPI_RECV };
	struct lv_ask a = { .now_ns = 9500 * 1000, .shown_ns = 6 * ms, .bins = 3, .open = "", .max_lanes = 256,
			    .max_msgs = 10, .upto = 3 };
	size_t len;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "\"bin0_ms\":-1.500000,\"bins\":[[0,1,2,500],[0,2,2,500],[1,1,0,500]]"), "%s", j);
	free(j);
	a.inside = &in, a.ninside = 1;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "[1,3,0,750]") && strstr(j, "\"inside\":[[1,4.500,\"MPI_Recv\"]]"), "%s", j);
	/* and in the balance: rank 1's 1.5 ms inside it count (capped at the span) */
	ck_assert_msg(strstr(j, "\"mpi\":[[0,66.7],[1,100.0]]"), "%s", j);
	free(j);
	/* what is held is said within the window, though more is kept (a quiet job) */
	a.inside = NULL, a.ninside = 0;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "\"held_ms\":4.500"), "%s", j); /* the oldest held began at 5 ms */
	free(j);
	a.window_ns = 2 * ms;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "\"held_ms\":2.000"), "%s", j);
	free(j);
	lv_destroy(v);
	ck_assert_int_eq(lv_create(0, &v), -ENOMEM);
}
END_TEST

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* 2,000 threads: 200 ranks of 10 threads on two nodes fold into a lane
 * per node; an open node shows its ranks, an open rank its threads, and
 * each unfolded lane names where it folds back into; threads without
 * ranks fold by name. */
START_TEST(folding)
{
	lv *v;
	ck_assert_int_eq(lv_create(16, &v), 0);
	enum { N = 2000 };
	struct lv_thread *th = calloc(N, sizeof(*th));
	char (*names)[32] = calloc(N, sizeof(*names));
	for (int t = 0; t < N; t++) {
		int rank = t / 10;
		snprintf(names[t], sizeof(names[t]), "rank%d.thread%d", rank, t % 10);
		th[t] = (struct lv_thread){ names[t], rank, rank < 100 ? "hostA:7000" : "hostB:7000" };
	}
	ck_assert_int_eq(lv_set_threads(v, th, N), 0);
	add(v, 1234, 1 * ms, 2 * ms, ES_OP_MPI_BARRIER, ES_NONE, 0); /* rank 123, on hostB */
	char *j = ask(v, 10 * ms, 10 * ms, 10, "");
	ck_assert_int_eq(count(j, "\"id\":"), 2);
	ck_assert_msg(strstr(j, "{\"id\":\"n:0\",\"label\":\"hostA:7000\",\"threads\":1000,\"depth\":0,\"parent\":\"\"}"), "%s", j);
	ck_assert_msg(strstr(j, "\"bins\":[[1,1,2,1]]"), "a thousandth of node B's time: %.300s", strstr(j, "\"bins\""));
	ck_assert_msg(strstr(j, "\"mpi\":[[123,11.1]]"), "1 of 9 ms: %.300s", strstr(j, "\"mpi\""));
	free(j);
	/* a question is the whole of it: two lists alike in their first 300
	 * characters are two questions (the binner kept 150 of them) */
	char open[700];
	int k = 0;
	for (int r = 0; r < 60; r++)
		k += snprintf(open + k, sizeof(open) - (size_t)k, "%sr:%d", r ? "," : "", 1000 + r);
	j = ask(v, 10 * ms, 10 * ms, 10, open);
	ck_assert_int_eq(count(j, "\"id\":"), 2);
	free(j);
	snprintf(open + k, sizeof(open) - (size_t)k, ",n:1");
	j = ask(v, 10 * ms, 10 * ms, 10, open);
	ck_assert_int_eq(count(j, "\"id\":"), 1 + 100);
	free(j);
	j = ask(v, 10 * ms, 10 * ms, 10, "n:1,r:123");
	/* node A folded; node B: 99 rank lanes and rank 123's ten threads */
	ck_assert_int_eq(count(j, "\"id\":"), 1 + 99 + 10);
	ck_assert_msg(strstr(j, "{\"id\":\"r:101\",\"label\":\"rank 101\",\"threads\":10,\"depth\":1,\"parent\":\"n:1\"}"),
		      "%.400s", strstr(j, "\"lanes\""));
	ck_assert_msg(strstr(j, "{\"id\":\"t:1234\",\"label\":\"rank123.thread4\",\"threads\":1,\"depth\":2,\"parent\":\"r:123\"}"),
		      "%.400s", strstr(j, "\"lanes\""));
	free(j);
	/* more lanes than asked for: the rest said hidden, not drawn */
	struct lv_ask a = { .now_ns = 10 * ms, .shown_ns = 10 * ms, .bins = 10, .open = "n:0,n:1", .max_lanes = 50,
			    .max_msgs = 10 };
	size_t len;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_int_eq(count(j, "\"id\":"), 50);
	ck_assert_msg(strstr(j, "\"hidden\":1500"), "%s", strstr(j, "\"hidden\""));
	free(j);
	/* threads without ranks (a PATHS job's "m12.s3"): grouped by the name
	 * before the last dot, 250 groups of 8 on one node */
	for (int t = 0; t < N; t++) {
		snprintf(names[t], sizeof(names[t]), "m%d.s%d", t / 8, t % 8);
		th[t] = (struct lv_thread){ names[t], -1, "" };
	}
	ck_assert_int_eq(lv_set_threads(v, th, N), 0);
	j = ask(v, 10 * ms, 10 * ms, 10, "");
	ck_assert_msg(strstr(j, "\"lanes\":[{\"id\":\"n:0\",\"label\":\"this host\",\"threads\":2000,"), "%.300s",
		      strstr(j, "\"lanes\""));
	free(j);
	j = ask(v, 10 * ms, 10 * ms, 10, "n:0,g:16");
	ck_assert_int_eq(count(j, "\"id\":"), 256); /* 249 groups, 8 threads: the last group beyond the cap */
	ck_assert_msg(strstr(j, "\"hidden\":8,"), "%.100s", strstr(j, "\"hidden\""));
	ck_assert_msg(strstr(j, "{\"id\":\"g:8\",\"label\":\"m1.*\",\"threads\":8,\"depth\":1,\"parent\":\"n:0\"}"), "%.300s",
		      strstr(j, "\"lanes\""));
	ck_assert_msg(strstr(j, "{\"id\":\"t:17\",\"label\":\"m2.s1\",\"threads\":1,\"depth\":2,\"parent\":\"g:16\"}"),
		      "%.300s", strstr(j, "\"lanes\""));
	free(j);
	free(th);
	free(names);
	lv_destroy(v);
}
END_TEST

/* The message numbered n sent from one rank to another with a tag is
 * the one numbered n received there: a line from the send's start to the
 * receive's end; an end without a number, or whose channel the view met
 * after it lost calls and before its mark, pairs with nothing. */
START_TEST(messages)
{
	lv *v;
	ck_assert_int_eq(lv_create(64, &v), 0);
	const struct lv_thread th[3] = { { "rank0.thread0", 0, "" }, { "rank1.thread0", 1, "" }, { "t2", -1, "" } };
	ck_assert_int_eq(lv_set_threads(v, th, 3), 0);
	/* two sends 0 -> 1, the first received in ms 3-4, the second in 5-6;
	 * a receive on 1 from 0 with another tag pairs with nothing */
	msg(v, 0, 1 * ms, 2 * ms, ES_OP_MPI_SEND, 1, 0);
	msg(v, 0, 2 * ms, 3 * ms, ES_OP_MPI_SEND, 1, 1);
	msg(v, 1, 3 * ms, 4 * ms, ES_OP_MPI_RECV, 0, 0);
	struct lv_event other = { .start = 4 * ms, .end = 5 * ms, .thread = 1, .peer = 0, .tag = 9,
				  .op = ES_OP_MPI_RECV | ES_OP_NUMBERED, .comm_id = WORLD };
	lv_add(v, &other);
	msg(v, 1, 5 * ms, 6 * ms, ES_OP_MPI_RECV, 0, 1);
	add(v, 1, 6 * ms, 7 * ms, ES_OP_MPI_RECV, 0, 8); /* no number: no line */
	char *j = ask(v, 10 * ms, 10 * ms, 10, "");
	ck_assert_msg(strstr(j, "\"msgs\":[[0,1.000,1,4.000],[0,2.000,1,6.000]]"), "%s", j);
	free(j);
	/* only the newest asked for */
	struct lv_ask a = { .now_ns = 10 * ms, .shown_ns = 10 * ms, .bins = 10, .open = "", .max_lanes = 256,
			    .max_msgs = 1 };
	size_t len;
	ck_assert_int_eq(lv_json(v, "j", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "\"msgs\":[[0,2.000,1,6.000]],\"msgs_older\":1"), "%s", j); /* and the cap said */
	free(j);
	/* calls lost: the channels known go on, and the page says so */
	lv_unpaired(v, "esview came late");
	j = ask(v, 10 * ms, 10 * ms, 10, "");
	ck_assert_msg(strstr(j, "\"msgs\":[[0,1.000,1,4.000],[0,2.000,1,6.000]],\"msgs_note\":\"esview came late\""),
		      "%s", j);
	free(j);
	/* read while frozen: numbered, not kept */
	uint64_t added = lv_added(v);
	struct lv_event e = { .start = 7 * ms, .end = 8 * ms, .thread = 0, .peer = 1, .tag = 7,
			      .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .seq = ES_NUM_WHOLE | 2, .comm_id = WORLD };
	lv_count(v, &e);
	ck_assert_uint_ne(e.key, 0);
	ck_assert_int_eq(e.dir, 1);
	ck_assert_uint_eq(lv_added(v), added);
	lv_destroy(v);
}
END_TEST

/* Pairs survive what was not recorded: sends 1 to 3 paused, receives
 * all there; numbers past 2^15 through a mark; after calls were lost, a
 * busy channel's numbers wait for its next mark. */
START_TEST(messages_numbered)
{
	lv *v;
	ck_assert_int_eq(lv_create(64, &v), 0);
	const struct lv_thread th[2] = { { "rank0.thread0", 0, "" }, { "rank1.thread0", 1, "" } };
	ck_assert_int_eq(lv_set_threads(v, th, 2), 0);
	msg(v, 0, 1 * ms, 2 * ms, ES_OP_MPI_SEND, 1, 0);
	for (uint64_t n = 0; n < 5; n++)
		msg(v, 1, (3 + n) * ms, (3 + n) * ms + ms / 2, ES_OP_MPI_RECV, 0, n);
	msg(v, 0, 8 * ms, 9 * ms, ES_OP_MPI_SEND, 1, 4);
	msg(v, 1, 10 * ms, 11 * ms, ES_OP_MPI_RECV, 0, 5); /* its send was not recorded */
	char *j = ask(v, 20 * ms, 20 * ms, 10, "");
	/* receive 0 from send 0; receive 4 (7.5 ms) before send 4 (8 ms): never
	 * a line back in time, and said; receives 1 to 3 and 5 without their
	 * sends, said */
	ck_assert_msg(strstr(j, "\"msgs\":[[0,1.000,1,3.500]],\"msgs_alone\":4,\"msgs_backwards\":1"), "%s", j);
	free(j);
	/* 70,000 messages on: the marks give the counts, the tuples the low bits */
	mark(v, 0, 1, false, 70000);
	mark(v, 1, 0, true, 70000);
	msg(v, 0, 12 * ms, 13 * ms, ES_OP_MPI_SEND, 1, 70001);
	msg(v, 1, 14 * ms, 15 * ms, ES_OP_MPI_RECV, 0, 70001);
	j = ask(v, 20 * ms, 20 * ms, 10, "");
	ck_assert_msg(strstr(j, "[0,12.000,1,15.000]]"), "%s", j);
	free(j);
	lv_destroy(v);
	/* after a loss a busy channel is not numbered until its next mark */
	ck_assert_int_eq(lv_create(64, &v), 0);
	ck_assert_int_eq(lv_set_threads(v, th, 2), 0);
	lv_unpaired(v, "lost");
	msg(v, 0, 1 * ms, 2 * ms, ES_OP_MPI_SEND, 1, 40009);
	msg(v, 1, 3 * ms, 4 * ms, ES_OP_MPI_RECV, 0, 40009);
	mark(v, 0, 1, false, 40010);
	mark(v, 1, 0, true, 40010);
	msg(v, 0, 5 * ms, 6 * ms, ES_OP_MPI_SEND, 1, 40010);
	msg(v, 1, 7 * ms, 8 * ms, ES_OP_MPI_RECV, 0, 40010);
	j = ask(v, 20 * ms, 20 * ms, 10, "");
	ck_assert_msg(strstr(j, "\"msgs\":[[0,5.000,1,8.000]],\"msgs_note\":\"lost\""), "%s", j);
	ck_assert_msg(strstr(j, "\"added\":4,"), "marks are no calls: %.60s", j);
	free(j);
	lv_destroy(v);
	/* a communicator each rank names by a serial of its own is one
	 * communicator: its messages are joined by its id, never its serials */
	ck_assert_int_eq(lv_create(64, &v), 0);
	ck_assert_int_eq(lv_set_threads(v, th, 2), 0);
	struct lv_event s0 = { .start = 1 * ms, .end = 2 * ms, .thread = 0, .peer = 1, .tag = 7, .comm = 3,
			       .comm_id = 0x77, .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .seq = ES_NUM_WHOLE | 1 };
	struct lv_event r1 = { .start = 3 * ms, .end = 4 * ms, .thread = 1, .peer = 0, .tag = 7, .comm = 5,
			       .comm_id = 0x77, .op = ES_OP_MPI_RECV | ES_OP_NUMBERED, .seq = ES_NUM_WHOLE | 1 };
	struct lv_event w1 = r1; /* another communicator the receiver names by the sender's serial */
	w1.comm = 3, w1.comm_id = 0x78, w1.start = 5 * ms, w1.end = 6 * ms;
	lv_add(v, &s0), lv_add(v, &r1), lv_add(v, &w1);
	j = ask(v, 20 * ms, 20 * ms, 10, "");
	ck_assert_msg(strstr(j, "\"msgs\":[[0,1.000,1,4.000]],\"msgs_alone\":1"), "%s", j);
	free(j);
	lv_destroy(v);
}
END_TEST

/* The call under the pointer: the shortest holding the time, else the
 * nearest within the tolerance, with its peer, tag, bytes and named site;
 * a call in progress; nothing on an empty stretch or another lane. */
START_TEST(call_under_pointer)
{
	lv *v;
	ck_assert_int_eq(lv_create(64, &v), 0);
	const struct lv_thread th[2] = { { "rank0.thread0", 0, "" }, { "rank1.thread0", 1, "" } };
	ck_assert_int_eq(lv_set_threads(v, th, 2), 0);
	struct lv_event s = { .start = 2 * ms, .end = 5 * ms, .thread = 0, .peer = 1, .bytes = 800, .tag = 7,
			      .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .seq = 3u << 16 | ES_NUM_WHOLE };
	lv_add(v, &s);
	add(v, 1, 1 * ms, 9 * ms, ES_OP_MPI_BARRIER, ES_NONE, 0);
	ck_assert_int_eq(lv_set_site(v, 0, 3, "halo (halo.c:42)"), 0);
	ck_assert(lv_site_named(v, 0, 3));
	ck_assert(!lv_site_named(v, 1, 3));
	struct lv_event in = { .start = 12 * ms, .end = 20 * ms, .thread = 1, .peer = 0, .op = ES_OP_MPI_RECV };
	struct lv_ask a = { .now_ns = 20 * ms, .shown_ns = 20 * ms, .bins = 10, .open = "", .max_lanes = 256,
			    .inside = &in, .ninside = 1 };
	char *j;
	size_t len;
	ck_assert_int_eq(lv_call_json(v, &a, 0, 3 * ms, ms / 10, &j, &len), 0);
	ck_assert_str_eq(j, "{\"call\":{\"name\":\"MPI_Send\",\"thread\":\"rank0.thread0\",\"start_ms\":2.000000,"
			    "\"dur_ms\":3.000000,\"to\":1,\"tag\":7,\"bytes\":800,\"comm\":0,\"site\":\"halo (halo.c:42)\","
			    "\"in_progress\":false}}");
	free(j);
	/* just past its end, within the tolerance: the same; further, nothing */
	ck_assert_int_eq(lv_call_json(v, &a, 0, 5 * ms + ms / 20, ms / 10, &j, &len), 0);
	ck_assert_msg(strstr(j, "\"name\":\"MPI_Send\""), "%s", j);
	free(j);
	ck_assert_int_eq(lv_call_json(v, &a, 0, 7 * ms, ms / 10, &j, &len), 0);
	ck_assert_str_eq(j, "{\"call\":null}");
	free(j);
	/* rank 1's lane: the barrier, then the receive it is inside now */
	ck_assert_int_eq(lv_call_json(v, &a, 1, 3 * ms, ms / 10, &j, &len), 0);
	ck_assert_msg(strstr(j, "\"name\":\"MPI_Barrier\"") && !strstr(j, "\"site\""), "%s", j);
	free(j);
	ck_assert_int_eq(lv_call_json(v, &a, 1, 15 * ms, ms / 10, &j, &len), 0);
	ck_assert_msg(strstr(j, "\"name\":\"MPI_Recv\"") && strstr(j, "\"from\":0") && strstr(j, "\"in_progress\":true") &&
		      !strstr(j, "\"bytes\""), "%s", j);
	free(j);
	ck_assert_int_eq(lv_call_json(v, &a, 5, 3 * ms, ms / 10, &j, &len), 0); /* no such lane */
	ck_assert_str_eq(j, "{\"call\":null}");
	free(j);
	lv_destroy(v);
}
END_TEST

/* Names with quotes, backslashes and control characters cannot break the JSON. */
START_TEST(escaping)
{
	lv *v;
	ck_assert_int_eq(lv_create(4, &v), 0);
	const struct lv_thread odd[1] = { { "a\"b\\c\n", -1, "h\"" } };
	ck_assert_int_eq(lv_set_threads(v, odd, 1), 0);
	struct lv_ask a = { .now_ns = 10 * ms, .shown_ns = 10 * ms, .bins = 10, .open = "", .max_lanes = 256,
			    .max_msgs = 10 };
	char *j;
	size_t len;
	ck_assert_int_eq(lv_json(v, "j\"x", &a, "", &j, &len), 0);
	ck_assert_msg(strstr(j, "\"job\":\"j\\\"x\"") && strstr(j, "\"name\":\"a\\\"b\\\\c\\u000a\""), "%s", j);
	ck_assert_msg(strstr(j, "\"label\":\"a\\\"b\\\\c\\u000a\""), "%s", j);
	free(j);
	lv_destroy(v);
}
END_TEST

/* Marks after each pull let an answer skip the pulls that ended before
 * the time shown, and never an event that lies in it. */
START_TEST(marks)
{
	lv *v;
	ck_assert_int_eq(lv_create(64, &v), 0);
	const struct lv_thread th[1] = { { "rank0.thread0", 0, "" } };
	ck_assert_int_eq(lv_set_threads(v, th, 1), 0);
	for (int pull = 1; pull <= 10; pull++) { /* a pull every 10 ms: a call of 1 ms before each */
		add(v, 0, (uint64_t)(pull * 10 - 2) * ms, (uint64_t)(pull * 10 - 1) * ms, ES_OP_MPI_BARRIER, ES_NONE, 0);
		lv_mark(v, (uint64_t)pull * 10 * ms);
	}
	/* a long call that began before the time shown and was read after it began */
	add(v, 0, 75 * ms, 101 * ms, ES_OP_MPI_RECV, 0, 0);
	lv_mark(v, 102 * ms);
	/* shown: 85 to 105 ms in 20 bins of 1 ms: the calls at 88, 98, and 85-101 */
	char *j = ask(v, 105 * ms, 20 * ms, 20, "");
	ck_assert_msg(strstr(j, "\"bins\":[[0,0,0,1000],"), "%s", j);
	ck_assert_msg(strstr(j, "[0,3,0,1000]") && strstr(j, "[0,15,0,1000]") && !strstr(j, "[0,16,"), "%s", j);
	ck_assert_msg(strstr(j, "\"mpi\":[[0,37.1]]"), "36 of the 97 ms since the oldest began: %s", j);
	free(j);
	lv_destroy(v);
}
END_TEST

/* The bins kept from one question to the same one again, as events come:
 * the same answer as bins made at once from all of them; the last
 * second's balance counts out what ended before it. */
START_TEST(incremental)
{
	lv *a, *b;
	ck_assert_int_eq(lv_create(1000, &a), 0);
	ck_assert_int_eq(lv_create(1000, &b), 0);
	const struct lv_thread th[2] = { { "rank0.thread0", 0, "" }, { "rank1.thread0", 1, "" } };
	ck_assert_int_eq(lv_set_threads(a, th, 2), 0);
	ck_assert_int_eq(lv_set_threads(b, th, 2), 0);
	char *ja = NULL, *jb;
	for (int pull = 1; pull <= 30; pull++) { /* every 100 ms, calls of 0.7 ms each 10 ms, messages 0 -> 1 */
		for (int k = 0; k < 10; k++) {
			uint64_t t = (uint64_t)(pull - 1) * 100 * ms + (uint64_t)k * 10 * ms;
			uint64_t n = (uint64_t)(pull - 1) * 10 + (uint64_t)k;
			msg(a, 0, t, t + 700 * 1000, ES_OP_MPI_SEND, 1, n);
			msg(a, 1, t + 300 * 1000, t + 1500 * 1000, ES_OP_MPI_RECV, 0, n);
			msg(b, 0, t, t + 700 * 1000, ES_OP_MPI_SEND, 1, n);
			msg(b, 1, t + 300 * 1000, t + 1500 * 1000, ES_OP_MPI_RECV, 0, n);
		}
		lv_mark(a, (uint64_t)pull * 100 * ms);
		lv_mark(b, (uint64_t)pull * 100 * ms);
		free(ja);
		ja = ask(a, (uint64_t)pull * 100 * ms, 1000 * ms, 250, ""); /* the same question each pull */
	}
	jb = ask(b, 3000 * ms, 1000 * ms, 250, "");
	ck_assert_str_eq(ja, jb);
	/* 100 sends of 8 bytes ended in the last second; 7% of it inside MPI on rank 0, 12% on 1 */
	ck_assert_msg(strstr(ja, "\"mpi\":[[0,7.0],[1,12.0]],\"traffic\":{\"ranks\":2,\"bytes\":[[0,1,800]]}"), "%s",
		      strstr(ja, "\"mpi\""));
	ck_assert_msg(strstr(ja, "\"msgs\":[[0,"), "lines from the sends: %.200s", strstr(ja, "\"msgs\""));
	free(ja);
	free(jb);
	lv_destroy(a);
	lv_destroy(b);
}
END_TEST

Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, bins_and_ring);
	tcase_add_test(tc, folding);
	tcase_add_test(tc, messages);
	tcase_add_test(tc, messages_numbered);
	tcase_add_test(tc, call_under_pointer);
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, marks);
	tcase_add_test(tc, incremental);
	suite_add_tcase(s, tc);
	return s;
}
