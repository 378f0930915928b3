/* test_pastset_stress.c - concurrency: a flat-out writer against checking readers, contended writers, flow control. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pastset/pastset.h"
#include "tests/unit/suites.h"

/* Sanitizer builds run slower; keep the same shape with fewer tuples. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SCALE 10
#else
#define SCALE 1
#endif

static char seg[64];

struct result {
	uint64_t got, missed, bad;
};

/* Follows the element from index 0 to `total`, verifying every tuple it
 * gets and counting exactly the ones it lost to the threshold. */
static struct result follow(ps_elem *e, uint64_t total)
{
	struct result r = { 0, 0, 0 };
	uint8_t t[TT_SIZE];
	uint64_t cur = 0, oldest;
	while (cur < total) {
		int rc = ps_read(e, cur, t, 10000, &oldest);
		if (rc == 0) {
			if (!tuple_ok(t) || tuple_idx(t) != cur)
				r.bad++;
			r.got++;
			cur++;
		} else if (rc == PS_EDISCARDED && oldest > cur) {
			r.missed += oldest - cur;
			cur = oldest;
		} else {
			r.bad++;
			break;
		}
	}
	return r;
}

/* Samples the newest tuple over and over: every copy must be whole. */
static uint64_t sample_latest(ps_elem *e, uint64_t total, uint64_t *bad)
{
	uint8_t t[TT_SIZE];
	uint64_t idx = 0, n = 0;
	while (idx + 1 < total) {
		int rc = ps_read_latest(e, t, &idx);
		if (rc == 0) {
			n++;
			if (!tuple_ok(t) || tuple_idx(t) != idx)
				++*bad;
		} else if (rc == PS_ENODATA) {
			struct ps_stats st; /* a flow element may be emptied by takers */
			ps_elem_stats(e, &st);
			if (st.written >= total)
				break;
		} else if (rc != PS_EAGAIN) {
			++*bad;
			break;
		}
	}
	return n;
}

/* Follows the element in chunks with ps_read_range: every tuple of every
 * chunk must be whole even when the writer overtakes the copy. */
static struct result follow_ranges(ps_elem *e, uint64_t total)
{
	struct result r = { 0, 0, 0 };
	uint8_t buf[32 * TT_SIZE];
	uint64_t cur = 0, oldest;
	while (cur < total) {
		int n = ps_read_range(e, cur, 32, buf, &oldest);
		if (n == PS_EDISCARDED && oldest > cur) {
			r.missed += oldest - cur;
			cur = oldest;
			continue;
		}
		if (n < 0) {
			r.bad++;
			break;
		}
		for (int k = 0; k < n; k++)
			if (!tuple_ok(buf + k * TT_SIZE) || tuple_idx(buf + k * TT_SIZE) != cur + (uint64_t)k)
				r.bad++;
		r.got += (uint64_t)n;
		cur += (uint64_t)n;
		if (n == 0)
			ps_read(e, cur, buf, 10000, NULL); /* wait for more */
	}
	return r;
}

struct rd { ps_elem *e; uint64_t total; struct result r; uint64_t latest_bad; int latest, ranges; };

static void *reader_thread(void *arg)
{
	struct rd *d = arg;
	if (d->latest)
		d->r.got = sample_latest(d->e, d->total, &d->latest_bad);
	else if (d->ranges)
		d->r = follow_ranges(d->e, d->total);
	else
		d->r = follow(d->e, d->total);
	return NULL;
}

