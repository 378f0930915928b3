/* json.c - the live view's answers: a page's question (the time shown, its detail, the lanes open) said as JSON from the ring, the bins kept from one answer to the next. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "archive/archive.h"
#include "monitors/monitors.h"
#include "view/internal.h"

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
		snprintf(label, 80, "%.*s.*", (int)lv__stem(v->th[g].name), v->th[g].name);
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
			bool alone = order[i].unit >= 1L << 40 && !lv__stem(v->th[t].name);
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

/* A receive kept for its line: the newest within the time shown. */
struct end {
	uint64_t key;
	int lane;
	uint64_t at;
};

/*
 * The bins of the last question, kept while the same one is asked again
 * (every browser's page asks the same ten times a second): bins are
 * aligned to multiples of their width, so an answer adds the events
 * added since the last one and zeroes the bins that came into view.
 * Invariants: slot(b) = b mod cap holds bin b for lo <= b <= hi, the sum
 * of the calls of events below global index done over it; recvs is a
 * ring of the newest receives among them (nrv counted).
 */
struct binner {
	char *key;     /* the whole question, however long its open= list */
	uint64_t tgen;
	struct lanes l;
	double bin_ns;
	int cap;
	int64_t lo, hi;
	double *acc;   /* [lane][slot][class]: ns in calls */
	uint64_t done;
	struct end *recvs;
	size_t nrv, rcap;
};

static void binner_free(struct binner *b)
{
	if (!b)
		return;
	lanes_free(&b->l);
	free(b->key);
	free(b->acc);
	free(b->recvs);
	free(b);
}

static double *cell(const struct binner *b, int lane, int64_t bin)
{
	return &b->acc[((size_t)lane * (size_t)b->cap + (size_t)(bin % b->cap)) * NCLASS];
}

/* A binner for question a, from the events that can end within it. */
static struct binner *binner_new(const lv *v, const struct lv_ask *a, const char *key, int bins)
{
	struct binner *b = calloc(1, sizeof(*b));
	if (!b || lanes_make(v, a, &b->l)) {
		free(b);
		return NULL;
	}
	b->tgen = v->tgen;
	b->bin_ns = (double)a->shown_ns / bins;
	b->cap = bins + 2;
	b->rcap = a->max_msgs > 0 ? (size_t)a->max_msgs : 1;
	b->acc = calloc((size_t)(b->l.n ? b->l.n : 1) * (size_t)b->cap * NCLASS, sizeof(double));
	b->recvs = calloc(b->rcap, sizeof(*b->recvs));
	b->key = strdup(key);
	if (!b->acc || !b->recvs || !b->key) {
		binner_free(b);
		return NULL;
	}
	uint64_t from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	b->lo = (int64_t)floor((double)from / b->bin_ns);
	b->hi = b->lo - 1;
	b->done = v->added - v->n + lv__first_after(v, from);
	return b;
}

/* Event e's time in calls into the bins it covers, within lo..hi. */
static void bin_event(struct binner *b, const struct lv_event *e, int lane)
{
	int c = (int)es_op_class(e->op);
	double s = (double)e->start, t = (double)e->end;
	int64_t first = (int64_t)floor(s / b->bin_ns), last = (int64_t)floor(t / b->bin_ns);
	for (int64_t k = first < b->lo ? b->lo : first; k <= last && k <= b->hi; k++) {
		double lo = (double)k * b->bin_ns, hi = lo + b->bin_ns;
		double in = (t < hi ? t : hi) - (s > lo ? s : lo);
		if (in > 0)
			cell(b, lane, k)[c] += in;
	}
}

/* Brings b up to now: bins that came into view zeroed, the events added
 * since binned, their receives kept. */
