/* find.c - the wait-for graph's analysis: who can still go on, why the others cannot (mismatched collectives, dead ends, cycles: deadlocks), the roots of stalls, and what is asked of the findings. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pastset/pastset.h"
#include "waitfor/waitfor.h"
#include "internal.h"

/* --- who can go on ------------------------------------------------------------------- */

static bool waits(const wf_graph *g, int v)
{
	return v < g->n && g->nodes[v].t.state == WF_WAIT;
}

static bool blocked_v(const wf_graph *g, int v)
{
	return !g->can[v] && (v >= g->n || waits(g, v));
}

bool wf__blocked(const wf_graph *g, int t)
{
	return waits(g, t) && !g->can[t];
}

/* Everything not waiting and not ended can; then every vertex whose
 * condition those satisfy, to the fixpoint: a worklist, each vertex taken
 * once, an all-vertex counting its kids that can. */
static int propagate(wf_graph *g)
{
	int nv = g->nv, *queue = malloc(sizeof(int) * (size_t)(nv + 1)), qh = 0, qt = 0;
	int *need = malloc(sizeof(int) * (size_t)(nv + 1));
	if (!queue || !need) {
		free(queue), free(need);
		return PS_ENOMEM;
	}
	for (int v = 0; v < nv; v++) {
		int nk = g->kid_at[v + 1] - g->kid_at[v];
		need[v] = g->all[v] ? nk : 1;
		bool src = g->vk[v] == V_ALWAYS ||
			   (v < g->n && g->nodes[v].t.state != WF_WAIT && g->nodes[v].t.state != WF_ENDED) ||
			   (g->vk[v] == V_GATE && g->all[v] && nk == 0); /* all of nothing */
		if (src) {
			g->can[v] = true;
			queue[qt++] = v;
		}
	}
	while (qh < qt) {
		int v = queue[qh++];
		for (int p = g->par_at[v]; p < g->par_at[v + 1]; p++) {
			int w = g->pars[p];
			if (g->can[w] || (w < g->n && g->nodes[w].t.state == WF_ENDED) || --need[w] > 0)
				continue;
			g->can[w] = true;
			queue[qt++] = w;
		}
	}
	free(queue);
	free(need);
	for (int u = 0; u < g->nunits; u++) {
		int v = g->n + u;
		bool e = g->kid_at[v + 1] > g->kid_at[v];
		for (int k = g->kid_at[v]; k < g->kid_at[v + 1] && e; k++)
			e = g->nodes[g->kids[k]].t.state == WF_ENDED;
		g->ended[v] = e;
	}
	for (int i = 0; i < g->n; i++)
		g->nodes[i].cause = g->nodes[i].onpath = g->nodes[i].root = -1;
	return 0;
}

/* --- findings ------------------------------------------------------------------------- */

static struct finding *new_finding(wf_graph *g, enum cause_kind k)
{
	struct finding *f = realloc(g->finds, sizeof(*f) * (size_t)(g->nfinds + 1));
	if (!f)
		return NULL;
	g->finds = f;
	f = &f[g->nfinds++];
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->ended_unit = -1;
	f->secs = -1;
	return f;
}

static int add_member(wf_graph *g, struct finding *f, int t)
{
	int *m = realloc(f->members, sizeof(int) * (size_t)(f->n + 1));
	if (!m)
		return PS_ENOMEM;
	f->members = m;
	m[f->n++] = t;
	g->nodes[t].cause = (int)(f - g->finds);
	if (f->secs < 0 || g->nodes[t].t.secs < f->secs)
		f->secs = g->nodes[t].t.secs;
	return 0;
}

static int by_coll(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->thread - y->thread;
}

/* Blocked members of one collective (a communicator's call number n) that
 * called different operations there, or gave different roots. */
