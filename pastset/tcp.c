/* tcp.c - a tuple server over TCP: an io_uring event loop serving segments by the wire protocol (PROTOCOL.md). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "wire.h"

/*
 * One thread runs the loop: a multishot accept, one receive in flight per
 * connection, replies queued and sent in order.  No operation waits: reads
 * and takes of tuples not there yet, and writes to a full flow element,
 * answer at once (PS_ETIMEDOUT), so one client can never stall the loop, and
 * the application whose elements these are never waits for a client.
 */

#define MAX_CONNS 64
/* connections that have not said HELLO yet, at most: past that the oldest
 * goes, so strangers can never keep out a client that knows the secret
 * (which says HELLO as soon as it connects) */
#define MAX_PREAUTH 16
#define HELLO_MAX (8 + PS_SECRET_MAX)
#define MAX_HANDLES 4096
#define MAX_SEGS 1024
/* Replies waiting to be sent past which a client's requests are not read:
 * a client is served at the pace it reads its replies. */
#define OUT_AHEAD (256u << 10)
/* The reply buffer: compacting as sends complete keeps a queue's start
 * within its length of the buffer's start, so twice the most that waits
 * before a request is served, plus the largest reply, always fits. */
#define OUT_CAP (2 * OUT_AHEAD + PSW_HDR + PSW_MAX_PAYLOAD)
#define RECV_BUF 16384
/* the idle check runs every eighth of the idle time (5-100 ms): a client is
 * dropped within 1.125 times the idle time of going quiet */
#define TICK_MS_MIN 5
#define TICK_MS_MAX 100
/* A full table makes room for a newcomer by closing the authenticated
 * client quiet the longest, if quiet this long: it loses nothing (it has
 * nothing asked or unsent) and reconnects on its next call, so clients
 * that know the secret cannot keep others out by merely staying. */
#define EVICT_IDLE_MS 1000
/* a node daemon's segment no client has used this long is unmapped */
#define SEG_IDLE_MS 1000

enum { EV_ACCEPT = 1, EV_RECV, EV_SEND, EV_STOP, EV_TICK };

struct handle {
	ps_elem *e;
	bool writable; /* what the client asked for, not only what the handle can */
	int seg;       /* the segment it came from: kept while the handle lives */
};

struct conn {
	int fd;
	bool used, authed, closing, sending, dead;
	bool paused;      /* its requests wait until its replies drain (OUT_AHEAD) */
	int inflight;     /* submissions not yet completed: the slot stays until 0 */
	uint32_t gen;
	uint64_t seq;     /* accepted as the seq-th: strangers go oldest first */
	int64_t since_ms; /* accepted at */
	int64_t frame_ms; /* the frame being received began at */
	int64_t sent_ms;  /* the send in flight was armed or last made progress at */
	int64_t last_ms;  /* it last sent us bytes, or took some of ours */
	struct psw_reader rd;
	unsigned char in[RECV_BUF];
	size_t in_off, in_len; /* received, not yet served: in[in_off..in_len) */
	/* replies: OUT_CAP bytes, allocated once and never moved, because the
	 * kernel may be sending from it while new replies are appended */
	unsigned char *out;
	size_t out_len, out_sent;
	struct handle *h;
	int nh, caph;
};

struct seg {
	char name[PS_NAME_MAX + 1];
	ps_server *srv;   /* NULL: a free slot */
	bool owned;       /* opened by us (a node daemon's shared segment) */
	bool writable;    /* clients may write and take through it */
	bool retired;     /* replaced or removed since: closed when refs reach 0 */
	int refs;         /* element handles from it */
	int64_t used_ms;  /* last asked for, or its last handle closed */
	uint64_t dev, ino; /* which segment of that name it is */
};

struct ps_tcp {
	int lfd, efd, port, idle_ms, sndbuf;
	char addr[INET_ADDRSTRLEN]; /* where others reach it */
	char secret[PS_SECRET_MAX + 1];
	size_t secret_len;
	char shm_prefix[PS_NAME_MAX + 1];
	bool serve_shm, shm_writable;
	struct io_uring ring; /* the loop thread's alone (see loop()) */
	pthread_t thread;
	sem_t ready;          /* the loop thread made its ring, or failed to */
	int init_rc;
	struct conn conns[MAX_CONNS];
	pthread_mutex_t lock; /* segs: added from any thread */
	struct seg segs[MAX_SEGS];
	int nsegs;
	struct __kernel_timespec tick;
	unsigned ticks;
	_Atomic uint64_t accepted, frames, bad, refused, slow;
};

static int64_t now_ms(void)
{
	return (int64_t)(ps_now_ns() / 1000000u);
}

/* user_data: event, slot and the slot's generation, so a completion for
 * a connection that is gone never touches the one now in its slot */
static uint64_t ud(int ev, int conn, uint32_t gen)
{
	return (uint64_t)ev << 56 | (uint64_t)(gen & 0xffffff) << 32 | (uint32_t)conn;
}

/* --- segments ------------------------------------------------------------------ */

/* Frees a segment's slot, under t->lock; returns its server, to destroy
 * once the lock is dropped. */
static ps_server *seg_release(struct seg *g)
{
	ps_server *gone = g->srv;
	memset(g, 0, sizeof(*g));
	return gone;
}

/* Closes an element handle; its segment goes when retired and unused.
 * Only the loop thread calls this. */
static void seg_put(struct ps_tcp *t, int i, ps_elem *e)
{
	ps_elem_close(e);
	pthread_mutex_lock(&t->lock);
	struct seg *g = &t->segs[i];
	ps_server *gone = NULL;
	g->used_ms = now_ms();
	if (--g->refs == 0 && g->retired)
		gone = seg_release(g);
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
}

/*
 * A node daemon keeps a segment mapped while clients hold handles on it,
 * and a little after (ATTACH and NAMES come in bursts), then lets it go:
 * jobs come and go under new names, and a removed segment must not stay
 * mapped nor hold a slot.
 */
