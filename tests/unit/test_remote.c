/* test_remote.c - tuple servers over TCP: every operation over loopback, the node daemon, batches, byte order, secrets and malformed input. */
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

/* A local server with a discard element d (36 bytes, 8 held) and a flow
 * element f (8 bytes, 2 held), served as "seg". */
struct fixture {
	ps_server *srv;
	ps_elem *d, *f;
	ps_tcp *t;
	int port;
};

static void fx_up(struct fixture *x, const struct ps_tcp_attr *a)
{
	ck_assert_int_eq(ps_server_create_local(&x->srv), 0);
	struct ps_elem_attr da = { .tuple_size = 36, .threshold = 8 };
	struct ps_elem_attr fa = { .tuple_size = 8, .threshold = 2, .mode = PS_FLOW };
	ck_assert_int_eq(ps_elem_create(x->srv, "d", &da, &x->d), 0);
	ck_assert_int_eq(ps_elem_create(x->srv, "f", &fa, &x->f), 0);
	void *area;
	ps_server_user_area(x->srv, &area);
	memcpy(area, "calibration", 12);
	ck_assert_int_eq(ps_tcp_start(a, &x->t), 0);
	ck_assert_int_eq(ps_tcp_add(x->t, "seg", x->srv), 0);
	x->port = ps_tcp_port(x->t);
	ck_assert_int_gt(x->port, 0);
}

static void fx_down(struct fixture *x)
{
	ps_tcp_stop(x->t);
	ps_elem_close(x->d);
	ps_elem_close(x->f);
	ps_server_destroy(x->srv);
}

static void tuple(unsigned char t[36], uint32_t v)
{
	memset(t, (int)(v & 0xff), 36);
	memcpy(t, &v, 4);
}

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

static int count_seg(const char *seg, void *arg)
{
	(void)seg;
	++*(int *)arg;
	return 0;
}

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

START_TEST(node_daemon_serves_shm)
{
	char seg[PS_NAME_MAX + 1];
	TEST_SEG(seg, "daemon");
	ps_server *s;
	ps_elem *e;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	struct ps_elem_attr a = { .tuple_size = 36, .threshold = 4 };
	ck_assert_int_eq(ps_elem_create(s, "trace", &a, &e), 0);
	unsigned char t[36], g[36];
	tuple(t, 9);
	ps_write(e, t, 0, NULL);
	char prefix[PS_NAME_MAX + 1];
	snprintf(prefix, sizeof(prefix), "t%d-", (int)getpid());
	struct ps_tcp_attr ta = { .shm_prefix = prefix };
	ps_tcp *tcp;
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	int n = 0;
	ck_assert_int_eq(ps_remote_list("127.0.0.1", ps_tcp_port(tcp), NULL, prefix, count_seg, &n), 0);
	ck_assert_int_eq(n, 1);
	ps_server *r;
	ps_elem *re;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), "pastset", PS_RDONLY,
					       NULL, &r), PS_ENOENT); /* outside its prefix */
	/* a segment file with no header: said at once, the loop never waits on it */
	char half[PS_NAME_MAX + 8], path[128];
	snprintf(half, sizeof(half), "%shalf", prefix);
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", half);
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), half, PS_RDONLY,
						       NULL, &r), PS_EPARTIAL);
	ps_shm_unlink(half);
	/* served read-only by the daemon: a client asking to write is told at
	 * open, not at its first write */
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), seg, PS_RDWR, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "trace", 36, &re), PS_EROFS);
	ps_server_destroy(r);
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), seg, PS_RDONLY, NULL, &r), 0);
	ck_assert_int_eq(ps_elem_open(r, "trace", 36, &re), 0);
	ck_assert_int_eq(ps_read_latest(re, g, NULL), 0);
	ck_assert_mem_eq(g, t, 36);
	char where[128];
	snprintf(where, sizeof(where), "127.0.0.1:%d/%s", ps_tcp_port(tcp), seg);
	ck_assert_int_eq(ps_state_at(where, NULL), PS_SHM_LIVE);
	ck_assert_int_eq(ps_write(re, t, 0, NULL), PS_EROFS);
	ps_elem_close(re);
	ps_server_destroy(r);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_state_at(where, NULL), PS_SHM_CLOSED); /* its creator closed it */
	ps_tcp_stop(tcp);
	ck_assert_int_lt(ps_state_at(where, NULL), 0); /* the server is gone */
	ps_shm_unlink(seg);
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

