/* test_paths.c - wrapper registry, parameters, stages, paths, forks, joins and hand-offs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths/internal.h"
#include "paths/paths.h"
#include "tests/unit/suites.h"

/* A test wrapper that logs what it sees before and after forwarding. */
struct logw {
	char tag;
	pthread_t thread; /* who ran the forward */
	int ops;
};
static char oplog[64];
static int oplen;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void note(char c)
{
	pthread_mutex_lock(&log_lock);
	if (oplen < (int)sizeof(oplog) - 1)
		oplog[oplen++] = c;
	oplog[oplen] = 0;
	pthread_mutex_unlock(&log_lock);
}

static int log_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "tag", NULL };
	int rc = paths_params_only(p, known);
	if (rc)
		return rc;
	const char *tag;
	paths_param_str(p, "tag", "x", &tag);
	if (strlen(tag) != 1)
		return paths_params_fail(p, "tag", "tag: expected one character, not '%s'", tag);
	((struct logw *)paths_stage_state(self))->tag = tag[0];
	return 0;
}

static int log_op(paths_stage *self, struct paths_op *op)
{
	struct logw *w = paths_stage_state(self);
	note(w->tag);
	w->thread = pthread_self();
	__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
	int rc = paths_forward(self, op);
	note((char)(w->tag - 'a' + 'A')); /* upper case: after */
	return rc;
}

static const struct paths_wrapper_type log_type = {
	.name = "testlog", .state_size = sizeof(struct logw), .init = log_init, .op = log_op,
};

static struct paths_params params_of(const struct paths_param *v, int n, char *err, size_t len)
{
	return (struct paths_params){ .file = "t.yaml", .line = 3, .col = 5, .v = v, .n = n,
				      .err = err, .errlen = len };
}

static ps_server *srv;

static ps_elem *elem(const char *name, uint32_t thr)
{
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = thr };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(srv, name, &a, &e), 0);
	return e;
}

static paths_stage *logstage(char tag, paths_stage *next)
{
	char t[2] = { tag, 0 };
	struct paths_param kv = { "tag", t, 4, 9 };
	struct paths_params p = params_of(&kv, 1, NULL, 0);
	paths_stage *s;
	ck_assert_int_eq(paths_stage_create("testlog", &p, next, &s), 0);
	paths_stage_release(next); /* s holds it */
	return s;
}

static void setup(void)
{
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	paths_register(&log_type);
	oplen = 0;
	oplog[0] = 0;
}

static void teardown(void)
{
	ps_server_destroy(srv);
}

START_TEST(registry)
{
	ck_assert_ptr_nonnull(paths_lookup("pass"));
	ck_assert_ptr_nonnull(paths_lookup("element"));
	ck_assert_ptr_nonnull(paths_lookup("handoff"));
	ck_assert_ptr_nonnull(paths_lookup("fork"));
	ck_assert_ptr_null(paths_lookup("nosuch"));
	ck_assert_ptr_null(paths_lookup(NULL));
	ck_assert_int_eq(paths_register(&log_type), 0); /* same type again: fine */
	struct paths_wrapper_type clash = log_type;
	ck_assert_int_eq(paths_register(&clash), PS_EEXIST);
	struct paths_wrapper_type bad = { .name = "bad" };
	ck_assert_int_eq(paths_register(&bad), PS_EINVAL);
	ck_assert_int_eq(paths_register(NULL), PS_EINVAL);
}
END_TEST

