/* test_paths_tree.c - tree shapes and every collective, among threads and among processes, against serial answers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths/internal.h"
#include "paths/paths.h"
#include "tests/unit/suites.h"

#define ROUNDS 12
#define VEC 3
#define SHARE 16

/* What participant p contributes in round r, and what must come out. */
static int64_t ival(int p, int r, int k) { return (int64_t)(p + 1) * 1000 + r * 10 + k - 500; }
static double dval(int p, int r, int k) { return (p * 7 % 5) + 0.25 * r - 0.5 * k; }

/* Runs the whole sequence of collectives as participant `me`; returns the
 * number of wrong answers (0) or a negative error. */
static int run_sequence(paths_member *m, int me, int n)
{
	int bad = 0, rc;
	for (int r = 0; r < ROUNDS; r++) {
		int root = r % n;
		if ((rc = paths_barrier(m, 20000)))
			return rc;
		int64_t iv[VEC], isum[VEC], imin[VEC];
		double dv[VEC], dmax[VEC];
		for (int k = 0; k < VEC; k++) {
			iv[k] = ival(me, r, k);
			dv[k] = dval(me, r, k);
		}
		if ((rc = paths_allreduce(m, iv, isum, VEC, PATHS_INT64, PATHS_SUM, 20000)) ||
		    (rc = paths_allreduce(m, iv, imin, VEC, PATHS_INT64, PATHS_MIN, 20000)) ||
		    (rc = paths_allreduce(m, dv, dmax, VEC, PATHS_DOUBLE, PATHS_MAX, 20000)))
			return rc;
		double dsum[VEC] = { 0 };
		if ((rc = paths_reduce(m, dv, dsum, VEC, PATHS_DOUBLE, PATHS_SUM, root, 20000)))
			return rc;
		for (int k = 0; k < VEC; k++) {
			int64_t s = 0, mn = INT64_MAX;
			double mx = -1e300, ds = 0;
			for (int p = 0; p < n; p++) {
				s += ival(p, r, k);
				mn = ival(p, r, k) < mn ? ival(p, r, k) : mn;
				mx = dval(p, r, k) > mx ? dval(p, r, k) : mx;
				ds += dval(p, r, k);
			}
			bad += isum[k] != s;
			bad += imin[k] != mn;
			bad += dmax[k] != mx;
			/* sums of quarters are exact in any order */
			if (me == root)
				bad += dsum[k] != ds;
		}
		/* bcast */
		char msg[SHARE];
		memset(msg, 0, sizeof(msg));
		if (me == root)
			snprintf(msg, sizeof(msg), "r%d from %d", r, root);
		if ((rc = paths_bcast(m, msg, sizeof(msg), root, 20000)))
			return rc;
		char want[SHARE];
		memset(want, 0, sizeof(want));
		snprintf(want, sizeof(want), "r%d from %d", r, root);
		bad += memcmp(msg, want, SHARE) != 0;
		/* gather and scatter */
		char mine[SHARE], all[SHARE * 64], back[SHARE];
		memset(mine, 'a' + me % 26, sizeof(mine));
		mine[0] = (char)r;
		if ((rc = paths_gather(m, mine, SHARE, all, root, 20000)))
			return rc;
		if (me == root)
			for (int p = 0; p < n; p++)
				bad += all[p * SHARE] != (char)r || all[p * SHARE + 1] != 'a' + p % 26;
		if (me == root)
			for (int p = 0; p < n; p++)
				memset(all + p * SHARE, 'A' + (p + r) % 26, SHARE);
		if ((rc = paths_scatter(m, all, SHARE, back, root, 20000)))
			return rc;
		for (int i = 0; i < SHARE; i++)
			bad += back[i] != 'A' + (me + r) % 26;
	}
	return bad;
}

struct part {
	paths_tree *t;
	int me, n, result;
};

static void *participant(void *arg)
{
	struct part *p = arg;
	paths_member *m;
	p->result = paths_member_create(p->t, p->me, &m);
	if (p->result == 0) {
		p->result = run_sequence(m, p->me, p->n);
		paths_member_destroy(m);
	}
	return NULL;
}

