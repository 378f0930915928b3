/* waitfor.c - the wait-for graph: who can still go on, why the others cannot, and the roots of stalls. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pastset/pastset.h"
#include "waitfor.h"

enum cause_kind { C_CYCLE = 1, C_MISMATCH, C_ENDED, C_NOBODY };

struct node {
	struct wf_thread t; /* strings owned */
	int *on;            /* units it waits for (ids until resolved, then indices) */
	int non, cap;
	int unit;           /* index into units */
	bool can;           /* can go on, as far as the graph tells */
	int sat;            /* units of an all-wait that can */
	int cause;          /* blocked: the finding that explains it, or -1 */
	int onpath;         /* blocked: the next thread on the way to its cause (for the picture) */
	int low, idx;       /* Tarjan */
	bool stacked;
};

struct unit {
	int id;
	int *threads, n, cap;
	int *waiters, nw, cw; /* threads that wait for it */
	bool can, ended;
};

struct finding {
	enum cause_kind kind;
	int *members, n;    /* the cycle in order (each waits for the next), the mismatched, or the one */
	int ended_unit;     /* C_ENDED */
	int waiters;        /* further blocked threads that wait for it */
	double secs;
};

struct root {
	int thread;
	int *direct, nd, cd, *through, nt, ct;
	int *far, nf, cf; /* how many waits away each of through is */
};

struct wf_graph {
	struct node *nodes;
	int n, cap;
	struct unit *units;
	int nunits;
	struct finding *finds;
	int nfinds;
	struct root *roots;
	int nroots;
	bool analyzed;
};

static int push_int(int **a, int *n, int *cap, int v)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 4;
		int *na = realloc(*a, sizeof(int) * (size_t)nc);
		if (!na)
			return PS_ENOMEM;
		*a = na;
		*cap = nc;
	}
	(*a)[(*n)++] = v;
	return 0;
}

int wf_create(wf_graph **out)
{
	if (!out)
		return PS_EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : PS_ENOMEM;
}

static void drop_analysis(wf_graph *g)
{
	for (int i = 0; i < g->nunits; i++) {
		free(g->units[i].threads);
		free(g->units[i].waiters);
	}
	free(g->units);
	g->units = NULL;
	g->nunits = 0;
	for (int i = 0; i < g->nfinds; i++)
		free(g->finds[i].members);
	free(g->finds);
	g->finds = NULL;
	g->nfinds = 0;
	for (int i = 0; i < g->nroots; i++) {
		free(g->roots[i].direct);
		free(g->roots[i].through);
		free(g->roots[i].far);
	}
	free(g->roots);
	g->roots = NULL;
	g->nroots = 0;
	g->analyzed = false;
}

static void free_thread(struct wf_thread *t)
{
	free((char *)t->name);
	free((char *)t->label);
	free((char *)t->what);
	free((char *)t->nobody);
	free((char *)t->coll_name);
}

void wf_clear(wf_graph *g)
{
	if (!g)
		return;
	drop_analysis(g);
	for (int i = 0; i < g->n; i++) {
		free_thread(&g->nodes[i].t);
		free(g->nodes[i].on);
	}
	g->n = 0;
}