static int find_mismatches(wf_graph *g)
{
	if (g->nc > 1)
		qsort(g->colls, (size_t)g->nc, sizeof(*g->colls), by_coll);
	for (int i = 0; i < g->nc;) {
		int j = i + 1;
		while (j < g->nc && g->colls[j].comm == g->colls[i].comm && g->colls[j].num == g->colls[i].num)
			j++;
		bool differ = false, inside = false;
		int first = -1;
		for (int k = i; k < j; k++) {
			const struct coll *c = &g->colls[k];
			if (!wf__blocked(g, c->thread))
				continue;
			inside |= !c->past;
			if (first < 0)
				first = k;
			else
				differ |= c->op != g->colls[first].op || c->root != g->colls[first].root ||
					  wf__bytes_differ(c, &g->colls[first]);
		}
		if (differ && inside) { /* a member still waits in it */
			struct finding *f = new_finding(g, C_MISMATCH);
			if (!f)
				return PS_ENOMEM;
			f->coll = first;
			for (int k = i; k < j; k++)
				if (wf__blocked(g, g->colls[k].thread) && g->nodes[g->colls[k].thread].cause < 0 &&
				    add_member(g, f, g->colls[k].thread))
					return PS_ENOMEM;
			if (!f->n)
				g->nfinds--;
		}
		i = j;
	}
	return 0;
}

/* The first ended unit a blocked vertex waits for on its own (through its
 * gates, not through other threads), or -1. */
static int ended_below(const wf_graph *g, int v, int depth)
{
	for (int k = g->kid_at[v]; k < g->kid_at[v + 1]; k++) {
		int w = g->kids[k];
		if (g->vk[w] == V_UNIT && g->ended[w] && (g->all[v] || !g->can[v]))
			return w;
		if (g->vk[w] == V_GATE && !g->can[w] && depth < 8) {
			int e = ended_below(g, w, depth + 1);
			if (e >= 0)
				return e;
		}
	}
	return -1;
}

/* Threads that wait for nothing that exists, and for ranks that ended. */
static int find_dead_ends(wf_graph *g)
{
	for (int i = 0; i < g->n; i++) {
		struct node *x = &g->nodes[i];
		if (!wf__blocked(g, i) || x->cause >= 0)
			continue;
		if (g->kid_at[i + 1] == g->kid_at[i]) {
			struct finding *f = new_finding(g, C_NOBODY);
			if (!f || add_member(g, f, i))
				return PS_ENOMEM;
			continue;
		}
		int ended = ended_below(g, i, 0);
		if (ended < 0)
			continue;
		struct finding *f = NULL;
		for (int k = 0; k < g->nfinds && !f; k++)
			if (g->finds[k].kind == C_ENDED && g->finds[k].ended_unit == ended)
				f = &g->finds[k];
		if (!f && !(f = new_finding(g, C_ENDED)))
			return PS_ENOMEM;
		f->ended_unit = ended;
		if (add_member(g, f, i))
			return PS_ENOMEM;
	}
	return 0;
}

/* Whether thread a comes before thread b in the words: by rank (unit),
 * then name, so that a cycle is named the same whatever order the monitor
 * met the threads in. */
static bool named_before(const wf_graph *g, int a, int b)
{
	const struct wf_thread *x = &g->nodes[a].t, *y = &g->nodes[b].t;
	return x->unit != y->unit ? x->unit < y->unit : strcmp(x->name, y->name) < 0;
}

static int by_name(const void *a, const void *b, void *g)
{
	int x = *(const int *)a, y = *(const int *)b;
	return named_before(g, x, y) ? -1 : named_before(g, y, x) ? 1 : 0;
}

/* Threads in the words' order (by rank, then name), whatever order the
 * monitor met them in. */
void wf__sort_named(const wf_graph *g, int *t, int n)
{
	if (n > 1)
		qsort_r(t, (size_t)n, sizeof(int), by_name, (void *)g);
}

/* A cycle inside a strongly connected set of blocked vertices: from its
 * first thread in the words (lowest rank), follow kids inside the set
 * until a thread comes round again; the threads on the way, in order. */