static void threads_run(int n, int fanout, const int *runs_on, int nstages)
{
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	const char *types[2] = { "pass", "pass" };
	struct paths_tree_spec spec = { .name = "t", .nparticipants = n, .fanout = fanout,
					.max_bytes = SHARE * 64, .server = srv,
					.runs_on = runs_on, .nstages = nstages,
					.stage_types = types };
	paths_tree *t;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	struct part ps[64];
	pthread_t th[64];
	for (int i = 0; i < n; i++) {
		ps[i] = (struct part){ t, i, n, -1 };
		pthread_create(&th[i], NULL, participant, &ps[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(ps[i].result == 0, "n=%d fanout=%d participant %d: %d (%s)", n,
			      fanout, i, ps[i].result,
			      ps[i].result < 0 ? ps_strerror(ps[i].result) : "wrong answers");
	}
	paths_tree_destroy(t);
	ps_server_destroy(srv);
}

START_TEST(shapes)
{
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct paths_tree_spec spec = { .name = "s", .nparticipants = 8, .fanout = 2,
					.max_bytes = 8, .server = srv };
	paths_tree *t;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	ck_assert_int_eq(paths_tree_nodes(t), 7);
	const struct paths_tree_node *root = paths_tree_node(t, 6);
	ck_assert_int_eq(root->parent, -1);
	ck_assert_int_eq(root->first, 0);
	ck_assert_int_eq(root->last, 7);
	ck_assert_int_eq(root->nchildren, 2);
	const struct paths_tree_node *n0 = paths_tree_node(t, 0);
	ck_assert_int_eq(n0->children[0], -1 - 0);
	ck_assert_int_eq(n0->children[1], -1 - 1);
	ck_assert_int_eq(n0->parent, 4);
	ck_assert_int_eq(paths_tree_node(t, 3)->runs_on, 6);
	ck_assert_ptr_null(paths_tree_node(t, 7));
	paths_tree_destroy(t);

	spec.name = "s5";
	spec.nparticipants = 5;
	spec.fanout = 3;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	ck_assert_int_eq(paths_tree_nodes(t), 3);
	ck_assert_int_eq(paths_tree_node(t, 1)->nchildren, 2);
	ck_assert_int_eq(paths_tree_node(t, 1)->first, 3);
	paths_tree_destroy(t);

	spec.name = "s1";
	spec.nparticipants = 1;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	ck_assert_int_eq(paths_tree_nodes(t), 1);
	paths_tree_destroy(t);
	ps_server_destroy(srv);
}
END_TEST

START_TEST(spec_errors)
{
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct paths_tree_spec spec = { .name = "e", .nparticipants = 4, .fanout = 2,
					.max_bytes = 8, .server = srv };
	paths_tree *t;
	spec.fanout = 1;
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_EINVAL);
	spec.fanout = 5;
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_EINVAL);
	spec.fanout = 2;
	spec.nparticipants = 0;
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_EINVAL);
	spec.nparticipants = 4;
	spec.name = "a-tree-name-that-is-too-long-for-elements";
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_EBADNAME);
	spec.name = "e";
	int bad_runs[3] = { 0, 9, -1 };
	spec.runs_on = bad_runs;
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_EINVAL);
	spec.runs_on = NULL;
	const char *types[1] = { "nosuch" };
	spec.nstages = 1;
	spec.stage_types = types;
	ck_assert_int_eq(paths_tree_create(&spec, &t), PS_ENOENT);
	spec.nstages = 0;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	paths_member *m;
	ck_assert_int_eq(paths_member_create(t, 4, &m), PS_EINVAL);
	ck_assert_int_eq(paths_member_create(t, 0, &m), 0);
	char big[64];
	ck_assert_int_eq(paths_gather(m, big, 8, big, 0, 0), PS_ESIZE); /* 4 x 8 > 8 */
	ck_assert_int_eq(paths_bcast(m, big, 8, 4, 0), PS_EINVAL);
	ck_assert_int_eq(paths_allreduce(m, big, big, 1, 7, PATHS_SUM, 0), PS_EINVAL);
	paths_member_destroy(m);
	paths_tree_destroy(t);
	ps_server_destroy(srv);
}
END_TEST

START_TEST(collectives_among_threads)
{
	static const int ns[] = { 1, 2, 3, 5, 8 };
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int n = ns[i];
		threads_run(n, 2, NULL, 0);
		if (n > 2) {
			threads_run(n, 3 < n ? 3 : n, NULL, 1);
			threads_run(n, n, NULL, 0); /* flat: one node */
		}
	}
}
END_TEST

START_TEST(collectives_with_placement)
{
	/* 8 participants, fanout 2: nodes 0-3 at the bottom, 4-5, root 6.
	 * Run every node on the last participant of its subtree instead. */
	int last[7] = { 1, 3, 5, 7, 3, 7, 7 };
	threads_run(8, 2, last, 2);
	/* and the middle ones somewhere inside */
	int mixed[7] = { -1, 2, -1, 6, 1, 5, 3 };
	threads_run(8, 2, mixed, 0);
}
END_TEST

