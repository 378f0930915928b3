/* view.h - the live view's data (esview): the last seconds of a job's events, kept in a ring and said as JSON for the page. */
#ifndef ES_MONITORS_VIEW_H
#define ES_MONITORS_VIEW_H

#include <stddef.h>
#include <stdint.h>

/* One call as the page draws it: stamps in ns (the monitor's clock). */
struct lv_event {
	uint64_t start, end;
	uint32_t thread; /* the scope's number */
	uint32_t peer;   /* a message's other end (world rank), or ES_NONE */
	uint16_t op;     /* with its flags */
};

/* A thread as the page lists it: its name, and its rank (-1: none). */
struct lv_thread {
	const char *name;
	int rank;
};

typedef struct lv lv;

/* Keeps up to max events, the oldest dropped first.  0 or -ENOMEM. */
int lv_create(size_t max, lv **out);
void lv_destroy(lv *v);
void lv_add(lv *v, const struct lv_event *e);
/* Events added and dropped since created (the page says what it missed). */
uint64_t lv_added(const lv *v);

/*
 * The page's data, as one JSON object: the job, now, the threads, the ops
 * met (name and class), and every event that ended within window_ns
 * before now as [thread, op, start, end, peer] (stamps in ms after
 * now - window_ns), the newest max of them, in the order added.  *out is
 * malloc'd; 0 or -ENOMEM.
 */
int lv_json(const lv *v, const char *job, const struct lv_thread *threads, int nthreads, uint64_t now_ns,
	    uint64_t window_ns, size_t max, char **out, size_t *len);

#endif