static void secret_file(char *path, size_t len, const char *tag, const char *what, mode_t mode)
{
	snprintf(path, len, "/tmp/es-secret-%d-%s", (int)getpid(), tag);
	unlink(path);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", what);
	fclose(f);
	chmod(path, mode);
}

START_TEST(secrets)
{
	char good[128], wrong[128], open_[128];
	secret_file(good, sizeof(good), "good", "right-one", 0600);
	secret_file(wrong, sizeof(wrong), "wrong", "wrong-one", 0600);
	secret_file(open_, sizeof(open_), "open", "right-one", 0644);
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
	ck_assert_int_eq(ps_secret_check(NULL, NULL, 0), PS_EINVAL);
	unlink(good);
	unlink(wrong);
	unlink(open_);
}
END_TEST

/* --- raw frames ---------------------------------------------------------- */

static int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void raw_send(int fd, uint16_t op, uint32_t len, const void *payload, size_t have)
{
	unsigned char h[PSW_HDR];
	struct psw_hdr q = { op, 0, len, 1 };
	psw_put_hdr(h, &q);
	ck_assert_int_eq(send(fd, h, PSW_HDR, MSG_NOSIGNAL), PSW_HDR);
	if (have)
		ck_assert_int_eq(send(fd, payload, have, MSG_NOSIGNAL), (ssize_t)have);
}

static void raw_hello(int fd)
{
	unsigned char p[8], r[PSW_HDR + 12];
	uint32_t v = 1, order = 0x01020304;
	memcpy(p, &v, 4);
	memcpy(p + 4, &order, 4);
	raw_send(fd, PSW_HELLO, 8, p, 8);
	ck_assert_int_eq(recv(fd, r, sizeof(r), MSG_WAITALL), (ssize_t)sizeof(r));
}

/* The server closed it: end of stream (or a reset), and no reply first. */
static void assert_closed(int fd)
{
	unsigned char b[64];
	ssize_t k = recv(fd, b, sizeof(b), 0);
	ck_assert_int_le(k, 0);
	ck_assert(k == 0 || errno == ECONNRESET);
	close(fd);
}

START_TEST(malformed_input)
{
	struct fixture x;
	struct ps_tcp_attr ta = { .idle_ms = 200 };
	fx_up(&x, &ta);
	struct ps_tcp_counts c;

	int fd = raw_connect(x.port); /* garbage where a header should be */
	ck_assert_int_eq(send(fd, "GET / HTTP/1.0\r\n\r\n", 18, 0), 18);
	assert_closed(fd);
	fd = raw_connect(x.port); /* an operation before HELLO */
	raw_send(fd, PSW_STATS, 4, "\0\0\0\0", 4);
	assert_closed(fd);
	fd = raw_connect(x.port); /* an unknown operation */
	raw_hello(fd);
	raw_send(fd, 99, 0, NULL, 0);
	assert_closed(fd);
	fd = raw_connect(x.port); /* a frame over the limit: refused before its payload */
	raw_hello(fd);
	raw_send(fd, PSW_WRITE, PSW_MAX_PAYLOAD + 1, NULL, 0);
	assert_closed(fd);
	fd = raw_connect(x.port); /* a known operation with the wrong length */
	raw_hello(fd);
	raw_send(fd, PSW_STATS, 3, "abc", 3);
	assert_closed(fd);
	fd = raw_connect(x.port); /* a reply where a request belongs */
	raw_hello(fd);
	raw_send(fd, PSW_STATS | PSW_REPLY, 4, "\0\0\0\0", 4);
	assert_closed(fd);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.bad, 6);

	fd = raw_connect(x.port); /* truncated: half a frame, then silence */
	raw_hello(fd);
	raw_send(fd, PSW_READ_LATEST, 4, "\0\0", 2);
	assert_closed(fd);
	fd = raw_connect(x.port); /* connects and never says HELLO */
	assert_closed(fd);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.slow, 2);

	/* asks and asks and never reads: its replies pile up to the bound, the
	 * server stops reading its requests, and once its replies have made no
	 * progress for the idle time it goes (as slow) */
	fd = raw_connect(x.port);
	raw_hello(fd);
	unsigned char open_req[2 * PSW_NAME + 8] = "seg";
	memcpy(open_req + PSW_NAME, "d", 2);
	raw_send(fd, PSW_OPEN, sizeof(open_req), open_req, sizeof(open_req));
	unsigned char *many = calloc(1, 4 + 4 * PSW_MANY_MAX);
	uint32_t k = PSW_MANY_MAX;
	memcpy(many, &k, 4); /* handle 0, 4096 times: 196 KB a reply */
	int sent = 0;
	for (; sent < 200; sent++) {
		unsigned char h[PSW_HDR];
		struct psw_hdr q = { PSW_LATEST_MANY, 0, 4 + 4 * PSW_MANY_MAX, 2 };
		psw_put_hdr(h, &q);
		if (send(fd, h, PSW_HDR, MSG_NOSIGNAL | MSG_DONTWAIT) != PSW_HDR ||
		    send(fd, many, 4 + 4 * PSW_MANY_MAX, MSG_NOSIGNAL) != 4 + 4 * PSW_MANY_MAX)
			break; /* the server closed it */
	}
	free(many);
	for (int w = 0; w < 100; w++) {
		ps_tcp_counts(x.t, &c);
		if (c.slow == 3)
			break;
		usleep(20000);
	}
	ck_assert_uint_eq(c.slow, 3);
	close(fd);

	/* after all that, a proper client is served */
	ps_server *r;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), 0);
	ck_assert_int_eq(ps_server_count(r), 2);
	ps_server_destroy(r);
	fx_down(&x);
}
END_TEST

