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
 * one message, as the live readers (monitors/resolve.c, view/ring.c) join
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
	uint64_t num;  /* with a key: its number on its channel */
	uint64_t start;
	uint32_t thread, event;
	uint32_t chan; /* pair_numbered's: its channel's index */
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
			struct end x = { .link = m.link, .key = rc ? 0 : m.key, .num = m.num, .start = e->start, .thread = (uint32_t)t,
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
	size_t keyed = 0;
	for (size_t i = 0; i < n; i++)
		keyed += v[i].key != 0;
	if (!keyed)
		return 0;
	struct base_tab t;
	base_tab_init(&t, sizeof(struct kslot));
	if (base_tab_reserve(&t, keyed / 2 + 1) < 0) /* a send and a receive a key, mostly */
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

/*
 * The same pairing, by channel: a channel's messages are numbered from
 * one on, so its ends find their slot by number in an array of the
 * channel's own, which the ends (each thread's in its order) fill nearly
 * in order, and the pass that pairs them reads in order too; the table
 * of keys above is a cache miss an end.  A channel whose numbers spread
 * far wider than its ends (a recorder that came and went, bytes nobody
 * should trust) keeps its keys for pair_keyed.  Either way, each message
 * gets its earliest send and earliest receive.
 */
struct chan {
	uint64_t lo, hi; /* the numbers its ends carry */
	size_t ends, base; /* how many; its first slot, SIZE_MAX: too wide for slots */
};
struct nslot {
	uint32_t send, recv; /* indices into the ends, UINT32_MAX: none */
};
static bool before(const struct end *x, const struct end *y)
{
	return x->start != y->start ? x->start < y->start : x->event < y->event;
}
/* Each keyed end's channel, counted and spanned; the slots each gets.
 * The number of slots, or SIZE_MAX for no memory. */
static size_t chans_make(struct end *v, size_t n, struct base_vec *cv)
{
	struct base_tab ix = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (!v[i].key)
			continue;
		bool fresh;
		uint32_t *k = base_tab_put(&ix, v[i].link, &fresh);
		struct chan *c = k && fresh ? base_vec_push(cv) : NULL;
		if (!k || (fresh && !c)) {
			base_tab_free(&ix);
			return SIZE_MAX;
		}
		if (fresh)
			*k = (uint32_t)(cv->n - 1), *c = (struct chan){ .lo = v[i].num, .hi = v[i].num };
		c = BASE_AT(*cv, struct chan, *k);
		c->lo = v[i].num < c->lo ? v[i].num : c->lo;
		c->hi = v[i].num > c->hi ? v[i].num : c->hi;
		c->ends++;
		v[i].chan = *k;
	}
	base_tab_free(&ix);
	size_t slots = 0;
	for (size_t k = 0; k < cv->n; k++) {
		struct chan *c = BASE_AT(*cv, struct chan, k);
		bool dense = c->hi - c->lo < 2 * (uint64_t)c->ends + 64;
		c->base = dense ? slots : SIZE_MAX;
		slots += dense ? (size_t)(c->hi - c->lo + 1) : 0;
	}
	return slots;
}
static int pair_numbered(struct ar_msgs *m, struct end *v, size_t n)
{
	struct base_vec cv = { .size = sizeof(struct chan) };
	size_t ns = chans_make(v, n, &cv);
	struct nslot *sl = ns == SIZE_MAX ? NULL : malloc(sizeof(*sl) * (ns + 1));
	if (!sl) {
		base_vec_free(&cv);
		return -ENOMEM;
	}
	memset(sl, 0xff, sizeof(*sl) * ns);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].key)
			continue;
		const struct chan *c = BASE_AT(cv, struct chan, v[i].chan);
		if (c->base == SIZE_MAX)
			continue; /* pair_keyed's */
		struct nslot *x = &sl[c->base + (size_t)(v[i].num - c->lo)];
		uint32_t *side = v[i].recv ? &x->recv : &x->send;
		if (*side == UINT32_MAX || before(&v[i], &v[*side]))
			*side = (uint32_t)i;
		v[i].key = 0; /* paired here */
	}
	for (size_t k = 0; k < ns; k++)
		if (sl[k].send != UINT32_MAX && sl[k].recv != UINT32_MAX)
			pair(m, &v[sl[k].send], &v[sl[k].recv]);
	free(sl);
	base_vec_free(&cv);
	return pair_keyed(m, v, n); /* the channels too wide for slots */
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
		if (pair_numbered(m, v, n)) {
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
