/* convert.h - the archive's converters, as esconvert runs them: OTF2 (through libotf2) and trace-event JSON. */
#ifndef ES_ARCHIVE_CONVERT_H
#define ES_ARCHIVE_CONVERT_H

#include <stdio.h>

#include "archive/archive.h"

struct ar_out_stats {
	uint64_t regions;   /* events that became a region (Enter and Leave) */
	uint64_t messages;  /* point-to-point sends and receives */
	uint64_t colls;     /* collective operations (begin and end) */
	uint64_t completes; /* nonblocking collectives' completions */
	uint64_t clipped;   /* regions cut to nest in their thread's others */
};

/*
 * Each thread's events, in the order a trace format wants them: regions
 * nested (sorted by start, the longer first; one that would end after the
 * region it starts in is cut at that region's end), and a poll streak
 * starting no earlier than the event before it on its thread, so that the
 * polls' gaps between other calls do not cover them.  The completion of a
 * nonblocking collective (op | ES_OP_DONE) is not a region but two points:
 * its request at the call and its completion where a wait or test ended it.
 */
enum ar_item_kind { AR_ENTER, AR_LEAVE, AR_NBC_REQUEST, AR_NBC_COMPLETE };
struct ar_item {
	uint64_t time;
	uint32_t event; /* index into ar_events() */
	uint8_t kind;   /* enum ar_item_kind */
};
/* The items of thread t, in order; *out is malloc'ed.  0 or -ENOMEM. */
int ar_thread_items(const ar_archive *a, int t, struct ar_item **out, size_t *n,
		    struct ar_out_stats *st);

/* Whether a tuple is a message's end: 1 a send (MPI_Send... and a persistent
 * send's MPI_Start), -1 a receive whose source it names (MPI_Recv, Irecv,
 * Mrecv, a persistent receive's start), 0 neither.  Its peer is the
 * element, its tag the arg, its bytes the size. */
int ar_message(unsigned op);

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

#endif
