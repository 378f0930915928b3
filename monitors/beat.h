/* beat.h - heartbeat's judgement, shared by heartbeat and esview: each period, which threads progressed and, when some did not, who waits for whom. */
#ifndef ES_MONITORS_BEAT_H
#define ES_MONITORS_BEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "scopes/scopes.h"
#include "waitfor/waitfor.h"

/* What is known of a thread across periods. */
struct hb_thread {
	char where[200];     /* where it was when last seen stalled */
	uint64_t last_end;   /* ns */
	int seen;            /* had an event */
	int ended;           /* its rank or process ended */
	int stalled_now, stalled_periods, progress_periods;
};

/* One period's counts, and the stalled threads in words. */
struct hb_period {
	int progressing, stalled, idle, unreachable, ended;
	bool looked;         /* who waits for whom was worked out: hb_graph() holds it */
	bool more_threads;   /* threads appeared since the last period */
	char lost_at[128];   /* the first tuple server that did not answer */
	char line[4096];     /* "rank1.thread0 (in MPI_Recv from 0 tag 5 for 1.20 s), ..." */
};

typedef struct hb hb;

/*
 * Judges the threads of scope s (reduced to each thread's latest event,
 * ES_REDUCE_LATEST; s stays the caller's) every period_s, the first period
 * against where each one is now, so that a thread that stopped before is
 * stalled at once.  With always_look the wait-for graph is worked out
 * every period, not only when a thread stalled.  0, or a negative code.
 */
int hb_create(es_scope *s, double period_s, bool always_look, hb **out);
/*
 * The same judgement of a scope its owner consumes (every event, as
 * esview's): no scope of its own to pull, but each consumed event given
 * to hb_feed (its thread's latest kept), and hb_prime once the first pull
 * was fed, so that the first period judges against where each thread was
 * then, as hb_create's does.
 */
int hb_create_fed(es_scope *s, double period_s, hb **out);
void hb_feed(hb *h, int thread, const struct es_trace *e);
void hb_prime(hb *h);
void hb_destroy(hb *h);
/* One period: threads that appeared, the pull, the verdicts, the graph.
 * Errors of the graph are said once on stderr, prefixed prog.  0, or the
 * pull's negative code. */
int hb_step(hb *h, const char *prog, struct hb_period *p);
int hb_threads(const hb *h);
const struct hb_thread *hb_thread(const hb *h, int t);
/* The period's graph, analysed, when p->looked; deadlocks it names are
 * confirmed (hb_waits_confirm: every thread it stands on still inside the call
 * it was read in, with the same boards). */
const wf_graph *hb_graph(const hb *h);
/* The first thread stalled now for seconds or more (its stalled periods
 * times the period), how long in *for_s; -1 when none. */
int hb_stalled_for(const hb *h, double seconds, double *for_s);
/* Whether a deadlock was named in some period. */
bool hb_deadlocked(const hb *h);

#endif