static void segs_sweep(struct ps_tcp *t)
{
	ps_server *gone[64];
	int n;
	int64_t now = now_ms();
	do { /* unmapped in batches, outside the lock */
		n = 0;
		pthread_mutex_lock(&t->lock);
		for (int i = 0; i < t->nsegs && n < 64; i++) {
			struct seg *g = &t->segs[i];
			if (g->srv && g->owned && !g->refs && now - g->used_ms >= SEG_IDLE_MS)
				gone[n++] = seg_release(g);
		}
		while (t->nsegs && !t->segs[t->nsegs - 1].srv)
			t->nsegs--;
		pthread_mutex_unlock(&t->lock);
		for (int i = 0; i < n; i++)
			ps_server_destroy(gone[i]);
	} while (n == 64);
}

/* --- connections ------------------------------------------------------------- */

/* The slot is freed once the kernel has given back every buffer of it. */
static void reap(struct ps_tcp *t, int i)
{
	struct conn *c = &t->conns[i];
	if (!c->used || !c->dead || c->inflight)
		return;
	close(c->fd);
	for (int k = 0; k < c->nh; k++)
		if (c->h[k].e)
			seg_put(t, c->h[k].seg, c->h[k].e);
	free(c->h);
	psw_reader_fini(&c->rd);
	free(c->out);
	uint32_t gen = c->gen;
	memset(c, 0, sizeof(*c));
	c->gen = gen + 1;
}

/* Closes a connection: shutdown ends its receive and send at once. */
static void drop(struct ps_tcp *t, int i, _Atomic uint64_t *why)
{
	struct conn *c = &t->conns[i];
	if (!c->used || c->dead)
		return;
	if (why)
		atomic_fetch_add(why, 1);
	c->dead = true;
	shutdown(c->fd, SHUT_RDWR);
	reap(t, i);
}

static bool arm(struct ps_tcp *t, int i, int ev)
{
	struct conn *c = &t->conns[i];
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	if (!sqe) {
		io_uring_submit(&t->ring);
		sqe = io_uring_get_sqe(&t->ring);
	}
	if (!sqe) {
		drop(t, i, &t->slow);
		return false;
	}
	if (ev == EV_RECV)
		io_uring_prep_recv(sqe, c->fd, c->in, RECV_BUF, 0);
	else
		io_uring_prep_send(sqe, c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
				   MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, ud(ev, i, c->gen));
	c->inflight++;
	return true;
}

static void arm_send(struct ps_tcp *t, int i)
{
	struct conn *c = &t->conns[i];
	if (c->dead || c->sending || c->out_sent == c->out_len)
		return;
	/* the client's time to take this send runs from now, however long
	 * ago the last one went */
	if ((c->sending = arm(t, i, EV_SEND)))
		c->sent_ms = now_ms();
}

/* Room for a reply of `len` payload bytes at the end of the queue. */
static unsigned char *reply(struct conn *c, uint16_t op, uint32_t tag, size_t len)
{
	/* untouched pages cost nothing: the memory is what replies use */
	if (!c->out && !(c->out = malloc(OUT_CAP)))
		return NULL;
	/* what was sent makes room as sends complete (on_send) */
	if (c->out_len + PSW_HDR + len > OUT_CAP)
		return NULL; /* cannot happen while OUT_AHEAD pauses the client */
	struct psw_hdr h = { (uint16_t)(op | PSW_REPLY), PSW_NATIVE, (uint32_t)len, tag };
	psw_put_hdr(c->out + c->out_len, &h);
	unsigned char *p = c->out + c->out_len + PSW_HDR;
	memset(p, 0, len);
	c->out_len += PSW_HDR + len;
	return p;
}

/* --- segments ------------------------------------------------------------------ */

static bool serves_shm(const struct ps_tcp *t, const char *name)
{
	return t->serve_shm && !strncmp(name, t->shm_prefix, strlen(t->shm_prefix));
}

/* A free slot, under t->lock; -1 if there is none. */
static int free_seg(struct ps_tcp *t)
{
	for (int i = 0; i < t->nsegs; i++)
		if (!t->segs[i].srv)
			return i;
	return t->nsegs < MAX_SEGS ? t->nsegs++ : -1;
}

/*
 * The segment of that name now.  A node daemon's cached mapping is checked
 * against the file: a job that ran again made a new segment of the same
 * name, and a removed one must not stay mapped; the old one is retired and
 * closed when its last handle goes.  Only the loop thread calls this.
 */
static int find_seg(struct ps_tcp *t, const char *name, ps_server **srv, int *slot)
{
	uint64_t dev = 0, ino = 0;
	bool shm = serves_shm(t, name);
	bool exists = shm && !ps__shm_id(name, &dev, &ino);
	ps_server *gone = NULL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++) {
		struct seg *g = &t->segs[i];
		if (!g->srv || g->retired || strcmp(g->name, name))
			continue;
		if (!g->owned || (exists && g->dev == dev && g->ino == ino)) {
			g->used_ms = now_ms();
			*srv = g->srv;
			*slot = i;
			pthread_mutex_unlock(&t->lock);
			return 0;
		}
		g->retired = true;
		if (!g->refs)
			gone = seg_release(g);
	}
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
	if (!shm)
		return PS_ENOENT;
	ps_server *s;
	/* the loop never waits on a segment: one being made is PS_EPARTIAL,
	 * and the client asks again */
	int rc = ps_server_open_shm(name, (t->shm_writable ? PS_RDWR : PS_RDONLY) | PS_NOWAIT, &s);
	if (rc)
		return rc;
	ps__shm_id(name, &dev, &ino);
	pthread_mutex_lock(&t->lock);
	int i = free_seg(t);
	for (int k = 0; i < 0 && k < t->nsegs; k++) { /* full: the least recently used idle one goes */
		struct seg *g = &t->segs[k];
		if (g->owned && !g->refs && (i < 0 || g->used_ms < t->segs[i].used_ms))
			i = k;
	}
	if (i < 0) {
		pthread_mutex_unlock(&t->lock);
		ps_server_destroy(s);
		return PS_ENOSPC;
	}
	struct seg *g = &t->segs[i];
	gone = g->srv ? seg_release(g) : NULL;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->srv = s;
	g->owned = true;
	g->writable = t->shm_writable;
	g->used_ms = now_ms();
	g->dev = dev;
	g->ino = ino;
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
	*srv = s;
	*slot = i;
	return 0;
}

