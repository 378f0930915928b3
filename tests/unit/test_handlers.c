/* test_handlers.c - handlers loaded into a monitor (monitors/handlers.c): libraries refused with why, events counted exactly, a handler loaded twice with its own state, one whose process fails stopped and said, a queue that overflows counted, never waited on. */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitors/handlers.h"
#include "tests/unit/suites.h"

/* build/FLAVOUR/..., from this test's own path (build/FLAVOUR/tests/unit) */
static void built(char *out, size_t len, const char *rel)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(n, 0);
	self[n] = 0;
	*strrchr(self, '/') = 0; /* tests */
	*strrchr(self, '/') = 0; /* build/FLAVOUR */
	snprintf(out, len, "%s/%s", self, rel);
}

static mh_set *start(const char *spec, const char *spec2)
{
	char job[32];
	snprintf(job, sizeof(job), "th%d", (int)getpid());
	mh_nspecs = 0;
	mh_specs[mh_nspecs++] = spec;
	if (spec2)
		mh_specs[mh_nspecs++] = spec2;
	mh_set *m = NULL;
	char err[400];
	ck_assert_msg(mh_start("t", job, &m, err, sizeof(err)) == 0, "%s", err);
	mh_nspecs = 0;
	return m;
}

static char *stop(mh_set *m)
{
	static char *text; /* static: gcc takes what a memstream returns for a pointer into this frame */
	static size_t len;
	text = NULL, len = 0;
	FILE *f = open_memstream(&text, &len);
	mh_stop(m, f);
	fclose(f);
	return text;
}

