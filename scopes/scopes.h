/* scopes.h - event scopes: gather/reduce trees over a job's trace elements, built from PATHS wrappers. */
#ifndef SCOPES_H
#define SCOPES_H

#include <stdbool.h>
#include <stdint.h>

#include "collectors/collectors.h"
#include "handlers/es_handler.h"
#include "pathmaps/pathmaps.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A scope attaches read-only to the trace spaces a job left on this host
 * (JOB.tN from pathmap jobs, JOB.rN from libescollect.so), or that tuple
 * servers elsewhere serve, and sees their
 * trace elements as leaves.  Nothing is gathered until a monitor pulls:
 * then an operation runs down a tree of PATHS stages whose inner nodes
 * gather (fork), reduce, filter and convert, and whose shape and placement
 * the pathmap's scope definition says.
 *
 * Killing the monitor at any moment leaves the application as it was: the
 * scope only maps the segments read-only, and wakes nobody.
 */

/* --- wrappers for scope trees (registered by es_scopes_register) ---------- */

/*
 * reduce     op = latest | min | max | sum | count: the children's tuples,
 *            gathered below it, become one.  latest keeps the tuple that
 *            ended last; min and max compare durations; sum adds sizes and
 *            durations (end - start, into end); count counts valid tuples
 *            (into seq).  Empty tuples (op 0) take no part.
 * filter     ops = comma-separated op names or numbers, element = N,
 *            after / before = raw stamps: tuples that do not match become
 *            empty.
 * sort       the tuples gathered below, merged in order of start time (empty
 *            ones last): streams from several trace elements become one.
 * convert    space = SEGMENT: raw stamps become CLOCK_MONOTONIC ns with that
 *            trace space's calibration, fields in the portable byte order.
 * latest     the leaf guard: a trace element with no tuple yet, or whose
 *            tuple server is lost for now, gives an empty tuple instead of
 *            an error, so one idle thread or one host does not fail the pull.
 */
int es_scopes_register(void);

/* An empty tuple: a leaf that had nothing, or a filter's reject. */
static inline bool es_trace_empty(const struct es_trace *t)
{
	return t->op == 0;
}

/* --- scopes ----------------------------------------------------------------- */

enum es_reduce { ES_REDUCE_NONE = 0, ES_REDUCE_LATEST, ES_REDUCE_MIN, ES_REDUCE_MAX,
		 ES_REDUCE_SUM, ES_REDUCE_COUNT };

#define ES_SCOPE_HANDLERS 4
struct es_scope_spec {
	const char *job;
	enum pm_view view;   /* PM_VIEW_THREAD needs `of` */
	const char *of;      /* the thread of a thread view */
	int fanout;          /* children per gather node, >= 2 */
	enum pm_runs runs;   /* where internal nodes run: in the monitor, in helper
				threads, or in a helper process on this node */
	bool concurrent;     /* gather a node's children at the same time */
	double rate_hz;      /* pulls at most this often; 0 = no limit */
	enum es_reduce reduce; /* per thread: one tuple each; NONE: one per leaf */
	bool convert;        /* stamps to ns (on by default through es_scope_spec_default) */
	bool by_leaf;        /* es_scope_consume leaves each leaf's tuples together, in
				their order, unmerged: for a recorder, whose readers index
				by thread (merging cost it most of its time) */
	/* Where the job's trace spaces are: NULL for this host's shared
	 * segments; else "HOST:PORT[,HOST:PORT...]", tuple servers (psadm serve,
	 * or the job's own) whose segments JOB.tN and JOB.rN the scope takes.
	 * Their trees run in the monitor or its threads (not runs: process),
	 * and each pull fetches every leaf in one request per server. */
	const char *servers;
	const char *secret_file; /* for servers off loopback */
	/* Handlers (LIB.so[:ARGS]) on the scope's top gather node: each is
	 * given what the scope reads, on the thread that reads it (es_hlib) */
	const char *handlers[ES_SCOPE_HANDLERS];
	int nhandlers;
};
void es_scope_spec_default(struct es_scope_spec *s, const char *job);
/* The spec of a pathmap's scope, by name. */
int es_scope_spec_from(const pm_map *m, const char *scope, const char *job,
		       struct es_scope_spec *out);

typedef struct es_scope es_scope;

/* PS_ENOENT when the job has no trace space on this host. */
int es_scope_create(const struct es_scope_spec *spec, es_scope **out);
/* Segments named like the job's that the scope could not open when it was
 * made (another user's file, a half-made or foreign segment): i < 0 gives
 * how many; else the i-th's error code (the first 16 are kept), *segment
 * its name. */