START_TEST(path_ops_through_stages)
{
	ps_elem *e = elem("e", 4);
	paths_stage *s;
	ck_assert_int_eq(paths_stage_element(e, &s), 0);
	for (int i = 0; i < 3; i++) {
		paths_stage *n;
		ck_assert_int_eq(paths_stage_create("pass", NULL, s, &n), 0);
		paths_stage_release(s);
		s = n;
	}
	paths_path *p;
	ck_assert_int_eq(paths_path_create("t0->e", s, TT_SIZE, &p), 0);
	paths_stage_release(s);
	ck_assert_str_eq(paths_path_name(p), "t0->e");
	uint8_t t[TT_SIZE];
	uint64_t idx, oldest;
	for (uint64_t i = 0; i < 6; i++) {
		tuple_make(t, i, 0, 0);
		ck_assert_int_eq(paths_write(p, t, 0, &idx), 0);
		ck_assert_uint_eq(idx, i);
	}
	ck_assert_int_eq(paths_read(p, 5, t, 0, NULL), 0);
	ck_assert_uint_eq(tuple_idx(t), 5);
	ck_assert_int_eq(paths_read(p, 0, t, 0, &oldest), PS_EDISCARDED);
	ck_assert_uint_eq(oldest, 2);
	ck_assert_int_eq(paths_read(p, 6, t, 10, NULL), PS_ETIMEDOUT);
	ck_assert_int_eq(paths_read_latest(p, t, &idx), 0);
	ck_assert_uint_eq(idx, 5);
	ck_assert_int_eq(paths_take(p, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, 2);
	/* the element saw exactly what went down the path */
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, 6);
	ck_assert_uint_eq(st.taken, 1);
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

START_TEST(before_and_after_forwarding)
{
	ps_elem *e = elem("e", 4);
	paths_stage *s;
	ck_assert_int_eq(paths_stage_element(e, &s), 0);
	s = logstage('b', s);
	s = logstage('a', s);
	paths_path *p;
	ck_assert_int_eq(paths_path_create("p", s, TT_SIZE, &p), 0);
	paths_stage_release(s);
	uint8_t t[TT_SIZE];
	tuple_make(t, 0, 0, 0);
	ck_assert_int_eq(paths_write(p, t, 0, NULL), 0);
	ck_assert_str_eq(oplog, "abBA"); /* outer wraps inner */
	paths_path_destroy(p);
	ps_elem_close(e);
}
END_TEST

START_TEST(parameter_errors)
{
	ps_elem *e = elem("e", 4);
	paths_stage *el, *s;
	ck_assert_int_eq(paths_stage_element(e, &el), 0);
	char err[256] = "";
	struct paths_param unknown = { "speed", "9", 7, 11 };
	struct paths_params p = params_of(&unknown, 1, err, sizeof(err));
	ck_assert_int_eq(paths_stage_create("pass", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:7:11: unknown parameter 'speed' (expected no parameters)");
	ck_assert_int_eq(paths_stage_create("testlog", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:7:11: unknown parameter 'speed' (expected tag)");
	struct paths_param longtag = { "tag", "xy", 8, 12 };
	p = params_of(&longtag, 1, err, sizeof(err));
	ck_assert_int_eq(paths_stage_create("testlog", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:8:12: tag: expected one character, not 'xy'");
	ck_assert_int_eq(paths_stage_create("warp", &p, el, &s), PS_ENOENT);
	ck_assert_str_eq(err, "t.yaml:3:5: unknown wrapper type 'warp'");
	/* integers */
	struct paths_param kv[] = { { "n", "12", 1, 2 }, { "m", "1x", 2, 3 }, { "k", "99", 4, 5 } };
	p = params_of(kv, 3, err, sizeof(err));
	long v;
	ck_assert_int_eq(paths_param_int(&p, "n", 0, 0, 100, &v), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(paths_param_int(&p, "absent", 7, 0, 100, &v), 1);
	ck_assert_int_eq(v, 7);
	ck_assert_int_eq(paths_param_int(&p, "m", 0, 0, 100, &v), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:2:3: m: expected an integer from 0 to 100, not '1x'");
	ck_assert_int_eq(paths_param_int(&p, "k", 0, 0, 50, &v), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:4:5: k: expected an integer from 0 to 50, not '99'");
	/* the element stage survives all the failed attempts */
	paths_stage_release(el);
	ps_elem_close(e);
}
END_TEST

START_TEST(fork_writes_everywhere_reads_gather)
{
	ps_elem *e[3] = { elem("a", 4), elem("b", 4), elem("c", 4) };
	paths_stage *br[3];
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(paths_stage_element(e[i], &br[i]), 0);
	paths_stage *f;
	ck_assert_int_eq(paths_stage_fork(br, 3, &f), 0);
	for (int i = 0; i < 3; i++)
		paths_stage_release(br[i]);
	paths_path *w, *r;
	ck_assert_int_eq(paths_path_create("w", f, TT_SIZE, &w), 0);
	ck_assert_int_eq(paths_path_create("r", f, 3 * TT_SIZE, &r), 0);
	paths_stage_release(f);
	uint8_t t[TT_SIZE], all[3 * TT_SIZE];
	tuple_make(t, 42, 0, 0);
	ck_assert_int_eq(paths_write(w, t, 0, NULL), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(ps_read(e[i], 0, t, 0, NULL), 0);
		ck_assert_uint_eq(tuple_idx(t), 42);
	}
	/* a distinct tuple in each, then one gathering read */
	for (int i = 0; i < 3; i++) {
		tuple_make(t, 100 + (uint64_t)i, 0, 0);
		ck_assert_int_eq(ps_write(e[i], t, 0, NULL), 0);
	}
	ck_assert_int_eq(paths_read_latest(r, all, NULL), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(tuple_idx(all + i * TT_SIZE), 100 + (uint64_t)i);
	ck_assert_int_eq(paths_read(w, 0, t, 0, NULL), PS_ESIZE); /* 1 tuple, 3 branches */
	paths_path_destroy(w);
	paths_path_destroy(r);
	for (int i = 0; i < 3; i++)
		ps_elem_close(e[i]);
}
END_TEST

/* A wrapper that only looks at what came back: it counts its calls and
 * marks the tuple (the seq field + 1000), so a kept answer shows the mark. */
static int afters;

static int mark_after(paths_stage *self, struct paths_op *op, int rc)
{
	(void)self;
	__atomic_add_fetch(&afters, 1, __ATOMIC_RELAXED);
	if (!rc && op->code != PATHS_WRITE) {
		uint32_t seq;
		memcpy(&seq, (char *)op->buf + 12, 4);
		seq += 1000;
		memcpy((char *)op->buf + 12, &seq, 4);
	}
	return rc;
}

static int mark_op(paths_stage *self, struct paths_op *op)
{
	return mark_after(self, op, paths_forward(self, op));
}

static const struct paths_wrapper_type mark_type = {
	.name = "testmark", .op = mark_op, .after = mark_after,
};

/* n elements under a tree of forks (fanout 8), each branch `type` over
 * `pass` over its element. */
static paths_stage *gather_tree(ps_elem **e, int n, const char *type)
{
	paths_stage *st[n];
	for (int i = 0; i < n; i++) {
		paths_stage *el, *pass;
		ck_assert_int_eq(paths_stage_element(e[i], &el), 0);
		ck_assert_int_eq(paths_stage_create("pass", NULL, el, &pass), 0);
		paths_stage_release(el);
		if (!strcmp(type, "testlog")) {
			st[i] = logstage('a', pass);
		} else {
			ck_assert_int_eq(paths_stage_create(type, NULL, pass, &st[i]), 0);
			paths_stage_release(pass);
		}
	}
	size_t below[n]; /* tuples under each */
	for (int i = 0; i < n; i++)
		below[i] = 1;
	while (n > 1) {
		int m = 0;
		for (int g = 0; g < n; g += 8, m++) {
			int k = n - g < 8 ? n - g : 8;
			size_t shares[8], sum = 0;
			for (int j = 0; j < k; j++)
				sum += below[g + j], shares[j] = below[g + j] * TT_SIZE;
			paths_stage *f;
			ck_assert_int_eq(paths_stage_fork_sized(st + g, k, shares, &f), 0);
			for (int j = 0; j < k; j++)
				paths_stage_release(st[g + j]);
			st[m] = f;
			below[m] = sum;
		}
		n = m;
	}
	return st[0];
}

/* A fork over wrappers with afters reads in one sweep what a walk of the
 * tree reads, and runs the afters only for new tuples. */
START_TEST(fork_sweeps_what_is_new)
{
	enum { N = 200 };
	paths_register(&mark_type);
	ps_elem *e[N];
	char name[16];
	uint8_t t[TT_SIZE];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		e[i] = elem(name, 4);
		tuple_make(t, (uint64_t)i, 0, (uint32_t)i);
		ck_assert_int_eq(ps_write(e[i], t, 0, NULL), 0);
	}
	paths_stage *swept = gather_tree(e, N, "testmark");
	paths_stage *walked = gather_tree(e, N, "testlog"); /* no after: walked */
	paths_path *p, *q;
	ck_assert_int_eq(paths_path_create("s", swept, N * TT_SIZE, &p), 0);
	ck_assert_int_eq(paths_path_create("w", walked, N * TT_SIZE, &q), 0);
	paths_stage_release(swept);
	paths_stage_release(walked);
	static uint8_t a[N * TT_SIZE], b[N * TT_SIZE];
	uint64_t idx = 0;
	afters = 0;
	ck_assert_int_eq(paths_read_latest(p, a, &idx), 0);
	ck_assert_int_eq(afters, N);
	ck_assert_int_eq(paths_read_latest(q, b, NULL), 0);
	for (int i = 0; i < N; i++) {
		ck_assert_uint_eq(tuple_idx(a + i * TT_SIZE), (uint64_t)i);
		ck_assert_uint_eq(tuple_seq(a + i * TT_SIZE), (uint32_t)i + 1000);
		ck_assert_uint_eq(tuple_seq(b + i * TT_SIZE), (uint32_t)i);
	}
	/* nothing new: the same answers, afters not run again */
	memset(a, 0, sizeof(a));
	ck_assert_int_eq(paths_read_latest(p, a, NULL), 0);
	ck_assert_int_eq(afters, N);
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(tuple_seq(a + i * TT_SIZE), (uint32_t)i + 1000);
	/* two new tuples: two afters, and the last branch's index */
	tuple_make(t, 5000, 0, 7);
	ck_assert_int_eq(ps_write(e[3], t, 0, NULL), 0);
	tuple_make(t, 6000, 0, 9);
	ck_assert_int_eq(ps_write(e[N - 1], t, 0, NULL), 0);
	ck_assert_int_eq(paths_read_latest(p, a, &idx), 0);
	ck_assert_int_eq(afters, N + 2);
	ck_assert_uint_eq(idx, 1);
	ck_assert_uint_eq(tuple_idx(a + 3 * TT_SIZE), 5000);
	ck_assert_uint_eq(tuple_seq(a + 3 * TT_SIZE), 1007);
	ck_assert_uint_eq(tuple_idx(a + (N - 1) * TT_SIZE), 6000);
	ck_assert_int_eq(paths_read_latest(q, b, NULL), 0);
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(tuple_idx(a + i * TT_SIZE), tuple_idx(b + i * TT_SIZE));
	/* a stage whose after would now give something else: all afresh */
	paths_stage_changed(paths_path_first(p));
	ck_assert_int_eq(paths_read_latest(p, a, NULL), 0);
	ck_assert_int_eq(afters, 2 * N + 2);
	/* the wrong size is refused, as by the walk */
	ck_assert_int_eq(paths_read_latest(p, a, NULL), 0);
	struct paths_op op = { .code = PATHS_READ_LATEST, .buf = a, .size = (N - 1) * TT_SIZE };
	ck_assert_int_eq(paths_run(p, &op), PS_ESIZE);
	paths_path_destroy(p);
	paths_path_destroy(q);
	for (int i = 0; i < N; i++)
		ps_elem_close(e[i]);
}
END_TEST

/* An element with nothing fails the gather as the walk does (the first
 * error), the others still answered; once it has a tuple, all is well. */
START_TEST(fork_sweep_errors)
{
	paths_register(&mark_type);
	ps_elem *e[3] = { elem("a", 4), elem("b", 4), elem("c", 4) };
	uint8_t t[TT_SIZE], all[3 * TT_SIZE];
	tuple_make(t, 1, 0, 1);
	ck_assert_int_eq(ps_write(e[0], t, 0, NULL), 0);
	ck_assert_int_eq(ps_write(e[2], t, 0, NULL), 0);
	paths_stage *f = gather_tree(e, 3, "testmark");
	paths_path *p;
	ck_assert_int_eq(paths_path_create("p", f, 3 * TT_SIZE, &p), 0);
	paths_stage_release(f);
	for (int k = 0; k < 2; k++) { /* the same the second time: no answer kept for b */
		afters = 0;
		memset(all, 0, sizeof(all));
		ck_assert_int_eq(paths_read_latest(p, all, NULL), PS_ENODATA);
		ck_assert_uint_eq(tuple_seq(all), 1001);
		ck_assert_uint_eq(tuple_seq(all + 2 * TT_SIZE), 1001);
		ck_assert_int_eq(afters, k ? 1 : 3);
	}
	ck_assert_int_eq(ps_write(e[1], t, 0, NULL), 0);
	ck_assert_int_eq(paths_read_latest(p, all, NULL), 0);
	ck_assert_uint_eq(tuple_seq(all + TT_SIZE), 1001);
	paths_path_destroy(p);
	for (int i = 0; i < 3; i++)
		ps_elem_close(e[i]);
}
END_TEST

/* Several threads reading through one fork while the elements are
 * written: one has the sweep, the others walk; every answer is whole and
 * no older than one read before it. */
struct sweeper {
	paths_path *p;
	int n;
	bool ok;
};

static void *sweep_often(void *arg)
{
	struct sweeper *s = arg;
	uint8_t buf[16 * TT_SIZE];
	uint64_t last[16] = { 0 };
	s->ok = true;
	for (int k = 0; k < 2000 && s->ok; k++) {
		if (paths_read_latest(s->p, buf, NULL)) {
			s->ok = false;
			break;
		}
		for (int i = 0; i < s->n; i++) {
			uint8_t *t = buf + i * TT_SIZE;
			if (!tuple_ok(t) || tuple_idx(t) < last[i])
				s->ok = false;
			last[i] = tuple_idx(t);
		}
	}
	return NULL;
}

START_TEST(fork_sweep_threads)
{
	paths_register(&mark_type);
	enum { N = 16 };
	ps_elem *e[N];
	char name[16];
	uint8_t t[TT_SIZE];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		e[i] = elem(name, 8);
		tuple_make(t, 0, 0, 0);
		ck_assert_int_eq(ps_write(e[i], t, 0, NULL), 0);
	}
	paths_stage *f = gather_tree(e, N, "pass");
	paths_path *p;
	ck_assert_int_eq(paths_path_create("p", f, N * TT_SIZE, &p), 0);
	paths_stage_release(f);
	struct sweeper s[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		s[i] = (struct sweeper){ .p = p, .n = N };
		ck_assert_int_eq(pthread_create(&th[i], NULL, sweep_often, &s[i]), 0);
	}
	for (uint64_t k = 1; k < 3000; k++) {
		tuple_make(t, k, 0, (uint32_t)k);
		ck_assert_int_eq(ps_write(e[k % N], t, 0, NULL), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		ck_assert(s[i].ok);
	}
	paths_path_destroy(p);
	for (int i = 0; i < N; i++)
		ps_elem_close(e[i]);
}
END_TEST

START_TEST(join_shares_a_stage)
{
	ps_elem *e = elem("e", 8);
	paths_stage *el, *shared, *a, *b;
	ck_assert_int_eq(paths_stage_element(e, &el), 0);
	shared = logstage('s', el);
	ck_assert_int_eq(paths_stage_create("pass", NULL, shared, &a), 0);
	ck_assert_int_eq(paths_stage_create("pass", NULL, shared, &b), 0);
	paths_stage_release(shared); /* a and b hold it */
	paths_path *pa, *pb;
	ck_assert_int_eq(paths_path_create("t0", a, TT_SIZE, &pa), 0);
	ck_assert_int_eq(paths_path_create("t1", b, TT_SIZE, &pb), 0);
	paths_stage_release(a);
	paths_stage_release(b);
	uint8_t t[TT_SIZE];
	tuple_make(t, 1, 0, 0);
	ck_assert_int_eq(paths_write(pa, t, 0, NULL), 0);
	ck_assert_int_eq(paths_write(pb, t, 0, NULL), 0);
	ck_assert_int_eq(((struct logw *)paths_stage_state(shared))->ops, 2);
	paths_path_destroy(pa);
	ck_assert_int_eq(paths_write(pb, t, 0, NULL), 0); /* still alive for pb */
	paths_path_destroy(pb);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, 3);
	ps_elem_close(e);
}
END_TEST

START_TEST(handoff_runs_elsewhere)
{
	ps_elem *e[2] = { elem("a", 4), elem("b", 4) };
	paths_stage *br[2];
	struct logw *w[2];
	for (int i = 0; i < 2; i++) {
		paths_stage *el, *h;
		ck_assert_int_eq(paths_stage_element(e[i], &el), 0);
		el = logstage((char)('p' + i), el);
		w[i] = paths_stage_state(el);
		ck_assert_int_eq(paths_stage_create("handoff", NULL, el, &h), 0);
		paths_stage_release(el);
		br[i] = h;
	}
	paths_stage *f;
	ck_assert_int_eq(paths_stage_fork(br, 2, &f), 0);
	paths_path *r;
	ck_assert_int_eq(paths_path_create("r", f, 2 * TT_SIZE, &r), 0);
	paths_stage_release(f);
	/* Each branch's operation runs in its hand-off's thread, not here,
	 * and the fork starts both before it waits for either. */
	pthread_t self = pthread_self();
	uint8_t t[TT_SIZE], all[2 * TT_SIZE];
	struct paths_op op = { .code = PATHS_READ, .buf = all, .size = sizeof(all),
			       .idx = 0, .timeout_ms = 5000 };
	tuple_make(t, 7, 0, 0);
	ck_assert_int_eq(ps_write(e[0], t, 0, NULL), 0);
	tuple_make(t, 8, 0, 0);
	ck_assert_int_eq(ps_write(e[1], t, 0, NULL), 0);
	ck_assert_int_eq(paths_run(r, &op), 0);
	ck_assert_uint_eq(tuple_idx(all), 7);
	ck_assert_uint_eq(tuple_idx(all + TT_SIZE), 8);
	ck_assert(!pthread_equal(w[0]->thread, self));
	ck_assert(!pthread_equal(w[1]->thread, self));
	ck_assert(!pthread_equal(w[0]->thread, w[1]->thread));
	paths_path_destroy(r);
	for (int i = 0; i < 2; i++) {
		paths_stage_release(br[i]);
		ps_elem_close(e[i]);
	}
}
END_TEST

START_TEST(stage_argument_errors)
{
	ps_elem *e = elem("e", 4);
	paths_stage *el, *s;
	ck_assert_int_eq(paths_stage_element(e, &el), 0);
	ck_assert_int_eq(paths_stage_create("pass", NULL, NULL, &s), PS_EINVAL);
	ck_assert_int_eq(paths_stage_create("element", NULL, el, &s), PS_EINVAL);
	ck_assert_int_eq(paths_stage_create("fork", NULL, el, &s), PS_EINVAL);
	ck_assert_int_eq(paths_stage_element(NULL, &s), PS_EINVAL);
	ck_assert_int_eq(paths_stage_fork(&el, 0, &s), PS_EINVAL);
	paths_path *p;
	ck_assert_int_eq(paths_path_create("p", el, 0, &p), PS_EINVAL);
	ck_assert_int_eq(paths_path_create("p", NULL, 8, &p), PS_EINVAL);
	paths_stage_release(el);
	ps_elem_close(e);
}
END_TEST

/* A path whose element sits behind a tuple server: the remote stage goes
 * there instead of to the element below it. */
START_TEST(remote_stage)
{
	ps_server *far;
	ps_elem *target, *near = elem("near", 4);
	ck_assert_int_eq(ps_server_create_local(&far), 0);
	struct ps_elem_attr a = { .tuple_size = 4, .threshold = 4 };
	ck_assert_int_eq(ps_elem_create(far, "row", &a, &target), 0);
	ps_tcp *t;
	ck_assert_int_eq(ps_tcp_start(NULL, &t), 0);
	ck_assert_int_eq(ps_tcp_add(t, "far", far), 0);
	char at[64], err[256] = "";
	snprintf(at, sizeof(at), "127.0.0.1:%d/far", ps_tcp_port(t));
	paths_stage *el, *s;
	paths_path *path;
	ck_assert_int_eq(paths_stage_element(near, &el), 0);
	struct paths_param kv[] = { { "at", at, 1, 1 } };
	struct paths_params p = params_of(kv, 1, err, sizeof(err));
	p.path = "t0->row"; /* the element, by default: the path's */
	ck_assert_msg(paths_stage_create("remote", &p, el, &s) == 0, "%s", err);
	ck_assert_int_eq(paths_path_create("t0->row", s, 4, &path), 0);
	uint32_t v = 42, got = 0;
	ck_assert_int_eq(paths_write(path, &v, 0, NULL), 0);
	ck_assert_int_eq(ps_read_latest(target, &got, NULL), 0); /* it went to the far one */
	ck_assert_uint_eq(got, 42);
	ck_assert_int_eq(ps_read_latest(near, &got, NULL), PS_ENODATA);
	v = 43;
	ck_assert_int_eq(ps_write(target, &v, 0, NULL), 0);
	ck_assert_int_eq(paths_read_latest(path, &got, NULL), 0);
	ck_assert_uint_eq(got, 43);
	paths_path_destroy(path);
	paths_stage_release(s);
	/* bad places are caught when the stage is made; unreachable ones when used */
	struct paths_param bad[] = { { "at", "nowhere", 2, 7 } };
	p = params_of(bad, 1, err, sizeof(err));
	ck_assert_int_eq(paths_stage_create("remote", &p, el, &s), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:2:7: at: expected HOST:PORT/SEGMENT, got 'nowhere'");
	struct paths_param gone[] = { { "at", "127.0.0.1:1/far", 1, 1 }, { "element", "row", 1, 1 } };
	p = params_of(gone, 2, err, sizeof(err));
	ck_assert_int_eq(paths_stage_create("remote", &p, el, &s), 0);
	ck_assert_int_eq(paths_path_create("x", s, 4, &path), 0);
	ck_assert_int_eq(paths_write(path, &v, 0, NULL), -ECONNREFUSED);
	paths_path_destroy(path);
	paths_stage_release(s);
	paths_stage_release(el);
	ps_tcp_stop(t);
	ps_elem_close(target);
	ps_elem_close(near);
	ps_server_destroy(far);
}
END_TEST

#ifdef ES_DEBUG
/* The stages' invariants (paths/internal.h) hold on every path made (each
 * test here makes them through the check, in the debug builds), and one
 * broken aborts: a pass stage that ends the path (S1). */
START_TEST(stage_invariant_aborts)
{
	ps_elem *e = elem("inv", 4);
	paths_stage *el, *s;
	ck_assert_int_eq(paths_stage_element(e, &el), 0);
	ck_assert_int_eq(paths_stage_create("pass", NULL, el, &s), 0);
	paths__check_stage(s);
	s->next = NULL;
	paths__check_stage(s);
}
END_TEST
#endif

Suite *paths_suite(void)
{
	Suite *s = suite_create("paths");
	TCase *tc = tcase_create("paths");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, registry);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, stage_invariant_aborts, SIGABRT);
#endif
	tcase_add_test(tc, path_ops_through_stages);
	tcase_add_test(tc, before_and_after_forwarding);
	tcase_add_test(tc, parameter_errors);
	tcase_add_test(tc, fork_writes_everywhere_reads_gather);
	tcase_add_test(tc, fork_sweeps_what_is_new);
	tcase_add_test(tc, fork_sweep_errors);
	tcase_add_test(tc, fork_sweep_threads);
	tcase_add_test(tc, join_shares_a_stage);
	tcase_add_test(tc, handoff_runs_elsewhere);
	tcase_add_test(tc, stage_argument_errors);
	tcase_add_test(tc, remote_stage);
	suite_add_tcase(s, tc);
	return s;
}
