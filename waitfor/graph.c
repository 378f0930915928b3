/* graph.c - the wait-for graph built (threads, units, gates, the edges between them) and laid out for the analysis (find.c), which report.c says in words and pictures. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pastset/pastset.h"
#include "waitfor/waitfor.h"
#include "internal.h"

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

void wf__drop_analysis(wf_graph *g)
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
	wf__drop_analysis(g);
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
int wf__make_vertices(wf_graph *g)
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
int wf__make_edges(wf_graph *g)
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
