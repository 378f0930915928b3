/* handlers.h - the handlers a monitor loaded (es_handler.h): each on a thread of its own with a bounded queue, fed every event the monitor reads, its answers kept where esctl and esview read them. */
#ifndef ES_MON_HANDLERS_H
#define ES_MON_HANDLERS_H

#include "handlers/es_handler.h"
#include "monitors/monitors.h"

/*
 * Invariants:
 *  - Only the monitor's thread feeds a handler's queue (mh_feed), only the
 *    handler's thread takes from it and calls its entry points (create
 *    excepted, called by mh_load): a handler is never called from two
 *    threads, and never from the monitor's.
 *  - The queue never blocks the feeder: events that do not fit are
 *    counted, and said once a second ("falls behind").
 *  - A handler whose process() returned below 0 is called no more (its
 *    destroy excepted); its last answer stays.
 *  - Answers and pushes live in the segment JOB-handlers-R (owner-only, R
 *    random: no other user can take the name first), elements a.NAME.K
 *    and p.NAME.K (K: the load's number), from the handler's thread only;
 *    the segment goes with the monitor, or, if it is killed, with the next
 *    monitor of the job or psadm clean.
 */
typedef struct mh_set mh_set;

/* --handler SPEC, repeatable: every monitor takes it (MH_OPT, MH_USAGE) */
#define MH_OPT_CODE 0x4801 /* a long option only: -H is esview's --host */
#define MH_OPT { "handler", required_argument, NULL, MH_OPT_CODE }
#define MH_USAGE \
	"      --handler LIB.so[:ARGS]  a handler (es_handler.h) to give every event\n" \
	"                       read, on a thread of its own; repeatable\n"
/* The specs given, for the monitor to load once attached */
extern const char *mh_specs[16];
extern int mh_nspecs;
/* Keeps a --handler's SPEC; 2 (said why) when there are too many */
int mh_opt(const char *prog, const char *spec);

/* The handlers of mh_specs loaded for prog watching job: 0, *out NULL when
 * none was asked for; or a negative code with why in err (none runs). */
int mh_start(const char *prog, const char *job, mh_set **out, char *err, size_t len);
/* Loads one more (LIB.so[:ARGS]) */
int mh_load(mh_set *m, const char *spec, char *err, size_t len);
/* The handlers of s's own (a pathmap scope's handler:, fed by s) asked
 * each second and kept like the others; *m made if there was none.  0 or
 * a negative code with why in err. */
int mh_adopt(mh_set **m, const char *prog, const char *job, es_scope *s, char *err, size_t len);
/* The events of one consume of s (es_scope_consume: ns stamps), queued for
 * every running handler; never waits. */
void mh_feed(mh_set *m, const es_scope *s, const struct es_trace *ev, int n);
/* n events, already in the handlers' form, queued likewise */
void mh_give(mh_set *m, const struct es_handler_event *ev, size_t n);
/* Returns once every running handler has taken all it was given (a
 * benchmark's: the monitors never wait on their handlers) */
void mh_idle(mh_set *m);
/* ... and once each one's process has processed it, up to timeout_ms:
 * how many events were not given to them in all (they fell behind) */
uint64_t mh_settle(mh_set *m, int timeout_ms);
/* For a monitor that reads no event itself (heartbeat reads each thread's
 * latest only): a scope of its own over spec's job, every event, that
 * mh_pump drains into the handlers.  0, or a negative code with why. */
int mh_follow(mh_set *m, const struct es_scope_spec *spec, double wait, char *err, size_t len);
void mh_pump(mh_set *m);
/* The handlers given what was queued, asked their last answer (said on
 * says, with what each lost), destroyed; their segment removed. */
void mh_stop(mh_set *m, FILE *says);

/* Every monitor's handler NAME watching job on this host: its latest
 * answer and push, said on out; how many were found. */
int mh_query(const char *job, const char *name, FILE *out);
/* ,"handlers":[{"monitor","pid","name","spec","answer","pushed"}...] of every one */
void mh_json(const char *job, FILE *out);

/* The segment holding a monitor's answers: JOB-handlers-R, R random
 * (ps_server_create_private); the monitor is its creator */
#define MH_SEGMENT_PREFIX "%.24s-handlers" /* the job's name cut to fit */
struct mh_answer {
	uint32_t len;
	uint32_t kind;  /* 0: an answer to "", 1: a push */
	uint64_t stamp; /* CLOCK_MONOTONIC ns */
	char spec[240]; /* LIB.so[:ARGS] as given */
	char monitor[16];
	char text[3824];
};
_Static_assert(sizeof(struct mh_answer) == 4096, "an answer's record has a fixed size");

#endif