static void advance(const lv *v, struct binner *b, const struct lv_ask *a, uint64_t upto)
{
	uint64_t from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	int64_t lo = (int64_t)floor((double)from / b->bin_ns), hi = (int64_t)floor((double)a->now_ns / b->bin_ns);
	if (lo > b->lo)
		b->lo = lo;
	for (int64_t k = b->hi + 1 > hi - b->cap + 1 ? b->hi + 1 : hi - b->cap + 1; k <= hi; k++)
		for (int lane = 0; lane < b->l.n; lane++)
			memset(cell(b, lane, k), 0, NCLASS * sizeof(double));
	b->hi = hi > b->hi ? hi : b->hi;
	for (uint64_t i = b->done; i < upto; i++) {
		const struct lv_event *e = lv__at(v, i);
		int lane = (int)e->thread < v->nth ? b->l.lane[e->thread] : -1;
		if (lane < 0 || e->end < from)
			continue;
		if (e->dir < 0 && e->key)
			b->recvs[b->nrv++ % b->rcap] = (struct end){ e->key, lane, e->end };
		if (!(e->op & ES_OP_DONE)) /* a completion's tuple spans its request, not time in a call */
			bin_event(b, e, lane);
	}
	b->done = upto;
}

/* The binner for a, kept or made anew (another question, other threads,
 * events dropped before it binned them, time gone back). */
static struct binner *binner_for(lv *v, const struct lv_ask *a, int bins, uint64_t upto)
{
	char *key = NULL;
	if (asprintf(&key, "%llu/%d/%d/%d/%s", (unsigned long long)a->shown_ns, bins, a->max_lanes, a->max_msgs,
		     a->open ? a->open : "") < 0)
		return NULL;
	struct binner *b = v->bn;
	uint64_t from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	if (b && (strcmp(b->key, key) || b->tgen != v->tgen || b->done < v->added - v->n || b->done > upto ||
		  (int64_t)floor((double)from / b->bin_ns) < b->lo)) {
		binner_free(b);
		b = v->bn = NULL;
	}
	if (!b)
		b = v->bn = binner_new(v, a, key, bins);
	v->bn_free = binner_free;
	free(key);
	if (b)
		advance(v, b, a, upto);
	return b;
}

/* Each lane's bins: the class that took most of the bin, and the share of
 * the lane's time in calls (per mille), with the calls threads are inside. */
static void say_bins(FILE *f, const lv *v, const struct binner *b, const struct lv_ask *a)
{
	fprintf(f, ",\"bins_n\":%lld,\"bin_ms\":%.6f,\"bin0_ms\":%.6f,\"bins\":[", (long long)(b->hi - b->lo + 1),
		b->bin_ns / 1e6, ((double)b->lo * b->bin_ns - (double)(a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0)) / 1e6);
	int k = 0;
	for (int lane = 0; lane < b->l.n; lane++)
		for (int64_t bin = b->lo; bin <= b->hi; bin++) {
			double c[NCLASS], sum = 0;
			memcpy(c, cell(b, lane, bin), sizeof(c));
			for (int i = 0; i < a->ninside; i++) { /* calls in progress: drawn, not kept */
				const struct lv_event *e = &a->inside[i];
				if ((int)e->thread >= v->nth || b->l.lane[e->thread] != lane)
					continue;
				double lo = (double)bin * b->bin_ns, hi = lo + b->bin_ns, s = (double)e->start, t = (double)e->end;
				double in = (t < hi ? t : hi) - (s > lo ? s : lo);
				if (in > 0)
					c[es_op_class(e->op)] += in;
			}
			int top = 0;
			for (int i = 0; i < NCLASS; i++) {
				sum += c[i];
				top = c[i] > c[top] ? i : top;
			}
			if (sum <= 0)
				continue;
			double share = sum / (b->bin_ns * b->l.threads[lane]);
			fprintf(f, "%s[%d,%lld,%d,%d]", k++ ? "," : "", lane, (long long)(bin - b->lo), top,
				share >= 1 ? 1000 : share * 1000 < 1 ? 1 : (int)(share * 1000 + 0.5));
		}
	fputc(']', f);
}

