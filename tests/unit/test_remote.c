/* test_remote.c - the remote client: every operation through a tuple server, waits, batches, byte orders, deadlines, reconnects and restarts. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pastset/pastset.h"
#include "pastset/wire.h"
#include "tests/unit/suites.h"
#include "tests/unit/tcp_fixture.h"

START_TEST(every_operation)
{
	struct fixture x;
	fx_up(&x, NULL);
	ck_assert_int_eq(ps_tcp_add(x.t, "seg", x.srv), PS_EEXIST);
	ps_server *r;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "nope", PS_RDWR, NULL, &r),
			 PS_ENOENT);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDWR, NULL, &r), 0);
	ck_assert_int_eq(ps_server_count(r), 2);
	int64_t off = ps_server_clock_offset(r); /* one host: the same clock */
	ck_assert_int_lt(off < 0 ? -off : off, 1000000000);
	char name[PS_NAME_MAX + 1];
	ck_assert_int_eq(ps_server_elem_name(r, 1, name), 0);
	ck_assert_str_eq(name, "f");
	ck_assert_int_eq(ps_server_elem_name(r, 2, name), PS_EINVAL);
	void *area;
	ck_assert_int_eq(ps_server_user_area(r, &area), 0);
	ck_assert_str_eq(area, "calibration");
	struct ps_elem_attr na = { .tuple_size = 4, .threshold = 1 };
	ps_elem *e, *f, *no;
	ck_assert_int_eq(ps_elem_create(r, "new", &na, &no), PS_EROFS);
	ck_assert_int_eq(ps_elem_open(r, "missing", 0, &no), PS_ENOENT);
	ck_assert_int_eq(ps_elem_open(r, "d", 12, &no), PS_ESIZE);
	ck_assert_int_eq(ps_elem_open(r, "d", 0, &e), 0);
	ck_assert_uint_eq(ps_elem_tuple_size(e), 36);
	ck_assert_int_eq(ps_elem_open(r, "f", 8, &f), 0);

	unsigned char t[36], g[36];
	uint64_t idx, oldest = 0;
	ck_assert_int_eq(ps_read_latest(e, g, &idx), PS_ENODATA);
	ck_assert_int_eq(ps_read(e, 0, g, 0, NULL), PS_ETIMEDOUT);
	for (uint32_t i = 0; i < 20; i++) {
		tuple(t, i);
		ck_assert_int_eq(ps_write(e, t, 0, &idx), 0);
		ck_assert_uint_eq(idx, i);
	}
	ck_assert_int_eq(ps_read_latest(e, g, &idx), 0);
	ck_assert_uint_eq(idx, 19);
	tuple(t, 19);
	ck_assert_mem_eq(g, t, 36);
	ck_assert_int_eq(ps_read(x.d, 19, t, 0, NULL), 0); /* the same tuple, locally */
	ck_assert_mem_eq(g, t, 36);
	ck_assert_int_eq(ps_read(e, 0, g, 0, &oldest), PS_EDISCARDED);
	ck_assert_uint_eq(oldest, 12);
	unsigned char many[100 * 36];
	ck_assert_int_eq(ps_read_range(e, 12, 100, many, NULL), 8);
	tuple(t, 15);
	ck_assert_mem_eq(many + 3 * 36, t, 36);
	ck_assert_int_eq(ps_read_range(e, 20, 5, many, NULL), 0);
	ck_assert_int_eq(ps_read_range(e, 3, 5, many, &oldest), PS_EDISCARDED);
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(e, &st), 0);
	ck_assert_uint_eq(st.written, 20);
	ck_assert_uint_eq(st.discarded, 12);
	ck_assert_uint_eq(st.oldest, 12);
	ck_assert_uint_eq(st.threshold, 8);
	atomic_store(&ps_elem_notes(x.d)[2], 77);
	ck_assert_uint_eq(ps_note_get(e, 2), 77);
	ck_assert_ptr_null(ps_elem_notes(e)); /* notes are the writer's, on its host */
	ck_assert_int_eq(ps_write(e, t, 0, NULL) , 0); /* 36 bytes: checked by size at open */

	/* flow: a full element says so at once, or after the wait asked for */
	uint64_t v = 5;
	ck_assert_int_eq(ps_write(f, &v, 0, NULL), 0);
	ck_assert_int_eq(ps_write(f, &v, 0, NULL), 0);
	ck_assert_int_eq(ps_write(f, &v, 0, NULL), PS_ETIMEDOUT);
	ck_assert_int_eq(ps_write(f, &v, 30, NULL), PS_ETIMEDOUT);
	ck_assert_int_eq(ps_take(f, &v, 0, &idx), 0);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(ps_take(f, &v, 0, &idx), 0);
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(ps_take(f, &v, 0, NULL), PS_ETIMEDOUT);

	/* a read-only server: observe only */
	ps_server *ro;
	ps_elem *rf;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDONLY, NULL, &ro), 0);
	ck_assert_int_eq(ps_elem_open(ro, "f", 0, &rf), 0);
	ck_assert_int_eq(ps_write(rf, &v, 0, NULL), PS_EROFS);
	ck_assert_int_eq(ps_take(rf, &v, 0, NULL), PS_EROFS);
	ps_elem_close(rf);
	ps_server_destroy(ro);

	ps_elem_close(e);
	ps_elem_close(f);
	ps_server_destroy(r);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.bad, 0);
	ck_assert_uint_eq(c.refused, 0);
	ck_assert_uint_ge(c.frames, 40);
	fx_down(&x);
}
END_TEST

