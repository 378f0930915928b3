/* waitfor.c - the wait-for graph: who can still go on, why the others cannot, and the roots of stalls (waitfor_report.c says it in words and pictures). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pastset/pastset.h"
#include "waitfor.h"
#include "waitfor_int.h"

/*
 * At analysis every thread, unit and gate is a vertex; an edge goes from a
 * vertex to one it waits for.  A thread waits for its units and gates (all
 * or any of them, as it says), a gate likewise, and a unit for its threads
 * (any one of them).  Edges are kept as a list while the graph is built and
 * laid out as arrays (kids, and parents for going back) once, so that each
 * step of the analysis is linear in the edges: 100,000 threads in well
 * under a tenth of a second.
 */


int wf_create(wf_graph **out)
{
	if (!out)
		return PS_EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : PS_ENOMEM;
}

static void drop_analysis(wf_graph *g)
{
	free(g->vk), free(g->unit_id), free(g->unit_of), free(g->all), free(g->can), free(g->dense);
	g->dense = NULL, g->ndense = 0;
	free(g->kid_at), free(g->kids), free(g->par_at), free(g->pars), free(g->ended);
	free(g->seen), free(g->queue);
	g->seen = NULL, g->queue = NULL;
	g->vk = NULL, g->unit_id = g->unit_of = NULL, g->all = g->can = g->ended = NULL;
	g->kid_at = g->kids = g->par_at = g->pars = NULL;
	for (int i = 0; i < g->nfinds; i++)
		free(g->finds[i].members);
	free(g->finds);
	g->finds = NULL;
	g->nfinds = 0;
	for (int i = 0; i < g->nroots; i++) {
		free(g->roots[i].direct);
		free(g->roots[i].through);
	}
	free(g->roots);
	g->roots = NULL;
	g->nroots = 0;
	g->analyzed = false;
}

void wf_clear(wf_graph *g)
{
	if (!g)
		return;
	drop_analysis(g);
	for (struct strblock *b = g->strs; b; b = b->next)
		b->used = 0;
	g->cur = g->strs;
	g->n = g->ng = g->nc = 0;
	g->ne = 0;
}