void wf_destroy(wf_graph *g)
{
	if (!g)
		return;
	wf_clear(g);
	free(g->nodes);
	free(g);
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int wf_add(wf_graph *g, const struct wf_thread *t)
{
	if (!g || !t || !t->name || t->state < WF_PROGRESS || t->state > WF_UNSEEN || g->analyzed)
		return PS_EINVAL;
	if (g->n == g->cap) {
		int nc = g->cap ? g->cap * 2 : 16;
		struct node *nn = realloc(g->nodes, sizeof(*nn) * (size_t)nc);
		if (!nn)
			return PS_ENOMEM;
		g->nodes = nn;
		g->cap = nc;
	}
	struct node *x = &g->nodes[g->n];
	memset(x, 0, sizeof(*x));
	x->t = *t;
	x->t.name = strdup(t->name);
	x->t.label = dup_or_empty(t->label && *t->label ? t->label : t->name);
	x->t.what = dup_or_empty(t->what);
	x->t.nobody = dup_or_empty(t->nobody);
	x->t.coll_name = dup_or_empty(t->coll_name);
	if (!x->t.name || !x->t.label || !x->t.what || !x->t.nobody || !x->t.coll_name) {
		free_thread(&x->t);
		return PS_ENOMEM;
	}
	return g->n++;
}

int wf_wait(wf_graph *g, int t, int unit)
{
	if (!g || t < 0 || t >= g->n || g->nodes[t].t.state != WF_WAIT || g->analyzed)
		return PS_EINVAL;
	struct node *x = &g->nodes[t];
	for (int i = 0; i < x->non; i++)
		if (x->on[i] == unit)
			return 0;
	return push_int(&x->on, &x->non, &x->cap, unit);
}

/* --- analysis ------------------------------------------------------------------------- */

static int unit_index(const wf_graph *g, int id)
{
	int lo = 0, hi = g->nunits - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (g->units[mid].id == id)
			return mid;
		if (g->units[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Units from the threads' ids, and each wait resolved to a unit index (a
 * unit no thread is in is dropped: nothing known can hold it up). */
static int make_units(wf_graph *g)
{
	int *ids = malloc(sizeof(int) * (size_t)(g->n + 1));
	if (!ids)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++)
		ids[i] = g->nodes[i].t.unit;
	qsort(ids, (size_t)g->n, sizeof(int), cmp_int);
	int nu = 0;
	for (int i = 0; i < g->n; i++)
		if (!nu || ids[nu - 1] != ids[i])
			ids[nu++] = ids[i];
	g->units = calloc((size_t)nu + 1, sizeof(*g->units));
	if (!g->units) {
		free(ids);
		return PS_ENOMEM;
	}
	g->nunits = nu;
	for (int i = 0; i < nu; i++)
		g->units[i].id = ids[i];
	free(ids);
	for (int i = 0; i < g->n; i++) {
		struct node *x = &g->nodes[i];
		x->unit = unit_index(g, x->t.unit);
		struct unit *u = &g->units[x->unit];
		if (push_int(&u->threads, &u->n, &u->cap, i))
			return PS_ENOMEM;
		int k = 0;
		for (int j = 0; j < x->non; j++) {
			int ui = unit_index(g, x->on[j]);
			if (ui >= 0)
				x->on[k++] = ui;
		}
		if (x->t.state == WF_WAIT && k == 0 && x->non > 0)
			x->t.state = WF_BLIND; /* waits only for what the graph does not hold */
		x->non = k;
	}
	for (int i = 0; i < g->n; i++)
		for (int j = 0; j < g->nodes[i].non; j++) {
			struct unit *u = &g->units[g->nodes[i].on[j]];
			if (push_int(&u->waiters, &u->nw, &u->cw, i))
				return PS_ENOMEM;
		}
	for (int i = 0; i < nu; i++) {
		struct unit *u = &g->units[i];
		u->ended = u->n > 0;
		for (int j = 0; j < u->n; j++)
			u->ended &= g->nodes[u->threads[j]].t.state == WF_ENDED;
	}
	return 0;
}

/* Who can go on: everything not waiting and not ended, then every waiting
 * thread whose condition those satisfy, to the fixpoint (a worklist of
 * units, each taken once). */
static int propagate(wf_graph *g)
{
	int *queue = malloc(sizeof(int) * (size_t)(g->nunits + 1)), qh = 0, qt = 0;
	if (!queue)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++) {
		struct node *x = &g->nodes[i];
		x->can = x->t.state != WF_WAIT && x->t.state != WF_ENDED;
		x->cause = x->onpath = -1;
		if (x->can && !g->units[x->unit].can) {
			g->units[x->unit].can = true;
			queue[qt++] = x->unit;
		}
	}
	while (qh < qt) {
		struct unit *u = &g->units[queue[qh++]];
		for (int j = 0; j < u->nw; j++) {
			struct node *w = &g->nodes[u->waiters[j]];
			if (w->can || (w->t.all && ++w->sat < w->non))
				continue;
			w->can = true;
			if (!g->units[w->unit].can) {
				g->units[w->unit].can = true;
				queue[qt++] = w->unit;
			}
		}
	}
	free(queue);
	return 0;
}

static bool blocked(const struct node *x)
{
	return x->t.state == WF_WAIT && !x->can;
}

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

/* Blocked threads in one collective of a communicator at different calls. */
static int find_mismatches(wf_graph *g)
{
	for (int i = 0; i < g->n; i++) {
		struct node *a = &g->nodes[i];
		if (!blocked(a) || a->t.coll < 0 || a->cause >= 0)
			continue;
		bool differ = false;
		for (int j = i + 1; j < g->n && !differ; j++) {
			struct node *b = &g->nodes[j];
			differ = blocked(b) && b->t.coll == a->t.coll &&
				 (b->t.coll_op != a->t.coll_op || b->t.coll_num != a->t.coll_num);
		}
		if (!differ)
			continue;
		struct finding *f = new_finding(g, C_MISMATCH);
		if (!f)
			return PS_ENOMEM;
		for (int j = i; j < g->n; j++)
			if (blocked(&g->nodes[j]) && g->nodes[j].t.coll == a->t.coll && g->nodes[j].cause < 0 &&
			    add_member(g, f, j))
				return PS_ENOMEM;
	}
	return 0;
}

/* Threads that wait for nothing that exists, and for ranks that ended. */
static int find_dead_ends(wf_graph *g)
{
	for (int i = 0; i < g->n; i++) {
		struct node *x = &g->nodes[i];
		if (!blocked(x) || x->cause >= 0)
			continue;
		if (x->non == 0) {
			struct finding *f = new_finding(g, C_NOBODY);
			if (!f || add_member(g, f, i))
				return PS_ENOMEM;
			continue;
		}
		int ended = -1, all_ended = 1;
		for (int j = 0; j < x->non; j++) {
			if (g->units[x->on[j]].ended) {
				if (ended < 0)
					ended = x->on[j];
			} else {
				all_ended = 0;
			}
		}
		if (ended < 0 || (!x->t.all && !all_ended))
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

/* The blocked threads a blocked thread waits for. */
#define FOR_BLOCKED_TARGETS(g, x, s)                                                         \
	for (int j_ = 0; j_ < (x)->non; j_++)                                                \
		for (int k_ = 0, s; k_ < (g)->units[(x)->on[j_]].n &&                        \
				    ((s = (g)->units[(x)->on[j_]].threads[k_]), 1); k_++)      \
			if (blocked(&(g)->nodes[s]))

struct tarjan {
	int *stack, sp, next;
	int *comp, nc;
};

static int strong(wf_graph *g, int v, struct tarjan *tj);

/* A cycle inside the component: from its first member, follow waits that
 * stay inside until a thread comes round again. */
static int cycle_of(wf_graph *g, const int *comp, int nc, struct finding *f)
{
	int *pos = malloc(sizeof(int) * (size_t)g->n);
	if (!pos)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++)
		pos[i] = -1;
	bool *in = calloc((size_t)g->n, sizeof(bool));
	if (!in) {
		free(pos);
		return PS_ENOMEM;
	}
	for (int i = 0; i < nc; i++)
		in[comp[i]] = true;
	int *path = malloc(sizeof(int) * (size_t)(nc + 1)), np = 0, v = comp[0];
	if (!path) {
		free(pos);
		free(in);
		return PS_ENOMEM;
	}
	int lowest = comp[0];
	for (int i = 1; i < nc; i++)
		if (comp[i] < lowest)
			lowest = comp[i];
	v = lowest;
	while (pos[v] < 0) {
		pos[v] = np;
		path[np++] = v;
		int next = -1;
		FOR_BLOCKED_TARGETS(g, &g->nodes[v], s)
		{
			if (in[s] && (next < 0 || (pos[s] >= 0 && pos[next] < 0)))
				next = s; /* prefer closing the cycle */
		}
		v = next;
	}
	int rc = 0;
	for (int i = pos[v]; i < np && !rc; i++)
		rc = add_member(g, f, path[i]);
	free(path);
	free(pos);
	free(in);
	return rc;
}

static int strong(wf_graph *g, int v, struct tarjan *tj)
{
	struct node *x = &g->nodes[v];
	x->idx = x->low = ++tj->next;
	tj->stack[tj->sp++] = v;
	x->stacked = true;
	int rc = 0;
	bool self = false;
	FOR_BLOCKED_TARGETS(g, x, s)
	{
		struct node *y = &g->nodes[s];
		self |= s == v;
		if (!y->idx) {
			/* depth is at most the number of blocked threads */
			if ((rc = strong(g, s, tj)))
				return rc;
			if (y->low < x->low)
				x->low = y->low;
		} else if (y->stacked && y->idx < x->low) {
			x->low = y->idx;
		}
	}
	if (x->low != x->idx)
		return 0;
	tj->nc = 0;
	int w;
	do {
		w = tj->stack[--tj->sp];
		g->nodes[w].stacked = false;
		tj->comp[tj->nc++] = w;
	} while (w != v);
	if (tj->nc == 1 && !self)
		return 0;
	for (int i = 0; i < tj->nc; i++)
		if (g->nodes[tj->comp[i]].cause >= 0)
			return 0; /* explained already (a mismatch): the rest follow it */
	struct finding *f = new_finding(g, C_CYCLE);
	if (!f)
		return PS_ENOMEM;
	return cycle_of(g, tj->comp, tj->nc, f);
}

static int find_cycles(wf_graph *g)
{
	struct tarjan tj = { 0 };
	tj.stack = malloc(sizeof(int) * (size_t)(g->n + 1));
	tj.comp = malloc(sizeof(int) * (size_t)(g->n + 1));
	int rc = tj.stack && tj.comp ? 0 : PS_ENOMEM;
	for (int i = 0; i < g->n; i++)
		g->nodes[i].idx = 0, g->nodes[i].stacked = false;
	for (int i = 0; i < g->n && !rc; i++)
		if (blocked(&g->nodes[i]) && !g->nodes[i].idx)
			rc = strong(g, i, &tj);
	free(tj.stack);
	free(tj.comp);
	return rc;
}

/* Every other blocked thread waits, through others, for some finding: the
 * first it reaches going back from the findings. */
static int attribute(wf_graph *g)
{
	int *queue = malloc(sizeof(int) * (size_t)(g->n + 1)), qh = 0, qt = 0;
	if (!queue)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++)
		if (blocked(&g->nodes[i]) && g->nodes[i].cause >= 0)
			queue[qt++] = i;
	while (qh < qt) {
		int v = queue[qh++];
		struct unit *u = &g->units[g->nodes[v].unit];
		for (int j = 0; j < u->nw; j++) {
			struct node *w = &g->nodes[u->waiters[j]];
			if (!blocked(w) || w->cause >= 0)
				continue;
			w->cause = g->nodes[v].cause;
			w->onpath = v;
			g->finds[w->cause].waiters++;
			queue[qt++] = u->waiters[j];
		}
	}
	free(queue);
	return 0;
}

/* Roots: threads that are not waiting, which threads that can go on but
 * stall wait for, directly or through other waiting ones. */
static int find_roots(wf_graph *g)
{
	int *seen = calloc((size_t)g->n + 1, sizeof(int)), *queue = malloc(sizeof(int) * (size_t)(g->n + 1));
	int *rootof = malloc(sizeof(int) * (size_t)(g->n + 1)), *dist = malloc(sizeof(int) * (size_t)(g->n + 1));
	int rc = seen && queue && rootof && dist ? 0 : PS_ENOMEM;
	for (int i = 0; i < g->n && !rc; i++)
		rootof[i] = -1;
	for (int i = 0; i < g->n && !rc; i++) {
		struct node *x = &g->nodes[i];
		if (x->t.state != WF_WAIT || !x->can)
			continue;
		/* breadth first from x over waiting threads; seen[] marks this walk by i + 1 */
		int qh = 0, qt = 0;
		queue[qt++] = i;
		seen[i] = i + 1;
		dist[i] = 0;
		while (qh < qt && !rc) {
			int v = queue[qh++];
			struct node *y = &g->nodes[v];
			for (int j = 0; j < y->non && !rc; j++) {
				struct unit *u = &g->units[y->on[j]];
				for (int k = 0; k < u->n && !rc; k++) {
					int s = u->threads[k];
					struct node *z = &g->nodes[s];
					if (seen[s] == i + 1)
						continue;
					seen[s] = i + 1;
					if (z->t.state == WF_WAIT) {
						if (z->can) {
							dist[s] = dist[v] + 1;
							queue[qt++] = s;
						}
						continue;
					}
					if (z->t.state == WF_ENDED || z->t.state == WF_UNSEEN)
						continue;
					if (rootof[s] < 0) {
						struct root *r = realloc(g->roots, sizeof(*r) * (size_t)(g->nroots + 1));
						if (!r) {
							rc = PS_ENOMEM;
							break;
						}
						g->roots = r;
						memset(&r[g->nroots], 0, sizeof(*r));
						r[g->nroots].thread = s;
						rootof[s] = g->nroots++;
					}
					struct root *r = &g->roots[rootof[s]];
					if (v == i)
						rc = push_int(&r->direct, &r->nd, &r->cd, i);
					else if (!(rc = push_int(&r->through, &r->nt, &r->ct, i)))
						rc = push_int(&r->far, &r->nf, &r->cf, dist[v] + 1);
				}
			}
		}
	}
	free(seen);
	free(queue);
	free(rootof);
	free(dist);
	/* the nearest first: the order of the chain back from the root */
	for (int k = 0; k < g->nroots && !rc; k++) {
		struct root *r = &g->roots[k];
		for (int a = 1; a < r->nt; a++)
			for (int b = a; b > 0 && r->far[b - 1] > r->far[b]; b--) {
				int t = r->far[b], u = r->through[b];
				r->far[b] = r->far[b - 1], r->through[b] = r->through[b - 1];
				r->far[b - 1] = t, r->through[b - 1] = u;
			}
	}
	return rc;
}

int wf_analyze(wf_graph *g)
{
	if (!g)
		return PS_EINVAL;
	drop_analysis(g);
	for (int i = 0; i < g->n; i++)
		g->nodes[i].sat = 0;
	int rc;
	if ((rc = make_units(g)) || (rc = propagate(g)) || (rc = find_mismatches(g)) ||
	    (rc = find_dead_ends(g)) || (rc = find_cycles(g)) || (rc = attribute(g)) ||
	    (rc = find_roots(g)))
		return rc;
	g->analyzed = true;
	return 0;
}

enum wf_state wf_state_of(const wf_graph *g, int i)
{
	return g && i >= 0 && i < g->n ? g->nodes[i].t.state : 0;
}

int wf_stalls(const wf_graph *g)
{
	return g && g->analyzed ? g->nroots : 0;
}

int wf_deadlocks(const wf_graph *g)
{
	return g && g->analyzed ? g->nfinds : 0;
}

/* --- words and pictures ------------------------------------------------------------------ */

/* "A", "A and B", "A, B and C"; past eight names, how many more. */
static void names(FILE *out, const wf_graph *g, const int *t, int n, bool with_what)
{
	int shown = n > 8 ? 7 : n;
	for (int i = 0; i < shown; i++) {
		const struct node *x = &g->nodes[t[i]];
		fprintf(out, "%s%s%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", x->t.label,
			with_what && *x->t.what ? " " : "", with_what ? x->t.what : "");
	}
	if (shown < n)
		fprintf(out, " and %d more", n - shown);
}

static int waiters_of(const wf_graph *g, int f, int **out)
{
	int n = 0;
	*out = malloc(sizeof(int) * (size_t)(g->n + 1));
	if (!*out)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++)
		if (blocked(&g->nodes[i]) && g->nodes[i].cause == f) {
			bool member = false;
			for (int k = 0; k < g->finds[f].n && !member; k++)
				member = g->finds[f].members[k] == i;
			if (!member)
				(*out)[n++] = i;
		}
	return n;
}

