/* colopmon.c - the collective-operation monitor: per collective, its latency, the last contributor and the imbalance. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"
#include "waitlive.h"

static const char *usage =
	"usage: colopmon [options] JOB\n"
	"Follows the collective operations of JOB on this host and reports, for\n"
	"each one, when every participant arrived and left:\n"
	" - MPI collectives recorded by libescollect.so (trace spaces JOB.rN):\n"
	"   latency (first arrival to last departure), the last rank to arrive,\n"
	"   and the imbalance (last arrival minus first);\n"
	" - PATHS trees with collectors on their edges (pathmap trees with\n"
	"   collectors: true): for each internal node, the arrival of every\n"
	"   child's contribution and the last contributor.\n"
	"Timestamps of all processes of the host share one clock (CLOCK_MONOTONIC).\n"
	"  -p, --period MS      longest time between pulls (default 200); shorter when the\n"
	"                       job writes faster than its trace elements hold that long\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	"  -q, --quiet          no line per operation, only the summary\n"
	"      --snapshot DIR   keep an archive of what every trace element holds, the\n"
	"                       first time a trigger below holds (the last seconds\n"
	"                       before it, for esprofile and esconvert)\n"
	"      --imbalance MS   trigger: a collective whose imbalance passes MS\n"
	"      --mpi-above PCT  trigger: a rank inside MPI more than PCT% of a second\n"
	"      --waits          also Scalasca's wait states, once a period: each\n"
	"                       pattern's time at each call site of each rank, and\n"
	"                       the rank that caused most of it; at the end, each\n"
	"                       pattern's total and the places that spent most\n"
	"      --places N       how many places the end lists (default 15; 0: all)\n"
	"      --wait-above PATTERN:PCT  trigger: a wait-state pattern (late_sender, wait_nxn,\n"
	"                       late_broadcast...) more than PCT% of the ranks' time in\n"
	"                       MPI over the last second\n"
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n";

/* --- MPI collectives: matched across ranks (colls.c) ------------------------- */

static cm *colls;
static int mpi_ranks, max_rank = -1;
static es_mpi *view;

struct kind_sum {
	unsigned long n;
	double lat_sum, lat_max, imb_max;
	int *last_counts;
	int nlast;
};
static struct kind_sum kinds[256];

/* The snapshot and its triggers (--imbalance, --mpi-above); per rank, its
 * time inside MPI calls in the current second of its events. */
static struct mon_snapshot snap;
static double imbalance_ms = -1, mpi_above = -1;
struct share {
	uint64_t from, in_mpi; /* ns */
};
static struct share *shares;
static int nshares;

/* --waits, --wait: the wait states, fed every MPI tuple (waitlive.c) */
static wl *live;
static bool print_waits;
static size_t nplaces = 15; /* --places: 0 lists all */
static int wait_pattern = -1;
static double wait_pct = -1;
static ar_symbols *sym;
static uint64_t newest; /* the latest end consumed: the engine's now */
/* the last second's periods, for --wait: each one's time, pattern's and MPI's ns */
struct period_sum {
	uint64_t at, ns, mpi;
};
static struct period_sum recent[256];
static unsigned nrecent;

/* The black box on the first trigger (mon_snapshot), a failure said. */
static void snapshot(const char *why)
{
	char err[4800];
	if (mon_snapshot("colopmon", &snap, why, NULL, NULL, err, sizeof(err)))
		fprintf(stderr, "colopmon: no snapshot of job %s in %s: %s\n", snap.job, snap.dir, err);
}

/* A second of a rank's events judged: the trigger if the rank was inside
 * MPI more than the bound. */
static void judge_second(int rank, uint64_t in_mpi)
{
	double pct = 100.0 * (double)in_mpi / 1e9;
	if (pct > mpi_above) {
		char why[200];
		snprintf(why, sizeof(why), "rank %d was inside MPI %.1f%% of 1.00 s (--mpi-above %g)", rank, pct,
			 mpi_above);
		snapshot(why);
	}
}

/* A rank's MPI call (not a completion, phase or set-up) counted in its
 * seconds: each second, from the first event after a quiet one, gets the
 * part of each call inside it, so a wait of two seconds fills a second
 * whatever came before it; a second is judged once an event reaches past
 * its end (one that never is, the job's last, is not). */