struct late {
	ps_elem *e;
	uint64_t v;
};

static void *write_late(void *arg)
{
	struct late *l = arg;
	usleep(50 * 1000);
	ps_write(l->e, &l->v, 0, NULL);
	return NULL;
}

/* A board: slots its writer rewrites in place, read whole locally, in a
 * shared segment and through a tuple server; never appended to or taken. */
START_TEST(boards)
{
	struct fixture x;
	fx_up(&x, NULL);
	struct ps_elem_attr ba = { .tuple_size = 16, .threshold = 5000, .mode = PS_BOARD }, odd = ba;
	ps_elem *b, *no;
	odd.tuple_size = 12; /* slots are arrays of words */
	ck_assert_int_eq(ps_elem_create(x.srv, "odd", &odd, &no), PS_EINVAL);
	odd.tuple_size = 16;
	odd.flags = PS_MULTI_WRITER; /* one writer, in place */
	ck_assert_int_eq(ps_elem_create(x.srv, "odd", &odd, &no), PS_EINVAL);
	ck_assert_int_eq(ps_elem_create(x.srv, "b", &ba, &b), 0);
	uint64_t (*slot)[2] = ps_board(b);
	ck_assert_ptr_nonnull(slot);
	ck_assert_ptr_null(ps_board(x.d)); /* no board */
	/* its writer stores words whole, as readers in other threads load them */
	for (uint64_t i = 0; i < 5000; i++) {
		__atomic_store_n(&slot[i][0], i, __ATOMIC_RELAXED);
		__atomic_store_n(&slot[i][1], ~i, __ATOMIC_RELAXED);
	}
	uint64_t got[5000][2], one[2];
	ck_assert_int_eq(ps_read_range(b, 4990, 100, got, NULL), 10);
	ck_assert_uint_eq(got[3][0], 4993);
	ck_assert_int_eq(ps_read_range(b, 5000, 1, got, NULL), 0);
	ck_assert_int_eq(ps_read(b, 7, one, 0, NULL), 0);
	ck_assert_uint_eq(one[1], ~7ull);
	ck_assert_int_eq(ps_write(b, one, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_take(b, one, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest(b, one, NULL), PS_EINVAL);
	/* through the tuple server: the same slots, in as many frames as it takes */
	ps_server *r;
	ps_elem *rb;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDONLY, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "b", 16, &rb), 0);
	ck_assert_ptr_null(ps_board(rb)); /* only its writer rewrites it */
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(rb, &st), 0);
	ck_assert_int_eq(st.mode, PS_BOARD);
	ck_assert_uint_eq(st.threshold, 5000);
	memset(got, 0, sizeof(got));
	int n = 0;
	while (n < 5000) {
		int k = ps_read_range(rb, (uint64_t)n, 5000 - (size_t)n, got[n], NULL);
		ck_assert_int_gt(k, 0);
		n += k;
	}
	for (int i = 0; i < 5000; i++)
		ck_assert(got[i][0] == (uint64_t)i && got[i][1] == ~(uint64_t)i);
	__atomic_store_n(&slot[42][0], 4242, __ATOMIC_RELAXED);
	ck_assert_int_eq(ps_read_range(rb, 42, 1, one, NULL), 1);
	ck_assert_uint_eq(one[0], 4242);
	ps_elem_close(rb);
	ps_server_destroy(r);
	ps_elem_close(b);
	fx_down(&x);
}
END_TEST

START_TEST(waits_poll_the_server)
{
	struct fixture x;
	fx_up(&x, NULL);
	ps_server *r;
	ps_elem *f;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDWR, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "f", 0, &f), 0);
	struct late l = { x.f, 42 };
	pthread_t th;
	pthread_create(&th, NULL, write_late, &l);
	uint64_t v = 0;
	ck_assert_int_eq(ps_take(f, &v, 5000, NULL), 0); /* waits for the local writer */
	ck_assert_uint_eq(v, 42);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, write_late, &l);
	ck_assert_int_eq(ps_read(f, 1, &v, 5000, NULL), 0);
	pthread_join(th, NULL);
	ps_elem_close(f);
	ps_server_destroy(r);
	fx_down(&x);
}
END_TEST

