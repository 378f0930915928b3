/* door.c - esview's door: accepts connections itself, hands them to libmicrohttpd, and lets through only the requests its rules allow (door.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pastset/pastset.h"
#include "view/door.h"

/*
 * Who owns what:
 *  - The doorman thread accepts, looks up who each client is and makes
 *    room (evicting a stranger).  It keeps each newcomer waiting, in its
 *    own poll, until the head of its first request is whole (peeked, not
 *    read; SO_RCVLOWAT wakes it only when more has come): a slow or idle
 *    client costs a slot and an fd, never a thread.  Then it hands the
 *    socket to libmicrohttpd, which serves each connection in a thread of
 *    its own, and keeps a dup of it: a shutdown() through the dup ends a
 *    stranger libmicrohttpd is still serving, and no fd number is ever
 *    reused under it (the dup is closed when libmicrohttpd says the
 *    connection closed).
 *  - Under lock: c[] (a slot is used from its accept until it is closed:
 *    by the doorman while it waits, by libmicrohttpd's close notice once
 *    handed), seq, guard, n.  A slot's who, uid_ok, fd and dup never
 *    change while it is used, nor handed once set.
 *  - A connection is a stranger until one of its requests passes; only
 *    strangers are evicted, and only strangers have a deadline.
 */
struct vconn {
	bool used, trusted, evicted;
	bool handed;      /* to libmicrohttpd; else it waits for its request's head */
	bool uid_ok;      /* its user may be served without a key */
	int fd;           /* the socket (libmicrohttpd's once handed) */
	int dup;          /* ours, for shutdown(), once handed */
	long uid;
	uint64_t who;     /* ps_peer_who: the key of fairness and of the guard */
	uint64_t seq;
	int64_t since_ms;
	int peeked;       /* bytes of the head seen while it waits */
};

struct vd {
	struct MHD_Daemon *mhd;
	int lfd, wake[2], port;
	bool loopback;
	pthread_t doorman;
	pthread_mutex_t lock;
	pthread_cond_t woken;  /* a held key's wait ends early: its connection was evicted */
	struct vconn c[VD_MAX_CONNS];
	uint64_t seq;
	/* connections refused, kept a while before they are closed (the
	 * doorman's alone): a client refused at once would only come again
	 * at once, as often as it can; kept, it waits */
	struct {
		int fd;
		int64_t until_ms;
	} lingering[VD_LINGER];
	unsigned next_linger;
	ps_guard *guard;
	char secret[PS_SECRET_MAX + 1];
	size_t secret_len;
	char token[65];
	char **hosts; /* the names Host may give, lower case */
	int nhosts;
	uid_t euid;
	vd_serve_fn *serve;
	void *cls;
	struct vd_counts n;
	int64_t logged_ms; /* libmicrohttpd's last line shown */
};

/* A request's own state (libmicrohttpd's req_cls): its URI as sent,
 * before libmicrohttpd decoded its arguments ('+' stays '+'). */
struct vreq {
	char *uri;
	bool begun;
};

static int64_t now_ms(void)
{
	return (int64_t)(base_now_ns() / 1000000u);
}

enum MHD_Result vd_reply(struct MHD_Connection *c, unsigned status, const char *type, const void *body, size_t len,
			 enum MHD_ResponseMemoryMode mode, const char *csp)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	if (csp)
		MHD_add_response_header(r, "Content-Security-Policy", csp);
	if (status >= 400) /* a refused client goes: it has no business here */
		MHD_add_response_header(r, "Connection", "close");
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status, const char *why)
{
	return vd_reply(c, status, "text/plain; charset=utf-8", why, strlen(why), MHD_RESPMEM_MUST_COPY, NULL);
}

/* --- the doorman ------------------------------------------------------------------ */

/* The stranger to close for a newcomer from who: the oldest of whoever has
 * the most, a waiting one first (it costs a close; one handed over costs
 * its thread's end); -1 if there are none.  *strangers: how many there
 * are; *mine: how many are who's. */