static bool is_added(struct ps_tcp *t, const char *name)
{
	bool added = false;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].srv && !t->segs[i].owned && !strcmp(t->segs[i].name, name))
			added = true;
	pthread_mutex_unlock(&t->lock);
	return added;
}

int ps_tcp_add(ps_tcp *t, const char *segment, ps_server *srv)
{
	int rc = ps__check_name(segment);
	if (rc || !t || !srv)
		return rc ? rc : PS_EINVAL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].srv && !t->segs[i].retired && !strcmp(t->segs[i].name, segment))
			rc = PS_EEXIST;
	int i = rc ? -1 : free_seg(t);
	if (!rc && i < 0)
		rc = PS_ENOSPC;
	if (!rc) {
		struct seg *g = &t->segs[i];
		snprintf(g->name, sizeof(g->name), "%s", segment);
		g->srv = srv;
		g->owned = false;
		g->writable = true;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* LIST: the segments served whose names start with prefix, the added ones
 * first, then (a node daemon) this host's; a page of them from `first`. */
struct listing {
	struct ps_tcp *t;
	const char *prefix;
	uint32_t first, total, n;
	unsigned char *out;
};

static void list_put(struct listing *l, const char *name)
{
	if (l->total++ >= l->first && l->n < PSW_LIST_MAX)
		memcpy(l->out + (size_t)l->n++ * PSW_NAME, name, strnlen(name, PS_NAME_MAX));
}

static int list_one(const char *name, void *arg)
{
	struct listing *l = arg;
	if (!strncmp(name, l->prefix, strlen(l->prefix)) && serves_shm(l->t, name) &&
	    !is_added(l->t, name)) /* those were listed first */
		list_put(l, name);
	return 0;
}

/* --- requests --------------------------------------------------------------------- */

static ps_elem *handle(struct conn *c, const unsigned char *p, bool *writable)
{
	uint32_t k = psw_get32(p);
	if (k >= (uint32_t)c->nh || !c->h[k].e)
		return NULL;
	if (writable)
		*writable = c->h[k].writable;
	return c->h[k].e;
}

static int new_handle(struct conn *c, ps_elem *e, bool writable, int seg, uint32_t *k)
{
	for (int i = 0; i < c->nh; i++)
		if (!c->h[i].e) {
			c->h[i] = (struct handle){ e, writable, seg };
			*k = (uint32_t)i;
			return 0;
		}
	if (c->nh == MAX_HANDLES)
		return PS_ENOSPC;
	if (c->nh == c->caph) {
		int cap = c->caph ? 2 * c->caph : 16;
		struct handle *h = realloc(c->h, sizeof(*h) * (size_t)cap);
		if (!h)
			return PS_ENOMEM;
		c->h = h;
		c->caph = cap;
	}
	c->h[c->nh] = (struct handle){ e, writable, seg };
	*k = (uint32_t)c->nh++;
	return 0;
}

static long peer_uid(int fd);

/*
 * The requests, a handler each.  A handler gets a request whose payload
 * has a length its message may have (the table below says which), and
 * returns false only to close the connection: a malformed request, or no
 * memory for the reply.
 */
typedef bool handler_fn(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
			const unsigned char *in);

static bool hello(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h, const unsigned char *in)
{
	struct psw_hello_req q;
	unsigned char *o;
	if (c->authed || psw_hello_req_get(in, h->length, &q))
		return false;
	bool ok = q.version == PSW_VERSION &&
		  (q.mark == PSW_BOM || q.mark == __builtin_bswap32(PSW_BOM));
	/* compared in full whatever the length, so timing tells nothing */
	unsigned char diff = q.secret_len != t->secret_len;
	for (size_t i = 0; i < t->secret_len; i++)
		diff |= (unsigned char)(t->secret[i] ^ (i < q.secret_len ? q.secret[i] : 0));
	ok = ok && !diff;
	/* Without a secret, only on loopback, and only for our own user (or
	 * root): a segment is 0600, and so is what serves it.  Looked at
	 * here, not at accept, so that the one refused is told why. */
	if (ok && !t->secret_len) {
		long uid = peer_uid(c->fd);
		if (uid == -2)
			return false; /* reset before we looked: nothing to refuse */
		ok = uid == (long)geteuid() || uid == 0;
	}
	if (!(o = reply(c, h->op, h->tag, PSW_HELLO_REP_LEN)))
		return false;
	struct psw_hello_rep r = { PSW_VERSION, PSW_BOM, ok ? 0 : PS_EACCES };
	psw_hello_rep_put(o, &r);
	if (!ok) {
		atomic_fetch_add(&t->refused, 1);
		c->closing = true; /* closed once the reply has gone */
	}
	c->authed = ok;
	return true;
}

static bool on_attach(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		      const unsigned char *in)
{
	char name[PS_NAME_MAX + 1];
	psw_name_get(in, name);
	ps_server *srv = NULL;
	int slot, rc = find_seg(t, name, &srv, &slot);
	unsigned char *o = reply(c, h->op, h->tag, PSW_ATTACH_REP_LEN);
	if (!o)
		return false;
	int count = rc ? 0 : ps_server_count(srv);
	if (!rc && count < 0)
		rc = count;
	/* an added server lives as long as we serve it; a segment says */
	struct ps_shm_info info = { .state = PS_SHM_LIVE };
	if (!rc && serves_shm(t, name) && !is_added(t, name))
		ps__shm_info(name, &info, false);
	struct psw_attach_rep r = { .state = (uint32_t)info.state };
	void *area = NULL;
	if (!rc && !(rc = ps_server_user_area(srv, &area))) {
		r.count = (uint32_t)count;
		r.area = area;
	} else {
		r.state = 0;
	}
	r.status = rc;
	psw_attach_rep_put(o, &r);
	return true;
}

static bool on_names(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	struct psw_names_req q;
	psw_names_req_get(in, h->length, &q);
	ps_server *srv = NULL;
	int slot, rc = find_seg(t, q.name, &srv, &slot);
	int total = rc ? 0 : ps_server_count(srv);
	if (total < 0)
		rc = total, total = 0;
	uint32_t k = q.first < (uint32_t)total ? (uint32_t)total - q.first : 0;
	if (k > PSW_LIST_MAX)
		k = PSW_LIST_MAX;
	unsigned char *o = reply(c, h->op, h->tag, PSW_NAMES_REP_LEN + (size_t)k * PSW_NAME);
	if (!o)
		return false;
	struct psw_names_rep r = { rc, (uint32_t)total, k };
	o += psw_names_rep_put(o, &r);
	for (uint32_t i = 0; i < k; i++) {
		char nm[PS_NAME_MAX + 1] = { 0 };
		ps_server_elem_name(srv, (int)(q.first + i), nm);
		o += psw_name_put(o, nm);
	}
	return true;
}

static bool on_list(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		    const unsigned char *in)
{
	struct psw_names_req q;
	psw_names_req_get(in, h->length, &q);
	unsigned char *names = calloc(PSW_LIST_MAX, PSW_NAME);
	if (!names)
		return false;
	struct listing l = { t, q.name, q.first, 0, 0, names };
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].srv && !t->segs[i].owned && !t->segs[i].retired &&
		    !strncmp(t->segs[i].name, q.name, strlen(q.name)))
			list_put(&l, t->segs[i].name);
	pthread_mutex_unlock(&t->lock);
	int rc = t->serve_shm ? ps_shm_list(list_one, &l) : 0;
	unsigned char *o = reply(c, h->op, h->tag, PSW_NAMES_REP_LEN + (size_t)l.n * PSW_NAME);
	if (o) {
		struct psw_names_rep r = { rc, l.total, l.n };
		memcpy(o + psw_names_rep_put(o, &r), names, (size_t)l.n * PSW_NAME);
	}
	free(names);
	return o != NULL;
}

