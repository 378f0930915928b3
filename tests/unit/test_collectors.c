/* test_collectors.c - the trace tuple, the clock, trace spaces and the collector wrapper. */
#define _GNU_SOURCE
#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "pathmaps/pathmaps.h"
#include "tests/unit/suites.h"

START_TEST(tuple_layout)
{
	ck_assert_uint_eq(sizeof(struct es_trace), 36);
	ck_assert_uint_eq(offsetof(struct es_trace, start), 0);
	ck_assert_uint_eq(offsetof(struct es_trace, end), 8);
	ck_assert_uint_eq(offsetof(struct es_trace, seq), 16);
	ck_assert_uint_eq(offsetof(struct es_trace, op), 20);
	ck_assert_uint_eq(offsetof(struct es_trace, collector), 22);
	ck_assert_uint_eq(offsetof(struct es_trace, element), 24);
	ck_assert_uint_eq(offsetof(struct es_trace, size), 28);
	ck_assert_uint_eq(offsetof(struct es_trace, arg), 32);
	ck_assert_str_eq(es_op_name(ES_OP_TAKE), "take");
	ck_assert_str_eq(es_op_name(ES_OP_MPI_ALLREDUCE | ES_OP_FAILED), "MPI_Allreduce");
	ck_assert_str_eq(es_op_name(ES_OP_MPI_SENDRECV), "MPI_Sendrecv");
	ck_assert_str_eq(es_op_name(999), "unknown");
}
END_TEST

/* The op table written from calls.def: names, groups, kinds, and codes
 * that stay what recorded traces say. */
START_TEST(op_table)
{
	ck_assert_uint_eq(ES_OP_MPI_SEND, 34);
	ck_assert_uint_eq(ES_OP_MPI_BARRIER, 64);
	ck_assert_uint_eq(ES_OP_MPI_REDUCE_SCATTER, 76);
	/* nonblocking collectives are their blocking form + 32 */
	ck_assert_uint_eq(ES_OP_MPI_IALLREDUCE, ES_OP_MPI_ALLREDUCE + 32);
	ck_assert_uint_eq(ES_OP_MPI_INEIGHBOR_ALLTOALLW, ES_OP_MPI_NEIGHBOR_ALLTOALLW + 32);
	ck_assert_str_eq(es_op_name(ES_OP_MPI_IALLREDUCE | ES_OP_DONE), "MPI_Iallreduce");
	ck_assert_str_eq(es_op_name(ES_OP_MPI_WIN_FENCE), "MPI_Win_fence");
	ck_assert_uint_eq(es_op_code(ES_OP_MPI_START | ES_OP_RECV | ES_OP_FAILED), ES_OP_MPI_START);
	const struct es_op_info *i = es_op_info(ES_OP_MPI_TESTANY);
	ck_assert_ptr_nonnull(i);
	ck_assert_int_eq(i->kind, ES_KIND_POLL);
	ck_assert_int_eq(i->group, ES_GROUP_P2P);
	ck_assert_int_eq(es_op_info(ES_OP_MPI_PUT)->group, ES_GROUP_ONE_SIDED);
	ck_assert_int_eq(es_op_info(ES_OP_MPI_SEND_INIT)->group, ES_GROUP_PERSISTENT);
	ck_assert_int_eq(es_op_info(ES_OP_MPI_COMM_SPLIT)->group, ES_GROUP_COMMUNICATORS);
	ck_assert_int_eq(es_op_info(ES_OP_WRITE)->group, ES_GROUP_PASTSET);
	ck_assert_ptr_null(es_op_info(31));
	ck_assert_ptr_null(es_op_info(5000));
	/* matched across ranks: collectives, fences; not point-to-point, not
	 * a communicator made over a group's members only */
	ck_assert(es_op_matched(ES_OP_MPI_ALLREDUCE));
	ck_assert(es_op_matched(ES_OP_MPI_IBCAST | ES_OP_DONE));
	ck_assert(es_op_matched(ES_OP_MPI_WIN_FENCE));
	ck_assert(es_op_matched(ES_OP_MPI_COMM_SPLIT));
	ck_assert(!es_op_matched(ES_OP_MPI_SEND));
	ck_assert(!es_op_matched(ES_OP_MPI_COMM_CREATE_GROUP));
	ck_assert(!es_op_matched(ES_OP_WRITE));
	/* every name leads back to its code */
	int n = 0;
	for (unsigned k = 0; k < 256; k++) {
		const struct es_op_info *o = es_op_info(k);
		if (!o)
			continue;
		n++;
		ck_assert_uint_eq(o->code, k);
		ck_assert_uint_eq(es_op_from_name(o->name), k);
	}
	ck_assert_int_ge(n, 120);
	ck_assert_uint_eq(es_op_from_name("MPI_Sned"), 0);
	ck_assert_str_eq(es_op_group_name(ES_GROUP_ONE_SIDED), "one-sided");
}
END_TEST

static int select_from(const char *yaml, unsigned char collect[256], char *err)
{
	pm_map *m;
	char e[256];
	ck_assert_msg(pm_load_string("c.yaml", yaml, strlen(yaml), &m, e, sizeof(e)) == 0, "%s", e);
	int rc = es_mpi_select(&pm_model(m)->mpi, "c.yaml", collect, err, 512);
	pm_destroy(m);
	return rc;
}

