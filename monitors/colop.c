/* colop.c - colopmon's judgement: per collective its latency, the last contributor and the imbalance; tree nodes' contributions; ranks' MPI shares and the wait states, with the triggers that keep the black box. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/colls.h"
#include "monitors/colop.h"
#include "monitors/resolve.h"
#include "monitors/waitlive.h"

struct kind_sum {
	unsigned long n;
	double lat_sum, lat_max, imb_max;
	int *last_counts;
	int nlast;
};

/* a rank's time inside MPI calls in the current second of its events */
struct share {
	uint64_t from, in_mpi; /* ns */
};

/* the last second's periods, for --wait-above: each one's time, pattern's and MPI's ns */
struct period_sum {
	uint64_t at, ns, mpi;
};

/* PATHS trees: an edge's contributions, and a node's operation as its
 * children's arrive */
struct edge {
	char tree[32];
	int node, child;
	uint64_t writes;
};
struct nodeop {
	char tree[32];
	int node;
	uint64_t op;
	int nchildren_seen;
	uint64_t first, last;
	int last_child;
};

struct co {
	struct co_opts o;
	FILE *out;
	cm *colls;
	es_mpi *view;
	int *rank;           /* by leaf: its MPI rank, or -1 (a PATHS thread) */
	int mpi_ranks, max_rank;
	struct kind_sum kinds[256];
	struct mon_snapshot snap;
	struct share *shares;
	int nshares;
	mon_rs *rs;          /* every MPI tuple resolved (resolve.c) ... */
	wl *live;            /* ... for the wait states (waitlive.c) */
	ar_symbols *sym;
	uint64_t newest;     /* the latest end consumed: the engine's now */
	struct period_sum recent[256];
	unsigned nrecent;
	struct ws_stats was; /* what the wait states could not judge, as last said */
	struct edge edges[1024];
	int nedges;
	struct nodeop nodeops[4096];
	int nnodeops;
	unsigned long tree_ops;
};

int co_create(const struct co_opts *o, co **out)
{
	co *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *o;
	c->out = o->out ? o->out : stdout;
	c->max_rank = -1;
	c->snap = (struct mon_snapshot){ .dir = o->snapshot, .job = o->job };
	bool waits = o->waits || o->wait_pattern >= 0;
	if (cm_create(&c->colls) || (waits && (mon_rs_create(&c->rs) || wl_create(&c->live)))) {
		co_destroy(c);
		return -ENOMEM;
	}
	if (c->live && ar_symbols_create(&c->sym))
		c->sym = NULL; /* call sites then named by their numbers */
	*out = c;
	return 0;
}

void co_destroy(co *c)
{
	if (!c)
		return;
	for (int k = 0; k < 256; k++)
		free(c->kinds[k].last_counts);
	cm_destroy(c->colls);
	free(c->shares);
	free(c->rank);
	wl_destroy(c->live);
	mon_rs_destroy(c->rs);
	ar_symbols_destroy(c->sym);
	es_mpi_close(c->view);
	free(c);
}

int co_mpi_ranks(const co *c) { return c->mpi_ranks; }
int co_tree_edges(const co *c) { return c->nedges; }

/* The black box on the first trigger (mon_snapshot), a failure said. */
static void snapshot(co *c, const char *why)
{
	char err[4800];
	if (mon_snapshot("colopmon", &c->snap, why, NULL, NULL, err, sizeof(err)))
		fprintf(stderr, "colopmon: no snapshot of job %s in %s: %s\n", c->snap.job, c->snap.dir, err);
}

/* --- MPI collectives: matched across ranks (colls.c) ------------------------- */

/* A second of a rank's events judged: the trigger if the rank was inside
 * MPI more than the bound. */
static void judge_second(co *c, int rank, uint64_t in_mpi)
{
	double pct = 100.0 * (double)in_mpi / 1e9;
	if (pct > c->o.mpi_above) {
		char why[200];
		snprintf(why, sizeof(why), "rank %d was inside MPI %.1f%% of 1.00 s (--mpi-above %g)", rank, pct,
			 c->o.mpi_above);
		snapshot(c, why);
	}
}