START_TEST(batches_and_lists)
{
	struct fixture a, b;
	fx_up(&a, NULL);
	fx_up(&b, NULL);
	ck_assert_int_eq(ps_tcp_add(a.t, "seg2", b.srv), 0);
	int n = 0;
	ck_assert_int_eq(ps_remote_list("127.0.0.1", a.port, NULL, "seg", count_seg, &n), 0);
	ck_assert_int_eq(n, 2);
	n = 0;
	ck_assert_int_eq(ps_remote_list("127.0.0.1", a.port, NULL, "seg2", count_seg, &n), 0);
	ck_assert_int_eq(n, 1);

	ps_server *ra, *rb;
	ps_elem *e[4];
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", a.port, "seg", PS_RDONLY, NULL, &ra), 0);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", b.port, "seg", PS_RDONLY, NULL, &rb), 0);
	ck_assert_int_eq(ps_elem_open(ra, "d", 0, &e[0]), 0);
	ck_assert_int_eq(ps_elem_open(rb, "d", 0, &e[1]), 0);
	e[2] = a.d; /* a local element in the batch */
	ck_assert_int_eq(ps_elem_open(ra, "f", 0, &e[3]), 0);
	unsigned char t[36];
	tuple(t, 1);
	ps_write(a.d, t, 0, NULL);
	tuple(t, 2);
	ps_write(b.d, t, 0, NULL);
	struct ps_tcp_counts ca, cb, ca2, cb2;
	ps_tcp_counts(a.t, &ca);
	ps_tcp_counts(b.t, &cb);
	unsigned char out[36 * 3 + 8];
	uint64_t idx[4];
	int status[4];
	ck_assert_int_eq(ps_read_latest_many(e, 4, out, idx, status), 3);
	ck_assert_int_eq(status[0], 0);
	ck_assert_int_eq(status[1], 0);
	ck_assert_int_eq(status[2], 0);
	ck_assert_int_eq(status[3], PS_ENODATA);
	tuple(t, 1);
	ck_assert_mem_eq(out, t, 36);
	ck_assert_mem_eq(out + 72, t, 36);
	tuple(t, 2);
	ck_assert_mem_eq(out + 36, t, 36);
	ps_tcp_counts(a.t, &ca2);
	ps_tcp_counts(b.t, &cb2);
	ck_assert_uint_eq(ca2.frames - ca.frames, 1); /* one request per server */
	ck_assert_uint_eq(cb2.frames - cb.frames, 1);
	/* a prefetched tuple serves one read; the next goes to the server */
	ck_assert_int_eq(ps_prefetch_latest(e, 4), 3);
	ck_assert_int_eq(ps_read_latest(e[0], t, NULL), 0);
	ps_tcp_counts(a.t, &ca);
	ck_assert_uint_eq(ca.frames - ca2.frames, 1);
	ck_assert_int_eq(ps_read_latest(e[0], t, NULL), 0);
	ps_tcp_counts(a.t, &ca2);
	ck_assert_uint_eq(ca2.frames - ca.frames, 1);
	ps_elem_close(e[0]);
	ps_elem_close(e[1]);
	ps_elem_close(e[3]);
	ps_server_destroy(ra);
	ps_server_destroy(rb);

	/* big tuples: a batch is split so that no reply exceeds a frame */
	enum { NBIG = 40, BIG = 60000 };
	ps_server *bs, *rbig;
	ps_elem *local[NBIG], *far[NBIG];
	ck_assert_int_eq(ps_server_create_local(&bs), 0);
	ck_assert_int_eq(ps_tcp_add(a.t, "big", bs), 0);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", a.port, "big", 0, NULL, &rbig), 0);
	unsigned char *tb = malloc(BIG), *outb = malloc((size_t)NBIG * BIG);
	for (int i = 0; i < NBIG; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "b%d", i);
		struct ps_elem_attr ba = { .tuple_size = BIG, .threshold = 1 };
		ck_assert_int_eq(ps_elem_create(bs, nm, &ba, &local[i]), 0);
		memset(tb, i, BIG);
		ck_assert_int_eq(ps_write(local[i], tb, 0, NULL), 0);
		ck_assert_int_eq(ps_elem_open(rbig, nm, BIG, &far[i]), 0);
	}
	ps_tcp_counts(a.t, &ca);
	int st[NBIG];
	ck_assert_int_eq(ps_read_latest_many(far, NBIG, outb, NULL, st), NBIG);
	ps_tcp_counts(a.t, &ca2);
	ck_assert_uint_eq(ca2.frames - ca.frames, 3); /* 17 + 17 + 6 */
	for (int i = 0; i < NBIG; i++)
		ck_assert_uint_eq(outb[(size_t)i * BIG + BIG - 1], (unsigned char)i);
	for (int i = 0; i < NBIG; i++) {
		ps_elem_close(far[i]);
		ps_elem_close(local[i]);
	}
	free(tb);
	free(outb);
	ps_server_destroy(rbig);
	fx_down(&a);
	fx_down(&b);
	ps_server_destroy(bs);
}
END_TEST

START_TEST(locators)
{
	char host[64], seg[PS_NAME_MAX + 1];
	int port;
	ck_assert_int_eq(ps_locator_parse("node1:4000/job.r0", host, sizeof(host), &port, seg), 0);
	ck_assert_str_eq(host, "node1");
	ck_assert_int_eq(port, 4000);
	ck_assert_str_eq(seg, "job.r0");
	ck_assert_int_eq(ps_locator_parse("10.0.0.2:5", host, sizeof(host), &port, seg), 0);
	ck_assert_str_eq(seg, "");
	ck_assert_int_eq(ps_locator_parse("node1", host, sizeof(host), &port, seg), PS_EINVAL);
	ck_assert_int_eq(ps_locator_parse(":4000", host, sizeof(host), &port, seg), PS_EINVAL);
	ck_assert_int_eq(ps_locator_parse("h:0/x", host, sizeof(host), &port, seg), PS_EINVAL);
	ck_assert_int_eq(ps_locator_parse("h:70000/x", host, sizeof(host), &port, seg), PS_EINVAL);
	ck_assert_int_eq(ps_locator_parse("h:12x/x", host, sizeof(host), &port, seg), PS_EINVAL);
	ps_server *s;
	ck_assert_int_eq(ps_server_open_at("127.0.0.1:1/x", 0, NULL, &s), -ECONNREFUSED);
}
END_TEST

