/* test_pathmaps.c - pathmap loading: every class of bad pathmap with its message and position, generation, jobs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pathmaps/internal.h"
#include "pathmaps/pathmaps.h"
#include "scopes/scopes.h"
#include "tests/unit/suites.h"

/* A valid pathmap that the error tests change one line of. */
#define HEAD "pathmap: 1\nname: job\n"
#define APP                                                   \
	"application:\n"                                      \
	"  elements:\n"                                       \
	"    - name: a\n"                                     \
	"      tuple_size: 8\n"                               \
	"    - { name: b, tuple_size: 8, threshold: 4 }\n"    \
	"  threads:\n"                                        \
	"    - { name: t0, uses: [a] }\n"                     \
	"    - { name: t1, uses: [a, b] }\n"
#define CLUSTER                                               \
	"cluster:\n"                                          \
	"  hosts:\n"                                          \
	"    - { name: h0, cores: 2 }\n"                      \
	"    - { name: h1, cores: [4, 5] }\n"

static char err[512];

static int load(const char *text, pm_map **m)
{
	err[0] = 0;
	return pm_load_string("t.yaml", text, strlen(text), m, err, sizeof(err));
}

static void bad(const char *text, const char *want)
{
	pm_map *m = NULL;
	ck_assert_int_eq(load(text, &m), PS_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err, want);
}

START_TEST(valid_minimal)
{
	pm_map *m;
	ck_assert_int_eq(load(HEAD APP, &m), 0);
	const struct pm_model *md = pm_model(m);
	ck_assert_str_eq(md->name, "job");
	ck_assert_int_eq(md->nelements, 2);
	ck_assert_int_eq(md->elements[0].threshold, 1);     /* default */
	ck_assert_int_eq(md->elements[0].mode, PS_FLOW);     /* default */
	ck_assert_int_eq(md->elements[1].threshold, 4);
	ck_assert_int_eq(md->nthreads, 2);
	ck_assert_int_eq(md->nhosts, 1);                     /* this host, from hwloc */
	ck_assert(md->hosts[0].from_hwloc);
	ck_assert_int_ge(md->hosts[0].ncores, 1);
	ck_assert_int_eq(md->nprocesses, 1);                 /* one process runs all */
	ck_assert_int_eq(md->npaths, 3);
	ck_assert_int_eq(md->elements[1].place, PM_PROCESS);
	ck_assert_int_eq(md->trace.threshold, 200);
	ck_assert_int_eq(pm_find_thread(m, "t1"), 1);
	ck_assert_int_eq(pm_find_element(m, "zz"), PS_ENOENT);
	pm_destroy(m);
}
END_TEST

START_TEST(syntax_and_top_level)
{
	bad("pathmap: 1\nname: [unclosed\n", "t.yaml:3:1: YAML syntax: did not find expected ',' or ']' while parsing a flow sequence");
	bad("", "t.yaml:1:1: empty pathmap: expected a mapping with pathmap and name");
	bad("- a\n- b\n", "t.yaml:1:1: pathmap: expected a mapping, got a list");
	bad(HEAD APP "colour: blue\n",
	    "t.yaml:11:1: unknown key 'colour' in pathmap (expected pathmap, name, application, "
	    "cluster, mapping, paths, trees, trace, scopes, mpi, servers)");
	bad("name: job\n" APP, "t.yaml:1:1: pathmap: missing required key 'pathmap'");
	bad("pathmap: 2\nname: job\n" APP,
	    "t.yaml:1:10: pathmap (the schema version): expected an integer from 1 to 1, got '2'");
	bad("pathmap: 1\nname: a/b\n" APP,
	    "t.yaml:2:7: name: expected a name of 1 to 32 characters from A-Z a-z 0-9 . _ -, got 'a/b'");
	/* the job's name: the one rule every tool holds it to, at its limit */
	bad("pathmap: 1\nname: abcdefghijklmnopqrstuvwxyz0123456\n" APP,
	    "t.yaml:2:7: name: expected a name of 1 to 32 characters from A-Z a-z 0-9 . _ -, got "
	    "'abcdefghijklmnopqrstuvwxyz0123456'");
	bad("pathmap: 1\nname: -rf\n" APP,
	    "t.yaml:2:7: name: the job's name, expected 1 to 32 characters of A-Z a-z 0-9 . _ -, "
	    "the first a letter or a digit, got '-rf'");
	pm_map *m;
	const char *at32 = "pathmap: 1\nname: abcdefghijklmnopqrstuvwxyz012345\n" APP;
	ck_assert_msg(pm_load_string("t.yaml", at32, strlen(at32), &m, err, sizeof(err)) == 0, "%s", err);
	pm_destroy(m);
	ck_assert(es_job_ok("abcdefghijklmnopqrstuvwxyz012345"));
	ck_assert(!es_job_ok("abcdefghijklmnopqrstuvwxyz0123456"));
	ck_assert(!es_job_ok("..") && !es_job_ok("-rf") && !es_job_ok("") && !es_job_ok(NULL));
	ck_assert(!es_job_ok("a/b") && es_job_ok("lmp-4312") && es_job_ok("9.x_y"));
	bad(HEAD APP "name: again\n", "t.yaml:11:1: pathmap: key 'name' given twice (first at line 2)");
}
END_TEST

START_TEST(mpi_section)
{
	pm_map *m;
	ck_assert_int_eq(load(HEAD "mpi:\n  collect: [collectives, MPI_Send]\n", &m), 0);
	const struct pm_model *md = pm_model(m);
	ck_assert_int_eq(md->nthreads, 0); /* no application map needed */
	ck_assert(md->mpi.given);
	ck_assert_int_eq(md->mpi.ncalls, 2);
	ck_assert_str_eq(md->mpi.calls[1], "MPI_Send");
	ck_assert_int_eq(md->mpi.lines[1], 4);  /* where each word is, for es_mpi_select */
	ck_assert_int_eq(md->mpi.cols[1], 26);
	pm_destroy(m);
	/* the words are libescollect's to check (test_collectors); the
	 * loader wants words */
	bad(HEAD "mpi:\n  collect: [[MPI_Send]]\n",
	    "t.yaml:4:13: mpi collect: expected all, a group of calls or the name of an MPI function, "
	    "got a list");
}
END_TEST

START_TEST(trace_size)
{
	pm_map *m;
	ck_assert_int_eq(load(HEAD "trace:\n  size: 4M\n", &m), 0);
	ck_assert_uint_eq(pm_model(m)->trace.threshold, (4u << 20) / 36);
	ck_assert(pm_model(m)->trace.given);
	pm_destroy(m);
	ck_assert_int_eq(load(HEAD "trace:\n  threshold: 300\n", &m), 0);
	ck_assert_uint_eq(pm_model(m)->trace.threshold, 300);
	pm_destroy(m);
	bad(HEAD "trace:\n  size: 4Q\n",
	    "t.yaml:4:9: trace size: expected bytes per trace element from 36 to 2415919104, as a "
	    "number with K, M or G if you like (4M), got '4Q'");
	bad(HEAD "trace:\n  threshold: 3\n  size: 1K\n",
	    "t.yaml:5:9: trace: threshold (tuples) or size (bytes), not both");
	uint64_t b;
	ck_assert_int_eq(pm_parse_bytes("512K", &b), 0);
	ck_assert_uint_eq(b, 512u << 10);
	ck_assert_int_eq(pm_parse_bytes("2GiB", &b), 0);
	ck_assert_uint_eq(b, 2ull << 30);
	ck_assert_int_eq(pm_parse_bytes("7MB", &b), 0);
	ck_assert_uint_eq(b, 7u << 20);
	ck_assert_int_eq(pm_parse_bytes("123", &b), 0);
	ck_assert_uint_eq(b, 123);
	ck_assert_int_eq(pm_parse_bytes("", &b), PS_EINVAL);
	ck_assert_int_eq(pm_parse_bytes("-1", &b), PS_EINVAL);
	ck_assert_int_eq(pm_parse_bytes("4 M", &b), PS_EINVAL);
	ck_assert_int_eq(pm_parse_bytes("99999999999999999999", &b), PS_EINVAL);
}
END_TEST