int es_scope_skipped(const es_scope *s, int i, const char **segment);
/* The i-th trace space's clock as checked when the scope opened it (see
 * es_clock_check: 0 held, 1 drifted and re-fitted, ES_ECLOCK kept no rate),
 * *segment its name, *drift_ns by how much; PS_EINVAL past the last. */
int es_scope_space_clock(const es_scope *s, int i, const char **segment, int64_t *drift_ns);
void es_scope_destroy(es_scope *s);

/* Takes in trace spaces and collectors that appeared since the scope was
 * made or last refreshed: a rank that started late, a thread's first MPI
 * call.  Returns the number of leaves added (0: nothing new), or an error.
 * Leaf and thread indices change when it adds any; names do not. */
int es_scope_refresh(es_scope *s);

/* The leaves, in gather order (grouped by thread), and the threads. */
struct es_leaf {
	const char *segment;   /* its trace space: SEGMENT or HOST:PORT/SEGMENT */
	struct es_meta meta;
	ps_elem *elem;         /* read-only */
	const struct es_clock *clock;
	int thread;            /* index into es_scope_thread() */
	int rank;              /* the MPI rank its space says it is (es_space_rank), or -1 */
	es_space *space;       /* the scope's, read-only: the space's other elements (es_mpi
				  reads a rank's through it, mapped as long as the scope is,
				  even after the job removed it): valid until a refresh
				  that returns > 0, after which an es_mpi is opened again */
};
int es_scope_leaves(const es_scope *s);
const struct es_leaf *es_scope_leaf(const es_scope *s, int i);
int es_scope_threads(const es_scope *s);
const char *es_scope_thread(const es_scope *s, int i);

/* Tuples one pull returns: one per thread with a reduce, one per leaf without. */
int es_scope_width(const es_scope *s);

/* One pull down the tree: the latest tuple of every leaf, reduced per
 * thread if the spec says so, into out[es_scope_width()].  Waits first if
 * the rate limit asks for it. */
int es_scope_pull(es_scope *s, struct es_trace *out);

/* Every tuple written since the last consume (the first call starts from
 * the backlog: what the elements still hold), merged in order of start
 * time (by leaf, unmerged, when the spec said by_leaf), stamps in ns.  Fills up to max; *missed gets the number of tuples
 * discarded before they could be read since the last call. */
int es_scope_consume(es_scope *s, struct es_trace *out, size_t max, uint64_t *missed);
/* Seconds until the leaf that writes fastest would overwrite tuples not
 * consumed yet, at the rate it wrote since the consume before last (0 after
 * a consume that found tuples discarded; INFINITY while nothing is known).
 * A consumer that pulls well within it loses nothing. */
double es_scope_headroom(const es_scope *s);
/* Tuples that had rotated out of the trace elements before the first
 * consume: history the scope never saw, not a loss while it watched. */
uint64_t es_scope_before_attach(const es_scope *s);
/* The leaf a consumed tuple came from (its collector id is per space). */
int es_scope_consumed_leaf(const es_scope *s, size_t i);

/* What a thread is inside now, as its collectors' notes say. */
struct es_flight {
	unsigned op;       /* with its flags */
	uint32_t element;  /* as in the tuples: a path's element, or the peer rank (ES_NONE: none) */
	uint64_t arg;      /* MPI: the tag it waits for, or a collective's number (collectors.h) */
	uint64_t comm;     /* MPI: the communicator's serial (ES_NONE: none) | a second peer << 32 */
	uint64_t start;    /* its start stamp, raw, as its notes hold it: names this call */
	uint64_t since_ns; /* how long it has been inside */
	int leaf;          /* its leaf: meta.where names the path */
};
/* 1 and *f filled in, or 0 when it is between operations (or its notes
 * cannot be read). */
int es_scope_in_flight(const es_scope *s, int thread, struct es_flight *f);

/* --- the MPI side of a job ------------------------------------------------------------ */

/*
 * What libescollect keeps beside each rank's trace elements (collectors.h:
 * mpi.comms, mpi.calls, mpi.reqsK, mpi.chansK), read as data: a rank is
 * what its trace space says, a communicator what its members listed.  The
 * view reads each rank's mpi.comms once and then only what follows
 * (es_mpi_refresh); boards when asked, at most once per refresh.
 */
/* The secret file the scope was given (its spec's), or NULL. */
const char *es_scope_secret_file(const es_scope *s);