static int crowd_victim(const vd *d, uint64_t who, int *strangers, int *mine)
{
	int victim = -1, most = 0;
	*strangers = *mine = 0;
	for (int j = 0; j < VD_MAX_CONNS; j++) {
		const struct vconn *o = &d->c[j];
		if (!o->used || o->trusted || o->evicted)
			continue;
		++*strangers;
		*mine += o->who == who;
		int k = o->who == who;
		for (int i = 0; i < VD_MAX_CONNS; i++)
			k += d->c[i].used && !d->c[i].trusted && !d->c[i].evicted && d->c[i].who == o->who;
		const struct vconn *v = victim >= 0 ? &d->c[victim] : NULL;
		if (k > most || (k == most && (v->handed > o->handed || (v->handed == o->handed && o->seq < v->seq))))
			victim = j, most = k;
	}
	return victim;
}

/* Closes a stranger: one waiting is the doorman's to close (under lock,
 * from the doorman); one handed over ends when libmicrohttpd sees it shut. */
static void evict(vd *d, struct vconn *v)
{
	d->n.evicted++;
	if (!v->handed) {
		close(v->fd);
		*v = (struct vconn){ 0 };
		return;
	}
	v->evicted = true;
	shutdown(v->dup, SHUT_RDWR);
	pthread_cond_broadcast(&d->woken); /* one held ends its wait */
}

/* A slot for a newcomer from who, making room among the strangers; -1 if
 * there is none: who has its share of strangers already, or every slot is
 * taken by a connection that passed. */
static int make_room(vd *d, uint64_t who)
{
	int strangers, mine, victim = crowd_victim(d, who, &strangers, &mine), free_slot = -1, used = 0;
	if (mine >= VD_WHO_STRANGERS)
		return -1;
	for (int j = 0; j < VD_MAX_CONNS; j++)
		used += d->c[j].used && !d->c[j].evicted;
	if (victim >= 0 && (strangers >= VD_MAX_STRANGERS || used >= VD_MAX_CONNS))
		evict(d, &d->c[victim]); /* a waiting one's slot is free now; a handed one's soon */
	for (int j = VD_MAX_CONNS - 1; j >= 0; j--)
		if (!d->c[j].used)
			free_slot = j;
	return free_slot;
}

/* Closes the connections whose request's head is not whole by their
 * deadline; the ms until the next one's.  (One handed over has sent its
 * head: its request is answered, or its key held, however long that
 * takes; libmicrohttpd's idle time ends it if it goes quiet.) */
static int expire(vd *d)
{
	int64_t now = now_ms(), next = 1000;
	pthread_mutex_lock(&d->lock);
	for (int j = 0; j < VD_MAX_CONNS; j++) {
		struct vconn *v = &d->c[j];
		if (!v->used || v->handed)
			continue;
		int64_t left = v->since_ms + VD_HEADER_MS - now;
		if (left <= 0)
			evict(d, v);
		else if (left < next)
			next = left;
	}
	pthread_mutex_unlock(&d->lock);
	return (int)next;
}

/* Keeps refused connection fd for VD_LINGER_MS, the oldest kept closed if
 * there is no room. */
static void linger(vd *d, int fd)
{
	int k = d->next_linger++ % VD_LINGER;
	if (d->lingering[k].until_ms)
		close(d->lingering[k].fd);
	d->lingering[k].fd = fd;
	d->lingering[k].until_ms = now_ms() + VD_LINGER_MS;
}

/* Closes the refused connections kept long enough. */
static void let_go(vd *d, bool all)
{
	int64_t now = now_ms();
	for (int k = 0; k < VD_LINGER; k++)
		if (d->lingering[k].until_ms && (all || d->lingering[k].until_ms <= now)) {
			close(d->lingering[k].fd);
			d->lingering[k].until_ms = 0;
		}
}