/* --- a server of the other byte order ---------------------------------------- */

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

/* Replies are appended while the kernel still sends earlier ones from the
 * same buffer (a small send buffer makes sure it does): every reply must
 * arrive whole. */
START_TEST(replies_while_sending)
{
	ps_server *srv;
	ps_elem *big;
	enum { SZ = 65536, N = 28 };
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct ps_elem_attr a = { .tuple_size = SZ, .threshold = 1 };
	ck_assert_int_eq(ps_elem_create(srv, "big", &a, &big), 0);
	unsigned char *t = malloc(SZ), *got = malloc(PSW_HDR + 12 + SZ);
	memset(t, 'T', SZ);
	ck_assert_int_eq(ps_write(big, t, 0, NULL), 0);
	ps_tcp *tcp;
	struct ps_tcp_attr ta = { .sndbuf = 16384 };
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	ck_assert_int_eq(ps_tcp_add(tcp, "s", srv), 0);
	/* a small window on our side too: the server's sends must wait */
	int fd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)ps_tcp_port(tcp)) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	raw_hello(fd);
	unsigned char open_req[2 * PSW_NAME + 8] = "s";
	memcpy(open_req + PSW_NAME, "big", 4);
	raw_send(fd, PSW_OPEN, sizeof(open_req), open_req, sizeof(open_req));
	ck_assert_int_eq(recv(fd, got, PSW_HDR + 24, MSG_WAITALL), PSW_HDR + 24);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N / 4; i++)
			raw_send(fd, PSW_READ_LATEST, 4, "\0\0\0\0", 4);
		usleep(20000); /* the server queues while the first replies are in flight */
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(recv(fd, got, PSW_HDR + 12 + SZ, MSG_WAITALL), PSW_HDR + 12 + SZ);
		ck_assert_int_eq(psw_get32(got + PSW_HDR), 0);
		ck_assert_mem_eq(got + PSW_HDR + 12, t, SZ);
	}
	close(fd);
	struct ps_tcp_counts c;
	ps_tcp_counts(tcp, &c);
	ck_assert_uint_eq(c.bad + c.slow, 0);
	ps_tcp_stop(tcp);
	ps_elem_close(big);
	ps_server_destroy(srv);
	free(t);
	free(got);
}
END_TEST

/* Without a secret, a loopback server serves only its own user (and
 * root): segments are 0600, and so is what serves them. */
