/* tcp.h - what the tuple server's files share: its connections, segments and limits (tcp.c runs the loop). */
#ifndef PASTSET_TCP_H
#define PASTSET_TCP_H

#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

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
/* connections not yet let in (HELLO not said, or held), at most: past
 * that the oldest of whoever has the most goes, so strangers can never
 * keep out a client that knows the secret (which says HELLO as soon as it
 * connects), nor one user's strangers another's; and of one client (a
 * user on loopback, an address elsewhere) at most MAX_PREAUTH_WHO, past
 * which its newcomers are refused: kept LINGER_MS, then closed, so that a
 * flood from one client takes nobody else's room and waits for its
 * answers instead of coming again as fast as it can */
#define MAX_PREAUTH 16
#define MAX_PREAUTH_WHO 8
#define LINGER 64
#define LINGER_MS 1000
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
	ps_server *own; /* a control element's writable mapping of a read-only segment, or NULL */
};

struct conn {
	int fd;
	uint64_t who;     /* who it is (ps_peer_who): the key of the guard and of fairness */
	bool used, authed, closing, sending, dead;
	bool held;        /* its HELLO waits, unread, until held_ms (the guard) */
	int64_t held_ms;
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

/*
 * The server's invariants, checked at every tick in the debug builds
 * (ps__tcp_check, tcp.c), as SQLite's pager checks its states:
 *  - a connection's received bytes: in_off <= in_len <= RECV_BUF; its
 *    replies: out_sent <= out_len <= OUT_CAP, out allocated (at its first
 *    reply, once) whenever it holds one; inflight >= 0 (its slot stays until the kernel gave back
 *    every buffer); a free slot holds nothing (fd, handles, replies);
 *  - every handle names a segment slot (0 <= seg < MAX_SEGS) that has a
 *    server;
 *  - a segment's refs is the number of handles, of every connection,
 *    that name it: a segment retired goes exactly when its last handle
 *    does, never while one is left;
 *  - strangers (connections not let in, not being dropped) number at most
 *    MAX_PREAUTH, and those of one client at most MAX_PREAUTH_WHO.
 */
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
	_Atomic uint64_t accepted, frames, bad, refused, slow, held;
	/* Guessers of the secret slowed (guard.c), the loop thread's alone:
	 * a HELLO it says to hold waits, its secret unread, until released
	 * by the tick; at most MAX_PREAUTH connections are strangers. */
	ps_guard *guard;
	struct {
		int fd;
		int64_t until_ms; /* 0: a free place */
	} lingering[LINGER]; /* refused connections, kept a while (the loop thread's) */
	unsigned next_linger;
};
/* tcp.h's invariants checked (the debug builds; nothing in the others).
 * The loop thread's, or a server no thread runs. */
void ps__tcp_check(struct ps_tcp *t);

/* The loop's clock, in ms (base_now_ns'). */
static inline int64_t ps__tcp_now_ms(void)
{
	return (int64_t)(base_now_ns() / 1000000u);
}

/* tcp_serve.c: room for a reply of len payload bytes at the end of c's
 * queue, its header written and its payload zeroed; NULL if there is none. */
unsigned char *ps__tcp_reply(struct conn *c, uint16_t op, uint32_t tag, size_t len);

/* tcp_segs.c: the segments served, opened on first use and kept while used */
bool ps__serves_shm(const struct ps_tcp *t, const char *name);
/* The server of segment name, and its slot; an error code if it is not served. */
int ps__find_seg(struct ps_tcp *t, const char *name, ps_server **srv, int *slot);
bool ps__is_added(struct ps_tcp *t, const char *name);
/* A handle of segment slot i closes. */
void ps__seg_put(struct ps_tcp *t, struct handle *h); /* closes it, and its segment when retired and unused */
/* Unmaps segments no client has used for SEG_IDLE_MS. */
void ps__segs_sweep(struct ps_tcp *t);
/* LIST: names of segments, a page at a time */
struct listing {
	struct ps_tcp *t;
	const char *prefix;
	uint32_t first, total, n;
	unsigned char *out;
};
void ps__list_put(struct listing *l, const char *name);
int ps__list_one(const char *name, void *arg); /* for ps_shm_list */

/* tcp_serve.c: serves one request; false closes the connection as malformed */
bool ps__serve(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h, const unsigned char *in);

/* tcp_peer.c: the uid owning the other end of a loopback connection; -1 if
 * the kernel cannot say, -2 if the client closed before we looked */
long ps__peer_uid(int fd);

#endif