static void admit(vd *d)
{
	int fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		let_go(d, true); /* the refused ones' fds first; and no spinning on a listener that stays readable */
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	if (fd < 0)
		return;
	long uid;
	uint64_t who = ps_peer_who(fd, &uid);
	pthread_mutex_lock(&d->lock);
	for (int j = 0; j < VD_MAX_CONNS; j++)
		if (d->c[j].used && d->c[j].handed && d->c[j].fd == fd) {
			/* libmicrohttpd closed it without a word (it may, when it
			 * cannot take a connection after all): the number is free
			 * again, so the slot is stale */
			close(d->c[j].dup);
			d->c[j] = (struct vconn){ 0 };
		}
	int k = uid == -2 ? -1 : make_room(d, who);
	if (k >= 0) {
		bool uid_ok = d->secret_len || (uid >= 0 && ((uid_t)uid == d->euid || uid == 0));
		d->c[k] = (struct vconn){ .used = true, .uid_ok = uid_ok, .fd = fd, .dup = -1, .uid = uid, .who = who,
					  .seq = d->seq++, .since_ms = now_ms() };
		d->n.admitted++;
	} else if (uid != -2) {
		d->n.full++;
	}
	pthread_mutex_unlock(&d->lock);
	if (k < 0 && uid == -2)
		close(fd);
	else if (k < 0)
		linger(d, fd);
}

/* Gives slot k, whose request's head is whole, to libmicrohttpd. */
static void hand_over(vd *d, int k)
{
	struct vconn *v = &d->c[k];
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int one = 1, dup = fcntl(v->fd, F_DUPFD_CLOEXEC, 0);
	if (dup < 0 || getpeername(v->fd, (struct sockaddr *)&sa, &sl)) {
		if (dup >= 0)
			close(dup);
		pthread_mutex_lock(&d->lock);
		evict(d, v);
		pthread_mutex_unlock(&d->lock);
		return;
	}
	setsockopt(v->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	pthread_mutex_lock(&d->lock);
	v->dup = dup, v->handed = true;
	uint64_t seq = v->seq;
	int fd = v->fd;
	pthread_mutex_unlock(&d->lock);
	if (MHD_add_connection(d->mhd, fd, (struct sockaddr *)&sa, sl) != MHD_YES) {
		/* it closed the socket; unless its close notice came (and freed
		 * the slot with the dup), the slot is ours to free */
		pthread_mutex_lock(&d->lock);
		bool ours = v->used && v->seq == seq;
		if (ours)
			*v = (struct vconn){ 0 };
		pthread_mutex_unlock(&d->lock);
		if (ours)
			close(dup);
	}
}

/* A waiting newcomer sent more: handed over once its request's head is
 * whole (or as long as libmicrohttpd takes one: it answers that), closed
 * if it ended. */
static void look(vd *d, int k)
{
	static char buf[VD_HEAD_MAX]; /* the doorman's alone */
	struct vconn *v = &d->c[k];
	/* readable with nothing new (n == peeked, below): its end closed */
	ssize_t n = recv(v->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && (memmem(buf, (size_t)n, "\r\n\r\n", 4) || n == (ssize_t)sizeof(buf))) {
		hand_over(d, k); /* whole, or as long as a head may be: libmicrohttpd says the rest */
		return;
	}
	if (n > 0 && n > v->peeked && n < (ssize_t)sizeof(buf)) { /* wake again when more has come */
		int more = (int)n + 1;
		setsockopt(v->fd, SOL_SOCKET, SO_RCVLOWAT, &more, sizeof(more));
		v->peeked = (int)n;
		return;
	}
	pthread_mutex_lock(&d->lock);
	evict(d, v);
	pthread_mutex_unlock(&d->lock);
}

static void *doorman(void *arg)
{
	vd *d = arg;
	struct pollfd p[2 + VD_MAX_CONNS];
	int slot[2 + VD_MAX_CONNS];
	for (;;) {
		let_go(d, false);
		int wait = expire(d), n = 2; /* expire's wait is at most a second: lingering ends on time enough */
		p[0] = (struct pollfd){ d->lfd, POLLIN, 0 };
		p[1] = (struct pollfd){ d->wake[0], POLLIN, 0 };
		pthread_mutex_lock(&d->lock);
		for (int j = 0; j < VD_MAX_CONNS; j++)
			if (d->c[j].used && !d->c[j].handed)
				p[n] = (struct pollfd){ d->c[j].fd, POLLIN, 0 }, slot[n++] = j;
		pthread_mutex_unlock(&d->lock);
		if (poll(p, (nfds_t)n, wait) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		for (int i = 2; i < n; i++) /* waiting slots change only here: still the same */
			if (p[i].revents)
				look(d, slot[i]);
		if (p[0].revents & POLLIN)
			admit(d);
	}
	return NULL;
}

/* libmicrohttpd's notices: a connection begins (its slot is found by its
 * socket) or ends (the slot is freed with our dup). */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode what)
{
	vd *d = cls;
	pthread_mutex_lock(&d->lock);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (int j = 0; i && j < VD_MAX_CONNS && !*ctx; j++)
			if (d->c[j].used && d->c[j].handed && d->c[j].fd == i->connect_fd)
				*ctx = &d->c[j];
	} else if (*ctx) {
		struct vconn *v = *ctx;
		close(v->dup);
		*v = (struct vconn){ 0 };
		*ctx = NULL;
	}
	pthread_mutex_unlock(&d->lock);
}

