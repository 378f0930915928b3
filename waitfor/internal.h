/* internal.h - the wait-for graph as graph.c builds and find.c analyses it and report.c tells it; private to this folder. */
#ifndef WAITFOR_INTERNAL_H
#define WAITFOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "waitfor/waitfor.h"

enum cause_kind { C_CYCLE = 1, C_MISMATCH, C_ENDED, C_NOBODY };
enum vkind { V_THREAD, V_UNIT, V_GATE, V_ALWAYS };

struct node {
	struct wf_thread t; /* strings owned */
	int cause;          /* blocked: the finding that explains it, or -1 */
	int onpath;         /* blocked: the next thread on the way to its cause (for the picture) */
	int root, dist;     /* waits, can go on: the root it stalls on, and how many waits away */
};

struct gate {
	bool all;
	char *label;
};

/* An edge as given: from a thread or a gate, to a unit id or a gate. */
struct edge {
	int from, to;
	uint8_t from_gate, to_gate;
};

struct coll {
	int thread;
	int64_t comm;
	unsigned op;
	uint32_t num, root;
	char *name;
	bool past;      /* the thread's rank made it and went on (wf_coll_past) */
	uint32_t bytes; /* this member's bytes, ES_NONE: not known */
};

struct finding {
	enum cause_kind kind;
	int *members, n;    /* the cycle in order (each waits for the next), the mismatched, or the waiters */
	int ended_unit;     /* C_ENDED: its vertex */
	int coll;           /* C_MISMATCH: one of its collective's records */
	double secs;
	bool dropped;
};

struct root {
	int thread;
	int *direct, nd, *through, nt; /* threads, nearest first */
};

struct wf_graph {
	struct node *nodes;
	int n, cap;
	struct gate *gates;
	int ng, capg;
	struct edge *edges;
	size_t ne, cape;
	struct coll *colls;
	int nc, capc;
	/* the analysis */
	int nv, nunits;          /* vertices: threads, then units, then gates, then ALWAYS */
	uint8_t *vk;             /* vertex kinds */
	int *unit_id;            /* by unit vertex: its id */
	int *dense, ndense;      /* by id: its unit's index, when ids are few enough for a table */
	int *unit_of;            /* by thread: its unit vertex */
	bool *all;               /* by vertex: needs all its kids */
	bool *can;
	int *kid_at, *kids;      /* CSR: kids of v are kids[kid_at[v] .. kid_at[v + 1]) */
	int *par_at, *pars;
	bool *ended;             /* by unit vertex */
	struct finding *finds;
	int nfinds;
	struct root *roots;
	int nroots;
	bool analyzed;
	bool *seen;              /* wf_deadlock_threads' marks (all false between calls) and queue */
	int *queue;
	/* the strings of threads, gates and collectives: blocks that never
	 * move, emptied (not freed) by wf_clear, so a period mallocs nothing
	 * once the graph has been this big before */
	struct strblock *strs, *cur;
};

struct strblock {
	struct strblock *next;
	size_t used, cap;
	char data[];
};
#define STRBLOCK 65536

/* Thread t cannot go on (the analysis found it blocked). */
bool wf__blocked(const wf_graph *g, int t);
/* t[0..n) in the order of their names. */
void wf__sort_named(const wf_graph *g, int *t, int n);
/* Two members of one collective that give it different byte counts. */
bool wf__bytes_differ(const struct coll *a, const struct coll *b);

/* graph.c: the analysis's state dropped; the vertices, then the edges as arrays (0 or -ENOMEM). */
void wf__drop_analysis(wf_graph *g);
int wf__make_vertices(wf_graph *g);
int wf__make_edges(wf_graph *g);

#endif