START_TEST(mpi_select)
{
	unsigned char c[256];
	char err[512] = "";
	/* no list: everything MPI, nothing else */
	ck_assert_int_eq(es_mpi_select(NULL, NULL, c, err, sizeof(err)), 0);
	ck_assert(c[ES_OP_MPI_SEND] && c[ES_OP_MPI_INIT] && c[ES_OP_MPI_WIN_FENCE]);
	ck_assert(!c[ES_OP_WRITE] && !c[0]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [one-sided, MPI_Send]\n",
				     c, err), 0);
	ck_assert(c[ES_OP_MPI_PUT] && c[ES_OP_MPI_WIN_FENCE] && c[ES_OP_MPI_SEND]);
	ck_assert(!c[ES_OP_MPI_RECV] && !c[ES_OP_MPI_BARRIER] && !c[ES_OP_MPI_INIT]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [persistent, collectives]\n",
				     c, err), 0);
	ck_assert(c[ES_OP_MPI_START] && c[ES_OP_MPI_RECV_INIT] && c[ES_OP_MPI_IALLTOALLW]);
	ck_assert(c[ES_OP_MPI_NEIGHBOR_ALLGATHER] && !c[ES_OP_MPI_SEND] && !c[ES_OP_MPI_COMM_DUP]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [communicators]\n",
				     c, err), 0);
	ck_assert(c[ES_OP_MPI_COMM_SPLIT] && c[ES_OP_MPI_COMM_FREE] && !c[ES_OP_MPI_BARRIER]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [all]\n", c, err), 0);
	ck_assert(c[ES_OP_MPI_SEND] && c[ES_OP_MPI_FINALIZE]);
	/* in order, and a - takes away: everything but the polls, and one back */
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [all, -polls, MPI_Iprobe]\n",
				     c, err), 0);
	ck_assert(c[ES_OP_MPI_SEND] && c[ES_OP_MPI_WAIT] && c[ES_OP_MPI_IPROBE] && c[ES_OP_MPI_INIT]);
	ck_assert(!c[ES_OP_MPI_TEST] && !c[ES_OP_MPI_TESTANY] && !c[ES_OP_MPI_IMPROBE] && !c[ES_OP_MPI_WIN_TEST]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [polls]\n", c, err), 0);
	ck_assert(c[ES_OP_MPI_TESTSOME] && c[ES_OP_MPI_REQUEST_GET_STATUS] && !c[ES_OP_MPI_WAIT]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [-collectives, collectives, -MPI_Bcast]\n",
				     c, err), 0);
	ck_assert(c[ES_OP_MPI_ALLREDUCE] && !c[ES_OP_MPI_BCAST] && !c[ES_OP_MPI_SEND]);
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [collectives, MPI_Sned]\n",
				     c, err), PS_EINVAL);
	ck_assert_str_eq(err, "c.yaml:4:26: mpi collect: expected all, a group (point-to-point, "
			 "collectives, one-sided, persistent, communicators), polls or the name of an "
			 "MPI function libescollect records (MPI_Send, MPI_Allreduce...), each with a - "
			 "to leave it out, got 'MPI_Sned'");
	ck_assert_int_eq(select_from("pathmap: 1\nname: j\nmpi:\n  collect: [all, -pols]\n", c, err),
			 PS_EINVAL);
	ck_assert_msg(strstr(err, "c.yaml:4:18: ") && strstr(err, "got '-pols'"), "%s", err);
}
END_TEST

/* An order is applied only if it is one: numbered after the one applied
 * and no further than the orders written since, 0 or 1 where a flag is,
 * a list of text that ends. */
START_TEST(ctl_orders_checked)
{
	struct es_ctl_rec c = { .gen = 6 };
	memset(c.collect, 1, sizeof(c.collect));
	snprintf(c.list, sizeof(c.list), "[-all, MPI_Send]");
	ck_assert_ptr_null(es_ctl_check(&c, 5, 1));
	ck_assert_ptr_null(es_ctl_check(&c, 4, 2)); /* two esctl at once */
	ck_assert_str_eq(es_ctl_check(&c, 4, 1), "its number does not follow the order applied");
	ck_assert_str_eq(es_ctl_check(&c, 6, 9), "its number does not follow the order applied");
	c.gen = UINT64_MAX; /* would wrap the next */
	ck_assert_ptr_nonnull(es_ctl_check(&c, 5, 1));
	ck_assert_ptr_nonnull(es_ctl_check(&c, 5, 1000000));
	c.gen = 6;
	c.paused = 2;
	ck_assert_ptr_nonnull(es_ctl_check(&c, 5, 1));
	c.paused = 1;
	c.refused = 3;
	ck_assert_ptr_nonnull(es_ctl_check(&c, 5, 1));
	c.refused = 0;
	c.collect[ES_OP_MPI_SEND] = 0xff;
	ck_assert_str_eq(es_ctl_check(&c, 5, 1), "not an order: what to record is neither 0 nor 1");
	c.collect[ES_OP_MPI_SEND] = 1;
	c.list[3] = 0x1b;
	ck_assert_str_eq(es_ctl_check(&c, 5, 1), "not an order: its list holds what is not text");
	char out[241];
	es_ctl_list(&c, out);
	ck_assert_str_eq(out, "[-a?l, MPI_Send]");
	memset(c.list, 'x', sizeof(c.list));
	ck_assert_str_eq(es_ctl_check(&c, 5, 1), "not an order: its list does not end");
	es_ctl_list(&c, out);
	ck_assert_uint_eq(strlen(out), 240);
}
END_TEST

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

