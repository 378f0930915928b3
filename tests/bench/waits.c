/* waits.c - the wait-state engine after the run: an archive's events fed (archive/waitfeed.c), judged and analysed (causes, critical path) on one core; prints events per second. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "archive/convert.h"

/*
 * usage: waits ARCHIVE [RUNS]
 * The archive is read, its messages paired and its events resolved once
 * (timed apart: every reader of an archive pays these); each run makes an
 * engine, feeds it every event in each thread's order, flushes it and runs
 * ws_analyse: the wait states' own cost after the run.  Prints each run
 * and the best: "post_events_per_s=N".
 */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: waits ARCHIVE [RUNS]\n");
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 3;
	char err[600];
	ar_archive *a;
	if (ar_open(argv[1], &a, err, sizeof(err))) {
		fprintf(stderr, "waits: %s\n", err);
		return 1;
	}
	size_t n = ar_nevents(a), ne = 0, no;
	struct es_event *ev = malloc(sizeof(*ev) * (n + 1));
	struct ar_msgs m = { 0 };
	uint32_t *order;
	double t0 = now();
	if (!ev || ar_msgs_match(a, &m) || ar_waits_order(a, &order, &no)) {
		fprintf(stderr, "waits: no memory for %zu events\n", n);
		return 1;
	}
	double t1 = now();
	for (size_t i = 0; i < no; i++)
		ne += ar_wait_event(a, &m, order[i], NULL, &ev[ne]);
	double t2 = now();
	free(order);
	printf("  the archive's messages paired and its threads merged in %.3f s, its events resolved in %.3f s "
	       "(%.0f events/s, as every reader of the archive does)\n", t1 - t0, t2 - t1, (double)n / (t2 - t0));
	double best = 0;
	for (int r = 0; r < runs; r++) {
		ws *w;
		struct ws_analysis an;
		double s0 = now();
		int rc = ws_create(&w);
		if (!rc)
			ws_keep(w);
		for (size_t i = 0; i < ne && !rc; i++)
			rc = ws_event(w, &ev[i]);
		if (!rc)
			ws_flush(w, UINT64_MAX);
		double s1 = now();
		if (!rc)
			rc = ws_analyse(w, &an);
		double s2 = now();
		if (rc) {
			fprintf(stderr, "waits: %d\n", rc);
			return 1;
		}
		const struct ws_row *rows;
		printf("  run %d: %zu events judged in %.3f s, analysed in %.3f s: %.0f events/s (%zu wait-state rows, "
		       "%zu delay costs, path %.3f s)\n", r + 1, ne, s1 - s0, s2 - s1, (double)ne / (s2 - s0),
		       ws_rows(w, &rows), an.ncosts, (double)an.path_ns / 1e9);
		best = (double)ne / (s2 - s0) > best ? (double)ne / (s2 - s0) : best;
		ws_analysis_free(&an);
		ws_destroy(w);
	}
	printf("post_events_per_s=%.0f\n", best);
	ar_msgs_free(&m);
	free(ev);
	ar_close(a);
	return 0;
}