void wf_destroy(wf_graph *g)
{
	if (!g)
		return;
	wf_clear(g);
	free(g->nodes);
	free(g->gates);
	free(g->edges);
	free(g->colls);
	for (struct strblock *b = g->strs, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(g);
}

/* A copy of s (NULL: "") among the graph's strings; NULL if no memory. */
static char *keep(wf_graph *g, const char *s)
{
	static char empty[] = "";
	if (!s || !*s)
		return empty;
	size_t n = strlen(s) + 1;
	while (g->cur && g->cur->cap - g->cur->used < n && g->cur->next)
		g->cur = g->cur->next; /* emptied blocks of earlier periods first */
	if (!g->cur || g->cur->cap - g->cur->used < n) {
		size_t cap = n > STRBLOCK ? n : STRBLOCK;
		struct strblock *b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		*b = (struct strblock){ NULL, 0, cap };
		if (g->cur) /* at the end of the list: the blocks after cur are all full */
			b->next = g->cur->next, g->cur->next = b;
		else
			g->strs = b;
		g->cur = b;
	}
	char *p = g->cur->data + g->cur->used;
	memcpy(p, s, n);
	g->cur->used += n;
	return p;
}

/* Room for one more in an array of elements of size sz. */
static int room(void **a, int n, int *cap, size_t sz)
{
	if (n < *cap)
		return 0;
	int nc = *cap ? *cap * 2 : 16;
	void *na = realloc(*a, sz * (size_t)nc);
	if (!na)
		return PS_ENOMEM;
	*a = na;
	*cap = nc;
	return 0;
}

static int add_coll(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root,
		    uint32_t bytes, const char *name, bool past)
{
	if (!g || t < 0 || t >= g->n || g->analyzed)
		return PS_EINVAL;
	for (int k = 0; past && k < g->nc; k++)
		if (g->colls[k].thread == t && g->colls[k].comm == comm && g->colls[k].num == num)
			return 0; /* said already, by another member waiting there */
	if (room((void **)&g->colls, g->nc, &g->capc, sizeof(*g->colls)))
		return PS_ENOMEM;
	char *nm = keep(g, name);
	if (!nm)
		return PS_ENOMEM;
	g->colls[g->nc++] = (struct coll){ t, comm, op, num, root, nm, past, bytes };
	return 0;
}

int wf_coll(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, const char *name)
{
	return add_coll(g, t, comm, op, num, root, ES_NONE, name, false);
}

int wf_coll_bytes(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, uint32_t bytes,
		  const char *name)
{
	return add_coll(g, t, comm, op, num, root, bytes, name, false);
}

int wf_coll_past(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, const char *name)
{
	return add_coll(g, t, comm, op, num, root, ES_NONE, name, true);
}

/* Collectives whose members must each give the same bytes (equal type
 * signatures): a difference is a mismatch as a different call is. */
static bool same_bytes(unsigned op)
{
	switch (op) {
	case ES_OP_MPI_BCAST: case ES_OP_MPI_IBCAST: case ES_OP_MPI_REDUCE: case ES_OP_MPI_IREDUCE:
	case ES_OP_MPI_ALLREDUCE: case ES_OP_MPI_IALLREDUCE: case ES_OP_MPI_SCAN: case ES_OP_MPI_ISCAN:
	case ES_OP_MPI_EXSCAN: case ES_OP_MPI_IEXSCAN: case ES_OP_MPI_ALLTOALL: case ES_OP_MPI_IALLTOALL:
	case ES_OP_MPI_ALLGATHER: case ES_OP_MPI_IALLGATHER: case ES_OP_MPI_REDUCE_SCATTER_BLOCK:
	case ES_OP_MPI_IREDUCE_SCATTER_BLOCK:
		return true;
	default:
		return false;
	}
}

bool wf__bytes_differ(const struct coll *a, const struct coll *b)
{
	return a->op == b->op && same_bytes(a->op) && a->bytes != ES_NONE && b->bytes != ES_NONE &&
	       a->bytes != b->bytes;
}

int wf_add(wf_graph *g, const struct wf_thread *t)
{
	if (!g || !t || !t->name || t->state < WF_PROGRESS || t->state > WF_READY || g->analyzed)
		return PS_EINVAL;
	if (room((void **)&g->nodes, g->n, &g->cap, sizeof(*g->nodes)))
		return PS_ENOMEM;
	struct node *x = &g->nodes[g->n];
	memset(x, 0, sizeof(*x));
	x->t = *t;
	x->t.name = keep(g, t->name);
	x->t.label = keep(g, t->label && *t->label ? t->label : t->name);
	x->t.what = keep(g, t->what);
	x->t.nobody = keep(g, t->nobody);
	x->t.coll_name = keep(g, t->coll_name);
	if (!x->t.name || !x->t.label || !x->t.what || !x->t.nobody || !x->t.coll_name)
		return PS_ENOMEM; /* what it kept stays until wf_clear */
	int i = g->n++;
	if (t->coll >= 0 && wf_coll(g, i, t->coll, t->coll_op, t->coll_num,
				    t->coll_root ? t->coll_root : ES_NONE, t->coll_name)) {
		g->n--;
		return PS_ENOMEM;
	}
	return i;
}

static int add_edge(wf_graph *g, int from, bool from_gate, int to, bool to_gate)
{
	/* the same wait twice counts once: a thread's edges come together */
	for (size_t i = g->ne; i-- > 0;) {
		const struct edge *e = &g->edges[i];
		if (e->from != from || e->from_gate != from_gate)
			break;
		if (e->to == to && e->to_gate == to_gate)
			return 0;
	}
	if (g->ne == g->cape) {
		size_t nc = g->cape ? g->cape * 2 : 64;
		struct edge *ne = realloc(g->edges, sizeof(*ne) * nc);
		if (!ne)
			return PS_ENOMEM;
		g->edges = ne;
		g->cape = nc;
	}
	g->edges[g->ne++] = (struct edge){ from, to, from_gate, to_gate };
	return 0;
}

int wf_wait(wf_graph *g, int t, int unit)
{
	if (!g || t < 0 || t >= g->n || g->nodes[t].t.state != WF_WAIT || g->analyzed)
		return PS_EINVAL;
	return add_edge(g, t, false, unit, false);
}

int wf_gate(wf_graph *g, bool all, const char *label)
{
	if (!g || g->analyzed)
		return PS_EINVAL;
	if (room((void **)&g->gates, g->ng, &g->capg, sizeof(*g->gates)))
		return PS_ENOMEM;
	char *l = keep(g, label);
	if (!l)
		return PS_ENOMEM;
	g->gates[g->ng] = (struct gate){ all, l };
	return g->ng++;
}

int wf_gate_wait(wf_graph *g, int k, int unit)
{
	if (!g || k < 0 || k >= g->ng || g->analyzed)
		return PS_EINVAL;
	return add_edge(g, k, true, unit, false);
}

int wf_gate_gate(wf_graph *g, int k, int j)
{
	if (!g || k < 0 || k >= g->ng || j < 0 || j >= g->ng || g->analyzed)
		return PS_EINVAL;
	return add_edge(g, k, true, j, true);
}

int wf_wait_gate(wf_graph *g, int t, int k)
{
	if (!g || t < 0 || t >= g->n || g->nodes[t].t.state != WF_WAIT || k < 0 || k >= g->ng || g->analyzed)
		return PS_EINVAL;
	return add_edge(g, t, false, k, true);
}

/* --- layout ------------------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int unit_vertex(const wf_graph *g, int id)
{
	if (g->dense)
		return id >= 0 && id < g->ndense && g->dense[id] >= 0 ? g->n + g->dense[id] : -1;
	int lo = 0, hi = g->nunits - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (g->unit_id[mid] == id)
			return g->n + mid;
		if (g->unit_id[mid] < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* A vertex per thread, unit, gate, and one that can always go on (a unit
 * no thread is in: nothing known holds it up). */
static int make_vertices(wf_graph *g)
{
	int *ids = malloc(sizeof(int) * (size_t)(g->n + 1));
	if (!ids)
		return PS_ENOMEM;
	int lo = INT32_MAX, hi = -1, nu = 0;
	for (int i = 0; i < g->n; i++) {
		ids[i] = g->nodes[i].t.unit;
		lo = ids[i] < lo ? ids[i] : lo;
		hi = ids[i] > hi ? ids[i] : hi;
	}
	/* ranks 0..n-1, the usual case: a table by id, no sort, no search */
	if (lo >= 0 && hi < 4 * g->n + 1024 && (g->dense = malloc(sizeof(int) * ((size_t)hi + 1)))) {
		g->ndense = hi + 1;
		for (int u = 0; u <= hi; u++)
			g->dense[u] = -1;
		for (int i = 0; i < g->n; i++)
			g->dense[ids[i]] = 0;
		for (int u = 0; u <= hi; u++)
			if (!g->dense[u])
				g->dense[u] = nu, ids[nu++] = u;
	} else {
		qsort(ids, (size_t)g->n, sizeof(int), cmp_int);
		for (int i = 0; i < g->n; i++)
			if (!nu || ids[nu - 1] != ids[i])
				ids[nu++] = ids[i];
	}
	g->unit_id = ids;
	g->nunits = nu;
	g->nv = g->n + nu + g->ng + 1;
	size_t nv = (size_t)g->nv;
	g->vk = calloc(nv, 1);
	g->all = calloc(nv, sizeof(bool));
	g->can = calloc(nv, sizeof(bool));
	g->ended = calloc(nv, sizeof(bool));
	g->unit_of = malloc(sizeof(int) * ((size_t)g->n + 1));
	if (!g->vk || !g->all || !g->can || !g->ended || !g->unit_of)
		return PS_ENOMEM;
	for (int i = 0; i < g->n; i++) {
		g->vk[i] = V_THREAD;
		g->all[i] = g->nodes[i].t.all;
		g->unit_of[i] = unit_vertex(g, g->nodes[i].t.unit);
	}
	for (int u = 0; u < nu; u++)
		g->vk[g->n + u] = V_UNIT;
	for (int k = 0; k < g->ng; k++) {
		g->vk[g->n + nu + k] = V_GATE;
		g->all[g->n + nu + k] = g->gates[k].all;
	}
	g->vk[g->nv - 1] = V_ALWAYS;
	return 0;
}

/* Kids and parents as arrays; a thread waiting only for units the graph
 * does not hold is blind to what holds it up. */
static int make_edges(wf_graph *g)
{
	size_t nv = (size_t)g->nv, ne = g->ne + (size_t)g->n;
	int *from = malloc(sizeof(int) * (ne + 1)), *to = malloc(sizeof(int) * (ne + 1));
	g->kid_at = calloc(nv + 1, sizeof(int));
	g->par_at = calloc(nv + 1, sizeof(int));
	g->kids = malloc(sizeof(int) * (ne + 1));
	g->pars = malloc(sizeof(int) * (ne + 1));
	int *fill = calloc(nv + 1, sizeof(int));
	int rc = from && to && g->kid_at && g->par_at && g->kids && g->pars && fill ? 0 : PS_ENOMEM;
	size_t m = 0;
	int always = g->nv - 1, gate0 = g->n + g->nunits;
	/* per thread: it waits on something (1), on a unit in the graph (2), on a gate (4) */
	uint8_t *on = rc ? NULL : calloc((size_t)g->n + 1, 1);
	if (!rc && !on)
		rc = PS_ENOMEM;
	for (size_t i = 0; i < g->ne && !rc; i++) {
		const struct edge *e = &g->edges[i];
		int f = e->from_gate ? gate0 + e->from : e->from;
		int t = e->to_gate ? gate0 + e->to : unit_vertex(g, e->to);
		if (!e->from_gate)
			on[e->from] |= (uint8_t)(1 | (t >= 0 ? 2 : 0) | (e->to_gate ? 4 : 0));
		if (t < 0)
			t = always;
		from[m] = f, to[m++] = t;
	}
	for (int i = 0; i < g->n && !rc; i++) { /* a unit waits for any of its threads */
		from[m] = g->unit_of[i], to[m++] = i;
		struct node *x = &g->nodes[i];
		if (x->t.state == WF_WAIT && on[i] == 1)
			x->t.state = WF_BLIND; /* waits only for what the graph does not hold */
	}
	for (size_t i = 0; i < m && !rc; i++)
		g->kid_at[from[i] + 1]++, g->par_at[to[i] + 1]++;
	for (size_t v = 0; v < nv && !rc; v++)
		g->kid_at[v + 1] += g->kid_at[v], g->par_at[v + 1] += g->par_at[v];
	for (size_t i = 0; i < m && !rc; i++)
		g->kids[g->kid_at[from[i]] + fill[from[i]]++] = to[i];
	memset(fill, 0, sizeof(int) * (nv + 1));
	for (size_t i = 0; i < m && !rc; i++)
		g->pars[g->par_at[to[i]] + fill[to[i]]++] = from[i];
	free(from), free(to), free(fill), free(on);
	return rc;
}

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
	drop_analysis(g);
	int rc;
	if ((rc = make_vertices(g)) || (rc = make_edges(g)) || (rc = propagate(g)) ||
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