START_TEST(clock_converts_to_monotonic)
{
	const struct es_clock *c = es_clock_init();
	ck_assert(c->source == ES_CLOCK_TSC || c->source == ES_CLOCK_MONOTONIC);
	ck_assert_ptr_eq(es_clock_init(), c); /* calibrated once */
	uint64_t prev = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t before = mono(), raw = es_now(), after = mono();
		uint64_t ns = es_clock_ns(c, raw);
		/* The converted stamp falls between its neighbours, give or take
		 * the calibration's error (far below a millisecond). */
		ck_assert_uint_ge(ns + 1000000, before);
		ck_assert_uint_le(ns, after + 1000000);
		ck_assert_uint_ge(ns, prev); /* never backwards */
		prev = ns;
	}
	struct es_trace in = { .start = es_now(), .seq = 7, .op = ES_OP_WRITE }, out;
	in.end = in.start;
	es_trace_portable(c, &in, &out);
	ck_assert_uint_eq(out.start, es_clock_ns(c, in.start));
	ck_assert_uint_eq(out.seq, 7);
}
END_TEST

#if defined(__x86_64__)
/* A TSC line made here, its calibration `ago_ms` in the past, running
 * `off` times too fast. */
static void tsc_pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX; /* the tightest bracket: no preemption inside */
	for (int i = 0; i < 50; i++) {
		uint64_t a = mono(), t = __builtin_ia32_rdtsc(), b = mono();
		if (b - a < best) {
			best = b - a;
			*ns = a + (b - a) / 2;
			*tsc = t;
		}
	}
}

static struct es_clock tsc_line(int ago_ms, double off)
{
	uint64_t n0 = 0, t0 = 0, n1 = 0, t1 = 0;
	tsc_pair(&n0, &t0);
	struct timespec nap = { 0, 30 * 1000 * 1000 };
	nanosleep(&nap, NULL);
	tsc_pair(&n1, &t1);
	struct es_clock c = { .source = ES_CLOCK_TSC };
	double tpns = (double)(t1 - t0) / (double)(n1 - n0);
	c.mult = (uint64_t)((double)(1ull << 32) / tpns * off);
	c.ticks_per_ns = tpns / off;
	c.ns0 = n1 - (uint64_t)ago_ms * 1000000u;
	c.raw0 = t1 - (uint64_t)((double)ago_ms * 1e6 * tpns);
	return c;
}
#endif

/* A monitor attaching checks the writer's calibration: it holds; it drifted
 * and is re-fitted to the rate the TSC kept; or the TSC kept none. */
START_TEST(clock_check_refits_or_refuses)
{
	int64_t drift;
	struct es_clock m = { .source = ES_CLOCK_MONOTONIC, .mult = 1ull << 32, .ticks_per_ns = 1.0 };
	ck_assert_int_eq(es_clock_check(&m, &drift), 0); /* ns already */
	struct es_clock own = *es_clock_init();
	ck_assert_int_eq(es_clock_check(&own, &drift), 0);
	ck_assert_int_lt(drift < 0 ? -drift : drift, 1000000);
#if defined(__x86_64__)
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
	if (!(d & (1u << 8)))
		return; /* no invariant TSC: no line to test */
	struct es_clock good = tsc_line(200, 1.0);
	ck_assert_int_eq(es_clock_check(&good, &drift), 0);
	/* 0.5% fast for 2 s: 10 ms off, far past 10 us + 20 ppm */
	struct es_clock fast = tsc_line(2000, 1.005);
	ck_assert_int_eq(es_clock_check(&fast, &drift), 1);
	ck_assert_int_gt(drift, 5000000);
	uint64_t before = mono(), ns = es_clock_ns(&fast, __builtin_ia32_rdtsc()), after = mono();
	ck_assert_uint_ge(ns + 100000, before); /* now right, to the pair's precision */
	ck_assert_uint_le(ns, after + 100000);
	/* 5% off is no rate a TSC keeps: refused, the line unchanged */
	struct es_clock wild = tsc_line(2000, 1.05), keep = wild;
	ck_assert_int_eq(es_clock_check(&wild, &drift), ES_ECLOCK);
	ck_assert_uint_eq(wild.mult, keep.mult);
	/* a TSC behind its own calibration went back: a jump */
	struct es_clock back = tsc_line(0, 1.0);
	back.raw0 += (uint64_t)(1e9 * back.ticks_per_ns);
	ck_assert_int_eq(es_clock_check(&back, &drift), ES_ECLOCK);
#endif
}
END_TEST

