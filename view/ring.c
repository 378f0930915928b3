/* ring.c - the live view's ring: the last events of a job, their messages numbered, the last second's balance summed as they come. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "view/internal.h"

/* Event e in the balance's sums (sign 1) or out of them (-1). */
static void count(lv *v, const struct lv_event *e, int sign)
{
	if ((int)e->thread >= v->nth || (e->op & ES_OP_DONE))
		return; /* a completion's tuple spans its request, not time in a call */
	v->calls[e->thread] += (uint32_t)sign;
	if (es_in_mpi_call(e->op))
		v->mpi_ns[e->thread] += (uint64_t)sign * (e->end - e->start);
	int rank = v->th[e->thread].rank;
	if (e->dir > 0 && rank >= 0 && rank < v->nr && e->peer < (uint32_t)v->nr)
		v->traffic[(size_t)rank * (size_t)v->nr + e->peer] += (uint64_t)sign * e->bytes;
}

void lv_mark(lv *v, uint64_t now_ns)
{
	BASE_INVARIANT("marks: an event that ends at t or later was added after the last mark before t, so marks "
		     "come in time order", !v->nmarks || v->marks[(v->nmarks - 1) % MARKS].t <= now_ns);
	v->marks[v->nmarks++ % MARKS] = (struct mark){ now_ns, v->added };
	while (v->tail < v->added && lv__at(v, v->tail)->end + BALANCE_NS < now_ns)
		count(v, lv__at(v, v->tail++), -1);
}

/* The first event (0..n) that can end at from or later: the events
 * added before the last mark made before from ended before it. */
size_t lv__first_after(const lv *v, uint64_t from)
{
	uint64_t lo = v->nmarks > MARKS ? v->nmarks - MARKS : 0, s = 0;
	for (uint64_t k = v->nmarks; k > lo; k--)
		if (v->marks[(k - 1) % MARKS].t < from) {
			s = v->marks[(k - 1) % MARKS].added;
			break;
		}
	uint64_t oldest = v->added - v->n;
	return s > oldest ? (size_t)(s - oldest) : 0;
}

int lv_create(size_t max, lv **out)
{
	lv *v = calloc(1, sizeof(*v));
	if (v)
		base_tab_init(&v->sites, sizeof(char *));
	if (!v || !max || !(v->ev = calloc(max, sizeof(*v->ev))) || es_numr_create(&v->numr) ||
	    !(v->sent = calloc(SENT, sizeof(*v->sent)))) {
		lv_destroy(v);
		return -ENOMEM;
	}
	v->cap = max;
	*out = v;
	return 0;
}

static int by_place(const void *a, const void *b)
{
	const struct place *x = a, *y = b;
	if (x->node != y->node)
		return x->node - y->node;
	return x->unit != y->unit ? (x->unit < y->unit ? -1 : 1) : x->t - y->t;
}

size_t lv__stem(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot ? (size_t)(dot - name) : 0;
}

/* v->at and v->units from v->th: nodes and groups by first appearance. */
static int place_threads(lv *v)
{
	int n = v->nth, nodes = 0;
	struct place *p = calloc((size_t)n + 1, sizeof(*p));
	int *first = calloc((size_t)n + 1, sizeof(int)); /* each node's first thread */
	if (!p || !first) {
		free(p), free(first);
		return -ENOMEM;
	}
	v->units = 0;
	for (int t = 0; t < n; t++) {
		int k = 0;
		while (k < nodes && strcmp(v->th[first[k]].node, v->th[t].node))
			k++;
		if (k == nodes)
			first[nodes++] = t;
		long unit = v->th[t].rank;
		size_t len = lv__stem(v->th[t].name);
		if (unit < 0) {
			int g = t;
			for (int u = 0; u < t && len && g == t; u++) /* thousands of threads: once, not per answer */
				if (v->th[u].rank < 0 && lv__stem(v->th[u].name) == len && !strncmp(v->th[u].name, v->th[t].name, len))
					g = (int)(p[u].unit - (1L << 40));
			unit = (1L << 40) + g;
		}
		p[t] = (struct place){ k, unit, t };
		bool new_unit = true;
		for (int u = 0; u < t && new_unit; u++)
			new_unit = p[u].unit != unit || p[u].node != k;
		v->units += new_unit;
	}
	qsort(p, (size_t)n, sizeof(*p), by_place);
	free(first);
	free(v->at);
	v->at = p;
	return 0;
}

static void free_threads(lv *v)
{
	for (int i = 0; i < v->nth; i++) {
		free((char *)v->th[i].name);
		free((char *)v->th[i].node);
	}
	free(v->th);
	v->th = NULL;
	v->nth = 0;
}

void lv_destroy(lv *v)
{
	if (!v)
		return;
	free_threads(v);
	free(v->at);
	es_numr_destroy(v->numr);
	free(v->sent);
	free(v->mpi_ns), free(v->calls), free(v->traffic);
	if (v->bn)
		v->bn_free(v->bn);
	char **name;
	for (size_t at = 0; (name = base_tab_next(&v->sites, &at, NULL));)
		free(*name);
	base_tab_free(&v->sites);
	free(v->ev);
	free(v);
}