/* Lines of the newest receives within the time shown, from their sends
 * (equal numbers on a channel: collectors.h), oldest first. */
static void say_messages(FILE *f, const lv *v, const struct binner *b, uint64_t from, uint64_t now)
{
	fputs(",\"msgs\":[", f);
	size_t n = b->nrv < b->rcap ? b->nrv : b->rcap, k = 0, alone = 0, back = 0;
	for (size_t i = 0; i < n; i++) {
		const struct end *r = &b->recvs[(b->nrv - n + i) % b->rcap];
		const struct sent *s = lv__sent_of(v, r->key);
		if (r->at < from || r->at > now)
			continue;
		if (!s->used || s->key != r->key) {
			alone++; /* its send not recorded (paused, filtered), not read yet, or no longer kept */
			continue;
		}
		if (s->start > r->at) {
			back++; /* received before it was sent, by the hosts' clocks: never a line back in time */
			continue;
		}
		if ((int)s->thread >= v->nth || b->l.lane[s->thread] < 0)
			continue; /* its send's lane folded away */
		uint64_t at = s->start > from ? s->start : from;
		fprintf(f, "%s[%d,%.3f,%d,%.3f]", k++ ? "," : "", b->l.lane[s->thread], (double)(at - from) / 1e6,
			r->lane, (double)(r->at - from) / 1e6);
	}
	fputc(']', f);
	if (b->nrv > b->rcap) /* the cap said plainly: receives in view older than those drawn */
		fprintf(f, ",\"msgs_older\":%zu", b->nrv - b->rcap);
	if (alone)
		fprintf(f, ",\"msgs_alone\":%zu", alone);
	if (back)
		fprintf(f, ",\"msgs_backwards\":%zu", back);
	if (*v->unpaired) {
		fputs(",\"msgs_note\":", f);
		ar_json_string(f, v->unpaired);
	}
}

/* Each rank's share of the last second inside MPI (its threads that made
 * calls then, averaged), and the bytes each rank sent each other. */
static int say_balance(FILE *f, const lv *v, const struct lv_ask *a, uint64_t now)
{
	uint64_t span = BALANCE_NS, oldest = v->tail < v->added ? lv__at(v, v->tail)->start : now;
	if (now > oldest && now - oldest < span)
		span = now - oldest; /* a job younger than a second */
	/* one pass each over the calls inside and the threads, whatever the
	 * job's size: each thread's share, then its rank's */
	uint64_t *in = calloc((size_t)v->nth + 1, sizeof(*in)), *ns = calloc((size_t)v->nr + 1, sizeof(*ns));
	int *threads = calloc((size_t)v->nr + 1, sizeof(*threads));
	if (!in || !ns || !threads) {
		free(in), free(ns), free(threads);
		return -ENOMEM;
	}
	/* a call the thread is inside counts up to now: a rank stuck in
	 * MPI_Ssend is inside MPI, though no call of it ended */
	uint64_t lo = now > span ? now - span : 0;
	for (int i = 0; i < a->ninside; i++) {
		const struct lv_event *e = &a->inside[i];
		uint64_t s = e->start > lo ? e->start : lo;
		if ((int)e->thread < v->nth && now > s && es_in_mpi_call(es_op_code(e->op)))
			in[e->thread] += now - s;
	}
	for (int t = 0; t < v->nth; t++) {
		int r = v->th[t].rank;
		if (r < 0 || r >= v->nr || (!v->calls[t] && !in[t]))
			continue;
		uint64_t mine = v->mpi_ns[t] + in[t];
		ns[r] += mine < span ? mine : span;
		threads[r]++;
	}
	fputs(",\"mpi\":[", f);
	int k = 0;
	for (int r = 0; r < v->nr; r++)
		if (threads[r] && span)
			fprintf(f, "%s[%d,%.1f]", k++ ? "," : "", r, 100.0 * (double)ns[r] / ((double)span * threads[r]));
	free(in), free(ns), free(threads);
	fprintf(f, "],\"traffic\":{\"ranks\":%d,\"bytes\":[", v->nr);
	k = 0;
	for (int s = 0; s < v->nr; s++)
		for (int d = 0; d < v->nr; d++)
			if (v->traffic[(size_t)s * (size_t)v->nr + (size_t)d])
				fprintf(f, "%s[%d,%d,%llu]", k++ ? "," : "", s, d,
					(unsigned long long)v->traffic[(size_t)s * (size_t)v->nr + (size_t)d]);
	fputs("]}", f);
	return 0;
}