static int cmp_root(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	int nx = x->nd + x->nt, ny = y->nd + y->nt;
	return ny != nx ? ny - nx : x->thread - y->thread;
}

static void report_finding(const wf_graph *g, int fi, FILE *out, const char *indent)
{
	const struct finding *f = &g->finds[fi];
	double secs = f->secs;
	const struct node *e = NULL;
	if (f->kind == C_ENDED) {
		e = &g->nodes[g->units[f->ended_unit].threads[0]];
		if (e->t.secs < secs)
			secs = e->t.secs;
	}
	fprintf(out, "%sdeadlock for %.1f s: ", indent, secs);
	switch (f->kind) {
	case C_CYCLE:
		for (int i = 0; i < f->n; i++) {
			/* members[i] waits for members[i + 1]: print against the arrows */
			const struct node *x = &g->nodes[f->members[i == 0 ? 0 : f->n - i]];
			fprintf(out, "%s%s %s", i ? " <- " : "", x->t.label, x->t.what);
		}
		break;
	case C_MISMATCH:
		fprintf(out, "collective mismatch on %s: ", g->nodes[f->members[0]].t.coll_name);
		for (int i = 0; i < f->n; i++) {
			const struct node *x = &g->nodes[f->members[i]];
			fprintf(out, "%s%s in %s #%u", i ? ", " : "", x->t.label, es_op_name(x->t.coll_op),
				(unsigned)x->t.coll_num);
		}
		break;
	case C_ENDED:
		fprintf(out, "%s %s; %d thread%s wait%s for it: ", e->t.label, e->t.what, f->n,
			f->n == 1 ? "" : "s", f->n == 1 ? "s" : "");
		names(out, g, f->members, f->n, true);
		break;
	case C_NOBODY: {
		const struct node *x = &g->nodes[f->members[0]];
		fprintf(out, "%s %s, %s", x->t.label, x->t.what, x->t.nobody);
		break;
	}
	}
	int *w, nw = waiters_of(g, fi, &w);
	if (nw > 0) {
		fprintf(out, "; %d more thread%s wait%s for it: ", nw, nw == 1 ? "" : "s", nw == 1 ? "s" : "");
		names(out, g, w, nw, false);
	}
	free(w);
	fputc('\n', out);
}

