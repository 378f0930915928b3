/* p2p.c - point-to-point wait states: Late Sender, Late Sender in the wrong order, Late Receiver, judged per completing call in each thread's order. */
#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * Each call that completes message ends (a blocking receive or send,
 * MPI_Sendrecv's receive, a wait or test that completed requests) is
 * queued on its thread with its ends (items).  The queue is judged from
 * its head, in the thread's order, as each call's ends have their other
 * ends: Wrong Order needs the receives of a thread in their order, and a
 * Waitall counts once, for its latest sender.  A call whose other ends
 * do not come blocks its thread's queue until ws_flush gives up on it.
 *
 * Invariants (checked in ES_DEBUG builds):
 *  - l->calls[head ..] are queued, in the thread's order; their items are
 *    l->items[ihead .. committed), each call's contiguous and in order;
 *  - every item holds one use of the message it names (by its index in
 *    w->msgs, where the use keeps it: a message goes only with its last
 *    use); so does every link in l->isends (an Isend's message until its
 *    completion comes).
 */

static uint32_t msg_find(ws *w, uint64_t key)
{
	uint32_t *v = key == ES_EVENT_NO_MSG ? NULL : base_tab_get(&w->msg_ix, key);
	return v ? *v : NIL;
}

static struct msg *msg_at(ws *w, uint32_t i)
{
	return BASE_AT(w->msgs, struct msg, i);
}

static uint32_t msg_make(ws *w, uint64_t key, uint64_t born)
{
	uint32_t i = w->msg_free;
	if (i != NIL) {
		w->msg_free = msg_at(w, i)->next_free;
	} else {
		if (!base_vec_push(&w->msgs))
			return NIL;
		i = (uint32_t)(w->msgs.n - 1);
	}
	if (base_tab_set32(&w->msg_ix, key, i) < 0) {
		msg_at(w, i)->key = ES_EVENT_NO_MSG;
		msg_at(w, i)->next_free = w->msg_free;
		w->msg_free = i;
		return NIL;
	}
	*msg_at(w, i) = (struct msg){ .key = key, .born = born, .from = -1, .to = -1, .from_loc = NIL, .to_loc = NIL,
				      .wait_loc = { NIL, NIL },
				      .next_free = NIL };
	return i;
}

static void msg_drop(ws *w, uint32_t i)
{
	struct msg *m = msg_at(w, i);
	base_tab_del(&w->msg_ix, m->key);
	m->key = ES_EVENT_NO_MSG;
	m->next_free = w->msg_free;
	w->msg_free = i;
}

/* One use of message i given back: freed when nothing more can ask for it. */
static void msg_release(ws *w, uint32_t i)
{
	struct msg *m = msg_at(w, i);
	if (m->uses)
		m->uses--;
	if (!m->uses && m->have_send && m->have_recv)
		msg_drop(w, i);
}

static void drain(ws *w, struct loc *l, uint64_t before);

/* A message's end came: its time (E(S) of a send, E(Q) of a receive),
 * and a use when a call will judge it.  The thread whose call waited for
 * this end is judged on.  *idx: its index, NIL when it has no key or is
 * gone already (both ends came and no call judges it).  0 or -ENOMEM. */
static int end_came(ws *w, const struct es_event *e, bool send, uint64_t t, bool use, uint32_t *idx)
{
	*idx = NIL;
	if (e->msg == ES_EVENT_NO_MSG) {
		w->st.unpaired += e->peer != ES_NONE; /* MPI_PROC_NULL's is no message */
		return 0;
	}
	uint32_t i = msg_find(w, e->msg);
	if (i == NIL && (i = msg_make(w, e->msg, e->end)) == NIL)
		return -ENOMEM;
	struct msg *m = msg_at(w, i);
	if (send)
		m->have_send = true, m->sent = t, m->from = e->rank, m->from_loc = e->loc;
	else
		m->have_recv = true, m->posted = t, m->to = e->rank, m->to_loc = e->loc;
	m->uses += use;
	uint32_t other = m->wait_loc[send ? 0 : 1];
	if (use)
		m->wait_loc[send ? 1 : 0] = e->loc;
	if (!m->uses && m->have_send && m->have_recv) {
		msg_drop(w, i);
		return 0;
	}
	if (other != NIL && other != e->loc)
		drain(w, BASE_AT(w->locs, struct loc, other), 0); /* it holds a use of its own: i stays */
	*idx = msg_at(w, i)->key == e->msg ? i : NIL;
	return 0;
}

static int add_item(struct loc *l, uint32_t msg, bool recv)
{
	struct item *it = base_vec_push(&l->items);
	if (!it)
		return -ENOMEM;
	*it = (struct item){ msg, recv };
	return 0;
}

static bool sync_or_standard(unsigned code)
{
	return code == ES_OP_MPI_SEND || code == ES_OP_MPI_SSEND || code == ES_OP_MPI_ISEND || code == ES_OP_MPI_ISSEND ||
	       code == ES_OP_MPI_START || code == ES_OP_MPI_STARTALL;
}