static bool on_open(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		    const unsigned char *in)
{
	struct psw_open_req q;
	psw_open_req_get(in, h->length, &q);
	bool wr = q.flags & PS_RDWR;
	ps_server *srv = NULL;
	ps_elem *e = NULL;
	struct psw_open_rep r = { 0 };
	int slot, rc = find_seg(t, q.segment, &srv, &slot);
	if (!rc && wr) {
		pthread_mutex_lock(&t->lock);
		if (!t->segs[slot].writable)
			rc = PS_EROFS; /* said at once, not at the first write */
		pthread_mutex_unlock(&t->lock);
	}
	if (!rc)
		rc = ps_elem_open(srv, q.element, q.tuple_size, &e);
	if (!rc && (rc = new_handle(c, e, wr, slot, &r.handle))) {
		ps_elem_close(e);
		e = NULL;
	}
	if (!rc) {
		pthread_mutex_lock(&t->lock);
		t->segs[slot].refs++;
		pthread_mutex_unlock(&t->lock);
	}
	struct ps_stats st = { 0 };
	if (!rc)
		ps_elem_stats(e, &st);
	unsigned char *o = reply(c, h->op, h->tag, PSW_OPEN_REP_LEN);
	if (!o)
		return false; /* the handle goes with the connection */
	r.status = rc;
	r.handle = rc ? 0 : r.handle;
	r.tuple_size = st.tuple_size;
	r.threshold = st.threshold;
	r.mode = (uint32_t)st.mode;
	r.flags = st.flags;
	psw_open_rep_put(o, &r);
	return true;
}

static bool on_time(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		    const unsigned char *in)
{
	(void)t, (void)in;
	unsigned char *o = reply(c, h->op, h->tag, PSW_TIME_LEN);
	return o && psw_time_put(o, ps_now_ns());
}

static bool on_close(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	uint32_t k = UINT32_MAX;
	psw_handle_get(in, h->length, &k);
	int rc = PSW_EBADH;
	if (k < (uint32_t)c->nh && c->h[k].e) {
		seg_put(t, c->h[k].seg, c->h[k].e);
		c->h[k].e = NULL;
		rc = 0;
	}
	unsigned char *o = reply(c, h->op, h->tag, PSW_STATUS_LEN);
	return o && psw_status_put(o, rc);
}

static bool on_stats(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	ps_elem *e = handle(c, in, NULL);
	struct ps_stats st = { 0 };
	int rc = e ? ps_elem_stats(e, &st) : PSW_EBADH;
	unsigned char *o = reply(c, h->op, h->tag, PSW_STATS_REP_LEN);
	if (!o)
		return false;
	struct psw_stats_rep r = { rc, st.written, st.discarded, st.taken, st.oldest };
	psw_stats_rep_put(o, &r);
	return true;
}

static bool on_notes(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	ps_elem *e = handle(c, in, NULL);
	unsigned char *o = reply(c, h->op, h->tag, PSW_NOTES_REP_LEN);
	if (!o)
		return false;
	struct psw_notes_rep r = { .status = e ? 0 : PSW_EBADH };
	if (e)
		ps_notes_get(e, r.words);
	psw_notes_rep_put(o, &r);
	return true;
}

/* READ, READ_LATEST, TAKE: status, index, tuple. */
static bool on_tuple(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	struct psw_read_req q = { 0 };
	if (h->op == PSW_READ)
		psw_read_req_get(in, h->length, &q);
	bool wr = false;
	ps_elem *e = handle(c, in, &wr);
	size_t ts = e ? ps_elem_tuple_size(e) : 0;
	unsigned char *o = reply(c, h->op, h->tag, PSW_TUPLE_REP_LEN + ts);
	if (!o)
		return false;
	unsigned char *tuple = o + PSW_TUPLE_REP_LEN;
	uint64_t idx = 0, oldest = 0;
	int rc = !e ? PSW_EBADH
	       : h->op == PSW_READ_LATEST ? ps_read_latest(e, tuple, &idx)
	       : h->op == PSW_TAKE ? (wr ? ps_take(e, tuple, 0, &idx) : PS_EROFS)
	       : ps_read(e, (idx = q.index), tuple, 0, &oldest);
	struct psw_tuple_rep r = { rc, rc == PS_EDISCARDED ? oldest : idx };
	psw_tuple_rep_put(o, &r);
	return true;
}

