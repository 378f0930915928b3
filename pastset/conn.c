/* conn.c - connections to tuple servers: one per address, shared, opened again when broken, one deadline a call. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "remote.h"

/*
 * The pool, under pool_lock:
 *  - it holds at most one connection per (address, port, secret file):
 *    callers share it;
 *  - a connection's refs count its holders (ps__conn_get, ps__conn_hold),
 *    at least one while it is in the pool; the last ps__conn_put takes it
 *    out and frees it.
 */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ps__rconn *pool;

static bool same_place(const struct ps__rconn *c, const char *addr, int port, const char *sf)
{
	return c->port == port && !strcmp(c->addr, addr) && !strcmp(c->secret_file, sf);
}

static void pool_check(void)
{
#ifdef ES_DEBUG
	for (const struct ps__rconn *c = pool; c; c = c->next) {
		BASE_INVARIANT("a connection in the pool has a holder", c->refs >= 1);
		for (const struct ps__rconn *d = c->next; d; d = d->next)
			BASE_INVARIANT("at most one connection per address, port and secret",
				     !same_place(d, c->addr, c->port, c->secret_file));
	}
#endif
}

/* --- the connection ---------------------------------------------------------- */

/*
 * Every call has one deadline (the connection's timeout from when it
 * starts), however the server trickles its bytes, so a stuck host costs a
 * caller at most that.  Waiting for a reply, the client first polls for up
 * to spin_ns: a sleeping reader's wake-up costs more than the round trip it
 * waits for (5x fewer requests per second on loopback without it).  The
 * spinning is the caller's CPU, never the server's.
 */
static int io(struct ps__rconn *c, void *p, size_t n, bool out, uint64_t deadline)
{
	unsigned char *b = p;
	uint64_t spin_until = 0;
	while (n) {
		ssize_t k = out ? send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT)
			  : recv(c->fd, b, n, MSG_DONTWAIT);
		if (k > 0) {
			b += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			break; /* closed, or reset */
		uint64_t now = base_now_ns();
		if (!out && c->spin_ns) {
			if (!spin_until)
				spin_until = now + c->spin_ns;
			if (now < spin_until)
				continue;
		}
		if (now >= deadline)
			break; /* it stopped answering */
		struct pollfd pf = { c->fd, out ? POLLOUT : POLLIN, 0 };
		uint64_t left = (deadline - now + 999999) / 1000000;
		if (poll(&pf, 1, left > 60000 ? 60000 : (int)left) < 0 && errno != EINTR)
			break;
	}
	if (!n)
		return 0;
	c->broken = true; /* the stream is out of step: reconnect before reuse */
	return PS_ELOST;
}

static uint64_t deadline_of(const struct ps__rconn *c)
{
	return base_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
}

int ps__send_req(struct ps__rconn *c, uint16_t op, const void *payload, size_t len,
		    uint64_t deadline)
{
	if (c->broken)
		return PS_ELOST;
	unsigned char h[PSW_HDR];
	struct psw_hdr q = { op, PSW_NATIVE, (uint32_t)len, ++c->tag };
	psw_put_hdr(h, &q);
	int rc = io(c, h, PSW_HDR, true, deadline);
	return rc ? rc : len ? io(c, (void *)payload, len, true, deadline) : 0;
}

/* The reply to the oldest request outstanding, into c->buf. */
int ps__recv_rep(struct ps__rconn *c, uint16_t op, uint32_t tag, size_t *rlen, uint64_t deadline)
{
	unsigned char h[PSW_HDR];
	struct psw_hdr a;
	int rc = io(c, h, PSW_HDR, false, deadline);
	if (rc)
		return rc;
	if (psw_get_hdr(h, &a) || a.op != (op | PSW_REPLY) || a.tag != tag) {
		c->broken = true;
		return PS_EPROTO; /* not the answer to this question */
	}
	if (a.length > c->cap) {
		unsigned char *b = realloc(c->buf, a.length);
		if (!b) {
			c->broken = true;
			return PS_ENOMEM;
		}
		c->buf = b;
		c->cap = a.length;
	}
	if (a.length && (rc = io(c, c->buf, a.length, false, deadline)))
		return rc;
	*rlen = a.length;
	return 0;
}

int ps__conn_ready(struct ps__rconn *c);

/* Takes the connection for one call, whose time starts now: whatever it
 * takes (opening the connection again, the element's handle, the request),
 * it ends by c->deadline. */