/* --- requests ---------------------------------------------------------------------- */

static void *log_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls, (void)c;
	struct vreq *q = calloc(1, sizeof(*q));
	if (q && strlen(uri) <= VD_URI_MAX)
		q->uri = strdup(uri);
	return q;
}

static void on_done(void *cls, struct MHD_Connection *c, void **req, enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)c, (void)toe;
	struct vreq *q = *req;
	if (q)
		free(q->uri);
	free(q);
	*req = NULL;
}

static int hex(int ch)
{
	return ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
}

/* Argument name of uri's query into out (cap bytes), %XX decoded and '+'
 * left as it is (a key in base64 holds '+'): its length, cap + 1 if it is
 * longer, or -1 if there is none. */
static long raw_arg(const char *uri, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	for (const char *p = strchr(uri, '?'); p; p = strchr(p, '&')) {
		p++;
		if (strncmp(p, name, nl) || p[nl] != '=')
			continue;
		size_t k = 0;
		for (const char *v = p + nl + 1; *v && *v != '&' && *v != '#'; v++) {
			int ch = (unsigned char)*v;
			if (ch == '%' && isxdigit((unsigned char)v[1]) && isxdigit((unsigned char)v[2])) {
				ch = hex(v[1]) << 4 | hex(v[2]);
				v += 2;
			}
			if (k == cap)
				return (long)cap + 1;
			out[k++] = (char)ch;
		}
		return (long)k;
	}
	return -1;
}

/* Whether Host names esview: one of its names, the port aside (a tunnel's
 * port differs from ours; a rebinding attacker's name never matches). */
static bool host_ok(const vd *d, const char *host)
{
	char name[256];
	size_t n = host && host[0] == '[' && strchr(host, ']') ? (size_t)(strchr(host, ']') - host + 1)
							     : host ? strcspn(host, ":") : 0;
	if (!n || n >= sizeof(name))
		return false;
	memcpy(name, host, n);
	name[n] = 0;
	if (n > 1 && name[n - 1] == '.') /* the root's dot: the same name */
		name[n - 1] = 0;
	for (int i = 0; i < d->nhosts; i++)
		if (!strcasecmp(name, d->hosts[i]))
			return true;
	return false;
}

/* The key given with the request: 1 right, 0 none given, -1 wrong, -2 its
 * connection was closed while the guard held it (nothing was looked at). */