/* Processes that share a TSC take one line (the ranks of a node, the
 * first one's): this one's stamps convert through it from then on, and
 * the spaces it makes carry it; a line of another kind changes nothing. */
START_TEST(clock_adopted)
{
	pid_t pid = fork();
	if (pid == 0) {
		const struct es_clock *own = es_clock_init();
		if (own->source != ES_CLOCK_TSC)
			_exit(0); /* nothing to share: each process's stamps are ns */
		uint64_t raw = es_now(), before = es_clock_ns(own, raw);
		struct es_clock other = *own, mono = { .magic = own->magic, .source = ES_CLOCK_MONOTONIC,
							 .mult = 1ull << 32, .ticks_per_ns = 1.0 };
		other.ns0 += 3000;
		if (es_clock_adopt(&mono) != -EINVAL || es_clock_adopt(NULL) != -EINVAL ||
		    es_clock_ns(es_clock_init(), raw) != before)
			_exit(1);
		if (es_clock_adopt(&other) || es_clock_ns(es_clock_init(), raw) != before + 3000)
			_exit(2);
		es_space *sp;
		if (es_space_get("", &sp) || es_clock_ns(es_space_clock(sp), raw) != before + 3000)
			_exit(3);
		es_space_put(sp);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

START_TEST(clock_fallback_on_request)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("ES_CLOCK", "monotonic", 1);
		const struct es_clock *c = es_clock_init();
		uint64_t a = mono(), r = es_now(), b = mono();
		_exit(c->source == ES_CLOCK_MONOTONIC && r >= a && r <= b && es_clock_ns(c, r) == r
		      ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

static ps_server *srv;

static paths_path *collected_path(ps_elem **e, int ncollectors, const char *names[],
				  uint32_t threshold)
{
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 8 };
	ck_assert_int_eq(ps_elem_create(srv, "data", &a, e), 0);
	paths_stage *s, *n;
	ck_assert_int_eq(paths_stage_element(*e, &s), 0);
	char thr[16];
	snprintf(thr, sizeof(thr), "%u", threshold);
	for (int i = ncollectors - 1; i >= 0; i--) {
		struct paths_param kv[] = { { "name", names[i], 1, 1 }, { "threshold", thr, 1, 1 },
					    { "thread", "t0", 1, 1 }, { "element", "5", 1, 1 } };
		struct paths_params p = { .v = kv, .n = 4, .path = "t0->data" };
		ck_assert_int_eq(paths_stage_create("collector", &p, s, &n), 0);
		paths_stage_release(s);
		s = n;
	}
	paths_path *path;
	ck_assert_int_eq(paths_path_create("p", s, TT_SIZE, &path), 0);
	paths_stage_release(s);
	return path;
}

static void setup(void)
{
	ck_assert_int_eq(es_collectors_register(), 0);
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
}

static void teardown(void)
{
	ps_server_destroy(srv);
}

/* A scripted sequence of operations, and exactly the tuples it must leave. */
START_TEST(collector_records_each_operation)
{
	ps_elem *e;
	const char *names[] = { "trace.t0" };
	paths_path *p = collected_path(&e, 1, names, 200);
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < 5; i++) {
		tuple_make(t, i, 0, 0);
		ck_assert_int_eq(paths_write(p, t, 0, NULL), 0);
	}
	ck_assert_int_eq(paths_read(p, 3, t, 0, NULL), 0);
	ck_assert_int_eq(paths_read_latest(p, t, NULL), 0);
	ck_assert_int_eq(paths_take(p, t, 0, NULL), 0);
	ck_assert_int_eq(paths_read(p, 9, t, 0, NULL), PS_ETIMEDOUT); /* fails, still recorded */

	es_space *sp;
	ck_assert_int_eq(es_space_get("", &sp), 0); /* the one the collector uses */
	ck_assert_int_eq(es_space_collectors(sp), 1);
	struct es_meta m;
	ck_assert_int_eq(es_space_meta(sp, 0, &m), 0);
	ck_assert_str_eq(m.trace, "trace.t0");
	ck_assert_str_eq(m.thread, "t0");
	ck_assert_str_eq(m.where, "t0->data");
	ck_assert_uint_eq(m.element, 5);
	ps_elem *te;
	ck_assert_int_eq(ps_elem_open(es_space_server(sp), "trace.t0", sizeof(struct es_trace), &te), 0);
	struct es_trace tr[16];
	ck_assert_int_eq(ps_read_range(te, 0, 16, tr, NULL), 9);
	const uint16_t ops[9] = { ES_OP_WRITE, ES_OP_WRITE, ES_OP_WRITE, ES_OP_WRITE, ES_OP_WRITE,
				  ES_OP_READ, ES_OP_READ_LATEST, ES_OP_TAKE,
				  ES_OP_READ | ES_OP_FAILED };
	const uint32_t args[9] = { 0, 1, 2, 3, 4, 3, 4, 0, 9 };
	for (int i = 0; i < 9; i++) {
		ck_assert_uint_eq(tr[i].op, ops[i]);
		ck_assert_uint_eq(tr[i].seq, (uint32_t)i);
		ck_assert_uint_eq(tr[i].arg, args[i]);
		ck_assert_uint_eq(tr[i].size, TT_SIZE);
		ck_assert_uint_eq(tr[i].element, 5);
		ck_assert_uint_eq(tr[i].collector, m.collector);
		ck_assert_uint_le(tr[i].start, tr[i].end);
		if (i)
			ck_assert_uint_le(tr[i - 1].end, tr[i].start);
	}
	ps_elem_close(te);
	es_space_put(sp);
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

/* Three collectors on one path: each one's interval holds the next one's,
 * which is how the paper measures one collector's cost. */
START_TEST(collectors_nest)
{
	ps_elem *e;
	const char *names[] = { "c.outer", "c.middle", "c.inner" };
	paths_path *p = collected_path(&e, 3, names, 200);
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < 50; i++) {
		tuple_make(t, i, 0, 0);
		ck_assert_int_eq(paths_write(p, t, 0, NULL), 0);
	}
	es_space *sp;
	ck_assert_int_eq(es_space_get("", &sp), 0);
	ps_elem *te[3];
	struct es_trace tr[3][50];
	for (int c = 0; c < 3; c++) {
		ck_assert_int_eq(ps_elem_open(es_space_server(sp), names[c], 0, &te[c]), 0);
		ck_assert_int_eq(ps_read_range(te[c], 0, 50, tr[c], NULL), 50);
	}
	for (int i = 0; i < 50; i++) {
		ck_assert_uint_le(tr[0][i].start, tr[1][i].start);
		ck_assert_uint_le(tr[1][i].start, tr[2][i].start);
		ck_assert_uint_le(tr[2][i].end, tr[1][i].end);
		ck_assert_uint_le(tr[1][i].end, tr[0][i].end);
	}
	for (int c = 0; c < 3; c++)
		ps_elem_close(te[c]);
	es_space_put(sp);
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

struct blocked { paths_path *p; int rc; };

static void *read_blocked(void *arg)
{
	struct blocked *b = arg;
	uint8_t t[TT_SIZE];
	b->rc = paths_read(b->p, 1, t, 5000, NULL); /* index 1 comes later */
	return NULL;
}

/* While an operation waits, the collector's notes say which one it is:
 * what a heartbeat monitor reports for a stalled thread. */
START_TEST(notes_show_the_operation_in_flight)
{
	ps_elem *e;
	const char *names[] = { "inflight" };
	paths_path *p = collected_path(&e, 1, names, 200);
	uint8_t t[TT_SIZE];
	tuple_make(t, 0, 0, 0);
	ck_assert_int_eq(paths_write(p, t, 0, NULL), 0);
	es_space *sp;
	ck_assert_int_eq(es_space_get("", &sp), 0);
	ps_elem *te;
	ck_assert_int_eq(ps_elem_open(es_space_server(sp), "inflight", 0, &te), 0);
	struct blocked b = { p, -1 };
	pthread_t th;
	pthread_create(&th, NULL, read_blocked, &b);
	struct es_trace last;
	uint64_t start = 0;
	for (int i = 0; i < 5000 && !start; i++) { /* until the reader is inside */
		uint64_t s0 = ps_note_get(te, ES_NOTE_START);
		ck_assert_int_eq(ps_read_latest(te, &last, NULL), 0);
		if (s0 > last.start)
			start = s0;
		else
			usleep(1000);
	}
	ck_assert_uint_gt(start, 0);
	uint64_t what = ps_note_get(te, ES_NOTE_WHAT);
	ck_assert_uint_eq(what & 0xffff, ES_OP_READ);
	ck_assert_uint_eq(what >> 32, 5); /* the element parameter */
	ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);           /* let it finish */
	pthread_join(th, NULL);
	ck_assert_int_eq(b.rc, 0);
	ck_assert_int_eq(ps_read_latest(te, &last, NULL), 0);
	ck_assert_uint_ge(last.start, ps_note_get(te, ES_NOTE_START)); /* nothing in flight */
	ps_elem_close(te);
	es_space_put(sp);
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

START_TEST(drops_are_counted)
{
	ps_elem *e;
	const char *names[] = { "small" };
	paths_path *p = collected_path(&e, 1, names, 5);
	uint8_t t[TT_SIZE];
	tuple_make(t, 0, 0, 0);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(paths_write(p, t, 0, NULL), 0);
	es_space *sp;
	ck_assert_int_eq(es_space_get("", &sp), 0);
	ps_elem *te;
	ck_assert_int_eq(ps_elem_open(es_space_server(sp), "small", 0, &te), 0);
	struct ps_stats st;
	ps_elem_stats(te, &st);
	ck_assert_uint_eq(st.written, 12);
	ck_assert_uint_eq(st.discarded, 7);
	ps_elem_close(te);
	es_space_put(sp);
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

START_TEST(collector_parameter_errors)
{
	struct ps_elem_attr a = { .tuple_size = 8, .threshold = 1 };
	ps_elem *e;
	paths_stage *el, *s;
	ck_assert_int_eq(ps_elem_create(srv, "x", &a, &e), 0);
	ck_assert_int_eq(paths_stage_element(e, &el), 0);
	char err[256];
	struct paths_param w = { "writers", "several", 2, 14 };
	struct paths_params p = { .file = "j.yaml", .v = &w, .n = 1, .err = err, .errlen = sizeof(err) };
	ck_assert_int_eq(paths_stage_create("collector", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "j.yaml:2:14: writers: expected one or many, not 'several'");
	struct paths_param th = { "threshold", "0", 3, 16 };
	p.v = &th;
	ck_assert_int_eq(paths_stage_create("collector", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "j.yaml:3:16: threshold: expected an integer from 1 to 67108864, not '0'");
	struct paths_param sp = { "space", "bad/name", 4, 12 };
	p.v = &sp;
	ck_assert_int_eq(paths_stage_create("collector", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "j.yaml:4:12: trace space 'bad/name': bad name (1-47 characters of "
			 "A-Z a-z 0-9 . _ -)");
	paths_stage_release(el);
	ps_elem_close(e);
}
END_TEST

/* A monitor in another process opens the shared trace space read-only and
 * finds the collectors, their tuples and the clock. */
START_TEST(shared_space_read_elsewhere)
{
	char seg[64];
	TEST_SEG(seg, "space");
	ps_shm_unlink(seg);
	es_space *sp;
	ck_assert_int_eq(es_space_get(seg, &sp), 0);
	struct es_meta m = { .element = 3 };
	snprintf(m.thread, sizeof(m.thread), "worker");
	uint16_t id;
	ps_elem *te;
	ck_assert_int_eq(es_space_add(sp, &m, 200, false, &id, &te), 0);
	ck_assert_uint_eq(id, 0);
	struct es_trace t = { .start = es_now(), .op = ES_OP_WRITE, .collector = id };
	t.end = es_now();
	ck_assert_int_eq(ps_write(te, &t, 0, NULL), 0);
	pid_t pid = fork();
	if (pid == 0) {
		es_space *ro;
		struct es_meta got;
		ps_elem *e;
		struct es_trace r;
		if (es_space_open(seg, &ro) || es_space_collectors(ro) != 1 ||
		    es_space_meta(ro, 0, &got) || strcmp(got.thread, "worker") || strcmp(got.trace, "c0") ||
		    ps_elem_open(es_space_server(ro), got.trace, sizeof(r), &e) ||
		    ps_read(e, 0, &r, 0, NULL) || r.start != t.start ||
		    es_space_clock(ro)->source != es_space_clock(sp)->source ||
		    es_clock_ns(es_space_clock(ro), r.start) != es_clock_ns(es_space_clock(sp), t.start))
			_exit(1);
		ps_elem_close(e);
		es_space_destroy(ro);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* a live space is never replaced; a closed one is */
	ps_server *plain;
	const struct ps_shm_attr repl = { .flags = PS_SHM_REPLACE_DEAD };
	ck_assert_int_eq(ps_server_create_shm(seg, &repl, &plain), PS_EEXIST);
	ps_elem_close(te);
	es_space_put(sp);
	ck_assert_int_eq(ps_server_create_shm(seg, &repl, &plain), 0);
	/* which is a PastSet segment, but not a trace space */
	es_space *no;
	ck_assert_int_eq(es_space_open(seg, &no), PS_EBADSEG);
	ps_server_destroy(plain);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* A pathmap with collectors everywhere: the job's paths and tree edges
 * write into the process's trace space. */
START_TEST(pathmap_puts_collectors_on_paths)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "pathmap: 1\nname: c%d\napplication:\n  elements:\n"
		 "    - { name: row, tuple_size: %d, threshold: 4 }\n"
		 "  threads:\n    - { name: t0, uses: [row] }\n    - { name: t1, uses: [row] }\n"
		 "paths:\n  collectors: all\n"
		 "trees:\n  - { name: sum, threads: [t0, t1], collectors: true }\n"
		 "trace:\n  threshold: 50\n", (int)getpid(), TT_SIZE);
	char err[256];
	pm_map *m;
	ck_assert_msg(pm_load_string("c.yaml", text, strlen(text), &m, err, sizeof(err)) == 0, "%s", err);
	pm_job *j;
	ck_assert_msg(pm_job_create(m, "p0", &j, err, sizeof(err)) == 0, "%s", err);
	uint8_t t[TT_SIZE];
	tuple_make(t, 1, 0, 0);
	ck_assert_int_eq(paths_write(pm_job_path(j, "t0", "row"), t, 0, NULL), 0);
	ck_assert_int_eq(paths_take(pm_job_path(j, "t1", "row"), t, 0, NULL), 0);
	char seg[64];
	snprintf(seg, sizeof(seg), "c%d.t0", (int)getpid());
	es_space *ro;
	ck_assert_int_eq(es_space_open(seg, &ro), 0);
	int n = es_space_collectors(ro);
	ck_assert_int_eq(n, 2 + 3); /* two paths; the tree: t1's edge (t0 runs the node), down, result */
	int seen = 0;
	for (int i = 0; i < n; i++) {
		struct es_meta md;
		ck_assert_int_eq(es_space_meta(ro, i, &md), 0);
		ps_elem *te;
		struct ps_stats st;
		ck_assert_int_eq(ps_elem_open(es_space_server(ro), md.trace, 0, &te), 0);
		ps_elem_stats(te, &st);
		ck_assert_uint_eq(st.threshold, 50);
		if (!strcmp(md.where, "t0->row") || !strcmp(md.where, "t1->row")) {
			ck_assert_uint_eq(st.written, 1);
			seen++;
		}
		ps_elem_close(te);
	}
	ck_assert_int_eq(seen, 2);
	es_space_destroy(ro);
	pm_job_destroy(j);
	ps_shm_unlink(seg);
	pm_destroy(m);
}
END_TEST

/* A file that is a 64-bit ELF program with no PT_INTERP: statically linked. */
static void write_static_elf(const char *path)
{
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = 64, .p_memsz = 64 };
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(&eh, sizeof(eh), 1, f);
	fwrite(&ph, sizeof(ph), 1, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

/* esrun's choice of collector: by the MPI library the loader gives a
 * program.  Stand-ins for the collectors are the MPIs' own Fortran
 * libraries (each linked with its MPI's C library, as a collector is);
 * the programs are the MPIs' own tools, ompi_info and mpichversion. */
START_TEST(collector_picked_by_the_program_mpi)
{
	static const char *arch = "/usr/lib/x86_64-linux-gnu";
	char dir[] = "/tmp/espickXXXXXX", lib[PATH_MAX], out[PATH_MAX], err[1024], p[PATH_MAX + 64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	ck_assert_int_eq(mkdir(lib, 0700), 0);
	ck_assert_int_eq(es_mpi_pick(lib, "ompi_info", NULL, out, sizeof(out), err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no collector in"));
	snprintf(p, sizeof(p), "%s/libescollect-openmpi.so", lib);
	snprintf(out, sizeof(out), "%s/libmpi_mpifh.so.40", arch);
	ck_assert_msg(symlink(out, p) == 0 && access(out, R_OK) == 0, "no %s: make deps installs Open MPI", out);
	snprintf(p, sizeof(p), "%s/libescollect-junk.so", lib); /* not ELF: no collector */
	FILE *f = fopen(p, "w");
	fputs("junk\n", f);
	fclose(f);

	/* only Open MPI's: an MPICH program runs on an MPI it was not built for */
	ck_assert_int_eq(es_mpi_pick(lib, "mpichversion", NULL, out, sizeof(out), err, sizeof(err)), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "mpichversion runs on libmpich.so.12, an MPI none"));
	ck_assert_ptr_nonnull(strstr(err, "they serve: openmpi (libmpi.so.40)"));
	snprintf(p, sizeof(p), "%s/libescollect-mpich.so", lib);
	snprintf(out, sizeof(out), "%s/libmpichfort.so.12", arch);
	ck_assert_msg(symlink(out, p) == 0 && access(out, R_OK) == 0, "no %s: make deps installs MPICH", out);

	/* each program to its own MPI's collector, found along PATH or not */
	ck_assert_int_eq(es_mpi_pick(lib, "ompi_info", NULL, out, sizeof(out), err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/libescollect-openmpi.so", lib);
	ck_assert_str_eq(out, p);
	ck_assert_int_eq(es_mpi_pick(lib, "/usr/bin/mpichversion", NULL, out, sizeof(out), err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/libescollect-mpich.so", lib);
	ck_assert_str_eq(out, p);
	/* named: no look at the program, which may be a script */
	ck_assert_int_eq(es_mpi_pick(lib, "/no/such", "mpich", out, sizeof(out), err, sizeof(err)), 0);
	ck_assert_str_eq(out, p);
	ck_assert_int_eq(es_mpi_pick(lib, "ompi_info", "intel", out, sizeof(out), err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "--mpi intel: expected one of the MPIs esrun has a collector for: "
			      "mpich (libmpich.so.12), openmpi (libmpi.so.40)");

	/* what it cannot tell, it says */
	ck_assert_int_eq(es_mpi_pick(lib, "true", NULL, out, sizeof(out), err, sizeof(err)), -ESRCH);
	ck_assert_ptr_nonnull(strstr(err, "true loads no MPI library"));
	ck_assert_int_eq(es_mpi_pick(lib, "no-such-program-here", NULL, out, sizeof(out), err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "no-such-program-here: not found");
	snprintf(p, sizeof(p), "%s/run.sh", dir);
	f = fopen(p, "w");
	fputs("#!/bin/sh\nexec ompi_info\n", f);
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	ck_assert_int_eq(es_mpi_pick(lib, p, NULL, out, sizeof(out), err, sizeof(err)), -ENOEXEC);
	ck_assert_ptr_nonnull(strstr(err, "(a script?), so esrun cannot tell which MPI it runs on: name it with --mpi"));
	snprintf(p, sizeof(p), "%s/static", dir);
	write_static_elf(p);
	ck_assert_int_eq(es_mpi_pick(lib, p, NULL, out, sizeof(out), err, sizeof(err)), -ENOEXEC);
	ck_assert_ptr_nonnull(strstr(err, "is statically linked"));
	/* small buffers: cut, never overrun */
	ck_assert_int_eq(es_mpi_pick(lib, "ompi_info", NULL, out, 8, err, 8), -ENAMETOOLONG);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The one join of a message's ends: numbers whole while small, from the
 * latest mark after it, nothing when the mark was lost; each thread's and
 * each channel's apart; marks taken in; a send and its receive keyed
 * alike, whichever thread or rank reads them, and nothing else so; a
 * second thread on a channel never paired. */
START_TEST(numbers_read_as_written)
{
	es_numr *r;
	ck_assert_int_eq(es_numr_create(&r), 0);
	struct es_msg_end s, v;
	/* rank 0 sends to 1, tag 3, on the communicator both name 9 */
	struct es_trace whole = { .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .element = 1, .arg = 3, .seq = ES_NUM_WHOLE | 7 };
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &whole, &s), 0);
	ck_assert_uint_eq(s.num, 7);
	ck_assert(s.from == 0 && s.to == 1 && s.tag == 3 && !s.recv);
	struct es_trace got = { .op = ES_OP_MPI_RECV | ES_OP_NUMBERED, .element = 0, .arg = 3, .seq = ES_NUM_WHOLE | 7 };
	ck_assert_int_eq(es_numr_read(r, 5, 1, 9, &got, &v), 0);
	ck_assert(v.from == 0 && v.to == 1 && v.recv);
	ck_assert_uint_eq(v.key, s.key);
	ck_assert_uint_eq(v.link, s.link);
	got.seq = ES_NUM_WHOLE | 8; /* the next message */
	ck_assert_int_eq(es_numr_read(r, 5, 1, 9, &got, &v), 0);
	ck_assert_uint_ne(v.key, s.key);
	got.seq = ES_NUM_WHOLE | 7; /* another communicator */
	ck_assert_int_eq(es_numr_read(r, 5, 1, 10, &got, &v), 0);
	ck_assert_uint_ne(v.key, s.key);

	struct es_trace late = { .op = ES_OP_MPI_SEND | ES_OP_NUMBERED, .element = 1, .arg = 3, .seq = 40000u & 0x7fff };
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &late, &s), ES_NUMR_NONE); /* its mark not seen */
	ck_assert_uint_eq(s.key, 0);
	struct es_trace mark = { .op = ES_OP_MPI_CHANNEL, .element = 1, .arg = 3, .seq = 0, .size = 39000 };
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &mark, &s), ES_NUMR_MARK);
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &late, &s), 0);
	ck_assert_uint_eq(s.num, 40000);
	ck_assert_int_eq(es_numr_read(r, 1, 0, 9, &late, &s), ES_NUMR_SHARED); /* thread 0's channel */
	ck_assert_uint_eq(s.key, 0);
	late.arg = 4;
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &late, &s), ES_NUMR_NONE); /* another channel */
	late.arg = 3;
	struct es_trace plain = { .op = ES_OP_MPI_SEND, .element = 1, .seq = 5 };
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &plain, &s), ES_NUMR_NONE); /* not numbered */
	struct es_trace nobody = whole, group = mark, barrier = { .op = ES_OP_MPI_BARRIER, .element = ES_NONE };
	nobody.element = ES_NONE;
	group.op |= ES_OP_DONE;
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &nobody, &s), ES_NUMR_NOT);
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &group, &s), ES_NUMR_NOT);
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &barrier, &s), ES_NUMR_NOT);
	ck_assert_int_eq(es_numr_read(r, 0, -1, 9, &whole, &s), ES_NUMR_NOT); /* no rank */
	for (uint32_t t = 0; t < 2000; t++) /* grown past its first table: the mark still there */
		ck_assert_int_eq(es_numr_read(r, t + 10, 0, 9, &mark, &s), ES_NUMR_MARK);
	ck_assert_int_eq(es_numr_read(r, 0, 0, 9, &late, &s), 0);
	ck_assert_uint_eq(s.num, 40000);
	es_numr_destroy(r);
}
END_TEST

Suite *collectors_suite(void)
{
	Suite *s = suite_create("collectors");
	TCase *tc = tcase_create("collectors");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tuple_layout);
	tcase_add_test(tc, op_table);
	tcase_add_test(tc, mpi_select);
	tcase_add_test(tc, ctl_orders_checked);
	tcase_add_test(tc, clock_converts_to_monotonic);
	tcase_add_test(tc, clock_adopted);
	tcase_add_test(tc, clock_fallback_on_request);
	tcase_add_test(tc, clock_check_refits_or_refuses);
	tcase_add_test(tc, collector_records_each_operation);
	tcase_add_test(tc, collectors_nest);
	tcase_add_test(tc, drops_are_counted);
	tcase_add_test(tc, notes_show_the_operation_in_flight);
	tcase_add_test(tc, collector_parameter_errors);
	tcase_add_test(tc, shared_space_read_elsewhere);
	tcase_add_test(tc, pathmap_puts_collectors_on_paths);
	tcase_add_test(tc, collector_picked_by_the_program_mpi);
	tcase_add_test(tc, numbers_read_as_written);
	suite_add_tcase(s, tc);
	return s;
}