static void count_share(const struct es_trace *t, int rank)
{
	const uint64_t second = 1000000000ull;
	if (mpi_above < 0 || !es_in_mpi_call(t->op) || t->end < t->start)
		return;
	if (rank >= nshares) {
		struct share *v = realloc(shares, sizeof(*v) * (size_t)(rank + 1));
		if (!v)
			return;
		memset(v + nshares, 0, sizeof(*v) * (size_t)(rank + 1 - nshares));
		shares = v;
		nshares = rank + 1;
	}
	struct share *sh = &shares[rank];
	uint64_t s = t->start;
	if (sh->from && s >= sh->from + second) { /* its second ended before this call began */
		judge_second(rank, sh->in_mpi);
		sh->from = 0;
	}
	if (!sh->from)
		*sh = (struct share){ .from = s };
	while (t->end >= sh->from + second) {
		uint64_t till = sh->from + second;
		sh->in_mpi += s < till ? till - (s > sh->from ? s : sh->from) : 0;
		judge_second(rank, sh->in_mpi);
		*sh = (struct share){ .from = till };
		s = s > till ? s : till;
	}
	sh->in_mpi += t->end - (s > sh->from ? s : sh->from);
}

static void mpi_event(const struct es_trace *t, int leaf, int rank, bool quiet)
{
	count_share(t, rank);
	newest = t->end > newest ? t->end : newest;
	if (live && wl_event(live, view, t, leaf, rank)) {
		fprintf(stderr, "colopmon: no memory for the wait states: they stop here\n");
		wl_destroy(live);
		live = NULL;
	}
	struct cm_done d;
	if (!view || !cm_event(colls, view, t, rank, &d))
		return;
	unsigned code = d.code;
	double lat = d.lat_ms, imb = d.imb_ms;
	struct kind_sum *k = &kinds[code & 255];
	if (k->nlast <= max_rank) {
		int *p = realloc(k->last_counts, sizeof(int) * (size_t)(max_rank + 1));
		if (p) {
			memset(p + k->nlast, 0, sizeof(int) * (size_t)(max_rank + 1 - k->nlast));
			k->last_counts = p;
			k->nlast = max_rank + 1;
		}
	}
	k->n++;
	k->lat_sum += lat;
	k->lat_max = lat > k->lat_max ? lat : k->lat_max;
	k->imb_max = imb > k->imb_max ? imb : k->imb_max;
	if (d.last_rank < k->nlast)
		k->last_counts[d.last_rank]++;
	if (imbalance_ms >= 0 && imb > imbalance_ms) {
		char why[300];
		snprintf(why, sizeof(why), "%s #%u: imbalance %.3f ms (--imbalance %g), last in: rank %d",
			 es_op_name(code), d.num, imb, imbalance_ms, d.last_rank);
		snapshot(why);
	}
	if (!quiet) {
		char root[32] = "";
		if (d.root != 0xffffffffu)
			snprintf(root, sizeof(root), ", root %u", d.root);
		printf("%-18s #%-5u latency %9.3f ms, last in: rank %d, imbalance %9.3f ms%s%s\n",
		       es_op_name(code), d.num, lat, d.last_rank, imb, root,
		       d.members != mpi_ranks ? " (a smaller communicator)" : "");
	}
}


/* --- PATHS trees: per internal node, the arrivals on its edges ----------------- */

struct edge {
	char tree[32];
	int node, child;
	uint64_t writes;       /* contributions seen so far: the next one's op number */
};

struct nodeop {
	char tree[32];
	int node;
	uint64_t op;
	int nchildren_seen;
	uint64_t first, last;
	int last_child;
};

static struct edge edges[1024];
static int nedges;
static struct nodeop nodeops[4096];
static int nnodeops;
static unsigned long tree_ops;

/* Edges a node has, learnt from the collectors' es.meta. */
static int node_edges(const char *tree, int node)
{
	int n = 0;
	for (int i = 0; i < nedges; i++)
		n += !strcmp(edges[i].tree, tree) && edges[i].node == node;
	return n;
}