START_TEST(unknown_key)
{
	bad(HEAD "application:\n  elements:\n    - { name: a, tuple_size: 8, treshold: 3 }\n"
	    "  threads: []\n",
	    "t.yaml:5:33: unknown key 'treshold' in element (expected name, tuple_size, threshold, mode)");
}
END_TEST

START_TEST(wrong_type)
{
	bad(HEAD "application:\n  elements:\n    - { name: a, tuple_size: big }\n  threads: []\n",
	    "t.yaml:5:30: tuple_size: expected an integer from 1 to 65536, got 'big'");
	bad(HEAD "application:\n  elements: { a: 1 }\n  threads: []\n",
	    "t.yaml:4:13: application.elements: expected a list, got a mapping");
	bad(HEAD "application:\n  elements:\n    - { name: a, tuple_size: 8, mode: fast }\n"
	    "  threads: []\n",
	    "t.yaml:5:39: mode: expected discard or flow, got 'fast'");
	bad(HEAD APP "trees:\n  - { name: r, threads: [t0, t1], collectors: maybe }\n",
	    "t.yaml:12:47: collectors: expected true or false, got 'maybe'");
}
END_TEST

START_TEST(missing_field)
{
	bad(HEAD "application:\n  elements:\n    - { name: a }\n  threads: []\n",
	    "t.yaml:5:7: element: missing required key 'tuple_size'");
	bad(HEAD "application:\n  elements: []\n",
	    "t.yaml:4:3: application: missing required key 'threads'");
}
END_TEST

START_TEST(duplicate_name)
{
	bad(HEAD "application:\n  elements:\n    - { name: a, tuple_size: 8 }\n"
	    "    - { name: a, tuple_size: 16 }\n  threads: []\n",
	    "t.yaml:6:15: duplicate element name 'a' (first defined at line 5)");
	bad(HEAD APP CLUSTER "mapping:\n  processes:\n    - { name: p, threads: [t0] }\n"
	    "    - { name: p, threads: [t1] }\n",
	    "t.yaml:18:15: duplicate process name 'p'");
}
END_TEST

START_TEST(undefined_element)
{
	bad(HEAD "application:\n  elements:\n    - { name: a, tuple_size: 8 }\n"
	    "  threads:\n    - { name: t0, uses: [a, c] }\n",
	    "t.yaml:7:29: thread 't0' uses undefined element 'c': expected the name of an element "
	    "in application.elements");
}
END_TEST

START_TEST(unknown_host)
{
	bad(HEAD APP CLUSTER "mapping:\n  processes:\n    - { name: p, host: h7, threads: [t0, t1] }\n",
	    "t.yaml:17:24: process 'p' is mapped to unknown host 'h7' (expected one of: h0, h1)");
}
END_TEST

START_TEST(missing_core)
{
	bad(HEAD APP CLUSTER
	    "mapping:\n  processes:\n    - { name: p, host: h1, threads: [t0, t1], cores: [4, 6] }\n",
	    "t.yaml:17:58: core 6 does not exist on host 'h1' (its cores: 4 5)");
	bad(HEAD APP CLUSTER
	    "mapping:\n  processes:\n    - { name: p, host: h1, threads: [t0, t1], cores: [4] }\n",
	    "t.yaml:17:54: process 'p': expected one core per thread (2), got 1");
}
END_TEST

START_TEST(mapping_errors)
{
	bad(HEAD APP CLUSTER "mapping:\n  processes:\n    - { name: p, threads: [t0] }\n",
	    "t.yaml:17:5: thread 't1' (line 10) is not mapped to any process: expected it in some "
	    "process's threads");
	bad(HEAD APP CLUSTER "mapping:\n  processes:\n    - { name: p, threads: [t0, t1] }\n"
	    "    - { name: q, threads: [t1] }\n",
	    "t.yaml:18:28: thread 't1' is already mapped to process 'p'");
	bad(HEAD APP CLUSTER "mapping:\n  processes:\n    - { name: p, threads: [t0, t9] }\n",
	    "t.yaml:17:32: process threads: expected the name of a thread, got undefined thread 't9'");
}
END_TEST

START_TEST(paths_and_stages)
{
	bad(HEAD APP "paths:\n  stages: [pass, warp]\n",
	    "t.yaml:12:18: unknown wrapper type 'warp' (expected pass, handoff, remote)");
	bad(HEAD APP "paths:\n  stages: [{ type: pass, speed: 3 }]\n",
	    "t.yaml:12:33: unknown parameter 'speed' (expected no parameters)");
	bad(HEAD APP "paths:\n  custom:\n    - { thread: t0, element: b, stages: [pass] }\n",
	    "t.yaml:13:30: custom path: thread 't0' does not use element 'b' (expected it in the "
	    "thread's uses)");
	bad(HEAD APP "paths:\n  collectors: some\n",
	    "t.yaml:12:15: collectors: expected all, none or a list of THREAD:ELEMENT patterns, got 'some'");
	pm_map *m;
	ck_assert_int_eq(load(HEAD APP "paths:\n  stages: [pass]\n  collectors: ['t1:*']\n"
			      "  custom:\n    - { thread: t1, element: b, stages: [pass, handoff] }\n", &m), 0);
	const struct pm_model *md = pm_model(m);
	ck_assert_int_eq(md->npaths, 3);
	ck_assert(!md->paths[0].collector);                  /* t0:a */
	ck_assert(md->paths[1].collector && md->paths[2].collector);
	ck_assert_int_eq(md->paths[1].nstages, 1);
	ck_assert_int_eq(md->paths[2].nstages, 2);          /* the custom one */
	ck_assert_str_eq(md->paths[2].stages[1].type, "handoff");
	pm_destroy(m);
}
END_TEST

