/* test_tcp_server.c - the tuple server: malformed input, pacing, strangers, floods, idle and other users' clients, the node daemon's segments. */
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
#include "pastset/tcp.h" /* its limits: MAX_PREAUTH_WHO */
#include "pastset/wire.h"
#include "tests/unit/suites.h"
#include "tests/unit/tcp_fixture.h"

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
 * queued, not from whenever the connection last sent (or from 0).  A
 * client that was itself held up for the idle time (a 2-core VM under a
 * sanitizer can deschedule it that long) may rightly be closed: those are
 * counted apart, and each may account for one connection taken for slow. */
enum { HELLO_IDLE_MS = 100 };
struct hello_loop {
	int port;
	_Atomic bool *stop;
	int ok, failed, held_up;
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
		uint64_t t0 = base_now_ns();
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct timeval tv = { 5, 0 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    send(fd, f, sizeof(f), MSG_NOSIGNAL) != (ssize_t)sizeof(f) ||
		    recv(fd, r, sizeof(r), MSG_WAITALL) != (ssize_t)sizeof(r)) {
			if (base_now_ns() - t0 >= HELLO_IDLE_MS * 1000000ull)
				h->held_up++;
			else
				h->failed++;
		} else {
			h->ok++;
		}
		close(fd);
	}
	return NULL;
}

START_TEST(quick_clients_never_slow)
{
	struct fixture x;
	struct ps_tcp_attr ta = { .idle_ms = HELLO_IDLE_MS }; /* checked every 12 ms */
	fx_up(&x, &ta);
	_Atomic bool stop = false;
	enum { T = 4 };
	pthread_t th[T];
	struct hello_loop h[T];
	for (int i = 0; i < T; i++) {
		h[i] = (struct hello_loop){ x.port, &stop, 0, 0, 0 };
		pthread_create(&th[i], NULL, hello_loop, &h[i]);
	}
	sleep(2);
	atomic_store(&stop, true);
	int ok = 0, failed = 0, held_up = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		ok += h[i].ok;
		failed += h[i].failed;
		held_up += h[i].held_up;
	}
	struct ps_tcp_counts c;
	ps_tcp_counts(x.t, &c);
	ck_assert_int_gt(ok, 0);
	ck_assert_int_lt(held_up, ok);
	ck_assert_msg(failed == 0 && c.slow <= (uint64_t)held_up,
		      "%d of %d clients failed, %llu taken for slow, %d held up for the idle time",
		      failed, ok + failed + held_up, (unsigned long long)c.slow, held_up);
	fx_down(&x);
}
END_TEST

/* Another user's strangers: MAX_PREAUTH_WHO of them kept, the rest refused;
 * 0 once all are closed. */
static int strangers_of_another(int port, int ready)
{
	int fds[16];
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 3;
	for (int i = 0; i < 16; i++)
		fds[i] = raw_connect(port);
	if (write(ready, "x", 1) != 1)
		return 4;
	unsigned char b[64];
	for (int i = 0; i < 16; i++) /* the server's idle time closes those it kept */
		if (recv(fds[i], b, sizeof(b), 0) > 0)
			return 5;
	return 0;
}

/* Strangers (connected, no HELLO yet) hold at most a quarter of the slots,
 * and one client (a user here) at most MAX_PREAUTH_WHO of them: its
 * newcomers past that are refused (kept LINGER_MS, then closed), so a
 * client that knows the server, another user, still gets in at once
 * however many strangers wait. */
START_TEST(strangers_bounded)
{
	struct fixture x;
	struct ps_tcp_attr ta = { .idle_ms = 2000 };
	fx_up(&x, &ta);
	int fds[16];
	struct ps_tcp_counts c;
	for (int n = 0; n < 16; n++)
		fds[n] = raw_connect(x.port);
	for (int n = MAX_PREAUTH_WHO; n < 16; n++) /* refused, after a while */
		assert_closed(fds[n]);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.accepted, MAX_PREAUTH_WHO);
	ck_assert_uint_eq(c.refused, 16 - MAX_PREAUTH_WHO);
	/* and a stranger's HELLO may not be long: over the secret's bound, closed */
	unsigned char big[PSW_HDR];
	struct psw_hdr q = { PSW_HELLO, 0, 8 + PS_SECRET_MAX + 1, 1 };
	psw_put_hdr(big, &q);
	ck_assert_int_eq(send(fds[0], big, PSW_HDR, MSG_NOSIGNAL), PSW_HDR);
	assert_closed(fds[0]);
	ps_tcp_counts(x.t, &c);
	ck_assert_uint_eq(c.bad, 1);
	for (int i = 1; i < MAX_PREAUTH_WHO; i++)
		close(fds[i]);
	if (geteuid() == 0) { /* another user's crowd: this user gets in at once */
		int p[2];
		ck_assert_int_eq(pipe(p), 0);
		pid_t pid = fork();
		if (!pid)
			_exit(strangers_of_another(x.port, p[1]));
		char b;
		ck_assert_int_eq(read(p[0], &b, 1), 1);
		ps_server *r;
		struct ps_remote_attr ra = { .timeout_ms = 1000 }; /* less than the crowd's idle time */
		ck_assert_int_eq(ps_server_open_remote("127.0.0.1", x.port, "seg", 0, &ra, &r), 0);
		ps_server_destroy(r);
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another user's strangers: %d", st);
		close(p[0]), close(p[1]);
		ps_tcp_counts(x.t, &c);
		ck_assert_uint_eq(c.refused, 2 * (16 - MAX_PREAUTH_WHO));
	}
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
	secret_file(good, sizeof(good), "flood", "flood-secret-of-the-test", 0600);
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

#ifdef ES_DEBUG
/* The server's invariants hold on a server no thread runs (every test
 * above runs the real loop through them in the debug builds), and one
 * broken aborts, naming it: a segment whose refs count a handle that no
 * connection holds. */
START_TEST(invariants_checked)
{
	struct ps_tcp *t = calloc(1, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	pthread_mutex_init(&t->lock, NULL);
	ps__tcp_check(t); /* an empty server: holds */
	t->conns[3].used = true;
	t->conns[3].out_len = 10; /* replies, with no buffer */
	ps__tcp_check(t);
}
END_TEST

START_TEST(invariants_refs)
{
	struct ps_tcp *t = calloc(1, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	pthread_mutex_init(&t->lock, NULL);
	t->segs[7].refs = 1;
	ps__tcp_check(t);
}
END_TEST
#endif

Suite *tcp_server_suite(void)
{
	Suite *s = suite_create("tcp_server");
	TCase *tc = tcase_create("tcp");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, node_daemon_serves_shm);
	tcase_add_test(tc, malformed_input);
	tcase_add_test(tc, replies_while_sending);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, invariants_checked, SIGABRT);
	tcase_add_test_raise_signal(tc, invariants_refs, SIGABRT);
#endif
	tcase_add_test(tc, other_users_refused);
	tcase_add_test(tc, trickling_clients_dropped);
	tcase_add_test(tc, daemon_follows_replaced_segments);
	tcase_add_test(tc, pipelined_big_replies);
	tcase_add_test(tc, quick_clients_never_slow);
	tcase_add_test(tc, strangers_bounded);
	tcase_add_test(tc, reset_is_not_refused);
	tcase_add_test(tc, idle_clients_cannot_lock_out);
	tcase_add_test(tc, flood_cannot_lock_out);
	tcase_add_test(tc, port_free_after_stop);
	tcase_add_test(tc, daemon_lets_removed_segments_go);
	suite_add_tcase(s, tc);
	return s;
}