START_TEST(collectives_among_processes)
{
	char seg[64];
	TEST_SEG(seg, "tree");
	ps_shm_unlink(seg);
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &srv), 0);
	enum { N = 4 };
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			ps_server *s;
			paths_tree *t;
			paths_member *m;
			struct paths_tree_spec spec = { .name = "pt", .nparticipants = N,
							.fanout = 2, .max_bytes = SHARE * 64 };
			if (ps_server_open_shm(seg, PS_RDWR, &s))
				_exit(10);
			spec.server = s;
			if (paths_tree_create(&spec, &t) || paths_member_create(t, i, &m))
				_exit(11);
			int r = run_sequence(m, i, N);
			paths_member_destroy(m);
			paths_tree_destroy(t);
			ps_server_destroy(s);
			_exit(r == 0 ? 0 : r < 0 ? 12 : 13);
		}
	}
	for (int i = 0; i < N; i++) {
		int st;
		ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", i, st);
	}
	ps_server_destroy(srv);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

struct odd { paths_tree *t; int me; int rc; };

static void *mismatched(void *arg)
{
	struct odd *o = arg;
	paths_member *m;
	if ((o->rc = paths_member_create(o->t, o->me, &m)))
		return NULL;
	int64_t v = 1, out;
	if (o->me == 0)
		o->rc = paths_barrier(m, 300);
	else if (o->me == 1)
		o->rc = paths_allreduce(m, &v, &out, 1, PATHS_INT64, PATHS_SUM, 300);
	/* participant 2 never comes */
	if (o->rc)
		o->rc = o->rc == paths_barrier(m, 0) ? o->rc : 1; /* stays failed */
	paths_member_destroy(m);
	return NULL;
}

