/* convert.h - the archive's converters, as esconvert runs them: OTF2 (through libotf2) and trace-event JSON. */
#ifndef ES_ARCHIVE_CONVERT_H
#define ES_ARCHIVE_CONVERT_H

#include <stdio.h>

#include "archive/archive.h"
#include "waitstates/waitstates.h"

/*
 * Messages (messages.c): each end's other end, paired by the numbers both
 * carry (collectors.h), by order in an archive made before them.  other
 * has an entry per event: the event at the message's other end,
 * AR_MSG_ALONE for an end whose other end the archive lacks or that had
 * no number to be paired by, AR_MSG_NOT for an event that is no message
 * end.  The counts say what an output leaves out, and why.
 */
#define AR_MSG_NOT 0xffffffffu
#define AR_MSG_ALONE 0xfffffffeu
struct ar_msgs {
	uint32_t *other;
	bool numbered;      /* paired by numbers (false: an older archive, by order) */
	uint64_t pairs, sends_alone, recvs_alone;
	uint64_t unnumbered; /* ends alone for want of a number */
	uint64_t shared;     /* ends alone on a channel two threads of a rank used */
};
int ar_msgs_match(const ar_archive *a, struct ar_msgs *m); /* 0 or -ENOMEM */
void ar_msgs_free(struct ar_msgs *m);
/* What an output says of the ends it could not pair ("" when none), as snprintf */
size_t ar_msgs_said(const struct ar_msgs *m, char *buf, size_t len);

struct ar_out_stats {
	uint64_t regions;   /* events that became a region (Enter and Leave) */
	uint64_t messages;  /* point-to-point sends and receives */
	uint64_t colls;     /* collective operations (begin and end) */
	uint64_t completes; /* nonblocking collectives' completions */
	uint64_t clipped;   /* regions cut to nest in their thread's others */
	uint64_t backwards; /* messages received before they were sent, by the clocks: no arrow */
	uint64_t colls_backwards; /* collective arrows that would end before they began: not drawn */
	uint64_t unlocated; /* threads that recorded nothing: no JSON track; in OTF2 no location but a rank's first */
	struct ar_msgs pairing; /* how messages were paired, and what was left alone (other: NULL) */
};

/*
 * Each thread's events, in the order a trace format wants them: regions
 * nested (sorted by start, the longer first; one that would end after the
 * region it starts in is cut at that region's end), and a poll streak
 * starting no earlier than the event before it on its thread, so that the
 * polls' gaps between other calls do not cover them.  The completion of a
 * request (op | ES_OP_DONE: a nonblocking collective's, an Isend's, an
 * Irecv's, Sendrecv's receive) is not a region but two points: its request
 * at the call and its completion inside the wait or test that ended it (a
 * point at a region's end comes before the region's leave).
 */
enum ar_item_kind { AR_ENTER, AR_LEAVE, AR_REQUEST, AR_COMPLETE };
struct ar_item {
	uint64_t time;
	uint32_t event; /* index into ar_events() */
	uint8_t kind;   /* enum ar_item_kind */
};
/* The items of thread t, in order; *out is malloc'ed.  0 or -ENOMEM. */
int ar_thread_items(const ar_archive *a, int t, struct ar_item **out, size_t *n,
		    struct ar_out_stats *st);

/* A phase (MPI_Pcontrol's, es_region_begin's): a region around calls, not a call. */
static inline bool ar_is_phase(const struct es_trace *t)
{
	return es_op_code(t->op) == ES_OP_MPI_PCONTROL;
}
/* A phase's name as its rank named it ("phase N" when it did not). */
const char *ar_phase_name(const ar_archive *a, int thread, const struct es_trace *t, char *buf, size_t len);

/* An archive's events fed to the wait-state engine w in each thread's
 * order (waits.c), messages paired as messages.c pairs them, each call's
 * site and each phase's name given the caller's keys (NULL: 0); then
 * ws_flush(w, UINT64_MAX).  Threads are the archive's.  0 or -ENOMEM. */
struct ar_wait_keys {
	uint32_t (*site)(void *arg, int thread, const struct es_trace *t);
	uint32_t (*phase)(void *arg, const char *name);
	void *arg;
};
/* m: the archive's messages as ar_msgs_match paired them, when the caller
 * has them already (a converter writes them too): read once; NULL: paired
 * here. */
int ar_waits_feed(const ar_archive *a, const struct ar_msgs *m, ws *w, const struct ar_wait_keys *k);
/* The events' indices in the order ar_waits_feed gives them (each
 * thread's in its order, merged by their ends); *out malloc'ed. */
int ar_waits_order(const ar_archive *a, uint32_t **out, size_t *n);
/* Event i as ar_waits_feed gives it, messages paired by m; false: none to
 * give (a thread of no rank, a call that had not returned). */
bool ar_wait_event(const ar_archive *a, const struct ar_msgs *m, size_t i, const struct ar_wait_keys *k,
		   struct es_event *e);

/* An OTF2 archive DIR/NAME.otf2 (and DIR/NAME/, DIR/NAME.def); DIR must not exist. */
int ar_to_otf2(const ar_archive *a, const char *dir, const char *name, struct ar_out_stats *st,
	       char *err, size_t errlen);

/* Trace-event JSON in PATH (new): slices from from to to (ns since the
 * first event; 0, UINT64_MAX for all), messages and collectives as flows. */
int ar_to_json(const ar_archive *a, const char *path, uint64_t from, uint64_t to,
	       struct ar_out_stats *st, char *err, size_t errlen);

/* PNG pictures through gnuplot in DIR (made if need be): timeline.png, and
 * for MPI matrix.png; *pictures says how many.  Their data and scripts stay. */
int ar_plot(const ar_archive *a, const char *dir, int *pictures, char *err, size_t errlen);

/* The profile page (profile.c says what it counts): top rows in each list. */
int ar_profile(const ar_archive *a, FILE *out, int top, char *err, size_t errlen);
/* The same rows, every one, as one JSON object (profile_json.c says how). */
int ar_profile_json(const ar_archive *a, FILE *out, char *err, size_t errlen);

#endif
