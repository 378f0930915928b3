/* view.c - the live view's data: a ring of the last events of a job, and the JSON the page draws from, binned at the detail it asks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"
#include "collectors/collectors.h"
#include "view.h"

#define NCLASS 8 /* enum es_op_group */

/* A message's ends are numbered per (from, to, communicator, tag), sends
 * and receives apart: the k-th sent is the k-th received, as MPI pairs
 * them (non-overtaking), so equal numbers are one message. */
struct key {
	uint32_t from, to, tag;
	uint16_t comm;
	uint16_t recv;
};
struct slot {
	struct key k;
	uint32_t count;
	bool used;
};

/*
 * Invariants: ev holds the last min(added, cap) events in the order
 * added, the oldest at (next - n) mod cap; th holds the threads the
 * events name (a thread beyond nth is not drawn); ords counts every
 * message end added, so an event's ord is its number since the view
 * began, and pairs only when *unpaired is empty.  Each mark says that the
 * events added before it (its added) ended by its time: an event that
 * ends at t or later was added after the last mark before t.
 */
#define MARKS 1024
struct mark {
	uint64_t t, added;
};
struct lv {
	struct lv_event *ev;
	size_t cap, n, next;
	uint64_t added;
	struct lv_thread *th;
	struct place *at;    /* by thread: its node and unit, computed once */
	int nth, units;
	struct slot *ords;
	size_t ocap, oused;
	char unpaired[200];
	struct mark marks[MARKS]; /* a ring, the newest at (nmarks - 1) % MARKS */
	uint64_t nmarks;
};

void lv_mark(lv *v, uint64_t now_ns)
{
	v->marks[v->nmarks++ % MARKS] = (struct mark){ now_ns, v->added };
}

/* The ring's slot of the i-th oldest event, and the slot after at. */
static size_t slot(const lv *v, size_t i)
{
	return (v->next + v->cap - v->n + i) % v->cap;
}

static size_t after(const lv *v, size_t at)
{
	return at + 1 == v->cap ? 0 : at + 1;
}

/* The first event (0..n) that can end at from or later: the events
 * added before the last mark made before from ended before it. */
static size_t first_after(const lv *v, uint64_t from)
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
	if (!v || !max || !(v->ev = calloc(max, sizeof(*v->ev))) || !(v->ords = calloc(1024, sizeof(*v->ords)))) {
		if (v)
			free(v->ev);
		free(v);
		return -ENOMEM;
	}
	v->cap = max;
	v->ocap = 1024;
	*out = v;
	return 0;
}

/* Where a thread's lane goes: its node (an index), its unit (a rank, or
 * for a thread without one, the first thread whose name has the same
 * part before the last dot: "m3.s1" with "m3.s0"; a name without a dot is
 * a unit of its own) and its number. */
struct place {
	int node;
	long unit;  /* rank, or (1 << 40) + the group's first thread */
	int t;
};

static int by_place(const void *a, const void *b)
{
	const struct place *x = a, *y = b;
	if (x->node != y->node)
		return x->node - y->node;
	return x->unit != y->unit ? (x->unit < y->unit ? -1 : 1) : x->t - y->t;
}

static size_t stem(const char *name)
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
		size_t len = stem(v->th[t].name);
		if (unit < 0) {
			int g = t;
			for (int u = 0; u < t && len && g == t; u++) /* thousands of threads: once, not per answer */
				if (v->th[u].rank < 0 && stem(v->th[u].name) == len && !strncmp(v->th[u].name, v->th[t].name, len))
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
	free(v->ords);
	free(v->ev);
	free(v);
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
	return place_threads(v);
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

static size_t key_hash(const struct key *k)
{
	uint64_t h = ((uint64_t)k->from << 32 | k->to) * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)k->tag << 17 | (uint64_t)k->comm << 1 | k->recv) * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ h >> 29);
}

static bool grow_ords(lv *v)
{
	struct slot *o = calloc(v->ocap * 2, sizeof(*o));
	if (!o)
		return false;
	for (size_t i = 0; i < v->ocap; i++) {
		if (!v->ords[i].used)
			continue;
		size_t h = key_hash(&v->ords[i].k) & (v->ocap * 2 - 1);
		while (o[h].used)
			h = (h + 1) & (v->ocap * 2 - 1);
		o[h] = v->ords[i];
	}
	free(v->ords);
	v->ords = o;
	v->ocap *= 2;
	return true;
}

