/* resolve.h - the live resolver: a running job's raw tuples made resolved events (trace.h's struct es_event) once, for every live reader: the wait states, the view, colopmon. */
#ifndef ES_MONITORS_RESOLVE_H
#define ES_MONITORS_RESOLVE_H

#include <stdint.h>

#include "scopes/scopes.h"

/*
 * What a reader of an archive gets from its messages' join and its
 * communicators (archive/waitfeed.c), a live reader makes as the tuples
 * come: each message end is read by the one join of trace.h ("Reading
 * the numbers"), with its communicator's id from the ranks' boards, so
 * that both ends have one key whichever rank's serial named the
 * communicator.  An end whose number cannot be read (its mark was lost; a
 * channel a second thread of its rank used) gets no key: alone, never
 * paired by guess.  Every tuple of every thread goes through it, in each
 * thread's order, whatever its readers keep of it: a channel's numbers
 * need every mark.
 */
typedef struct mon_rs mon_rs;

int mon_rs_create(mon_rs **out);
void mon_rs_destroy(mon_rs *r);
/* mpi was refreshed: communicators are looked up anew. */
void mon_rs_refreshed(mon_rs *r);
/* A consumed tuple t (stamps in ns) of scope thread `thread` of MPI rank
 * `rank`, in the thread's order, into *out: its communicator as the job
 * numbers it (from mpi, as at the tuple's time), its message's key, its
 * site's key (thread << 16 | its site number).  0: *out is an event;
 * MON_RS_MARK: a channel's mark, taken in, no event; -ENOMEM. */
enum { MON_RS_MARK = 1 };
int mon_rs_event(mon_rs *r, es_mpi *mpi, const struct es_trace *t, int thread, int rank, struct es_event *out);
/* Message ends whose number could not be read, so far. */
uint64_t mon_rs_unnumbered(const mon_rs *r);
/* The id of a tuple's communicator as the job numbers it, whatever kind
 * it is (0: not known), from the same table. */
uint64_t mon_rs_comm_id(mon_rs *r, es_mpi *mpi, int rank, const struct es_trace *t);

#endif
