/* test_scopes.c - scope wrappers, the tree builder, views, pulls and consumption. */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "scopes/internal.h"
#include "tests/unit/suites.h"

static struct es_trace tr(uint64_t start, uint64_t end, unsigned op, uint32_t element, uint32_t size)
{
	return (struct es_trace){ .start = start, .end = end, .op = (uint16_t)op, .element = element,
				  .size = size };
}

START_TEST(reduce_operations)
{
	struct es_trace in[4] = { tr(10, 20, ES_OP_WRITE, 1, 8), tr(0, 0, 0, 0, 0),
				  tr(5, 40, ES_OP_READ, 2, 16), tr(30, 31, ES_OP_TAKE, 3, 4) };
	struct es_trace out;
	es__reduce(ES_REDUCE_LATEST, in, 4, &out);
	ck_assert_uint_eq(out.end, 40);                  /* ended last */
	es__reduce(ES_REDUCE_MIN, in, 4, &out);
	ck_assert_uint_eq(out.element, 3);               /* shortest: 1 */
	es__reduce(ES_REDUCE_MAX, in, 4, &out);
	ck_assert_uint_eq(out.element, 2);               /* longest: 35 */
	es__reduce(ES_REDUCE_SUM, in, 4, &out);
	ck_assert_uint_eq(out.end - out.start, 10 + 35 + 1);
	ck_assert_uint_eq(out.size, 28);
	es__reduce(ES_REDUCE_COUNT, in, 4, &out);
	ck_assert_uint_eq(out.seq, 3);                   /* the empty one does not count */
	struct es_trace none[2] = { { 0 }, { 0 } };
	es__reduce(ES_REDUCE_LATEST, none, 2, &out);
	ck_assert(es_trace_empty(&out));
}
END_TEST

/* A fork over local elements holding known tuples, with a wrapper on top. */
static ps_server *srv;
static ps_elem *el[3];

static paths_stage *leaves_fork(void)
{
	paths_stage *b[3], *f;
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(paths_stage_element(el[i], &b[i]), 0);
		struct paths_params none = { 0 };
		paths_stage *l;
		ck_assert_int_eq(paths_stage_create("latest", &none, b[i], &l), 0);
		paths_stage_release(b[i]);
		b[i] = l;
	}
	ck_assert_int_eq(paths_stage_fork(b, 3, &f), 0);
	for (int i = 0; i < 3; i++)
		paths_stage_release(b[i]);
	return f;
}

static void setup(void)
{
	ck_assert_int_eq(es_scopes_register(), 0);
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof(name), "l%d", i);
		struct ps_elem_attr a = { .tuple_size = sizeof(struct es_trace), .threshold = 4 };
		ck_assert_int_eq(ps_elem_create(srv, name, &a, &el[i]), 0);
	}
	struct es_trace t0 = tr(100, 150, ES_OP_WRITE, 7, 8), t1 = tr(120, 400, ES_OP_TAKE, 9, 8);
	ck_assert_int_eq(ps_write(el[0], &t0, 0, NULL), 0);
	ck_assert_int_eq(ps_write(el[1], &t1, 0, NULL), 0);
	/* el[2] stays empty: an idle leaf */
}

static void teardown(void)
{
	for (int i = 0; i < 3; i++)
		ps_elem_close(el[i]);
	ps_server_destroy(srv);
}