/* Who is who: MPI ranks by their spaces, tree edges by their paths. */
static int identify(const es_scope *s, int **rank_of_leaf)
{
	int *rank = calloc((size_t)es_scope_leaves(s) + 1, sizeof(int));
	if (!rank)
		return -ENOMEM;
	free(*rank_of_leaf);
	*rank_of_leaf = rank;
	const char *prev = NULL;
	mpi_ranks = 0;
	for (int i = 0; i < es_scope_leaves(s); i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		rank[i] = l->rank;
		if (rank[i] >= 0) {
			max_rank = rank[i] > max_rank ? rank[i] : max_rank;
			if (!prev || strcmp(prev, l->segment))
				mpi_ranks++;
			prev = l->segment;
		}
		struct edge e = { .writes = 0 };
		if (nedges < (int)(sizeof(edges) / sizeof(edges[0])) &&
		    paths_tree_edge_of(l->meta.where, e.tree, sizeof(e.tree), &e.node, &e.child)) {
			/* every process of the tree has a collector on every edge;
			 * an edge counts once */
			bool seen = false;
			for (int k = 0; k < nedges && !seen; k++)
				seen = !strcmp(edges[k].tree, e.tree) && edges[k].node == e.node &&
				       edges[k].child == e.child;
			if (!seen)
				edges[nedges++] = e;
		}
	}
	/* the ranks' communicators: read whole once, then what is new */
	es_mpi_close(view);
	if (es_mpi_open(s, &view))
		view = NULL;
	return 0;
}

static void tree_event(const struct es_trace *t, const char *where, bool quiet)
{
	char tree[32];
	int node, child;
	if (es_op_code(t->op) != ES_OP_WRITE || !paths_tree_edge_of(where, tree, sizeof(tree), &node, &child))
		return;
	struct edge *e = NULL;
	for (int i = 0; i < nedges && !e; i++)
		if (!strcmp(edges[i].tree, tree) && edges[i].node == node && edges[i].child == child)
			e = &edges[i];
	if (!e)
		return;
	/* the write's own index on its edge is the operation's number: every
	 * operation writes each edge once, so discards cannot shift it */
	uint64_t op = t->arg;
	e->writes++;
	struct nodeop *no = NULL;
	for (int i = 0; i < nnodeops && !no; i++)
		if (!strcmp(nodeops[i].tree, tree) && nodeops[i].node == node && nodeops[i].op == op)
			no = &nodeops[i];
	if (!no) {
		if (nnodeops == (int)(sizeof(nodeops) / sizeof(nodeops[0])))
			nnodeops = 0; /* forget the oldest unfinished ones */
		no = &nodeops[nnodeops++];
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
	if (no->nchildren_seen < node_edges(tree, node))
		return;
	tree_ops++;
	if (!quiet)
		printf("tree %-10s node %-3d op #%-5llu contributions arrived over %9.3f ms, last: child %d\n",
		       tree, node, (unsigned long long)op, (double)(no->last - no->first) / 1e6,
		       no->last_child);
	*no = nodeops[--nnodeops]; /* done: drop it */
}

/* --wait-above PATTERN:PCT; 0 or says what was expected. */
static int parse_wait(const char *arg)
{
	char name[64], *end;
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;
	if (colon && n < sizeof(name)) {
		memcpy(name, arg, n);
		name[n] = 0;
		wait_pattern = ws_pattern_of(name);
		wait_pct = strtod(colon + 1, &end);
		end += *end == '%';
	}
	if (!colon || wait_pattern < 0 || end == colon + 1 || *end || wait_pct < 0 || wait_pct > 100) {
		fprintf(stderr, "colopmon: --wait-above %s: expected PATTERN:PCT, PATTERN one of", arg);
		for (int p = 0; p < WS_NPATTERNS; p++)
			fprintf(stderr, " %s", ws_pattern_key(p));
		fprintf(stderr, ", PCT a share of MPI time from 0 to 100\n");
		return -1;
	}
	return 0;
}

struct opts {
	double period, wait; /* s */
	bool quiet;
	const char *job;
};

/* -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "period", required_argument, NULL, 'p' }, { "wait", required_argument, NULL, 'w' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ "snapshot", required_argument, NULL, 'A' }, { "imbalance", required_argument, NULL, 'I' },
		{ "mpi-above", required_argument, NULL, 'M' }, { "waits", no_argument, NULL, 'W' },
		{ "wait-above", required_argument, NULL, 'X' },
		{ "places", required_argument, NULL, 'P' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
	*o = (struct opts){ .period = 0.2, .wait = 10 };
	int c;
	while ((c = getopt_long(argc, argv, "p:w:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->period = mon_number("colopmon", "--period", optarg, 1) / 1000; break;
		case 'w': o->wait = mon_number("colopmon", "--wait", optarg, 0); break;
		case 'q': o->quiet = true; break;
		case 'A': snap.dir = optarg; break;
		case 'I': imbalance_ms = mon_number("colopmon", "--imbalance", optarg, 0); break;
		case 'M': mpi_above = mon_number("colopmon", "--mpi-above", optarg, 0); break;
		case 'W': print_waits = true; break;
		case 'P': {
			double v = mon_number("colopmon", "--places", optarg, 0);
			nplaces = v >= 1e9 ? 0 : (size_t)v; /* more than any job has: all */
			break;
		}
		case 'X': if (parse_wait(optarg)) return 2; break;
		case MH_OPT_CODE: if (mh_opt("colopmon", optarg)) return 2; break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "colopmon: expected one JOB name\n%s", usage);
		return 2;
	}
	o->job = argv[optind];
	snap.job = o->job;
	if ((imbalance_ms >= 0 || mpi_above >= 0 || wait_pattern >= 0) != (snap.dir != NULL)) {
		fprintf(stderr, "colopmon: --snapshot DIR goes with a trigger (--imbalance MS, "
			"--mpi-above PCT, --wait-above PATTERN:PCT), and they with it\n");
		return 2;
	}
	return -1;
}