START_TEST(libraries_refused_with_why)
{
	char lib[PATH_MAX + 32], err[400];
	mh_set *m = NULL;
	mh_nspecs = 1;
	mh_specs[0] = "/nonexistent/h.so";
	ck_assert_int_eq(mh_start("t", "j", &m, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/h.so: ") != NULL, "%s", err);
	ck_assert_ptr_null(m);
	Dl_info libm; /* a library, not a handler: libm, by its path */
	ck_assert(dladdr((void *)(uintptr_t)cos, &libm) && libm.dli_fname);
	mh_specs[0] = libm.dli_fname;
	ck_assert_int_eq(mh_start("t", "j", &m, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "no es_handler_entry(): not a handler"), "%s", err);
	built(lib, sizeof(lib), "lib/handlers/msgsize.so:oops");
	mh_specs[0] = lib;
	ck_assert_int_eq(mh_start("t", "j", &m, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "takes no arguments (got 'oops')"), "%s", err);
	mh_nspecs = 0;
	ck_assert_int_eq(mh_start("t", "j", &m, err, sizeof(err)), 0);
	ck_assert_ptr_null(m); /* none asked for */
	mh_feed(NULL, NULL, NULL, 0);
	mh_stop(NULL, stderr);
}
END_TEST

static struct es_handler_event ev(const char *op, uint32_t code, int rank, uint64_t bytes, uint32_t flags)
{
	return (struct es_handler_event){ .op = op, .code = code, .rank = rank, .bytes = bytes, .flags = flags,
					  .comm = 0, .thread_name = "rank0.thread0" };
}

START_TEST(counted_exactly_twice)
{
	char count[PATH_MAX + 64], all[PATH_MAX + 64], sizes[PATH_MAX + 64];
	built(count, sizeof(count), "lib/handlers/count.so:filter=MPI_Send,MPI_Wait*");
	built(all, sizeof(all), "lib/handlers/count.so");
	mh_set *m = start(count, all);
	built(sizes, sizeof(sizes), "lib/handlers/msgsize.so");
	char err[400];
	ck_assert_msg(mh_load(m, sizes, err, sizeof(err)) == 0, "%s", err);
	struct es_handler_event e[] = { ev("MPI_Send", 10, 0, 100, 0), ev("MPI_Waitall", 11, 0, 0, 0),
					ev("MPI_Recv", 12, 1, 100, 0), ev("MPI_Send", 10, 1, 3000, 0),
					ev("MPI_Isend", 13, 1, 0, 0), ev("MPI_Isend", 13, 1, 0, ES_HANDLER_DONE) };
	for (int i = 0; i < 1000; i++)
		mh_give(m, e, sizeof(e) / sizeof(e[0]));
	char *said = stop(m);
	ck_assert_msg(strstr(said, "{\"events\":6000,\"counted\":3000,\"by_call\":{\"MPI_Send\":2000,\"MPI_Waitall\":1000}}"),
		      "%s", said);
	ck_assert_msg(strstr(said, "\"counted\":6000,\"by_call\":{\"MPI_Send\":2000,\"MPI_Waitall\":1000,"
				   "\"MPI_Recv\":1000,\"MPI_Isend\":2000}}"), "%s", said);
	/* sends counted at the send, not at their completion; by (rank, communicator) */
	ck_assert_msg(strstr(said, "{\"messages\":3000,\"uncounted\":0,\"comms\":[{\"rank\":0,\"comm\":0,"
				   "\"bytes_up_to\":{\"128\":1000}},{\"rank\":1,\"comm\":0,\"bytes_up_to\":{\"0\":1000,"
				   "\"4096\":1000}}]}"), "%s", said);
	free(said);
}
END_TEST

START_TEST(failing_stopped_slow_counted)
{
	char fail[PATH_MAX + 64], slow[PATH_MAX + 64];
	built(fail, sizeof(fail), "tests/handler_test.so:fail=10");
	built(slow, sizeof(slow), "tests/handler_test.so:slow=200");
	mh_set *m = start(fail, NULL);
	struct es_handler_event e[4096];
	for (int i = 0; i < 4096; i++)
		e[i] = ev("MPI_Send", 10, 0, 8, 0);
	/* the failing one given its events and, however slow the machine,
	 * stopped (mh_settle ends there; its bound only guards a hang) */
	mh_give(m, e, 4096);
	mh_settle(m, 60000);
	char err[400];
	ck_assert_msg(mh_load(m, slow, err, sizeof(err)) == 0, "%s", err);
	/* far more than a queue holds while the slow one sleeps: never waited on */
	for (int i = 0; i < 40; i++)
		mh_give(m, e, 4096);
	char *said = stop(m);
	ck_assert_msg(strstr(said, "tests/handler_test.so:fail=10) (stopped): {\"events\":"), "%s", said);
	/* the slow one, busy, is not waited for: its last answer missed, and
	 * said so; what was given it plus what was not: every event */
	ck_assert_msg(strstr(said, "tests/handler_test.so:slow=200): no last answer (busy or hung: not waited for)"),
		      "%s", said);
	const char *p = strstr(said, "slow=200): ");
	unsigned long long lost = 0, given = 0;
	for (; p; p = strstr(p + 1, "slow=200): ")) {
		unsigned long long v = strtoull(p + strlen("slow=200): "), NULL, 10);
		const char *eol = strchr(p, '\n'), *a = strstr(p, "events not given to it (it fell behind)"),
			   *b = strstr(p, "events given to it, ");
		if (a && a < eol)
			lost = v;
		else if (b && b < eol)
			given = v;
	}
	ck_assert_msg(lost > 0 && given > 0, "%s", said);
	ck_assert_uint_eq(given + lost, 40 * 4096);
	free(said);
}
END_TEST

/* A handler that crashes, aborts or hangs costs its monitor nothing but
 * itself: each runs in a process of its own (eshandler) */
START_TEST(crash_abort_hang_contained)
{
	char crash[PATH_MAX + 64], abrt[PATH_MAX + 64], hang[PATH_MAX + 64], hangq[PATH_MAX + 64], bytes[PATH_MAX + 64];
	built(crash, sizeof(crash), "tests/handler_test.so:crash=10");
	built(abrt, sizeof(abrt), "tests/handler_test.so:abort=10");
	built(hang, sizeof(hang), "tests/handler_test.so:hang");
	built(hangq, sizeof(hangq), "tests/handler_test.so:hangq");
	built(bytes, sizeof(bytes), "tests/handler_test.so:bytes");
	mh_set *m = start(crash, abrt);
	char err[400];
	ck_assert_msg(mh_load(m, hang, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(mh_load(m, hangq, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(mh_load(m, bytes, err, sizeof(err)) == 0, "%s", err);
	struct es_handler_event e[64];
	for (int i = 0; i < 64; i++)
		e[i] = ev("MPI_Send", 10, 0, 8, 0);
	mh_give(m, e, 64);
	mh_idle(m); /* given to their processes */
	char *said = stop(m);
	ck_assert_msg(strstr(said, "crash=10): no last answer (its process died of signal 11 (SIGSEGV))"), "%s", said);
	ck_assert_msg(strstr(said, "abort=10): no last answer (its process died of signal 6 (SIGABRT))"), "%s", said);
	ck_assert_msg(strstr(said, "hang): no last answer (busy or hung: not waited for)"), "%s", said);
	ck_assert_msg(strstr(said, "hangq): no last answer (busy or hung: not waited for)"), "%s", said);
	/* another process's bytes, escaped: no line of its own, no terminal's order */
	ck_assert_msg(strstr(said, "bytes): events 64\\x0arank 0: forged\\x1b[2J?? end"), "%s", said);
	free(said);
}
END_TEST

/* --- a scope's own handlers (a pathmap's handler:) -------------------------------------------- */

static es_space *hsp;
static ps_elem *hel[2];
static char hjob[32];

/* A job of one trace space, threads a and b, and a scope over it with handlers */
static es_scope *scope_with(const char *h1, const char *h2, enum es_reduce reduce)
{
	snprintf(hjob, sizeof(hjob), "ths%d", (int)getpid());
	char seg[48];
	snprintf(seg, sizeof(seg), "%s.t0", hjob);
	ps_shm_unlink(seg);
	ck_assert_int_eq(es_space_create(seg, 0, &hsp), 0);
	for (int i = 0; i < 2; i++) {
		struct es_meta m = { .element = (uint32_t)i };
		snprintf(m.thread, sizeof(m.thread), "%c", 'a' + i);
		uint16_t id;
		ck_assert_int_eq(es_space_add(hsp, &m, 100, false, &id, &hel[i]), 0);
	}
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, hjob);
	spec.reduce = reduce;
	spec.handlers[spec.nhandlers++] = h1;
	if (h2)
		spec.handlers[spec.nhandlers++] = h2;
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	return s;
}

static void put_call(int thread, unsigned op, int k)
{
	uint64_t t0 = es_space_clock(hsp)->raw0 + 100u * (uint64_t)k;
	struct es_trace t = { .start = t0, .end = t0 + 10, .op = (uint16_t)op, .element = 1, .size = 8 };
	ck_assert_int_eq(ps_write(hel[thread], &t, 0, NULL), 0);
}

static void scope_gone(es_scope *s)
{
	es_scope_destroy(s);
	for (int i = 0; i < 2; i++)
		ps_elem_close(hel[i]);
	es_space_destroy(hsp);
	char seg[48];
	snprintf(seg, sizeof(seg), "%s.t0", hjob);
	ps_shm_unlink(seg);
}

static long counted(es_hlib *h, const char *call)
{
	char text[ES_HLIB_TEXT], key[64];
	ck_assert_int_ge(es_hlib_query(h, "", text, sizeof(text), 5000), 0); /* in order: after what it was given */
	snprintf(key, sizeof(key), "\"%s\":", call);
	const char *p = strstr(text, key);
	return p ? atol(p + strlen(key)) : 0;
}

START_TEST(scope_handlers_given_what_it_reads)
{
	char count[PATH_MAX], fail[PATH_MAX];
	built(count, sizeof(count), "lib/handlers/count.so");
	built(fail, sizeof(fail), "tests/handler_test.so:fail=3");
	es_scope *s = scope_with(count, fail, ES_REDUCE_NONE);
	ck_assert_int_eq(es_scope_handlers(s), 2);
	es_hlib *c = es_scope_handler(s, 0, NULL), *f = es_scope_handler(s, 1, NULL);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(es_hlib_name(c), "count");
	/* consumed: every tuple once */
	for (int k = 0; k < 5; k++)
		put_call(0, ES_OP_WRITE, k), put_call(1, ES_OP_READ, k);
	struct es_trace out[64];
	uint64_t missed;
	ck_assert_int_eq(es_scope_consume(s, out, 64, &missed), 10);
	ck_assert_int_eq(counted(c, "write"), 5);
	ck_assert_int_eq(counted(c, "read"), 5);
	/* the failing one stopped at its fourth event; the scope went on (its
	 * answer comes after its stop, in order: then the stop is known) */
	char t[ES_HLIB_TEXT];
	ck_assert_int_ge(es_hlib_query(f, "", t, sizeof(t), 5000), 0);
	ck_assert_int_eq(es_hlib_stopped(f), -5);
	ck_assert_int_eq(es_scope_consume(s, out, 64, &missed), 0);
	/* pulled: each leaf's latest, and only when it is new */
	struct es_trace w[2];
	ck_assert_int_eq(es_scope_width(s), 2);
	ck_assert_int_eq(es_scope_pull(s, w), 0);
	ck_assert_int_eq(counted(c, "write"), 6);
	ck_assert_int_eq(counted(c, "read"), 6);
	ck_assert_int_eq(es_scope_pull(s, w), 0);
	ck_assert_int_eq(counted(c, "write"), 6);
	put_call(1, ES_OP_TAKE, 9);
	ck_assert_int_eq(es_scope_pull(s, w), 0);
	ck_assert_int_eq(counted(c, "take"), 1);
	ck_assert_int_eq(counted(c, "write"), 6);
	/* a second holder keeps it past the scope */
	es_hlib_ref(c);
	scope_gone(s);
	ck_assert_int_eq(counted(c, "take"), 1);
	es_hlib_close(c);
}
END_TEST

START_TEST(scope_handler_not_loaded_says_why)
{
	es_scope *s = scope_with("/nonexistent/h.so", NULL, ES_REDUCE_LATEST);
	const char *why = NULL;
	ck_assert_int_eq(es_scope_handlers(s), 1);
	ck_assert_ptr_null(es_scope_handler(s, 0, &why));
	ck_assert_msg(why && strstr(why, "/nonexistent/h.so: "), "%s", why ? why : "(null)");
	/* the scope itself reads on */
	put_call(0, ES_OP_WRITE, 1);
	struct es_trace w[2];
	ck_assert_int_eq(es_scope_pull(s, w), 0);
	/* and a monitor attaching to the job with it refuses the scope, with why */
	char err[400];
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, hjob);
	spec.handlers[spec.nhandlers++] = "/nonexistent/h.so";
	es_scope *m = NULL;
	ck_assert_int_eq(mon_attach("t", &spec, 0, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err, "the scope's handler /nonexistent/h.so: "), "%s", err);
	scope_gone(s);
}
END_TEST

Suite *handlers_suite(void)
{
	Suite *s = suite_create("handlers");
	TCase *tc = tcase_create("handlers");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, libraries_refused_with_why);
	tcase_add_test(tc, counted_exactly_twice);
	tcase_add_test(tc, failing_stopped_slow_counted);
	tcase_add_test(tc, crash_abort_hang_contained);
	tcase_add_test(tc, scope_handlers_given_what_it_reads);
	tcase_add_test(tc, scope_handler_not_loaded_says_why);
	suite_add_tcase(s, tc);
	return s;
}
