/* beat.c - heartbeat's judgement: which threads progressed since the last period, and who waits for whom when some did not. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beat.h"
#include "waits.h"
#include "monitors/monitors.h"

/* Invariants: th and beat have a slot per thread of s as s last numbered
 * them (n); a thread keeps its verdicts across refreshes by name; mpi is
 * NULL or the MPI side of s's current threads. */
struct hb {
	es_scope *s;
	es_mpi *mpi;            /* the MPI side: read once, then what is new each period */
	double period;          /* s */
	bool always_look;
	bool fed;               /* its owner consumes s and feeds each thread's latest (hb_feed) */
	int n;                  /* threads */
	struct hb_thread *th;   /* per thread */
	struct es_trace *beat;  /* per thread: its latest event */
	wf_graph *wfg;
	bool deadlocked, wf_failed;
};

/* One period's view of every thread. */
struct look {
	bool *lost;             /* behind a server that did not answer: not judged */
	bool *progressed, *stall;
	double *idle_s;
	/* what each thread is inside: read once a period, for the stalled only
	 * unless the waiting relation needs every thread's */
	bool *in, *asked;
	struct es_flight *fl;
	int nstall;
};

static void look_free(struct look *p)
{
	free(p->lost), free(p->progressed), free(p->stall), free(p->idle_s);
	free(p->in), free(p->asked), free(p->fl);
}

static int look_alloc(struct look *p, int n)
{
	size_t k = (size_t)n + 1;
	*p = (struct look){ .lost = calloc(k, sizeof(bool)), .progressed = calloc(k, sizeof(bool)),
			    .stall = calloc(k, sizeof(bool)), .idle_s = calloc(k, sizeof(double)),
			    .in = calloc(k, sizeof(bool)), .asked = calloc(k, sizeof(bool)),
			    .fl = calloc(k, sizeof(struct es_flight)) };
	if (p->lost && p->progressed && p->stall && p->idle_s && p->in && p->asked && p->fl)
		return 0;
	look_free(p);
	return PS_ENOMEM;
}

/* Each thread's latest: as wide as the scope's pull, or a slot a thread when fed. */
static int beats(const struct hb *h)
{
	return h->fed ? es_scope_threads(h->s) : es_scope_width(h->s);
}

static int create(es_scope *s, double period_s, bool always_look, bool fed, hb **out)
{
	hb *h = calloc(1, sizeof(*h));
	if (!h)
		return PS_ENOMEM;
	*h = (struct hb){ .s = s, .period = period_s, .always_look = always_look, .n = es_scope_threads(s),
			  .fed = fed };
	if (es_mpi_open(s, &h->mpi))
		h->mpi = NULL; /* waits judged without what the ranks say: none named */
	h->th = calloc((size_t)h->n + 1, sizeof(*h->th));
	h->beat = calloc((size_t)beats(h) + 1, sizeof(*h->beat));
	if (!h->th || !h->beat || wf_create(&h->wfg)) {
		hb_destroy(h);
		return PS_ENOMEM;
	}
	if (!fed && !es_scope_pull(s, h->beat))
		for (int t = 0; t < h->n; t++)
			if (!es_trace_empty(&h->beat[t])) {
				h->th[t].seen = 1;
				h->th[t].last_end = h->beat[t].end;
			}
	*out = h;
	return 0;
}

int hb_create(es_scope *s, double period_s, bool always_look, hb **out)
{
	return create(s, period_s, always_look, false, out);
}

int hb_create_fed(es_scope *s, double period_s, hb **out)
{
	return create(s, period_s, false, true, out);
}

void hb_feed(hb *h, int thread, const struct es_trace *e)
{
	if (thread >= 0 && thread < h->n && e->end >= h->beat[thread].end)
		h->beat[thread] = *e; /* a thread of several leaves: the one that ended last */
}

void hb_prime(hb *h)
{
	for (int t = 0; t < h->n; t++)
		if (!es_trace_empty(&h->beat[t])) {
			h->th[t].seen = 1;
			h->th[t].last_end = h->beat[t].end;
		}
}