START_TEST(secrets)
{
	char good[128], wrong[128], open_[128];
	secret_file(good, sizeof(good), "good", "right-one-of-sixteen", 0600);
	secret_file(wrong, sizeof(wrong), "wrong", "wrong-one-of-sixteen", 0600);
	secret_file(open_, sizeof(open_), "open", "right-one-of-sixteen", 0644);
	ps_tcp *t;
	struct ps_tcp_attr bad = { .addr = "0.0.0.0" };
	ck_assert_int_eq(ps_tcp_start(&bad, &t), PS_EACCES); /* off loopback without a secret */
	bad.secret_file = open_;
	ck_assert_int_eq(ps_tcp_start(&bad, &t), PS_EACCES); /* a secret others can read */
	struct fixture x;
	struct ps_tcp_attr ta = { .secret_file = good };
	fx_up(&x, &ta);
	ps_server *r;
	struct ps_remote_attr ra = { .secret_file = wrong };
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r), PS_EACCES);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), PS_EACCES);
	ra.secret_file = open_;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r), PS_EACCES);
	ra.secret_file = good;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r), 0);
	ck_assert_int_eq(ps_server_count(r), 2);
	ps_server_destroy(r);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.refused, 2); /* the third never reached it */
	fx_down(&x);

	/* what is wrong with a secret file, in words */
	char why[128], path[128];
	ck_assert_int_eq(ps_secret_check(good, why, sizeof(why)), 0);
	ck_assert_int_eq(ps_secret_check(open_, why, sizeof(why)), PS_EACCES);
	ck_assert_str_eq(why, "group or others may read or write it (chmod 600 it)");
	snprintf(path, sizeof(path), "/tmp/es-secret-%d-none", (int)getpid());
	ck_assert_int_eq(ps_secret_check(path, why, sizeof(why)), -ENOENT);
	ck_assert_str_eq(why, "No such file or directory");
	ck_assert_int_eq(ps_secret_check("/tmp", why, sizeof(why)), PS_EINVAL);
	ck_assert_str_eq(why, "not a regular file");
	snprintf(path, sizeof(path), "/tmp/es-secret-%d-fifo", (int)getpid());
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(ps_secret_check(path, why, sizeof(why)), PS_EINVAL); /* and no hang */
	unlink(path);
	secret_file(path, sizeof(path), "empty", "", 0600);
	truncate(path, 0);
	ck_assert_int_eq(ps_secret_check(path, why, sizeof(why)), PS_EINVAL);
	ck_assert_str_eq(why, "empty");
	unlink(path);
	secret_file(path, sizeof(path), "short", "fifteen-letters", 0600);
	ck_assert_int_eq(ps_secret_check(path, why, sizeof(why)), PS_EINVAL);
	ck_assert_msg(strstr(why, "shorter than 16 bytes, which can be guessed"), "%s", why);
	struct ps_tcp_attr shortone = { .secret_file = path };
	ck_assert_int_eq(ps_tcp_start(&shortone, &t), PS_EINVAL); /* a server refuses it too */
	unlink(path);
	ck_assert_int_eq(ps_secret_check(NULL, NULL, 0), PS_EINVAL);
	unlink(good);
	unlink(wrong);
	unlink(open_);
}
END_TEST

/* The guard's policy, in its own time: three failures free, then holds of
 * 100 ms doubling to 2 s; a pass clears them. */
START_TEST(guard_holds_a_guesser)
{
	ps_guard *g;
	ck_assert_int_eq(ps_guard_create(&g), 0);
	const uint64_t me = PS_WHO_USER | 1000, other = PS_WHO_USER | 65534;
	int64_t now = 1000000;
	static const int64_t want[] = { 0, 0, 0, 100, 200, 400, 800, 1600, 2000, 2000, 2000 };
	for (int i = 0; i < 11; i++, now += 5000) { /* slowly: the rate in all stays low */
		ck_assert_int_eq(ps_guard_hold(g, other, now), want[i]);
		ps_guard_note(g, other, false, now);
	}
	ck_assert_int_eq(ps_guard_hold(g, me, now), 0); /* another user's failures are not mine */
	ps_guard_note(g, other, true, now); /* a pass clears it */
	ck_assert_int_eq(ps_guard_hold(g, other, now), 0);
	struct ps_guard_counts c;
	ps_guard_counts(g, &c);
	ck_assert_uint_eq(c.failed, 11);
	ck_assert_uint_eq(c.passed, 1);
	ck_assert_uint_eq(c.held, 8);
	ps_guard_destroy(g);
}
END_TEST

/* Many addresses guessing at once get no more tries than one: while more
 * than ten a second fail, everyone who has not passed lately is held 2 s,
 * and a client that passed before is not. */
