/* view.h - the live view's data (esview): the last seconds of a job's events, kept in a ring and said as JSON for the page at the detail it asks. */
#ifndef ES_MONITORS_VIEW_H
#define ES_MONITORS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One call as the page draws it: stamps in ns (the monitor's clock). */
struct lv_event {
	uint64_t start, end;
	uint32_t thread; /* the scope's number */
	uint32_t peer;   /* a message's other end or a collective's root (world rank), or ES_NONE */
	uint32_t bytes, tag;
	uint16_t op;     /* with its flags */
	uint16_t comm;   /* the rank's serial of its communicator */
	uint64_t comm_id; /* its communicator as every rank names it (0: not known, never paired) */
	int8_t dir;      /* a message's send (1) or receive (-1), else 0 (lv_add) */
	uint32_t seq;    /* its tuple's: a numbered end's number in the low 16 bits, a mark's count's high half */
	uint64_t key;    /* its message's, equal on both its ends (lv_add: collectors.h); 0: none */
};

/* A thread as the page lists it: its name, its rank (-1: none) and the
 * node it runs on (its tuple server, or "" for this host). */
struct lv_thread {
	const char *name;
	int rank;
	const char *node;
};

typedef struct lv lv;

/* Keeps up to max events, the oldest dropped first.  0 or -ENOMEM. */
int lv_create(size_t max, lv **out);
void lv_destroy(lv *v);
/* The job's threads, by the scope's numbers (copied): before the events
 * that name them are added.  0 or -ENOMEM. */
int lv_set_threads(lv *v, const struct lv_thread *t, int n);
/* Adds e, keying it if it is a message's end (e->key). */
void lv_add(lv *v, struct lv_event *e);
/* Numbers e as lv_add does, without keeping it: a frozen view goes on
 * numbering, and a channel's mark (collectors.h) is only read. */
void lv_count(lv *v, struct lv_event *e);
/* Messages carry their numbers on their channels (collectors.h), whole
 * or read from the channel's last mark: when the view lost calls (they
 * had rotated out, or a pull came too late), a busy channel's messages
 * are not drawn until its next mark.  Says why, for the page. */
void lv_unpaired(lv *v, const char *why);
/* After a pull: every event added since the last mark ended by now_ns,
 * so that an answer reads only the pulls that can hold what it shows. */
void lv_mark(lv *v, uint64_t now_ns);
/* Events added since created (the page says what it missed). */
uint64_t lv_added(const lv *v);

/*
 * What a page asks for: the time shown (shown_ns up to now_ns, at most the
 * window kept), in bins (its width in pixels, over two); open lists the
 * lanes unfolded ("n:0,r:3"): by default one lane per rank (a thread
 * without a rank is its own), or per node when there are more than 64
 * ranks; an open node shows its ranks, an open rank its threads.
 */
struct lv_ask {
	uint64_t now_ns, shown_ns;
	int bins;
	const char *open;
	int max_lanes;   /* lanes shown at most (the rest are said folded) */
	int max_msgs;    /* messages drawn at most: the newest */
	const struct lv_event *inside; /* calls threads are inside at now_ns (their end) */
	int ninside;
	uint64_t upto;   /* the events added before this many (lv_added) ended by now_ns; 0: all */
	uint64_t window_ns; /* the most time said held (esview --window; what is kept beyond it, when
			     * the job is quiet, is not shown); 0: no bound */
};

/*
 * The page's data, as one JSON object: the job, the lanes as asked, in
 * each lane's bins (aligned to multiples of their width, the first
 * bin0_ms from the time shown's start) the class of call that took most
 * of its time and the share of the lane's time in calls, messages as
 * [from lane, sent ms, to lane, received ms] (paired as MPI pairs them:
 * the newest max_msgs receives whose sends are still known), the calls
 * threads are inside as [lane, start ms, call], and over the calls that
 * ended in the last second each rank's share of time inside MPI and the
 * bytes each rank sent each other; then the members in extra
 * (",\"waits\":{...}" or "").  The bins are kept for the next question
 * if it is the same (v changes only there).  *out is malloc'd; 0 or
 * -ENOMEM.
 */
int lv_json(lv *v, const char *job, const struct lv_ask *a, const char *extra, char **out, size_t *len);

/* Call sites as the page names them: site s of thread t (a tuple's
 * ES_TRACE_SITE), named once by esview from the thread's board and DWARF.
 * 0 or -ENOMEM. */
int lv_set_site(lv *v, uint32_t thread, uint16_t site, const char *name);
bool lv_site_named(const lv *v, uint32_t thread, uint16_t site);

/*
 * The call under the page's pointer, for its hover: on lane `lane` of the
 * lanes a asks for (as lv_json lists them), the call whose time holds
 * at_ns, the shortest if several, else the nearest within tol_ns; a call
 * in progress (a->inside) too.  As {"call":{name, thread, start_ms (from
 * the time shown's start), dur_ms, to/from/root, tag, bytes, comm, site,
 * in_progress}} or {"call":null}.  0 or -ENOMEM.
 */
int lv_call_json(lv *v, const struct lv_ask *a, int lane, uint64_t at_ns, uint64_t tol_ns, char **out, size_t *len);

#endif
