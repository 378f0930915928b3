/* waitlive.h - the wait-state engine fed live (esview, colopmon): each event the live resolver made (resolve.h), each period's wait states with the rank that caused them, call sites named. */
#ifndef ES_MONITORS_WAITLIVE_H
#define ES_MONITORS_WAITLIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "archive/archive.h"
#include "scopes/scopes.h"
#include "waitstates/waitstates.h"

typedef struct wl wl;

/* How long a call waits for its messages' other ends before a period
 * judges it without them (a live reader cannot wait for ever). */
#define WL_HORIZON_S 5u

int wl_create(wl **out);
void wl_destroy(wl *l);
/* A resolved event (resolve.c: stamps in ns, loc the scope thread, site
 * thread << 16 | its site number) of an MPI rank, in its thread's order,
 * to the engine.  0 or -ENOMEM. */
int wl_event(wl *l, const struct es_event *e);

/* A pattern's seconds found in a period at one call site of one rank,
 * and the rank that caused most of them (-1: not known). */
struct wl_row {
	uint8_t pattern;
	uint16_t op, of;
	int32_t rank, by;
	int thread;    /* the scope thread whose site it is */
	uint16_t site; /* its ES_TRACE_SITE */
	uint64_t ns;
};
/* One wait found in the period, for a picture of when it was. */
struct wl_wait {
	int thread;
	int32_t rank;
	uint64_t from, ns;
	uint8_t pattern;
};
struct wl_period {
	struct wl_row *rows; /* by ns, the most first */
	size_t n;
	struct wl_wait *waits; /* in the order found */
	size_t nwaits;
	uint64_t ns[WS_NPATTERNS]; /* each pattern's, every rank */
	uint64_t mpi_ns;           /* every rank's time in MPI calls that ended in it */
};
/*
 * The wait states found since the last call: what the events up to now_ns
 * decided, after giving up on ends that have waited past the horizon for
 * their other end (a live reader cannot wait for ever); now_ns
 * UINT64_MAX: the run is over, everything is judged.  *out is the
 * caller's until wl_period_free.  0 or -ENOMEM.
 */
int wl_period(wl *l, uint64_t now_ns, struct wl_period *out);
void wl_period_free(struct wl_period *p);
/* The totals since the start, and what could not be judged. */
const ws *wl_engine(const wl *l);

/* The totals since the start by place: one per pattern, rank, call and
 * site name (a rank's threads at the same site together), the most time
 * first.  *out (names in it too) is the caller's until wl_places_free.
 * 0 or -ENOMEM. */
struct wl_place {
	uint8_t pattern;
	uint16_t op, of;
	int32_t rank;
	char *where; /* as wl_name names it */
	uint64_t ns, count;
};
int wl_places(wl *l, es_mpi *mpi, ar_symbols *sym, struct wl_place **out, size_t *n);
void wl_places_free(struct wl_place *p, size_t n);

/* Site `site` of scope thread `thread` (of `rank`) as wl_site_name names
 * it, read from the boards once and kept (a site not yet on its board is
 * read again next time); valid until the next call or wl_destroy. */
const char *wl_name(wl *l, es_mpi *mpi, ar_symbols *sym, int thread, int rank, uint16_t site);

/* A call site as monitors name it, from a thread's board and its rank's
 * modules (es_mpi_sites, es_mpi_modules): "function (file:line)", the
 * function, or the module and offset, as much as is known; "site N"
 * when nothing is. */
void wl_site_name(ar_symbols *sym, const struct es_site_rec *sites, int n, const struct es_module_rec *mods, int nm,
		  uint16_t s, char *buf, size_t len);

#endif