static int key_given(vd *d, struct vconn *v, const struct vreq *q)
{
	char k[PS_SECRET_MAX + 1];
	long n = raw_arg(q->uri, "key", k, PS_SECRET_MAX);
	if (n < 0)
		return 0;
	pthread_mutex_lock(&d->lock);
	int64_t hold = ps_guard_hold(d->guard, v->who, now_ms());
	d->n.held += hold > 0;
	/* this connection's own thread waits, nobody else's; an eviction ends
	 * the wait at once, so that a flood never fills the table with
	 * connections closed but still held */
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += hold / 1000;
	until.tv_nsec += (long)(hold % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	while (hold && !v->evicted && pthread_cond_timedwait(&d->woken, &d->lock, &until) != ETIMEDOUT)
		;
	bool gone = v->evicted, ok = false;
	if (!gone) {
		ok = ps_secret_equal(d->secret, d->secret_len, k, (size_t)n);
		ps_guard_note(d->guard, v->who, ok, now_ms());
	}
	pthread_mutex_unlock(&d->lock);
	return gone ? -2 : ok ? 1 : -1;
}

/* Whether a browser says another site's page asks (fetch, an image, a
 * script, a form): refused before its key is looked at, so that a page
 * the user opens can neither make esview work for it nor count wrong keys
 * against the user.  A link followed to esview (a navigation) is no
 * threat: GET changes nothing, and the other site cannot read the page. */
static bool another_site(struct MHD_Connection *c, const char *host)
{
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	const char *mode = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Mode");
	const char *o = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	if (site && strcmp(site, "same-origin") && strcmp(site, "none") && !(mode && !strcmp(mode, "navigate")))
		return true;
	return o && (strncasecmp(o, "http://", 7) || strcasecmp(o + 7, host));
}

/* A POST comes from esview's own page: its token, and an Origin that is
 * the address the browser asked (Host). */
static bool from_the_page(const vd *d, struct MHD_Connection *c)
{
	const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-ES-Token");
	const char *o = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	return t && o && h && ps_secret_equal(d->token, 64, t, strlen(t)) && !strncasecmp(o, "http://", 7) &&
	       !strcasecmp(o + 7, h);
}

/* Whether a request passes the door; if not, its refusal is in *r. */
static bool passes(vd *d, struct MHD_Connection *c, struct vconn *v, const struct vreq *q, bool post,
		   enum MHD_Result *r)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	uint64_t *count = NULL;
	char why[400];
	int key = 1;
	if (!v || !q || !q->uri) {
		*r = refuse(c, MHD_HTTP_URI_TOO_LONG, "esview: no such address\n");
		return false;
	}
	if (!v->uid_ok) {
		count = &d->n.user;
		snprintf(why, sizeof(why), "esview serves only the user who started it, not uid %ld; another user "
					   "needs the key of --view-secret\n", v->uid);
	} else if (!host_ok(d, host)) {
		count = &d->n.host;
		snprintf(why, sizeof(why), "esview: Host '%.200s' is not this esview's name (esview --host NAME "
					   "adds one)\n", host ? host : "");
	} else if (another_site(c, host)) {
		count = &d->n.forged;
		snprintf(why, sizeof(why), "esview: another site's page gets nothing here\n");
	} else if (d->secret_len && (key = key_given(d, v, q)) < 1) {
		if (key == -2) {
			*r = MHD_NO;
			return false;
		}
		count = &d->n.key;
		snprintf(why, sizeof(why), "%s", key ? "esview: a wrong key\n" : "esview: a key is needed (?key=)\n");
	} else if (post && !from_the_page(d, c)) {
		count = &d->n.forged;
		snprintf(why, sizeof(why), "esview: a change is asked by esview's own page: its token (X-ES-Token) "
					   "and Origin\n");
	}
	pthread_mutex_lock(&d->lock);
	if (count)
		++*count;
	else
		v->trusted = true, d->n.passed++;
	pthread_mutex_unlock(&d->lock);
	if (count)
		*r = refuse(c, MHD_HTTP_FORBIDDEN, why);
	return !count;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *body, size_t *body_size, void **req)
{
	(void)version, (void)body;
	vd *d = cls;
	struct vreq *q = *req;
	bool post = !strcmp(method, "POST");
	if (!q)
		return MHD_NO;
	if (!q->begun) { /* the headers are in: the door looks, once a request */
		q->begun = true;
		if (!post && strcmp(method, "GET"))
			return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, "esview answers GET and POST\n");
		const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		enum MHD_Result r;
		if (!passes(d, c, i ? i->socket_context : NULL, q, post, &r))
			return r;
		/* answered at the next call, once the request is whole: an
		 * answer queued at this one closes the connection after it */
		return MHD_YES;
	}
	if (*body_size) { /* a body is not asked for: read and dropped */
		*body_size = 0;
		return MHD_YES;
	}
	return d->serve(d->cls, c, url, post);
}

