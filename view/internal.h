/* internal.h - what the live view's ring (ring.c) and its answers (json.c) share: the ring's state and its invariants. */
#ifndef ES_MONITORS_VIEW_INT_H
#define ES_MONITORS_VIEW_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "collectors/collectors.h"
#include "view/view.h"

#define NCLASS ES_NCLASS   /* enum es_class: every picture's classes and colours */
#define MARKS 1024
#define SENT (1u << 16)    /* the latest sends, by number, for the lines */
#define BALANCE_NS 1000000000ull /* the balance is of the calls that ended in the last second */
#define LV_MAX_TRAFFIC_RANKS 256 /* a matrix a page can draw */

/* A send kept for the line to its receive: a message's two ends have one
 * key (collectors.h, "Reading the numbers"). */
struct sent {
	uint64_t key;
	uint32_t thread;
	uint64_t start;
	bool used;
};
/* Each mark says that the events added before it ended by its time. */
struct mark {
	uint64_t t, added;
};
/* Where a thread's lane goes: its node (an index), its unit (a rank, or
 * for a thread without one, the first thread whose name has the same
 * part before the last dot: "m3.s1" with "m3.s0"; a name without a dot is
 * a unit of its own) and its number. */
struct place {
	int node;
	long unit;  /* rank, or (1 << 40) + the group's first thread */
	int t;
};
struct binner;

/*
 * Invariants:
 * - ev holds the last min(added, cap) events in the order added, the
 *   oldest at (next - n) mod cap: global index i (0 .. added) is in the
 *   ring when i >= added - n.
 * - th holds the threads the events name (a thread beyond nth is not
 *   drawn); at sorts them by place; tgen changes with them.
 * - ords holds each thread's channels met, with the base their latest
 *   mark gave;
 *   sent holds the latest keyed sends by their key's hash, a newer one
 *   taking an older one's slot.
 * - marks: an event that ends at t or later was added after the last mark
 *   before t.
 * - mpi_ns, calls and traffic sum the events from global index tail to
 *   added: each event is counted in when added and out when it ended more
 *   than BALANCE_NS before the last mark, or when the ring drops it.
 * - bn, the answers' cache, is json.c's (freed through bn_free, so
 *   that the ring never calls its answers); it never changes an event.
 */
struct lv {
	struct lv_event *ev;
	size_t cap, n, next;
	uint64_t added;
	struct lv_thread *th;
	struct place *at;
	int nth, units;
	uint64_t tgen;
	es_numr *numr; /* the threads' channels' numbers: messages' keys (collectors.h) */
	char unpaired[200];
	struct sent *sent;
	struct mark marks[MARKS]; /* a ring, the newest at (nmarks - 1) % MARKS */
	uint64_t nmarks;
	uint64_t tail, *mpi_ns, *traffic;
	uint32_t *calls;
	int nr;                   /* traffic is nr x nr, ranks below nr */
	struct binner *bn;
	void (*bn_free)(struct binner *); /* json.c's, given with bn: the ring never calls its answers */
	struct base_tab sites; /* (thread, call site) -> its name (char *) */
};

static inline const struct lv_event *lv__at(const lv *v, uint64_t i)
{
	return &v->ev[(v->next + v->cap - (size_t)(v->added - i)) % v->cap];
}
size_t lv__first_after(const lv *v, uint64_t from); /* an index 0 .. n into the ring */
const char *lv__site_name(const lv *v, uint32_t thread, uint16_t site); /* NULL: not named */
size_t lv__stem(const char *name);
/* The slot of sent[] a message's send (by its key) is kept in: a cache of
 * SENT slots, not a table (base_tab), on purpose: the newest send takes
 * its slot, so that a job's millions of messages cost the view fixed
 * memory, and a line drawn is one whose send is still there. */
static inline struct sent *lv__sent_of(const lv *v, uint64_t key)
{
	return (struct sent *)&v->sent[base_hash_slot(key, SENT)];
}

#endif