START_TEST(flat_out_writer_checked_readers)
{
	TEST_SEG(seg, "stress");
	ps_shm_unlink(seg);
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 200 };
	ps_elem *w;
	ck_assert_int_eq(ps_elem_create(s, "trace", &a, &w), 0);
	const uint64_t total = 400000 / SCALE;

	/* Reader processes: they open the segment read-only, as a monitor does. */
	enum { NPROC = 2, NTHR = 3 };
	int pfd[NPROC][2];
	pid_t pids[NPROC];
	for (int p = 0; p < NPROC; p++) {
		ck_assert_int_eq(pipe(pfd[p]), 0);
		pids[p] = fork();
		if (pids[p] == 0) {
			ps_server *r;
			ps_elem *re;
			struct result res = { 0, 0, 1 };
			if (!ps_server_open_shm(seg, PS_RDONLY, &r) &&
			    !ps_elem_open(r, "trace", TT_SIZE, &re))
				res = follow(re, total);
			_exit(write(pfd[p][1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
		}
		close(pfd[p][1]);
	}
	struct rd rds[NTHR + 1];
	pthread_t th[NTHR + 1];
	for (int i = 0; i <= NTHR; i++) {
		rds[i] = (struct rd){ .total = total, .latest = i == NTHR, .ranges = i == 0 };
		ck_assert_int_eq(ps_elem_open(s, "trace", TT_SIZE, &rds[i].e), 0);
		pthread_create(&th[i], NULL, reader_thread, &rds[i]);
	}
	usleep(20000); /* let the processes attach */
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < total; i++) {
		tuple_make(t, i, 1, (uint32_t)i);
		ck_assert_int_eq(ps_write(w, t, 0, NULL), 0);
	}
	for (int i = 0; i <= NTHR; i++) {
		pthread_join(th[i], NULL);
		ps_elem_close(rds[i].e);
		if (i < NTHR) {
			ck_assert_uint_eq(rds[i].r.bad, 0);
			ck_assert_uint_eq(rds[i].r.got + rds[i].r.missed, total);
		} else {
			ck_assert_uint_eq(rds[i].latest_bad, 0);
			ck_assert_uint_gt(rds[i].r.got, 0);
		}
	}
	for (int p = 0; p < NPROC; p++) {
		struct result res;
		ck_assert_int_eq(read(pfd[p][0], &res, sizeof(res)), (ssize_t)sizeof(res));
		close(pfd[p][0]);
		int st;
		waitpid(pids[p], &st, 0);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		ck_assert_uint_eq(res.bad, 0);
		ck_assert_uint_eq(res.got + res.missed, total);
	}
	struct ps_stats st;
	ps_elem_stats(w, &st);
	ck_assert_uint_eq(st.written, total);
	ck_assert_uint_eq(st.discarded, total - 200);
	ps_elem_close(w);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

struct wr { ps_elem *e; uint32_t id; uint32_t n; int rc; };

static void *writer_thread(void *arg)
{
	struct wr *w = arg;
	uint8_t t[TT_SIZE];
	for (uint32_t i = 0; i < w->n && !w->rc; i++) {
		tuple_make(t, i, w->id, i);
		/* no timeout: the writers share a mutex, which is not fair,
		 * and under two make checks at once one writer waited 20 s
		 * while the others wrote (the case's timeout bounds a hang) */
		w->rc = ps_write(w->e, t, -1, NULL);
	}
	return NULL;
}

struct tk { ps_elem *e; uint64_t n; uint32_t nw; uint32_t *last; uint64_t *count; int bad; };

static void *taker_thread(void *arg)
{
	struct tk *k = arg;
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < k->n; i++) {
		if (ps_take(k->e, t, -1, NULL) || !tuple_ok(t) || tuple_writer(t) >= k->nw) {
			k->bad++;
			return NULL;
		}
		uint32_t w = tuple_writer(t), seq = tuple_seq(t);
		/* Within one taker, each writer's tuples come in its order. */
		if (k->count[w] && seq <= k->last[w])
			k->bad++;
		k->last[w] = seq;
		k->count[w]++;
	}
	return NULL;
}

static void contended(enum ps_mode mode, uint32_t threshold)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = threshold,
				  .mode = mode, .flags = PS_MULTI_WRITER };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(s, "mw", &a, &e), 0);
	enum { NW = 4, NT = 2 };
	const uint32_t per = 40000 / SCALE;
	struct wr ws[NW];
	struct tk ts[NT];
	uint32_t last[NT][NW];
	uint64_t count[NT][NW];
	memset(count, 0, sizeof(count));
	pthread_t wth[NW], tth[NT];
	for (int i = 0; i < NT; i++) {
		ts[i] = (struct tk){ e, (uint64_t)NW * per / NT, NW, last[i], count[i], 0 };
		pthread_create(&tth[i], NULL, taker_thread, &ts[i]);
	}
	for (uint32_t i = 0; i < NW; i++) {
		ws[i] = (struct wr){ e, i, per, 0 };
		pthread_create(&wth[i], NULL, writer_thread, &ws[i]);
	}
	for (int i = 0; i < NW; i++) {
		pthread_join(wth[i], NULL);
		ck_assert_int_eq(ws[i].rc, 0);
	}
	for (int i = 0; i < NT; i++) {
		pthread_join(tth[i], NULL);
		ck_assert_int_eq(ts[i].bad, 0);
	}
	for (int w = 0; w < NW; w++)
		ck_assert_uint_eq(count[0][w] + count[1][w], per); /* each exactly once */
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, (uint64_t)NW * per);
	ck_assert_uint_eq(st.taken, (uint64_t)NW * per);
	ck_assert_uint_eq(st.discarded, 0);
	ps_elem_close(e);
	ps_server_destroy(s);
}