/* A rank's MPI call (not a completion, phase or set-up) counted in its
 * seconds: each second, from the first event after a quiet one, gets the
 * part of each call inside it, so a wait of two seconds fills a second
 * whatever came before it; a second is judged once an event reaches past
 * its end (one that never is, the job's last, is not). */
static void count_share(co *c, const struct es_trace *t, int rank)
{
	const uint64_t second = 1000000000ull;
	if (c->o.mpi_above < 0 || !es_in_mpi_call(t->op) || t->end < t->start)
		return;
	if (rank >= c->nshares) {
		struct share *v = realloc(c->shares, sizeof(*v) * (size_t)(rank + 1));
		if (!v)
			return;
		memset(v + c->nshares, 0, sizeof(*v) * (size_t)(rank + 1 - c->nshares));
		c->shares = v;
		c->nshares = rank + 1;
	}
	struct share *sh = &c->shares[rank];
	uint64_t s = t->start;
	if (sh->from && s >= sh->from + second) { /* its second ended before this call began */
		judge_second(c, rank, sh->in_mpi);
		sh->from = 0;
	}
	if (!sh->from)
		*sh = (struct share){ .from = s };
	while (t->end >= sh->from + second) {
		uint64_t till = sh->from + second;
		sh->in_mpi += s < till ? till - (s > sh->from ? s : sh->from) : 0;
		judge_second(c, rank, sh->in_mpi);
		*sh = (struct share){ .from = till };
		s = s > till ? s : till;
	}
	sh->in_mpi += t->end - (s > sh->from ? s : sh->from);
}

/* A collective every member reported: its kind's sums, its line, the trigger. */
static void coll_done(co *c, const struct cm_done *d)
{
	unsigned code = d->code;
	double lat = d->lat_ms, imb = d->imb_ms;
	struct kind_sum *k = &c->kinds[code & 255];
	if (k->nlast <= c->max_rank) {
		int *p = realloc(k->last_counts, sizeof(int) * (size_t)(c->max_rank + 1));
		if (p) {
			memset(p + k->nlast, 0, sizeof(int) * (size_t)(c->max_rank + 1 - k->nlast));
			k->last_counts = p;
			k->nlast = c->max_rank + 1;
		}
	}
	k->n++;
	k->lat_sum += lat;
	k->lat_max = lat > k->lat_max ? lat : k->lat_max;
	k->imb_max = imb > k->imb_max ? imb : k->imb_max;
	if (d->last_rank < k->nlast)
		k->last_counts[d->last_rank]++;
	if (c->o.imbalance_ms >= 0 && imb > c->o.imbalance_ms) {
		char why[300];
		snprintf(why, sizeof(why), "%s #%u: imbalance %.3f ms (--imbalance %g), last in: rank %d",
			 es_op_name(code), d->num, imb, c->o.imbalance_ms, d->last_rank);
		snapshot(c, why);
	}
	if (!c->o.quiet) {
		char root[32] = "";
		if (d->root != 0xffffffffu)
			snprintf(root, sizeof(root), ", root %u", d->root);
		fprintf(c->out, "%-18s #%-5u latency %9.3f ms, last in: rank %d, imbalance %9.3f ms%s%s\n", es_op_name(code),
		       d->num, lat, d->last_rank, imb, root, d->members != c->mpi_ranks ? " (a smaller communicator)" : "");
	}
}

static void mpi_event(co *c, const struct es_trace *t, int leaf, int rank)
{
	count_share(c, t, rank);
	c->newest = t->end > c->newest ? t->end : c->newest;
	struct es_event e;
	int rc = c->live ? mon_rs_event(c->rs, c->view, t, leaf, rank, &e) : MON_RS_MARK;
	if (c->live && (rc < 0 || (rc == 0 && wl_event(c->live, &e)))) {
		fprintf(stderr, "colopmon: no memory for the wait states: they stop here\n");
		wl_destroy(c->live);
		c->live = NULL;
	}
	struct cm_done d;
	if (c->view && cm_event(c->colls, c->view, t, rank, &d))
		coll_done(c, &d);
}

/* --- PATHS trees: per internal node, the arrivals on its edges ----------------- */