START_TEST(guard_counts_failures_in_all)
{
	ps_guard *g;
	ck_assert_int_eq(ps_guard_create(&g), 0);
	const uint64_t good = PS_WHO_IPV4 | 0x0a000001;
	int64_t now = 5000000;
	ps_guard_note(g, good, true, now);
	for (uint32_t a = 0; a < 11; a++) { /* eleven addresses, one guess each */
		ck_assert_int_eq(ps_guard_hold(g, PS_WHO_IPV4 | (0x0b000000 + a), now), 0);
		ps_guard_note(g, PS_WHO_IPV4 | (0x0b000000 + a), false, now);
	}
	ck_assert_int_eq(ps_guard_hold(g, PS_WHO_IPV4 | 0x0c000001, now + 10), 2000); /* a new one */
	ck_assert_int_eq(ps_guard_hold(g, good, now + 10), 0);
	ck_assert_int_eq(ps_guard_hold(g, PS_WHO_IPV4 | 0x0c000001, now + 2100), 0); /* two seconds later */
	/* 1,000 addresses, 16 handshakes at a time (a server's strangers), each
	 * guessing again as soon as its answer comes: a minute of it */
	int64_t until[16] = { 0 };
	uint64_t guesses = 0;
	uint32_t next = 0;
	for (int64_t t = now + 10000; t < now + 70000; t++)
		for (int k = 0; k < 16; k++) {
			if (until[k] > t)
				continue;
			if (until[k]) { /* its answer: a failure */
				ps_guard_note(g, PS_WHO_IPV4 | (0x0d000000 + next++ % 1000), false, t);
				guesses++;
			}
			int64_t h = ps_guard_hold(g, PS_WHO_IPV4 | (0x0d000000 + next % 1000), t);
			until[k] = t + (h ? h : 1);
		}
	ck_assert_msg(guesses <= 60 * 10 + 16 * 31, "%llu guesses in a minute", (unsigned long long)guesses);
	ck_assert_int_eq(ps_guard_hold(g, good, now + 70000), 0); /* the good client was never held */
	/* a table full of guessers does not forget the client that passed */
	for (uint32_t a = 0; a < 5000; a++)
		ps_guard_note(g, PS_WHO_IPV4 | (0x0e000000 + a), false, now + 80000 + a * 1000);
	ck_assert_int_eq(ps_guard_hold(g, good, now + 80000 + 5000 * 1000), 0);
	ps_guard_destroy(g);
}
END_TEST

/* Through a server: a client that keeps failing the secret is held, not
 * shut out; the secret's holder from the same user gets in (after the
 * hold at most), and its pass clears the strikes. */
START_TEST(guessing_is_slowed)
{
	char good[128], wrong[128];
	secret_file(good, sizeof(good), "good2", "right-one-of-sixteen", 0600);
	secret_file(wrong, sizeof(wrong), "wrong2", "wrong-one-of-sixteen", 0600);
	struct fixture x;
	struct ps_tcp_attr ta = { .secret_file = good };
	fx_up(&x, &ta);
	ps_server *r;
	struct ps_remote_attr bad = { .secret_file = wrong };
	struct ps_remote_attr ra = { .secret_file = good };
	/* three free; then held 100, 200, 400 and 800 ms */
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &bad, &r), PS_EACCES);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.refused, 7); /* every guess was heard once, no more */
	ck_assert_uint_eq(c.held, 4);
	/* a raw connection is accepted, not shut out: its HELLO is what waits */
	int fd = raw_connect(x.port);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* the secret's holder gets in, and clears it */
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r), 0);
	ps_server_destroy(r);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.held, 5);
	for (int i = 0; i < 3; i++) /* free again */
		ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &bad, &r), PS_EACCES);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.held, 5);
	fx_down(&x);
	unlink(good);
	unlink(wrong);
}
END_TEST

struct fake {
	int lfd, port;
};

/* A server of the test's own on loopback, answering in `serve` (a thread). */
static void fake_start(struct fake *f, void *(*serve)(void *), pthread_t *th)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	listen(f->lfd, 1);
	socklen_t sl = sizeof(sin);
	getsockname(f->lfd, (struct sockaddr *)&sin, &sl);
	f->port = ntohs(sin.sin_port);
	pthread_create(th, NULL, serve, f);
}

static void fake_reply(int fd, uint16_t op, uint32_t tag, const unsigned char *p, size_t n)
{
	unsigned char h[PSW_HDR];
	struct psw_hdr a = { (uint16_t)(op | PSW_REPLY), PSW_NATIVE, (uint32_t)n, tag };
	psw_put_hdr(h, &a);
	send(fd, h, PSW_HDR, MSG_NOSIGNAL);
	send(fd, p, n, MSG_NOSIGNAL);
}

static void be32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

/* Answers HELLO (as a big-endian host), ATTACH, OPEN (a 16-byte element)
 * and READ_LATEST with the tuple {q 0x0102030405060708, i 0x0a0b0c0d,
 * h 0x1122, h 0x3344} in big-endian order, as such a host stores it. */
static void *fake_server(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	unsigned char h[PSW_HDR], in[4096], out[512];
	for (;;) {
		struct psw_hdr q;
		if (recv(fd, h, PSW_HDR, MSG_WAITALL) != PSW_HDR || psw_get_hdr(h, &q) ||
		    (q.length && recv(fd, in, q.length, MSG_WAITALL) != (ssize_t)q.length))
			break;
		memset(out, 0, sizeof(out));
		size_t n = 0;
		switch (q.op) {
		case PSW_HELLO:
			out[0] = 1;
			be32(out + 4, 0x01020304);
			n = 12;
			break;
		case PSW_ATTACH:
			n = 12 + PS_USER_AREA;
			out[4] = 1;
			break;
		case PSW_OPEN:
			out[8] = 16;
			out[12] = 4;
			n = 24;
			break;
		case PSW_READ_LATEST: {
			static const unsigned char t[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 0xa, 0xb, 0xc, 0xd,
							     0x11, 0x22, 0x33, 0x44 };
			memcpy(out + 12, t, 16);
			n = 28;
			break;
		}
		case PSW_TIME:
			n = 8;
			break;
		default:
			n = 4;
		}
		fake_reply(fd, q.op, q.tag, out, n);
	}
	close(fd);
	return NULL;
}

