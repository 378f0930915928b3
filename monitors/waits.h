/* waits.h - what each thread of a running job waits for, read from what its collectors wrote, as heartbeat's wait-for graph (waitfor/) takes it. */
#ifndef ES_MONITORS_WAITS_H
#define ES_MONITORS_WAITS_H

#include <stdbool.h>

#include "scopes/scopes.h"
#include "waitfor/waitfor.h"

/* What heartbeat saw this period, per scope thread. */
struct hb_look {
	const struct es_trace *beat; /* each thread's latest tuple (empty: none yet) */
	const bool *progressed;      /* it had a new event since the last look */
	const bool *lost;            /* its tuple server did not answer */
	const double *idle_s;        /* seconds since its latest event ended */
	const bool *in;              /* it is inside an operation (es_scope_in_flight) ... */
	const struct es_flight *fl;  /* ... this one */
	es_mpi *mpi;                 /* the job's MPI side (NULL: none), refreshed this period */
};
/* Fills g from the job behind s, thread i of the scope as the graph's i:
 * each thread's state, and what it waits for, from its notes (as look
 * holds them), the ranks' communicators, requests, collectives begun and
 * messages counted (look->mpi), and the PastSet elements' other paths (who
 * writes them).  Reads only what the collectors already wrote. */
int hb_waits_build(wf_graph *g, const es_scope *s, const struct hb_look *look);
/* After hb_waits_build and wf_analyze, with the same look: drops each
 * deadlock unless every thread it stands on (wf_deadlock_threads) is, read
 * again now, inside the very call look said, with its boards as read then
 * (waits.c, rule O).  0, or PS_ENOMEM. */
int hb_waits_confirm(wf_graph *g, const es_scope *s, const struct hb_look *look);

#endif
