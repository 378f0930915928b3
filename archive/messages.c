/* messages.c - a recording's messages: each send paired with its receive by the numbers both ends carry, never by what happens to be recorded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

/*
 * collectors.h ("Messages' numbers") says what the collector writes: a
 * message end's number on its channel in its tuple, whole while small,
 * else read from the channel's latest mark (es_num_of).  Here each
 * thread's channels are read in the order the thread wrote them; ends with
 * equal (channel, number) are one message.  An end without a number (one
 * whose mark was lost, with tuples lost or a recorder that came late; its
 * thread had no memory for the channel; a channel two threads of a rank
 * used, whose numbers are each thread's) is alone: never paired by guess.
 *
 * An archive made before messages were numbered has neither flags nor
 * marks: its ends are paired by order, the k-th send on a channel with
 * the k-th receive, as MPI pairs them when every end was recorded.
 */

#define NUM_NONE UINT64_MAX

struct end {
	uint32_t from, to, tag, thread, event;
	uint16_t comm;
	uint8_t recv, numbered;
	uint64_t num; /* its number on its channel, NUM_NONE when it has none to be paired by */
	uint64_t start;
};

static int cmp(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

static int key_cmp(const struct end *x, const struct end *y)
{
	int c = cmp(x->from, y->from);
	c = c ? c : cmp(x->to, y->to);
	c = c ? c : cmp(x->comm, y->comm);
	return c ? c : cmp(x->tag, y->tag);
}

/* a channel's ends by thread, to find channels two threads used */
static int by_side(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
	int c = key_cmp(x, y);
	c = c ? c : cmp(x->recv, y->recv);
	return c ? c : cmp(x->thread, y->thread);
}

/* a channel's messages by number, the send before the receive */
static int by_number(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
	int c = key_cmp(x, y);
	c = c ? c : cmp(x->num, y->num);
	c = c ? c : cmp(x->recv, y->recv);
	return c ? c : cmp(x->start, y->start);
}

/* an archive without numbers: a channel's sends, then its receives, each by time */
static int by_order(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
	int c = key_cmp(x, y);
	c = c ? c : cmp(x->recv, y->recv);
	c = c ? c : cmp(x->start, y->start);
	return c ? c : cmp(x->event, y->event);
}

static uint64_t chan_of(const struct end *e)
{
	return ps_hash_fold(ps_hash_fold(ps_hash_fold(ps_hash_fold(ps_hash_fold(PS_HASH_SEED, e->from), e->to), e->tag),
					 e->comm), e->recv);
}

/* Every message end of the ranks' threads, numbered as it comes in its
 * thread's order (the marks taken in: collectors.h's reader); whether any
 * is numbered.  -ENOMEM as (size_t)-1. */
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
			if (es_is_group_mark(e->op))
				continue; /* a window's epoch's member, no channel's */
			bool mark = es_is_mark(e->op);
			int dir = mark ? (e->op & ES_OP_RECV ? -1 : 1) : es_message(e->op);
			if (!dir || e->element == ES_NONE)
				continue;
			struct end x = { .from = dir > 0 ? (uint32_t)rank : e->element,
					 .to = dir > 0 ? e->element : (uint32_t)rank, .tag = e->arg, .thread = (uint32_t)t,
					 .event = idx[i], .comm = e->comm, .recv = dir < 0,
					 .numbered = mark || (e->op & ES_OP_NUMBERED), .num = NUM_NONE, .start = e->start };
			*numbered |= x.numbered;
			int rc = x.numbered ? es_numr_end(r, (uint32_t)t, chan_of(&x), e, &x.num) : ES_NUMR_NONE;
			if (rc < 0) {
				es_numr_destroy(r);
				return (size_t)-1;
			}
			if (rc == ES_NUMR_MARK)
				continue;
			if (rc) {
				x.num = NUM_NONE;
				none++;
			}
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
		for (; j < n && !key_cmp(&v[j], &v[i]) && v[j].recv == v[i].recv; j++)
			shared |= v[j].thread != v[i].thread;
		for (size_t k = i; k < j && shared; k++) {
			m->shared += v[k].num != NUM_NONE;
			v[k].num = NUM_NONE;
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

/* Ends of equal channel and number, a send and a receive: one message. */
static void pair_numbered(struct ar_msgs *m, const struct end *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !key_cmp(&v[j], &v[i]) && v[j].num == v[i].num)
			j++;
		/* sorted: a send first, then a receive; any more of either
		 * (serials alike in their low 16 bits) stay alone */
		if (v[i].num != NUM_NONE && j - i >= 2 && !v[i].recv && v[i + 1].recv)
			pair(m, &v[i], &v[i + 1]);
		i = j;
	}
}

/* The k-th send on a channel with its k-th receive. */
static void pair_ordered(struct ar_msgs *m, const struct end *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t r = i, j;
		while (r < n && !key_cmp(&v[r], &v[i]) && !v[r].recv)
			r++;
		for (j = r; j < n && !key_cmp(&v[j], &v[i]); j++)
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
		unshare(m, v, n);
		qsort(v, n, sizeof(*v), by_number);
		pair_numbered(m, v, n);
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