static int queue(ws *w, struct loc *l, const struct es_event *call, uint64_t at, uint16_t of, bool may_lr)
{
	size_t n = l->items.n - l->committed;
	if (!n)
		return 0;
	struct call *c = base_vec_push(&l->calls);
	if (!c) {
		l->items.n = l->committed; /* its ends are not judged; their uses stay until flushed */
		return -ENOMEM;
	}
	unsigned code = call ? es_op_code(call->op) : 0;
	const struct es_op_info *in = call ? es_op_info(call->op) : NULL;
	*c = (struct call){ .enter = call ? call->start : 0, .leave = call ? call->end : 0, .queued = at,
			    .site = call ? call->site : 0, .first = (uint32_t)l->committed, .n = (uint32_t)n,
			    .op = (uint16_t)code, .of = of == code ? 0 : of, .test = !in || in->kind == ES_KIND_POLL,
			    .may_lr = may_lr, .known = call != NULL };
	l->committed = l->items.n;
	drain(w, l, 0);
	return 0;
}

int ws__p2p(ws *w, struct loc *l, const struct es_event *e)
{
	int dir = es_message(e->op);
	if (!dir)
		return 0;
	unsigned code = es_op_code(e->op);
	enum es_msg kind = es_msg_kind(e->op);
	if (dir > 0) {
		bool blocking = kind == ES_MSG_SEND && (code == ES_OP_MPI_SEND || code == ES_OP_MPI_SSEND);
		uint32_t i;
		int rc = end_came(w, e, true, e->start, blocking || (kind == ES_MSG_ISEND && sync_or_standard(code)), &i);
		if (rc || i == NIL)
			return rc;
		if (kind == ES_MSG_ISEND && sync_or_standard(code)) /* its completion will come in a wait */
			return base_tab_set32(&l->isends, e->start, i) < 0 ? (msg_release(w, i), -ENOMEM) : 0;
		if (!blocking)
			return 0;
		if (add_item(l, i, false) < 0)
			return msg_release(w, i), -ENOMEM;
		return queue(w, l, e, e->end, 0, true);
	}
	/* a receive the call itself completed: MPI_Recv, Mrecv, Sendrecv's */
	uint32_t i;
	int rc = end_came(w, e, false, e->start, true, &i);
	if (rc || i == NIL)
		return rc;
	if (add_item(l, i, true) < 0)
		return msg_release(w, i), -ENOMEM;
	return queue(w, l, e, e->end, 0, false);
}

int ws__p2p_done(ws *w, struct loc *l, const struct es_event *d, const struct es_event *in)
{
	(void)in;
	int dir = es_message(d->op);
	if (dir < 0) { /* a receive request's: posted at its start */
		uint32_t i;
		int rc = end_came(w, d, false, d->start, true, &i);
		if (rc || i == NIL)
			return rc;
		if (add_item(l, i, true) < 0)
			return msg_release(w, i), -ENOMEM;
		l->of = es_op_code(d->op);
		return 0;
	}
	if (es_msg_kind(d->op) != ES_MSG_ISEND_DONE)
		return 0;
	uint32_t *v = base_tab_get(&l->isends, d->start);
	if (!v)
		return 0; /* a buffered or ready send's, or its send was not seen */
	uint32_t i = *v;
	base_tab_del(&l->isends, d->start);
	if (add_item(l, i, false) < 0)
		return msg_release(w, i), -ENOMEM;
	l->of = l->of ? l->of : (uint16_t)es_op_code(d->op);
	l->may_lr = true; /* the link's use is now the item's */
	msg_at(w, i)->wait_loc[1] = d->loc;
	return 0;
}

int ws__p2p_call_end(ws *w, struct loc *l, const struct es_event *call, uint64_t at)
{
	uint16_t of = l->of;
	bool may_lr = l->may_lr;
	l->of = 0, l->may_lr = false;
	return queue(w, l, call, call ? call->end : at, of, may_lr);
}

/* Wrong Order: a receive whose message was sent at `sent` finds the
 * remembered Late Sender waits whose messages were sent later. */
static void wrong_order(ws *w, struct loc *l, uint64_t sent, int32_t from)
{
	if (sent >= l->seen_max)
		return; /* the common case: messages received in the order sent */
	uint32_t n = l->nseen < LSWO_KEEP ? l->nseen : LSWO_KEEP;
	uint64_t max = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct ls_seen *s = &l->seen[k];
		if (s->ns && s->sent <= sent)
			max = s->sent > max ? s->sent : max;
		if (!s->ns || s->sent <= sent)
			continue;
		ws__add(w, WS_LATE_SENDER_WO, l->rank, s->site, s->op, s->of, s->ns);
		ws__add(w, s->from == from ? WS_LSWO_SAME : WS_LSWO_DIFFERENT, l->rank, s->site, s->op, s->of, s->ns);
		s->ns = 0;
	}
	l->seen_max = max;
}

struct verdict {
	uint64_t ls, lr, sent, posted;
	int32_t from;
	uint32_t sender, receiver; /* threads */
};