START_TEST(mismatch_and_timeout)
{
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct paths_tree_spec spec = { .name = "m", .nparticipants = 3, .fanout = 3,
					.max_bytes = 8, .server = srv };
	paths_tree *t;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	struct odd o[2] = { { t, 0, 0 }, { t, 1, 0 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, mismatched, &o[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* 0 runs the node: it sees 1's allreduce where it expected a barrier. */
	ck_assert_int_eq(o[0].rc, PS_EINVAL);
	ck_assert_int_eq(o[1].rc, PS_ETIMEDOUT);
	paths_tree_destroy(t);
	ps_server_destroy(srv);
}
END_TEST

/* A tree's element names are made and read back in one place. */
START_TEST(tree_element_names)
{
	char buf[64], tree[32];
	int node, child;
	ck_assert_int_eq(paths_tree_elem_name(buf, sizeof(buf), "stats", PATHS_TREE_UP, 3, 1), 0);
	ck_assert_str_eq(buf, "stats.n3.c1");
	ck_assert(paths_tree_edge_of(buf, tree, sizeof(tree), &node, &child));
	ck_assert_str_eq(tree, "stats");
	ck_assert(node == 3 && child == 1);
	ck_assert_int_eq(paths_tree_elem_name(buf, sizeof(buf), "stats", PATHS_TREE_DOWN, 12, 0), 0);
	ck_assert_str_eq(buf, "stats.n12.d");
	ck_assert(!paths_tree_edge_of(buf, tree, sizeof(tree), &node, &child));
	ck_assert_int_eq(paths_tree_elem_name(buf, sizeof(buf), "stats", PATHS_TREE_RESULT, 0, 0), 0);
	ck_assert_str_eq(buf, "stats.r");
	ck_assert(!paths_tree_edge_of(buf, tree, sizeof(tree), &node, &child));
	/* a tree named with dots; a long name cut to the buffer */
	ck_assert(paths_tree_edge_of("a.b.n10.c20", tree, sizeof(tree), &node, &child));
	ck_assert_str_eq(tree, "a.b");
	ck_assert(node == 10 && child == 20);
	ck_assert(paths_tree_edge_of("abcdef.n0.c0", tree, 4, &node, &child));
	ck_assert_str_eq(tree, "abc");
	/* not an edge up */
	ck_assert(!paths_tree_edge_of("t.n1.c", tree, sizeof(tree), &node, &child));
	ck_assert(!paths_tree_edge_of("t.n.c1", tree, sizeof(tree), &node, &child));
	ck_assert(!paths_tree_edge_of("n1.c1", tree, sizeof(tree), &node, &child));
	ck_assert(!paths_tree_edge_of("t.x1.c1", tree, sizeof(tree), &node, &child));
	ck_assert(!paths_tree_edge_of("", tree, sizeof(tree), &node, &child));
	ck_assert_int_eq(paths_tree_elem_name(buf, 8, "stats", PATHS_TREE_UP, 3, 1), PS_EBADNAME);
	ck_assert_str_eq(buf, "");
}
END_TEST

/* The shape computed without a tree is the shape of the tree made. */
START_TEST(shape_without_a_tree)
{
	struct paths_tree_node nd[16];
	int children[32];
	/* 5 participants, fanout 2: (0 1) (2 3) (4), then (n0 n1) (n2), then the root */
	ck_assert_int_eq(paths_tree_shape(5, 2, NULL, NULL, 0), 6);
	ck_assert_int_eq(paths_tree_shape(5, 2, nd, children, 16), 6);
	ck_assert_int_eq(nd[0].nchildren, 2);
	ck_assert(nd[0].children[0] == -1 && nd[0].children[1] == -2);
	ck_assert(nd[2].nchildren == 1 && nd[2].children[0] == -5);
	ck_assert(nd[3].children[0] == 0 && nd[3].children[1] == 1);
	ck_assert(nd[4].nchildren == 1 && nd[4].children[0] == 2);
	ck_assert(nd[0].parent == 3 && nd[2].parent == 4 && nd[4].parent == 5 && nd[5].parent == -1);
	ck_assert(nd[5].first == 0 && nd[5].last == 4 && nd[4].first == 4 && nd[4].runs_on == 4);
	ck_assert_int_eq(paths_tree_shape(1, 0, nd, children, 16), 1); /* fanout ignored */
	ck_assert(nd[0].nchildren == 1 && nd[0].children[0] == -1 && nd[0].parent == -1);
	ck_assert_int_eq(paths_tree_shape(5, 2, nd, children, 5), PS_EINVAL); /* no room */
	ck_assert_int_eq(paths_tree_shape(5, 1, NULL, NULL, 0), PS_EINVAL);
	ck_assert_int_eq(paths_tree_shape(0, 2, NULL, NULL, 0), PS_EINVAL);
	/* against trees made, of several sizes */
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	for (int n = 1; n <= 9; n++)
		for (int f = 2; f <= (n < 2 ? 2 : n); f++) {
			char name[16];
			snprintf(name, sizeof(name), "sh%d.%d", n, f);
			struct paths_tree_spec spec = { .name = name, .nparticipants = n, .fanout = f,
							.max_bytes = 64, .server = srv };
			paths_tree *t;
			ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
			int k = paths_tree_shape(n, f, nd, children, 16);
			ck_assert_int_eq(k, paths_tree_nodes(t));
			for (int i = 0; i < k; i++) {
				const struct paths_tree_node *tn = paths_tree_node(t, i);
				ck_assert(tn->parent == nd[i].parent && tn->nchildren == nd[i].nchildren &&
					  tn->first == nd[i].first && tn->last == nd[i].last &&
					  tn->runs_on == nd[i].runs_on);
				for (int j = 0; j < tn->nchildren; j++)
					ck_assert_int_eq(tn->children[j], nd[i].children[j]);
			}
			paths_tree_destroy(t);
		}
	ps_server_destroy(srv);
}
END_TEST

#ifdef ES_DEBUG
/* The tree's invariants (paths/internal.h) hold on every tree built (each
 * test here builds through the check, in the debug builds), and one
 * broken aborts: a node that names the wrong parent (T2). */
START_TEST(tree_invariant_aborts)
{
	ps_server *srv;
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct paths_tree_spec spec = { .name = "inv", .nparticipants = 8, .fanout = 2, .max_bytes = 8, .server = srv };
	paths_tree *t;
	ck_assert_int_eq(paths_tree_create(&spec, &t), 0);
	paths__check_tree(t);
	((struct paths_tree_node *)paths_tree_node(t, 0))->parent = 5; /* its parent is 4 */
	paths__check_tree(t);
}
END_TEST
#endif

Suite *paths_tree_suite(void)
{
	Suite *s = suite_create("paths_tree");
	TCase *tc = tcase_create("tree");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, shapes);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, tree_invariant_aborts, SIGABRT);
#endif
	tcase_add_test(tc, spec_errors);
	tcase_add_test(tc, collectives_among_threads);
	tcase_add_test(tc, collectives_with_placement);
	tcase_add_test(tc, collectives_among_processes);
	tcase_add_test(tc, mismatch_and_timeout);
	tcase_add_test(tc, tree_element_names);
	tcase_add_test(tc, shape_without_a_tree);
	suite_add_tcase(s, tc);
	return s;
}