START_TEST(wrappers_in_a_tree)
{
	paths_stage *f = leaves_fork(), *r, *flt;
	struct paths_param op = { "op", "latest", 1, 1 };
	struct paths_params p = { .v = &op, .n = 1 };
	ck_assert_int_eq(paths_stage_create("reduce", &p, f, &r), 0);
	ck_assert_uint_eq(es__scope_width_below(f), 3);
	ck_assert_uint_eq(es__scope_width_below(r), 1);
	paths_path *all, *one;
	ck_assert_int_eq(paths_path_create("all", f, 3 * sizeof(struct es_trace), &all), 0);
	ck_assert_int_eq(paths_path_create("one", r, sizeof(struct es_trace), &one), 0);
	struct es_trace out[3];
	ck_assert_int_eq(paths_read_latest(all, out, NULL), 0);
	ck_assert_uint_eq(out[0].end, 150);
	ck_assert_uint_eq(out[1].end, 400);
	ck_assert(es_trace_empty(&out[2])); /* empty, not an error */
	ck_assert_int_eq(paths_read_latest(one, out, NULL), 0);
	ck_assert_uint_eq(out[0].end, 400);
	/* a filter keeps takes on element 9 only */
	struct paths_param fk[] = { { "ops", "take", 1, 1 }, { "element", "9", 1, 1 } };
	struct paths_params fp = { .v = fk, .n = 2 };
	ck_assert_int_eq(paths_stage_create("filter", &fp, f, &flt), 0);
	paths_path *fpath;
	ck_assert_int_eq(paths_path_create("f", flt, 3 * sizeof(struct es_trace), &fpath), 0);
	ck_assert_int_eq(paths_read_latest(fpath, out, NULL), 0);
	ck_assert(es_trace_empty(&out[0]));
	ck_assert_uint_eq(out[1].op, ES_OP_TAKE);
	/* sorted by start: t0 (100), t1 (120), the empty one last */
	paths_stage *srt;
	struct paths_params none = { 0 };
	ck_assert_int_eq(paths_stage_create("sort", &none, f, &srt), 0);
	paths_path *spath;
	ck_assert_int_eq(paths_path_create("s", srt, 3 * sizeof(struct es_trace), &spath), 0);
	struct es_trace t2 = tr(90, 95, ES_OP_WRITE, 1, 8);
	ck_assert_int_eq(ps_write(el[2], &t2, 0, NULL), 0);
	ck_assert_int_eq(paths_read_latest(spath, out, NULL), 0);
	ck_assert_uint_eq(out[0].start, 90);
	ck_assert_uint_eq(out[1].start, 100);
	ck_assert_uint_eq(out[2].start, 120);
	paths_path_destroy(spath);
	paths_stage_release(srt);
	/* a time window */
	struct paths_param wk[] = { { "after", "110", 1, 1 } };
	struct paths_params wp = { .v = wk, .n = 1 };
	paths_stage *win;
	ck_assert_int_eq(paths_stage_create("filter", &wp, f, &win), 0);
	paths_path *wpath;
	ck_assert_int_eq(paths_path_create("w", win, 3 * sizeof(struct es_trace), &wpath), 0);
	ck_assert_int_eq(paths_read_latest(wpath, out, NULL), 0);
	ck_assert(es_trace_empty(&out[0]) && !es_trace_empty(&out[1]) && es_trace_empty(&out[2]));
	paths_path_destroy(all);
	paths_path_destroy(one);
	paths_path_destroy(fpath);
	paths_path_destroy(wpath);
	paths_stage_release(r);
	paths_stage_release(flt);
	paths_stage_release(win);
	paths_stage_release(f);
}
END_TEST

START_TEST(wrapper_parameter_errors)
{
	paths_stage *f = leaves_fork(), *s;
	char err[256];
	struct paths_param bad = { "op", "median", 2, 9 };
	struct paths_params p = { .file = "s.yaml", .v = &bad, .n = 1, .err = err, .errlen = sizeof(err) };
	ck_assert_int_eq(paths_stage_create("reduce", &p, f, &s), PS_EINVAL);
	ck_assert_str_eq(err, "s.yaml:2:9: op: expected latest, min, max, sum or count, not 'median'");
	struct paths_param ops = { "ops", "write,jump", 3, 10 };
	p.v = &ops;
	ck_assert_int_eq(paths_stage_create("filter", &p, f, &s), PS_EINVAL);
	ck_assert_str_eq(err, "s.yaml:3:10: ops: 'jump' is not an operation (write, read, take, MPI_Send...)");
	struct paths_param sp = { "space", "nosuch-space", 4, 11 };
	p.v = &sp;
	ck_assert_int_eq(paths_stage_create("convert", &p, f, &s), PS_EINVAL);
	ck_assert_str_eq(err, "s.yaml:4:11: space 'nosuch-space': no such segment or element");
	paths_stage_release(f);
}
END_TEST

