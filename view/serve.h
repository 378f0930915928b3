/* serve.h - what esview's watch loop publishes and its HTTP threads answer from: the data, the graph, the trigger, the page (private to esview). */
#ifndef MONITORS_VIEW_SERVE_H
#define MONITORS_VIEW_SERVE_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "view/view.h"
#include "view/objects.h"
#include "waitstates/waitstates.h"

/* A trigger, as on an oscilloscope: armed conditions; when one holds the
 * view freezes at that moment and an archive of it is kept. */
struct lv_arm {
	bool deadlock;
	double stall_s;      /* 0: not armed */
	double imbalance_ms; /* 0: not armed */
	int wait_pattern;    /* enum ws_pattern + 1; 0: not armed */
	double wait_pct;     /* ... above this share of MPI time in the last second */
};

/*
 * What the watch loop and the HTTP threads share, under lock.
 * Invariants: v is written by the watch loop only; now_ns is the moment
 * the page is shown up to: the latest pull's, or the trigger's while
 * frozen (v then takes no events, so that moment stays whole); gen
 * changes whenever an answer would, and a cached answer of the same gen
 * and question is served again, so that ten browsers cost what one does.
 */
enum { LV_CACHED = 8 };
struct lv_served {
	pthread_mutex_t lock;
	lv *v;
	const char *job;
	uint64_t now_ns, window_ns, gen;
	uint64_t upto;         /* the events added by now_ns (lv_added) */
	char *extra;           /* ,"waits":...,"colls":[...] as of now_ns */
	struct lv_event *inside; /* the calls threads are inside at now_ns */
	int ninside;
	char *svg;             /* the wait-for graph's picture, or NULL */
	size_t svg_len;
	unsigned svg_gen;
	double rate;           /* pulls a second */
	struct lv_arm arm;
	bool frozen;
	int fired;             /* triggers fired so far */
	char why[400], archive[4400];
	struct {
		char *ask;     /* the whole question */
		uint64_t gen;
		char *json;
		size_t len;
	} cache[LV_CACHED];
	unsigned next_cache;
	char *page;            /* the page with its token and nonce */
	size_t page_len;
	char csp[320];         /* its Content-Security-Policy: its script and nothing else */
	struct vo_objects objs; /* the job's objects: its own lock */
};

/* Answers a request the door let through (a vd_serve_fn, cls the
 * lv_served): GET / the page, /data, /waitfor.svg; POST /arm, /rate, /set, /call. */
enum MHD_Result lv_serve(void *cls, struct MHD_Connection *c, const char *url, bool post);
/* The page as served, with the door's token; 0 or an error. */
int lv_serve_page(struct lv_served *sv, const char *token);
/* Frees what sv holds (not v). */
void lv_served_fini(struct lv_served *sv);

#endif