/* Takers on a small discard element the writer keeps lapping: every tuple
 * taken is whole, taken in order, and taken + discarded + held = written. */
struct lap { ps_elem *e; uint64_t total; uint64_t got, bad, last; _Atomic int *done; };

static void *lapped_taker(void *arg)
{
	struct lap *l = arg;
	uint8_t t[TT_SIZE];
	uint64_t idx;
	for (;;) {
		/* the writer's end is read before the take: a take that finds
		 * nothing after it means all is taken or dropped (200 ms alone
		 * was the machine's speed: under load a taker gave up early) */
		int done = atomic_load(l->done);
		int rc = ps_take(l->e, t, 200, &idx);
		if (rc == PS_ETIMEDOUT && done)
			break;
		if (rc == PS_ETIMEDOUT)
			continue;
		if (rc || !tuple_ok(t) || tuple_idx(t) != idx || (l->got && idx <= l->last))
			l->bad++;
		l->last = idx;
		l->got++;
	}
	return NULL;
}

START_TEST(take_while_lapped)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 8 };
	ps_elem *w;
	ck_assert_int_eq(ps_elem_create(s, "lap", &a, &w), 0);
	struct lap l[2];
	pthread_t th[2];
	_Atomic int done = 0;
	for (int i = 0; i < 2; i++) {
		l[i] = (struct lap){ .total = 300000 / SCALE, .done = &done };
		ck_assert_int_eq(ps_elem_open(s, "lap", TT_SIZE, &l[i].e), 0);
		pthread_create(&th[i], NULL, lapped_taker, &l[i]);
	}
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < 300000 / SCALE; i++) {
		tuple_make(t, i, 1, 0);
		ps_write(w, t, 0, NULL);
	}
	atomic_store(&done, 1);
	uint64_t got = 0;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ck_assert_uint_eq(l[i].bad, 0);
		got += l[i].got;
		ps_elem_close(l[i].e);
	}
	struct ps_stats st;
	ps_elem_stats(w, &st);
	ck_assert_uint_eq(st.taken, got);
	ck_assert_uint_eq(st.oldest, st.written); /* nothing left */
	ck_assert_uint_eq(st.taken + st.discarded, st.written);
	ps_elem_close(w);
	ps_server_destroy(s);
}
END_TEST

/* Range reads that start at the oldest tuple of a small element the writer
 * keeps lapping: whatever a read returns must be whole. */
struct rlap { ps_elem *e; atomic_int *stop; uint64_t reads, tuples, bad; };

static void *range_lapped(void *arg)
{
	struct rlap *r = arg;
	uint8_t buf[8 * TT_SIZE];
	while (!atomic_load(r->stop)) {
		struct ps_stats st;
		ps_elem_stats(r->e, &st);
		int n = ps_read_range(r->e, st.oldest, 8, buf, NULL);
		if (n < 0)
			continue; /* overtaken: reported, not returned */
		r->reads++;
		for (int k = 0; k < n; k++, r->tuples++)
			if (!tuple_ok(buf + k * TT_SIZE) || tuple_idx(buf + k * TT_SIZE) != st.oldest + (uint64_t)k)
				r->bad++;
	}
	return NULL;
}

