/* tcp.c - a tuple server over TCP: the io_uring event loop, its connections and its life (PROTOCOL.md). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
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

#include "tcp.h"

/* user_data: event, slot and the slot's generation, so a completion for
 * a connection that is gone never touches the one now in its slot */
static uint64_t ud(int ev, int conn, uint32_t gen)
{
	return (uint64_t)ev << 56 | (uint64_t)(gen & 0xffffff) << 32 | (uint32_t)conn;
}

/* --- connections ------------------------------------------------------------- */

/* tcp.h's invariants, in the debug builds: a walk of every connection's
 * handles, at each tick and each newcomer, never per request. */
void ps__tcp_check(struct ps_tcp *t)
{
#ifdef ES_DEBUG
	static int refs[MAX_SEGS];
	memset(refs, 0, sizeof(refs));
	int strangers = 0;
	for (int i = 0; i < MAX_CONNS; i++) {
		const struct conn *c = &t->conns[i];
		BASE_INVARIANT("a free slot holds nothing", c->used || (!c->h && !c->out && !c->nh && !c->inflight));
		if (!c->used)
			continue;
		BASE_INVARIANT("in_off <= in_len <= RECV_BUF", c->in_off <= c->in_len && c->in_len <= RECV_BUF);
		BASE_INVARIANT("out_sent <= out_len <= OUT_CAP, out allocated once it holds a reply",
			       c->out_sent <= c->out_len && c->out_len <= OUT_CAP && (c->out || !c->out_len));
		BASE_INVARIANT("inflight >= 0", c->inflight >= 0);
		for (int k = 0; k < c->nh; k++) {
			if (!c->h[k].e)
				continue;
			BASE_INVARIANT("every handle names a segment slot", c->h[k].seg >= 0 && c->h[k].seg < MAX_SEGS);
			refs[c->h[k].seg]++;
		}
		if (c->authed || c->dead)
			continue;
		strangers++;
		int mine = 0;
		for (int j = 0; j < MAX_CONNS; j++)
			mine += t->conns[j].used && !t->conns[j].authed && !t->conns[j].dead && t->conns[j].who == c->who;
		BASE_INVARIANT("strangers of one client at most MAX_PREAUTH_WHO", mine <= MAX_PREAUTH_WHO);
	}
	BASE_INVARIANT("strangers at most MAX_PREAUTH", strangers <= MAX_PREAUTH);
	pthread_mutex_lock(&t->lock);
	for (int g = 0; g < MAX_SEGS; g++) {
		BASE_INVARIANT("a segment's refs is the number of handles that name it", t->segs[g].refs == refs[g]);
		BASE_INVARIANT("a handle's segment has a server", !refs[g] || t->segs[g].srv);
	}
	pthread_mutex_unlock(&t->lock);
#else
	(void)t;
#endif
}