START_TEST(other_byte_order)
{
	struct fake f;
	pthread_t th;
	fake_start(&f, fake_server, &th);
	ps_server *r;
	ps_elem *e;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", f.port, "be", 0, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "x", 16, &e), 0);
	ck_assert_int_eq(ps_elem_set_layout(e, "qih"), PS_EINVAL); /* 14 bytes, not 16 */
	ck_assert_int_eq(ps_elem_set_layout(e, "qihz"), PS_EINVAL);
	ck_assert_int_eq(ps_elem_set_layout(e, "q0b"), PS_EINVAL);
	ck_assert_int_eq(ps_elem_set_layout(e, "12b2h"), 0); /* counts: 16 bytes */
	struct __attribute__((packed)) {
		uint64_t q;
		uint32_t i;
		uint16_t a, b;
	} t;
	ck_assert_int_eq(ps_read_latest(e, &t, NULL), 0); /* no layout: bytes as they came */
	ck_assert_uint_eq(((unsigned char *)&t)[0], 1);
	ck_assert_int_eq(ps_elem_set_layout(e, "qihh"), 0);
	ck_assert_int_eq(ps_read_latest(e, &t, NULL), 0);
	ck_assert_uint_eq(t.q, 0x0102030405060708ull);
	ck_assert_uint_eq(t.i, 0x0a0b0c0du);
	ck_assert_uint_eq(t.a, 0x1122);
	ck_assert_uint_eq(t.b, 0x3344);
	ps_elem_close(e);
	ps_server_destroy(r);
	pthread_join(th, NULL);
	close(f.lfd);
}
END_TEST

/* A server that answers a byte at a time: the client gives up at its
 * deadline for the whole call, not per byte. */
static void *trickle_server(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	unsigned char h[PSW_HDR + 8];
	recv(fd, h, sizeof(h), MSG_WAITALL);
	unsigned char out[PSW_HDR + 12] = { 0 };
	struct psw_hdr a = { PSW_HELLO | PSW_REPLY, 0, 12, 1 };
	psw_put_hdr(out, &a);
	for (size_t i = 0; i < sizeof(out); i++) {
		if (send(fd, out + i, 1, MSG_NOSIGNAL) != 1)
			break;
		usleep(200000);
	}
	close(fd);
	return NULL;
}

START_TEST(slow_server_deadline)
{
	struct fake f;
	pthread_t th;
	fake_start(&f, trickle_server, &th);
	struct ps_remote_attr ra = { .timeout_ms = 500 };
	ps_server *r;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", f.port, "x", 0, &ra, &r),
			 PS_ELOST);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* 28 bytes at 5 a second would take 5.6 s: it stopped well before */
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 3);
	pthread_join(th, NULL);
	close(f.lfd);
	ck_assert_int_eq(ps_server_open_remote("no-such-host.invalid", 1, "x", 0, NULL, &r), PS_EHOST);
}
END_TEST

/* The server goes away and comes back on the same port: elements opened
 * before fail meanwhile (PS_ELOST), then work again, reopened by name. */
START_TEST(reconnects)
{
	struct fixture x;
	fx_up(&x, NULL);
	ps_server *r;
	ps_elem *e;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "d", 36, &e), 0);
	unsigned char t[36], g[36];
	tuple(t, 5);
	ps_write(x.d, t, 0, NULL);
	ck_assert_int_eq(ps_read_latest(e, g, NULL), 0);
	ps_tcp_stop(x.t);
	ck_assert_int_eq(ps_read_latest(e, g, NULL), PS_ELOST);
	int st;
	ck_assert_int_eq(ps_read_latest_many(&e, 1, g, NULL, &st), 0);
	ck_assert_int_eq(st, PS_ELOST);
	struct ps_tcp_attr ta = { .port = x.port };
	ck_assert_int_eq(ps_tcp_start(&ta, &x.t), 0);
	ck_assert_int_eq(ps_tcp_add(x.t, "seg", x.srv), 0);
	usleep(300000); /* past the retry pause */
	tuple(t, 6);
	ps_write(x.d, t, 0, NULL);
	ck_assert_int_eq(ps_read_latest(e, g, NULL), 0);
	ck_assert_mem_eq(g, t, 36);
	ck_assert_int_eq(ps_read_latest_many(&e, 1, g, NULL, &st), 1);
	ps_elem_close(e);
	ps_server_destroy(r);
	fx_down(&x);
}
END_TEST

/* LATEST_MANY with a handle the connection does not hold: that entry has
 * no tuple, and the ones after it are still read right. */
START_TEST(bad_handle_in_a_batch)
{
	struct fixture x;
	fx_up(&x, NULL);
	unsigned char t[36];
	tuple(t, 7);
	ps_write(x.d, t, 0, NULL);
	int fd = raw_connect(x.port);
	raw_hello(fd);
	unsigned char open_req[2 * PSW_NAME + 8] = "seg", rep[PSW_HDR + 64];
	memcpy(open_req + PSW_NAME, "d", 2);
	raw_send(fd, PSW_OPEN, sizeof(open_req), open_req, sizeof(open_req));
	ck_assert_int_eq(recv(fd, rep, PSW_HDR + 24, MSG_WAITALL), PSW_HDR + 24);
	unsigned char q[12];
	psw_put32(q, 2);
	psw_put32(q + 4, 99); /* not ours */
	psw_put32(q + 8, 0);
	raw_send(fd, PSW_LATEST_MANY, sizeof(q), q, sizeof(q));
	ck_assert_int_eq(recv(fd, rep, PSW_HDR + 4 + 12 + 12 + 36, MSG_WAITALL), PSW_HDR + 64);
	ck_assert_int_eq((int)psw_get32(rep + PSW_HDR + 4), -EBADF);
	ck_assert_int_eq((int)psw_get32(rep + PSW_HDR + 16), 0);
	ck_assert_mem_eq(rep + PSW_HDR + 28, t, 36);
	close(fd);
	fx_down(&x);
}
END_TEST

