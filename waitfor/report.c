/* report.c - the wait-for graph's findings in words (heartbeat's report) and as a Graphviz picture. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pastset/pastset.h"
#include "waitfor/waitfor.h"
#include "internal.h"

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

#define CYCLE_SHOWN 16 /* a longer cycle is named by its first threads and counted */

/* Threads blocked for finding f that are not in it. */
static int waiters_of(const wf_graph *g, int f, int **out)
{
	int n = 0;
	*out = calloc((size_t)g->n + 1, sizeof(int));
	if (!*out)
		return PS_ENOMEM;
	/* members marked for the moment: what is written over them at n <= i
	 * has been read already */
	for (int k = 0; k < g->finds[f].n; k++)
		(*out)[g->finds[f].members[k]] = -1;
	for (int i = 0; i < g->n; i++)
		if (wf__blocked(g, i) && g->nodes[i].cause == f && (*out)[i] != -1)
			(*out)[n++] = i;
	wf__sort_named(g, *out, n);
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
		int v = f->ended_unit;
		e = &g->nodes[g->kids[g->kid_at[v]]];
		if (e->t.secs < secs)
			secs = e->t.secs;
	}
	fprintf(out, "%sdeadlock for %.1f s: ", indent, secs);
	switch (f->kind) {
	case C_CYCLE:
		for (int i = 0; i < f->n && i < CYCLE_SHOWN; i++) {
			/* members[i] waits for members[i + 1]: print against the arrows */
			const struct node *x = &g->nodes[f->members[i == 0 ? 0 : f->n - i]];
			fprintf(out, "%s%s %s", i ? " <- " : "", x->t.label, x->t.what);
		}
		if (f->n > CYCLE_SHOWN)
			fprintf(out, " <- ... %d more in the cycle", f->n - CYCLE_SHOWN);
		break;
	case C_MISMATCH: {
		const struct coll *c0 = &g->colls[f->coll];
		fprintf(out, "collective mismatch on %s: ", c0->name);
		const struct coll *c[CYCLE_SHOWN];
		int nc = 0;
		bool by_bytes = false;
		for (int i = 0; i < f->n && nc < CYCLE_SHOWN; i++) {
			const struct coll *ci = NULL;
			for (int k = 0; k < g->nc && !ci; k++)
				if (g->colls[k].thread == f->members[i] && g->colls[k].comm == c0->comm &&
				    g->colls[k].num == c0->num)
					ci = &g->colls[k];
			if (!ci)
				continue;
			for (int k = 0; k < nc; k++)
				by_bytes |= wf__bytes_differ(ci, c[k]);
			c[nc++] = ci;
		}
		for (int i = 0; i < nc; i++) {
			fprintf(out, "%s%s %s %s #%u", i ? ", " : "", g->nodes[c[i]->thread].t.label,
				c[i]->past ? "went past" : "in", es_op_name(c[i]->op), (unsigned)c[i]->num);
			if (c[i]->root != ES_NONE)
				fprintf(out, " root %u", c[i]->root);
			if (by_bytes && c[i]->bytes != ES_NONE)
				fprintf(out, " with %u bytes", c[i]->bytes);
		}
		if (f->n > CYCLE_SHOWN)
			fprintf(out, " and %d more", f->n - CYCLE_SHOWN);
		break;
	}
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
		if (!g->finds[i].dropped)
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
	if (f < 0 || g->finds[f].dropped)
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
	int u = g->unit_of[t];
	return g->n <= 64 || x->t.state == WF_WAIT || g->par_at[u + 1] > g->par_at[u];
}

static void dot_node(const wf_graph *g, FILE *out, int i)
{
	const struct node *x = &g->nodes[i];
	const char *fill = "#ffffff", *color = "#666666", *style = "rounded,filled";
	int pen = 1;
	int u = g->unit_of[i];
	switch (x->t.state) {
	case WF_PROGRESS: fill = "#d9ead3"; break;
	case WF_COMPUTE: case WF_READY: fill = "#fff2cc"; break;
	case WF_WAIT: fill = g->can[i] ? "#fff2cc" : "#f4cccc"; break;
	case WF_BLIND: fill = "#cfe2f3"; break;
	case WF_ENDED: fill = "#d9d9d9"; style = "rounded,filled,dashed"; break;
	case WF_UNSEEN: style = "rounded,dotted"; break;
	}
	if (is_member(g, i) || (x->t.state == WF_ENDED && g->par_at[u + 1] > g->par_at[u])) {
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
	fprintf(out, "\", fillcolor=\"%s\", color=\"%s\", style=\"%s\", penwidth=%d];\n", fill, color, style, pen);
}

/* An edge from vertex v (a thread or a gate) to w; a unit is drawn as its threads. */
static void dot_edges(const wf_graph *g, FILE *out, int v)
{
	int gate0 = g->n + g->nunits;
	bool any = !g->all[v] && g->kid_at[v + 1] - g->kid_at[v] > 1, red = !g->can[v];
	for (int k = g->kid_at[v]; k < g->kid_at[v + 1]; k++) {
		int w = g->kids[k];
		if (g->vk[w] == V_ALWAYS)
			continue;
		int lo = w, hi = w + 1;
		if (g->vk[w] == V_UNIT)
			lo = g->kid_at[w], hi = g->kid_at[w + 1];
		for (int j = lo; j < hi; j++) {
			int s = g->vk[w] == V_UNIT ? g->kids[j] : w;
			const char *color = "#666666";
			int pen = 1;
			bool mem = v < g->n && is_member(g, v);
			if (red) {
				color = "#cc0000";
				pen = mem && s < g->n && (is_member(g, s) || g->nodes[s].t.state == WF_ENDED) ? 3 : 1;
			} else if ((s < g->n && (g->nodes[s].t.state == WF_WAIT || is_root(g, s))) || s >= g->n) {
				color = "#e69138";
				pen = 2;
			}
			fprintf(out, "\t%c%d -> %c%d [color=\"%s\", penwidth=%d%s];\n", v < g->n ? 'n' : 'g',
				v < g->n ? v : v - gate0, s < g->n ? 'n' : 'g', s < g->n ? s : s - gate0, color,
				pen, any ? ", style=dashed, label=\"any\"" : "");
		}
	}
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
	for (int i = 0; i < g->n; i++)
		if (pictured(g, i))
			dot_node(g, out, i);
	int gate0 = g->n + g->nunits;
	for (int k = 0; k < g->ng; k++) {
		fprintf(out, "\tg%d [shape=diamond, style=\"filled\", fillcolor=\"%s\", label=\"", k,
			g->can[gate0 + k] ? "#fff2cc" : "#f4cccc");
		dot_string(out, *g->gates[k].label ? g->gates[k].label : g->gates[k].all ? "all" : "any");
		fputs("\"];\n", out);
	}
	for (int i = 0; i < g->n; i++)
		if (pictured(g, i))
			dot_edges(g, out, i);
	for (int k = 0; k < g->ng; k++)
		dot_edges(g, out, gate0 + k);
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}