START_TEST(other_users_refused)
{
	if (geteuid() != 0)
		return; /* needs root, to be another user */
	struct fixture x;
	fx_up(&x, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		ps_server *r;
		int rc = ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r);
		_exit(rc == PS_EACCES ? 0 : 1); /* told why, not "lost the tuple server" */
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another user got in: %d", st);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.refused, 1);
	ps_server *r; /* we still get in */
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), 0);
	ps_server_destroy(r);
	fx_down(&x);
}
END_TEST

/* A client that trickles a byte now and then never completes its HELLO
 * within the idle time: it does not keep its slot. */
START_TEST(trickling_clients_dropped)
{
	struct fixture x;
	struct ps_tcp_attr ta = { .idle_ms = 300 };
	fx_up(&x, &ta);
	int fd = raw_connect(x.port);
	unsigned char h[PSW_HDR];
	struct psw_hdr q = { PSW_HELLO, 0, 8, 1 };
	psw_put_hdr(h, &q);
	bool closed = false;
	for (int i = 0; i < PSW_HDR && !closed; i++) {
		closed = send(fd, h + i, 1, MSG_NOSIGNAL) != 1;
		usleep(100000);
		unsigned char b;
		ssize_t k = recv(fd, &b, 1, MSG_DONTWAIT);
		closed |= k == 0 || (k < 0 && errno == ECONNRESET);
	}
	ck_assert(closed);
	close(fd);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.slow, 1);
	fx_down(&x);
}
END_TEST

/* A job that runs again makes a new segment of the same name: the node
 * daemon serves the new one, not the mapping it had of the old. */
START_TEST(daemon_follows_replaced_segments)
{
	char seg[PS_NAME_MAX + 1], prefix[32];
	TEST_SEG(seg, "again");
	snprintf(prefix, sizeof(prefix), "t%d-", (int)getpid());
	struct ps_tcp_attr ta = { .shm_prefix = prefix };
	ps_tcp *tcp;
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	const char *runs[2] = { "run-one", "run-two" };
	for (int run = 0; run < 2; run++) {
		ps_server *s, *r;
		ps_elem *e, *re;
		struct ps_shm_attr sa = { .flags = PS_SHM_REPLACE_DEAD };
		ck_assert_int_eq(ps_server_create_shm(seg, &sa, &s), 0);
		struct ps_elem_attr a = { .tuple_size = 8, .threshold = 1 };
		ck_assert_int_eq(ps_elem_create(s, "x", &a, &e), 0);
		ck_assert_int_eq(ps_write(e, runs[run], 0, NULL), 0);
		ck_assert_int_eq(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), seg, 0, NULL, &r), 0);
		ck_assert_int_eq(ps_elem_open(r, "x", 8, &re), 0);
		char got[8];
		ck_assert_int_eq(ps_read_latest(re, got, NULL), 0);
		ck_assert_str_eq(got, runs[run]);
		ps_elem_close(re);
		ps_server_destroy(r);
		ps_elem_close(e);
		ps_server_destroy(s); /* closed: the next run replaces it */
	}
	ps_tcp_stop(tcp);
	ps_shm_unlink(seg);
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

/* --- clients served at their pace --------------------------------------------- */

/* A client that pipelines requests whose replies are far more than the
 * server queues (eight 1 MB ranges) and reads them as they come is served
 * whole, however small the windows: the server waits for it, never drops it. */