void ps__conn_lock(struct ps__rconn *c)
{
	pthread_mutex_lock(&c->lock);
	c->deadline = deadline_of(c);
	/* A server that went away while we were idle (a node daemon
	 * restarted) closed its end: the call opens a new connection before
	 * it sends, rather than send into the old one and never know what
	 * became of its request.  Once a call, not once an element. */
	unsigned char b;
	ssize_t k;
	if (!c->broken && c->fd >= 0 &&
	    ((k = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT)) >= 0 ||
	     (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))) {
		c->broken = true; /* closed, reset, or bytes nobody asked for */
		c->retry_at = 0;
	}
}

/* One round trip; the caller took c with conn_lock. */
int ps__call(struct ps__rconn *c, uint16_t op, const void *q, size_t qlen, size_t *rlen)
{
	c->unsent = true;
	int rc = ps__conn_ready(c);
	if (!rc)
		rc = ps__send_req(c, op, q, qlen, c->deadline);
	if (rc)
		return rc;
	c->unsent = false;
	return ps__recv_rep(c, op, c->tag, rlen, c->deadline);
}

static int resolve(const char *addr, int port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1)
		return 0;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	if (getaddrinfo(addr, NULL, &hints, &res))
		return PS_EHOST;
	sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

/* Connects within the timeout: a host that does not answer is an error. */
static int dial(struct ps__rconn *c, const struct sockaddr_in *sin)
{
	int one = 1;
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
	    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return -errno;
	if (!connect(c->fd, (const struct sockaddr *)sin, sizeof(*sin)))
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	struct pollfd pf = { c->fd, POLLOUT, 0 };
	int k, err = 0;
	socklen_t el = sizeof(err);
	for (;;) {
		uint64_t now = base_now_ns(), left = now >= c->deadline ? 0 : c->deadline - now;
		k = poll(&pf, 1, left > 60000000000ull ? 60000 : (int)((left + 999999) / 1000000));
		if (!(k < 0 && errno == EINTR) && !(k == 0 && left > 60000000000ull))
			break;
	}
	if (k <= 0)
		return PS_ELOST; /* nobody answered */
	getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
	return err ? -err : 0;
}

/* Opens the connection (again): connect, HELLO, the clock offset. */
static int conn_open(struct ps__rconn *c)
{
	struct sockaddr_in sin;
	int rc = resolve(c->addr, c->port, &sin);
	if (rc)
		return rc;
	char secret[PS_SECRET_MAX + 1];
	size_t sl = 0;
	if (c->secret_file[0] && (rc = ps_secret_read(c->secret_file, secret, &sl, NULL, 0)))
		return rc;
	unsigned char hello[PSW_HELLO_REQ_LEN + PS_SECRET_MAX];
	struct psw_hello_req hq = { PSW_VERSION, PSW_BOM, (const unsigned char *)secret, sl };
	size_t hlen = psw_hello_req_put(hello, &hq), len;
	uint64_t deadline = c->deadline; /* the call's that opens it */
	/* A server that closes before it answers HELLO had no room for us (its
	 * table full, or strangers crowding it): we try again within the
	 * deadline, backing off, so that a flood delays us but cannot keep us
	 * out.  A server that is not there at all fails at once. */
	for (uint64_t pause_us = 500;; pause_us = pause_us < 32000 ? pause_us * 2 : 64000) {
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		c->broken = false;
		if ((rc = dial(c, &sin)))
			goto fail;
		if (!(rc = ps__send_req(c, PSW_HELLO, hello, hlen, deadline)) &&
		    !(rc = ps__recv_rep(c, PSW_HELLO, c->tag, &len, deadline)))
			break;
		uint64_t now = base_now_ns(), pause_ns = (pause_us + (uint64_t)rand_r(&c->seed) % pause_us) * 1000;
		if (rc != PS_ELOST || now + pause_ns >= deadline)
			goto fail;
		struct timespec ts = { (time_t)(pause_ns / 1000000000u), (long)(pause_ns % 1000000000u) };
		nanosleep(&ts, NULL);
	}
	struct psw_hello_rep hr;
	rc = PS_EPROTO;
	if (psw_hello_rep_get(c->buf, len, &hr) || hr.version != PSW_VERSION ||
	    (hr.mark != PSW_BOM && hr.mark != __builtin_bswap32(PSW_BOM)))
		goto fail;
	c->swap = hr.mark != PSW_BOM;
	if ((rc = hr.status))
		goto fail;
	/* The server's clock against ours, from the quickest of a few round
	 * trips: its reading falls within that trip, so halfway is within
	 * half the trip of the truth. */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = base_now_ns();
		if ((rc = ps__send_req(c, PSW_TIME, NULL, 0, deadline)) ||
		    (rc = ps__recv_rep(c, PSW_TIME, c->tag, &len, deadline)))
			goto fail;
		uint64_t t1 = base_now_ns(), theirs;
		if ((rc = psw_time_get(c->buf, len, &theirs)))
			goto fail;
		if (t1 - t0 < best) {
			best = t1 - t0;
			c->offset_ns = (int64_t)(theirs - (t0 + (t1 - t0) / 2));
		}
	}
	/* Inside the error bound, zero is as true as any estimate, and is
	 * exact for a server on this host (the same clock). */
	if ((uint64_t)(c->offset_ns < 0 ? -c->offset_ns : c->offset_ns) <= best / 2)
		c->offset_ns = 0;
	c->gen++;
	return 0;