/* Edges a node has, learnt from the collectors' es.meta. */
static int node_edges(const co *c, const char *tree, int node)
{
	int n = 0;
	for (int i = 0; i < c->nedges; i++)
		n += !strcmp(c->edges[i].tree, tree) && c->edges[i].node == node;
	return n;
}

/* A leaf's tree edge, counted once: every process of the tree has a
 * collector on every edge. */
static void add_edge(co *c, const struct es_leaf *l)
{
	struct edge e = { .writes = 0 };
	if (c->nedges == (int)(sizeof(c->edges) / sizeof(c->edges[0])) ||
	    !paths_tree_edge_of(l->meta.where, e.tree, sizeof(e.tree), &e.node, &e.child))
		return;
	for (int k = 0; k < c->nedges; k++)
		if (!strcmp(c->edges[k].tree, e.tree) && c->edges[k].node == e.node && c->edges[k].child == e.child)
			return;
	c->edges[c->nedges++] = e;
}

int co_identify(co *c, const es_scope *s)
{
	int *rank = calloc((size_t)es_scope_leaves(s) + 1, sizeof(int));
	if (!rank)
		return -ENOMEM;
	free(c->rank);
	c->rank = rank;
	const char *prev = NULL;
	c->mpi_ranks = 0;
	for (int i = 0; i < es_scope_leaves(s); i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		rank[i] = l->rank;
		if (rank[i] >= 0) {
			c->max_rank = rank[i] > c->max_rank ? rank[i] : c->max_rank;
			if (!prev || strcmp(prev, l->segment))
				c->mpi_ranks++;
			prev = l->segment;
		}
		add_edge(c, l);
	}
	/* the ranks' communicators: read whole once, then what is new */
	es_mpi_close(c->view);
	if (es_mpi_open(s, &c->view))
		c->view = NULL;
	return 0;
}

static void tree_event(co *c, const struct es_trace *t, const char *where)
{
	char tree[32];
	int node, child;
	if (es_op_code(t->op) != ES_OP_WRITE || !paths_tree_edge_of(where, tree, sizeof(tree), &node, &child))
		return;
	struct edge *e = NULL;
	for (int i = 0; i < c->nedges && !e; i++)
		if (!strcmp(c->edges[i].tree, tree) && c->edges[i].node == node && c->edges[i].child == child)
			e = &c->edges[i];
	if (!e)
		return;
	/* the write's own index on its edge is the operation's number: every
	 * operation writes each edge once, so discards cannot shift it */
	uint64_t op = t->arg;
	e->writes++;
	struct nodeop *no = NULL;
	for (int i = 0; i < c->nnodeops && !no; i++)
		if (!strcmp(c->nodeops[i].tree, tree) && c->nodeops[i].node == node && c->nodeops[i].op == op)
			no = &c->nodeops[i];
	if (!no) {
		if (c->nnodeops == (int)(sizeof(c->nodeops) / sizeof(c->nodeops[0])))
			c->nnodeops = 0; /* forget the oldest unfinished ones */
		no = &c->nodeops[c->nnodeops++];
		memset(no, 0, sizeof(*no));
		snprintf(no->tree, sizeof(no->tree), "%s", tree);
		no->node = node;
		no->op = op;
		no->first = UINT64_MAX;
	}
	no->nchildren_seen++;
	if (t->end < no->first)
		no->first = t->end;
	if (t->end >= no->last) {
		no->last = t->end;
		no->last_child = child;
	}
	if (no->nchildren_seen < node_edges(c, tree, node))
		return;
	c->tree_ops++;
	if (!c->o.quiet)
		fprintf(c->out, "tree %-10s node %-3d op #%-5llu contributions arrived over %9.3f ms, last: child %d\n", tree, node,
		       (unsigned long long)op, (double)(no->last - no->first) / 1e6, no->last_child);
	*no = c->nodeops[--c->nnodeops]; /* done: drop it */
}

void co_refreshed(co *c)
{
	if (c->view) /* the communicators these tuples name are listed by now */
		es_mpi_refresh(c->view);
	if (c->rs)
		mon_rs_refreshed(c->rs);
}

void co_event(co *c, const es_scope *s, const struct es_trace *t, int leaf)
{
	if (c->rank[leaf] >= 0)
		mpi_event(c, t, leaf, c->rank[leaf]);
	else
		tree_event(c, t, es_scope_leaf(s, leaf)->meta.where);
}