/* --waits: each pattern's time over the whole watch, and what was not judged. */
static void waits_summary(void)
{
	const ws *w = wl_engine(live);
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
			printf("  wait state %-44s %12.3f ms, %6.2f%% of MPI time\n", ws_pattern_name(p), (double)by[p] / 1e6,
			       mpi ? 100.0 * (double)by[p] / (double)mpi : 0.0);
	printf("  time in MPI calls:");
	for (int k = 0; k < ws_ranks(w); k++)
		printf("%s rank %d %.3f ms", k ? "," : "", k, (double)ws_mpi_ns(w, k) / 1e6);
	putchar('\n');
	struct wl_place *pl;
	size_t np;
	if (wl_places(live, view, sym, &pl, &np)) {
		np = 0, pl = NULL;
		printf("  (no memory to list the wait states by place)\n");
	}
	uint64_t rest = 0;
	size_t shown = nplaces && nplaces < np ? nplaces : np;
	for (size_t i = shown; i < np; i++)
		rest += pl[i].ns;
	for (size_t i = 0; i < shown; i++) {
		char call[64];
		snprintf(call, sizeof(call), pl[i].of ? "%s(%s)" : "%s", es_op_name(pl[i].op), es_op_name(pl[i].of) + 4);
		printf("    %s at rank %d, %s in %s: %.3f ms in %llu\n", ws_pattern_name(pl[i].pattern), pl[i].rank, call,
		       pl[i].where, (double)pl[i].ns / 1e6, (unsigned long long)pl[i].count);
	}
	if (shown < np)
		printf("    and %zu more places, %.3f ms in all (--places 0 lists them)\n", np - shown, (double)rest / 1e6);
	wl_places_free(pl, np);
	struct ws_stats st;
	ws_stats(w, &st);
	char nonum[120] = "";
	if (wl_unnumbered(live))
		snprintf(nonum, sizeof(nonum), " (%llu of them without a number: their channel's mark was lost)",
			 (unsigned long long)wl_unnumbered(live));
	printf("  wait states judged from %llu events: %llu receives, %llu sends, %llu collectives; %llu message ends "
	       "without their other end%s, %llu collectives without every member\n", (unsigned long long)st.events,
	       (unsigned long long)st.receives, (unsigned long long)st.sends, (unsigned long long)st.colls,
	       (unsigned long long)st.unpaired, nonum, (unsigned long long)st.incomplete);
	if (st.given_up || st.unseen_calls)
		printf("  not judged in full: %llu calls whose other ends had not come within %u s (judged without them), "
		       "%llu completions whose wait or test was not seen (paired, not judged)\n",
		       (unsigned long long)st.given_up, WL_HORIZON_S, (unsigned long long)st.unseen_calls);
}