/* --- opening and closing ------------------------------------------------------------ */

/* libmicrohttpd's complaints: what clients the door turned away did (a
 * slow one closed, a malformed request) would fill the user's terminal
 * under attack, so at most one line in ten seconds reaches it. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	vd *d = cls;
	int64_t now = now_ms();
	pthread_mutex_lock(&d->lock);
	bool say = now - d->logged_ms >= 10000;
	if (say)
		d->logged_ms = now;
	pthread_mutex_unlock(&d->lock);
	if (!say)
		return;
	char line[400];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	fprintf(stderr, "esview: libmicrohttpd: %s (further lines within 10 s not shown)\n", line);
}

static int add_host(vd *d, const char *name)
{
	char **h = realloc(d->hosts, sizeof(*h) * (size_t)(d->nhosts + 1));
	if (!h)
		return -ENOMEM;
	d->hosts = h;
	if (!(h[d->nhosts] = strdup(name)))
		return -ENOMEM;
	d->nhosts++;
	return 0;
}

/* The names Host may give: the address listened on, localhost on
 * loopback, and on every address this host's names and addresses. */
static int names(vd *d, const char *addr, bool any, const struct vd_attr *a)
{
	int rc = any ? 0 : add_host(d, addr);
	if (!rc && (any || d->loopback))
		rc = add_host(d, "localhost");
	char me[256] = "";
	if (!rc && any && !gethostname(me, sizeof(me) - 1) && *me) {
		rc = add_host(d, me);
		char *dot = strchr(me, '.');
		if (!rc && dot && dot != me)
			*dot = 0, rc = add_host(d, me);
	}
	struct ifaddrs *ifs = NULL;
	if (!rc && any && !getifaddrs(&ifs))
		for (struct ifaddrs *i = ifs; i && !rc; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
				char buf[INET_ADDRSTRLEN];
				inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, sizeof(buf));
				rc = add_host(d, buf);
			}
	if (ifs)
		freeifaddrs(ifs);
	for (int i = 0; !rc && i < a->nhosts; i++)
		rc = add_host(d, a->hosts[i]);
	return rc;
}