/* The next number of k's ends, or false when it cannot be kept. */
static bool number(lv *v, const struct key *k, uint32_t *ord)
{
	if (v->oused * 2 >= v->ocap && !grow_ords(v))
		return false;
	size_t h = key_hash(k) & (v->ocap - 1);
	while (v->ords[h].used && memcmp(&v->ords[h].k, k, sizeof(*k)))
		h = (h + 1) & (v->ocap - 1);
	if (!v->ords[h].used) {
		v->ords[h] = (struct slot){ .k = *k, .used = true };
		v->oused++;
	}
	*ord = v->ords[h].count++;
	return true;
}

/* Numbers e if it is a message. */
static void number_end(lv *v, struct lv_event *e)
{
	int rank = (int)e->thread < v->nth ? v->th[e->thread].rank : -1;
	int dir = e->dir = rank >= 0 && e->peer != ES_NONE ? (int8_t)ar_message(e->op) : 0;
	e->ord = 0;
	if (dir && rank >= 0 && e->peer != ES_NONE) {
		struct key k = { dir > 0 ? (uint32_t)rank : e->peer, dir > 0 ? e->peer : (uint32_t)rank, e->tag, e->comm,
				 dir < 0 };
		if (!number(v, &k, &e->ord))
			lv_unpaired(v, "too many pairs of ranks to number their messages");
	}
}

void lv_count(lv *v, struct lv_event *e)
{
	number_end(v, e);
}

void lv_add(lv *v, struct lv_event *e)
{
	number_end(v, e);
	v->ev[v->next] = *e;
	v->next = (v->next + 1) % v->cap;
	v->n += v->n < v->cap;
	v->added++;
}

void lv_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* --- what a page asks: lanes, bins, messages, balance ------------------------------- */

/* The lanes of one answer: lane[t] for thread t (-1: folded away). */
struct lanes {
	int *lane, n, hidden;
	char (*id)[24];
	char (*label)[80];
	char (*parent)[24]; /* the open lane it came from, or "" */
	int *threads, *depth;
};