/* Per kind of collective: its calls, latency, imbalance and who came last. */
static void summary(const struct mon_watch *w, uint64_t missed, uint64_t before)
{
	printf("colopmon: summary%s%s", mon_watch_end(w),
	       missed ? "" : " (no event was lost while it watched)");
	if (before)
		printf("; %llu earlier events had rotated out before it attached",
		       (unsigned long long)before);
	putchar('\n');
	for (int k = 0; k < 256; k++) {
		struct kind_sum *x = &kinds[k];
		if (!x->n)
			continue;
		int most = 0;
		for (int r = 1; r < x->nlast; r++)
			most = x->last_counts[r] > x->last_counts[most] ? r : most;
		printf("  %-18s %6lu calls, latency mean %9.3f ms, max %9.3f ms; worst imbalance "
		       "%9.3f ms; last in most often: rank %d (%d times)\n", es_op_name((unsigned)k),
		       x->n, x->lat_sum / (double)x->n, x->lat_max, x->imb_max, most,
		       x->nlast ? x->last_counts[most] : 0);
		free(x->last_counts);
	}
	if (tree_ops)
		printf("  %lu tree node operations seen complete\n", tree_ops);
	if (live && print_waits)
		waits_summary();
	if (missed)
		printf("  %llu events were discarded before they could be read: operations that lost "
		       "theirs are not reported\n", (unsigned long long)missed);
}

/* --wait: the pattern's share of the ranks' MPI time over the last
 * second of periods, the black box kept when it passes the bound. */
static void wait_trigger(const struct wl_period *w)
{
	recent[nrecent++ % 256] = (struct period_sum){ newest, w->ns[wait_pattern], w->mpi_ns };
	uint64_t ns = 0, mpi = 0;
	for (unsigned i = 0; i < nrecent && i < 256; i++)
		if (recent[i].at + 1000000000ull > newest)
			ns += recent[i].ns, mpi += recent[i].mpi;
	double pct = mpi ? 100.0 * (double)ns / (double)mpi : 0;
	if (pct > wait_pct) {
		char why[300];
		snprintf(why, sizeof(why), "%s was %.1f%% of the ranks' time in MPI over the last second (--wait-above %s:%g)",
			 ws_pattern_name(wait_pattern), pct, ws_pattern_key(wait_pattern), wait_pct);
		snapshot(why);
	}
}

/* The period's wait states, said; the trigger judged. */
/* What the wait states could not judge, said in the period it grew. */
static void waits_unseen(void)
{
	static struct ws_stats was;
	struct ws_stats st;
	ws_stats(wl_engine(live), &st);
	if (st.unpaired == was.unpaired && st.incomplete == was.incomplete && st.given_up == was.given_up &&
	    st.unseen_calls == was.unseen_calls)
		return;
	printf("waits not judged in full so far: %llu message ends without their other end, %llu collectives "
	       "without every member, %llu calls given up after %u s, %llu completions whose wait was not seen\n",
	       (unsigned long long)st.unpaired, (unsigned long long)st.incomplete, (unsigned long long)st.given_up,
	       WL_HORIZON_S, (unsigned long long)st.unseen_calls);
	was = st;
}

static void waits_period(bool quiet)
{
	struct wl_period w;
	if (wl_period(live, newest, &w)) {
		fprintf(stderr, "colopmon: no memory for a period's wait states\n");
		return;
	}
	if (wait_pattern >= 0)
		wait_trigger(&w);
	for (size_t i = 0; print_waits && !quiet && i < w.n; i++) {
		const struct wl_row *r = &w.rows[i];
		if (r->pattern == WS_BARRIER_COMPLETION || r->pattern == WS_NXN_COMPLETION)
			continue; /* not waits: in the summary only */
		char by[32] = "", call[64];
		const char *where = wl_name(live, view, sym, r->thread, r->rank, r->site);
		if (r->by >= 0)
			snprintf(by, sizeof(by), ", caused by rank %d", r->by);
		snprintf(call, sizeof(call), r->of ? "%s(%s)" : "%s", es_op_name(r->op), es_op_name(r->of) + 4);
		printf("wait %s: rank %d, %s at %s: %.3f ms%s\n", ws_pattern_name(r->pattern), r->rank, call, where,
		       (double)r->ns / 1e6, by);
	}
	wl_period_free(&w);
	if (print_waits && !quiet)
		waits_unseen();
}

/* What the loop keeps between pulls. */
struct pulls {
	es_scope *s;
	mh_set *mh;
	struct es_trace *ev;
	int *rank;              /* by leaf: its MPI rank, or -1 (a PATHS thread) */
	bool quiet;
	double period;
	uint64_t missed;
	struct mon_watch w;
	bool was_lost;
};

