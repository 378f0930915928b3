/* tcp_fixture.c - what the tuple server's and the remote client's suites share: a served segment, raw frames, secret files. */
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

void fx_up(struct fixture *x, const struct ps_tcp_attr *a)
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

void fx_down(struct fixture *x)
{
	ps_tcp_stop(x->t);
	ps_elem_close(x->d);
	ps_elem_close(x->f);
	ps_server_destroy(x->srv);
}

void tuple(unsigned char t[36], uint32_t v)
{
	memset(t, (int)(v & 0xff), 36);
	memcpy(t, &v, 4);
}

int count_seg(const char *seg, void *arg)
{
	(void)seg;
	++*(int *)arg;
	return 0;
}

void secret_file(char *path, size_t len, const char *tag, const char *what, mode_t mode)
{
	snprintf(path, len, "/tmp/es-secret-%d-%s", (int)getpid(), tag);
	unlink(path);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", what);
	fclose(f);
	chmod(path, mode);
}

int raw_connect(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

void raw_send(int fd, uint16_t op, uint32_t len, const void *payload, size_t have)
{
	unsigned char h[PSW_HDR];
	struct psw_hdr q = { op, 0, len, 1 };
	psw_put_hdr(h, &q);
	ck_assert_int_eq(send(fd, h, PSW_HDR, MSG_NOSIGNAL), PSW_HDR);
	if (have)
		ck_assert_int_eq(send(fd, payload, have, MSG_NOSIGNAL), (ssize_t)have);
}

void raw_hello(int fd)
{
	unsigned char p[8], r[PSW_HDR + 12];
	uint32_t v = 1, order = 0x01020304;
	memcpy(p, &v, 4);
	memcpy(p + 4, &order, 4);
	raw_send(fd, PSW_HELLO, 8, p, 8);
	ck_assert_int_eq(recv(fd, r, sizeof(r), MSG_WAITALL), (ssize_t)sizeof(r));
}