void hb_destroy(hb *h)
{
	if (!h)
		return;
	wf_destroy(h->wfg);
	es_mpi_close(h->mpi);
	free(h->th);
	free(h->beat);
	free(h);
}

int hb_threads(const hb *h) { return h->n; }
const struct hb_thread *hb_thread(const hb *h, int t) { return t >= 0 && t < h->n ? &h->th[t] : NULL; }
const wf_graph *hb_graph(const hb *h) { return h->wfg; }
bool hb_deadlocked(const hb *h) { return h->deadlocked; }

int hb_stalled_for(const hb *h, double seconds, double *for_s)
{
	for (int t = 0; t < h->n; t++)
		if (h->th[t].stalled_now && (*for_s = h->th[t].stalled_periods * h->period) >= seconds)
			return t;
	return -1;
}

/* What thread t is inside, in words: the operation, and the path or the
 * peer it waits on, as the graph said it when there is one (what it
 * waits for, with world ranks, tags, roots and communicators). */
static void describe(const es_scope *s, const wf_graph *g, int t, bool inside, const struct es_flight *fp,
		     char *buf, size_t len)
{
	if (!inside) {
		snprintf(buf, len, "between operations");
		return;
	}
	const struct es_flight f = *fp;
	const char *said = g ? wf_what(g, t) : NULL;
	if (said && *said) {
		snprintf(buf, len, "%s for %.2f s", said, f.since_ns / 1e9);
		return;
	}
	const struct es_meta *m = &es_scope_leaf(s, f.leaf)->meta;
	const struct es_op_info *i = es_op_info(f.op);
	const char *in = i && i->kind == ES_KIND_POLL ? "polling" : "inside"; /* a streak of them */
	if (f.op >= ES_OP_MPI_INIT)
		snprintf(buf, len, "%s %s for %.2f s", in, es_op_name(f.op), f.since_ns / 1e9);
	else
		snprintf(buf, len, "inside %s on %s for %.2f s", es_op_name(f.op),
			 m->where[0] ? m->where : "its element", f.since_ns / 1e9);
}

/* Threads may appear (a rank starting late, a thread's first call): takes
 * them in, keeping what is known of the others by name.  1 if some did,
 * 0 if none, PS_ENOMEM. */
static int take_new_threads(struct hb *h)
{
	int oldn = h->n, rc = 0;
	char **names = calloc((size_t)oldn + 1, sizeof(*names));
	if (!names)
		return PS_ENOMEM;
	for (int t = 0; t < oldn; t++)
		names[t] = strdup(es_scope_thread(h->s, t));
	/* fed: the owner refreshed the scope, which keeps the threads it knew
	 * at their numbers and puts new ones after */
	if (h->fed ? es_scope_threads(h->s) > oldn : es_scope_refresh(h->s) > 0) {
		int n = es_scope_threads(h->s);
		es_mpi_close(h->mpi);
		if (es_mpi_open(h->s, &h->mpi))
			h->mpi = NULL;
		struct hb_thread *nth = calloc((size_t)n + 1, sizeof(*nth));
		struct es_trace *nbeat = calloc((size_t)beats(h) + 1, sizeof(*nbeat));
		if (nth && nbeat) {
			for (int t = 0; t < n; t++)
				for (int o = 0; o < oldn; o++)
					if (names[o] && !strcmp(names[o], es_scope_thread(h->s, t))) {
						nth[t] = h->th[o];
						if (h->fed)
							nbeat[t] = h->beat[o];
					}
			free(h->th);
			free(h->beat);
			h->th = nth;
			h->beat = nbeat;
			h->n = n;
			rc = 1;
		} else {
			free(nth);
			free(nbeat);
			rc = PS_ENOMEM;
		}
	}
	for (int t = 0; t < oldn; t++)
		free(names[t]);
	free(names);
	return rc;
}