int wf_report(const wf_graph *g, FILE *out, const char *indent)
{
	if (!g || !out || !g->analyzed)
		return PS_EINVAL;
	if (!indent)
		indent = "";
	for (int i = 0; i < g->nfinds; i++)
		report_finding(g, i, out, indent);
	struct root *r = malloc(sizeof(*r) * (size_t)(g->nroots + 1));
	if (!r)
		return PS_ENOMEM;
	if (g->nroots)
		memcpy(r, g->roots, sizeof(*r) * (size_t)g->nroots);
	qsort(r, (size_t)g->nroots, sizeof(*r), cmp_root);
	for (int i = 0; i < g->nroots; i++) {
		const struct node *x = &g->nodes[r[i].thread];
		int n = r[i].nd + r[i].nt;
		fprintf(out, "%sstall: %s %s", indent, x->t.name, x->t.what);
		if (x->t.state != WF_PROGRESS)
			fprintf(out, " for %.1f s", x->t.secs);
		fprintf(out, "; %d thread%s wait%s for it: ", n, n == 1 ? "" : "s", n == 1 ? "s" : "");
		names(out, g, r[i].direct, r[i].nd, false);
		fputs(" directly", out);
		if (r[i].nt) {
			fputs(", ", out);
			names(out, g, r[i].through, r[i].nt, false);
			fprintf(out, " through %s", r[i].nd == 1 ? "it" : "them");
		}
		fputc('\n', out);
	}
	free(r);
	return 0;
}