START_TEST(trees_and_scopes)
{
	bad(HEAD APP "trees:\n  - { name: r, threads: [t0, t1], fanout: 3 }\n",
	    "t.yaml:12:43: fanout: expected an integer from 2 to 2, got '3'");
	bad(HEAD APP "trees:\n  - { name: r, threads: [t0, t1], runs_on: { 0: t5 } }\n",
	    "t.yaml:12:49: runs_on: expected a thread of tree 'r', got 't5'");
	bad(HEAD APP "trees:\n  - { name: r, threads: [t0, t1], runs_on: { 1: t1 } }\n",
	    "t.yaml:12:46: runs_on node: expected an integer from 0 to 0, got '1'");
	bad(HEAD APP "scopes:\n  - { name: s, view: galaxy }\n",
	    "t.yaml:12:22: view: expected thread, node, cluster or multi-cluster, got 'galaxy'");
	bad(HEAD APP "scopes:\n  - { name: s, view: thread, of: h0 }\n",
	    "t.yaml:12:34: of: expected the name of a thread, got 'h0'");
	pm_map *m;
	ck_assert_int_eq(load(HEAD APP "trees:\n  - { name: r, threads: [t1, t0], runs_on: { 0: t0 } }\n"
			      "scopes:\n  - { name: s, view: node, fanout: 3, gather: concurrent, "
			      "rate_limit_hz: 2.5, reduce: latest }\n", &m), 0);
	const struct pm_model *md = pm_model(m);
	ck_assert_int_eq(md->trees[0].nnodes, 1);
	ck_assert_int_eq(md->trees[0].runs_on[0], 1);       /* t0 is participant 1 */
	ck_assert_int_eq(md->scopes[0].view, PM_VIEW_NODE);
	ck_assert(md->scopes[0].concurrent);
	ck_assert(md->scopes[0].rate_hz == 2.5);
	ck_assert_str_eq(md->scopes[0].reduce, "latest");
	ck_assert_int_eq(md->scopes[0].nhandlers, 0);
	pm_destroy(m);
}
END_TEST

/* handler: on a scope, one or a list; its form checked, not loaded */
START_TEST(scope_handlers)
{
	bad(HEAD APP "scopes:\n  - { name: s, view: node, handler: count }\n",
	    "t.yaml:12:37: handler: expected LIB.so[:ARGS] (a shared library, es_handler.h; at most 239 "
	    "characters), got 'count'");
	bad(HEAD APP "scopes:\n  - { name: s, view: node, handler: [a.so, b.so, c.so, d.so, e.so] }\n",
	    "t.yaml:12:37: handler: expected LIB.so[:ARGS] or a list of 1 to 4 of them, got 5");
	bad(HEAD APP "scopes:\n  - { name: s, view: node, runs: process, handler: a.so }\n",
	    "t.yaml:12:52: handler: a scope whose nodes run in a helper process (runs: process) cannot have "
	    "one: it runs where the monitor reads (runs: monitor or thread)");
	bad(HEAD APP "scopes:\n  - { name: s, view: node, handler: [a.so, { x: 1 }] }\n",
	    "t.yaml:12:44: handler: expected LIB.so[:ARGS] (a shared library, es_handler.h; at most 239 "
	    "characters), got a mapping");
	pm_map *m;
	ck_assert_int_eq(load(HEAD APP "scopes:\n  - { name: s, view: node, handler: /h/count.so:filter=MPI_* }\n"
			      "  - { name: u, view: node, runs: thread, handler: [a.so, 'b.so:x:y'] }\n", &m), 0);
	const struct pm_model *md = pm_model(m);
	ck_assert_int_eq(md->scopes[0].nhandlers, 1);
	ck_assert_str_eq(md->scopes[0].handlers[0], "/h/count.so:filter=MPI_*");
	ck_assert_int_eq(md->scopes[1].nhandlers, 2);
	ck_assert_str_eq(md->scopes[1].handlers[1], "b.so:x:y");
	struct es_scope_spec spec;
	ck_assert_int_eq(es_scope_spec_from(m, "u", "j", &spec), 0);
	ck_assert_int_eq(spec.nhandlers, 2);
	ck_assert_str_eq(spec.handlers[0], "a.so");
	pm_destroy(m);
}
END_TEST

/* The same application map on three cluster maps: placements follow. */
START_TEST(generator_follows_the_maps)
{
	const char *maps[3] = {
		"",
		CLUSTER "mapping:\n  processes:\n    - { name: p, host: h0, threads: [t0] }\n"
		"    - { name: q, host: h0, threads: [t1] }\n",
		CLUSTER "mapping:\n  processes:\n    - { name: p, host: h0, threads: [t0] }\n"
		"    - { name: q, host: h1, threads: [t1] }\n",
	};
	const enum pm_place want_a[3] = { PM_PROCESS, PM_NODE, PM_REMOTE };
	for (int i = 0; i < 3; i++) {
		char text[2048];
		snprintf(text, sizeof(text), HEAD APP "%s", maps[i]);
		pm_map *m;
		ck_assert_msg(load(text, &m) == 0, "%s", err);
		const struct pm_model *md = pm_model(m);
		ck_assert_int_eq(md->elements[0].place, want_a[i]); /* a: used by t0 and t1 */
		ck_assert_int_eq(md->elements[1].place, PM_PROCESS); /* b: t1 only */
		ck_assert_int_eq(md->elements[1].home, i == 0 ? 0 : 1);
		/* the paths themselves do not change with the cluster map */
		ck_assert_int_eq(md->npaths, 3);
		ck_assert_int_eq(md->paths[1].thread, 1);
		ck_assert_int_eq(md->paths[1].element, 0);
		pm_destroy(m);
	}
}
END_TEST