/* This process's threads. */
static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	for (struct dirent *de; (de = readdir(d));)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void *nothing(void *arg)
{
	return arg;
}

/* The threads there are when no scope runs any: a thread made and joined
 * first, because a sanitizer's runtime starts one of its own on the first
 * pthread_create; and a joined thread may leave the task list a moment
 * after the join returns, so wait for the count to settle back. */
static int threads_idle(int settled)
{
	if (!settled) {
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, nothing, NULL), 0);
		pthread_join(t, NULL);
		usleep(10000);
	}
	int n = threads_now();
	for (int i = 0; i < 2000 && settled && n != settled; i++) {
		usleep(1000);
		n = threads_now();
	}
	return n;
}

/* A job's trace space, made by hand: threads a (2 collectors), b and c. */
static char job[32];
static es_space *sp;
static ps_elem *te[4];

static void make_job(uint32_t threshold)
{
	snprintf(job, sizeof(job), "sc%d", (int)getpid());
	char seg[48];
	snprintf(seg, sizeof(seg), "%s.t0", job);
	ps_shm_unlink(seg);
	ck_assert_int_eq(es_space_create(seg, 0, &sp), 0);
	const char *threads[4] = { "a", "a", "b", "c" };
	for (int i = 0; i < 4; i++) {
		struct es_meta m = { .element = (uint32_t)i };
		snprintf(m.thread, sizeof(m.thread), "%s", threads[i]);
		snprintf(m.where, sizeof(m.where), "%s->e%d", threads[i], i);
		uint16_t id;
		ck_assert_int_eq(es_space_add(sp, &m, threshold, false, &id, &te[i]), 0);
	}
}

static void drop_job(void)
{
	for (int i = 0; i < 4; i++)
		ps_elem_close(te[i]);
	es_space_destroy(sp);
	char seg[48];
	snprintf(seg, sizeof(seg), "%s.t0", job);
	ps_shm_unlink(seg);
}

static void put(int leaf, uint64_t start, uint64_t end, unsigned op)
{
	struct es_trace t = tr(start, end, op, (uint32_t)leaf, 36);
	ck_assert_int_eq(ps_write(te[leaf], &t, 0, NULL), 0);
}

START_TEST(scope_pulls_per_thread)
{
	make_job(100);
	const struct es_clock *ck = es_space_clock(sp);
	uint64_t base = ck->raw0;
	put(0, base + 10, base + 20, ES_OP_WRITE);
	put(1, base + 30, base + 1000, ES_OP_READ); /* a's latest */
	put(2, base + 5, base + 6, ES_OP_TAKE);
	/* c has nothing yet */
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	const int fanouts[2] = { 2, 3 };
	struct es_trace first[3];
	int idle = threads_idle(0);
	/* in the monitor; concurrently; in helper threads; in a helper process */
	for (int variant = 0; variant < 8; variant++) {
		spec.fanout = fanouts[variant % 2];
		spec.concurrent = variant / 2 == 1;
		spec.runs = variant / 2 == 2 ? PM_RUNS_THREAD :
			    variant / 2 == 3 ? PM_RUNS_PROCESS : PM_RUNS_MONITOR;
		es_scope *s;
		int before = spec.concurrent ? threads_idle(idle) : 0;
		ck_assert_int_eq(es_scope_create(&spec, &s), 0);
		/* concurrent: a thread for each child that gathers, none for a
		 * leaf.  Fan-out 2: a's node, (a's node, b) and (c); fan-out 3:
		 * a's node beside the leaves b and c. */
		if (spec.concurrent)
			ck_assert_int_eq(threads_now() - before, spec.fanout == 2 ? 3 : 1);
		ck_assert_int_eq(es_scope_threads(s), 3);
		ck_assert_int_eq(es_scope_leaves(s), 4);
		ck_assert_int_eq(es_scope_width(s), 3);
		ck_assert_str_eq(es_scope_thread(s, 0), "a");
		struct es_trace out[3];
		ck_assert_int_eq(es_scope_pull(s, out), 0);
		ck_assert_uint_eq(out[0].op, ES_OP_READ);
		ck_assert_uint_eq(out[0].end, es_clock_ns(ck, base + 1000)); /* converted to ns */
		ck_assert_uint_eq(out[1].op, ES_OP_TAKE);
		ck_assert(es_trace_empty(&out[2]));
		if (variant == 0)
			memcpy(first, out, sizeof(out));
		else /* every shape and placement gives the same answer */
			ck_assert_mem_eq(first, out, sizeof(out));
		es_scope_destroy(s);
	}
	/* without reduce: one tuple per leaf; a thread view: only its leaves */
	spec.reduce = ES_REDUCE_NONE;
	spec.runs = PM_RUNS_MONITOR;
	spec.concurrent = false;
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(es_scope_width(s), 4);
	es_scope_destroy(s);
	spec.view = PM_VIEW_THREAD;
	spec.of = "a";
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(es_scope_leaves(s), 2);
	ck_assert_int_eq(es_scope_threads(s), 1);
	es_scope_destroy(s);
	spec.of = "zz";
	ck_assert_int_eq(es_scope_create(&spec, &s), PS_ENOENT);
	spec.job = "no-such-job";
	spec.view = PM_VIEW_NODE;
	ck_assert_int_eq(es_scope_create(&spec, &s), PS_ENOENT);
	spec.job = job;
	spec.fanout = 1;
	ck_assert_int_eq(es_scope_create(&spec, &s), PS_EINVAL);
	drop_job();
}
END_TEST

