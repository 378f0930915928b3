/* remote.c - segments and elements on a tuple server elsewhere: the client side of each operation, behind the ordinary ps_ calls. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remote.h"

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
	if ((rc = ps__conn_get(addr, port, a, &rs->c))) {
		free(rs);
		return rc;
	}
	unsigned char q[PSW_NAME];
	struct psw_attach_rep r;
	size_t len;
	ps__conn_lock(rs->c);
	rc = ps__call(rs->c, PSW_ATTACH, q, psw_name_put(q, segment), &len);
	if (!rc && !(rc = psw_attach_rep_get(rs->c->buf, len, &r)) && !(rc = r.status)) {
		rs->count = r.count;
		rs->state = r.state;
		memcpy(rs->user, r.area, PS_USER_AREA);
	}
	pthread_mutex_unlock(&rs->c->lock);
	if (rc) {
		ps__conn_put(rs->c);
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
		ps__conn_put(rs->c);
		free(rs);
	}
	return rc;
}

static void r_server_close(ps_server *s)
{
	struct ps__rseg *rs = ps__server_impl(s);
	if (!rs)
		return;
	ps__conn_put(rs->c);
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
	ps__conn_lock(rs->c);
	int rc = ps__call(rs->c, PSW_NAMES, q, psw_names_req_put(q, &nq), &len);
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
	int rc = ps__conn_get(addr, port, a, &c);
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
		ps__conn_lock(c);
		rc = ps__call(c, PSW_LIST, q, psw_names_req_put(q, &nq), &len);
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
	ps__conn_put(c);
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
	int rc = ps__call(c, PSW_OPEN, q, psw_open_req_put(q, &oq), &len);
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
int ps__relem_ready(ps_elem *e)
{
	struct ps__relem *re = e->remote;
	int rc = ps__conn_ready(re->c);
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
	int rc = ps__relem_ready(e);
	if (rc) {
		re->c->unsent = true; /* whatever opening sent, this was not */
		return rc;
	}
	psw_handle_put(q, re->handle);
	rc = ps__call(re->c, op, q, qlen, len);
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
	ps__conn_lock(c);
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
	ps__conn_hold(c);
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
	ps__conn_lock(re->c);
	/* best effort, and only on the connection it was opened on: the
	 * server frees every handle at disconnect anyway */
	if (!re->c->broken && re->gen == re->c->gen)
		ps__call(re->c, PSW_CLOSE, q, qlen, &len);
	pthread_mutex_unlock(&re->c->lock);
	ps__conn_put(re->c);
	free(re->cache);
	free(re);
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
	ps__conn_lock(re->c);
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
			ps__to_ours(re, out);
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
	w->at = base_deadline_ns(timeout_ms);
}

/* Sleeps before the next try; false when the time is up. */
static bool poll_again(struct poll_wait *w)
{
	if (w->now || base_now_ns() >= w->at)
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
		ps__conn_lock(re->c);
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
	ps__conn_lock(re->c);
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
			ps__to_ours(re, t);
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
	ps__conn_lock(re->c);
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
	ps__conn_lock(re->c);
	int rc = ecall((ps_elem *)e, PSW_NOTES, q, PSW_HANDLE_LEN, &len);
	if (!rc && !(rc = psw_notes_rep_get(re->c->buf, len, &r)))
		rc = r.status;
	for (unsigned w = 0; w < PS_NOTE_WORDS; w++)
		out[w] = rc ? 0 : r.words[w];
	pthread_mutex_unlock(&re->c->lock);
	return rc;
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
