/* observe.c - pulls a running job's full view through a scope at a given rate, for the experiments: how often it observed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scopes/scopes.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: observe JOB RATE_HZ|max SECONDS\n");
		return 2;
	}
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, argv[1]);
	spec.reduce = ES_REDUCE_NONE; /* one tuple from every trace element */
	spec.fanout = 8;
	spec.rate_hz = strcmp(argv[2], "max") ? atof(argv[2]) : 0;
	double secs = atof(argv[3]);
	es_scope *s = NULL;
	for (int i = 0; i < 400 && es_scope_create(&spec, &s); i++)
		usleep(25000); /* the job may not be up yet */
	if (!s) {
		fprintf(stderr, "observe: no job %s\n", argv[1]);
		return 1;
	}
	/* take in every process's spaces before counting */
	usleep(200000);
	es_scope_refresh(s);
	struct es_trace *buf = calloc((size_t)es_scope_width(s), sizeof(*buf));
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long pulls = 0;
	double el = 1e-9;
	do {
		if (es_scope_pull(s, buf))
			break;
		pulls++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
		/* stop with the job: its first trace space closed */
		if (!(pulls & 63)) {
			struct ps_shm_info in;
			if (ps_shm_info(es_scope_leaf(s, 0)->segment, &in) || in.state != PS_SHM_LIVE)
				break;
		}
	} while (el < secs);
	printf("%d %.1f\n", es_scope_leaves(s), pulls / el);
	free(buf);
	es_scope_destroy(s);
	return 0;
}