typedef struct es_mpi es_mpi;
/* Over s's servers with s's secret, as the scope reads them. */
int es_mpi_open(const es_scope *s, es_mpi **out);
void es_mpi_close(es_mpi *m);
/* Communicators made or freed since, and the boards read anew when next asked. */
int es_mpi_refresh(es_mpi *m);
int es_mpi_ranks(const es_mpi *m);                /* the highest rank seen + 1 */
int es_mpi_rank_of(const es_mpi *m, int thread);  /* a scope thread's rank, or -1 */
/* The scope threads of a rank (up to max); how many. */
int es_mpi_rank_threads(const es_mpi *m, int rank, int *threads, int max);

/* A communicator or window as its members listed it.  An intercommunicator
 * has two groups: [0] the one whose rank 0 has the lower world rank. */
struct es_mpi_comm {
	uint64_t id;
	uint32_t flags;         /* ES_COMMS_WINDOW, ES_COMMS_INTER, ES_COMMS_WORLD */
	uint32_t size[2];
	const int *members[2];  /* world rank of each rank of each group; -1 where none said */
};
int es_mpi_ncomms(const es_mpi *m);
const struct es_mpi_comm *es_mpi_comm_at(const es_mpi *m, int i);
const struct es_mpi_comm *es_mpi_comm(const es_mpi *m, uint64_t id);
/* What a rank's serial names (the bits in mask: UINT32_MAX for a note's or
 * board's, 0xffff for a tuple's), as made no later than at_ns (UINT64_MAX:
 * now, NULL if freed), and which of its groups is the rank's (*side). */
const struct es_mpi_comm *es_mpi_comm_of(const es_mpi *m, int rank, uint32_t serial, uint32_t mask,
					 uint64_t at_ns, int *side);
/* What a rank's full serial (a note's or board's) names, freed since or
 * not: a serial is never given twice, so it names one communicator for
 * ever, and counts and requests made on it stay its own after the freeing.
 * NULL when its record is not known (it rotated out of mpi.comms before
 * the view read it, or is newer than the last refresh). */
const struct es_mpi_comm *es_mpi_comm_ever(const es_mpi *m, int rank, uint32_t serial, int *side);
/* How many collectives rank has begun on communicator id (freed too, until
 * its slot is taken): its next one's number; -1 if not known. */
int64_t es_mpi_calls(es_mpi *m, int rank, uint64_t id);
/* The collective rank began as number num on communicator id (its op code
 * and root's world rank, ES_NONE: none); false if not known (not begun,
 * or too many since: it keeps the latest ES_CALLS_HISTORY). */
bool es_mpi_coll_at(es_mpi *m, int rank, uint64_t id, uint32_t num, unsigned *op, uint32_t *root);
/* A scope thread's open requests, whole (*out valid until the next refresh); how many. */
int es_mpi_requests(es_mpi *m, int thread, const struct es_req_rec **out);
/* Reads a scope thread's request and channel boards now and says whether
 * they are as this refresh read them (every request record and every
 * channel count the same): 1 if so (or it has none, or they were not read
 * this refresh: nothing was learnt from them), 0 if not, or a negative
 * code.  What was read stays as it was. */
int es_mpi_boards_same(es_mpi *m, int thread);
/* A scope thread's call sites, read now: (*out)[s] is site s (frames 0:
 * none); how many slots were read, or a negative code. */
int es_mpi_sites(es_mpi *m, int thread, const struct es_site_rec **out);
/* A rank's process (collectors.h: es_proc_rec), *at_ns its raw stamp as
 * the rank's tuples' ns; PS_ENOENT when it did not say. */
int es_mpi_process(es_mpi *m, int rank, struct es_proc_rec *out, uint64_t *at_ns);
/* A rank's clock points (collectors.h, "Clocks across hosts"), read now:
 * into out (room for ES_SYNC_SLOTS), each whole, at_ns its raw stamp as
 * the rank's tuples' ns; *shift_ns how the view moved the rank's stamps
 * onto this host's clock (ps_server_clock_offset of its server: 0 here);
 * how many, or a negative code. */
struct es_mpi_sync {
	struct es_sync_rec r;
	uint64_t at_ns;
};
int es_mpi_clock(es_mpi *m, int rank, struct es_mpi_sync *out, int64_t *shift_ns);
/* A rank's phase names, read now: (*out)[n] names arg n of its phases'
 * tuples where used; how many slots were read. */
int es_mpi_regions(es_mpi *m, int rank, struct es_region_rec **out);
/* The files a rank opened through MPI-IO, read now: (*out)[n] names the
 * file of its I/O tuples with element n where used; how many slots read. */