/* Which threads progressed since the last period and which did not. */
static void judge(struct hb *h, struct look *p, struct hb_period *out)
{
	for (int i = 0; i < es_scope_leaves(h->s); i++)
		if (es_scope_leaf_lost(h->s, i)) {
			p->lost[es_scope_leaf(h->s, i)->thread] = true;
			if (!*out->lost_at)
				mon_server_of(h->s, i, out->lost_at, sizeof(out->lost_at));
		}
	double now = mon_now();
	for (int t = 0; t < h->n; t++) {
		struct hb_thread *x = &h->th[t];
		const struct es_trace *b = &h->beat[t];
		if (p->lost[t])
			continue;
		if (es_trace_empty(b)) {
			/* no event yet -- unless it is stuck in its first one */
			p->asked[t] = true;
			p->in[t] = es_scope_in_flight(h->s, t, &p->fl[t]);
			p->nstall += p->stall[t] = p->in[t] && p->fl[t].since_ns >= h->period * 1e9;
			continue;
		}
		p->idle_s[t] = now * 1e9 > (double)b->end ? (now * 1e9 - (double)b->end) / 1e9 : 0;
		if (x->seen && b->end == x->last_end)
			p->nstall += p->stall[t] = true;
		else
			p->progressed[t] = true;
		x->seen = 1;
		x->last_end = b->end;
	}
}

/* Who waits for whom: only when something stalled (or always_look), from
 * what the collectors already wrote. */
static bool look(struct hb *h, struct look *p, const char *prog)
{
	if (!p->nstall && !h->always_look)
		return false;
	for (int t = 0; t < h->n; t++)
		if (!p->lost[t] && !p->asked[t])
			p->in[t] = es_scope_in_flight(h->s, t, &p->fl[t]);
	if (h->mpi)
		es_mpi_refresh(h->mpi);
	struct hb_look lk = { h->beat, p->progressed, p->lost, p->idle_s, p->in, p->fl, h->mpi };
	wf_clear(h->wfg);
	int rc = hb_waits_build(h->wfg, h->s, &lk);
	if (!rc)
		rc = wf_analyze(h->wfg);
	if (!rc)
		rc = hb_waits_confirm(h->wfg, h->s, &lk);
	if (rc && !h->wf_failed) {
		fprintf(stderr, "%s: who waits for whom: %s\n", prog, ps_strerror(rc));
		h->wf_failed = true;
	}
	h->deadlocked |= !rc && wf_deadlocks(h->wfg) > 0;
	return !rc;
}

/* Each thread's verdict for the period, counted and kept. */
static void tally(struct hb *h, const struct look *p, struct hb_period *out)
{
	size_t used = 0;
	for (int t = 0; t < h->n; t++) {
		struct hb_thread *x = &h->th[t];
		x->stalled_now = 0;
		if (p->lost[t]) {
			out->unreachable++;
		} else if (p->progressed[t]) {
			x->progress_periods++;
			out->progressing++;
			x->ended = 0;
		} else if (p->stall[t] && out->looked && wf_state_of(h->wfg, t) == WF_ENDED) {
			out->ended++; /* a rank that finished is not stalled */
			x->ended = 1;
		} else if (p->stall[t]) {
			x->stalled_now = 1;
			x->stalled_periods++;
			out->stalled++;
			describe(h->s, out->looked ? h->wfg : NULL, t, p->in[t], &p->fl[t], x->where,
				 sizeof(x->where));
			used += (size_t)snprintf(out->line + used,
						 used < sizeof(out->line) ? sizeof(out->line) - used : 0, "%s%s (%s)",
						 out->stalled > 1 ? ", " : "", es_scope_thread(h->s, t), x->where);
		} else if (es_trace_empty(&h->beat[t])) {
			out->idle++;
		}
	}
}

int hb_step(hb *h, const char *prog, struct hb_period *out)
{
	*out = (struct hb_period){ 0 };
	int rc = take_new_threads(h);
	if (rc < 0)
		return rc;
	out->more_threads = rc > 0;
	if (!h->fed && (rc = es_scope_pull(h->s, h->beat)))
		return rc;
	struct look p;
	if ((rc = look_alloc(&p, h->n)))
		return rc;
	judge(h, &p, out);
	out->looked = look(h, &p, prog);
	tally(h, &p, out);
	look_free(&p);
	return 0;
}
