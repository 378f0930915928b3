/* colop.h - colopmon's judgement of a job's collectives, as it reads them: MPI collectives matched across ranks, PATHS tree nodes' contributions, each rank's share of time in MPI, the wait states, the triggers and their snapshot. */
#ifndef ES_MONITORS_COLOP_H
#define ES_MONITORS_COLOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "monitors/monitors.h"

/* What colopmon's command line asked for. */
struct co_opts {
	const char *job;
	FILE *out;            /* where it says what it finds (NULL: stdout) */
	bool quiet;           /* no line per operation, only the summary */
	bool waits;           /* the wait states said each period and at the end */
	size_t places;        /* how many places the end lists (0: all) */
	const char *snapshot; /* the black box's directory on the first trigger (NULL: none) */
	double imbalance_ms;  /* trigger: a collective's imbalance above this (< 0: none) */
	double mpi_above;     /* trigger: a rank inside MPI more than this % of a second (< 0: none) */
	int wait_pattern;     /* trigger: this wait-state pattern (< 0: none) ... */
	double wait_pct;      /* ... above this % of the ranks' MPI time over the last second */
};

typedef struct co co;

/* The judgement of what o asks (the engine of the wait states only when
 * they are said or trigger).  0 or -ENOMEM. */
int co_create(const struct co_opts *o, co **out);
void co_destroy(co *c);
/* Who is who in s: MPI ranks by their trace spaces, tree edges by their
 * paths, the ranks' communicators (read whole, then what is new); again
 * whenever the scope grew.  0 or -ENOMEM. */
int co_identify(co *c, const es_scope *s);
int co_mpi_ranks(const co *c);
int co_tree_edges(const co *c);
/* Before a pull's events: the communicators its tuples name are listed. */
void co_refreshed(co *c);
/* One consumed event (ns stamps) of scope leaf `leaf`, in its thread's
 * order: matched, counted, said (unless quiet), a trigger judged. */
void co_event(co *c, const es_scope *s, const struct es_trace *t, int leaf);
/* Once a pull: the period's wait states said, their trigger judged. */
void co_period(co *c);
/* The end: per kind of collective its calls, latency, imbalance and who
 * came last; tree operations; the wait states' totals and places. */
void co_summary(co *c, const struct mon_watch *w, uint64_t missed, uint64_t before);

#endif