static int cycle_of(wf_graph *g, const int *comp, int nc, bool *in, int *pos, struct finding *f)
{
	int lowest = -1;
	for (int i = 0; i < nc; i++) {
		in[comp[i]] = true;
		if (comp[i] < g->n && (lowest < 0 || named_before(g, comp[i], lowest)))
			lowest = comp[i];
	}
	int *path = malloc(sizeof(int) * (size_t)(nc + 1)), np = 0, v = lowest, rc = 0;
	if (!path)
		rc = PS_ENOMEM;
	while (!rc && pos[v] < 0) {
		pos[v] = np;
		path[np++] = v;
		int next = -1;
		for (int k = g->kid_at[v]; k < g->kid_at[v + 1]; k++) {
			int w = g->kids[k];
			if (in[w] && (next < 0 || (pos[w] >= 0 && pos[next] < 0)))
				next = w; /* prefer closing the cycle */
		}
		v = next;
	}
	for (int i = rc ? np : pos[v]; i < np && !rc; i++)
		if (path[i] < g->n)
			rc = add_member(g, f, path[i]);
	for (int i = 0; i < np; i++)
		pos[path[i]] = -1;
	for (int i = 0; i < nc; i++)
		in[comp[i]] = false;
	free(path);
	return rc;
}

/* Tarjan's strongly connected components over the blocked vertices, with
 * an explicit stack: a chain of a hundred thousand waits is no recursion. */
struct tarjan {
	int *idx, *low, *stack, sp, next, *call, *edge, cs;
	bool *on, *in;
	int *pos, *comp;
};

static int component(wf_graph *g, struct tarjan *tj, int v)
{
	int nc = 0, w;
	bool self = false, explained = false;
	int threads = 0;
	do {
		w = tj->stack[--tj->sp];
		tj->on[w] = false;
		tj->comp[nc++] = w;
		threads += w < g->n;
		explained |= w < g->n && g->nodes[w].cause >= 0;
	} while (w != v);
	for (int k = g->kid_at[v]; k < g->kid_at[v + 1] && nc == 1; k++)
		self |= g->kids[k] == v;
	if ((nc == 1 && !self) || !threads || explained)
		return 0; /* no cycle, or explained already (a mismatch): the rest follow it */
	struct finding *f = new_finding(g, C_CYCLE);
	return f ? cycle_of(g, tj->comp, nc, tj->in, tj->pos, f) : PS_ENOMEM;
}

static int strong(wf_graph *g, struct tarjan *tj, int root)
{
	int cs = 0, rc = 0;
	tj->call[cs] = root, tj->edge[cs++] = g->kid_at[root];
	tj->idx[root] = tj->low[root] = ++tj->next;
	tj->stack[tj->sp++] = root;
	tj->on[root] = true;
	while (cs && !rc) {
		int v = tj->call[cs - 1];
		if (tj->edge[cs - 1] < g->kid_at[v + 1]) {
			int w = g->kids[tj->edge[cs - 1]++];
			if (!blocked_v(g, w))
				continue;
			if (!tj->idx[w]) {
				tj->idx[w] = tj->low[w] = ++tj->next;
				tj->stack[tj->sp++] = w;
				tj->on[w] = true;
				tj->call[cs] = w, tj->edge[cs++] = g->kid_at[w];
			} else if (tj->on[w] && tj->idx[w] < tj->low[v]) {
				tj->low[v] = tj->idx[w];
			}
			continue;
		}
		cs--;
		if (cs && tj->low[v] < tj->low[tj->call[cs - 1]])
			tj->low[tj->call[cs - 1]] = tj->low[v];
		if (tj->low[v] == tj->idx[v])
			rc = component(g, tj, v);
	}
	return rc;
}

static int find_cycles(wf_graph *g)
{
	size_t nv = (size_t)g->nv + 1;
	struct tarjan tj = { .idx = calloc(nv, sizeof(int)), .low = calloc(nv, sizeof(int)),
			     .stack = malloc(sizeof(int) * nv), .call = malloc(sizeof(int) * nv),
			     .edge = malloc(sizeof(int) * nv), .on = calloc(nv, sizeof(bool)),
			     .in = calloc(nv, sizeof(bool)), .pos = malloc(sizeof(int) * nv),
			     .comp = malloc(sizeof(int) * nv) };
	int rc = tj.idx && tj.low && tj.stack && tj.call && tj.edge && tj.on && tj.in && tj.pos && tj.comp
		 ? 0 : PS_ENOMEM;
	for (size_t i = 0; !rc && i < nv; i++)
		tj.pos[i] = -1;
	for (int i = 0; i < g->n && !rc; i++)
		if (wf__blocked(g, i) && !tj.idx[i])
			rc = strong(g, &tj, i);
	free(tj.idx), free(tj.low), free(tj.stack), free(tj.call), free(tj.edge);
	free(tj.on), free(tj.in), free(tj.pos), free(tj.comp);
	return rc;
}