START_TEST(pipelined_big_replies)
{
	ps_server *srv;
	ps_elem *big;
	enum { SZ = 65536, HELD = 16, ASKS = 8 };
	ck_assert_int_eq(ps_server_create_local(&srv), 0);
	struct ps_elem_attr a = { .tuple_size = SZ, .threshold = HELD };
	ck_assert_int_eq(ps_elem_create(srv, "big", &a, &big), 0);
	unsigned char *t = malloc(SZ);
	for (int i = 0; i < HELD; i++) {
		memset(t, 'a' + i, SZ);
		ck_assert_int_eq(ps_write(big, t, 0, NULL), 0);
	}
	ps_tcp *tcp;
	struct ps_tcp_attr ta = { .sndbuf = 16384, .idle_ms = 2000 };
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	ck_assert_int_eq(ps_tcp_add(tcp, "s", srv), 0);
	int fd = socket(AF_INET, SOCK_STREAM, 0), small = 8192;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)ps_tcp_port(tcp)) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	struct timeval tv = { 10, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	raw_hello(fd);
	unsigned char open_req[2 * PSW_NAME + 8] = "s", *got = malloc(PSW_HDR + PSW_MAX_PAYLOAD);
	memcpy(open_req + PSW_NAME, "big", 4);
	raw_send(fd, PSW_OPEN, sizeof(open_req), open_req, sizeof(open_req));
	ck_assert_int_eq(recv(fd, got, PSW_HDR + 24, MSG_WAITALL), PSW_HDR + 24);
	unsigned char range[16] = { 0 }; /* handle 0, from index 0, as many as fit */
	range[12] = HELD;
	for (int i = 0; i < ASKS; i++)
		raw_send(fd, PSW_READ_RANGE, 16, range, 16);
	size_t fit = (PSW_MAX_PAYLOAD - 12) / SZ, whole = PSW_HDR + 12 + fit * SZ;
	for (int i = 0; i < ASKS; i++) {
		ck_assert_int_eq(recv(fd, got, whole, MSG_WAITALL), (ssize_t)whole);
		ck_assert_int_eq((int)psw_get32(got + PSW_HDR), (int)fit);
		ck_assert_int_eq(got[PSW_HDR + 12 + (fit - 1) * SZ], 'a' + (int)fit - 1);
	}
	close(fd);
	struct ps_tcp_counts c;
	ps_tcp_counts(tcp, &c);
	ck_assert_uint_eq(c.bad + c.slow, 0);
	ps_tcp_stop(tcp);
	ps_elem_close(big);
	ps_server_destroy(srv);
	free(t);
	free(got);
}
END_TEST

/* Clients that connect, say HELLO and go, from several threads at once for
 * two seconds (160 ticks of the idle check land among them): none may be
 * taken for slow.  A reply's send has the idle time from when it was
 * queued, not from whenever the connection last sent (or from 0). */
struct hello_loop {
	int port;
	_Atomic bool *stop;
	int ok, failed;
};

static void *hello_loop(void *arg)
{
	struct hello_loop *h = arg;
	unsigned char p[8], r[PSW_HDR + 12];
	uint32_t v = 1, order = 0x01020304;
	memcpy(p, &v, 4);
	memcpy(p + 4, &order, 4);
	unsigned char f[PSW_HDR + 8];
	struct psw_hdr q = { PSW_HELLO, 0, 8, 1 };
	psw_put_hdr(f, &q);
	memcpy(f + PSW_HDR, p, 8);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)h->port) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	while (!atomic_load(h->stop)) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct timeval tv = { 5, 0 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    send(fd, f, sizeof(f), MSG_NOSIGNAL) != (ssize_t)sizeof(f) ||
		    recv(fd, r, sizeof(r), MSG_WAITALL) != (ssize_t)sizeof(r))
			h->failed++;
		else
			h->ok++;
		close(fd);
	}
	return NULL;
}

START_TEST(quick_clients_never_slow)
{
	struct fixture x;
	struct ps_tcp_attr ta = { .idle_ms = 100 }; /* checked every 12 ms */
	fx_up(&x, &ta);
	_Atomic bool stop = false;
	enum { T = 4 };
	pthread_t th[T];
	struct hello_loop h[T];
	for (int i = 0; i < T; i++) {
		h[i] = (struct hello_loop){ x.port, &stop, 0, 0 };
		pthread_create(&th[i], NULL, hello_loop, &h[i]);
	}
	sleep(2);
	atomic_store(&stop, true);
	int ok = 0, failed = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		ok += h[i].ok;
		failed += h[i].failed;
	}
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_int_gt(ok, 0);
	ck_assert_msg(failed == 0 && c.slow == 0, "%d of %d clients failed, %llu taken for slow",
		      failed, ok + failed, (unsigned long long)c.slow);
	fx_down(&x);
}
END_TEST

/* Strangers (connected, no HELLO yet) hold at most a quarter of the slots:
 * past that the one that waited longest goes, so a client that knows the
 * server still gets in however many strangers wait. */