/* The slot is freed once the kernel has given back every buffer of it. */
static void reap(struct ps_tcp *t, int i)
{
	struct conn *c = &t->conns[i];
	if (!c->used || !c->dead || c->inflight)
		return;
	close(c->fd);
	for (int k = 0; k < c->nh; k++)
		if (c->h[k].e)
			ps__seg_put(t, &c->h[k]);
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

/* Keeps refused connection fd for LINGER_MS before it is closed, the
 * oldest kept closed if there is no room: refused at once, a flood would
 * only come again at once, as often as it can; kept, it waits. */
static void linger(struct ps_tcp *t, int fd)
{
	int k = t->next_linger++ % LINGER;
	if (t->lingering[k].until_ms)
		close(t->lingering[k].fd);
	t->lingering[k].fd = fd;
	t->lingering[k].until_ms = ps__tcp_now_ms() + LINGER_MS;
}

static void let_go(struct ps_tcp *t, bool all)
{
	int64_t now = ps__tcp_now_ms();
	for (int k = 0; k < LINGER; k++)
		if (t->lingering[k].until_ms && (all || t->lingering[k].until_ms <= now)) {
			close(t->lingering[k].fd);
			t->lingering[k].until_ms = 0;
		}
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
		c->sent_ms = ps__tcp_now_ms();
}

/* Room for a reply of `len` payload bytes at the end of the queue. */
/* Whether c's HELLO, whole in its reader, waits before its secret is
 * looked at (the guard's policy: guard.c). */
static bool hold_hello(struct ps_tcp *t, struct conn *c)
{
	if (c->authed || !t->secret_len || c->rd.h.op != PSW_HELLO)
		return false;
	int64_t now = ps__tcp_now_ms(), ms = ps_guard_hold(t->guard, c->who, now);
	if (!ms)
		return false;
	c->held = true;
	c->held_ms = now + ms;
	atomic_fetch_add(&t->held, 1);
	return true;
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
		if (rc == 1 && hold_hello(t, c))
			break; /* kept whole in the reader: the tick serves it */
		if (rc < 0 || (rc == 1 && !ps__serve(t, c, &c->rd.h, c->rd.payload))) {
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
		c->frame_ms = ps__tcp_now_ms();
	arm_send(t, i);
	if (!c->paused && !c->held && !c->closing && !c->dead)
		arm(t, i, EV_RECV);
}

/* The HELLO held is served now: its secret looked at, and what came after
 * it read on. */
static void release(struct ps_tcp *t, int i)
{
	struct conn *c = &t->conns[i];
	c->held = false;
	if (!ps__serve(t, c, &c->rd.h, c->rd.payload)) {
		drop(t, i, &t->bad);
		return;
	}
	atomic_fetch_add(&t->frames, 1);
	c->rd.max = c->authed ? 0 : HELLO_MAX;
	pump(t, i);
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
	c->last_ms = ps__tcp_now_ms();
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
	c->sent_ms = c->last_ms = ps__tcp_now_ms();
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
	int64_t now = ps__tcp_now_ms();
	for (int i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &t->conns[i];
		if (!c->used || c->dead)
			continue;
		if (c->held) {
			if (now >= c->held_ms)
				release(t, i);
			continue;
		}
		if ((!c->authed && now - c->since_ms >= t->idle_ms) ||
		    (partial(&c->rd) && !c->paused && now - c->frame_ms >= t->idle_ms) ||
		    (c->sending && now - c->sent_ms >= t->idle_ms))
			drop(t, i, &t->slow);
	}
	let_go(t, false);
	if (t->serve_shm && ++t->ticks % 8 == 0)
		ps__segs_sweep(t);
	ps__tcp_check(t);
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
	int64_t now = ps__tcp_now_ms();
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

/* The stranger to drop for a newcomer from who: the oldest of whoever
 * has the most strangers, the newcomer counted; -1 if there are none.
 * *strangers: how many there are; *mine: how many are who's. */
static int crowd_victim(const struct ps_tcp *t, uint64_t who, int *strangers, int *mine)
{
	int victim = -1, most = 0;
	*strangers = *mine = 0;
	for (int j = 0; j < MAX_CONNS; j++) {
		const struct conn *o = &t->conns[j];
		if (!o->used || o->authed || o->dead)
			continue;
		++*strangers;
		*mine += o->who == who;
		int n = o->who == who;
		for (int k = 0; k < MAX_CONNS; k++)
			n += t->conns[k].used && !t->conns[k].authed && !t->conns[k].dead &&
			     t->conns[k].who == o->who;
		if (n > most || (n == most && o->seq < t->conns[victim].seq))
			victim = j, most = n;
	}
	return victim;
}

static void on_accept(struct ps_tcp *t, int res)
{
	if (res < 0)
		return;
	long uid;
	uint64_t who = ps_peer_who(res, &uid);
	if (uid == -2) {
		close(res); /* gone before we looked */
		return;
	}
	int k = MAX_CONNS, strangers, mine;
	for (int j = MAX_CONNS - 1; j >= 0; j--)
		if (!t->conns[j].used)
			k = j;
	int oldest = crowd_victim(t, who, &strangers, &mine);
	if (mine >= MAX_PREAUTH_WHO) { /* its share taken by its own: nobody else's is */
		linger(t, res);
		atomic_fetch_add(&t->refused, 1);
		return;
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
	c->who = who;
	c->used = true;
	c->since_ms = c->last_ms = ps__tcp_now_ms();
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
				if (!accepting && !stop) /* out of fds a while ago: accept again */
					accepting = arm_accept(t);
			} else if (ev == EV_ACCEPT) {
				on_accept(t, res), ps__tcp_check(t);
				if (res == -EMFILE || res == -ENFILE)
					let_go(t, true); /* the refused ones' fds first */
				/* a multishot ends on errors; out of fds, it waits for the
				 * tick, not to spin on a listener that stays readable */
				if (!(cqe->flags & IORING_CQE_F_MORE))
					accepting = !stop && res != -EMFILE && res != -ENFILE && arm_accept(t);
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
	let_go(t, true);
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
	int rc = ps_guard_create(&t->guard);
	if (rc)
		goto fail;
	if (a && a->secret_file && (rc = ps_secret_read(a->secret_file, t->secret, &t->secret_len, NULL, 0)))
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
	ps_guard_destroy(t->guard);
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
	c->held = atomic_load(&t->held);
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
	ps_guard_destroy(t->guard);
	free(t);
}