static bool on_range(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	struct psw_range_req q;
	psw_range_req_get(in, h->length, &q);
	ps_elem *e = handle(c, in, NULL);
	size_t ts = e ? ps_elem_tuple_size(e) : 0, want = q.count;
	if (ts && want > (PSW_MAX_PAYLOAD - PSW_RANGE_REP_LEN) / ts)
		want = (PSW_MAX_PAYLOAD - PSW_RANGE_REP_LEN) / ts;
	/* room for what is there, not for what was asked */
	struct ps_stats st = { 0 };
	if (e && !ps_elem_stats(e, &st) && (q.first >= st.written || want > st.written - q.first))
		want = q.first < st.written ? (size_t)(st.written - q.first) : 0;
	unsigned char *o = reply(c, h->op, h->tag, PSW_RANGE_REP_LEN + want * ts);
	if (!o)
		return false;
	struct psw_range_rep r = { PSW_EBADH, 0 };
	if (e)
		r.count = ps_read_range(e, q.first, want, o + PSW_RANGE_REP_LEN, &r.oldest);
	psw_range_rep_put(o, &r);
	/* give back the room the tuples not there did not need */
	size_t got = r.count > 0 ? (size_t)r.count : 0;
	c->out_len -= (want - got) * ts;
	struct psw_hdr rh = { (uint16_t)(h->op | PSW_REPLY), PSW_NATIVE,
			      (uint32_t)(PSW_RANGE_REP_LEN + got * ts), h->tag };
	psw_put_hdr(o - PSW_HDR, &rh);
	return true;
}

static bool on_write(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	size_t n = h->length - PSW_HANDLE_LEN;
	bool wr = false;
	ps_elem *e = handle(c, in, &wr);
	int rc = !e ? PSW_EBADH : !wr ? PS_EROFS : n != ps_elem_tuple_size(e) ? PS_ESIZE : 0;
	struct psw_tuple_rep r = { 0 };
	if (!rc)
		rc = ps_write(e, in + PSW_HANDLE_LEN, 0, &r.index); /* never waits: a full flow element says so */
	unsigned char *o = reply(c, h->op, h->tag, PSW_TUPLE_REP_LEN);
	if (!o)
		return false;
	r.status = rc;
	psw_tuple_rep_put(o, &r);
	return true;
}

static bool on_latest_many(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
			   const unsigned char *in)
{
	(void)t;
	uint32_t k = psw_get32(in);
	if (k > PSW_MANY_MAX || h->length != PSW_COUNT_LEN + PSW_HANDLE_LEN * (size_t)k)
		return false;
	const unsigned char *handles = in + PSW_COUNT_LEN;
	size_t len = PSW_STATUS_LEN;
	for (uint32_t i = 0; i < k; i++) {
		ps_elem *e = handle(c, handles + PSW_HANDLE_LEN * i, NULL);
		len += PSW_TUPLE_REP_LEN + (e ? ps_elem_tuple_size(e) : 0);
	}
	unsigned char *o;
	if (len > PSW_MAX_PAYLOAD) /* no reply may exceed a frame: ask for fewer */
		return (o = reply(c, h->op, h->tag, PSW_STATUS_LEN)) && psw_status_put(o, PS_E2BIG);
	if (!(o = reply(c, h->op, h->tag, len)))
		return false;
	unsigned char *q = o + psw_status_put(o, 0);
	for (uint32_t i = 0; i < k; i++) {
		ps_elem *e = handle(c, handles + PSW_HANDLE_LEN * i, NULL);
		struct psw_tuple_rep r = { PSW_EBADH, 0 };
		if (e)
			r.status = ps_read_latest(e, q + PSW_TUPLE_REP_LEN, &r.index);
		q += psw_tuple_rep_put(q, &r) + (e ? ps_elem_tuple_size(e) : 0);
	}
	return true;
}

/* Each operation's handler, and the payload lengths its request may have:
 * exactly len, or at least len where `more` (a tuple or handles follow). */
static const struct {
	handler_fn *fn;
	uint32_t len;
	bool more;
} handlers[PSW_OP_LAST + 1] = {
	[PSW_OPEN] = { on_open, PSW_OPEN_REQ_LEN, false },
	[PSW_WRITE] = { on_write, PSW_HANDLE_LEN, true },
	[PSW_READ] = { on_tuple, PSW_READ_REQ_LEN, false },
	[PSW_READ_LATEST] = { on_tuple, PSW_HANDLE_LEN, false },
	[PSW_READ_RANGE] = { on_range, PSW_RANGE_REQ_LEN, false },
	[PSW_TAKE] = { on_tuple, PSW_HANDLE_LEN, false },
	[PSW_LATEST_MANY] = { on_latest_many, PSW_COUNT_LEN, true },
	[PSW_STATS] = { on_stats, PSW_HANDLE_LEN, false },
	[PSW_ATTACH] = { on_attach, PSW_NAME, false },
	[PSW_NAMES] = { on_names, PSW_NAMES_REQ_LEN, false },
	[PSW_LIST] = { on_list, PSW_NAMES_REQ_LEN, false },
	[PSW_NOTES] = { on_notes, PSW_HANDLE_LEN, false },
	[PSW_CLOSE] = { on_close, PSW_HANDLE_LEN, false },
	[PSW_TIME] = { on_time, 0, false },
};

