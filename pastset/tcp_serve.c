/* tcp_serve.c - the tuple server's requests: one handler per operation of the wire protocol, from a table. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

#include "tcp.h"

/* --- replies: queued on the connection, sent by the loop (tcp.c's on_send) --------------- */

unsigned char *ps__tcp_reply(struct conn *c, uint16_t op, uint32_t tag, size_t len)
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

static int new_handle(struct conn *c, ps_elem *e, bool writable, int seg, ps_server *own, uint32_t *k)
{
	for (int i = 0; i < c->nh; i++)
		if (!c->h[i].e) {
			c->h[i] = (struct handle){ e, writable, seg, own };
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
	c->h[c->nh] = (struct handle){ e, writable, seg, own };
	*k = (uint32_t)c->nh++;
	return 0;
}

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
	ok = ok && ps_secret_equal(t->secret, t->secret_len, (const char *)q.secret, q.secret_len);
	if (t->secret_len)
		ps_guard_note(t->guard, c->who, ok, ps__tcp_now_ms());
	/* Without a secret, only on loopback, and only for our own user (or
	 * root): a segment is 0600, and so is what serves it.  Looked at
	 * here, not at accept, so that the one refused is told why. */
	if (ok && !t->secret_len) {
		long uid = ps__peer_uid(c->fd);
		if (uid == -2)
			return false; /* reset before we looked: nothing to refuse */
		ok = uid == (long)geteuid() || uid == 0;
	}
	if (!(o = ps__tcp_reply(c, h->op, h->tag, PSW_HELLO_REP_LEN)))
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
	int slot, rc = ps__find_seg(t, name, &srv, &slot);
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_ATTACH_REP_LEN);
	if (!o)
		return false;
	int count = rc ? 0 : ps_server_count(srv);
	if (!rc && count < 0)
		rc = count;
	/* an added server lives as long as we serve it; a segment says */
	struct ps_shm_info info = { .state = PS_SHM_LIVE };
	if (!rc && ps__serves_shm(t, name) && !ps__is_added(t, name))
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
	int slot, rc = ps__find_seg(t, q.name, &srv, &slot);
	int total = rc ? 0 : ps_server_count(srv);
	if (total < 0)
		rc = total, total = 0;
	uint32_t k = q.first < (uint32_t)total ? (uint32_t)total - q.first : 0;
	if (k > PSW_LIST_MAX)
		k = PSW_LIST_MAX;
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_NAMES_REP_LEN + (size_t)k * PSW_NAME);
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
			ps__list_put(&l, t->segs[i].name);
	pthread_mutex_unlock(&t->lock);
	int rc = t->serve_shm ? ps_shm_list(ps__list_one, &l) : 0;
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_NAMES_REP_LEN + (size_t)l.n * PSW_NAME);
	if (o) {
		struct psw_names_rep r = { rc, l.total, l.n };
		memcpy(o + psw_names_rep_put(o, &r), names, (size_t)l.n * PSW_NAME);
	}
	free(names);
	return o != NULL;
}

/* A write asked of a segment served read-only: allowed to a control
 * element (PS_CONTROL: whoever may watch the job may steer it), through a
 * writable mapping of the segment that goes with the handle. */
static int open_control(struct ps_tcp *t, const struct psw_open_req *q, ps_server *srv, ps_server **own,
			ps_elem **e)
{
	ps_elem *ro;
	struct ps_stats st;
	int rc = ps_elem_open(srv, q->element, q->tuple_size, &ro);
	if (rc)
		return rc;
	rc = ps_elem_stats(ro, &st);
	ps_elem_close(ro);
	if (rc || !(st.flags & PS_CONTROL) || !ps__serves_shm(t, q->segment))
		return rc ? rc : PS_EROFS;
	if ((rc = ps_server_open_shm(q->segment, PS_RDWR | PS_NOWAIT, own)))
		return rc;
	if ((rc = ps_elem_open(*own, q->element, q->tuple_size, e))) {
		ps_server_destroy(*own);
		*own = NULL;
	}
	return rc;
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
	ps_server *own = NULL;
	bool ro = false;
	int slot, rc = ps__find_seg(t, q.segment, &srv, &slot);
	if (!rc && wr) {
		pthread_mutex_lock(&t->lock);
		ro = !t->segs[slot].writable;
		pthread_mutex_unlock(&t->lock);
	}
	if (!rc && ro)
		rc = open_control(t, &q, srv, &own, &e); /* else PS_EROFS, said at once */
	else if (!rc)
		rc = ps_elem_open(srv, q.element, q.tuple_size, &e);
	if (!rc && (rc = new_handle(c, e, wr, slot, own, &r.handle))) {
		ps_elem_close(e);
		ps_server_destroy(own);
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
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_OPEN_REP_LEN);
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
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_TIME_LEN);
	return o && psw_time_put(o, base_now_ns());
}

static bool on_close(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	uint32_t k = UINT32_MAX;
	psw_handle_get(in, h->length, &k);
	int rc = PSW_EBADH;
	if (k < (uint32_t)c->nh && c->h[k].e) {
		ps__seg_put(t, &c->h[k]);
		rc = 0;
	}
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_STATUS_LEN);
	return o && psw_status_put(o, rc);
}

static bool on_stats(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h,
		     const unsigned char *in)
{
	(void)t;
	ps_elem *e = handle(c, in, NULL);
	struct ps_stats st = { 0 };
	int rc = e ? ps_elem_stats(e, &st) : PSW_EBADH;
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_STATS_REP_LEN);
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
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_NOTES_REP_LEN);
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
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_TUPLE_REP_LEN + ts);
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
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_RANGE_REP_LEN + want * ts);
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

/* The client as the kernel reports it, for an element that stamps who
 * writes (PS_STAMP_WHO): its address, and on this host its user. */
static const char *peer_text(const struct conn *c, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char addr[INET6_ADDRSTRLEN] = "?";
	if (!getpeername(c->fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
		else if (ss.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
	}
	if ((c->who & PS_WHO_USER) == PS_WHO_USER)
		snprintf(buf, len, "tcp from %s, uid %u", addr, (unsigned)(c->who & 0xffffffffu));
	else
		snprintf(buf, len, "tcp from %s", addr);
	return buf;
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
	char who[PS_WHO_LEN];
	if (!rc) /* never waits: a full flow element says so */
		rc = ps_write_as(e, in + PSW_HANDLE_LEN, peer_text(c, who, sizeof(who)), 0, &r.index);
	unsigned char *o = ps__tcp_reply(c, h->op, h->tag, PSW_TUPLE_REP_LEN);
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
		return (o = ps__tcp_reply(c, h->op, h->tag, PSW_STATUS_LEN)) && psw_status_put(o, PS_E2BIG);
	if (!(o = ps__tcp_reply(c, h->op, h->tag, len)))
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
bool ps__serve(struct ps_tcp *t, struct conn *c, const struct psw_hdr *h, const unsigned char *in)
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