fail:
	c->broken = true;
	return rc;
}

/* A connection that broke is opened again on its next use, at most every
 * RETRY_MS, so a dead host costs a failed call, not a connect per call. */
#define RETRY_MS 250
int ps__conn_ready(struct ps__rconn *c)
{
	if (!c->broken)
		return 0;
	uint64_t now = base_now_ns();
	if (now < c->retry_at)
		return PS_ELOST;
	c->retry_at = now + RETRY_MS * 1000000ull;
	return conn_open(c) ? PS_ELOST : 0;
}

void ps__conn_put(struct ps__rconn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&pool_lock);
	bool last = --c->refs == 0;
	if (last)
		for (struct ps__rconn **p = &pool; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
	pool_check();
	pthread_mutex_unlock(&pool_lock);
	if (!last)
		return;
	if (c->fd >= 0)
		close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c->buf);
	free(c);
}

/* The pool's connection to addr:port, opened if there is none. */
int ps__conn_get(const char *addr, int port, const struct ps_remote_attr *a,
		    struct ps__rconn **out)
{
	const char *sf = a && a->secret_file ? a->secret_file : "";
	if (!addr || strlen(addr) >= 64 || strlen(sf) >= 256 || port <= 0 || port > 65535)
		return PS_EINVAL;
	pthread_mutex_lock(&pool_lock);
	for (struct ps__rconn *c = pool; c; c = c->next)
		if (same_place(c, addr, port, sf)) {
			c->refs++;
			pthread_mutex_unlock(&pool_lock);
			*out = c;
			return 0;
		}
	pthread_mutex_unlock(&pool_lock);
	struct ps__rconn *c = calloc(1, sizeof(*c));
	if (!c)
		return PS_ENOMEM;
	c->fd = -1;
	c->refs = 1;
	c->port = port;
	c->seed = (unsigned)(base_now_ns() ^ (uint64_t)getpid() << 16);
	c->timeout_ms = a && a->timeout_ms > 0 ? a->timeout_ms : 10000;
	c->spin_ns = a && a->spin_us < 0 ? 0 : a && a->spin_us > 0 ? (uint64_t)a->spin_us * 1000 : 100000;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	snprintf(c->secret_file, sizeof(c->secret_file), "%s", sf);
	pthread_mutex_init(&c->lock, NULL);
	c->deadline = deadline_of(c); /* not shared yet: no lock to take */
	int rc = conn_open(c);
	if (rc) {
		if (c->fd >= 0)
			close(c->fd);
		pthread_mutex_destroy(&c->lock);
		free(c->buf);
		free(c);
		return rc;
	}
	pthread_mutex_lock(&pool_lock);
	/* another caller may have opened one to the same place meanwhile
	 * (the pool is not held while connecting): share it, drop ours */
	struct ps__rconn *had = pool;
	while (had && !same_place(had, addr, port, sf))
		had = had->next;
	if (had) {
		had->refs++;
	} else {
		c->next = pool;
		pool = c;
	}
	pool_check();
	pthread_mutex_unlock(&pool_lock);
	if (had) {
		close(c->fd);
		pthread_mutex_destroy(&c->lock);
		free(c->buf);
		free(c);
		c = had;
	}
	*out = c;
	return 0;
}

void ps__conn_hold(struct ps__rconn *c)
{
	pthread_mutex_lock(&pool_lock);
	c->refs++;
	pthread_mutex_unlock(&pool_lock);
}
