/* waits.c - the wait-state engine after the run: an archive's events fed (archive/waitfeed.c), judged and analysed (causes, critical path) on one core; prints events per second. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "archive/convert.h"

/*
 * usage: waits ARCHIVE [RUNS]
 * The archive is read once (not timed); each run makes an engine, feeds it
 * every event in each thread's order with messages paired, flushes it and
 * runs ws_analyse: what esprofile's wait-state section costs beside its
 * reading.  Prints each run and the best: "post_events_per_s=N".
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
	double best = 0;
	size_t n = ar_nevents(a);
	for (int r = 0; r < runs; r++) {
		ws *w;
		struct ws_analysis an;
		double t0 = now();
		int rc = ws_create(&w);
		if (!rc) {
			ws_keep(w);
			rc = ar_waits_feed(a, w, NULL);
		}
		if (!rc)
			rc = ws_analyse(w, &an);
		double t = now() - t0;
		if (rc) {
			fprintf(stderr, "waits: %d\n", rc);
			return 1;
		}
		const struct ws_row *rows;
		printf("  run %d: %zu events in %.3f s: %.0f events/s (%zu wait-state rows, %zu delay costs, path %.3f s)\n",
		       r + 1, n, t, (double)n / t, ws_rows(w, &rows), an.ncosts, (double)an.path_ns / 1e9);
		best = (double)n / t > best ? (double)n / t : best;
		ws_analysis_free(&an);
		ws_destroy(w);
	}
	printf("post_events_per_s=%.0f\n", best);
	ar_close(a);
	return 0;
}