/* One pull, drained, each event matched; the next when the scope's
 * headroom says, or MON_END once the job ended and was drained. */
static double pull(void *arg)
{
	struct pulls *p = arg;
	enum { MAX = 65536 };
	bool alive = mon_watch("colopmon", p->s, &p->w);
	/* ranks that started late, communicators met since */
	if (es_scope_refresh(p->s) > 0 && identify(p->s, &p->rank)) {
		fprintf(stderr, "colopmon: no memory for the ranks of %d trace elements\n", es_scope_leaves(p->s));
		return MON_END;
	}
	int n;
	do {
		uint64_t lost;
		n = es_scope_consume(p->s, p->ev, MAX, &lost);
		p->missed += lost;
		mh_feed(p->mh, p->s, p->ev, n);
		if (view) /* the communicators these tuples name are listed by now */
			es_mpi_refresh(view);
		if (live)
			wl_refreshed(live);
		for (int i = 0; i < n; i++) {
			int leaf = es_scope_consumed_leaf(p->s, (size_t)i);
			if (p->rank[leaf] >= 0)
				mpi_event(&p->ev[i], leaf, p->rank[leaf], p->quiet);
			else
				tree_event(&p->ev[i], es_scope_leaf(p->s, leaf)->meta.where, p->quiet);
		}
	} while (n == MAX && !mon_stop);
	mon_note_lost("colopmon", p->s, &p->was_lost);
	if (live)
		waits_period(p->quiet);
	if (n < 0 || mon_stop || !alive)
		return MON_END;
	fflush(stdout);
	return mon_pace(p->s, p->period);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("colopmon (EventSpace) " ES_VERSION);
		return 0;
	}
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, o.job);
	spec.reduce = ES_REDUCE_NONE;
	/* each thread's events in the order it wrote them: a completion comes
	 * before the wait it came in, which a merge by start time would put
	 * after the calls made since its request began (waitstates/engine.c) */
	spec.by_leaf = true;
	mon_signals();
	es_scope *s;
	char err[600];
	mh_set *mh; /* loaded first: a handler that cannot be is said before any wait */
	if ((rc = mh_start("colopmon", o.job, &mh, err, sizeof(err)))) {
		fprintf(stderr, "colopmon: --handler %s\n", err);
		return 2;
	}
	if ((rc = mon_remote(&spec, err, sizeof(err))) ||
	    (rc = mon_attach("colopmon", &spec, o.wait, &s, err, sizeof(err)))) {
		fprintf(stderr, "colopmon: %s\n", err);
		mh_stop(mh, stderr);
		return mon_status(rc);
	}
	int *rank = NULL;
	if ((rc = cm_create(&colls)) || (rc = identify(s, &rank))) {
		fprintf(stderr, "colopmon: no memory for the collectives' table or the ranks of %d trace elements\n",
			es_scope_leaves(s));
		return 1;
	}
	if ((print_waits || wait_pattern >= 0) && (wl_create(&live) || (ar_symbols_create(&sym) && (sym = NULL, 0)))) {
		fprintf(stderr, "colopmon: no memory for the wait states\n");
		return 1;
	}
	printf("colopmon: job '%s': %d MPI ranks, %d tree edges with collectors\n", o.job, mpi_ranks,
	       nedges);
	enum { MAX = 65536 };
	struct es_trace *ev = malloc(MAX * sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "colopmon: no memory for a pull's %zu bytes\n", MAX * sizeof(*ev));
		return 1;
	}
	struct pulls p = { .s = s, .mh = mh, .ev = ev, .rank = rank, .quiet = o.quiet, .period = o.period,
			   .w = { .grace = o.period * 3 > 3 ? o.period * 3 : 3 } };
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, pull, &p);
	mon_loop_run(&loop);
	mh_stop(mh, stderr);
	rank = p.rank;
	uint64_t missed = p.missed;
	struct mon_watch w = p.w;
	summary(&w, missed, es_scope_before_attach(s));
	free(ev);
	free(rank);
	cm_destroy(colls);
	free(shares);
	wl_destroy(live);
	ar_symbols_destroy(sym);
	es_mpi_close(view);
	es_scope_destroy(s);
	return 0;
}
