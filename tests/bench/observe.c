/* observe.c - watches a running job the way a monitor would, as often as it is let, for the experiments: how often it observed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scopes/scopes.h"

/*
 * observe JOB RATE SECONDS [MODE]
 *   RATE    pulls per second at most, or max
 *   MODE    all        one tuple from every trace element (geteventmon's full view; default)
 *           thread:T   one tuple from every trace element of thread T (a thread view)
 *           one        the latest tuple of a single trace element
 *           beat       the latest event of every thread (heartbeat's scope)
 *           consume    every new event of every trace element (geteventmon, colopmon)
 * OBSERVE_SERVERS in the environment: through those tuple servers.
 * Prints: trace elements observed, observations per second, and the
 * observer's CPU time per observation in microseconds.  Stops at
 * SECONDS or when the job ends.
 */
int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: observe JOB RATE_HZ|max SECONDS [all|thread:T|one|beat|consume]\n");
		return 2;
	}
	const char *mode = argc == 5 ? argv[4] : "all";
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, argv[1]);
	spec.reduce = strcmp(mode, "beat") ? ES_REDUCE_NONE : ES_REDUCE_LATEST;
	spec.fanout = 8;
	spec.rate_hz = strcmp(argv[2], "max") ? atof(argv[2]) : 0;
	if (!strncmp(mode, "thread:", 7)) {
		spec.view = PM_VIEW_THREAD;
		spec.of = mode + 7;
	}
	/* OBSERVE_SERVERS=ADDR:PORT,...: the job's tuple servers, as from another host */
	spec.servers = getenv("OBSERVE_SERVERS");
	double secs = atof(argv[3]);
	es_scope *s = NULL;
	for (int i = 0; i < 400 && es_scope_create(&spec, &s); i++)
		usleep(25000); /* the job may not be up yet */
	if (!s) {
		fprintf(stderr, "observe: no job %s\n", argv[1]);
		return 1;
	}
	usleep(200000); /* every process's spaces, before counting */
	es_scope_refresh(s);
	size_t width = (size_t)es_scope_width(s), max = 65536;
	struct es_trace *buf = calloc(width > max ? width : max, sizeof(*buf));
	const struct es_leaf *one = es_scope_leaf(s, 0);
	struct timespec t0, t, c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	long pulls = 0;
	double el = 1e-9;
	do {
		int rc;
		uint64_t missed;
		if (!strcmp(mode, "one")) {
			rc = ps_read_latest(one->elem, buf, NULL);
			rc = rc == PS_ENODATA ? 0 : rc;
		} else if (!strcmp(mode, "consume")) {
			rc = es_scope_consume(s, buf, max, &missed);
			rc = rc < 0 ? rc : 0;
		} else {
			rc = es_scope_pull(s, buf);
		}
		if (rc)
			break;
		pulls++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
		if (!(pulls & 63)) { /* stop with the job: its first trace space closed */
			if (ps_state_at(one->segment, NULL) != PS_SHM_LIVE)
				break;
		}
	} while (el < secs);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9;
	printf("%d %.1f %.2f\n", !strcmp(mode, "one") ? 1 : es_scope_leaves(s), pulls / el,
	       pulls ? cpu / pulls * 1e6 : 0);
	free(buf);
	es_scope_destroy(s);
	return 0;
}
