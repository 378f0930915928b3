/* messages.c - a recording's messages: each send paired with its receive by the numbers both ends carry, never by what happens to be recorded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

/*
 * collectors.h ("Messages' numbers", "Reading the numbers") says what the
 * collector writes and how every reader joins a message's two ends: each
 * thread's ends are read in the order the thread wrote them, with the
 * communicator as every rank names it (its id), and ends of equal key are
 * one message, as the live readers (monitors/waitlive.c, view.c) join
 * them.  An end without a key (one whose mark was lost, with tuples lost
 * or a recorder that came late; its thread had no memory for the
 * channel; a channel two threads of a rank used, whose numbers are each
 * thread's) is alone: never paired by guess.  Having the whole run, an
 * archive also un-keys the ends a channel's first thread made before a
 * second came (a live reader has paired those already).
 *
 * An archive made before messages were numbered has neither flags nor
 * marks: its ends are paired by order, the k-th send on a channel with
 * the k-th receive, as MPI pairs them when every end was recorded.
 */

struct end {
	uint64_t link; /* the channel, sends and receives alike (es_msg_end) */
	uint64_t key;  /* the message's, 0 when it has none to be paired by */
	uint64_t start;
	uint32_t thread, event;
	uint8_t recv, numbered, shared;
};

static int cmp(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* a channel's ends by thread, to find channels two threads used */
static int by_side(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
	int c = cmp(x->link, y->link);
	c = c ? c : cmp(x->recv, y->recv);
	return c ? c : cmp(x->thread, y->thread);
}

/* an archive without numbers: a channel's sends, then its receives, each by time */
static int by_order(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
	int c = cmp(x->link, y->link);
	c = c ? c : cmp(x->recv, y->recv);
	c = c ? c : cmp(x->start, y->start);
	return c ? c : cmp(x->event, y->event);
}

/* Every message end of the ranks' threads, read in its thread's order
 * (the marks taken in); whether any is numbered.  -ENOMEM as (size_t)-1. */
static size_t gather(const ar_archive *a, struct end *v, bool *numbered, uint64_t *unnumbered)
{
	const struct ar_event *ev = ar_events(a);
	size_t n = 0, none = 0;
	es_numr *r;
	if (es_numr_create(&r))
		return (size_t)-1;
	*numbered = false;
	for (int t = 0; t < ar_nthreads(a); t++) {
		int rank = ar_thread(a, t)->rank;
		const uint32_t *idx;
		size_t ne = ar_thread_events(a, t, &idx);
		for (size_t i = 0; i < ne && rank >= 0; i++) {
			const struct es_trace *e = &ev[idx[i]].t;
			const struct ar_comm *c = e->comm == ES_COMM_NONE ? NULL : ar_comm(a, e->comm);
			/* its id, as live readers name it; failing that its number in the archive */
			uint64_t comm = c ? c->id : 1ull << 63 | e->comm;
			struct es_msg_end m;
			int rc = es_numr_read(r, (uint32_t)t, rank, comm, e, &m);
			if (rc < 0) {
				es_numr_destroy(r);
				return (size_t)-1;
			}
			if (rc == ES_NUMR_MARK || rc == ES_NUMR_NOT)
				continue;
			struct end x = { .link = m.link, .key = rc ? 0 : m.key, .start = e->start, .thread = (uint32_t)t,
					 .event = idx[i], .recv = m.recv, .numbered = !!(e->op & ES_OP_NUMBERED),
					 .shared = rc == ES_NUMR_SHARED };
			*numbered |= x.numbered;
			none += rc == ES_NUMR_NONE;
			v[n++] = x;
		}
	}
	es_numr_destroy(r);
	*unnumbered = *numbered ? none : 0; /* an archive made before numbers pairs by order */
	return n;
}

/* A channel whose sends (or receives) two threads of a rank made has
 * each thread's numbers: none of its ends is paired. */
static void unshare(struct ar_msgs *m, struct end *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_side);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		bool shared = false;
		for (; j < n && v[j].link == v[i].link && v[j].recv == v[i].recv; j++)
			shared |= v[j].thread != v[i].thread;
		for (size_t k = i; k < j && shared; k++) {
			m->shared += v[k].key || v[k].shared;
			v[k].key = 0;
		}
		i = j;
	}
}

static void pair(struct ar_msgs *m, const struct end *s, const struct end *r)
{
	m->other[s->event] = r->event;
	m->other[r->event] = s->event;
	m->pairs++;
}