/* --- the wait states ---------------------------------------------------------------- */

/* --wait-above: the pattern's share of the ranks' MPI time over the last
 * second of periods, the black box kept when it passes the bound. */
static void wait_trigger(co *c, const struct wl_period *w)
{
	c->recent[c->nrecent++ % 256] = (struct period_sum){ c->newest, w->ns[c->o.wait_pattern], w->mpi_ns };
	uint64_t ns = 0, mpi = 0;
	for (unsigned i = 0; i < c->nrecent && i < 256; i++)
		if (c->recent[i].at + 1000000000ull > c->newest)
			ns += c->recent[i].ns, mpi += c->recent[i].mpi;
	double pct = mpi ? 100.0 * (double)ns / (double)mpi : 0;
	if (pct > c->o.wait_pct) {
		char why[300];
		snprintf(why, sizeof(why), "%s was %.1f%% of the ranks' time in MPI over the last second (--wait-above %s:%g)",
			 ws_pattern_name(c->o.wait_pattern), pct, ws_pattern_key(c->o.wait_pattern), c->o.wait_pct);
		snapshot(c, why);
	}
}

/* What the wait states could not judge, said in the period it grew. */
static void waits_unseen(co *c)
{
	struct ws_stats st;
	ws_stats(wl_engine(c->live), &st);
	if (st.unpaired == c->was.unpaired && st.incomplete == c->was.incomplete && st.given_up == c->was.given_up &&
	    st.unseen_calls == c->was.unseen_calls)
		return;
	fprintf(c->out, "waits not judged in full so far: %llu message ends without their other end, %llu collectives "
	       "without every member, %llu calls given up after %u s, %llu completions whose wait was not seen\n",
	       (unsigned long long)st.unpaired, (unsigned long long)st.incomplete, (unsigned long long)st.given_up,
	       WL_HORIZON_S, (unsigned long long)st.unseen_calls);
	c->was = st;
}

void co_period(co *c)
{
	if (!c->live)
		return;
	struct wl_period w;
	if (wl_period(c->live, c->newest, &w)) {
		fprintf(stderr, "colopmon: no memory for a period's wait states\n");
		return;
	}
	if (c->o.wait_pattern >= 0)
		wait_trigger(c, &w);
	bool say = c->o.waits && !c->o.quiet;
	for (size_t i = 0; say && i < w.n; i++) {
		const struct wl_row *r = &w.rows[i];
		if (r->pattern == WS_BARRIER_COMPLETION || r->pattern == WS_NXN_COMPLETION)
			continue; /* not waits: in the summary only */
		char by[32] = "", call[64];
		const char *where = wl_name(c->live, c->view, c->sym, r->thread, r->rank, r->site);
		if (r->by >= 0)
			snprintf(by, sizeof(by), ", caused by rank %d", r->by);
		snprintf(call, sizeof(call), r->of ? "%s(%s)" : "%s", es_op_name(r->op), es_op_name(r->of) + 4);
		fprintf(c->out, "wait %s: rank %d, %s at %s: %.3f ms%s\n", ws_pattern_name(r->pattern), r->rank, call, where,
		       (double)r->ns / 1e6, by);
	}
	wl_period_free(&w);
	if (say)
		waits_unseen(c);
}

/* The wait states' places, the most first: --places of them, the rest summed. */
static void waits_places(co *c)
{
	struct wl_place *pl;
	size_t np;
	if (wl_places(c->live, c->view, c->sym, &pl, &np)) {
		np = 0, pl = NULL;
		fprintf(c->out, "  (no memory to list the wait states by place)\n");
	}
	uint64_t rest = 0;
	size_t shown = c->o.places && c->o.places < np ? c->o.places : np;
	for (size_t i = shown; i < np; i++)
		rest += pl[i].ns;
	for (size_t i = 0; i < shown; i++) {
		char call[64];
		snprintf(call, sizeof(call), pl[i].of ? "%s(%s)" : "%s", es_op_name(pl[i].op), es_op_name(pl[i].of) + 4);
		fprintf(c->out, "    %s at rank %d, %s in %s: %.3f ms in %llu\n", ws_pattern_name(pl[i].pattern), pl[i].rank, call,
		       pl[i].where, (double)pl[i].ns / 1e6, (unsigned long long)pl[i].count);
	}
	if (shown < np)
		fprintf(c->out, "    and %zu more places, %.3f ms in all (--places 0 lists them)\n", np - shown, (double)rest / 1e6);
	wl_places_free(pl, np);
}