START_TEST(examples_are_valid)
{
	const char *files[] = { "pathmaps/examples/one-process.yaml",
				"pathmaps/examples/two-processes.yaml",
				"pathmaps/examples/two-hosts.yaml" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		pm_map *m;
		ck_assert_msg(pm_load(files[i], &m, err, sizeof(err)) == 0, "%s", err);
		FILE *null = fopen("/dev/null", "w");
		pm_show(m, null);
		pm_summary(m, null);
		fclose(null);
		pm_destroy(m);
	}
	pm_map *m;
	ck_assert_int_lt(pm_load("no/such/file.yaml", &m, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "no/such/file.yaml: No such file or directory");
	/* a FIFO (ES_PATHMAP=/some/fifo) is refused at once, not waited on */
	char fifo[] = "/tmp/es-pm-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(fifo));
	char name[64];
	snprintf(name, sizeof(name), "%s/p.yaml", fifo);
	ck_assert_int_eq(mkfifo(name, 0600), 0);
	ck_assert_int_lt(pm_load(name, &m, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	unlink(name);
	rmdir(fifo);
}
END_TEST

/* A job in one process: paths carry data, the tree reduces, threads bind. */
struct jt { pm_job *j; const char *name; int me; long sum; int rc; };

static void *job_thread(void *arg)
{
	struct jt *t = arg;
	if ((t->rc = pm_job_bind(t->j, t->name)))
		return NULL;
	paths_member *mb;
	if ((t->rc = paths_member_create(pm_job_tree(t->j, "sum"), t->me, &mb)))
		return NULL;
	int64_t v = t->me + 1, out = 0;
	t->rc = paths_allreduce(mb, &v, &out, 1, PATHS_INT64, PATHS_SUM, 10000);
	t->sum = (long)out;
	paths_member_destroy(mb);
	return NULL;
}

START_TEST(job_in_one_process)
{
	pm_map *m;
	ck_assert_msg(pm_load("pathmaps/examples/one-process.yaml", &m, err, sizeof(err)) == 0, "%s", err);
	pm_job *j;
	ck_assert_msg(pm_job_create(m, "p0", &j, err, sizeof(err)) == 0, "%s", err);
	paths_path *w = pm_job_path(j, "t0", "row.0"), *r = pm_job_path(j, "t1", "row.0");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(pm_job_path(j, "t0", "row.2"));
	char row[256] = "hello row", got[256];
	ck_assert_int_eq(paths_write(w, row, 0, NULL), 0);
	ck_assert_int_eq(paths_take(r, got, 1000, NULL), 0);
	ck_assert_str_eq(got, "hello row");
	struct jt ts[4];
	pthread_t th[4];
	const char *names[4] = { "t0", "t1", "t2", "t3" };
	for (int i = 0; i < 4; i++) {
		ts[i] = (struct jt){ j, names[i], i, 0, -1 };
		pthread_create(&th[i], NULL, job_thread, &ts[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(ts[i].rc, 0);
		ck_assert_int_eq(ts[i].sum, 10);
	}
	ck_assert_int_eq(pm_job_create(m, "p9", &j, err, sizeof(err)) == PS_ENOENT, 1);
	pm_job_destroy(j);
	pm_destroy(m);
}
END_TEST

/* Two processes on one node: the shared row and the tree go through the
 * node's segment; each thread is bound to its core. */
START_TEST(job_in_two_processes)
{
	static const char text[] = HEAD
		"application:\n  elements:\n    - { name: row, tuple_size: 64, threshold: 2 }\n"
		"  threads:\n    - { name: t0, uses: [row] }\n    - { name: t1, uses: [row] }\n"
		"mapping:\n  processes:\n    - { name: p0, threads: [t0], cores: [0] }\n"
		"    - { name: p1, threads: [t1], cores: [0] }\n"
		"trees:\n  - { name: sum, threads: [t0, t1] }\n";
	char name[64];
	snprintf(name, sizeof(name), "j%d", (int)getpid());
	char buf[2048];
	snprintf(buf, sizeof(buf), "%.*sname: %s\n%s", 11, text, name, text + strlen(HEAD));
	pm_map *m;
	ck_assert_msg(load(buf, &m) == 0, "%s", err);
	ck_assert_int_eq(pm_model(m)->elements[0].place, PM_NODE);
	pid_t pid[2];
	for (int p = 0; p < 2; p++) {
		pid[p] = fork();
		if (pid[p] == 0) {
			pm_job *j;
			char e[256];
			const char *proc = p ? "p1" : "p0", *thr = p ? "t1" : "t0";
			if (pm_job_create(m, proc, &j, e, sizeof(e))) {
				fprintf(stderr, "%s\n", e);
				_exit(2);
			}
			if (pm_job_bind(j, thr) || sched_getcpu() != 0)
				_exit(3);
			paths_path *path = pm_job_path(j, thr, "row");
			char row[64] = { 0 };
			if (p == 0) {
				for (int i = 0; i < 100; i++) {
					row[0] = (char)i;
					if (paths_write(path, row, 10000, NULL))
						_exit(4);
				}
			} else {
				for (int i = 0; i < 100; i++)
					if (paths_take(path, row, 10000, NULL) || row[0] != (char)i)
						_exit(5);
			}
			paths_member *mb;
			int64_t v = p + 1, out = 0;
			if (paths_member_create(pm_job_tree(j, "sum"), p, &mb) ||
			    paths_allreduce(mb, &v, &out, 1, PATHS_INT64, PATHS_SUM, 10000) || out != 3)
				_exit(6);
			paths_member_destroy(mb);
			pm_job_destroy(j);
			_exit(0);
		}
	}
	for (int p = 0; p < 2; p++) {
		int st;
		waitpid(pid[p], &st, 0);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", p, st);
	}
	ck_assert_int_eq(pm_job_unlink(m, "p0"), 0);
	pm_destroy(m);
}
END_TEST

/* The keep policy: the pathmap's, ES_KEEP over it, a bad ES_KEEP said in words. */
START_TEST(keep_policy)
{
	pm_map *m;
	ck_assert_msg(load(HEAD "trace: { keep: never }\n", &m) == 0, "%s", err);
	enum ps_keep k;
	char e[256];
	unsetenv("ES_KEEP");
	ck_assert_int_eq(pm_keep(m, &k, e, sizeof(e)), 0);
	ck_assert_int_eq(k, PS_KEEP_NEVER);
	setenv("ES_KEEP", "always", 1);
	ck_assert_int_eq(pm_keep(m, &k, e, sizeof(e)), 0);
	ck_assert_int_eq(k, PS_KEEP_ALWAYS);
	setenv("ES_KEEP", "sometimes", 1);
	ck_assert_int_eq(pm_keep(m, &k, e, sizeof(e)), PS_EINVAL);
	ck_assert_str_eq(e, "ES_KEEP=sometimes: expected " PS_KEEP_RULE);
	unsetenv("ES_KEEP");
	ck_assert_int_eq(pm_keep(NULL, &k, e, sizeof(e)), 0);
	ck_assert_int_eq(k, PS_KEEP_FAILED);
	pm_destroy(m);
	bad(HEAD "trace: { keep: sometimes }\n", "t.yaml:3:16: trace keep: expected failed, always or never, got 'sometimes'");
}
END_TEST

START_TEST(servers_section)
{
	pm_map *m;
	ck_assert_msg(load(HEAD "cluster:\n  hosts:\n    - { name: h0, cores: 1, address: 10.0.0.1 }\n"
			   "servers: { runs: daemon, listen: host, port: 7000, secret_file: /s }\n",
			   &m) == 0, "%s", err);
	const struct pm_model *md = pm_model(m);
	ck_assert(md->servers.given);
	ck_assert_int_eq(md->servers.runs, PM_SERVER_DAEMON);
	ck_assert_int_eq(md->servers.listen, PM_LISTEN_HOST);
	ck_assert_int_eq(md->servers.port, 7000);
	ck_assert_str_eq(md->servers.secret_file, "/s");
	ck_assert_str_eq(md->hosts[0].address, "10.0.0.1");
	ck_assert(pm_needs_servers(m));
	pm_destroy(m);
	ck_assert_int_eq(load(HEAD, &m), 0);
	ck_assert(!pm_model(m)->servers.given);
	ck_assert_int_eq(pm_model(m)->servers.listen, PM_LISTEN_LOOPBACK);
	ck_assert(!pm_needs_servers(m));
	pm_destroy(m);
	bad(HEAD "cluster:\n  hosts:\n    - { name: h0, cores: 1, address: node0 }\n",
	    "t.yaml:5:38: host address: expected an IPv4 address like 10.0.0.2, got 'node0'");
	/* a job's name and a host's together name the host's segment */
	bad("pathmap: 1\nname: abcdefghijklmnopqrstuvwxyz012345\n"
	    "cluster:\n  hosts:\n    - { name: h0123456789abcde, cores: 1 }\n",
	    "t.yaml:5:15: host name 'h0123456789abcde': with the job's name "
	    "'abcdefghijklmnopqrstuvwxyz012345' it makes the host's segment name longer than 47 "
	    "characters");
	bad(HEAD "servers: { listen: any }\n",
	    "t.yaml:3:20: servers listen: a listener off loopback needs secret_file (a file only "
	    "its owner can read, on every host)");
	bad(HEAD "servers: { runs: daemon }\n",
	    "t.yaml:3:18: servers runs: daemon: expected a port, where each host's psadm serve listens");
	bad(HEAD CLUSTER "servers: { listen: host, secret_file: /s }\n",
	    "t.yaml:7:20: servers listen: host: expected an address for every host in the cluster "
	    "map (host 'h0' has none)");
	bad(HEAD "servers: { port: 70000 }\n",
	    "t.yaml:3:18: servers port: expected an integer from 0 to 65535, got '70000'");
	bad(HEAD "servers: { runs: process }\n",
	    "t.yaml:3:18: servers runs: expected thread or daemon, got 'process'");
	/* hosts that are all loopback addresses (one machine) need no secret */
	ck_assert_msg(load(HEAD "cluster:\n  hosts:\n    - { name: h0, cores: 1, address: 127.0.0.1 }\n"
			   "    - { name: h1, cores: 1, address: 127.0.0.2 }\n"
			   "servers: { listen: host }\n", &m) == 0, "%s", err);
	pm_destroy(m);
	bad(HEAD "cluster:\n  hosts:\n    - { name: h0, cores: 1, address: 127.0.0.1 }\n"
	    "    - { name: h1, cores: 1, address: 10.0.0.2 }\n"
	    "servers: { listen: host }\n",
	    "t.yaml:7:20: servers listen: a listener off loopback needs secret_file (a file only "
	    "its owner can read, on every host)");
	/* the secret file itself is this host's business: pm_check_here */
	char path[64], e2[256];
	snprintf(path, sizeof(path), "/tmp/es-pm-sec-%d", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs("s3cret-of-sixteen-letters\n", f);
	fclose(f);
	chmod(path, 0640);
	char text[256];
	snprintf(text, sizeof(text), HEAD "servers: { listen: any, secret_file: %s }\n", path);
	ck_assert_msg(load(text, &m) == 0, "%s", err);
	ck_assert_int_eq(pm_check_here(m, e2, sizeof(e2)), PS_EACCES);
	char want[256];
	snprintf(want, sizeof(want), "t.yaml:3:38: servers secret_file '%s': group or others may "
		 "read or write it (chmod 600 it)", path);
	ck_assert_str_eq(e2, want);
	chmod(path, 0600);
	ck_assert_int_eq(pm_check_here(m, e2, sizeof(e2)), 0);
	unlink(path);
	ck_assert_int_eq(pm_check_here(m, e2, sizeof(e2)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(e2, "No such file or directory"));
	pm_destroy(m);
}
END_TEST

/* What each process of the two-host jobs does: pass rows through the
 * shared element (p0 writes, p1 takes) and allreduce; an exit status. */
static int two_host_work(pm_job *j, int p, int rows)
{
	const char *thr = p ? "t1" : "t0";
	paths_path *path = pm_job_path(j, thr, "row");
	char row[64] = { 0 };
	for (int i = 0; i < rows; i++) {
		row[0] = (char)i;
		if (p == 0 && paths_write(path, row, 10000, NULL))
			return 4;
		if (p == 1 && (paths_take(path, row, 10000, NULL) || row[0] != (char)i))
			return 5;
	}
	paths_member *mb;
	int64_t v = p + 1, out = 0;
	for (int k = 0; k < 3; k++) {
		if (paths_member_create(pm_job_tree(j, "sum"), p, &mb) ||
		    paths_allreduce(mb, &v, &out, 1, PATHS_INT64, PATHS_SUM, 10000) || out != 3)
			return 6;
		paths_member_destroy(mb);
	}
	return 0;
}

/* Two hosts (both this machine, told apart by the pathmap): the shared row
 * lives on h0 and p1 on h1 reaches it through h0's tuple server, found by
 * exchanging addresses at start-up; the tree spans both. */
static int pair_fd;
static int pair_allgather(const void *mine, void *all, size_t len, void *arg)
{
	int me = *(int *)arg;
	memcpy((char *)all + (size_t)me * len, mine, len);
	if (write(pair_fd, mine, len) != (ssize_t)len ||
	    read(pair_fd, (char *)all + (size_t)(1 - me) * len, len) != (ssize_t)len)
		return PS_EINVAL;
	return 0;
}

START_TEST(job_across_two_hosts)
{
	static const char text[] =
		"application:\n  elements:\n    - { name: row, tuple_size: 64, threshold: 2 }\n"
		"  threads:\n    - { name: t0, uses: [row] }\n    - { name: t1, uses: [row] }\n"
		"cluster:\n  hosts:\n    - { name: h0, cores: 1 }\n    - { name: h1, cores: 1 }\n"
		"mapping:\n  processes:\n    - { name: p0, host: h0, threads: [t0] }\n"
		"    - { name: p1, host: h1, threads: [t1] }\n"
		"trees:\n  - { name: sum, threads: [t0, t1] }\n";
	char buf[2048];
	snprintf(buf, sizeof(buf), "pathmap: 1\nname: x%d\n%s", (int)getpid(), text);
	pm_map *m;
	ck_assert_msg(load(buf, &m) == 0, "%s", err);
	ck_assert_int_eq(pm_model(m)->elements[0].place, PM_REMOTE);
	ck_assert_int_eq(pm_model(m)->trees[0].place, PM_REMOTE);
	pm_job *j;
	/* without a port and without an exchange, h1 cannot find h0 */
	pid_t lone = fork();
	if (lone == 0) {
		char e[512];
		int rc = pm_job_create(m, "p1", &j, e, sizeof(e));
		_exit(rc && strstr(e, "port 0 needs the processes to exchange addresses") ? 0 : 1);
	}
	int st;
	waitpid(lone, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "no clear error without an exchange");
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t pid[2];
	for (int p = 0; p < 2; p++) {
		pid[p] = fork();
		if (pid[p] == 0) {
			pair_fd = sv[p];
			int me = p;
			struct pm_job_attr a = { pair_allgather, &me };
			char e[512];
			const char *proc = p ? "p1" : "p0";
			if (pm_job_start(m, proc, &a, &j, e, sizeof(e))) {
				fprintf(stderr, "%s\n", e);
				_exit(2);
			}
			/* both hosts' servers, known to both */
			const char *list = pm_job_servers(j);
			if (!strchr(list, ',') || strncmp(list, "127.0.0.1:", 10))
				_exit(3);
			/* where the row lives, as each says it in a message */
			char where[128], want[128];
			snprintf(want, sizeof(want), "this host's segment %s.h0", pm_model(m)->name);
			if (pm_job_where(j, "row", where, sizeof(where)) ||
			    (p == 0 && strcmp(where, want)) ||
			    (p == 1 && strncmp(where, "host 'h0' (127.0.0.1:", 21)) ||
			    pm_job_where(j, "tree sum", where, sizeof(where)) ||
			    (p == 1 && strncmp(where, "host 'h0' (127.0.0.1:", 21)) ||
			    pm_job_where(j, "nothing", where, sizeof(where)) != PS_ENOENT)
				_exit(8);
			int rc = two_host_work(j, p, 50);
			if (rc)
				_exit(rc);
			/* nobody leaves while the other may still reach its server */
			char done = 1;
			if (write(pair_fd, &done, 1) != 1 || read(pair_fd, &done, 1) != 1)
				_exit(7);
			pm_job_destroy(j);
			_exit(0);
		}
	}
	for (int p = 0; p < 2; p++) {
		waitpid(pid[p], &st, 0);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", p, st);
	}
	close(sv[0]);
	close(sv[1]);
	ck_assert_int_eq(pm_job_unlink(m, "p0"), 0);
	ck_assert_int_eq(pm_job_unlink(m, "p1"), 0);
	pm_destroy(m);
}
END_TEST

/* Two runs of one job on one host never share the host's segment: with the
 * exchange, a process joins only the segment its own run's first process
 * made; without it, only one not over a minute older than itself. */
static char told[256]; /* what the one-process exchange below told */
static int record_allgather(const void *mine, void *all, size_t len, void *arg)
{
	(void)arg;
	memcpy(told, mine, len < sizeof(told) ? len : sizeof(told));
	memcpy(all, mine, len);
	return 0;
}
static int replay_allgather(const void *mine, void *all, size_t len, void *arg)
{
	(void)arg; /* another process's record in slot 0, this one's in slot 1 */
	memcpy(all, told, len);
	memcpy((char *)all + len, mine, len);
	return 0;
}

/* Runs process `proc` of m in a child with the pair exchange on fd (or
 * none for -1); exits 0 if it started, 2 if it was refused as another
 * run's, 3 with its message on stderr for any other failure. */
static pid_t start_child(pm_map *m, const char *proc, int fd, int me, int hold)
{
	pid_t pid = fork();
	if (pid)
		return pid;
	alarm(60); /* a hang fails the test, never blocks it */
	pair_fd = fd;
	struct pm_job_attr a = { pair_allgather, &me };
	pm_job *j;
	char e[512];
	if (pm_job_start(m, proc, fd >= 0 ? &a : NULL, &j, e, sizeof(e))) {
		bool expected = strstr(e, "another run") || strstr(e, "could not start");
		if (!expected) /* an expected error stays out of the log a newcomer reads */
			fprintf(stderr, "%s: %s\n", proc, e);
		_exit(expected ? 2 : 3);
	}
	char c;
	if (hold >= 0 && read(hold, &c, 1) < 0) /* until the test lets it go */
		_exit(4);
	pm_job_destroy(j);
	_exit(0);
}

static int status_of(pid_t pid)
{
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(runs_of_one_job_never_mix)
{
	static const char text[] =
		"application:\n  elements:\n    - { name: row, tuple_size: 64, threshold: 2 }\n"
		"  threads:\n    - { name: t0, uses: [row] }\n    - { name: t1, uses: [row] }\n"
		"mapping:\n  processes:\n    - { name: p0, threads: [t0] }\n"
		"    - { name: p1, threads: [t1] }\n";
	char buf[2048], other[2048], seg[64];
	snprintf(buf, sizeof(buf), "pathmap: 1\nname: r%d\n%s", (int)getpid(), text);
	snprintf(other, sizeof(other), "pathmap: 1\nname: o%d\n%s", (int)getpid(), text);
	pm_map *m, *mo;
	ck_assert_msg(load(buf, &m) == 0, "%s", err);
	ck_assert_msg(load(other, &mo) == 0, "%s", err);
	snprintf(seg, sizeof(seg), "r%d.%s", (int)getpid(), pm_model(m)->hosts[0].name);
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	/* run A: its first process holds the host's segment */
	pid_t a0 = start_child(m, "p0", -1, 0, go[0]);
	struct ps_shm_info info;
	for (int i = 0; i < 3000 && (ps_shm_info(seg, &info) || info.state != PS_SHM_LIVE); i++)
		usleep(10000);
	ck_assert_int_eq(info.creator_pid, a0);
	/* run B, started under a minute later: its first process is refused,
	 * and its second, told so, never joins A's segment */
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid_t b0 = start_child(m, "p0", sv[0], 0, -1), b1 = start_child(m, "p1", sv[1], 1, -1);
	ck_assert_int_eq(status_of(b0), 2);
	ck_assert_int_eq(status_of(b1), 2);
	/* a process told that another process made its segment (here: one that
	 * made the other job's) never joins the one it finds */
	pid_t c1 = fork();
	if (c1 == 0) {
		alarm(60);
		pm_job *jo, *j;
		char e[512];
		struct pm_job_attr rec = { record_allgather, NULL }, rep = { replay_allgather, NULL };
		if (pm_job_start(mo, "p0", &rec, &jo, e, sizeof(e)))
			_exit(5);
		int rc = pm_job_start(m, "p1", &rep, &j, e, sizeof(e));
		pm_job_destroy(jo);
		pm_job_unlink(mo, "p0");
		bool expected = rc == PS_EEXIST && strstr(e, "not by this run's first process");
		if (!expected)
			fprintf(stderr, "%s\n", e);
		_exit(expected ? 0 : 6);
	}
	ck_assert_int_eq(status_of(c1), 0);
	/* without the exchange only age tells: A's segment is not over a
	 * minute older than a process started now, but is than one started
	 * two minutes from now */
	long hz = sysconf(_SC_CLK_TCK);
	ck_assert_int_eq(ps_shm_info(seg, &info), 0);
	ck_assert(info.creator_start == ps_proc_start(a0));
	uint64_t now = ps_proc_start(0) > info.creator_start ? ps_proc_start(0) : info.creator_start;
	ck_assert(!pm__made_before_start(&info, now));
	ck_assert(pm__made_before_start(&info, now + 120 * (uint64_t)hz));
	struct ps_shm_info nothing = { .creator_start = 0 }; /* its creator's start unknown */
	ck_assert(!pm__made_before_start(&nothing, now + 120 * (uint64_t)hz));
	ck_assert(!pm__made_before_start(&info, 0)); /* start unknown */
	/* A ends; run B now starts whole, its second process in its segment */
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	ck_assert_int_eq(status_of(a0), 0);
	int hold[2];
	ck_assert_int_eq(pipe(hold), 0);
	b0 = start_child(m, "p0", sv[0], 0, hold[0]);
	b1 = start_child(m, "p1", sv[1], 1, -1);
	ck_assert_int_eq(status_of(b1), 0);
	ck_assert_int_eq(write(hold[1], "x", 1), 1);
	ck_assert_int_eq(status_of(b0), 0);
	for (int i = 0; i < 2; i++) {
		close(go[i]);
		close(hold[i]);
		close(sv[i]);
	}
	pm_job_unlink(m, "p0");
	pm_destroy(m);
	pm_destroy(mo);
}
END_TEST

/* The first process on a host makes its segment even when only the
 * others use it. */
START_TEST(first_process_makes_the_segment_for_others)
{
	static const char text[] =
		"application:\n  elements:\n    - { name: own, tuple_size: 8 }\n"
		"    - { name: row, tuple_size: 64, threshold: 2 }\n"
		"  threads:\n    - { name: t0, uses: [own] }\n    - { name: t1, uses: [row] }\n"
		"    - { name: t2, uses: [row] }\n"
		"mapping:\n  processes:\n    - { name: p0, threads: [t0] }\n"
		"    - { name: p1, threads: [t1] }\n    - { name: p2, threads: [t2] }\n";
	char buf[2048];
	snprintf(buf, sizeof(buf), "pathmap: 1\nname: f%d\n%s", (int)getpid(), text);
	pm_map *m;
	ck_assert_msg(load(buf, &m) == 0, "%s", err);
	ck_assert_int_eq(pm_model(m)->elements[1].place, PM_NODE);
	int hold[2];
	ck_assert_int_eq(pipe(hold), 0);
	pid_t p0 = start_child(m, "p0", -1, 0, hold[0]);
	pid_t p1 = start_child(m, "p1", -1, 1, -1), p2 = start_child(m, "p2", -1, 2, -1);
	ck_assert_int_eq(status_of(p1), 0);
	ck_assert_int_eq(status_of(p2), 0);
	ck_assert_int_eq(write(hold[1], "x", 1), 1);
	ck_assert_int_eq(status_of(p0), 0);
	close(hold[0]);
	close(hold[1]);
	pm_job_unlink(m, "p0");
	pm_destroy(m);
}
END_TEST

/* A job's trace spaces are named and recognised in one place. */
START_TEST(trace_space_names)
{
	char buf[PS_NAME_MAX + 1];
	enum es_space_kind k;
	int n;
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), "lmp-4312", ES_SPACE_RANK, 17), 0);
	ck_assert_str_eq(buf, "lmp-4312.r17");
	ck_assert(es_space_of(buf, "lmp-4312", &k, &n) && k == ES_SPACE_RANK && n == 17);
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), "wt", ES_SPACE_PROCESS, 0), 0);
	ck_assert_str_eq(buf, "wt.t0");
	ck_assert(es_space_of(buf, "wt", &k, &n) && k == ES_SPACE_PROCESS && n == 0);
	/* not the job's: another job, its host segment, no number, other letters */
	ck_assert(!es_space_of("wt.t0", "w", NULL, NULL));
	ck_assert(!es_space_of("wtx.t0", "wt", NULL, NULL));
	ck_assert(!es_space_of("wt.node0", "wt", NULL, NULL));
	ck_assert(!es_space_of("wt.t", "wt", NULL, NULL));
	ck_assert(!es_space_of("wt.t1a", "wt", NULL, NULL));
	ck_assert(!es_space_of("wt.x1", "wt", NULL, NULL));
	ck_assert(!es_space_of("wt.t1", "", NULL, NULL));
	/* of any job: what follows the last dot */
	ck_assert(es_space_of("lmp-4312.x.r7", NULL, &k, &n) && k == ES_SPACE_RANK && n == 7);
	ck_assert(!es_space_of("wt.node0", NULL, NULL, NULL));
	ck_assert(!es_space_of(".r7", NULL, NULL, NULL)); /* no job at all */
	ck_assert(!es_space_of("r7", NULL, NULL, NULL));
	/* a name that would not fit or is not a segment name is refused */
	char job[PS_NAME_MAX + 1];
	memset(job, 'j', PS_NAME_MAX - 3);
	job[PS_NAME_MAX - 3] = 0;
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), job, ES_SPACE_RANK, 9), 0);
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), job, ES_SPACE_RANK, 10), PS_EBADNAME);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), "a/b", ES_SPACE_RANK, 0), PS_EBADNAME);
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), "a", ES_SPACE_RANK, -1), PS_EBADNAME);
	ck_assert_int_eq(es_space_name(buf, sizeof(buf), "a", (enum es_space_kind)'x', 0), PS_EBADNAME);
}
END_TEST