/* Every other blocked thread waits, through others, for some finding: the
 * first it reaches going back from the findings. */
static int attribute(wf_graph *g)
{
	int nv = g->nv, *queue = malloc(sizeof(int) * (size_t)(nv + 1)), qh = 0, qt = 0;
	int *cause = malloc(sizeof(int) * (size_t)(nv + 1)), *via = malloc(sizeof(int) * (size_t)(nv + 1));
	if (!queue || !cause || !via) {
		free(queue), free(cause), free(via);
		return PS_ENOMEM;
	}
	for (int v = 0; v < nv; v++)
		cause[v] = -1, via[v] = -1;
	for (int i = 0; i < g->n; i++)
		if (wf__blocked(g, i) && g->nodes[i].cause >= 0) {
			cause[i] = g->nodes[i].cause, via[i] = i;
			queue[qt++] = i;
		}
	while (qh < qt) {
		int v = queue[qh++];
		for (int p = g->par_at[v]; p < g->par_at[v + 1]; p++) {
			int w = g->pars[p];
			if (!blocked_v(g, w) || cause[w] >= 0)
				continue;
			cause[w] = cause[v];
			via[w] = v < g->n ? v : via[v];
			if (w < g->n) {
				g->nodes[w].cause = cause[w];
				g->nodes[w].onpath = via[w];
			}
			queue[qt++] = w;
		}
	}
	free(queue), free(cause), free(via);
	return 0;
}

static int push(int **a, int *n, int v)
{
	int *na = realloc(*a, sizeof(int) * (size_t)(*n + 1));
	if (!na)
		return PS_ENOMEM;
	*a = na;
	na[(*n)++] = v;
	return 0;
}

/* Roots: threads that do not wait, which threads that can go on but stall
 * wait for, directly or through other waiting ones; each waiting thread
 * counted once, for the nearest (going back from every root at once). */
static int find_roots(wf_graph *g)
{
	int nv = g->nv, *queue = malloc(sizeof(int) * (size_t)(nv + 1)), qh = 0, qt = 0;
	int *label = malloc(sizeof(int) * (size_t)(nv + 1)), *dist = malloc(sizeof(int) * (size_t)(nv + 1));
	int *rootof = malloc(sizeof(int) * (size_t)(g->n + 1));
	int rc = queue && label && dist && rootof ? 0 : PS_ENOMEM;
	for (int v = 0; !rc && v < nv; v++)
		label[v] = -1, dist[v] = 0;
	for (int i = 0; !rc && i < g->n; i++) {
		enum wf_state s = g->nodes[i].t.state;
		rootof[i] = -1;
		if (s != WF_WAIT && s != WF_ENDED && s != WF_UNSEEN) {
			label[i] = i;
			queue[qt++] = i;
		}
	}
	while (!rc && qh < qt) {
		int v = queue[qh++];
		for (int p = g->par_at[v]; p < g->par_at[v + 1] && !rc; p++) {
			int w = g->pars[p];
			if (label[w] >= 0 || (w < g->n && (!waits(g, w) || !g->can[w])) || (w >= g->n && !g->can[w]))
				continue;
			label[w] = label[v];
			dist[w] = dist[v] + (w < g->n);
			if (w < g->n) {
				int r = label[w];
				if (rootof[r] < 0) {
					struct root *nr = realloc(g->roots, sizeof(*nr) * (size_t)(g->nroots + 1));
					if (!nr) {
						rc = PS_ENOMEM;
						break;
					}
					g->roots = nr;
					memset(&nr[g->nroots], 0, sizeof(*nr));
					nr[g->nroots].thread = r;
					rootof[r] = g->nroots++;
				}
				struct root *ro = &g->roots[rootof[r]];
				g->nodes[w].root = r;
				g->nodes[w].dist = dist[w];
				rc = dist[w] == 1 ? push(&ro->direct, &ro->nd, w) : push(&ro->through, &ro->nt, w);
			}
			queue[qt++] = w;
		}
	}
	free(queue), free(label), free(dist), free(rootof);
	return rc;
}

