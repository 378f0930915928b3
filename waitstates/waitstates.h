/* waitstates.h - why time is lost in an MPI job: Scalasca's wait-state patterns, found in the tuples EventSpace records, live or after the run. */
#ifndef ES_WAITSTATES_H
#define ES_WAITSTATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/*
 * One engine serves every reader: esprofile and esconvert feed it an
 * archive's events, esview and colopmon the events they consume while the
 * job runs.  A caller feeds each thread's events in that thread's order
 * (threads may interleave in any way), with what only it can resolve: the
 * communicator's id and size, the two ends of a message (a key both ends
 * carry), the call site.  The engine pairs, matches and judges, and adds
 * each wait state's seconds to its (pattern, rank, call site) row.
 *
 * The patterns are Scalasca's (its MPI pattern set, as its analyser
 * computes them), on EventSpace's events: a call's enter is its tuple's
 * start and its leave the tuple's end; a collective's begin and end are
 * its call's.  E(X) is call X's enter, L(X) its leave; ω a wait.
 *
 * Point-to-point (a receive is judged in the call that completes it: the
 * blocking receive, MPI_Sendrecv, or the MPI_Wait* that completes an
 * Irecv; a receive completed by a test, which does not wait, never is):
 *  - Late Sender: R the call that completes the receive, S the call that
 *    sent it (MPI_Send..., the MPI_Isend...):  ω = min(E(S), L(R)) − E(R)
 *    when positive.  A wait that completes several receives (Waitall)
 *    counts only its longest (it waited once, for its latest sender).
 *  - Late Sender, Wrong Order: each receiving thread keeps its last 100
 *    Late Sender waits; a later receive whose message was sent before one
 *    of theirs was (by E(S)) shows that the program waited for a message
 *    while an older one was there to be received: that wait counts again
 *    here, and under "different source" or "same source" by whether the
 *    two messages came from the same rank.  A sub-pattern: its seconds are
 *    also Late Sender's.
 *  - Late Receiver: C the call that completes a send (a blocking MPI_Send
 *    or MPI_Ssend; the MPI_Wait* of an MPI_Isend or MPI_Issend), Q the call
 *    that posted its receive (MPI_Recv, the MPI_Irecv):  ω = E(Q) − E(C)
 *    when positive and L(C) > E(Q).  Whether a standard send waited for
 *    its receiver is not recorded (MPI may buffer it or not): like
 *    Scalasca, a send is counted as having waited only when it ended after
 *    the receive was posted, so an eager send that returned at once never
 *    is, and one that overlapped the posting only by chance is.  Buffered
 *    and ready sends, MPI_Sendrecv's send, and sends completed by a test
 *    never are; nor is a wait already counted as a Late Sender.
 *
 * Collectives (b_i, e_i: member i's begin and end; a communicator of one
 * member never waits):
 *  - Wait at Barrier (MPI_Barrier): Lb = max b_j, ω_i = min(Lb, e_i) − b_i;
 *    Barrier Completion: Fe = min e_j, c_i = e_i − max(Fe, min(Lb, e_i)).
 *  - Wait at N×N, N×N Completion (Allreduce, Allgather(v), Alltoall(v,w),
 *    Reduce_scatter(_block)): the same formulas.  Scalasca narrows the
 *    members to those that send or receive bytes; every member is taken
 *    to here (the tuples hold one byte count a member).
 *  - Late Broadcast (Bcast, Scatter(v); not when the root sends nothing):
 *    each other member that began before the root waits
 *    min(b_root, e_i) − b_i.
 *  - Early Reduce (Reduce, Gather(v)): the root waits
 *    min(max b_j, e_root) − b_root.
 *  - Early Scan (Scan, Exscan): member of rank i waits
 *    min(max_{j ≤ i} b_j, e_i) − b_i.
 *  - Wait at Fence (MPI_Win_fence): when the members' calls overlap
 *    (min e_j > max b_j), each waits max b_j − b_i.
 *  - Nonblocking collectives (Ibarrier, Iallreduce, Ibcast...), which
 *    Scalasca does not analyse, are judged at the wait W_i that completes
 *    each member's request, by the same patterns with the members' posts
 *    p_j (the nonblocking call's enter) for their begins: a member waits
 *    min(P, L(W_i)) − E(W_i) where P is the latest post it could not
 *    complete without (every member's for Ibarrier and the N×N forms, the
 *    root's for Ibcast and Iscatter(v), the latest member's for the root
 *    of Ireduce and Igather(v), the latest lower rank's for Iscan and
 *    Iexscan).  A member whose request a test completed is not judged.
 *
 * One-sided general active target synchronization (gats.c, from the
 * group marks the collectors write after MPI_Win_post and MPI_Win_start):
 *  - Late Post: an origin waits in MPI_Win_complete (or in an MPI_Win_start
 *    that blocks) for the latest MPI_Win_post of its epoch's targets;
 *  - Early Wait: a target waits in MPI_Win_wait for the latest
 *    MPI_Win_complete of its epoch's origins.
 *
 * Not analysed (each counted in ws_stats, never guessed): neighbourhood
 * collectives; communicators' and windows' creation; passive target
 * synchronization (locks); receives and collectives whose other ends were
 * not recorded.
 * A wait capped by its own call's end (a clock that put the other end
 * later than the call's end) counts as a clock violation.
 */

typedef struct ws ws;

/* The events the engine judges are tuples as the caller resolved them:
 * struct es_event (trace.h). */

enum ws_pattern {
	WS_LATE_SENDER = 0,
	WS_LATE_SENDER_WO,    /* Late Sender, Wrong Order (inside Late Sender) */
	WS_LSWO_DIFFERENT,    /* ... from a different source (inside Wrong Order) */
	WS_LSWO_SAME,         /* ... from the same source (inside Wrong Order) */
	WS_LATE_RECEIVER,
	WS_WAIT_BARRIER,
	WS_BARRIER_COMPLETION,
	WS_WAIT_NXN,
	WS_NXN_COMPLETION,
	WS_LATE_BROADCAST,
	WS_EARLY_REDUCE,
	WS_EARLY_SCAN,
	WS_WAIT_FENCE,
	WS_LATE_POST,         /* an origin's MPI_Win_start or _complete waits for a target's MPI_Win_post */
	WS_EARLY_WAIT,        /* a target's MPI_Win_wait waits for an origin's MPI_Win_complete */
	WS_NPATTERNS
};
/* "late_sender" ... as JSON, triggers and the command lines name them */
const char *ws_pattern_key(enum ws_pattern p);
/* "Late Sender" ... as Scalasca's documentation names them */
const char *ws_pattern_name(enum ws_pattern p);
/* The pattern a sub-pattern's seconds are also counted in, or -1. */
int ws_pattern_parent(enum ws_pattern p);
/* The pattern of a key ("late_sender", "late-sender"), or -1. */
int ws_pattern_of(const char *key);

/* Seconds of one pattern waited at one call site (the call the time was
 * spent in: the receive, the wait, the collective) on one rank. */
struct ws_row {
	uint8_t pattern;   /* enum ws_pattern */
	uint16_t op;       /* the call the wait was spent in (its code) */
	uint16_t of;       /* what it waited to complete, when not op itself (MPI_Irecv
			    * in an MPI_Wait, MPI_Ibcast...); 0: op */
	int32_t rank;
	uint32_t site;     /* the caller's key; 0: not known */
	uint64_t ns, count;
	uint64_t worst_ns; /* the longest one */
};

/* What the engine could not judge, and why. */
struct ws_stats {
	uint64_t events;
	uint64_t receives, sends;  /* message ends judged */
	uint64_t colls;            /* collective operations judged (all members seen) */
	uint64_t unpaired;         /* message ends whose other end never came, or that came
				    * with no key to be paired by (ES_EVENT_NO_MSG, a peer named) */
	uint64_t incomplete;       /* collectives some member of which never came */
	uint64_t by_test;          /* completions a test made: never a wait state */
	uint64_t not_analysed;     /* calls of the kinds said above */
	uint64_t clock_violations; /* waits capped by their own call's end */
	uint64_t unseen_calls;     /* completions whose wait or test was not the thread's next
				    * event: their messages paired, their waits not judged */
	uint64_t given_up;         /* calls judged without an end that had not come within a
				    * ws_flush's horizon (the end, when it came, was alone) */
	uint64_t mpi_nested_lost;  /* calls around more outermost calls than a thread remembers:
				    * ws_mpi_ns counts those inside them twice */
};

int ws_create(ws **out);
void ws_destroy(ws *w);
/* 0 or -ENOMEM (the engine stays usable: the event is not counted). */
int ws_event(ws *w, const struct es_event *e);
/* Gives up on what has waited since before `before` (ns) for an end that
 * has not come (a message's other end, a collective's last member),
 * judging what it can without it: a live reader's horizon.  UINT64_MAX:
 * everything (the run is over). */
void ws_flush(ws *w, uint64_t before);
/* The rows so far, in no order; valid until the next ws_event/ws_flush. */
size_t ws_rows(const ws *w, const struct ws_row **out);
void ws_stats(const ws *w, struct ws_stats *out);
/* A rank's time inside MPI calls so far (es_in_mpi_call), ns: the whole
 * of which its waits are a part.  Outermost calls only, as a profile
 * counts them: a poll's streak (collectors.h), whose tuple comes after
 * the calls made while it polled, counts once with them inside it. */
uint64_t ws_mpi_ns(const ws *w, int rank);
int ws_ranks(const ws *w); /* the highest rank seen + 1 */

/*
 * Root causes and the critical path (causes.c), Scalasca's delay analysis
 * on what the engine kept: ws_keep, before the first event, keeps each
 * thread's calls and phases (a phase is an MPI_Pcontrol-coded event
 * whose site is the caller's key for its name) and each wait with the
 * thread that caused it.
 *
 * An activity is what a thread spent time in: a phase's computation
 * (the time between MPI calls inside the innermost phase open then; key
 * 0: outside every phase) or an MPI call site's time not spent waiting.
 *
 * Delay.  A wait ω of thread q caused by thread p (the sender for Late
 * Sender, the receiver for Late Receiver, the latest member or the root
 * of a collective) is explained by what p did more than q since they
 * last synchronized: their last collective together or their last wait
 * on each other before it (Scalasca takes their last synchronization
 * point).  Over those intervals, t_x(c) is x's time in activity c less
 * its waits; δ(c) = max(0, t_p(c) − t_q(c)); W_p is p's own waiting
 * there.  Short-term cost: γ·δ(c) on (p, c), γ = min(1, ω / (Σδ + W_p)).
 * The part γ·W_p is indirect waiting: p was late because it waited
 * itself.  Long-term cost follows it back: the waits are taken latest
 * first, each wait of p in the interval is charged (γ + Φ/(Σδ + W_p))
 * times itself as its own Φ, and a wait's Φ is spread on its delayer's
 * δ as long-term cost, so a chain of late ranks ends at its first cause.
 *
 * Critical path.  From the thread whose last call ended last, backwards:
 * while it waited, the path is the thread it waited for from the moment
 * that one entered its late call; else itself.  Its length is the run's;
 * each activity's share is the path's time in it.  A thread's time off
 * the path is, per activity, what it spent beyond the path's time there
 * (Scalasca's non-critical-path activities): time that could grow
 * without the run growing.
 */
void ws_keep(ws *w);
/* A wait kept: the threads are the callers' (ws_event's loc). */
struct ws_wait {
	uint64_t from, ns; /* the wait: from `from` (its call's enter), ns long */
	uint64_t cause;    /* when the delayer entered its late call (or posted) */
	uint32_t row;      /* its row (ws_rows' order) */
	uint32_t waiter, delayer; /* threads */
};
/* The waits kept so far, in the order found (not of time); valid until
 * the next ws_event/ws_flush. */
size_t ws_waits(const ws *w, const struct ws_wait **out);
/* For each row (ws_rows' order), the thread that caused most of its time
 * among the waits kept: out[i], or UINT32_MAX when none.  0 or -ENOMEM. */
int ws_causers(const ws *w, uint32_t *out);
/* A live reader's keeping: the waits only (not what ws_analyse needs),
 * taken and cleared by the reader as it goes. */
void ws_keep_waits(ws *w);
void ws_waits_clear(ws *w);

struct ws_cost {
	int32_t rank;
	uint32_t key;   /* a phase's (phase) or a call site's key */
	bool phase;
	uint64_t short_ns, long_ns;
};
struct ws_share {
	int32_t rank;
	uint32_t key;
	bool phase;
	uint64_t ns;
};
struct ws_analysis {
	struct ws_cost *costs;  /* delay costs by (rank, activity) */
	size_t ncosts;
	uint64_t *indirect_ns;  /* by wait row (ws_rows' order): the part the delayers' own waits explain */
	size_t nrows;
	struct ws_share *path;  /* the critical path's time by (rank, activity) */
	size_t npath;
	uint64_t path_ns;       /* its length */
	uint64_t *on_path_ns, *off_path_ns; /* by rank */
	int nranks;
};
/* After ws_flush(UINT64_MAX) (or over what a live reader kept so far).
 * 0, -ENOMEM, or -EINVAL without ws_keep.  ws_analysis_free either way. */
int ws_analyse(const ws *w, struct ws_analysis *out);
void ws_analysis_free(struct ws_analysis *a);

#endif