/* The same two hosts, told apart by their loopback addresses, each served
 * by a node daemon on the pathmap's fixed port: no exchange needed, and a
 * monitor finds the servers from the pathmap alone. */
START_TEST(job_across_daemons)
{
	char secret[64];
	snprintf(secret, sizeof(secret), "/tmp/es-pm-secret-%d", (int)getpid());
	FILE *f = fopen(secret, "w");
	ck_assert_ptr_nonnull(f);
	fputs("pathmap-test-secret\n", f);
	fclose(f);
	chmod(secret, 0600);
	/* a free port on both addresses */
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002) };
	socklen_t sl = sizeof(sin);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	getsockname(fd, (struct sockaddr *)&sin, &sl);
	port = ntohs(sin.sin_port);
	close(fd);
	char buf[2048];
	snprintf(buf, sizeof(buf), "pathmap: 1\nname: y%d\n"
		 "application:\n  elements:\n    - { name: row, tuple_size: 64, threshold: 2 }\n"
		 "  threads:\n    - { name: t0, uses: [row] }\n    - { name: t1, uses: [row] }\n"
		 "cluster:\n  hosts:\n    - { name: h0, cores: 1, address: 127.0.0.1 }\n"
		 "    - { name: h1, cores: 1, address: 127.0.0.2 }\n"
		 "mapping:\n  processes:\n    - { name: p0, host: h0, threads: [t0] }\n"
		 "    - { name: p1, host: h1, threads: [t1] }\n"
		 "trees:\n  - { name: sum, threads: [t0, t1] }\n"
		 "servers: { runs: daemon, listen: host, port: %d, secret_file: %s }\n"
		 "trace: { keep: always }\n" /* h0's segment outlives p0: the read-only daemon below */
		 "scopes:\n  - { name: all, view: cluster, runs: process }\n", (int)getpid(), port, secret);
	pm_map *m;
	ck_assert_msg(load(buf, &m) == 0, "%s", err);
	char list[64];
	snprintf(list, sizeof(list), "127.0.0.1:%d,127.0.0.2:%d", port, port);
	ck_assert_str_eq(pm_model(m)->servers.list, list);
	struct es_scope_spec spec;
	ck_assert_int_eq(es_scope_spec_from(m, "all", NULL, &spec), 0);
	ck_assert_str_eq(spec.servers, list);
	ck_assert_int_eq(spec.runs, PM_RUNS_THREAD); /* no helper process for a remote scope */
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "y%d.", (int)getpid());
	ps_tcp *d0, *d1;
	struct ps_tcp_attr a0 = { .addr = "127.0.0.1", .port = port, .secret_file = secret,
				  .shm_prefix = prefix, .shm_writable = true };
	struct ps_tcp_attr a1 = a0;
	a1.addr = "127.0.0.2";
	ck_assert_int_eq(ps_tcp_start(&a0, &d0), 0);
	ck_assert_int_eq(ps_tcp_start(&a1, &d1), 0);
	pid_t pid[2];
	for (int p = 0; p < 2; p++) {
		pid[p] = fork();
		if (pid[p] == 0) {
			pm_job *j;
			char e[512];
			const char *proc = p ? "p1" : "p0";
			if (pm_job_create(m, proc, &j, e, sizeof(e))) {
				fprintf(stderr, "%s\n", e);
				_exit(2);
			}
			if (strcmp(pm_job_servers(j), list))
				_exit(3);
			int rc = two_host_work(j, p, 20);
			if (rc)
				_exit(rc);
			pm_job_destroy(j);
			_exit(0);
		}
	}
	int st;
	for (int p = 0; p < 2; p++) {
		waitpid(pid[p], &st, 0);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "process %d: status %d", p, st);
	}
	struct ps_tcp_counts c;
	ps_tcp_counts(d0, &c);
	ck_assert_uint_gt(c.frames, 0); /* p1 came through h0's daemon */
	ck_assert_uint_eq(c.refused + c.bad, 0);
	/* h0's daemon started without --writable: p1 is told at start, and how */
	ps_tcp_stop(d0);
	a0.shm_writable = false;
	ck_assert_int_eq(ps_tcp_start(&a0, &d0), 0);
	pid_t ro = fork();
	if (ro == 0) {
		pm_job *j;
		char e[512] = "";
		int rc = pm_job_create(m, "p1", &j, e, sizeof(e));
		_exit(rc == PS_EROFS && strstr(e, "element 'row' on host 'h0'") &&
		      strstr(e, "psadm serve --writable") ? 0 : 1);
	}
	waitpid(ro, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a read-only daemon not explained");
	ps_tcp_stop(d0);
	ps_tcp_stop(d1);
	ck_assert_int_eq(pm_job_unlink(m, "p0"), 0);
	ck_assert_int_eq(pm_job_unlink(m, "p1"), 0);
	pm_destroy(m);
	unlink(secret);
}
END_TEST