static uint64_t site_key(uint32_t thread, uint16_t site)
{
	return (uint64_t)thread << 16 | site;
}

const char *lv__site_name(const lv *v, uint32_t thread, uint16_t site)
{
	char **name = base_tab_get(&v->sites, site_key(thread, site));
	return name ? *name : NULL;
}

bool lv_site_named(const lv *v, uint32_t thread, uint16_t site)
{
	return lv__site_name(v, thread, site) != NULL;
}

int lv_set_site(lv *v, uint32_t thread, uint16_t site, const char *name)
{
	if (lv_site_named(v, thread, site))
		return 0;
	char *copy = strdup(name), **slot = copy ? base_tab_put(&v->sites, site_key(thread, site), NULL) : NULL;
	if (!slot) {
		free(copy);
		return -ENOMEM;
	}
	*slot = copy;
	return 0;
}

/* The balance's sums sized for the threads, and counted again. */
static int resum(lv *v)
{
	int nr = 0;
	for (int t = 0; t < v->nth; t++)
		nr = v->th[t].rank >= nr ? v->th[t].rank + 1 : nr;
	nr = nr > LV_MAX_TRAFFIC_RANKS ? LV_MAX_TRAFFIC_RANKS : nr;
	uint64_t *mpi = calloc((size_t)v->nth + 1, sizeof(*mpi)), *tr = calloc((size_t)nr * (size_t)nr + 1, sizeof(*tr));
	uint32_t *calls = calloc((size_t)v->nth + 1, sizeof(*calls));
	if (!mpi || !tr || !calls) {
		free(mpi), free(tr), free(calls);
		return -ENOMEM;
	}
	free(v->mpi_ns), free(v->calls), free(v->traffic);
	v->mpi_ns = mpi, v->calls = calls, v->traffic = tr, v->nr = nr;
	for (uint64_t i = v->tail; i < v->added; i++)
		count(v, lv__at(v, i), 1);
	return 0;
}

int lv_set_threads(lv *v, const struct lv_thread *t, int n)
{
	struct lv_thread *th = calloc((size_t)n + 1, sizeof(*th));
	if (!th)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		th[i] = (struct lv_thread){ strdup(t[i].name ? t[i].name : ""), t[i].rank,
					    strdup(t[i].node ? t[i].node : "") };
		if (!th[i].name || !th[i].node) {
			for (int k = 0; k <= i; k++)
				free((char *)th[k].name), free((char *)th[k].node);
			free(th);
			return -ENOMEM;
		}
	}
	free_threads(v);
	v->th = th;
	v->nth = n;
	v->tgen++;
	int rc = place_threads(v);
	return rc ? rc : resum(v);
}

void lv_unpaired(lv *v, const char *why)
{
	if (!*v->unpaired)
		snprintf(v->unpaired, sizeof(v->unpaired), "%s", why);
}

uint64_t lv_added(const lv *v)
{
	return v->added;
}

/* Keys e if it is a message's end; takes in a channel's mark. */
static void number_end(lv *v, struct lv_event *e)
{
	int rank = (int)e->thread < v->nth ? v->th[e->thread].rank : -1;
	e->dir = es_is_mark(e->op) || rank < 0 || e->peer == ES_NONE ? 0 : (int8_t)es_message(e->op);
	e->key = 0;
	if (!e->comm_id || (!e->dir && !es_is_channel_mark(e->op)))
		return; /* its communicator not known (yet): never joined to another */
	struct es_trace t = { .op = e->op, .element = e->peer, .arg = e->tag, .seq = e->seq, .size = e->bytes };
	struct es_msg_end m;
	int rc = es_numr_read(v->numr, e->thread, rank, e->comm_id, &t, &m);
	if (rc == -ENOMEM)
		lv_unpaired(v, "no memory to follow the channels' numbers");
	if (rc || !e->dir)
		return; /* a mark taken in, or no number to pair it by: never joined to another */
	e->key = m.key;
	if (!m.recv)
		*lv__sent_of(v, m.key) = (struct sent){ m.key, e->thread, e->start, true };
}

void lv_count(lv *v, struct lv_event *e)
{
	number_end(v, e);
}

void lv_add(lv *v, struct lv_event *e)
{
	number_end(v, e);
	if (es_is_mark(e->op))
		return; /* no call: only numbers */
	if (v->n == v->cap && v->tail == v->added - v->n) /* the ring drops one the sums still count */
		count(v, lv__at(v, v->tail++), -1);
	v->ev[v->next] = *e;
	v->next = (v->next + 1) % v->cap;
	v->n += v->n < v->cap;
	v->added++;
	count(v, e, 1);
	BASE_INVARIANT("ev holds the last min(added, cap) events, the oldest at (next - n) mod cap",
		     v->n == (v->added < v->cap ? v->added : v->cap) && v->next == (v->added % v->cap));
	BASE_INVARIANT("the sums count the events from tail to added, every one of them in the ring",
		     v->tail <= v->added && v->tail >= v->added - v->n);
}