int es_mpi_files(es_mpi *m, int rank, struct es_file_rec **out);
/* The modules a rank's call sites lie in, read now; how many. */
int es_mpi_modules(es_mpi *m, int rank, const struct es_module_rec **out);
/* Messages rank from sent to rank to on communicator id with tag (ES_NONE:
 * any tag), and those `to` received from `from` (on the communicator's
 * serials, freed since or not); false when a board too full to count them
 * all, or a count on a serial whose communicator is not known, leaves them
 * unknown. */
bool es_mpi_messages(es_mpi *m, int from, int to, uint64_t id, uint32_t tag, uint64_t *sent,
		     uint64_t *recvd);

/* Whether leaf i's tuple server could not be reached at the last pull or
 * consume: its slot came up empty for that reason, not for want of events.
 * (Leaves on this host are never lost.)  A consumer starts such a leaf's
 * backlog, or goes on with it, once its server answers again. */
bool es_scope_leaf_lost(const es_scope *s, int i);

#ifdef __cplusplus
}
#endif

/* --- handlers (handlers/es_handler.h) ------------------------------------------------------ */

/*
 * A handler library loaded and created: what a monitor's --handler and a
 * scope's pathmap `handler:` both hold.  It runs in a process of its own
 * (eshandler, handler.c says why): nothing it does, crash, hang or
 * slowness, holds or ends its monitor.  Its process() and query() are
 * never entered at once.
 */
#define ES_HLIB_TEXT 3824 /* an answer or a push, at most (ended by 0) */
typedef struct es_hlib es_hlib;
/* Loads LIB.so[:ARGS] (its user's or root's: base_open_trusted) in its
 * process, and creates it for monitor watching job, within 5 s.  Its
 * pushes go to push(ctx, text); with push NULL they are kept
 * (es_hlib_pushed).  0, or a negative code with why in err. */
int es_hlib_open(const char *spec, const char *monitor, const char *job, void (*push)(void *ctx, const char *text),
		 void *ctx, es_hlib **out, char *err, size_t len);
/* n events given, never waiting: *lost (NULL: not asked) gets how many
 * could not be (its process is behind: its socket full).  0, or the
 * code it stopped with (es_hlib_stopped) */
int es_hlib_process(es_hlib *h, const struct es_handler_event *ev, size_t n, size_t *lost);
/* Waits up to timeout_ms for room to give it more (the caller's queue
 * holds what it could not take) */
void es_hlib_wait_room(es_hlib *h, int timeout_ms);
/* Its answer to question into out, waited for up to timeout_ms: the
 * answer's length, -ETIMEDOUT (busy, or hung), -EPIPE (gone), or below 0.
 * Once its process() failed (es_hlib_stopped), at once the answer it gave
 * as it stopped: it processes nothing more, so says nothing new. */
int es_hlib_query(es_hlib *h, const char *question, char *out, size_t len, int timeout_ms);
/* The number of its latest kept push (0: none yet), the text into out */
uint64_t es_hlib_pushed(es_hlib *h, char *out, size_t len);
const char *es_hlib_name(const es_hlib *h); /* as it names itself */
const char *es_hlib_spec(const es_hlib *h); /* LIB.so[:ARGS] as given */
/* 0 while it runs; else what its process() returned, or -EPIPE: its
 * process ended (a crash: es_hlib_why says which signal) */
int es_hlib_stopped(es_hlib *h);
void es_hlib_why(es_hlib *h, char *out, size_t len); /* "its process died of signal 11 (SIGSEGV)" */
/* Events given it; *processed: how many of them its last answer had processed */
uint64_t es_hlib_given(es_hlib *h, uint64_t *processed);
int es_hlib_ref(es_hlib *h);                /* one more holder: 0 */
/* Let go; the last holder's asks destroy() and ends its process, which
 * is killed if it has not ended within 0.2 s */
void es_hlib_close(es_hlib *h);
/* A tuple the scope read from leaf (stamps in ns), as a handler's event */
void es_hlib_event(const es_scope *s, const struct es_trace *t, int leaf, struct es_handler_event *e);

/* The scope's own handlers (its spec's handlers, loaded when it was made):
 * each is given every tuple es_scope_consume reads, and of each pull the
 * tuples new since the last (a pull reads each thread's latest: what is
 * gathered there, not every event).  How many were asked for; the i-th,
 * or NULL when it could not be loaded, why in *why. */
int es_scope_handlers(const es_scope *s);
es_hlib *es_scope_handler(const es_scope *s, int i, const char **why);

#endif /* SCOPES_H */
