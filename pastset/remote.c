/* remote.c - servers and elements on another host: the client side of the wire protocol, behind the ordinary ps_ calls. */
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

#include "internal.h"
#include "wire.h"

/*
 * A remote server is a segment on a tuple server elsewhere; its elements
 * answer the usual calls over one connection per address, which all the
 * segments and elements there share (so one LATEST_MANY can cover many
 * segments).  Calls on one connection are serialised by its lock.  The
 * server never waits on our behalf, so a read or take with a timeout polls,
 * backing off to 1 ms: the price of never letting a client hold a server
 * thread.
 */

struct ps__rconn {
	pthread_mutex_t lock;
	int fd, refs, port;
	bool broken, swap;      /* swap: the server's byte order is not ours */
	bool unsent;            /* the last call failed before its request was all
				   sent: it had no effect, and may be tried again */
	int64_t offset_ns;      /* the server's CLOCK_MONOTONIC minus ours */
	uint64_t spin_ns;       /* poll this long for a reply before sleeping */
	int timeout_ms;         /* a call's time, all of it */
	uint64_t deadline;      /* the call under way ends by then (set by conn_lock) */
	uint32_t gen;           /* connections made so far: handles of older ones are stale */
	uint64_t retry_at;      /* a broken connection is not retried before */
	uint32_t tag;
	unsigned seed;          /* jitters the pauses between attempts to get in */
	unsigned char *buf;     /* the last reply's payload */
	size_t cap;
	char addr[64], secret_file[256];
	struct ps__rconn *next;
};

struct ps__relem {
	struct ps__rconn *c;
	uint32_t handle, gen;   /* valid on connection c->gen == gen */
	bool writable;
	char segment[PS_NAME_MAX + 1], name[PS_NAME_MAX + 1];
	char layout[PS_LAYOUT_MAX + 1];
	/* ps_prefetch_latest: the newest tuple, kept for the next read_latest */
	bool cached;
	int cached_rc;
	uint64_t cached_idx;
	unsigned char *cache;
};

struct ps__rseg {
	struct ps__rconn *c;
	uint32_t count, state;
	unsigned char user[PS_USER_AREA];
	char segment[PS_NAME_MAX + 1];
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ps__rconn *pool;

/* --- byte order ------------------------------------------------------------ */

/* Calls fn(width) for every field of a layout: letters b h i q, each
 * optionally preceded by a count ("hhi160b"); false if it is malformed. */
static bool layout_walk(const char *layout, size_t *bytes, unsigned char *t)
{
	size_t total = 0;
	for (const char *p = layout; *p;) {
		unsigned long count = 1;
		if (*p >= '0' && *p <= '9') {
			char *end;
			count = strtoul(p, &end, 10);
			if (!count || count > PS_TUPLE_MAX)
				return false;
			p = end;
		}
		size_t w = *p == 'b' ? 1 : *p == 'h' ? 2 : *p == 'i' ? 4 : *p == 'q' ? 8 : 0;
		if (!w)
			return false;
		p++;
		for (unsigned long k = 0; t && k < count; k++, t += w)
			for (size_t a = 0, b = w - 1; a < b; a++, b--) {
				unsigned char x = t[a];
				t[a] = t[b];
				t[b] = x;
			}
		total += w * count;
		if (total > PS_TUPLE_MAX)
			return false;
	}
	*bytes = total;
	return true;
}

int ps__layout_check(const char *layout, size_t tuple_size)
{
	size_t n;
	return strlen(layout) <= PS_LAYOUT_MAX && layout_walk(layout, &n, NULL) && n == tuple_size
	       ? 0 : PS_EINVAL;
}

void ps__layout_swap(const char *layout, unsigned char *t)
{
	size_t n;
	layout_walk(layout, &n, t);
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
		uint64_t now = ps_now_ns();
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
	return ps_now_ns() + (uint64_t)c->timeout_ms * 1000000u;
}

static int send_req(struct ps__rconn *c, uint16_t op, const void *payload, size_t len,
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
static int recv_rep(struct ps__rconn *c, uint16_t op, uint32_t tag, size_t *rlen, uint64_t deadline)
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

static int conn_ready(struct ps__rconn *c);

/* Takes the connection for one call, whose time starts now: whatever it
 * takes (opening the connection again, the element's handle, the request),
 * it ends by c->deadline. */
static void conn_lock(struct ps__rconn *c)
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
static int call(struct ps__rconn *c, uint16_t op, const void *q, size_t qlen, size_t *rlen)
{
	c->unsent = true;
	int rc = conn_ready(c);
	if (!rc)
		rc = send_req(c, op, q, qlen, c->deadline);
	if (rc)
		return rc;
	c->unsent = false;
	return recv_rep(c, op, c->tag, rlen, c->deadline);
}

/* A secret others can read is no secret: refused, on both sides, and
 * said in words. */
static int secret_open(const char *file, char *why, size_t len, int *fd_out)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK); /* a FIFO must not hang us */
	struct stat st;
	int rc = 0;
	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "%s", strerror(errno));
	} else if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = PS_EINVAL;
		snprintf(why, len, "not a regular file");
	} else if (st.st_uid != geteuid()) {
		rc = PS_EACCES;
		snprintf(why, len, "owned by another user (it must be yours)");
	} else if (st.st_mode & 077) {
		rc = PS_EACCES;
		snprintf(why, len, "group or others may read or write it (chmod 600 it)");
	} else if (st.st_size == 0 || st.st_size > PS_SECRET_MAX + 2) {
		rc = PS_EINVAL;
		snprintf(why, len, "%s", st.st_size ? "longer than 256 bytes" : "empty");
	}
	if (rc && fd >= 0)
		close(fd);
	*fd_out = rc ? -1 : fd;
	return rc;
}