/* Serves one request; false closes the connection as malformed. */
static bool serve(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h, const unsigned char *in)
{
	if (h->op & PSW_REPLY)
		return false;
	if (h->op == PSW_HELLO)
		return hello(t, c, h, in);
	if (!c->authed || h->op > PSW_OP_LAST || !handlers[h->op].fn)
		return false;
	uint32_t len = handlers[h->op].len;
	if (h->length < len || (h->length > len && !handlers[h->op].more))
		return false;
	return handlers[h->op].fn(t, c, h, in);
}

/* Part of a frame received, the rest not yet. */
static bool partial(const struct psw_reader *r)
{
	return r->have > 0 && !(r->have >= PSW_HDR && r->have == PSW_HDR + (size_t)r->h.length);
}

/*
 * Serves what was received and not yet served.  While OUT_AHEAD bytes of
 * replies wait to be sent it stops, and reads nothing more from the client
 * until they drain: a client that pipelines is served at the pace it
 * reads, and the memory it can make us hold stays bounded.
 */
static void pump(struct ps_tcp *t, int i)
{
	struct conn *c = &t->conns[i];
	/* a frame paused mid-way gets its time afresh: the wait was ours */
	bool was_partial = partial(&c->rd) && !c->paused, completed = false;
	c->paused = false;
	while (c->in_off < c->in_len && !c->closing) {
		if (c->out_len - c->out_sent >= OUT_AHEAD) {
			c->paused = true;
			break;
		}
		size_t used;
		int rc = psw_feed(&c->rd, c->in + c->in_off, c->in_len - c->in_off, &used);
		c->in_off += used;
		if (rc < 0 || (rc == 1 && !serve(t, c, &c->rd.h, c->rd.payload))) {
			drop(t, i, &t->bad);
			return;
		}
		if (rc == 1) {
			atomic_fetch_add(&t->frames, 1);
			completed = true;
			c->rd.max = c->authed ? 0 : HELLO_MAX;
		}
		if (!used)
			break;
	}
	/* a frame has until the idle time from its first byte, however slowly
	 * the rest trickles in */
	if (partial(&c->rd) && (!was_partial || completed))
		c->frame_ms = now_ms();
	arm_send(t, i);
	if (!c->paused && !c->closing && !c->dead)
		arm(t, i, EV_RECV);
}

static void on_recv(struct ps_tcp *t, int i, int res)
{
	struct conn *c = &t->conns[i];
	if (res <= 0 || c->closing) {
		drop(t, i, NULL); /* the client went away: nothing wrong */
		return;
	}
	c->in_off = 0;
	c->in_len = (size_t)res;
	c->last_ms = now_ms();
	pump(t, i);
}

static void on_send(struct ps_tcp *t, int i, int res)
{
	struct conn *c = &t->conns[i];
	c->sending = false;
	if (res <= 0) {
		drop(t, i, NULL);
		return;
	}
	c->sent_ms = c->last_ms = now_ms();
	c->out_sent += (size_t)res;
	/* Nothing is being sent from the buffer now: once what went is at least
	 * what waits, move the rest to the front.  Each byte moves at most once
	 * for each byte sent, and the queue never drifts off the buffer's end. */
	if (c->out_sent >= c->out_len - c->out_sent) {
		memmove(c->out, c->out + c->out_sent, c->out_len - c->out_sent);
		c->out_len -= c->out_sent;
		c->out_sent = 0;
	}
	if (c->closing && c->out_sent == c->out_len)
		drop(t, i, NULL);
	else if (c->paused && c->out_len - c->out_sent < OUT_AHEAD)
		pump(t, i); /* room again: serve what waits, then read on */
	else
		arm_send(t, i);
}

/* No HELLO within the idle time of connecting, a frame not whole within
 * the idle time of its first byte, replies unread for that long: a slow
 * client holds memory and a slot, so it goes.  An authenticated client
 * between requests may stay (a monitor between pulls). */
static void on_tick(struct ps_tcp *t)
{
	int64_t now = now_ms();
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &t->conns[i];
		if (!c->used || c->dead)
			continue;
		if ((!c->authed && now - c->since_ms >= t->idle_ms) ||
		    (partial(&c->rd) && !c->paused && now - c->frame_ms >= t->idle_ms) ||
		    (c->sending && now - c->sent_ms >= t->idle_ms))
			drop(t, i, &t->slow);
	}
	if (t->serve_shm && ++t->ticks % 8 == 0)
		segs_sweep(t);
}

/* The user owning the socket local:lport -> remote:rport, asked of the
 * kernel by its exact address (sock_diag): one look-up, not a read of
 * every socket on the host.  -1 if the kernel cannot say. */
static long diag_uid(const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} q = {
		.nlh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
		       .id = { .idiag_sport = local->sin_port, .idiag_dport = remote->sin_port,
			       .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	q.r.id.idiag_src[0] = local->sin_addr.s_addr;
	q.r.id.idiag_dst[0] = remote->sin_addr.s_addr;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	long uid = -1;
	union {
		struct nlmsghdr h;
		char b[1024];
	} a;
	struct timeval tv = { 0, 200000 }; /* the kernel answers at once, or never */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&nl, sizeof(nl)) == (ssize_t)sizeof(q)) {
		ssize_t n = recv(fd, &a, sizeof(a), 0);
		if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) &&
		    NLMSG_OK(&a.h, (size_t)n) && a.h.nlmsg_type == SOCK_DIAG_BY_FAMILY)
			uid = ((struct inet_diag_msg *)NLMSG_DATA(&a.h))->idiag_uid;
	}
	close(fd);
	return uid;
}

/* The same from /proc/net/tcp, where sock_diag is not there (a kernel
 * without inet_diag): a read of every TCP socket on the host. */
static long proc_uid(const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
	char l[32], r[32], line[256], a[64], b[64];
	snprintf(l, sizeof(l), "%08X:%04X", (unsigned)local->sin_addr.s_addr, ntohs(local->sin_port));
	snprintf(r, sizeof(r), "%08X:%04X", (unsigned)remote->sin_addr.s_addr,
		 ntohs(remote->sin_port));
	FILE *f = fopen("/proc/net/tcp", "re");
	long uid = -1, u;
	while (f && uid < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %ld", a, b, &u) == 3 &&
		    !strcmp(a, l) && !strcmp(b, r))
			uid = u;
	if (f)
		fclose(f);
	return uid;
}