START_TEST(strangers_bounded)
{
	struct fixture x;
	fx_up(&x, NULL);
	int fds[16];
	struct ps_tcp_counts c;
	for (int n = 0; n < 16; n++) {
		fds[n] = raw_connect(x.port);
		for (int w = 0; w < 100; w++) { /* taken in, in this order */
			ps_tcp_counts(x.t, &c);
			if (c.accepted == (uint64_t)n + 1)
				break;
			usleep(10000);
		}
	}
	ck_assert_uint_eq(c.accepted, 16);
	ps_server *r;
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), 0);
	ps_server_destroy(r);
	assert_closed(fds[0]); /* the first stranger made room */
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.slow, 1);
	ck_assert_uint_eq(c.refused, 0);
	/* and a stranger's HELLO may not be long: over the secret's bound, closed */
	unsigned char big[PSW_HDR];
	struct psw_hdr q = { PSW_HELLO, 0, 8 + PS_SECRET_MAX + 1, 1 };
	psw_put_hdr(big, &q);
	ck_assert_int_eq(send(fds[1], big, PSW_HDR, MSG_NOSIGNAL), PSW_HDR);
	assert_closed(fds[1]);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.bad, 1);
	for (int i = 2; i < 16; i++)
		close(fds[i]);
	fx_down(&x);
}
END_TEST

/* Clients that know the server and merely stay cannot keep others out: a
 * full table closes the one quiet the longest (a second or more), and a
 * client it closed reconnects on its next call as if nothing happened. */
START_TEST(idle_clients_cannot_lock_out)
{
	struct fixture x;
	fx_up(&x, NULL);
	ps_server *quiet, *late;
	ps_elem *qd, *ld;
	unsigned char t[36], got[36];
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", PS_RDWR, NULL, &quiet), 0);
	ck_assert_int_eq(ps_elem_open(quiet, "d", 36, &qd), 0);
	enum { N = 63 }; /* with quiet, every slot */
	int fds[N];
	for (int i = 0; i < N; i++) {
		fds[i] = raw_connect(x.port);
		raw_hello(fds[i]);
	}
	usleep(1100 * 1000); /* all quiet for over a second, quiet the longest */
	/* by another name, so that it does not share quiet's connection */
	ck_assert_int_eq(ps_server_open_remote("localhost", x.port, "seg", 0, NULL, &late), 0);
	ck_assert_int_eq(ps_elem_open(late, "d", 36, &ld), 0);
	tuple(t, 7);
	ck_assert_int_eq(ps_write(x.d, t, 0, NULL), 0);
	ck_assert_int_eq(ps_read_latest(ld, got, NULL), 0);
	ck_assert_mem_eq(got, t, 36);
	/* the quiet one lost its place, not its elements */
	ck_assert_int_eq(ps_read_latest(qd, got, NULL), 0);
	ck_assert_mem_eq(got, t, 36);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_ge(c.slow, 1);
	ps_elem_close(ld);
	ps_server_destroy(late);
	ps_elem_close(qd);
	ps_server_destroy(quiet);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	fx_down(&x);
}
END_TEST

struct flood {
	int port;
	_Atomic bool *stop;
};

static void *flood(void *arg)
{
	struct flood *f = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)f->port) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	while (!atomic_load(f->stop)) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sin, sizeof(sin)) && (fd & 1)) {
			unsigned char junk[8] = { 0 }; /* half say something wrong */
			send(fd, junk, sizeof(junk), MSG_NOSIGNAL);
		}
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/* Strangers connecting and closing as fast as they can, with a secret
 * required, delay a client that knows it but never keep it out. */
START_TEST(flood_cannot_lock_out)
{
	char good[128];
	secret_file(good, sizeof(good), "flood", "flood-secret", 0600);
	struct fixture x;
	struct ps_tcp_attr ta = { .secret_file = good };
	fx_up(&x, &ta);
	_Atomic bool stop = false;
	enum { T = 6 };
	pthread_t th[T];
	struct flood f = { x.port, &stop };
	for (int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, flood, &f);
	struct ps_remote_attr ra = { .secret_file = good };
	int failed = 0;
	for (int i = 0; i < 100; i++) {
		ps_server *r;
		if (ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r))
			failed++;
		else
			ps_server_destroy(r);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_msg(failed == 0, "%d of 100 clients kept out by %llu strangers", failed,
		      (unsigned long long)c.accepted);
	fx_down(&x);
	unlink(good);
}
END_TEST

/* A client that resets its connection before the server looks at it went
 * away; it was not refused. */
