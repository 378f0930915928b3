/* internal.h - what the scope files share: the reduce and filter logic, subtree widths. */
#ifndef SCOPES_INTERNAL_H
#define SCOPES_INTERNAL_H

#include "scopes.h"

void es__reduce(enum es_reduce how, const struct es_trace *in, size_t k, struct es_trace *out);
bool es__filter_match(const void *filter_state, const struct es_trace *t);
/* Tuples a read through stage s returns: forks add their branches up,
 * reduces make one, the rest pass on what is below them. */
/* a consumer's leaf whose backlog it has not started yet (its server did
 * not answer): never an index, which counts tuples */
#define CURSOR_UNSET UINT64_MAX

/* The scope's own handlers (its spec's), and what of its pulls they were
 * given: a pull's slot is handed on only when its tuple is new. */
struct es_hset {
	int n;
	es_hlib *h[ES_SCOPE_HANDLERS];
	char why[ES_SCOPE_HANDLERS][300]; /* a handler that could not be loaded */
	struct es_trace *prev;            /* each slot's tuple at the last pull */
	size_t nprev;
	struct es_handler_event *ev;
	size_t cap;
};
int es__hset_open(es_scope *s);
void es__hset_close(struct es_hset *hs);
void es__hset_pulled(const es_scope *s, const struct es_trace *t, size_t width);
void es__hset_consumed(const es_scope *s, const struct es_trace *t, size_t n);

/* A scope (scopes.h): its trace spaces and leaves (scope.c), the tree it
 * pulls through, and what reading it keeps (read.c). */
struct es_scope {
	struct es_scope_spec spec;
	char job[ES_JOB_MAX + 1], of[PS_NAME_MAX + 1];
	char servers[1024], secret_file[256];
	int nspaces;
	es_space **spaces;
	int *ncoll;       /* per space: its collectors when the scope was built */
	char (*segs)[ES_WHERE_MAX];
	/* segments named like the job's that could not be opened, and why */
	int nskipped;
	struct { char seg[ES_WHERE_MAX]; int rc; } skipped[16];
	ps_elem **elems;  /* the leaves' elements, for a remote scope's batched fetch */
	bool *lost;       /* per leaf: its server could not be reached, last we asked */
	int nleaves, nthreads;
	struct es_leaf *leaves;
	char (*threads)[PS_NAME_MAX + 1];
	/* a refresh's: the threads the scope before knew, which keep their
	 * numbers (a consumer's records carry them), new ones after */
	const char (*seed)[PS_NAME_MAX + 1];
	int nseed;
	paths_path *root;
	int width;
	/* consume */
	uint64_t *cursor, before;
	uint64_t last_consume; /* base_now_ns(); 0 before the first */
	double headroom;  /* seconds until the fastest leaf would overwrite what is unread */
	struct es_trace *got;
	int *got_leaf;
	size_t cap;
	/* rate limit */
	uint64_t last;         /* the last pull, base_now_ns(); 0 before the first */
	/* runs: process -- the tree lives in a helper process on this node,
	 * asked through a request element and answering through a reply one */
	pid_t helper;
	ps_server *chan;
	ps_elem *req, *rep;
	uint64_t asked;
	char chan_name[PS_NAME_MAX + 1];
	/* handlers: the scope's own, kept across refreshes (a refresh's new
	 * scope borrows them) */
	struct es_hset *hs;
	bool hs_borrowed;
};

size_t es__scope_width_below(const paths_stage *s);
/* Gives a convert stage the clock of its leaf's trace space. */
void es__convert_clock(paths_stage *convert, const struct es_clock *c);

#endif