/* The user a loopback client runs as (SO_PEERCRED is for Unix sockets
 * only): the owner of the client's end, whose local end is our peer and
 * remote end us.  -1 if not found, -2 if the client is already gone. */
static long peer_uid(int fd)
{
	struct sockaddr_in me, peer;
	socklen_t l1 = sizeof(me), l2 = sizeof(peer);
	if (getsockname(fd, (struct sockaddr *)&me, &l1))
		return -1;
	if (getpeername(fd, (struct sockaddr *)&peer, &l2))
		return -2;
	long uid = diag_uid(&peer, &me);
	if (uid < 0)
		uid = proc_uid(&peer, &me);
	/* not found, because the client's end closed while we looked? */
	if (uid < 0 && getpeername(fd, (struct sockaddr *)&peer, &l2))
		return -2;
	return uid;
}

static bool arm_accept(struct ps_tcp *t)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&t->ring);
	if (!s) {
		io_uring_submit(&t->ring);
		s = io_uring_get_sqe(&t->ring);
	}
	if (s) {
		io_uring_prep_multishot_accept(s, t->lfd, NULL, NULL, SOCK_CLOEXEC);
		io_uring_sqe_set_data64(s, ud(EV_ACCEPT, 0, 0));
	}
	return s != NULL;
}

static void arm_tick(struct ps_tcp *t)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&t->ring);
	if (s) {
		io_uring_prep_timeout(s, &t->tick, 0, 0);
		io_uring_sqe_set_data64(s, ud(EV_TICK, 0, 0));
	}
}

/* Closes the authenticated client quiet the longest (EVICT_IDLE_MS). */
static void evict_idle(struct ps_tcp *t)
{
	int64_t now = now_ms();
	int quietest = -1;
	for (int j = 0; j < MAX_CONNS; j++) {
		struct conn *o = &t->conns[j];
		if (o->used && o->authed && !o->dead && !o->closing && !o->sending && !o->paused &&
		    !partial(&o->rd) && o->in_off == o->in_len && now - o->last_ms >= EVICT_IDLE_MS &&
		    (quietest < 0 || o->last_ms < t->conns[quietest].last_ms))
			quietest = j;
	}
	if (quietest >= 0)
		drop(t, quietest, &t->slow);
}

static void on_accept(struct ps_tcp *t, int res)
{
	if (res < 0)
		return;
	int k = MAX_CONNS, strangers = 0, oldest = -1;
	for (int j = MAX_CONNS - 1; j >= 0; j--) {
		struct conn *o = &t->conns[j];
		if (!o->used) {
			k = j;
		} else if (!o->authed && !o->dead) {
			strangers++;
			if (oldest < 0 || o->seq < t->conns[oldest].seq)
				oldest = j;
		}
	}
	if (oldest >= 0 && (strangers >= MAX_PREAUTH || k == MAX_CONNS))
		drop(t, oldest, &t->slow); /* its slot is free once the kernel lets go */
	else if (k == MAX_CONNS)
		evict_idle(t);
	if (k == MAX_CONNS) {
		close(res); /* full: refuse, never grow */
		atomic_fetch_add(&t->refused, 1);
		return;
	}
	if (t->sndbuf)
		setsockopt(res, SOL_SOCKET, SO_SNDBUF, &t->sndbuf, sizeof(t->sndbuf));
	/* replies go whole, each one sent as soon as it is made: Nagle could
	 * only hold back a reply's last segment until the client acknowledges */
	int one = 1;
	setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct conn *c = &t->conns[k];
	uint32_t gen = c->gen;
	memset(c, 0, sizeof(*c));
	c->gen = gen;
	c->fd = res;
	c->used = true;
	c->since_ms = c->last_ms = now_ms();
	psw_reader_init(&c->rd);
	c->rd.max = HELLO_MAX; /* a stranger's frames are small until it says HELLO */
	c->seq = atomic_fetch_add(&t->accepted, 1);
	arm(t, k, EV_RECV);
}

/*
 * The ring is made, used and torn down by this thread alone.  The kernel
 * signals the task that created a ring when the ring goes away (its exit
 * work), and that signal cuts short the task's next timed wait with EINTR:
 * it must never be the application's thread that started or stopped us.
 */