/* The calls threads are inside now: a stall or a deadlock, on its lane. */
static void say_inside(FILE *f, const lv *v, const struct lv_ask *a, const struct lanes *l, uint64_t from)
{
	fputs(",\"inside\":[", f);
	int k = 0;
	for (int i = 0; i < a->ninside; i++) {
		const struct lv_event *e = &a->inside[i];
		if ((int)e->thread >= v->nth || l->lane[e->thread] < 0)
			continue;
		uint64_t s = e->start > from ? e->start : from;
		fprintf(f, "%s[%d,%.3f,\"%s\"]", k++ ? "," : "", l->lane[e->thread], (double)(s - from) / 1e6,
			es_op_name(es_op_code(e->op)));
	}
	fputc(']', f);
}

static void say_lanes(FILE *f, const struct lanes *l)
{
	fputs(",\"lanes\":[", f);
	for (int i = 0; i < l->n; i++) {
		fprintf(f, "%s{\"id\":\"%s\",\"label\":", i ? "," : "", l->id[i]);
		ar_json_string(f, l->label[i]);
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
		ar_json_string(f, v->th[t].name);
		fprintf(f, ",\"rank\":%d,\"node\":", v->th[t].rank);
		ar_json_string(f, v->th[t].node);
		fputc('}', f);
	}
	fputs("],\"classes\":[", f);
	for (int c = 0; c < NCLASS; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", es_class_name((enum es_class)c));
	fputs("],\"colours\":[", f);
	for (int c = 0; c < NCLASS; c++)
		fprintf(f, "%s\"%s\"", c ? "," : "", ar_class_colour((enum es_class)c));
	fputc(']', f);
}

int lv_json(lv *v, const char *job, const struct lv_ask *a, const char *extra, char **out, size_t *len)
{
	int bins = a->bins < 1 ? 1 : a->bins > 4000 ? 4000 : a->bins;
	uint64_t from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	uint64_t upto = a->upto && a->upto < v->added ? a->upto : v->added;
	struct binner *b = binner_for(v, a, bins, upto);
	if (!b)
		return -ENOMEM;
	FILE *f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	uint64_t oldest = v->n ? lv__at(v, v->added - v->n)->start : a->now_ns;
	if (a->window_ns && a->now_ns > a->window_ns && oldest < a->now_ns - a->window_ns)
		oldest = a->now_ns - a->window_ns; /* held within the window, whatever else is kept */
	fputs("{\"job\":", f);
	ar_json_string(f, job);
	fprintf(f, ",\"shown_ms\":%.3f,\"held_ms\":%.3f,\"added\":%llu,\"from_ns\":%llu", (double)(a->now_ns - from) / 1e6,
		(double)(a->now_ns > oldest ? a->now_ns - oldest : 0) / 1e6, (unsigned long long)v->added,
		(unsigned long long)from);
	say_threads(f, v);
	say_lanes(f, &b->l);
	say_bins(f, v, b, a);
	say_messages(f, v, b, from, a->now_ns);
	say_inside(f, v, a, &b->l, from);
	int rc = say_balance(f, v, a, a->now_ns);
	fputs(extra ? extra : "", f);
	fputc('}', f);
	if (fclose(f) || rc) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* --- the call under the pointer ------------------------------------------------ */

/* How near e is to at: 0 inside it, else the gap to its nearer end. */
static uint64_t distance(const struct lv_event *e, uint64_t at)
{
	return at < e->start ? e->start - at : at > e->end ? at - e->end : 0;
}

/* Whether e is nearer at than best (inside: the shorter). */
static bool nearer(const struct lv_event *e, const struct lv_event *best, uint64_t at)
{
	if (!best)
		return true;
	uint64_t d = distance(e, at), bd = distance(best, at);
	return d != bd ? d < bd : e->end - e->start < best->end - best->start;
}

static void say_call(FILE *f, const lv *v, const struct lv_event *e, uint64_t from, bool in_progress)
{
	char label[64];
	int rank = (int)e->thread < v->nth ? v->th[e->thread].rank : -1;
	fputs("{\"call\":{\"name\":", f);
	ar_json_string(f, es_op_label(e->op & ~ES_OP_NUMBERED, label, sizeof(label)));
	fputs(",\"thread\":", f);
	ar_json_string(f, (int)e->thread < v->nth ? v->th[e->thread].name : "?");
	fprintf(f, ",\"start_ms\":%.6f,\"dur_ms\":%.6f", e->start >= from ? (double)(e->start - from) / 1e6
								   : -(double)(from - e->start) / 1e6,
		(double)(e->end - e->start) / 1e6);
	int dir = rank >= 0 && e->peer != ES_NONE ? es_message(e->op) : 0;
	/* a message's peer, a collective's root; a wait's element is no rank */
	if (e->peer != ES_NONE && (dir || es_op_matched(e->op)))
		fprintf(f, ",\"%s\":%u", dir > 0 ? "to" : dir < 0 ? "from" : "root", e->peer);
	if (dir && e->tag != ES_NONE)
		fprintf(f, ",\"tag\":%u", e->tag);
	if (!in_progress)
		fprintf(f, ",\"bytes\":%u", e->bytes);
	if (rank >= 0 && e->comm != ES_COMM_NONE)
		fprintf(f, ",\"comm\":%u", e->comm);
	const char *site = rank >= 0 ? lv__site_name(v, e->thread, (uint16_t)(e->seq >> 16)) : NULL;
	if (site) {
		fputs(",\"site\":", f);
		ar_json_string(f, site);
	}
	fprintf(f, ",\"in_progress\":%s}}", in_progress ? "true" : "false");
}

int lv_call_json(lv *v, const struct lv_ask *a, int lane, uint64_t at_ns, uint64_t tol_ns, char **out, size_t *len)
{
	struct lanes l;
	if (lanes_make(v, a, &l))
		return -ENOMEM;
	uint64_t from = a->now_ns > a->shown_ns ? a->now_ns - a->shown_ns : 0;
	const struct lv_event *best = NULL;
	bool in_progress = false;
	/* newest first: the ring is in the order added, which ends keep */
	for (uint64_t i = v->added; i > v->added - v->n; i--) {
		const struct lv_event *e = lv__at(v, i - 1);
		if (e->end + tol_ns + 10 * BALANCE_NS < at_ns)
			break; /* what was added before it ended before it too: pulls come far more often */
		if ((int)e->thread >= v->nth || l.lane[e->thread] != lane || (e->op & ES_OP_DONE) || es_is_mark(e->op) ||
		    distance(e, at_ns) > tol_ns || !nearer(e, best, at_ns))
			continue;
		best = e;
	}
	for (int i = 0; i < a->ninside; i++) {
		const struct lv_event *e = &a->inside[i];
		if ((int)e->thread < v->nth && l.lane[e->thread] == lane && distance(e, at_ns) <= tol_ns &&
		    nearer(e, best, at_ns))
			best = e, in_progress = true;
	}
	lanes_free(&l);
	FILE *f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	if (best)
		say_call(f, v, best, from, in_progress);
	else
		fputs("{\"call\":null}", f);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