static void dot_string(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static bool is_root(const wf_graph *g, int t)
{
	for (int i = 0; i < g->nroots; i++)
		if (g->roots[i].thread == t)
			return true;
	return false;
}

static bool is_member(const wf_graph *g, int t)
{
	int f = g->nodes[t].cause;
	if (f < 0)
		return false;
	for (int k = 0; k < g->finds[f].n; k++)
		if (g->finds[f].members[k] == t)
			return true;
	return false;
}

/* Whether a thread belongs in the picture: all of them in a small job; in
 * a large one those that wait or are waited for. */
static bool pictured(const wf_graph *g, int t)
{
	const struct node *x = &g->nodes[t];
	return g->n <= 64 || x->t.state == WF_WAIT || g->units[x->unit].nw > 0;
}

int wf_dot(const wf_graph *g, FILE *out, const char *title)
{
	if (!g || !out || !g->analyzed)
		return PS_EINVAL;
	fputs("digraph waitfor {\n\tlabelloc=t;\n\tlabel=\"", out);
	dot_string(out, title ? title : "wait-for graph");
	fputs("\\n(an arrow goes from a thread to one it waits for)\";\n"
	      "\tnode [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
	      "\tedge [fontname=\"Helvetica\", fontsize=9];\n", out);
	for (int i = 0; i < g->n; i++) {
		const struct node *x = &g->nodes[i];
		if (!pictured(g, i))
			continue;
		const char *fill = "#ffffff", *color = "#666666", *style = "rounded,filled";
		int pen = 1;
		switch (x->t.state) {
		case WF_PROGRESS: fill = "#d9ead3"; break;
		case WF_COMPUTE: fill = "#fff2cc"; break;
		case WF_WAIT: fill = x->can ? "#fff2cc" : "#f4cccc"; break;
		case WF_BLIND: fill = "#cfe2f3"; break;
		case WF_ENDED: fill = "#d9d9d9"; style = "rounded,filled,dashed"; break;
		case WF_UNSEEN: style = "rounded,dotted"; break;
		}
		if (is_member(g, i) || (x->t.state == WF_ENDED && g->units[x->unit].nw > 0)) {
			color = "#cc0000";
			pen = 3;
		} else if (is_root(g, i)) {
			color = "#e69138";
			fill = "#fce5cd";
			pen = 3;
		}
		fprintf(out, "\tn%d [label=\"", i);
		dot_string(out, x->t.name);
		if (*x->t.what) {
			fputs("\\n", out);
			dot_string(out, x->t.what);
		}
		if (x->t.state != WF_PROGRESS && x->t.state != WF_UNSEEN)
			fprintf(out, "\\n%.1f s", x->t.secs);
		if (*x->t.nobody) {
			fputs("\\n", out);
			dot_string(out, x->t.nobody);
		}
		fprintf(out, "\", fillcolor=\"%s\", color=\"%s\", style=\"%s\", penwidth=%d];\n", fill,
			color, style, pen);
	}
	for (int i = 0; i < g->n; i++) {
		const struct node *x = &g->nodes[i];
		bool any = !x->t.all && x->non > 1;
		for (int j = 0; j < x->non; j++) {
			const struct unit *u = &g->units[x->on[j]];
			for (int k = 0; k < u->n; k++) {
				int s = u->threads[k];
				const struct node *y = &g->nodes[s];
				const char *color = "#666666";
				int pen = 1;
				if (!x->can) {
					color = "#cc0000";
					pen = is_member(g, i) && (is_member(g, s) || y->t.state == WF_ENDED) ? 3 : 1;
				} else if (y->t.state == WF_WAIT || is_root(g, s)) {
					color = "#e69138";
					pen = 2;
				}
				fprintf(out, "\tn%d -> n%d [color=\"%s\", penwidth=%d%s];\n", i, s, color, pen,
					any ? ", style=dashed, label=\"any\"" : "");
			}
		}
	}
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}