START_TEST(consume_counts_exactly)
{
	make_job(8);
	uint64_t base = es_space_clock(sp)->raw0;
	/* a backlog: leaf 0 wrote 20 (12 already dropped), leaf 2 wrote 3 */
	for (int i = 0; i < 20; i++)
		put(0, base + 100 + 10 * (uint64_t)i, base + 105 + 10 * (uint64_t)i, ES_OP_WRITE);
	for (int i = 0; i < 3; i++)
		put(2, base + 101 + 10 * (uint64_t)i, base + 102 + 10 * (uint64_t)i, ES_OP_TAKE);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	struct es_trace out[64];
	uint64_t missed;
	int n = es_scope_consume(s, out, 64, &missed);
	ck_assert_int_eq(n, 8 + 3); /* what the elements still held */
	ck_assert_uint_eq(missed, 0); /* a late start is not a loss... */
	ck_assert_uint_eq(es_scope_before_attach(s), 12); /* ...but it is said */
	for (int i = 1; i < n; i++)
		ck_assert_uint_le(out[i - 1].start, out[i].start); /* merged by time */
	ck_assert_int_eq(es_scope_consume(s, out, 64, &missed), 0);
	/* now fall behind by 5 on leaf 0 */
	for (int i = 0; i < 13; i++)
		put(0, base + 1000 + (uint64_t)i, base + 1001 + (uint64_t)i, ES_OP_WRITE);
	n = es_scope_consume(s, out, 64, &missed);
	ck_assert_int_eq(n, 8);
	ck_assert_uint_eq(missed, 5);
	ck_assert_int_eq(es_scope_consumed_leaf(s, 0), 0);
	/* a small buffer leaves the rest for the next call */
	for (int i = 0; i < 6; i++)
		put(3, base + 2000 + (uint64_t)i, base + 2001 + (uint64_t)i, ES_OP_READ);
	ck_assert_int_eq(es_scope_consume(s, out, 4, &missed), 4);
	ck_assert_int_eq(es_scope_consume(s, out, 4, &missed), 2);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A rate limit is a schedule: never faster than asked, whatever the pulls
 * cost; a pull that comes late is made up, not repeated in a burst (the
 * schedule's catching up is measured by the experiments, not timed here). */
START_TEST(rate_limit_never_runs_ahead)
{
	make_job(8);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.rate_hz = 400;
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	struct es_trace out[64];
	ck_assert_int_eq(es_scope_pull(s, out), 0);
	double t0 = now_s();
	for (int i = 0; i < 40; i++) {
		ck_assert_int_eq(es_scope_pull(s, out), 0);
		if (i == 10) { /* a stall of two periods: the schedule stays */
			struct timespec st = { 0, 5000000 };
			nanosleep(&st, NULL);
		}
	}
	/* 40 periods after the first pull, stall or not */
	ck_assert_double_ge(now_s() - t0, 40 / 400.0 - 0.001);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

/* A consumer learns from the counts how soon it must come back. */
START_TEST(consume_knows_its_headroom)
{
	make_job(100);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert(isinf(es_scope_headroom(s)));  /* nothing known yet */
	struct es_trace out[256];
	uint64_t missed, base = es_space_clock(sp)->raw0;
	double t0 = now_s();
	ck_assert_int_eq(es_scope_consume(s, out, 256, &missed), 0);
	double t0b = now_s();
	ck_assert(isinf(es_scope_headroom(s)));  /* no writes: no hurry */
	/* leaf 1 writes half its threshold, leaf 3 a tenth: leaf 1 fills first,
	 * in about twice the time between the consumes */
	for (int i = 0; i < 50; i++)
		put(1, base + 10 + (uint64_t)i, base + 11 + (uint64_t)i, ES_OP_WRITE);
	for (int i = 0; i < 10; i++)
		put(3, base + 10 + (uint64_t)i, base + 11 + (uint64_t)i, ES_OP_WRITE);
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	nanosleep(&nap, NULL);
	double t1 = now_s();
	ck_assert_int_eq(es_scope_consume(s, out, 256, &missed), 60);
	double t2 = now_s(), h = es_scope_headroom(s);
	ck_assert_msg(h >= 2 * (t1 - t0b) && h <= 2 * (t2 - t0), "headroom %g s between %g and %g",
		      h, 2 * (t1 - t0b), 2 * (t2 - t0));
	/* a consume that found tuples discarded: come back at once */
	for (int i = 0; i < 150; i++)
		put(1, base + 100 + (uint64_t)i, base + 101 + (uint64_t)i, ES_OP_WRITE);
	ck_assert_int_eq(es_scope_consume(s, out, 256, &missed), 100);
	ck_assert_uint_eq(missed, 50);
	ck_assert(es_scope_headroom(s) == 0);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

START_TEST(in_flight_from_notes)
{
	make_job(100);
	uint64_t now = es_now();
	put(2, now - 100, now - 50, ES_OP_WRITE);
	_Atomic uint64_t *notes = ps_elem_notes(te[2]);
	es_note_call(notes, now, ES_OP_TAKE, 2, 77, 0x1234567890ull);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	struct es_flight f;
	ck_assert_int_eq(es_scope_in_flight(s, 1, &f), 1); /* thread b */
	ck_assert_uint_eq(f.op, ES_OP_TAKE);
	ck_assert_uint_eq(f.element, 2);
	ck_assert_uint_eq(f.arg, 77);
	ck_assert_uint_eq(f.comm, 0x1234567890ull);
	ck_assert_str_eq(es_scope_leaf(s, f.leaf)->meta.where, "b->e2");
	ck_assert_int_eq(es_scope_in_flight(s, 0, &f), 0); /* a: nothing */
	put(2, now, now + 10, ES_OP_TAKE); /* it finished */
	ck_assert_int_eq(es_scope_in_flight(s, 1, &f), 0);
	es_scope_destroy(s);
	drop_job();
}
END_TEST

/* A thread's first collector, or a whole rank, appearing after the scope
 * was made: refresh takes them in, and nothing of theirs is missed. */
START_TEST(refresh_takes_in_late_leaves)
{
	make_job(100);
	uint64_t base = es_space_clock(sp)->raw0;
	put(0, base + 1, base + 2, ES_OP_WRITE);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	struct es_trace out[16];
	uint64_t missed;
	ck_assert_int_eq(es_scope_consume(s, out, 16, &missed), 1);
	ck_assert_int_eq(es_scope_refresh(s), 0); /* nothing new */
	/* a late thread in the same space, and a late second space */
	struct es_meta m = { .element = 9 };
	snprintf(m.thread, sizeof(m.thread), "late");
	uint16_t id;
	ps_elem *late;
	ck_assert_int_eq(es_space_add(sp, &m, 100, false, &id, &late), 0);
	char seg[48];
	snprintf(seg, sizeof(seg), "%s.t1", job);
	ps_shm_unlink(seg);
	es_space *sp2;
	ck_assert_int_eq(es_space_create(seg, 0, &sp2), 0);
	snprintf(m.thread, sizeof(m.thread), "other");
	ps_elem *far;
	ck_assert_int_eq(es_space_add(sp2, &m, 100, false, &id, &far), 0);
	struct es_trace t = tr(base + 10, base + 11, ES_OP_TAKE, 9, 36);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ps_write(late, &t, 0, NULL), 0);
		ck_assert_int_eq(ps_write(far, &t, 0, NULL), 0);
	}
	put(0, base + 20, base + 21, ES_OP_WRITE);
	char known[8][PS_NAME_MAX + 1];
	int nknown = es_scope_threads(s);
	for (int i = 0; i < nknown; i++)
		snprintf(known[i], sizeof(known[i]), "%s", es_scope_thread(s, i));
	ck_assert_int_eq(es_scope_refresh(s), 2);
	ck_assert_int_eq(es_scope_threads(s), 5);
	ck_assert_int_eq(es_scope_width(s), 5);
	/* the threads known keep their numbers (a recorder's events carry
	 * them), though "late" sorts before the second space's */
	for (int i = 0; i < nknown; i++)
		ck_assert_str_eq(es_scope_thread(s, i), known[i]);
	ck_assert_str_eq(es_scope_thread(s, 3), "late");
	ck_assert_str_eq(es_scope_thread(s, 4), "other");
	/* a third, in the first space again: "other" stays 4 */
	snprintf(m.thread, sizeof(m.thread), "later");
	ps_elem *later;
	ck_assert_int_eq(es_space_add(sp, &m, 100, false, &id, &later), 0);
	ck_assert_int_eq(ps_write(later, &t, 0, NULL), 0);
	ck_assert_int_eq(es_scope_refresh(s), 1);
	ck_assert_str_eq(es_scope_thread(s, 4), "other");
	ck_assert_str_eq(es_scope_thread(s, 5), "later");
	for (int i = 0; i < es_scope_leaves(s); i++) /* each leaf under its own thread's number */
		ck_assert_str_eq(es_scope_thread(s, es_scope_leaf(s, i)->thread), es_scope_leaf(s, i)->meta.thread[0] ?
				 es_scope_leaf(s, i)->meta.thread : es_scope_leaf(s, i)->meta.trace);
	/* the old leaf goes on from where it was; the new ones from their start */
	ck_assert_int_eq(es_scope_consume(s, out, 16, &missed), 1 + 3 + 3 + 1);
	ck_assert_uint_eq(missed, 0);
	ps_elem_close(later);
	/* the old leaf goes on from where it was; the new ones from their start */
	struct es_trace beat[6];
	ck_assert_int_eq(es_scope_pull(s, beat), 0);
	es_scope_destroy(s);
	ps_elem_close(late);
	ps_elem_close(far);
	es_space_destroy(sp2);
	ps_shm_unlink(seg);
	drop_job();
}
END_TEST

/* The same job seen from another host: its trace space served by a node
 * daemon, the scope given the server instead of this host's segments. */
START_TEST(remote_scope_sees_what_a_local_one_does)
{
	make_job(8);
	uint64_t base = es_space_clock(sp)->raw0;
	put(0, base + 10, base + 20, ES_OP_WRITE);
	put(1, base + 30, base + 1000, ES_OP_READ);
	put(2, base + 5, base + 6, ES_OP_TAKE);
	for (int i = 0; i < 5; i++)
		put(3, base + 40 + (uint64_t)i, base + 41 + (uint64_t)i, ES_OP_READ);
	struct ps_tcp_attr ta = { .shm_prefix = job };
	ps_tcp *t;
	ck_assert_int_eq(ps_tcp_start(&ta, &t), 0);
	char servers[64];
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", ps_tcp_port(t));
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	es_scope *local, *remote;
	ck_assert_int_eq(es_scope_create(&spec, &local), 0);
	spec.servers = servers;
	spec.runs = PM_RUNS_PROCESS;
	ck_assert_int_eq(es_scope_create(&spec, &remote), PS_EINVAL); /* no helper process */
	for (int runs = PM_RUNS_MONITOR; runs <= PM_RUNS_THREAD; runs++) {
		spec.runs = (enum pm_runs)runs;
		ck_assert_int_eq(es_scope_create(&spec, &remote), 0);
		ck_assert_int_eq(es_scope_leaves(remote), 4);
		ck_assert_int_eq(es_scope_threads(remote), 3);
		char where[128];
		snprintf(where, sizeof(where), "%s/%s.t0", servers, job);
		ck_assert_str_eq(es_scope_leaf(remote, 0)->segment, where);
		struct es_trace a[4], b[4];
		struct ps_tcp_counts c0, c1;
		ck_assert_int_eq(es_scope_pull(local, a), 0);
		ps_tcp_counts(t, &c0);
		ck_assert_int_eq(es_scope_pull(remote, b), 0);
		ps_tcp_counts(t, &c1);
		ck_assert_mem_eq(a, b, sizeof(a)); /* same tuples, same ns */
		ck_assert_uint_eq(c1.frames - c0.frames, 1); /* four leaves, one request */
		es_scope_destroy(remote);
	}
	/* two servers on one machine list the same segments: each is seen once */
	ps_tcp *t2;
	ck_assert_int_eq(ps_tcp_start(&ta, &t2), 0);
	char both[128];
	snprintf(both, sizeof(both), "%s,127.0.0.1:%d", servers, ps_tcp_port(t2));
	spec.servers = both;
	spec.runs = PM_RUNS_MONITOR;
	ck_assert_int_eq(es_scope_create(&spec, &remote), 0);
	ck_assert_int_eq(es_scope_leaves(remote), 4);
	ck_assert_int_eq(es_scope_refresh(remote), 0); /* nothing new */
	es_scope_destroy(remote);
	ps_tcp_stop(t2);
	spec.servers = servers;
	/* consuming every event, and where a thread waits, work remotely too */
	spec.runs = PM_RUNS_MONITOR;
	ck_assert_int_eq(es_scope_create(&spec, &remote), 0);
	struct es_trace ev[16];
	uint64_t missed;
	ck_assert_int_eq(es_scope_consume(remote, ev, 16, &missed), 8);
	ck_assert_uint_eq(missed, 0);
	uint64_t now = es_now();
	es_note_call(ps_elem_notes(te[2]), now, ES_OP_TAKE, 2, 9, 42);
	struct es_flight f;
	ck_assert_int_eq(es_scope_in_flight(remote, 1, &f), 1);
	ck_assert_uint_eq(f.op, ES_OP_TAKE);
	ck_assert_uint_eq(f.arg, 9); /* every word through the server */
	ck_assert_uint_eq(f.comm, 42);
	ck_assert_uint_lt(f.since_ns, 60ull * 1000000000u); /* on this host's clock: not hours off */
	es_scope_destroy(remote);
	es_scope_destroy(local);
	ps_tcp_stop(t);
	drop_job();
}
END_TEST

/* The server a remote scope reads through goes away and comes back (a
 * node daemon restarted): pulls go on, the lost leaves empty and said to be
 * lost, and a consumer that could not start then starts from the backlog,
 * nothing missed. */
START_TEST(remote_scope_outlives_its_server)
{
	make_job(8);
	uint64_t base = es_space_clock(sp)->raw0;
	for (int i = 0; i < 4; i++)
		put(i, base + 10 + (uint64_t)i, base + 20 + (uint64_t)i, ES_OP_WRITE);
	struct ps_tcp_attr ta = { .shm_prefix = job };
	ps_tcp *t;
	ck_assert_int_eq(ps_tcp_start(&ta, &t), 0);
	char servers[64];
	snprintf(servers, sizeof(servers), "127.0.0.1:%d", ps_tcp_port(t));
	ta.port = ps_tcp_port(t);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	spec.servers = servers;
	es_scope *pull, *cons;
	ck_assert_int_eq(es_scope_create(&spec, &pull), 0);
	ck_assert_int_eq(es_scope_create(&spec, &cons), 0);
	struct es_trace b[4], ev[16];
	uint64_t missed = 9;
	ck_assert_int_eq(es_scope_pull(pull, b), 0);
	for (int i = 0; i < 4; i++)
		ck_assert(!es_trace_empty(&b[i]) && !es_scope_leaf_lost(pull, i));
	ps_tcp_stop(t);
	ck_assert_int_eq(es_scope_pull(pull, b), 0); /* not an error: leaves lost */
	ck_assert_int_eq(es_scope_consume(cons, ev, 16, &missed), 0);
	ck_assert_uint_eq(missed, 0);
	for (int i = 0; i < 4; i++) {
		ck_assert(es_trace_empty(&b[i]) && es_scope_leaf_lost(pull, i));
		ck_assert(es_scope_leaf_lost(cons, i));
	}
	ck_assert_int_eq(ps_tcp_start(&ta, &t), 0); /* back, on the same port */
	usleep(300000); /* past the client's pause between reconnects */
	ck_assert_int_eq(es_scope_pull(pull, b), 0);
	for (int i = 0; i < 4; i++)
		ck_assert(!es_trace_empty(&b[i]) && !es_scope_leaf_lost(pull, i));
	ck_assert_int_eq(es_scope_consume(cons, ev, 16, &missed), 4); /* the backlog */
	ck_assert_uint_eq(missed, 0);
	es_scope_destroy(pull);
	es_scope_destroy(cons);
	ps_tcp_stop(t);
	drop_job();
}
END_TEST

START_TEST(spec_from_pathmap)
{
	static const char text[] = "pathmap: 1\nname: j\nscopes:\n"
		"  - { name: s, view: node, fanout: 3, runs: thread, gather: concurrent, "
		"rate_limit_hz: 50, reduce: max }\n";
	char err[256];
	pm_map *m;
	ck_assert_int_eq(pm_load_string("p.yaml", text, strlen(text), &m, err, sizeof(err)), 0);
	struct es_scope_spec spec;
	ck_assert_int_eq(es_scope_spec_from(m, "s", NULL, &spec), 0);
	ck_assert_str_eq(spec.job, "j");
	ck_assert_int_eq(spec.fanout, 3);
	ck_assert_int_eq(spec.runs, PM_RUNS_THREAD);
	ck_assert(spec.concurrent);
	ck_assert(spec.rate_hz == 50);
	ck_assert_int_eq(spec.reduce, ES_REDUCE_MAX);
	ck_assert_int_eq(es_scope_spec_from(m, "t", NULL, &spec), PS_ENOENT);
	pm_destroy(m);
}
END_TEST

Suite *scopes_suite(void)
{
	Suite *s = suite_create("scopes");
	TCase *tc = tcase_create("scopes");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reduce_operations);
	tcase_add_test(tc, wrappers_in_a_tree);
	tcase_add_test(tc, wrapper_parameter_errors);
	tcase_add_test(tc, scope_pulls_per_thread);
	tcase_add_test(tc, consume_counts_exactly);
	tcase_add_test(tc, consume_knows_its_headroom);
	tcase_add_test(tc, in_flight_from_notes);
	tcase_add_test(tc, refresh_takes_in_late_leaves);
	tcase_add_test(tc, remote_scope_sees_what_a_local_one_does);
	tcase_add_test(tc, remote_scope_outlives_its_server);
	tcase_add_test(tc, spec_from_pathmap);
	tcase_add_test(tc, rate_limit_never_runs_ahead);
	suite_add_tcase(s, tc);
	return s;
}