static void judge_item(ws *w, struct loc *l, const struct call *c, const struct item *it, struct verdict *v)
{
	struct msg *m = msg_at(w, it->msg);
	if (!(it->recv ? m->have_send : m->have_recv)) {
		w->st.unpaired++;
		return;
	}
	if (c->known && c->test)
		w->st.by_test++;
	if (it->recv) {
		w->st.receives++;
		wrong_order(w, l, m->sent, m->from);
		if (!c->known || c->test)
			return;
		uint64_t until = m->sent < c->leave ? m->sent : c->leave;
		w->st.clock_violations += m->sent > c->leave;
		if (until > c->enter && until - c->enter > v->ls)
			v->ls = until - c->enter, v->sent = m->sent, v->from = m->from, v->sender = m->from_loc;
		return;
	}
	w->st.sends++;
	if (!c->known || c->test || !c->may_lr || c->leave <= m->posted)
		return;
	if (m->posted > c->enter && m->posted - c->enter > v->lr)
		v->lr = m->posted - c->enter, v->posted = m->posted, v->receiver = m->to_loc;
}

static void judge(ws *w, struct loc *l, uint32_t loc, const struct call *c)
{
	struct verdict v = { .sender = NIL, .receiver = NIL };
	const struct item *its = BASE_AT(l->items, struct item, c->first);
	for (uint32_t k = 0; k < c->n; k++)
		judge_item(w, l, c, &its[k], &v);
	if (v.ls) {
		ws__wait(w, WS_LATE_SENDER, l, loc, c->site, c->op, c->of, c->enter, v.ls, v.sender, v.sent);
		l->seen[l->nseen++ % LSWO_KEEP] = (struct ls_seen){ v.sent, v.ls, v.from, c->site, c->op, c->of };
		l->seen_max = v.sent > l->seen_max ? v.sent : l->seen_max;
	} else if (v.lr) {
		ws__wait(w, WS_LATE_RECEIVER, l, loc, c->site, c->op, c->of, c->enter, v.lr, v.receiver, v.posted);
	}
	for (uint32_t k = 0; k < c->n; k++) { /* given back; one given up on goes with its last use */
		uint32_t i = its[k].msg;
		msg_release(w, i);
		struct msg *m = msg_at(w, i);
		if (m->key != ES_EVENT_NO_MSG && !m->uses)
			msg_drop(w, i);
	}
}

static bool ready(ws *w, const struct loc *l, const struct call *c)
{
	const struct item *its = BASE_AT(l->items, struct item, c->first);
	for (uint32_t k = 0; k < c->n; k++) {
		const struct msg *m = msg_at(w, its[k].msg);
		if (!(its[k].recv ? m->have_send : m->have_recv))
			return false;
	}
	return true;
}

/* Judges the thread's queue from its head while its calls are ready, or
 * queued before `before` (given up on). */
static void drain(ws *w, struct loc *l, uint64_t before)
{
	while (l->head < l->calls.n) {
		const struct call *c = BASE_AT(l->calls, struct call, l->head);
		if (!ready(w, l, c)) {
			if (c->queued >= before)
				break;
			w->st.given_up += before != UINT64_MAX;
		}
		judge(w, l, (uint32_t)(l - (struct loc *)w->locs.v), c);
		l->ihead = c->first + c->n;
		l->head++;
	}
	BASE_INVARIANT("a thread's queued calls hold the items from ihead to committed",
		     l->head < l->calls.n ? BASE_AT(l->calls, struct call, l->head)->first == l->ihead : l->ihead == l->committed);
	if (l->head == l->calls.n && l->committed == l->items.n) {
		l->head = l->calls.n = 0;
		l->ihead = l->committed = l->items.n = 0;
	} else if (l->head >= 1024 && l->head * 2 >= l->calls.n) {
		size_t drop = l->ihead;
		memmove(l->calls.v, BASE_AT(l->calls, struct call, l->head), (l->calls.n - l->head) * sizeof(struct call));
		l->calls.n -= l->head;
		l->head = 0;
		for (size_t k = 0; k < l->calls.n; k++)
			BASE_AT(l->calls, struct call, k)->first -= (uint32_t)drop;
		memmove(l->items.v, BASE_AT(l->items, struct item, drop), (l->items.n - drop) * sizeof(struct item));
		l->items.n -= drop, l->committed -= drop, l->ihead = 0;
	}
}

void ws__p2p_flush(ws *w, uint64_t before)
{
	for (size_t k = 0; k < w->locs.n; k++) {
		struct loc *l = BASE_AT(w->locs, struct loc, k);
		drain(w, l, before);
		if (before == UINT64_MAX) { /* sends whose completion never came */
			uint32_t *m;
			for (size_t at = 0; (m = base_tab_next(&l->isends, &at, NULL));)
				msg_release(w, *m);
			base_tab_free(&l->isends);
		}
	}
	for (uint32_t i = 0; i < w->msgs.n; i++) {
		struct msg *m = msg_at(w, i);
		if (m->key != ES_EVENT_NO_MSG && !m->uses && m->born < before) {
			w->st.unpaired++; /* an end alone, that no call waits to judge */
			msg_drop(w, i);
		}
	}
}

void ws__p2p_free(ws *w)
{
	base_vec_free(&w->msgs);
	base_tab_free(&w->msg_ix);
}