/* Issue 15, 1: a key that is not a plain scalar crashed the loader
 * (strcmp on NULL), and through ES_PATHMAP every rank of an MPI program. */
START_TEST(keys_that_are_not_scalars)
{
	pm_map *m = NULL;
	ck_assert_int_eq(load("pathmap: 1\nname: x\ncluster:\n  hosts:\n    - { [a]: 1, name: n, cores: 1 }\n",
			      &m), PS_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "t.yaml:5:9: host: "));
	ck_assert_ptr_nonnull(strstr(err, "expected a key name, got a list"));
	ck_assert_int_eq(load(HEAD APP "paths:\n  stages: [{ {x: 1}: 2, type: pass }]\n", &m), PS_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "stage: expected a parameter name, got a mapping"));
	ck_assert_int_eq(load("pathmap: 1\n? [k]\n: 1\nname: x\n", &m), PS_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.yaml:2:3: "));
}
END_TEST

/* A growing text buffer for the large pathmaps below. */
struct text {
	char *p;
	size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (t->p && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		t->cap = t->cap ? 2 * t->cap + (size_t)k : 1 << 16;
		t->p = realloc(t->p, t->cap);
		ck_assert_ptr_nonnull(t->p);
	}
}

/* Issue 15, 6: pathmaps that took seconds.  Loading is linear in the
 * pathmap's size, and past the limits it is refused with a position. */
