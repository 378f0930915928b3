/* es_handler.h - handlers: shared libraries users load into EventSpace's monitors (--handler lib.so[:args]) to filter and reduce the events they read, MUSE's five entry points. */
#ifndef ES_HANDLER_H
#define ES_HANDLER_H

#include <stddef.h>
#include <stdint.h>

/*
 * A handler is a shared library that exports es_handler_entry(), which
 * returns its entry points.  A monitor (heartbeat, colopmon, geteventmon,
 * esview, esrecord) given --handler lib.so[:args] runs it, without being
 * rebuilt, in a process of its own (eshandler, started beside the
 * monitor's program): it calls create(args), and then process() with
 * every batch of events the monitor reads.  Whatever a handler does
 * costs the monitor nothing but the handler: a crash or an abort ends
 * its process (said, with the signal), a hang or slowness fills its
 * queue and its events are counted as not given ("falls behind"), its
 * answer is waited for a quarter of a second at most, and Ctrl-C ends
 * the monitor within a second, which then kills its handlers' processes.
 * Each second the monitor asks query("") and keeps the answer where
 * `esctl JOB query NAME` and esview read it; a handler may also push()
 * text or JSON at any time, from process() (the latest push is kept
 * until the monitor takes it).  What a handler returns is shown escaped
 * and as valid UTF-8.  A process() that returns below 0 stops the
 * handler, said on stderr; the monitor goes on.  process() and query()
 * are never entered at once.  The same library may be loaded twice, with
 * other arguments: each load is a process of its own.  A pathmap may
 * also put a handler on a scope (`handler:`; a relative LIB is beside the
 * pathmap): it is then given what the scope reads (for a pull, each
 * thread's latest), and asked like the monitor's own.  The library must
 * be its monitor's user's or root's, and nobody else's to write
 * (base_open_trusted).  Build one with: cc -shared -fPIC -o h.so h.c
 */
#ifdef __cplusplus
extern "C" {
#endif

#define ES_HANDLER_ABI 1

/* One event: a call a thread made (an MPI call, a PastSet operation) */
struct es_handler_event {
	uint64_t start_ns, end_ns; /* on the monitor's clock */
	const char *op;            /* its name: "MPI_Send", "write", ... */
	uint32_t code;             /* its number (the same for the same name) */
	uint32_t flags;            /* ES_HANDLER_FAILED, ES_HANDLER_DONE */
	int32_t rank;              /* the MPI rank, or -1 (a PATHS thread) */
	int32_t thread;            /* the monitor's number for the thread */
	const char *thread_name;   /* "rank0.thread0", "m0.s1" */
	uint32_t peer;             /* an MPI call's peer (world rank), or the element */
	uint32_t tag;              /* an MPI call's tag, or its argument */
	uint64_t bytes;
	uint32_t comm;             /* an MPI call's communicator (its rank's serial), 0xffff: none */
};
#define ES_HANDLER_FAILED 1u /* the call returned an error */
#define ES_HANDLER_DONE 2u   /* completes a request (an Irecv's, an Isend's) */

/* What the monitor offers a handler: it lives as long as the handler */
struct es_handler_host {
	void *ctx;
	/* Shows text (or JSON) as the handler's latest result, now: in esview
	 * and to esctl JOB query NAME.  At most 4000 bytes. */
	void (*push)(void *ctx, const char *text);
	const char *monitor; /* "colopmon", ... */
	const char *job;
};

struct es_handler {
	int abi;          /* ES_HANDLER_ABI */
	const char *name; /* what esctl JOB query names it by: letters, digits, _ */
	/* NULL and why in err when args are wrong */
	void *(*create)(const char *args, const struct es_handler_host *host, char *err, size_t errlen);
	void (*destroy)(void *self);
	/* n events; 0, or below 0 to be stopped */
	int (*process)(void *self, const struct es_handler_event *ev, size_t n);
	/* The answer to question ("" each second): its length, written to out
	 * (at most len bytes, ended by 0), or below 0 */
	int (*query)(void *self, const char *question, char *out, size_t len);
	/* One line on what it does and its arguments */
	const char *(*help)(void);
};

const struct es_handler *es_handler_entry(void);

#ifdef __cplusplus
}
#endif

#endif
