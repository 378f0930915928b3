/* test_view_door.c - esview's door: Host, the page's token and Origin, another user, keys held and the '+' in them, strangers crowded out and timed out, and its errors. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "view/door.h"
#include "tests/unit/suites.h"

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url, bool post)
{
	(void)cls;
	char body[300];
	int n = snprintf(body, sizeof(body), "served %s %s", url, post ? "post" : "get");
	return vd_reply(c, 200, "text/plain", body, (size_t)n, MHD_RESPMEM_MUST_COPY, NULL);
}

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* One request as given (head: its lines, without the blank one; then
 * data); the status, and the body in body (may be NULL). */
static int ask_with(int port, const char *head, const char *data, char *body, size_t len)
{
	int fd = dial(port);
	char req[2048], got[8192];
	int n = snprintf(req, sizeof(req), "%s\r\nConnection: close\r\n\r\n%s", head, data);
	ck_assert_int_eq(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
	size_t have = 0;
	ssize_t k;
	while (have < sizeof(got) - 1 && (k = recv(fd, got + have, sizeof(got) - 1 - have, 0)) > 0)
		have += (size_t)k;
	got[have] = 0;
	close(fd);
	int status = 0;
	sscanf(got, "HTTP/1.%*d %d", &status);
	const char *b = strstr(got, "\r\n\r\n");
	if (body)
		snprintf(body, len, "%s", b ? b + 4 : "");
	return status;
}

static int ask(int port, const char *head, char *body, size_t len)
{
	return ask_with(port, head, "", body, len);
}

static vd *open_door(const char *secret, int *port)
{
	struct vd_attr a = { .addr = "127.0.0.1", .secret = secret, .secret_len = secret ? strlen(secret) : 0,
			     .serve = serve };
	char err[400] = "";
	vd *d = NULL;
	ck_assert_msg(vd_open(&a, &d, err, sizeof(err)) == 0, "%s", err);
	*port = vd_port(d);
	return d;
}

START_TEST(door_rules)
{
	int port;
	vd *d = open_door(NULL, &port);
	char h[1024], body[512];
	snprintf(h, sizeof(h), "GET /data?x=1 HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	ck_assert_int_eq(ask(port, h, body, sizeof(body)), 200);
	ck_assert_str_eq(body, "served /data get");
	/* a tunnel's port: the name is what counts */
	ck_assert_int_eq(ask(port, "GET / HTTP/1.1\r\nHost: localhost:8080", NULL, 0), 200);
	ck_assert_int_eq(ask(port, "GET / HTTP/1.1\r\nHost: LOCALHOST.", NULL, 0), 200);
	/* a name made to point here: DNS rebinding */
	ck_assert_int_eq(ask(port, "GET /data HTTP/1.1\r\nHost: evil.example", body, sizeof(body)), 403);
	ck_assert_msg(strstr(body, "Host 'evil.example' is not this esview's name"), "%s", body);
	ck_assert_int_eq(ask(port, "GET /data HTTP/1.0", NULL, 0), 403); /* no Host at all */
	/* a change: the page's token and its own Origin, both */
	const char *tok = vd_token(d);
	ck_assert_uint_eq(strlen(tok), 64);
	snprintf(h, sizeof(h), "POST /arm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0", port);
	ck_assert_int_eq(ask(port, h, body, sizeof(body)), 403);
	ck_assert_msg(strstr(body, "esview's own page"), "%s", body);
	snprintf(h, sizeof(h), "POST /arm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-ES-Token: %s\r\nOrigin: http://127.0.0.1:%d\r\n"
		 "Content-Length: 3", port, tok, port);
	ck_assert_int_eq(ask_with(port, h, "abc", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "served /arm post");
	static const char *const origins[] = { "http://evil.example", "null", "http://127.0.0.1:1" };
	for (int i = 0; i < 3; i++) {
		snprintf(h, sizeof(h), "POST /arm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-ES-Token: %s\r\nOrigin: %s\r\n"
			 "Content-Length: 0", port, tok, origins[i]);
		ck_assert_int_eq(ask(port, h, NULL, 0), 403);
	}
	/* a token one digit off (the last, made another than it is) */
	snprintf(h, sizeof(h), "POST /arm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-ES-Token: %.63s%c\r\nOrigin: http://127.0.0.1:%d\r\n"
		 "Content-Length: 0", port, tok, tok[63] == '0' ? '1' : '0', port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 403);
	snprintf(h, sizeof(h), "PUT /arm HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 405);
	/* what a browser says another site's page asks: nothing, even a GET;
	 * a link followed here (a navigation) gets the page */
	snprintf(h, sizeof(h), "GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nSec-Fetch-Site: cross-site\r\n"
		 "Sec-Fetch-Mode: no-cors", port);
	ck_assert_int_eq(ask(port, h, body, sizeof(body)), 403);
	ck_assert_str_eq(body, "esview: another site's page gets nothing here\n");
	snprintf(h, sizeof(h), "GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: http://evil.example", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 403);
	snprintf(h, sizeof(h), "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nSec-Fetch-Site: cross-site\r\n"
		 "Sec-Fetch-Mode: navigate", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	snprintf(h, sizeof(h), "GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nSec-Fetch-Site: same-origin", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	/* another user: refused whatever it asks (as root, the test can be one) */
	if (geteuid() == 0) {
		pid_t pid = fork();
		if (!pid) {
			if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
				_exit(3);
			snprintf(h, sizeof(h), "GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
			_exit(ask(port, h, body, sizeof(body)) == 403 && strstr(body, "not uid 65534") ? 0 : 1);
		}
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another user was not refused: %d", st);
	}
	struct vd_counts c;
	vd_counts(d, &c);
	ck_assert_uint_eq(c.host, 2);
	ck_assert_uint_eq(c.forged, 7);
	ck_assert_uint_eq(c.passed, 6);
	ck_assert_uint_eq(c.user, geteuid() == 0);
	vd_close(d);
}
END_TEST

START_TEST(door_key)
{
	int port;
	vd *d = open_door("abc+def/ghij=klmnop", &port);
	char h[1024], body[512];
	snprintf(h, sizeof(h), "GET /data HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	ck_assert_int_eq(ask(port, h, body, sizeof(body)), 403);
	ck_assert_str_eq(body, "esview: a key is needed (?key=)\n");
	/* as a user types it ('+' is no space here) and as the page sends it */
	snprintf(h, sizeof(h), "GET /data?key=abc+def/ghij=klmnop HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	snprintf(h, sizeof(h), "GET /data?a=1&key=abc%%2Bdef%%2Fghij%%3Dklmnop&b=2 HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	/* another site's page guessing in the user's browser: refused before
	 * the key is looked at, and not counted against the user */
	for (int i = 0; i < 6; i++) {
		snprintf(h, sizeof(h), "GET /data?key=x%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nSec-Fetch-Site: cross-site",
			 i, port);
		ck_assert_int_eq(ask(port, h, NULL, 0), 403);
	}
	/* wrong ones: three free, then held before they are looked at */
	for (int i = 0; i < 5; i++) {
		snprintf(h, sizeof(h), "GET /data?key=abc+def/ghij=klmnoq HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
		ck_assert_int_eq(ask(port, h, body, sizeof(body)), 403);
		ck_assert_str_eq(body, "esview: a wrong key\n");
	}
	char longkey[400];
	memset(longkey, 'a', 300);
	longkey[300] = 0;
	snprintf(h, sizeof(h), "GET /data?key=%s HTTP/1.1\r\nHost: 127.0.0.1:%d", longkey, port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 403);
	struct vd_counts c;
	vd_counts(d, &c);
	ck_assert_uint_eq(c.key, 7);
	ck_assert_uint_eq(c.held, 3); /* the fourth and fifth wrong ones, and the long one */
	/* the key's holder, the same user: held too, and let in */
	snprintf(h, sizeof(h), "GET /data?key=abc+def/ghij=klmnop HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	vd_counts(d, &c);
	ck_assert_uint_eq(c.held, 4);
	ck_assert_uint_eq(c.passed, 3);
	vd_close(d);
}
END_TEST

/* Whether fd's peer closed it within s seconds. */
static bool closed_within(int fd, int s)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char b[256];
	for (int i = 0; i < s * 10; i++)
		if (poll(&p, 1, 100) == 1 && recv(fd, b, sizeof(b), MSG_DONTWAIT) <= 0)
			return true;
	return false;
}

/* Another user's idle and slow connections, as many as it likes, all
 * closed by the door; the user of the door served meanwhile.  0 if so. */
static int crowd_as_another(int port, int ready)
{
	enum { IDLE = VD_MAX_STRANGERS + 8 };
	int idle[IDLE], slow[2];
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 3;
	for (int i = 0; i < IDLE; i++) /* connected, silent */
		idle[i] = dial(port);
	for (int i = 0; i < 2; i++) { /* a request begun and never ended */
		slow[i] = dial(port);
		send(slow[i], "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL);
	}
	if (write(ready, "x", 1) != 1)
		return 4;
	for (int k = 0; k < 10; k++) { /* a byte now and then */
		for (int i = 0; i < 2; i++)
			send(slow[i], "X", 1, MSG_NOSIGNAL);
		usleep(200000);
	}
	for (int i = 0; i < 2; i++)
		if (!closed_within(slow[i], 20))
			return 5;
	for (int i = 0; i < IDLE; i++)
		if (!closed_within(idle[i], 20))
			return 6;
	return 0;
}

START_TEST(door_crowds)
{
	int port;
	vd *d = open_door(NULL, &port);
	char h[200];
	snprintf(h, sizeof(h), "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d", port);
	/* one's own: a share of strangers, the next refused (closed a little
	 * later), all of them closed by the deadline; then served again */
	int mine[VD_WHO_STRANGERS + 1];
	for (int i = 0; i <= VD_WHO_STRANGERS; i++)
		mine[i] = dial(port);
	ck_assert(closed_within(mine[VD_WHO_STRANGERS], 5));
	for (int i = 0; i <= VD_WHO_STRANGERS; i++) {
		ck_assert(closed_within(mine[i], 20));
		close(mine[i]);
	}
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	struct vd_counts c;
	vd_counts(d, &c);
	ck_assert_uint_eq(c.evicted, VD_WHO_STRANGERS);
	ck_assert_uint_eq(c.full, 1);
	/* another user's crowd: this user is served beside it */
	if (geteuid() == 0) {
		int p[2];
		ck_assert_int_eq(pipe(p), 0);
		pid_t pid = fork();
		if (!pid)
			_exit(crowd_as_another(port, p[1]));
		char x;
		ck_assert_int_eq(read(p[0], &x, 1), 1);
		for (int i = 0; i < 5; i++)
			ck_assert_int_eq(ask(port, h, NULL, 0), 200);
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another user's crowd: %d", st);
		close(p[0]), close(p[1]);
		vd_counts(d, &c);
		ck_assert_uint_eq(c.evicted, 2 * VD_WHO_STRANGERS); /* theirs kept, then closed */
		ck_assert_uint_eq(c.full, 1 + VD_MAX_STRANGERS + 10 - VD_WHO_STRANGERS); /* the rest refused */
		ck_assert_uint_eq(c.passed, 6);
	}
	/* a head longer than any browser's: closed before it is whole, and
	 * said (to a file here: an error a test expects stays out of the log
	 * a newcomer reads) */
	fflush(stderr);
	int saved = dup(2);
	FILE *said = tmpfile();
	ck_assert(saved >= 0 && said);
	dup2(fileno(said), 2);
	int fd = dial(port);
	static char big[VD_HEAD_MAX + 100];
	memset(big, 'a', sizeof(big));
	send(fd, big, sizeof(big), MSG_NOSIGNAL);
	ck_assert(closed_within(fd, 10));
	close(fd);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char line[600] = "";
	rewind(said);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), said));
	ck_assert_msg(strstr(line, "esview: libmicrohttpd: ") && strstr(line, "414"), "%s", line);
	fclose(said);
	ck_assert_int_eq(ask(port, h, NULL, 0), 200);
	vd_close(d);
}
END_TEST

START_TEST(door_errors)
{
	char err[400];
	vd *d = NULL;
	struct vd_attr a = { .addr = "nowhere", .serve = serve };
	ck_assert_int_eq(vd_open(&a, &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--addr nowhere: expected an IPv4 address");
	a.addr = "0.0.0.0";
	ck_assert_int_eq(vd_open(&a, &d, err, sizeof(err)), -EACCES);
	ck_assert_str_eq(err, "--addr 0.0.0.0: a listener off loopback needs --view-secret FILE");
	int port;
	vd *first = open_door(NULL, &port);
	a = (struct vd_attr){ .addr = "127.0.0.1", .port = port, .serve = serve };
	ck_assert_int_eq(vd_open(&a, &d, err, sizeof(err)), -EADDRINUSE);
	char want[200];
	snprintf(want, sizeof(want), "--port %d: in use on 127.0.0.1 (another program listens there; --port 0 picks a "
				     "free one)", port);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(d);
	vd_close(first);
	vd_close(NULL);
}
END_TEST

Suite *door_suite(void)
{
	Suite *s = suite_create("door");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, door_rules);
	tcase_add_test(tc, door_key);
	tcase_add_test(tc, door_crowds);
	tcase_add_test(tc, door_errors);
	suite_add_tcase(s, tc);
	return s;
}