static bool is_open(const char *open, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = open; p && (p = strstr(p, id)); p += n)
		if ((p == open || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* A unit's lane: "r:3" for rank 3, "g:12" for the threads named as thread 12 is. */
static void unit_lane(const lv *v, const struct place *p, char id[24], char label[80])
{
	if (p->unit < 1L << 40) {
		snprintf(id, 24, "r:%ld", p->unit);
		snprintf(label, 80, "rank %ld", p->unit);
	} else {
		int g = (int)(p->unit - (1L << 40));
		snprintf(id, 24, "g:%d", g);
		snprintf(label, 80, "%.*s.*", (int)stem(v->th[g].name), v->th[g].name);
	}
}

static void lanes_free(struct lanes *l)
{
	free(l->lane), free(l->id), free(l->label), free(l->parent), free(l->threads), free(l->depth);
}

static int lanes_make(const lv *v, const struct lv_ask *a, struct lanes *l)
{
	int n = v->nth;
	size_t k = (size_t)n + 1;
	*l = (struct lanes){ .lane = calloc(k, sizeof(int)), .id = calloc(k, 24), .label = calloc(k, 80),
			     .parent = calloc(k, 24), .threads = calloc(k, sizeof(int)), .depth = calloc(k, sizeof(int)) };
	const struct place *order = v->at;
	if (!l->lane || !l->id || !l->label || !l->parent || !l->threads || !l->depth || (n && !order)) {
		lanes_free(l);
		return -ENOMEM;
	}
	bool by_node = v->units > 64;
	for (int i = 0; i < n; i++) {
		int t = order[i].t, node = order[i].node, depth = 0;
		char id[24], label[80], parent[24] = "";
		const char *where = *v->th[t].node ? v->th[t].node : "this host";
		snprintf(id, sizeof(id), "n:%d", node);
		snprintf(label, sizeof(label), "%s", where);
		if (!by_node || is_open(a->open, id)) {
			depth = by_node;
			if (by_node)
				memcpy(parent, id, sizeof(id));
			unit_lane(v, &order[i], id, label);
			bool alone = order[i].unit >= 1L << 40 && !stem(v->th[t].name);
			if (alone || is_open(a->open, id)) {
				depth += !alone;
				if (!alone)
					memcpy(parent, id, sizeof(id));
				snprintf(id, sizeof(id), "t:%d", t);
				snprintf(label, sizeof(label), "%s", v->th[t].name);
			}
		}
		if (!l->n || strcmp(l->id[l->n - 1], id)) {
			if (l->n == a->max_lanes) {
				l->lane[t] = -1;
				l->hidden++;
				continue;
			}
			memcpy(l->id[l->n], id, sizeof(id));
			memcpy(l->label[l->n], label, sizeof(label));
			memcpy(l->parent[l->n], parent, sizeof(parent));
			l->depth[l->n++] = depth;
		}
		l->lane[t] = l->n - 1;
		l->threads[l->n - 1]++;
	}
	return 0;
}

/* A message end within the time shown, for pairing. */
struct end {
	struct key k; /* k.recv unused: sends and receives are apart */
	uint32_t ord;
	int lane;
	uint64_t at;
};

static int by_end(const void *a, const void *b)
{
	const struct end *x = a, *y = b;
#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
	CMP(ord); CMP(k.from); CMP(k.to); CMP(k.tag); CMP(k.comm);
#undef CMP
	return 0;
}

static int by_received(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* [from lane, sent, to lane, received] */
	return x[3] < y[3] ? -1 : x[3] > y[3];
}

/* What one pass over the events shown gathers. */
struct pass {
	uint64_t from, to;
	double bin_ns;
	double *acc;         /* [lane][bin][class]: ns in calls */
	uint64_t *mpi_ns;    /* by thread: ns inside MPI calls */
	bool *active;        /* by thread: made a call within the time shown */
	uint64_t *traffic;   /* [rank][rank]: bytes sent, ranks < nr */
	int nr;
	struct end *recvs;   /* a ring of the newest receives, rcap of them */
	size_t nrv, rcap;    /* receives seen */
};

static bool counts_as_mpi(unsigned op)
{
	unsigned code = es_op_code(op);
	return code >= ES_OP_MPI_INIT && code != ES_OP_MPI_INIT && code != ES_OP_MPI_FINALIZE &&
	       code != ES_OP_MPI_PCONTROL && !(op & ES_OP_DONE);
}

static void take(const lv *v, const struct lanes *l, int bins, struct pass *p, const struct lv_event *e)
{
	int lane = (int)e->thread < v->nth ? l->lane[e->thread] : -1;
	uint64_t s = e->start > p->from ? e->start : p->from, t = e->end < p->to ? e->end : p->to;
	int dir = e->dir, rank = (int)e->thread < v->nth ? v->th[e->thread].rank : -1;
	if (dir > 0 && rank >= 0 && rank < p->nr && e->peer < (uint32_t)p->nr && e->start >= p->from)
		p->traffic[(size_t)rank * (size_t)p->nr + e->peer] += e->bytes;
	if (dir < 0 && lane >= 0 && rank >= 0 && e->peer != ES_NONE && p->rcap)
		p->recvs[p->nrv++ % p->rcap] = (struct end){ { e->peer, (uint32_t)rank, e->tag, e->comm, 0 }, e->ord,
							     lane, e->end };
	if ((e->op & ES_OP_DONE) || (int)e->thread >= v->nth || t < s)
		return; /* a completion's tuple spans its request, not time in a call */
	p->active[e->thread] = true;
	if (counts_as_mpi(e->op))
		p->mpi_ns[e->thread] += t - s;
	if (lane < 0)
		return;
	const struct es_op_info *o = es_op_info(e->op);
	int c = o ? o->group : ES_GROUP_PASTSET;
	double x = (double)(s - p->from), y = (double)(t - p->from);
	for (int b = (int)(x / p->bin_ns); b < bins && b * p->bin_ns < y; b++) {
		double lo = b * p->bin_ns, hi = lo + p->bin_ns;
		double in = (y < hi ? y : hi) - (x > lo ? x : lo);
		if (in > 0)
			p->acc[((size_t)lane * (size_t)bins + (size_t)b) * NCLASS + (size_t)c] += in;
	}
}

static void say_bins(FILE *f, const struct lanes *l, int bins, const struct pass *p)
{
	int k = 0;
	fputs(",\"bins\":[", f);
	for (int lane = 0; lane < l->n; lane++)
		for (int b = 0; b < bins; b++) {
			const double *c = &p->acc[((size_t)lane * (size_t)bins + (size_t)b) * NCLASS];
			double sum = 0;
			int top = 0;
			for (int i = 0; i < NCLASS; i++) {
				sum += c[i];
				top = c[i] > c[top] ? i : top;
			}
			if (sum <= 0)
				continue;
			double share = sum / (p->bin_ns * l->threads[lane]);
			fprintf(f, "%s[%d,%d,%d,%d]", k++ ? "," : "", lane, b, top,
				share >= 1 ? 1000 : share * 1000 < 1 ? 1 : (int)(share * 1000 + 0.5));
		}
	fputc(']', f);
}

/* The send of the receives kept: their lines, as [from lane, sent, to
 * lane, received]; how many.  A line never goes back in time. */
static size_t pair_sends(const lv *v, const struct lanes *l, size_t first, const struct pass *p, size_t nr,
			 uint64_t (*m)[4])
{
	size_t k = 0;
	for (size_t i = first, at = slot(v, first); i < v->n && k < nr; i++, at = after(v, at)) {
		const struct lv_event *e = &v->ev[at];
		int rank = (int)e->thread < v->nth ? v->th[e->thread].rank : -1;
		if (e->dir <= 0 || rank < 0 || l->lane[e->thread] < 0)
			continue;
		struct end x = { { (uint32_t)rank, e->peer, e->tag, e->comm, 0 }, e->ord, 0, 0 };
		const struct end *r = bsearch(&x, p->recvs, nr, sizeof(x), by_end);
		if (r && r->at >= e->start && r->at <= p->to)
			memcpy(m[k++], (uint64_t[4]){ (uint64_t)l->lane[e->thread], e->start > p->from ? e->start : p->from,
						      (uint64_t)r->lane, r->at }, sizeof(*m));
	}
	return k;
}

/* Messages paired by number: the newest receives within the time shown
 * (a.max_msgs of them) and the sends that made them. */
static void say_messages(FILE *f, const lv *v, const struct lanes *l, size_t first, struct pass *p)
{
	fputs(",\"msgs\":[", f);
	size_t nr = p->nrv < p->rcap ? p->nrv : p->rcap, k = 0;
	uint64_t (*m)[4] = calloc(nr + 1, sizeof(*m));
	if (m && !*v->unpaired) {
		qsort(p->recvs, nr, sizeof(*p->recvs), by_end);
		k = pair_sends(v, l, first, p, nr, m);
		qsort(m, k, sizeof(*m), by_received);
	}
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%s[%d,%.3f,%d,%.3f]", i ? "," : "", (int)m[i][0], (double)(m[i][1] - p->from) / 1e6,
			(int)m[i][2], (double)(m[i][3] - p->from) / 1e6);
	fputc(']', f);
	if (*v->unpaired) {
		fputs(",\"msgs_note\":", f);
		lv_string(f, v->unpaired);
	}
	free(m);
}

/* Each rank's share of the time shown inside MPI (its threads that made
 * calls then, averaged), and the bytes each rank sent each other. */
static void say_balance(FILE *f, const lv *v, const struct pass *p)
{
	fputs(",\"mpi\":[", f);
	int k = 0;
	for (int r = 0; r < p->nr; r++) {
		uint64_t ns = 0;
		int threads = 0;
		for (int t = 0; t < v->nth; t++)
			if (v->th[t].rank == r && p->active[t])
				ns += p->mpi_ns[t], threads++;
		if (threads)
			fprintf(f, "%s[%d,%.1f]", k++ ? "," : "", r,
				100.0 * (double)ns / ((double)(p->to - p->from) * threads));
	}
	fprintf(f, "],\"traffic\":{\"ranks\":%d,\"bytes\":[", p->nr);
	k = 0;
	for (int s = 0; s < p->nr; s++)
		for (int d = 0; d < p->nr; d++)
			if (p->traffic[(size_t)s * (size_t)p->nr + (size_t)d])
				fprintf(f, "%s[%d,%d,%llu]", k++ ? "," : "", s, d,
					(unsigned long long)p->traffic[(size_t)s * (size_t)p->nr + (size_t)d]);
	fputs("]}", f);
}

/* The calls threads are inside now: a stall or a deadlock, on its lane. */
static void say_inside(FILE *f, const lv *v, const struct lv_ask *a, const struct lanes *l, const struct pass *p)
{
	fputs(",\"inside\":[", f);
	int k = 0;
	for (int i = 0; i < a->ninside; i++) {
		const struct lv_event *e = &a->inside[i];
		if ((int)e->thread >= v->nth || l->lane[e->thread] < 0)
			continue;
		uint64_t s = e->start > p->from ? e->start : p->from;
		fprintf(f, "%s[%d,%.3f,\"%s\"]", k++ ? "," : "", l->lane[e->thread], (double)(s - p->from) / 1e6,
			es_op_name(es_op_code(e->op)));
	}
	fputc(']', f);
}

static void pass_free(struct pass *p)
{
	free(p->acc), free(p->mpi_ns), free(p->active), free(p->traffic), free(p->recvs);
}

enum { MAX_TRAFFIC_RANKS = 256 }; /* a matrix a page can draw; beyond, by node would be needed */

static int pass_alloc(const lv *v, const struct lanes *l, int bins, int max_msgs, struct pass *p)
{
	int nr = 0;
	for (int t = 0; t < v->nth; t++)
		nr = v->th[t].rank >= nr ? v->th[t].rank + 1 : nr;
	p->nr = nr > MAX_TRAFFIC_RANKS ? MAX_TRAFFIC_RANKS : nr;
	p->acc = calloc((size_t)l->n * (size_t)bins * NCLASS + 1, sizeof(double));
	p->mpi_ns = calloc((size_t)v->nth + 1, sizeof(uint64_t));
	p->active = calloc((size_t)v->nth + 1, sizeof(bool));
	p->traffic = calloc((size_t)p->nr * (size_t)p->nr + 1, sizeof(uint64_t));
	p->rcap = max_msgs > 0 ? (size_t)max_msgs : 0;
	p->recvs = calloc(p->rcap + 1, sizeof(struct end));
	if (p->acc && p->mpi_ns && p->active && p->traffic && p->recvs)
		return 0;
	pass_free(p);
	return -ENOMEM;
}

static void say_lanes(FILE *f, const struct lanes *l)
{
	fputs(",\"lanes\":[", f);
	for (int i = 0; i < l->n; i++) {
		fprintf(f, "%s{\"id\":\"%s\",\"label\":", i ? "," : "", l->id[i]);
		lv_string(f, l->label[i]);
		fprintf(f, ",\"threads\":%d,\"depth\":%d,\"parent\":\"%s\"}", l->threads[i], l->depth[i],
			l->parent[i]);
	}
	fprintf(f, "],\"hidden\":%d", l->hidden);
}

static void say_threads(FILE *f, const lv *v)
{
	fputs(",\"threads\":[", f);
	for (int t = 0; t < v->nth; t++) {
		fprintf(f, "%s{\"name\":", t ? "," : "");
		lv_string(f, v->th[t].name);
		fprintf(f, ",\"rank\":%d,\"node\":", v->th[t].rank);
		lv_string(f, v->th[t].node);
		fputc('}', f);
	}
	fputs("],\"classes\":[", f);
	for (int c = 0; c < NCLASS; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", es_op_group_name((enum es_op_group)c));
	fputc(']', f);
}

int lv_json(const lv *v, const char *job, const struct lv_ask *a, const char *extra, char **out, size_t *len)
{
	int bins = a->bins < 1 ? 1 : a->bins > 4000 ? 4000 : a->bins;
	struct lanes l;
	struct pass p = { .to = a->now_ns };
	p.from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	p.bin_ns = (double)(p.to - p.from) / bins;
	if (lanes_make(v, a, &l))
		return -ENOMEM;
	if (pass_alloc(v, &l, bins, a->max_msgs, &p)) {
		lanes_free(&l);
		return -ENOMEM;
	}
	uint64_t oldest = v->n ? v->ev[(v->next + v->cap - v->n) % v->cap].start : a->now_ns;
	size_t first = first_after(v, p.from);
	for (size_t i = first, at = slot(v, first); i < v->n; i++, at = after(v, at)) {
		const struct lv_event *e = &v->ev[at];
		if (e->end >= p.from && e->start <= p.to && e->end <= p.to)
			take(v, &l, bins, &p, e);
	}
	for (int i = 0; i < a->ninside; i++)
		take(v, &l, bins, &p, &a->inside[i]);
	FILE *f = open_memstream(out, len);
	if (f) {
		fputs("{\"job\":", f);
		lv_string(f, job);
		fprintf(f, ",\"shown_ms\":%.3f,\"held_ms\":%.3f,\"bins_n\":%d,\"bin_ms\":%.6f,\"added\":%llu",
			(double)(p.to - p.from) / 1e6, (double)(a->now_ns - oldest) / 1e6, bins, p.bin_ns / 1e6,
			(unsigned long long)v->added);
		say_threads(f, v);
		say_lanes(f, &l);
		say_bins(f, &l, bins, &p);
		say_messages(f, v, &l, first, &p);
		say_inside(f, v, a, &l, &p);
		say_balance(f, v, &p);
		fputs(extra ? extra : "", f);
		fputc('}', f);
	}
	pass_free(&p);
	lanes_free(&l);
	return f && !fclose(f) ? 0 : -ENOMEM;
}