/* --waits: each pattern's time over the whole watch, and what was not judged. */
static void waits_summary(co *c)
{
	const ws *w = wl_engine(c->live);
	ws_flush((ws *)w, UINT64_MAX); /* the run is over: what waited for an end is judged without it */
	const struct ws_row *r;
	size_t n = ws_rows(w, &r);
	uint64_t by[WS_NPATTERNS] = { 0 }, mpi = 0;
	for (size_t i = 0; i < n; i++)
		by[r[i].pattern] += r[i].ns;
	for (int k = 0; k < ws_ranks(w); k++)
		mpi += ws_mpi_ns(w, k);
	for (int p = 0; p < WS_NPATTERNS; p++)
		if (by[p])
			fprintf(c->out, "  wait state %-44s %12.3f ms, %6.2f%% of MPI time\n", ws_pattern_name(p), (double)by[p] / 1e6,
			       mpi ? 100.0 * (double)by[p] / (double)mpi : 0.0);
	fprintf(c->out, "  time in MPI calls:");
	for (int k = 0; k < ws_ranks(w); k++)
		fprintf(c->out, "%s rank %d %.3f ms", k ? "," : "", k, (double)ws_mpi_ns(w, k) / 1e6);
	fputc('\n', c->out);
	waits_places(c);
	struct ws_stats st;
	ws_stats(w, &st);
	char nonum[120] = "";
	if (mon_rs_unnumbered(c->rs))
		snprintf(nonum, sizeof(nonum), " (%llu of them without a number: their channel's mark was lost)",
			 (unsigned long long)mon_rs_unnumbered(c->rs));
	fprintf(c->out, "  wait states judged from %llu events: %llu receives, %llu sends, %llu collectives; %llu message ends "
	       "without their other end%s, %llu collectives without every member\n", (unsigned long long)st.events,
	       (unsigned long long)st.receives, (unsigned long long)st.sends, (unsigned long long)st.colls,
	       (unsigned long long)st.unpaired, nonum, (unsigned long long)st.incomplete);
	if (st.given_up || st.unseen_calls)
		fprintf(c->out, "  not judged in full: %llu calls whose other ends had not come within %u s (judged without them), "
		       "%llu completions whose wait or test was not seen (paired, not judged)\n",
		       (unsigned long long)st.given_up, WL_HORIZON_S, (unsigned long long)st.unseen_calls);
}

void co_summary(co *c, const struct mon_watch *w, uint64_t missed, uint64_t before)
{
	fprintf(c->out, "colopmon: summary%s%s", mon_watch_end(w), missed ? "" : " (no event was lost while it watched)");
	if (before)
		fprintf(c->out, "; %llu earlier events had rotated out before it attached", (unsigned long long)before);
	fputc('\n', c->out);
	for (int k = 0; k < 256; k++) {
		struct kind_sum *x = &c->kinds[k];
		if (!x->n)
			continue;
		int most = 0;
		for (int r = 1; r < x->nlast; r++)
			most = x->last_counts[r] > x->last_counts[most] ? r : most;
		fprintf(c->out, "  %-18s %6lu calls, latency mean %9.3f ms, max %9.3f ms; worst imbalance "
		       "%9.3f ms; last in most often: rank %d (%d times)\n", es_op_name((unsigned)k), x->n,
		       x->lat_sum / (double)x->n, x->lat_max, x->imb_max, most, x->nlast ? x->last_counts[most] : 0);
	}
	if (c->tree_ops)
		fprintf(c->out, "  %lu tree node operations seen complete\n", c->tree_ops);
	if (c->live && c->o.waits)
		waits_summary(c);
	if (missed)
		fprintf(c->out, "  %llu events were discarded before they could be read: operations that lost "
		       "theirs are not reported\n", (unsigned long long)missed);
}