static void *loop(void *arg)
{
	struct ps_tcp *t = arg;
	t->init_rc = io_uring_queue_init(4 * MAX_CONNS, &t->ring, 0);
	sem_post(&t->ready);
	if (t->init_rc)
		return NULL;
	uint64_t stopword;
	bool accepting = arm_accept(t);
	arm_tick(t);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	io_uring_prep_read(sqe, t->efd, &stopword, sizeof(stopword), 0);
	io_uring_sqe_set_data64(sqe, ud(EV_STOP, 0, 0));
	bool stop = false;
	while (!stop) {
		io_uring_submit_and_wait(&t->ring, 1);
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&t->ring, head, cqe) {
			seen++;
			int ev = (int)(cqe->user_data >> 56), i = (int)(uint32_t)cqe->user_data;
			uint32_t gen = (uint32_t)(cqe->user_data >> 32) & 0xffffff;
			int res = cqe->res;
			if (ev == EV_STOP) {
				stop = true;
			} else if (ev == EV_TICK) {
				on_tick(t);
				arm_tick(t);
			} else if (ev == EV_ACCEPT) {
				on_accept(t, res);
				if (!(cqe->flags & IORING_CQE_F_MORE)) /* a multishot ends on errors */
					accepting = !stop && arm_accept(t);
			} else if ((ev == EV_RECV || ev == EV_SEND) && i >= 0 && i < MAX_CONNS &&
				   t->conns[i].used && (t->conns[i].gen & 0xffffff) == gen) {
				struct conn *c = &t->conns[i];
				c->inflight--;
				if (c->dead)
					reap(t, i);
				else if (ev == EV_RECV)
					on_recv(t, i, res);
				else
					on_send(t, i, res);
			}
		}
		io_uring_cq_advance(&t->ring, seen);
	}
	/* Every slot: shut down, then wait for the kernel to hand the buffers
	 * back.  The accept is cancelled and waited for too: the ring's
	 * teardown is lazy, and until then the port would stay taken. */
	for (int i = 0; i < MAX_CONNS; i++)
		drop(t, i, NULL);
	sqe = io_uring_get_sqe(&t->ring);
	if (sqe) {
		io_uring_prep_cancel64(sqe, ud(EV_ACCEPT, 0, 0), 0);
		io_uring_sqe_set_data64(sqe, 0);
	}
	io_uring_submit(&t->ring);
	for (;;) {
		bool busy = accepting;
		for (int i = 0; i < MAX_CONNS; i++)
			busy |= t->conns[i].used;
		if (!busy)
			break;
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&t->ring, &cqe))
			break;
		int ev = (int)(cqe->user_data >> 56), i = (int)(uint32_t)cqe->user_data;
		uint32_t gen = (uint32_t)(cqe->user_data >> 32) & 0xffffff;
		if (ev == EV_ACCEPT) {
			if (cqe->res >= 0)
				close(cqe->res); /* one that came in as we stopped */
			if (!(cqe->flags & IORING_CQE_F_MORE))
				accepting = false;
		} else if ((ev == EV_RECV || ev == EV_SEND) && i >= 0 && i < MAX_CONNS &&
			   t->conns[i].used && (t->conns[i].gen & 0xffffff) == gen) {
			t->conns[i].inflight--;
			reap(t, i);
		}
		io_uring_cqe_seen(&t->ring, cqe);
	}
	io_uring_queue_exit(&t->ring);
	return NULL;
}

/* Listening on every address: the one to give others is the first IPv4
 * interface that is up and not loopback. */
static void first_address(char *buf, size_t len)
{
	struct ifaddrs *ifs, *i;
	snprintf(buf, len, "127.0.0.1");
	if (getifaddrs(&ifs))
		return;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
				  (socklen_t)len);
			break;
		}
	freeifaddrs(ifs);
}

int ps_tcp_start(const struct ps_tcp_attr *a, ps_tcp **out)
{
	if (!out || (a && a->shm_prefix && strlen(a->shm_prefix) > PS_NAME_MAX))
		return PS_EINVAL;
	const char *addr = a && a->addr ? a->addr : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(a ? (uint16_t)a->port : 0) };
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 || (a && (a->port < 0 || a->port > 65535)))
		return PS_EINVAL;
	bool loopback = (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
	struct ps_tcp *t = calloc(1, sizeof(*t));
	if (!t)
		return PS_ENOMEM;
	t->lfd = t->efd = -1;
	t->idle_ms = a && a->idle_ms > 0 ? a->idle_ms : 5000;
	t->sndbuf = a && a->sndbuf > 0 ? a->sndbuf : 0;
	int tick_ms = t->idle_ms / 8;
	tick_ms = tick_ms < TICK_MS_MIN ? TICK_MS_MIN : tick_ms > TICK_MS_MAX ? TICK_MS_MAX : tick_ms;
	t->tick.tv_nsec = tick_ms * 1000000L;
	if (a && a->shm_prefix) {
		t->serve_shm = true;
		t->shm_writable = a->shm_writable;
		snprintf(t->shm_prefix, sizeof(t->shm_prefix), "%s", a->shm_prefix);
	}
	pthread_mutex_init(&t->lock, NULL);
	int rc = 0;
	if (a && a->secret_file && (rc = ps__secret_read(a->secret_file, t->secret, &t->secret_len)))
		goto fail;
	if (!loopback && !t->secret_len) {
		rc = PS_EACCES; /* beyond this host, only with a shared secret */
		goto fail;
	}
	int one = 1;
	if ((t->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(t->lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(t->lfd, 64)) {
		rc = -errno;
		goto fail;
	}
	socklen_t sl = sizeof(sin);
	getsockname(t->lfd, (struct sockaddr *)&sin, &sl);
	t->port = ntohs(sin.sin_port);
	if (sin.sin_addr.s_addr == htonl(INADDR_ANY))
		first_address(t->addr, sizeof(t->addr));
	else
		inet_ntop(AF_INET, &sin.sin_addr, t->addr, sizeof(t->addr));
	if ((t->efd = eventfd(0, EFD_CLOEXEC)) < 0) {
		rc = -errno;
		goto fail;
	}
	sem_init(&t->ready, 0, 0);
	if (pthread_create(&t->thread, NULL, loop, t)) {
		sem_destroy(&t->ready);
		rc = PS_ENOMEM;
		goto fail;
	}
	while (sem_wait(&t->ready) && errno == EINTR)
		;
	sem_destroy(&t->ready);
	if ((rc = t->init_rc)) {
		pthread_join(t->thread, NULL);
		goto fail;
	}
	*out = t;
	return 0;
fail:
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->efd >= 0)
		close(t->efd);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return rc;
}

const char *ps_tcp_addr(const ps_tcp *t)
{
	return t ? t->addr : "";
}

int ps_tcp_port(const ps_tcp *t)
{
	return t ? t->port : PS_EINVAL;
}

void ps_tcp_counts(const ps_tcp *t, struct ps_tcp_counts *c)
{
	c->accepted = atomic_load(&t->accepted);
	c->frames = atomic_load(&t->frames);
	c->bad = atomic_load(&t->bad);
	c->refused = atomic_load(&t->refused);
	c->slow = atomic_load(&t->slow);
}

void ps_tcp_stop(ps_tcp *t)
{
	if (!t)
		return;
	uint64_t one = 1;
	if (write(t->efd, &one, sizeof(one)) != sizeof(one))
		return; /* cannot wake the loop: leave it rather than hang here */
	pthread_join(t->thread, NULL);
	close(t->lfd);
	close(t->efd);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].owned)
			ps_server_destroy(t->segs[i].srv);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