START_TEST(large_pathmaps_load_in_linear_time)
{
	pm_map *m = NULL;
	struct text t = { 0 };
	/* 100,000 levels of nesting (18 s inside libyaml): refused at level 33 */
	put(&t, "pathmap: 1\nname: d\napplication:\n  elements: ");
	for (int i = 0; i < 100000; i++)
		put(&t, "[");
	for (int i = 0; i < 100000; i++)
		put(&t, "]");
	put(&t, "\n");
	ck_assert_int_eq(load(t.p, &m), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:4:43: nested deeper than 32 levels: expected a pathmap "
			      "(which needs 6)");
	/* 100,000 elements and threads, the last element named twice:
	 * duplicate checks were quadratic (minutes) */
	t.n = 0;
	enum { N = 100000 };
	put(&t, "pathmap: 1\nname: m\napplication:\n  elements:\n");
	for (int i = 0; i < N; i++)
		put(&t, "    - { name: e%d, tuple_size: 8 }\n", i);
	put(&t, "  threads:\n");
	for (int i = 0; i < N; i++)
		put(&t, "    - { name: t%d, uses: [e%d, e%d] }\n", i, i, (i + 1) % N);
	ck_assert_int_eq(load(t.p, &m), 0);
	ck_assert_int_eq(pm_model(m)->npaths, 2 * N);
	ck_assert_int_eq(pm_find_thread(m, "t99999"), N - 1);
	ck_assert_int_eq(pm_model(m)->elements[7].place, PM_PROCESS);
	pm_destroy(m);
	t.n = 0;
	put(&t, "pathmap: 1\nname: m\napplication:\n  elements:\n");
	for (int i = 0; i < N; i++)
		put(&t, "    - { name: e%d, tuple_size: 8 }\n", i);
	put(&t, "    - { name: e5, tuple_size: 8 }\n  threads: []\n");
	ck_assert_int_eq(load(t.p, &m), PS_EINVAL);
	ck_assert_str_eq(err, "t.yaml:100005:15: duplicate element name 'e5' (first defined at line 10)");
	/* one alias of 2,000 elements used by 2,000 threads (14 s): 4 million
	 * uses, refused past a million where the count crosses it */
	t.n = 0;
	enum { K = 2000 };
	put(&t, "pathmap: 1\nname: a\napplication:\n  elements:\n");
	for (int i = 0; i < K; i++)
		put(&t, "    - { name: e%d, tuple_size: 8 }\n", i);
	put(&t, "  threads:\n    - { name: t0, uses: &all [e0");
	for (int i = 1; i < K; i++)
		put(&t, ", e%d", i);
	put(&t, "] }\n");
	for (int i = 1; i < K; i++)
		put(&t, "    - { name: t%d, uses: *all }\n", i);
	ck_assert_int_eq(load(t.p, &m), PS_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.yaml:2530:7: thread 't524': more than 1048576 uses in all"));
	free(t.p);
}
END_TEST

#ifdef ES_DEBUG
/* The model's invariants hold on every model the loader publishes (every
 * test here loads through them in the debug builds), and one broken
 * aborts, naming it: a thread moved to a process that does not list it. */
START_TEST(model_invariant_aborts)
{
	pm_map *m;
	ck_assert_int_eq(load(HEAD APP, &m), 0);
	pm__model_check(m);
	m->th[1].process = m->model.nprocesses; /* no such process */
	pm__model_check(m);
}
END_TEST
#endif

Suite *pathmaps_suite(void)
{
	Suite *s = suite_create("pathmaps");
	TCase *tc = tcase_create("load");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, valid_minimal);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, model_invariant_aborts, SIGABRT);