/* A host with more segments than one LIST reply holds: a client is told
 * of all of them, each once, page by page. */
static int mark_seg(const char *seg, void *arg)
{
	unsigned char *seen = arg;
	const char *num = strrchr(seg, '-');
	int i = num ? atoi(num + 1) : -1;
	if (i >= 0 && i < 1300)
		seen[i]++;
	return 0;
}

START_TEST(list_pages)
{
	char prefix[32], seg[PS_NAME_MAX + 1];
	snprintf(prefix, sizeof(prefix), "t%d-many-", (int)getpid());
	enum { N = 1300 };
	struct ps_shm_attr sa = { .size = 4096, .max_elems = 1 };
	ps_server **s = calloc(N, sizeof(*s));
	for (int i = 0; i < N; i++) {
		snprintf(seg, sizeof(seg), "%s%d", prefix, i);
		ck_assert_int_eq(ps_server_create_shm(seg, &sa, &s[i]), 0);
	}
	struct ps_tcp_attr ta = { .shm_prefix = prefix };
	ps_tcp *tcp;
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	unsigned char *seen = calloc(N, 1);
	ck_assert_int_eq(ps_remote_list("127.0.0.1", ps_tcp_port(tcp), NULL, prefix, mark_seg, seen), 0);
	for (int i = 0; i < N; i++)
		ck_assert_msg(seen[i] == 1, "segment %d listed %d times", i, seen[i]);
	ps_tcp_stop(tcp);
	for (int i = 0; i < N; i++) {
		snprintf(seg, sizeof(seg), "%s%d", prefix, i);
		ps_server_destroy(s[i]);
		ps_shm_unlink(seg);
	}
	free(s);
	free(seen);
}
END_TEST

/* A server that serves segments read-only lets a client write a control
 * element (PS_CONTROL) and nothing else; the write reaches the segment. */
START_TEST(control_elements_through_a_read_only_server)
{
	char prefix[32], seg[PS_NAME_MAX + 1];
	snprintf(prefix, sizeof(prefix), "t%d-ctl-", (int)getpid());
	snprintf(seg, sizeof(seg), "%s0", prefix);
	ps_shm_unlink(seg);
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	struct ps_elem_attr ca = { .tuple_size = 8, .threshold = 1, .flags = PS_MULTI_WRITER | PS_CONTROL };
	struct ps_elem_attr pa = { .tuple_size = 8, .threshold = 4 };
	ps_elem *ctl, *plain, *rc_, *rp;
	ck_assert_int_eq(ps_elem_create(s, "ctl", &ca, &ctl), 0);
	ck_assert_int_eq(ps_elem_create(s, "plain", &pa, &plain), 0);
	struct ps_tcp_attr ta = { .shm_prefix = prefix }; /* not writable */
	ps_tcp *tcp;
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	ps_server *r;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), seg, PS_RDWR, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "plain", 8, &rp), PS_EROFS);
	ck_assert_int_eq(ps_elem_open(r, "ctl", 8, &rc_), 0);
	uint64_t v = 42, got = 0;
	ck_assert_int_eq(ps_write(rc_, &v, 0, NULL), 0);
	ck_assert_int_eq(ps_read_latest(ctl, &got, NULL), 0);
	ck_assert_uint_eq(got, 42);
	ps_elem_close(rc_);
	ps_server_destroy(r);
	ps_tcp_stop(tcp);
	ps_elem_close(ctl);
	ps_elem_close(plain);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}
END_TEST

/* A server that answers every step of opening (HELLO, the clock's round
 * trips, ATTACH) promptly enough for each, but not for all of them. */
static void *dawdle_server(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	unsigned char in[PSW_HDR + 512], out[PSW_HDR + 12 + PS_USER_AREA];
	for (;;) {
		struct psw_hdr q;
		if (recv(fd, in, PSW_HDR, MSG_WAITALL) != PSW_HDR || psw_get_hdr(in, &q) ||
		    q.length > 512 || (q.length && recv(fd, in, q.length, MSG_WAITALL) != (ssize_t)q.length))
			break;
		usleep(180000); /* 0.6 of the client's 300 ms */
		memset(out, 0, sizeof(out));
		size_t n = q.op == PSW_HELLO ? 12 : q.op == PSW_TIME ? 8 : 12 + PS_USER_AREA;
		if (q.op == PSW_HELLO) {
			uint32_t mark = 0x01020304;
			psw_put32(out + PSW_HDR, PSW_VERSION);
			memcpy(out + PSW_HDR + 4, &mark, 4);
		}
		if (q.op == PSW_ATTACH)
			psw_put32(out + PSW_HDR + 8, PS_SHM_LIVE);
		struct psw_hdr a = { (uint16_t)(q.op | PSW_REPLY), PSW_NATIVE, (uint32_t)n, q.tag };
		psw_put_hdr(out, &a);
		if (send(fd, out, PSW_HDR + n, MSG_NOSIGNAL) != (ssize_t)(PSW_HDR + n))
			break;
	}
	close(fd);
	return NULL;
}

/* A call has one deadline, for all it does: a server that takes most of it
 * for each step of opening does not get it again for the next. */