START_TEST(reset_is_not_refused)
{
	struct fixture x;
	fx_up(&x, NULL);
	for (int i = 0; i < 50; i++) {
		int fd = raw_connect(x.port);
		struct linger l = { 1, 0 };
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		close(fd);
	}
	ps_server *r; /* the server is fine, and has served all before this */
	ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, NULL, &r), 0);
	ps_server_destroy(r);
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.refused, 0);
	fx_down(&x);
}
END_TEST

/* A stopped server gives its port back at once: a daemon restarted on its
 * fixed port finds it free. */
START_TEST(port_free_after_stop)
{
	ps_tcp *t;
	ck_assert_int_eq(ps_tcp_start(NULL, &t), 0);
	int port = ps_tcp_port(t);
	for (int i = 0; i < 10; i++) {
		int fd = raw_connect(port); /* with a client on it, too */
		raw_hello(fd);
		ps_tcp_stop(t);
		close(fd);
		struct ps_tcp_attr ta = { .port = port };
		ck_assert_int_eq(ps_tcp_start(&ta, &t), 0);
	}
	ps_tcp_stop(t);
}
END_TEST

static int deleted_maps(const char *prefix)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, prefix) && strstr(line, "(deleted)");
	if (f)
		fclose(f);
	return n;
}

/* Jobs come and go under new names: a node daemon that was asked about
 * each of them holds none once they are removed, and never runs out of
 * room for the next. */
START_TEST(daemon_lets_removed_segments_go)
{
	char prefix[32], seg[PS_NAME_MAX + 1];
	snprintf(prefix, sizeof(prefix), "t%d-gone", (int)getpid());
	struct ps_tcp_attr ta = { .shm_prefix = prefix };
	ps_tcp *tcp;
	ck_assert_int_eq(ps_tcp_start(&ta, &tcp), 0);
	struct ps_shm_attr sa = { .size = 65536, .max_elems = 4 };
	for (int i = 0; i < 1100; i++) {
		snprintf(seg, sizeof(seg), "%s%d", prefix, i);
		ps_server *s, *r;
		ck_assert_int_eq(ps_server_create_shm(seg, &sa, &s), 0);
		ck_assert_msg(ps_server_open_remote("127.0.0.1", ps_tcp_port(tcp), seg, PS_RDONLY, NULL,
						    &r) == 0, "job %d refused", i);
		ps_server_destroy(r);
		ps_server_destroy(s);
		ps_shm_unlink(seg);
	}
	int left = deleted_maps(prefix);
	for (int w = 0; w < 100 && left; w++) {
		usleep(50000);
		left = deleted_maps(prefix);
	}
	ck_assert_int_eq(left, 0);
	ps_tcp_stop(tcp);
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

/* --- hosts that pause or restart ------------------------------------------ */

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
	tcase_add_test(tc, waits_poll_the_server);
	tcase_add_test(tc, batches_and_lists);
	tcase_add_test(tc, node_daemon_serves_shm);
	tcase_add_test(tc, secrets);
	tcase_add_test(tc, malformed_input);
	tcase_add_test(tc, other_byte_order);
	tcase_add_test(tc, locators);
	tcase_add_test(tc, replies_while_sending);
	tcase_add_test(tc, other_users_refused);
	tcase_add_test(tc, trickling_clients_dropped);
	tcase_add_test(tc, daemon_follows_replaced_segments);
	tcase_add_test(tc, slow_server_deadline);
	tcase_add_test(tc, reconnects);
	tcase_add_test(tc, bad_handle_in_a_batch);
	tcase_add_test(tc, pipelined_big_replies);
	tcase_add_test(tc, quick_clients_never_slow);
	tcase_add_test(tc, strangers_bounded);
	tcase_add_test(tc, reset_is_not_refused);
	tcase_add_test(tc, idle_clients_cannot_lock_out);
	tcase_add_test(tc, flood_cannot_lock_out);
	tcase_add_test(tc, port_free_after_stop);
	tcase_add_test(tc, daemon_lets_removed_segments_go);
	tcase_add_test(tc, list_pages);
	tcase_add_test(tc, one_deadline_per_call);
	tcase_add_test(tc, paused_server_waited_for);
	tcase_add_test(tc, restarted_server_found_again);
	suite_add_tcase(s, tc);
	return s;
}