#endif
	tcase_add_test(tc, syntax_and_top_level);
	tcase_add_test(tc, unknown_key);
	tcase_add_test(tc, mpi_section);
	tcase_add_test(tc, trace_size);
	tcase_add_test(tc, wrong_type);
	tcase_add_test(tc, missing_field);
	tcase_add_test(tc, duplicate_name);
	tcase_add_test(tc, undefined_element);
	tcase_add_test(tc, unknown_host);
	tcase_add_test(tc, missing_core);
	tcase_add_test(tc, mapping_errors);
	tcase_add_test(tc, paths_and_stages);
	tcase_add_test(tc, trees_and_scopes);
	tcase_add_test(tc, scope_handlers);
	tcase_add_test(tc, generator_follows_the_maps);
	tcase_add_test(tc, examples_are_valid);
	tcase_add_test(tc, job_in_one_process);
	tcase_add_test(tc, job_in_two_processes);
	tcase_add_test(tc, servers_section);
	tcase_add_test(tc, keep_policy);
	tcase_add_test(tc, job_across_two_hosts);
	tcase_add_test(tc, job_across_daemons);
	tcase_add_test(tc, runs_of_one_job_never_mix);
	tcase_add_test(tc, first_process_makes_the_segment_for_others);
	tcase_add_test(tc, trace_space_names);
	tcase_add_test(tc, keys_that_are_not_scalars);
	tcase_add_test(tc, large_pathmaps_load_in_linear_time);
	suite_add_tcase(s, tc);
	return s;
}