START_TEST(one_deadline_per_call)
{
	struct fake f;
	pthread_t th;
	fake_start(&f, dawdle_server, &th);
	struct ps_remote_attr ra = { .timeout_ms = 300 };
	ps_server *r = NULL;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", f.port, "x", 0, &ra, &r),
			 PS_ELOST);
	pthread_join(th, NULL);
	close(f.lfd);
}
END_TEST

static void *cont_later(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	usleep(1000000);
	kill(pid, SIGCONT);
	return NULL;
}

/* A host paused (stopped, swapping) for longer than the connection's
 * timeout but less than an operation's own: the operation waits for it,
 * as it would for a slow writer, and gets its tuple. */
START_TEST(paused_server_waited_for)
{
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *srv;
		ps_elem *f;
		ps_tcp *t;
		struct ps_elem_attr fa = { .tuple_size = 8, .threshold = 2, .mode = PS_FLOW };
		if (ps_server_create_local(&srv) || ps_elem_create(srv, "f", &fa, &f) ||
		    ps_write(f, "tuple-1", 0, NULL) || ps_tcp_start(NULL, &t) || ps_tcp_add(t, "seg", srv))
			_exit(1);
		int port = ps_tcp_port(t);
		if (write(pfd[1], &port, sizeof(port)) != sizeof(port))
			_exit(1);
		for (;;)
			pause();
	}
	int port = 0;
	ck_assert_int_eq(read(pfd[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	struct ps_remote_attr ra = { .timeout_ms = 300 };
	ps_server *r;
	ps_elem *re;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", port, "seg", PS_RDWR, &ra, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "f", 8, &re), 0);
	kill(pid, SIGSTOP);
	pthread_t th;
	pthread_create(&th, NULL, cont_later, &pid);
	char got[8];
	ck_assert_int_eq(ps_take(re, got, 5000, NULL), 0); /* waits out the pause */
	ck_assert_str_eq(got, "tuple-1");
	pthread_join(th, NULL);
	unsigned char b[8];
	ck_assert_int_eq(ps_read_latest(re, b, NULL), PS_ENODATA); /* taken once, not twice */
	ps_elem_close(re);
	ps_server_destroy(r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

struct restart {
	ps_server *srv;
	int port;
	ps_tcp *t;
};

static void *restart_later(void *arg)
{
	struct restart *x = arg;
	usleep(600000);
	struct ps_tcp_attr ta = { .port = x->port };
	if (!ps_tcp_start(&ta, &x->t))
		ps_tcp_add(x->t, "seg", x->srv);
	return NULL;
}

/* A server restarted between a client's operations (a node daemon
 * restarted, say): the client finds its connection closed before it sends,
 * and operations that wait take, write and read through the new one. */
START_TEST(restarted_server_found_again)
{
	struct fixture x;
	fx_up(&x, NULL);
	ck_assert_int_eq(ps_write(x.f, "one....", 0, NULL), 0);
	ps_server *r;
	ps_elem *rf, *rd;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDWR, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "f", 8, &rf), 0);
	ck_assert_int_eq(ps_elem_open(r, "d", 36, &rd), 0);
	char got[8];
	for (int round = 0; round < 2; round++) {
		ps_tcp_stop(x.t); /* gone while the client is idle */
		struct restart rs = { x.srv, x.port, NULL };
		pthread_t th;
		pthread_create(&th, NULL, restart_later, &rs);
		if (round == 0) { /* a take that waits across the restart */
			ck_assert_int_eq(ps_take(rf, got, 5000, NULL), 0);
			ck_assert_str_eq(got, "one....");
		} else { /* a write, then a read of what it wrote */
			ck_assert_int_eq(ps_write(rf, "two....", 5000, NULL), 0);
			unsigned char t36[36]; /* and the other element, on the same connection */
			ck_assert_int_eq(ps_read_latest(rd, t36, NULL), PS_ENODATA);
			ck_assert_int_eq(ps_take(x.f, got, 0, NULL), 0);
			ck_assert_str_eq(got, "two....");
		}
		pthread_join(th, NULL);
		ck_assert_ptr_nonnull(rs.t);
		x.t = rs.t;
	}
	ck_assert_int_eq(ps_take(x.f, got, 0, NULL), PS_ETIMEDOUT); /* nothing twice */
	ps_elem_close(rf);
	ps_elem_close(rd);
	ps_server_destroy(r);
	fx_down(&x);
}
END_TEST

Suite *remote_suite(void)
{
	Suite *s = suite_create("remote");
	TCase *tc = tcase_create("tcp");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_operation);
	tcase_add_test(tc, boards);
	tcase_add_test(tc, waits_poll_the_server);
	tcase_add_test(tc, batches_and_lists);
	tcase_add_test(tc, secrets);
	tcase_add_test(tc, guard_holds_a_guesser);
	tcase_add_test(tc, guard_counts_failures_in_all);
	tcase_add_test(tc, guessing_is_slowed);
	tcase_add_test(tc, control_elements_through_a_read_only_server);
	tcase_add_test(tc, other_byte_order);
	tcase_add_test(tc, locators);
	tcase_add_test(tc, slow_server_deadline);
	tcase_add_test(tc, reconnects);
	tcase_add_test(tc, bad_handle_in_a_batch);
	tcase_add_test(tc, list_pages);
	tcase_add_test(tc, one_deadline_per_call);
	tcase_add_test(tc, paused_server_waited_for);
	tcase_add_test(tc, restarted_server_found_again);
	suite_add_tcase(s, tc);
	return s;
}
