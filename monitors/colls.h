/* colls.h - MPI collectives matched across ranks as their tuples arrive (colopmon, esview): latency, imbalance and the last rank in. */
#ifndef ES_MONITORS_COLLS_H
#define ES_MONITORS_COLLS_H

#include <stdbool.h>
#include <stdint.h>

#include "scopes/scopes.h"

/* A collective every member of its communicator reported. */
struct cm_done {
	unsigned code;          /* its call */
	uint32_t num;           /* its number on its communicator */
	uint32_t root;          /* ES_NONE: none */
	int members;            /* the communicator's size */
	int last_rank;          /* the world rank that came last */
	double lat_ms, imb_ms;  /* first in to last out; first in to last in */
	uint64_t last_in;       /* ns, when the last came */
};

typedef struct cm cm;

int cm_create(cm **out);
void cm_destroy(cm *c);
/*
 * Feeds rank's tuple t (stamps in ns), its communicators read from mpi
 * (refreshed by the caller when the ranks list new ones).  1 when t is
 * the last member's of a collective, *d filled; 0 when not (not a
 * collective, not all in yet, or 65,536 in flight at once).
 */
int cm_event(cm *c, es_mpi *mpi, const struct es_trace *t, int rank, struct cm_done *d);

#endif
