/* waitfor.h - the waiting relation of a job: who waits for whom, the roots of its stalls, its deadlocks named. */
#ifndef ES_WAITFOR_H
#define ES_WAITFOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/*
 * A thread waits for another when it is inside an operation only the other
 * can end: a receive for its peer's send, a collective for the members that
 * have not reached it, a read or take of a PastSet element for its writers
 * (the waiting relation W(A,B) of the S-Net monitoring framework, and the
 * wait-for graph MUST builds from MPI calls).  Threads stand in for each
 * other within a unit, an MPI rank: a receive from rank 3 waits for any of
 * rank 3's threads.
 *
 * What a thread waits for is a condition over units: all of them (a
 * collective), any one (an any-source receive), or, through gates, any
 * mix (MPI_Waitall over an any-source receive and a nonblocking
 * collective: all of [any of the senders] and [all of the members not
 * there yet]).  A collective's members not there yet are one gate that
 * every member inside it waits for, so that a collective of n members is n
 * edges, not n squared.
 *
 * The graph is built anew each period from what the collectors already
 * wrote (their notes, boards and latest tuples), and nothing is asked of
 * the application.  wf_analyze() then finds which threads can still go on
 * (an AND-OR reachability, linear in the edges), and of those that cannot,
 * why: a cycle, a collective whose members called different things, a rank
 * that has ended, an element no thread writes.  A thread that can go on but
 * does not is in a stall whose root is a thread that computes, progresses
 * elsewhere, or waits where the notes cannot follow.
 */

enum wf_state {
	WF_PROGRESS = 1, /* made progress in the last period */
	WF_COMPUTE,      /* stalled between operations: it waits for nobody */
	WF_WAIT,         /* stalled inside an operation: it waits for the units given */
	WF_BLIND,        /* stalled inside one whose awaited are not recorded */
	WF_ENDED,        /* its process ended, or it is inside or past MPI_Finalize */
	WF_UNSEEN,       /* not judged: its server did not answer, or it has no event yet */
	WF_READY,        /* stalled inside a call that nothing holds up: what it waits for is there */
};

struct wf_thread {
	const char *name;   /* "rank3.thread0", "t2" */
	const char *label;  /* how chains name it: "rank3" for a rank's only thread */
	int unit;           /* the threads of a unit (an MPI rank) stand in for each other */
	enum wf_state state;
	double secs;        /* how long it has been in this state */
	const char *what;   /* "in MPI_Recv from 1 tag 5", "computes (not in MPI)", "has ended (...)" */
	bool all;           /* WF_WAIT: needs every unit and gate it waits for, else one */
	const char *nobody; /* WF_WAIT on nothing: why none can answer ("which no thread writes") */
	int64_t coll;       /* inside a collective: its communicator (an id); else -1 */
	unsigned coll_op;   /* ... the call, its number there, its root (ES_NONE: none) */
	uint32_t coll_num;
	uint32_t coll_root;
	const char *coll_name; /* "communicator 5a3 (ranks 0, 1)" */
};

typedef struct wf_graph wf_graph;

int wf_create(wf_graph **out);
void wf_destroy(wf_graph *g);
/* Forgets every thread and gate, for the next period. */
void wf_clear(wf_graph *g);
/* Adds a thread (its strings are copied); returns its index, or PS_EINVAL /
 * PS_ENOMEM.  A thread with coll >= 0 is in that collective (wf_coll). */
int wf_add(wf_graph *g, const struct wf_thread *t);
/* Thread t (WF_WAIT) waits for unit u; the same unit twice counts once.  A
 * unit with no thread in the graph is taken to be able to go on. */
int wf_wait(wf_graph *g, int t, int unit);
/* A gate: all (every unit and gate it waits for) or any (one of them);
 * returns its handle.  label says what it stands for, in the picture. */
int wf_gate(wf_graph *g, bool all, const char *label);
/* Gate k waits for unit u, or for gate j; thread t waits for gate k. */
int wf_gate_wait(wf_graph *g, int k, int unit);
int wf_gate_gate(wf_graph *g, int k, int j);
int wf_wait_gate(wf_graph *g, int t, int k);
/* Thread t is inside collective number num of communicator comm (one of
 * several, for a wait on nonblocking ones): op and root, for the mismatch
 * of members that called different ones there. */
int wf_coll(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, const char *name);
/* ... with this member's bytes: members of a collective that must give
 * equal bytes (MPI_Bcast, the reductions, Allgather, Alltoall) and did not
 * are a mismatch too. */
int wf_coll_bytes(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, uint32_t bytes,
		  const char *name);
/* Thread t's rank made op as number num there and went on (t now blocked
 * elsewhere): against a member still inside a different one, a mismatch. */
int wf_coll_past(wf_graph *g, int t, int64_t comm, unsigned op, uint32_t num, uint32_t root, const char *name);

/* Finds who can go on, the roots of stalls and the deadlocks. */
int wf_analyze(wf_graph *g);
/* Thread i's state as added (WF_WAIT on units not in the graph becomes
 * WF_BLIND), or 0 for no such thread. */
enum wf_state wf_state_of(const wf_graph *g, int i);
/* What thread i is inside, in words, as added ("" for no such thread). */
const char *wf_what(const wf_graph *g, int i);
/* Whether thread i is blocked: it waits, and nothing it waits for can go on. */
bool wf_blocked(const wf_graph *g, int i);
/* Roots that some thread waits for, and deadlocks (after wf_analyze). */
int wf_stalls(const wf_graph *g);
int wf_deadlocks(const wf_graph *g);
/* The threads of deadlock i, to check before naming it: its members,
 * those that wait for it, and every thread its members cannot go on
 * without (blocked or ended, through units and gates); how many, or
 * PS_ENOMEM. */
int wf_deadlock_threads(wf_graph *g, int i, int *out, int max);
/* Drops deadlock i (a member moved while the graph was read). */
void wf_drop_deadlock(wf_graph *g, int i);
/* A line per deadlock, then per root, each after indent:
 *   deadlock for 2.0 s: rank0 in MPI_Recv from 1 tag 5 <- rank1 in MPI_Recv from 0 tag 7
 *   stall: rank3.thread0 computes (not in MPI) for 2.0 s; 3 threads wait for it: rank2
 *          directly, rank1 and rank0 through it
 * In a cycle "A <- B" says B waits for A, and the first waits for the last. */
int wf_report(const wf_graph *g, FILE *out, const char *indent);
/* The graph in Graphviz DOT: deadlocked threads and their waits in red, the
 * roots of stalls and the chains to them in orange. */
int wf_dot(const wf_graph *g, FILE *out, const char *title);

#endif