/* The listening socket, bound; an error said in err. */
static int bind_to(vd *d, const struct vd_attr *a, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)a->port) };
	if (inet_pton(AF_INET, a->addr, &sin.sin_addr) != 1) {
		snprintf(err, errlen, "--addr %s: expected an IPv4 address", a->addr);
		return -EINVAL;
	}
	d->loopback = (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
	if (!d->loopback && !a->secret) {
		snprintf(err, errlen, "--addr %s: a listener off loopback needs --view-secret FILE", a->addr);
		return -EACCES;
	}
	int one = 1;
	if ((d->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
	    setsockopt(d->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(d->lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(d->lfd, 64)) {
		int e = errno;
		if (e == EADDRINUSE)
			snprintf(err, errlen, "--port %d: in use on %s (another program listens there; --port 0 "
					      "picks a free one)", a->port, a->addr);
		else
			snprintf(err, errlen, "cannot listen on %s:%d: %s", a->addr, a->port, strerror(e));
		return -e;
	}
	socklen_t sl = sizeof(sin);
	getsockname(d->lfd, (struct sockaddr *)&sin, &sl);
	d->port = ntohs(sin.sin_port);
	return names(d, a->addr, sin.sin_addr.s_addr == htonl(INADDR_ANY), a);
}

int vd_open(const struct vd_attr *a, vd **out, char *err, size_t errlen)
{
	vd *d = calloc(1, sizeof(*d));
	unsigned char r[32];
	*out = NULL;
	if (!d || a->secret_len > PS_SECRET_MAX || getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		snprintf(err, errlen, "%s", d ? "no randomness for the page's token" : strerror(ENOMEM));
		free(d);
		return -ENOMEM;
	}
	d->lfd = d->wake[0] = d->wake[1] = -1;
	d->logged_ms = INT64_MIN / 2;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->woken, &ca);
	pthread_condattr_destroy(&ca);
	d->euid = geteuid();
	d->serve = a->serve, d->cls = a->cls;
	for (int i = 0; i < 32; i++)
		snprintf(d->token + 2 * i, 3, "%02x", r[i]);
	if (a->token && strlen(a->token) == 64)
		memcpy(d->token, a->token, 64);
	if (a->secret)
		memcpy(d->secret, a->secret, d->secret_len = a->secret_len);
	int rc = ps_guard_create(&d->guard);
	if (!rc && (rc = bind_to(d, a, err, errlen)) == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	if (!rc && pipe2(d->wake, O_CLOEXEC))
		rc = -errno, snprintf(err, errlen, "%s", strerror(errno));
	if (!rc && !(d->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
						       MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_USE_ERROR_LOG,
					       0, NULL, NULL, on_request, d, MHD_OPTION_EXTERNAL_LOGGER, on_log, d,
					       MHD_OPTION_CONNECTION_LIMIT,
					       (unsigned)VD_MAX_CONNS + 16, MHD_OPTION_CONNECTION_TIMEOUT,
					       (unsigned)VD_IDLE_S, MHD_OPTION_URI_LOG_CALLBACK, log_uri, d,
					       MHD_OPTION_NOTIFY_COMPLETED, on_done, d, MHD_OPTION_NOTIFY_CONNECTION,
					       on_connection, d, MHD_OPTION_END)))
		rc = -EIO, snprintf(err, errlen, "libmicrohttpd would not start");
	if (!rc && pthread_create(&d->doorman, NULL, doorman, d)) {
		MHD_stop_daemon(d->mhd);
		d->mhd = NULL;
		rc = -EAGAIN, snprintf(err, errlen, "no thread for the door");
	}
	if (rc) {
		d->mhd = NULL;
		vd_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

int vd_port(const vd *d)
{
	return d->port;
}

const char *vd_token(const vd *d)
{
	return d->token;
}

void vd_counts(vd *d, struct vd_counts *c)
{
	pthread_mutex_lock(&d->lock);
	*c = d->n;
	pthread_mutex_unlock(&d->lock);
}

void vd_close(vd *d)
{
	if (!d)
		return;
	if (d->mhd) { /* the doorman first: nothing is handed over while libmicrohttpd stops */
		char one = 1;
		if (write(d->wake[1], &one, 1) == 1)
			pthread_join(d->doorman, NULL);
		MHD_stop_daemon(d->mhd);
	}
	for (int j = 0; j < VD_MAX_CONNS; j++) /* those that never got past the door */
		if (d->c[j].used && !d->c[j].handed)
			close(d->c[j].fd);
	let_go(d, true);
	for (int i = 0; i < 2; i++)
		if (d->wake[i] >= 0)
			close(d->wake[i]);
	if (d->lfd >= 0)
		close(d->lfd);
	for (int i = 0; i < d->nhosts; i++)
		free(d->hosts[i]);
	free(d->hosts);
	ps_guard_destroy(d->guard);
	pthread_cond_destroy(&d->woken);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