int wf_analyze(wf_graph *g)
{
	if (!g)
		return PS_EINVAL;
	wf__drop_analysis(g);
	int rc;
	if ((rc = wf__make_vertices(g)) || (rc = wf__make_edges(g)) || (rc = propagate(g)) ||
	    (rc = find_mismatches(g)) || (rc = find_dead_ends(g)) || (rc = find_cycles(g)) ||
	    (rc = attribute(g)) || (rc = find_roots(g)))
		return rc;
	for (int i = 0; i < g->nfinds; i++) /* a cycle keeps its order: each waits for the next */
		if (g->finds[i].kind != C_CYCLE)
			wf__sort_named(g, g->finds[i].members, g->finds[i].n);
	g->analyzed = true;
	return 0;
}

enum wf_state wf_state_of(const wf_graph *g, int i)
{
	return g && i >= 0 && i < g->n ? g->nodes[i].t.state : 0;
}

const char *wf_what(const wf_graph *g, int i)
{
	return g && i >= 0 && i < g->n ? g->nodes[i].t.what : "";
}

bool wf_blocked(const wf_graph *g, int i)
{
	return g && g->analyzed && i >= 0 && i < g->n && wf__blocked(g, i);
}

int wf_stalls(const wf_graph *g)
{
	return g && g->analyzed ? g->nroots : 0;
}

int wf_deadlocks(const wf_graph *g)
{
	int n = 0;
	for (int i = 0; g && g->analyzed && i < g->nfinds; i++)
		n += !g->finds[i].dropped;
	return n;
}

/* The i-th finding not dropped. */
static int finding_index(const wf_graph *g, int i)
{
	for (int k = 0; g && g->analyzed && k < g->nfinds; k++)
		if (!g->finds[k].dropped && i-- == 0)
			return k;
	return -1;
}

int wf_deadlock_threads(wf_graph *g, int i, int *out, int max)
{
	int f = finding_index(g, i), n = 0;
	if (f < 0)
		return 0;
	/* kept for the next deadlock: a job with many costs no more than
	 * the vertices each one reaches */
	if (!g->seen && !(g->seen = calloc((size_t)g->nv + 1, sizeof(bool))))
		return PS_ENOMEM;
	if (!g->queue && !(g->queue = malloc(sizeof(int) * ((size_t)g->nv + 1))))
		return PS_ENOMEM;
	bool *seen = g->seen;
	int *queue = g->queue, qh = 0, qt = 0;
	/* its waiters and members, then every vertex they cannot go on
	 * without: a blocked or ended one below a member (a thread that can
	 * go on is not what the finding stands on) */
	for (int t = 0; t < g->n; t++)
		if (wf__blocked(g, t) && g->nodes[t].cause == f)
			seen[t] = true, queue[qt++] = t;
	for (int k = 0; k < g->finds[f].n; k++) {
		int t = g->finds[f].members[k];
		if (!seen[t])
			seen[t] = true, queue[qt++] = t;
	}
	if (g->finds[f].ended_unit >= 0 && !seen[g->finds[f].ended_unit])
		seen[g->finds[f].ended_unit] = true, queue[qt++] = g->finds[f].ended_unit;
	while (qh < qt) {
		int v = queue[qh++];
		if (v < g->n && n < max)
			out[n++] = v;
		for (int k = g->kid_at[v]; k < g->kid_at[v + 1]; k++) {
			int w = g->kids[k];
			if (!seen[w] && !g->can[w] && g->vk[w] != V_ALWAYS)
				seen[w] = true, queue[qt++] = w;
		}
	}
	for (int k = 0; k < qt; k++)
		seen[queue[k]] = false;
	return n;
}

void wf_drop_deadlock(wf_graph *g, int i)
{
	int f = finding_index(g, i);
	if (f >= 0)
		g->finds[f].dropped = true;
}