int ps_secret_check(const char *file, char *why, size_t len)
{
	char scratch[8];
	int fd;
	if (!why)
		why = scratch, len = sizeof(scratch);
	if (!file || !*file) {
		snprintf(why, len, "no file named");
		return PS_EINVAL;
	}
	int rc = secret_open(file, why, len, &fd);
	if (!rc)
		close(fd);
	return rc;
}

static int read_secret(const char *file, char *out, size_t *len)
{
	char why[80];
	int fd, rc = secret_open(file, why, sizeof(why), &fd);
	if (rc)
		return rc;
	ssize_t n = read(fd, out, PS_SECRET_MAX + 1);
	close(fd);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		n--;
	if (n <= 0 || n > PS_SECRET_MAX)
		return PS_EINVAL;
	*len = (size_t)n;
	return 0;
}

int ps__secret_read(const char *file, char *out, size_t *len)
{
	return read_secret(file, out, len);
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
		uint64_t now = ps_now_ns(), left = now >= c->deadline ? 0 : c->deadline - now;
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
	if (c->secret_file[0] && (rc = read_secret(c->secret_file, secret, &sl)))
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
		if (!(rc = send_req(c, PSW_HELLO, hello, hlen, deadline)) &&
		    !(rc = recv_rep(c, PSW_HELLO, c->tag, &len, deadline)))
			break;
		uint64_t now = ps_now_ns(), pause_ns = (pause_us + (uint64_t)rand_r(&c->seed) % pause_us) * 1000;
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
		uint64_t t0 = ps_now_ns();
		if ((rc = send_req(c, PSW_TIME, NULL, 0, deadline)) ||
		    (rc = recv_rep(c, PSW_TIME, c->tag, &len, deadline)))
			goto fail;
		uint64_t t1 = ps_now_ns(), theirs;
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
static int conn_ready(struct ps__rconn *c)
{
	if (!c->broken)
		return 0;
	uint64_t now = ps_now_ns();
	if (now < c->retry_at)
		return PS_ELOST;
	c->retry_at = now + RETRY_MS * 1000000ull;
	return conn_open(c) ? PS_ELOST : 0;
}

static void conn_put(struct ps__rconn *c)
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
static int conn_get(const char *addr, int port, const struct ps_remote_attr *a,
		    struct ps__rconn **out)
{
	const char *sf = a && a->secret_file ? a->secret_file : "";
	if (!addr || strlen(addr) >= 64 || strlen(sf) >= 256 || port <= 0 || port > 65535)
		return PS_EINVAL;
	pthread_mutex_lock(&pool_lock);
	for (struct ps__rconn *c = pool; c; c = c->next)
		if (c->port == port && !strcmp(c->addr, addr) && !strcmp(c->secret_file, sf)) {
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
	c->seed = (unsigned)(ps_now_ns() ^ (uint64_t)getpid() << 16);
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
	c->next = pool;
	pool = c;
	pthread_mutex_unlock(&pool_lock);
	*out = c;
	return 0;
}

/* --- servers ----------------------------------------------------------------- */

static int r_server_open(const char *addr, int port, const char *segment,
		      const struct ps_remote_attr *a, struct ps__rseg **out)
{
	int rc = ps__check_name(segment);
	if (rc)
		return rc;
	struct ps__rseg *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return PS_ENOMEM;
	snprintf(rs->segment, sizeof(rs->segment), "%s", segment);
	if ((rc = conn_get(addr, port, a, &rs->c))) {
		free(rs);
		return rc;
	}
	unsigned char q[PSW_NAME];
	struct psw_attach_rep r;
	size_t len;
	conn_lock(rs->c);
	rc = call(rs->c, PSW_ATTACH, q, psw_name_put(q, segment), &len);
	if (!rc && !(rc = psw_attach_rep_get(rs->c->buf, len, &r)) && !(rc = r.status)) {
		rs->count = r.count;
		rs->state = r.state;
		memcpy(rs->user, r.area, PS_USER_AREA);
	}
	pthread_mutex_unlock(&rs->c->lock);
	if (rc) {
		conn_put(rs->c);
		free(rs);
		return rc;
	}
	*out = rs;
	return 0;
}

static const struct ps_server_ops rserver_ops;

int ps_server_open_remote(const char *addr, int port, const char *segment, unsigned flags,
			  const struct ps_remote_attr *attr, ps_server **out)
{
	if (!addr || !segment || !out || (flags & ~(unsigned)PS_RDWR))
		return PS_EINVAL;
	struct ps__rseg *rs;
	int rc = r_server_open(addr, port, segment, attr, &rs);
	if (rc)
		return rc;
	if ((rc = ps__server_new(&rserver_ops, rs, segment, flags & PS_RDWR, out))) {
		conn_put(rs->c);
		free(rs);
	}
	return rc;
}

static void r_server_close(ps_server *s)
{
	struct ps__rseg *rs = ps__server_impl(s);
	if (!rs)
		return;
	conn_put(rs->c);
	free(rs);
}

static void *r_user_area(ps_server *s)
{
	return ((struct ps__rseg *)ps__server_impl(s))->user;
}

static int r_state(ps_server *s)
{
	return (int)((struct ps__rseg *)ps__server_impl(s))->state;
}

static int64_t r_clock_offset(const ps_server *s)
{
	return ((struct ps__rseg *)ps__server_impl(s))->c->offset_ns;
}

/* Names are fetched a page at a time; count and name i come from one call. */
static int names_page(struct ps__rseg *rs, uint32_t first, uint32_t *total, char *name0)
{
	unsigned char q[PSW_NAMES_REQ_LEN];
	struct psw_names_req nq = { .first = first };
	struct psw_names_rep r;
	snprintf(nq.name, sizeof(nq.name), "%s", rs->segment);
	size_t len;
	conn_lock(rs->c);
	int rc = call(rs->c, PSW_NAMES, q, psw_names_req_put(q, &nq), &len);
	if (!rc && !(rc = psw_names_rep_get(rs->c->buf, len, &r)) && !(rc = r.status)) {
		*total = r.total;
		if (name0) {
			if (r.count == 0)
				rc = PS_EINVAL;
			else
				psw_name_get(rs->c->buf + PSW_NAMES_REP_LEN, name0);
		}
	}
	pthread_mutex_unlock(&rs->c->lock);
	return rc;
}

static int r_count(ps_server *s)
{
	struct ps__rseg *rs = ps__server_impl(s);
	uint32_t total = 0;
	int rc = names_page(rs, 0, &total, NULL);
	return rc ? rc : (int)total;
}

static int r_elem_name(ps_server *s, int i, char *buf)
{
	struct ps__rseg *rs = ps__server_impl(s);
	uint32_t total;
	return i < 0 ? PS_EINVAL : names_page(rs, (uint32_t)i, &total, buf);
}

int ps_remote_list(const char *addr, int port, const struct ps_remote_attr *a, const char *prefix,
		   int (*fn)(const char *segment, void *arg), void *arg)
{
	if (!addr || !fn || (prefix && strlen(prefix) > PS_NAME_MAX))
		return PS_EINVAL;
	struct ps__rconn *c;
	int rc = conn_get(addr, port, a, &c);
	if (rc)
		return rc;
	unsigned char q[PSW_NAMES_REQ_LEN];
	struct psw_names_req nq = { .first = 0 };
	snprintf(nq.name, sizeof(nq.name), "%s", prefix ? prefix : "");
	size_t len;
	char (*names)[PS_NAME_MAX + 1] = NULL;
	uint32_t n = 0, total = 1;
	/* a page at a time; the list may change between pages, so it ends
	 * when a page comes back empty or the total is reached */
	while (!rc && n < total) {
		nq.first = n;
		conn_lock(c);
		rc = call(c, PSW_LIST, q, psw_names_req_put(q, &nq), &len);
		struct psw_names_rep r = { 0 };
		if (!rc && !(rc = psw_names_rep_get(c->buf, len, &r)))
			rc = r.status;
		uint32_t k = r.count;
		if (!rc) {
			total = r.total;
			uint32_t room = total > n ? total - n : 0; /* it may have shrunk */
			if (k > room)
				k = room;
			void *more = k ? realloc(names, (n + k) * sizeof(*names)) : names;
			if (k && !more)
				rc = PS_ENOMEM;
			else
				names = more;
			for (uint32_t i = 0; !rc && i < k; i++)
				psw_name_get(c->buf + PSW_NAMES_REP_LEN + (size_t)i * PSW_NAME, names[n + i]);
			if (!rc)
				n += k;
			if (!k)
				break;
		}
		pthread_mutex_unlock(&c->lock);
	}
	conn_put(c);
	/* fn is called without the lock: it may open these segments */
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = fn(names[i], arg);
	free(names);
	return rc;
}

/* --- elements ---------------------------------------------------------------- */

/* OPEN on c (its lock held): a handle, and the element's attributes. */
static int open_handle(struct ps__rconn *c, const char *segment, const char *name,
		       size_t tuple_size, bool writable, uint32_t *h, struct ps_elem_attr *a)
{
	unsigned char q[PSW_OPEN_REQ_LEN];
	struct psw_open_req oq = { .tuple_size = (uint32_t)tuple_size,
				   .flags = writable ? PS_RDWR : PS_RDONLY };
	struct psw_open_rep r;
	snprintf(oq.segment, sizeof(oq.segment), "%s", segment);
	snprintf(oq.element, sizeof(oq.element), "%s", name);
	size_t len;
	int rc = call(c, PSW_OPEN, q, psw_open_req_put(q, &oq), &len);
	if (!rc && !(rc = psw_open_rep_get(c->buf, len, &r)) && !(rc = r.status)) {
		*h = r.handle;
		a->tuple_size = r.tuple_size;
		a->threshold = r.threshold;
		a->mode = (enum ps_mode)r.mode;
		a->flags = r.flags;
		if (ps__check_attr(a) || (tuple_size && tuple_size != a->tuple_size))
			rc = PS_EPROTO;
	}
	return rc;
}

/* The element's handle on the connection as it is now: after a reconnect
 * (the server may even be a new one) it is opened again by name.  The
 * caller holds the connection's lock. */
static int relem_ready(ps_elem *e)
{
	struct ps__relem *re = e->remote;
	int rc = conn_ready(re->c);
	if (rc || re->gen == re->c->gen)
		return rc;
	struct ps_elem_attr a = { 0 };
	uint32_t h;
	if ((rc = open_handle(re->c, re->segment, re->name, e->tuple_size, re->writable, &h, &a)))
		return rc == PS_ENOENT ? PS_ELOST : rc; /* gone with the old server */
	re->handle = h;
	re->gen = re->c->gen;
	return 0;
}

/* A call about e: q starts with the handle, which this fills in.  The
 * caller holds the connection's lock. */
static int ecall(ps_elem *e, uint16_t op, unsigned char *q, size_t qlen, size_t *len)
{
	struct ps__relem *re = e->remote;
	int rc = relem_ready(e);
	if (rc) {
		re->c->unsent = true; /* whatever opening sent, this was not */
		return rc;
	}
	psw_handle_put(q, re->handle);
	rc = call(re->c, op, q, qlen, len);
	if (!rc && *len >= PSW_STATUS_LEN && (int)psw_get32(re->c->buf) == PSW_EBADH) {
		re->gen = 0; /* the server does not know it: open it again next time */
		rc = PS_ELOST;
	}
	return rc;
}

static const struct ps_elem_ops relem_ops;

static int r_elem_open(ps_server *srv, const char *name, size_t tuple_size, ps_elem **out)
{
	struct ps__rseg *rs = ps__server_impl(srv);
	bool writable = ps__server_writable(srv);
	struct ps__rconn *c = rs->c;
	struct ps_elem_attr a = { 0 };
	uint32_t h = 0, gen;
	conn_lock(c);
	int rc = open_handle(c, rs->segment, name, tuple_size, writable, &h, &a);
	gen = c->gen;
	pthread_mutex_unlock(&c->lock);
	if (rc)
		return rc;
	struct ps__relem *re = calloc(1, sizeof(*re));
	if (re)
		re->cache = malloc(a.tuple_size);
	if (!re || !re->cache || (rc = ps__elem_handle(srv, NULL, NULL, name, &a, writable, false,
							false, out))) {
		if (re)
			free(re->cache);
		free(re);
		return rc ? rc : PS_ENOMEM;
	}
	pthread_mutex_lock(&pool_lock);
	c->refs++;
	pthread_mutex_unlock(&pool_lock);
	re->c = c;
	re->handle = h;
	re->gen = gen;
	re->writable = writable;
	snprintf(re->segment, sizeof(re->segment), "%s", rs->segment);
	snprintf(re->name, sizeof(re->name), "%s", name);
	(*out)->remote = re;
	(*out)->ops = &relem_ops;
	(*out)->fast_write = false;
	return 0;
}

static void r_elem_close(ps_elem *e)
{
	struct ps__relem *re = e->remote;
	unsigned char q[PSW_HANDLE_LEN];
	size_t len, qlen = psw_handle_put(q, re->handle);
	conn_lock(re->c);
	/* best effort, and only on the connection it was opened on: the
	 * server frees every handle at disconnect anyway */
	if (!re->c->broken && re->gen == re->c->gen)
		call(re->c, PSW_CLOSE, q, qlen, &len);
	pthread_mutex_unlock(&re->c->lock);
	conn_put(re->c);
	free(re->cache);
	free(re);
}

int ps_elem_set_layout(ps_elem *e, const char *layout)
{
	if (!e || !layout || ps__layout_check(layout, e->tuple_size))
		return PS_EINVAL;
	if (e->remote)
		snprintf(e->remote->layout, sizeof(e->remote->layout), "%s", layout);
	return 0;
}

/* Tuples arrive in the server's order: ours only if the layout says how. */
static void to_ours(const struct ps__relem *re, unsigned char *t)
{
	if (re->c->swap && re->layout[0])
		ps__layout_swap(re->layout, t);
}

/* READ_LATEST, READ, TAKE: status, index, tuple. */
struct poll_wait;
static void call_until(struct ps__rconn *c, const struct poll_wait *w);

/* One READ, READ_LATEST or TAKE; w (may be NULL) is the operation's own
 * time, which the call may take if it is longer than the connection's.
 * *unsent: the request never left, so it had no effect. */
static int tuple_op(ps_elem *e, uint16_t op, uint64_t idx, void *out, uint64_t *idx_out,
		    const struct poll_wait *w, bool *unsent)
{
	struct ps__relem *re = e->remote;
	unsigned char q[PSW_READ_REQ_LEN];
	struct psw_read_req rq = { 0, idx }; /* the handle is ecall's to fill in */
	size_t qlen = op == PSW_READ ? psw_read_req_put(q, &rq) : PSW_HANDLE_LEN, len;
	conn_lock(re->c);
	call_until(re->c, w);
	int rc = ecall(e, op, q, qlen, &len);
	if (unsent)
		*unsent = rc && re->c->unsent;
	struct psw_tuple_rep r;
	if (!rc && (len != PSW_TUPLE_REP_LEN + e->tuple_size || psw_tuple_rep_get(re->c->buf, len, &r)))
		rc = PS_EPROTO;
	else if (!rc) {
		rc = r.status;
		*idx_out = r.index;
		if (!rc) {
			memcpy(out, re->c->buf + PSW_TUPLE_REP_LEN, e->tuple_size);
			to_ours(re, out);
		}
	}
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}

/* An operation that may wait (read of an index not written yet, take,
 * write to a full flow element) asks the server again and again until its
 * time is up: the server never waits for a client. */
struct poll_wait {
	uint64_t at; /* a deadline: UINT64_MAX waits for ever */
	bool now;
	long sleep_ns;
};

/* A call made for such an operation may take as long as the operation
 * may: a host that is paused (stopped, swapping) for less than that is
 * waited for, as the operation would wait for a slow writer. */
static void call_until(struct ps__rconn *c, const struct poll_wait *w)
{
	if (w && !w->now && w->at > c->deadline)
		c->deadline = w->at;
}

static void poll_start(struct poll_wait *w, int timeout_ms)
{
	w->now = timeout_ms == 0;
	w->sleep_ns = 20000;
	w->at = ps_deadline_ns(timeout_ms);
}

/* Sleeps before the next try; false when the time is up. */
static bool poll_again(struct poll_wait *w)
{
	if (w->now || ps_now_ns() >= w->at)
		return false;
	struct timespec d = { 0, w->sleep_ns };
	nanosleep(&d, NULL);
	if (w->sleep_ns < 1000000)
		w->sleep_ns *= 2;
	return true;
}

/*
 * Whether an operation that waits asks again: the server said "not yet",
 * or it was lost and asking again is safe.  A read is always safe, since
 * reading changes nothing; a take or write only if its request never left.
 * One that left without an answer may have happened, and only the caller
 * can know whether to try again, so it is PS_ELOST.
 */
static bool ask_again(int rc, bool safe, struct poll_wait *w)
{
	return (rc == PS_ETIMEDOUT || (rc == PS_ELOST && safe)) && poll_again(w);
}
static int r_read(ps_elem *e, uint64_t idx, void *out, int timeout_ms, uint64_t *oldest)
{
	struct poll_wait w;
	poll_start(&w, timeout_ms);
	for (;;) {
		uint64_t back = 0;
		int rc = tuple_op(e, PSW_READ, idx, out, &back, &w, NULL);
		if (rc == PS_EDISCARDED && oldest)
			*oldest = back;
		if (!ask_again(rc, true, &w))
			return rc;
	}
}

static int r_take(ps_elem *e, void *out, int timeout_ms, uint64_t *idx)
{
	if (!e->writable)
		return PS_EROFS;
	struct poll_wait w;
	poll_start(&w, timeout_ms);
	for (;;) {
		uint64_t i = 0;
		bool unsent = false;
		int rc = tuple_op(e, PSW_TAKE, 0, out, &i, &w, &unsent);
		if (!rc && idx)
			*idx = i;
		if (!ask_again(rc, unsent, &w))
			return rc;
	}
}

static int r_read_latest(ps_elem *e, void *out, uint64_t *idx)
{
	struct ps__relem *re = e->remote;
	uint64_t i = 0;
	int rc;
	pthread_mutex_lock(&re->c->lock); /* no call: the cache only */
	bool cached = re->cached;
	if (cached) {
		re->cached = false;
		rc = re->cached_rc;
		i = re->cached_idx;
		if (!rc)
			memcpy(out, re->cache, e->tuple_size);
	}
	pthread_mutex_unlock(&re->c->lock);
	if (!cached)
		rc = tuple_op(e, PSW_READ_LATEST, 0, out, &i, NULL, NULL);
	if (!rc && idx)
		*idx = i;
	return rc;
}

static int r_write(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx)
{
	struct ps__relem *re = e->remote;
	if (!e->writable)
		return PS_EROFS;
	unsigned char *q = malloc(PSW_HANDLE_LEN + e->tuple_size);
	if (!q)
		return PS_ENOMEM;
	memcpy(q + PSW_HANDLE_LEN, tuple, e->tuple_size); /* after the handle ecall fills in */
	if (re->c->swap && re->layout[0])
		ps__layout_swap(re->layout, q + PSW_HANDLE_LEN); /* into the server's order */
	struct poll_wait w;
	poll_start(&w, timeout_ms);
	int rc;
	for (;;) {
		size_t len;
		conn_lock(re->c);
		call_until(re->c, &w);
		rc = ecall(e, PSW_WRITE, q, PSW_HANDLE_LEN + e->tuple_size, &len);
		bool unsent = rc && re->c->unsent;
		struct psw_tuple_rep r;
		if (!rc && (len != PSW_TUPLE_REP_LEN || psw_tuple_rep_get(re->c->buf, len, &r)))
			rc = PS_EPROTO;
		if (!rc && !(rc = r.status) && idx)
			*idx = r.index;
		pthread_mutex_unlock(&re->c->lock);
		if (!ask_again(rc, unsent, &w))
			break;
	}
	free(q);
	return rc;
}

static int r_read_range(ps_elem *e, uint64_t first, size_t n, void *out, uint64_t *oldest)
{
	struct ps__relem *re = e->remote;
	size_t most = (PSW_MAX_PAYLOAD - PSW_RANGE_REP_LEN) / e->tuple_size;
	if (n > most)
		n = most; /* a short count: the caller asks again from where it ends */
	unsigned char q[PSW_RANGE_REQ_LEN];
	struct psw_range_req rq = { 0, first, (uint32_t)n }; /* the handle is ecall's */
	struct psw_range_rep r;
	size_t len, qlen = psw_range_req_put(q, &rq);
	conn_lock(re->c);
	int rc = ecall(e, PSW_READ_RANGE, q, qlen, &len);
	if (!rc && !(rc = psw_range_rep_get(re->c->buf, len, &r))) {
		rc = r.count;
		if (rc == PS_EDISCARDED && oldest)
			*oldest = r.oldest;
		if (rc >= 0 && ((size_t)rc > n || len != PSW_RANGE_REP_LEN + (size_t)rc * e->tuple_size))
			rc = PS_EPROTO;
		for (int k = 0; rc > 0 && k < rc; k++) {
			unsigned char *t = (unsigned char *)out + (size_t)k * e->tuple_size;
			memcpy(t, re->c->buf + PSW_RANGE_REP_LEN + (size_t)k * e->tuple_size, e->tuple_size);
			to_ours(re, t);
		}
	}
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}

static int r_stats(ps_elem *e, struct ps_stats *st)
{
	struct ps__relem *re = e->remote;
	unsigned char q[PSW_HANDLE_LEN];
	struct psw_stats_rep r;
	size_t len;
	conn_lock(re->c);
	int rc = ecall(e, PSW_STATS, q, PSW_HANDLE_LEN, &len);
	if (!rc && !(rc = psw_stats_rep_get(re->c->buf, len, &r)) && !(rc = r.status)) {
		st->written = r.written;
		st->discarded = r.discarded;
		st->taken = r.taken;
		st->oldest = r.oldest;
		st->threshold = e->threshold;
		st->tuple_size = e->tuple_size;
		st->mode = e->mode;
		st->flags = e->flags;
	}
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}

static int r_notes(const ps_elem *e, uint64_t out[PS_NOTE_WORDS])
{
	struct ps__relem *re = e->remote;
	unsigned char q[PSW_HANDLE_LEN];
	struct psw_notes_rep r;
	size_t len;
	conn_lock(re->c);
	int rc = ecall((ps_elem *)e, PSW_NOTES, q, PSW_HANDLE_LEN, &len);
	if (!rc && !(rc = psw_notes_rep_get(re->c->buf, len, &r)))
		rc = r.status;
	for (unsigned w = 0; w < PS_NOTE_WORDS; w++)
		out[w] = rc ? 0 : r.words[w];
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}


/* --- batches ------------------------------------------------------------------- */

static void cache_fail(struct ps__relem *re, int rc)
{
	re->cached = true;
	re->cached_rc = rc;
}

/* One round of a batch: the connections it asks, and what each is asked. */
struct batch {
	ps_elem *const *e;
	int n;
	bool *seen;                /* per element: asked, failed or local */
	int *order;                /* the elements asked, grouped by connection */
	unsigned char *q;          /* LATEST_MANY's request */
	struct ps__rconn **conns;  /* this round's connections, in address order */
	int *first;                /* per connection: its first element not yet seen */
	int *start, *count, *sent; /* per connection: its run of order; send_req's result (1: none) */
	uint64_t *deadline;
	int nc, used;
};

/* The connections of the elements not yet seen, in address order, so that
 * two batches lock them in the same order and never deadlock. */
static int batch_conns(struct batch *b)
{
	b->nc = 0;
	for (int i = 0; i < b->n; i++) {
		if (b->seen[i])
			continue;
		struct ps__rconn *c = b->e[i]->remote->c;
		int k = 0;
		while (k < b->nc && b->conns[k] != c)
			k++;
		if (k == b->nc) {
			b->conns[b->nc] = c;
			b->first[b->nc++] = i;
		}
	}
	for (int x = 1; x < b->nc; x++)
		for (int y = x; y > 0 && (uintptr_t)b->conns[y] < (uintptr_t)b->conns[y - 1]; y--) {
			struct ps__rconn *tc = b->conns[y];
			int tf = b->first[y];
			b->conns[y] = b->conns[y - 1], b->first[y] = b->first[y - 1];
			b->conns[y - 1] = tc, b->first[y - 1] = tf;
		}
	return b->nc;
}

/* Asks connection k for the newest tuple of as many of its elements as
 * one reply holds.  Its lock stays held while a reply is to be read. */
static void send_many(struct batch *b, int k)
{
	struct ps__rconn *c = b->conns[k];
	uint32_t m = 0;
	size_t bytes = PSW_STATUS_LEN;
	b->start[k] = b->used;
	conn_lock(c);
	int r = conn_ready(c);
	unsigned char *handles = b->q + PSW_COUNT_LEN;
	for (int i = b->first[k]; i < b->n && m < PSW_MANY_MAX; i++) {
		ps_elem *e = b->e[i];
		if (b->seen[i] || e->remote->c != c)
			continue;
		if (m && bytes + PSW_TUPLE_REP_LEN + e->tuple_size > PSW_MAX_PAYLOAD)
			break;
		int er = r ? r : relem_ready(e);
		b->seen[i] = true;
		if (er) {
			cache_fail(e->remote, er);
			continue;
		}
		bytes += PSW_TUPLE_REP_LEN + e->tuple_size;
		b->order[b->used++] = i;
		handles += psw_handle_put(handles, e->remote->handle);
		m++;
	}
	b->count[k] = (int)m;
	psw_count_put(b->q, m);
	b->deadline[k] = c->deadline;
	b->sent[k] = m ? send_req(c, PSW_LATEST_MANY, b->q, (size_t)(handles - b->q), b->deadline[k]) : 1;
	if (b->sent[k]) /* nothing to read back: let the others go on */
		pthread_mutex_unlock(&c->lock);
	for (int j = 0; b->sent[k] < 0 && j < b->count[k]; j++)
		cache_fail(b->e[b->order[b->start[k] + j]]->remote, b->sent[k]);
}

/* Reads connection k's reply into its elements' caches and drops its
 * lock; returns how many answered (even "no tuple yet"). */
static int read_many(struct batch *b, int k)
{
	struct ps__rconn *c = b->conns[k];
	size_t len = 0, off = PSW_STATUS_LEN;
	int done = 0, r = recv_rep(c, PSW_LATEST_MANY, c->tag, &len, b->deadline[k]);
	if (!r && (len < PSW_STATUS_LEN || psw_get32(c->buf)))
		r = len < PSW_STATUS_LEN ? PS_EPROTO : (int)psw_get32(c->buf);
	for (int j = 0; j < b->count[k]; j++) {
		ps_elem *e = b->e[b->order[b->start[k] + j]];
		struct ps__relem *re = e->remote;
		struct psw_tuple_rep t;
		if (r || (r = psw_tuple_rep_get(c->buf + off, len - off, &t))) {
			cache_fail(re, r);
			continue;
		}
		if (t.status == PSW_EBADH) { /* no tuple follows; open it again next time */
			re->gen = 0;
			cache_fail(re, PS_ELOST);
			off += PSW_TUPLE_REP_LEN;
			continue;
		}
		if (len < off + PSW_TUPLE_REP_LEN + e->tuple_size) {
			cache_fail(re, r = PS_EPROTO);
			continue;
		}
		re->cached = true;
		re->cached_rc = t.status;
		re->cached_idx = t.index;
		memcpy(re->cache, c->buf + off + PSW_TUPLE_REP_LEN, e->tuple_size);
		to_ours(re, re->cache);
		off += PSW_TUPLE_REP_LEN + e->tuple_size;
		done++;
	}
	if (!r && off != len)
		c->broken = true; /* out of step with it: start again */
	pthread_mutex_unlock(&c->lock);
	return done;
}

/*
 * One LATEST_MANY per connection, sent to every connection before any reply
 * is read, so a batch over n servers costs one round trip, not n.  A server
 * that fails fails its own elements' reads (cached as their result), not the
 * others'.
 */
int ps_prefetch_latest(ps_elem *const *e, int n)
{
	if (!e || n < 0)
		return PS_EINVAL;
	size_t m = (size_t)n + 1;
	struct batch b = { .e = e, .n = n, .seen = calloc(m, sizeof(bool)),
			   .order = calloc(m, sizeof(int)),
			   .q = malloc(PSW_COUNT_LEN + PSW_HANDLE_LEN * PSW_MANY_MAX),
			   .conns = calloc(m, sizeof(*b.conns)), .first = calloc(m, sizeof(int)),
			   .start = calloc(m, sizeof(int)), .count = calloc(m, sizeof(int)),
			   .sent = calloc(m, sizeof(int)), .deadline = calloc(m, sizeof(uint64_t)) };
	int done = 0, rc = 0;
	if (!b.seen || !b.order || !b.q || !b.conns || !b.first || !b.start || !b.count ||
	    !b.sent || !b.deadline) {
		rc = PS_ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (!e[i] || !e[i]->remote)
			b.seen[i] = true; /* local: read when asked, nothing to fetch */
	/* each round takes, of each connection, what fits one reply */
	while (batch_conns(&b)) {
		b.used = 0;
		for (int k = 0; k < b.nc; k++)
			send_many(&b, k);
		for (int k = 0; k < b.nc; k++)
			if (!b.sent[k])
				done += read_many(&b, k);
	}
out:
	free(b.seen);
	free(b.order);
	free(b.q);
	free(b.conns);
	free(b.first);
	free(b.start);
	free(b.count);
	free(b.sent);
	free(b.deadline);
	return rc ? rc : done;
}

int ps_prefetched(ps_elem *e)
{
	if (!e || !e->remote)
		return 0;
	struct ps__relem *re = e->remote;
	pthread_mutex_lock(&re->c->lock);
	int rc = re->cached ? re->cached_rc : 0;
	pthread_mutex_unlock(&re->c->lock);
	return rc;
}

void ps_prefetch_forget(ps_elem *const *e, int n)
{
	for (int i = 0; e && i < n; i++)
		if (e[i] && e[i]->remote) {
			pthread_mutex_lock(&e[i]->remote->c->lock);
			e[i]->remote->cached = false;
			pthread_mutex_unlock(&e[i]->remote->c->lock);
		}
}

int ps_read_latest_many(ps_elem *const *e, int n, void *out, uint64_t *idx, int *status)
{
	if (!e || n < 0 || !out || !status)
		return PS_EINVAL;
	int rc = ps_prefetch_latest(e, n);
	if (rc < 0)
		return rc;
	unsigned char *o = out;
	int ok = 0;
	for (int i = 0; i < n; i++) {
		uint64_t k = 0;
		status[i] = e[i] ? ps_read_latest(e[i], o, &k) : PS_EINVAL;
		if (idx)
			idx[i] = k;
		ok += status[i] == 0;
		o += e[i] ? e[i]->tuple_size : 0;
	}
	return ok;
}

/* --- the tables server.c and element.c call through --------------------------- */

static const struct ps_server_ops rserver_ops = {
	.elem_open = r_elem_open,
	.count = r_count,
	.elem_name = r_elem_name,
	.user_area = r_user_area,
	.clock_offset = r_clock_offset,
	.state = r_state,
	.close = r_server_close,
};

static const struct ps_elem_ops relem_ops = {
	.write = r_write,
	.read = r_read,
	.read_latest = r_read_latest,
	.read_range = r_read_range,
	.take = r_take,
	.stats = r_stats,
	.notes = r_notes,
	.close = r_elem_close,
};
