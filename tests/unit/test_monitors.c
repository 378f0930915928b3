/* test_monitors.c - libesmon: its error convention (0 or -errno, why in err, the exit status only in main), a snapshot written in process, heartbeat's judgement fed and pulled, the one loop, live control's orders (control.c) and colopmon's judgement of tree nodes (colop.c). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "monitors/beat.h"
#include "monitors/colop.h"
#include "monitors/control.h"
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

/* --- live control (control.c) ------------------------------------------------------ */

struct fake_rank {
	ps_elem *ctl, *now;
};
struct fake_job {
	struct fake_rank r[2];
	int stop; /* atomic */
};

/* What a rank does at its next MPI call (collectors/mpi/control.c): the
 * latest order it has not applied, applied and said, as fast or as slow
 * as the machine makes this thread. */
static void *apply_orders(void *arg)
{
	struct fake_job *j = arg;
	while (!__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 2; i++) {
			struct es_ctl_rec o, now;
			if (!ps_read_latest(j->r[i].ctl, &o, NULL) && !ps_read_latest(j->r[i].now, &now, NULL) &&
			    o.gen > now.gen)
				ps_write(j->r[i].now, &o, 0, NULL);
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return NULL;
}

/* A rank's trace space with a thread and, if ctl, its control elements
 * saying it records [all] as MPI_Init chose (gen 0). */
static es_space *fake_space(const char *job, int rank, bool ctl, struct fake_rank *fr)
{
	char seg[64];
	snprintf(seg, sizeof(seg), "%s.r%d", job, rank);
	ps_shm_unlink(seg);
	es_space *sp;
	ck_assert_int_eq(es_space_create_rank(seg, 0, rank, 2, &sp), 0);
	struct es_meta m = { .element = 0 };
	snprintf(m.thread, sizeof(m.thread), "rank%d.thread0", rank);
	uint16_t id;
	ps_elem *e;
	ck_assert_int_eq(es_space_add(sp, &m, 100, false, &id, &e), 0);
	ps_elem_close(e);
	if (!ctl)
		return sp;
	struct ps_elem_attr a = { .tuple_size = sizeof(struct es_ctl_rec), .threshold = 1, .mode = PS_DISCARD,
				  .flags = PS_MULTI_WRITER | PS_CONTROL };
	struct ps_elem_attr b = { .tuple_size = sizeof(struct es_ctl_rec), .threshold = 1, .mode = PS_DISCARD,
				  .flags = PS_MULTI_WRITER };
	ck_assert_int_eq(ps_elem_create(es_space_server(sp), ES_CTL_ELEMENT, &a, &fr->ctl), 0);
	ck_assert_int_eq(ps_elem_create(es_space_server(sp), ES_CTL_NOW_ELEMENT, &b, &fr->now), 0);
	struct es_ctl_rec c = { .gen = 0 };
	memset(c.collect, 1, sizeof(c.collect));
	snprintf(c.list, sizeof(c.list), "[all]");
	ck_assert_int_eq(ps_write(fr->now, &c, 0, NULL), 0);
	return sp;
}

static char *said(FILE **f, char **text)
{
	fflush(*f);
	return *text;
}

/* An order written to every rank and waited for until each applied it; a
 * list that names no call refused with why; an order nobody applies said
 * so; ranks without control elements refused. */
START_TEST(control_orders_applied_and_refused)
{
	char job[32];
	snprintf(job, sizeof(job), "ctl%d", (int)getpid());
	struct fake_job j = { .stop = 0 };
	es_space *sp[2] = { fake_space(job, 0, true, &j.r[0]), fake_space(job, 1, true, &j.r[1]) };
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	struct ps_remote_attr ra = mon_ra();
	mon_ctl *c;
	ck_assert_int_eq(mon_ctl_open(s, job, &ra, &c), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, apply_orders, &j), 0);
	ck_assert_int_eq(mon_ctl_order(c, "pause", "", 60, f), 0); /* 60 s only guards a hang */
	ck_assert_msg(strstr(said(&f, &text), "esctl: pause: applied by 2 of 2 ranks\n"), "%s", text);
	ck_assert_int_eq(mon_ctl_order(c, "collect", "[-all, MPI_Allreduce]", 60, f), 0);
	mon_ctl_status(c, f);
	ck_assert_msg(strstr(said(&f, &text), "rank 1: records [-all, MPI_Allreduce], paused (order 2)\n"), "%s",
		      text);
	ck_assert_int_eq(mon_ctl_order(c, "collect", "[MPI_Nope]", 60, f), 2);
	__atomic_store_n(&j.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	/* nobody applies it now: said, whatever the wait */
	ck_assert_int_eq(mon_ctl_order(c, "resume", "", 0, f), 1);
	ck_assert_msg(strstr(said(&f, &text), "esctl: resume: applied by 0 of 2 ranks within 0 s"), "%s", text);
	mon_ctl_status(c, f);
	ck_assert_msg(strstr(said(&f, &text), "rank 0: records [-all, MPI_Allreduce], paused (order 2); order 3 "
				"([-all, MPI_Allreduce]) not applied: no MPI call since\n"), "%s", text);
	fclose(f);
	free(text);
	mon_ctl_close(c);
	es_scope_destroy(s);
	for (int i = 0; i < 2; i++) {
		ps_elem_close(j.r[i].ctl);
		ps_elem_close(j.r[i].now);
		es_space_destroy(sp[i]);
	}
	/* a job whose ranks made no control elements: nothing to steer */
	char job2[40], seg[64];
	snprintf(job2, sizeof(job2), "ctn%d", (int)getpid());
	es_space *bare = fake_space(job2, 0, false, NULL);
	es_scope_spec_default(&spec, job2);
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	ck_assert_int_eq(mon_ctl_open(s, job2, &ra, &c), 1);
	es_scope_destroy(s);
	es_space_destroy(bare);
	for (int i = 0; i < 2; i++) {
		snprintf(seg, sizeof(seg), "%s.r%d", job, i);
		ps_shm_unlink(seg);
	}
	snprintf(seg, sizeof(seg), "%s.r0", job2);
	ps_shm_unlink(seg);
}
END_TEST

/* colopmon's judgement (colop.c) of a PATHS tree: a node's operation
 * said once every edge's contribution came, with its spread and the child
 * that came last; an operation still missing a child not said; the summary
 * counts what completed. */
START_TEST(colop_tree_nodes)
{
	char job[32], seg[48];
	snprintf(job, sizeof(job), "cop%d", (int)getpid());
	snprintf(seg, sizeof(seg), "%s.t0", job);
	ps_shm_unlink(seg);
	es_space *sp;
	ck_assert_int_eq(es_space_create(seg, 0, &sp), 0);
	ps_elem *e[2];
	for (int i = 0; i < 2; i++) {
		struct es_meta m = { .element = (uint32_t)i };
		snprintf(m.thread, sizeof(m.thread), "t%d", i);
		snprintf(m.where, sizeof(m.where), "sum.n0.c%d", i);
		uint16_t id;
		ck_assert_int_eq(es_space_add(sp, &m, 100, false, &id, &e[i]), 0);
	}
	/* op 0: child 1 comes 3 ms after child 0; op 1: only child 0 */
	struct es_trace t[] = { { .start = 1000, .end = 2000000, .op = ES_OP_WRITE, .arg = 0 },
				{ .start = 1000, .end = 5000000, .op = ES_OP_WRITE, .arg = 0 },
				{ .start = 6000000, .end = 7000000, .op = ES_OP_WRITE, .arg = 1 } };
	ck_assert_int_eq(ps_write(e[0], &t[0], 0, NULL), 0);
	ck_assert_int_eq(ps_write(e[1], &t[1], 0, NULL), 0);
	ck_assert_int_eq(ps_write(e[0], &t[2], 0, NULL), 0);
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	spec.by_leaf = true;
	es_scope *s;
	ck_assert_int_eq(es_scope_create(&spec, &s), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct co_opts o = { .job = job, .out = f, .places = 15, .imbalance_ms = -1, .mpi_above = -1,
			     .wait_pattern = -1, .wait_pct = -1 };
	co *c;
	ck_assert_int_eq(co_create(&o, &c), 0);
	ck_assert_int_eq(co_identify(c, s), 0);
	ck_assert_int_eq(co_mpi_ranks(c), 0);
	ck_assert_int_eq(co_tree_edges(c), 2);
	struct es_trace ev[8];
	uint64_t lost;
	int n = es_scope_consume(s, ev, 8, &lost);
	ck_assert_int_eq(n, 3);
	co_refreshed(c);
	for (int i = 0; i < n; i++)
		co_event(c, s, &ev[i], es_scope_consumed_leaf(s, (size_t)i));
	co_period(c);
	struct mon_watch w = { .grace = 1 };
	co_summary(c, &w, 0, 0);
	fflush(f);
	/* (the stamps are the clock's raw ticks: the spread is what they make in ms) */
	const char *op0 = strstr(text, "tree sum        node 0   op #0     contributions arrived over ");
	ck_assert_msg(op0 && strstr(op0, " ms, last: child 1\n"), "%s", text);
	ck_assert_msg(!strstr(text, "op #1 "), "%s", text);
	ck_assert_msg(strstr(text, "  1 tree node operations seen complete\n"), "%s", text);
	fclose(f);
	free(text);
	co_destroy(c);
	es_scope_destroy(s);
	for (int i = 0; i < 2; i++)
		ps_elem_close(e[i]);
	es_space_destroy(sp);
	ps_shm_unlink(seg);
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
	tcase_add_test(tc, control_orders_applied_and_refused);
	tcase_add_test(tc, colop_tree_nodes);
	suite_add_tcase(s, tc);
	return s;
}