/* Ends of equal key, a send and a receive: one message.  In one pass
 * through a table of the keys (an archive's ends are in the millions: no
 * sort), each key keeping its earliest send and earliest receive (by
 * start, then event); any more of either stay alone.  A slot holds its
 * ends' events and starts, so that the pass over the table that pairs
 * them reads nothing else (the ends, in the table's order, would be a
 * cache miss each). */
struct kside {
	uint64_t start;
	uint32_t event; /* UINT32_MAX: none yet */
};
struct kslot {
	struct kside send, recv;
};
static bool earlier(const struct end *x, const struct kside *y)
{
	return x->start != y->start ? x->start < y->start : x->event < y->event;
}
static int pair_keyed(struct ar_msgs *m, const struct end *v, size_t n)
{
	struct base_tab t;
	base_tab_init(&t, sizeof(struct kslot));
	if (base_tab_reserve(&t, n / 2 + 1) < 0) /* a send and a receive a key, mostly */
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].key)
			continue;
		bool fresh;
		struct kslot *k = base_tab_put(&t, v[i].key, &fresh);
		if (!k) {
			base_tab_free(&t);
			return -ENOMEM;
		}
		if (fresh)
			k->send.event = k->recv.event = UINT32_MAX;
		struct kside *side = v[i].recv ? &k->recv : &k->send;
		if (side->event == UINT32_MAX || earlier(&v[i], side))
			*side = (struct kside){ v[i].start, v[i].event };
	}
	struct kslot *k;
	for (size_t at = 0; (k = base_tab_next(&t, &at, NULL));)
		if (k->send.event != UINT32_MAX && k->recv.event != UINT32_MAX) {
			m->other[k->send.event] = k->recv.event;
			m->other[k->recv.event] = k->send.event;
			m->pairs++;
		}
	base_tab_free(&t);
	return 0;
}

/* The k-th send on a channel with its k-th receive. */
static void pair_ordered(struct ar_msgs *m, const struct end *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t r = i, j;
		while (r < n && v[r].link == v[i].link && !v[r].recv)
			r++;
		for (j = r; j < n && v[j].link == v[i].link; j++)
			if (i + (j - r) < r)
				pair(m, &v[i + (j - r)], &v[j]);
		i = j;
	}
}

int ar_msgs_match(const ar_archive *a, struct ar_msgs *m)
{
	size_t ne = ar_nevents(a);
	memset(m, 0, sizeof(*m));
	m->other = malloc(sizeof(*m->other) * (ne + 1));
	struct end *v = malloc(sizeof(*v) * (ne + 1));
	if (!m->other || !v) {
		free(v);
		ar_msgs_free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++)
		m->other[i] = AR_MSG_NOT;
	size_t n = gather(a, v, &m->numbered, &m->unnumbered);
	if (n == (size_t)-1) {
		free(v);
		ar_msgs_free(m);
		return -ENOMEM;
	}
	if (m->numbered) {
		bool shared = false;
		for (size_t i = 0; i < n && !shared; i++)
			shared = v[i].shared;
		if (shared)
			unshare(m, v, n); /* rare (threads of a rank on one channel): a sort only then */
		if (pair_keyed(m, v, n)) {
			free(v);
			ar_msgs_free(m);
			return -ENOMEM;
		}
	} else {
		qsort(v, n, sizeof(*v), by_order);
		pair_ordered(m, v, n);
	}
	for (size_t i = 0; i < n; i++) {
		if (m->other[v[i].event] != AR_MSG_NOT)
			continue;
		m->other[v[i].event] = AR_MSG_ALONE;
		*(v[i].recv ? &m->recvs_alone : &m->sends_alone) += 1;
	}
	free(v);
	return 0;
}

void ar_msgs_free(struct ar_msgs *m)
{
	free(m->other);
	m->other = NULL;
}

size_t ar_msgs_said(const struct ar_msgs *m, char *buf, size_t len)
{
	if (!m->sends_alone && !m->recvs_alone)
		return (size_t)snprintf(buf, len, "%s", "");
	size_t k = (size_t)snprintf(buf, len, "%llu sends and %llu receives without their other end "
				    "(not recorded: a pause, a collect list, a recorder that lost or came late)",
				    (unsigned long long)m->sends_alone, (unsigned long long)m->recvs_alone);
	if (m->unnumbered && k < len)
		k += (size_t)snprintf(buf + k, len - k, "; %llu of them had no number to be paired by",
				      (unsigned long long)m->unnumbered);
	if (m->shared && k < len)
		k += (size_t)snprintf(buf + k, len - k, "; %llu on channels two threads of a rank used, "
				      "whose numbers are each thread's", (unsigned long long)m->shared);
	return k;
}
