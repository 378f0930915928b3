/* remote.h - what the client side of the wire protocol shares: connections, remote segments and elements. */
#ifndef PASTSET_REMOTE_H
#define PASTSET_REMOTE_H

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

/* conn.c: the pool of connections, one per address, and calls on them.
 * A call is ps__conn_lock, then ps__call (or ps__send_req and
 * ps__recv_rep), then unlocking c->lock. */
int ps__conn_get(const char *addr, int port, const struct ps_remote_attr *a,
		 struct ps__rconn **out);
void ps__conn_put(struct ps__rconn *c);
void ps__conn_hold(struct ps__rconn *c); /* one more user of c, which ps__conn_put ends */
void ps__conn_lock(struct ps__rconn *c);
/* 0, or PS_ELOST when a broken connection cannot be opened again yet */
int ps__conn_ready(struct ps__rconn *c);
int ps__call(struct ps__rconn *c, uint16_t op, const void *q, size_t qlen, size_t *rlen);
int ps__send_req(struct ps__rconn *c, uint16_t op, const void *payload, size_t len,
		 uint64_t deadline);
int ps__recv_rep(struct ps__rconn *c, uint16_t op, uint32_t tag, size_t *rlen, uint64_t deadline);

/* remote.c: the element's handle on the connection as it is now (opened
 * again after a reconnect); the caller holds the connection's lock. */
int ps__relem_ready(ps_elem *e);

/* layout.c: a tuple that arrived in the server's order, put in ours if the
 * element's layout says how. */
void ps__to_ours(const struct ps__relem *re, unsigned char *t);

#endif