START_TEST(range_while_lapped)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 8 };
	ps_elem *w;
	ck_assert_int_eq(ps_elem_create(s, "rl", &a, &w), 0);
	atomic_int stop = 0;
	struct rlap r = { .stop = &stop };
	ck_assert_int_eq(ps_elem_open(s, "rl", TT_SIZE, &r.e), 0);
	pthread_t th;
	pthread_create(&th, NULL, range_lapped, &r);
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < 3000000 / SCALE; i++) {
		tuple_make(t, i, 1, 0);
		ps_write(w, t, 0, NULL);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	ck_assert_uint_eq(r.bad, 0);
	ps_elem_close(r.e);
	ps_elem_close(w);
	ps_server_destroy(s);
}
END_TEST

START_TEST(multi_writer_flow)
{
	contended(PS_FLOW, 16); /* small: writers wait on takers all the time */
}
END_TEST

START_TEST(multi_writer_discard)
{
	contended(PS_DISCARD, 1u << 20); /* large enough that nothing is dropped */
}
END_TEST

/* Writers that will not wait (timeout 0, as collectors write) on a shared
 * discard element: each waits its turn for the lock and none loses a
 * tuple.  A trylock lost the second of two racing writes, one in twenty
 * runs of a tree edge's collector shared by two threads. */
struct nowait { ps_elem *e; uint32_t n; int failed; };

static void *nowait_writer(void *arg)
{
	struct nowait *w = arg;
	uint8_t t[TT_SIZE];
	for (uint32_t i = 0; i < w->n; i++) {
		tuple_make(t, i, 0, i);
		w->failed += ps_write(w->e, t, 0, NULL) != 0;
	}
	return NULL;
}

START_TEST(multi_writer_discard_never_drops)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 64, .mode = PS_DISCARD,
				  .flags = PS_MULTI_WRITER };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(s, "mw0", &a, &e), 0);
	enum { NW = 4 };
	struct nowait w[NW];
	pthread_t th[NW];
	for (int i = 0; i < NW; i++) {
		w[i] = (struct nowait){ e, 200000 / SCALE, 0 };
		pthread_create(&th[i], NULL, nowait_writer, &w[i]);
	}
	for (int i = 0; i < NW; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(w[i].failed, 0);
	}
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, (uint64_t)NW * (200000 / SCALE));
	ps_elem_close(e);
	ps_server_destroy(s);
}
END_TEST

/* One writer, one taker, a tiny flow element, many tuples: none lost, none
 * repeated, in order; a second, observing reader sees only whole tuples. */
START_TEST(flow_nothing_lost)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 4, .mode = PS_FLOW };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(s, "flow", &a, &e), 0);
	const uint32_t n = 100000 / SCALE;
	uint32_t last[1];
	uint64_t count[1] = { 0 };
	struct tk k = { e, n, 1, last, count, 0 };
	struct rd obs = { .e = e, .total = n, .latest = 1 };
	pthread_t tt, ot;
	pthread_create(&tt, NULL, taker_thread, &k);
	pthread_create(&ot, NULL, reader_thread, &obs);
	struct wr w = { e, 0, n, 0 };
	writer_thread(&w);
	ck_assert_int_eq(w.rc, 0);
	pthread_join(tt, NULL);
	pthread_join(ot, NULL);
	ck_assert_int_eq(k.bad, 0);
	ck_assert_uint_eq(count[0], n);
	ck_assert_uint_eq(last[0], n - 1);
	ck_assert_uint_eq(obs.latest_bad, 0);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.discarded, 0);
	ck_assert_uint_eq(st.taken, n);
	ps_elem_close(e);
	ps_server_destroy(s);
}
END_TEST

Suite *pastset_stress_suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("stress");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, flat_out_writer_checked_readers);
	tcase_add_test(tc, take_while_lapped);
	tcase_add_test(tc, range_while_lapped);
	tcase_add_test(tc, multi_writer_flow);
	tcase_add_test(tc, multi_writer_discard);
	tcase_add_test(tc, multi_writer_discard_never_drops);
	tcase_add_test(tc, flow_nothing_lost);
	suite_add_tcase(s, tc);
	return s;
}
