/* test_monitors.c - libesmon's shared code: its error convention (0 or -errno, why in err, the exit status only in main) and a snapshot written in process. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "monitors/beat.h"
#include "monitors/monitors.h"
#include "tests/unit/suites.h"

START_TEST(errors_are_codes_with_words)
{
	char err[600];
	es_scope *s = NULL;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, "no/such job");
	ck_assert_int_eq(mon_attach("t", &spec, 0, &s, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "no job can have that name") && !strstr(err, "t:"), "%s", err);
	char job[32];
	snprintf(job, sizeof(job), "none%d", (int)getpid());
	es_scope_spec_default(&spec, job);
	ck_assert_int_eq(mon_attach("t", &spec, 0, &s, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "no trace spaces on this host"), "%s", err);
	ck_assert_ptr_null(s);
	spec.servers = "127.0.0.1";
	ck_assert_int_eq(mon_attach("t", &spec, 0, &s, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "--servers: '127.0.0.1': expected HOST:PORT"), "%s", err);
	/* a secret file anyone may read is refused, not exited on */
	char secret[64];
	snprintf(secret, sizeof(secret), "/tmp/tmon-secret-%d", (int)getpid());
	FILE *f = fopen(secret, "w");
	ck_assert_ptr_nonnull(f);
	fputs("0123456789abcdef0123\n", f);
	fclose(f);
	chmod(secret, 0644);
	mon_secret_file = secret;
	es_scope_spec_default(&spec, job);
	ck_assert_int_eq(mon_remote(&spec, err, sizeof(err)), -EACCES);
	ck_assert_msg(strstr(err, "--secret-file") && strstr(err, secret), "%s", err);
	chmod(secret, 0600);
	ck_assert_int_eq(mon_remote(&spec, err, sizeof(err)), 0);
	ck_assert_str_eq(spec.secret_file, secret);
	mon_secret_file = NULL;
	unlink(secret);
	ck_assert_int_eq(mon_spec("x.yaml", NULL, job, &spec, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "--pathmap and --scope go together"), "%s", err);
	ck_assert_int_eq(mon_spec("/nonexistent.yaml", "s", job, &spec, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/nonexistent.yaml"), "%s", err);
	/* dot on a file that is not DOT: it failed, said as that; no picture left */
	char in[64], out[64];
	snprintf(in, sizeof(in), "/tmp/tmon-%d.dot", (int)getpid());
	snprintf(out, sizeof(out), "/tmp/tmon-%d.svg", (int)getpid());
	f = fopen(in, "w");
	fputs("this is not a graph {{{\n", f);
	fclose(f);
	int rc = mon_dot(in, "svg", out);
	ck_assert_msg(rc == -EPROTO || rc == -ENOENT, "mon_dot: %d", rc);
	ck_assert_int_ne(access(out, F_OK), 0);
	unlink(in);
	/* only main makes an exit status, the same way everywhere */
	ck_assert_int_eq(mon_status(0), 0);
	ck_assert_int_eq(mon_status(-ENOENT), 2);
	ck_assert_int_eq(mon_status(-EINVAL), 2);
	ck_assert_int_eq(mon_status(-EHOSTUNREACH), 2);
	ck_assert_int_eq(mon_status(-EACCES), 2);
	ck_assert_int_eq(mon_status(-ENOSPC), 1);
	ck_assert_int_eq(mon_status(-ENOMEM), 1);
}
END_TEST

/* A job of one thread with three events; a snapshot of it, in this
 * process: the archive holds them, TRIGGER says why, FILE holds TEXT;
 * a second trigger does nothing. */
START_TEST(snapshot_in_process)
{
	char job[32], seg[48], dir[96];
	snprintf(job, sizeof(job), "snap%d", (int)getpid());
	snprintf(seg, sizeof(seg), "%s.t0", job);
	snprintf(dir, sizeof(dir), "/tmp/tmon-snap-%d", (int)getpid());
	ps_shm_unlink(seg);
	es_space *sp;
	ck_assert_int_eq(es_space_create(seg, 0, &sp), 0);
	struct es_meta m = { .element = 0 };
	snprintf(m.thread, sizeof(m.thread), "main");
	snprintf(m.where, sizeof(m.where), "main->e0");
	uint16_t id;
	ps_elem *e;
	ck_assert_int_eq(es_space_add(sp, &m, 100, false, &id, &e), 0);
	for (uint64_t i = 1; i <= 3; i++) {
		struct es_trace t = { .start = i * 1000, .end = i * 1000 + 10, .op = ES_OP_WRITE, .size = 36 };
		ck_assert_int_eq(ps_write(e, &t, 0, NULL), 0);
	}
	struct mon_snapshot sn = { .dir = dir, .job = job };
	char err[4800];
	ck_assert_int_eq(mon_snapshot("t", &sn, "a test said so", "why", "the text\n", err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(!ar_open(dir, &a, err, sizeof(err)), "%s", err);
	ck_assert_uint_eq(ar_nevents(a), 3);
	ar_close(a);
	char p[160], line[200];
	snprintf(p, sizeof(p), "%s/TRIGGER", dir);
	FILE *f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	ck_assert_str_eq(line, "t: a test said so\n");
	snprintf(p, sizeof(p), "%s/why", dir);
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	/* the first time only */
	ck_assert_int_eq(mon_snapshot("t", &sn, "again", NULL, NULL, err, sizeof(err)), 0);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	ck_assert_str_eq(line, "the text\n");
	/* a snapshot into a directory that holds an archive already fails,
	 * with the archive's words, and the monitor goes on */
	struct mon_snapshot again = { .dir = dir, .job = job };
	ck_assert_int_eq(mon_snapshot("t", &again, "twice", NULL, NULL, err, sizeof(err)), -EEXIST);
	ck_assert_msg(strstr(err, "already holds an archive"), "%s", err);
	ps_elem_close(e);
	es_space_destroy(sp);
	ps_shm_unlink(seg);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST


/* heartbeat's judgement fed from the pulls of the scope its owner
 * consumes (esview's one scope) says what it says pulling a scope of
 * each thread's latest (heartbeat's): the thread that moved progressed,
 * the one that did not stalled, in every period, and a thread that
 * appears is taken in. */
START_TEST(fed_judgement_as_pulled)
{
	char job[32], seg[48];
	snprintf(job, sizeof(job), "hbf%d", (int)getpid());
	snprintf(seg, sizeof(seg), "%s.t0", job);
	ps_shm_unlink(seg);
	es_space *sp;
	ck_assert_int_eq(es_space_create(seg, 0, &sp), 0);
	ps_elem *e[3];
	const char *names[3] = { "busy", "stuck", "late" };
	for (int i = 0; i < 2; i++) {
		struct es_meta m = { .element = (uint32_t)i };
		snprintf(m.thread, sizeof(m.thread), "%s", names[i]);
		uint16_t id;
		ck_assert_int_eq(es_space_add(sp, &m, 1000, false, &id, &e[i]), 0);
	}
	uint64_t now = base_now_ns();
	for (int i = 0; i < 2; i++) {
		struct es_trace t = { .start = now - 2000, .end = now - 1000 + (uint64_t)i, .op = ES_OP_WRITE, .size = 36 };
		ck_assert_int_eq(ps_write(e[i], &t, 0, NULL), 0);
	}
	struct es_scope_spec latest, all;
	es_scope_spec_default(&latest, job);
	latest.reduce = ES_REDUCE_LATEST;
	es_scope_spec_default(&all, job);
	all.reduce = ES_REDUCE_NONE;
	all.by_leaf = true;
	es_scope *sl, *sa;
	ck_assert_int_eq(es_scope_create(&latest, &sl), 0);
	ck_assert_int_eq(es_scope_create(&all, &sa), 0);
	hb *pulled, *fed;
	ck_assert_int_eq(hb_create(sl, 0.1, false, &pulled), 0);
	ck_assert_int_eq(hb_create_fed(sa, 0.1, &fed), 0);
	struct es_trace ev[64];
	uint64_t lost;
	for (int period = 0; period < 4; period++) {
		if (period == 2) { /* a thread appears */
			struct es_meta m = { .element = 2 };
			snprintf(m.thread, sizeof(m.thread), "%s", names[2]);
			uint16_t id;
			ck_assert_int_eq(es_space_add(sp, &m, 1000, false, &id, &e[2]), 0);
		}
		if (period > 0) { /* only busy moves (and late, once there) */
			uint64_t t0 = base_now_ns();
			struct es_trace t = { .start = t0, .end = t0 + 10, .op = ES_OP_WRITE, .size = 36 };
			ck_assert_int_eq(ps_write(e[0], &t, 0, NULL), 0);
			if (period > 2)
				ck_assert_int_eq(ps_write(e[2], &t, 0, NULL), 0);
		}
		es_scope_refresh(sa);
		int n;
		while ((n = es_scope_consume(sa, ev, 64, &lost)) > 0)
			for (int i = 0; i < n; i++)
				hb_feed(fed, es_scope_leaf(sa, es_scope_consumed_leaf(sa, (size_t)i))->thread, &ev[i]);
		if (period == 0)
			hb_prime(fed);
		struct hb_period a, b;
		ck_assert_int_eq(hb_step(pulled, "t", &a), 0);
		ck_assert_int_eq(hb_step(fed, "t", &b), 0);
		ck_assert_int_eq(hb_threads(pulled), hb_threads(fed));
		ck_assert_msg(a.progressing == b.progressing && a.stalled == b.stalled && a.idle == b.idle,
			      "period %d: pulled %d progressing %d stalled %d idle, fed %d %d %d", period, a.progressing,
			      a.stalled, a.idle, b.progressing, b.stalled, b.idle);
		for (int t = 0; t < hb_threads(fed); t++)
			ck_assert_int_eq(hb_thread(pulled, t)->stalled_now, hb_thread(fed, t)->stalled_now);
		if (period == 0) /* against where each was at the first pull: stuck stalled at once, as busy */
			ck_assert_int_eq(b.stalled, 2);
		if (period == 1)
			ck_assert_int_eq(b.progressing, 1);
		if (period == 3)
			ck_assert_int_eq(hb_threads(fed), 3);
	}
	hb_destroy(pulled);
	hb_destroy(fed);
	es_scope_destroy(sl);
	es_scope_destroy(sa);
	for (int i = 0; i < 3; i++)
		ps_elem_close(e[i]);
	es_space_destroy(sp);
	ps_shm_unlink(seg);
}
END_TEST


struct ticks {
	int calls, end_after, stop_at, saw_stop;
	int *order, *norder, me;
};

static double tick(void *arg)
{
	struct ticks *t = arg;
	t->calls++;
	t->order[(*t->norder)++ % 64] = t->me;
	t->saw_stop += mon_stop != 0;
	if (t->stop_at && t->calls == t->stop_at)
		mon_stop = 1;
	return t->end_after && t->calls == t->end_after ? MON_END : 0.0005;
}

/* The monitors' one loop: timers run in the order added when due
 * together, one that returns MON_END ends it, a signal gets every timer
 * one last round (a consumer's last drain), and no more than MON_TIMERS. */
START_TEST(one_loop_for_every_monitor)
{
	int order[64], norder = 0;
	struct ticks a = { .order = order, .norder = &norder, .me = 1 }, b = a;
	b.me = 2;
	b.end_after = 5;
	struct mon_loop l = { 0 };
	ck_assert_int_eq(mon_loop_add(&l, 0, tick, &a), 0);
	ck_assert_int_eq(mon_loop_add(&l, 0, tick, &b), 0);
	mon_loop_run(&l);
	ck_assert_int_eq(order[0], 1);
	ck_assert_int_eq(order[1], 2);
	ck_assert_int_eq(b.calls, 5);
	ck_assert_int_ge(a.calls, 1);
	ck_assert_int_eq(a.saw_stop + b.saw_stop, 0);
	/* a signal in the middle: both run once more, seeing it, and the loop ends */
	struct ticks c = { .order = order, .norder = &norder, .me = 3, .stop_at = 2 }, d = c;
	d.me = 4;
	d.stop_at = 0;
	struct mon_loop m = { 0 };
	ck_assert_int_eq(mon_loop_add(&m, 0, tick, &c), 0);
	ck_assert_int_eq(mon_loop_add(&m, 3600, tick, &d), 0); /* not due before the signal */
	mon_loop_run(&m);
	ck_assert_int_eq(c.calls, 3);
	ck_assert_int_eq(c.saw_stop, 1);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(d.saw_stop, 1);
	mon_stop = 0;
	struct mon_loop full = { 0 };
	for (int i = 0; i < MON_TIMERS; i++)
		ck_assert_int_eq(mon_loop_add(&full, 0, tick, &a), 0);
	ck_assert_int_eq(mon_loop_add(&full, 0, tick, &a), -ENOSPC);
}
END_TEST

Suite *monitors_suite(void)
{
	Suite *s = suite_create("monitors");
	TCase *tc = tcase_create("common");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, errors_are_codes_with_words);
	tcase_add_test(tc, snapshot_in_process);
	tcase_add_test(tc, fed_judgement_as_pulled);
	tcase_add_test(tc, one_loop_for_every_monitor);
	suite_add_tcase(s, tc);
	return s;
}
