/* app_tree.c - four threads allreduce on a pathmap tree with collectors; one comes late to one of them, for colopmon. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collectors/collectors.h"
#include "pathmaps/pathmaps.h"

static pm_job *job;
static int bad;

static void *participant(void *arg)
{
	int me = (int)(long)arg;
	paths_member *m;
	if (paths_member_create(pm_job_tree(job, "sum"), me, &m)) {
		bad = 1;
		return NULL;
	}
	for (int i = 0; i < 5; i++) {
		if (i == 2 && me == 3) {
			struct timespec ts = { 0, 40 * 1000 * 1000 };
			nanosleep(&ts, NULL); /* the late contributor */
		}
		int64_t v = me, out;
		if (paths_allreduce(m, &v, &out, 1, PATHS_INT64, PATHS_SUM, 10000) || out != 6)
			bad = 1;
	}
	paths_member_destroy(m);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: app_tree JOB\n");
		return 2;
	}
	char text[1024], err[512];
	snprintf(text, sizeof(text),
		 "pathmap: 1\nname: %s\napplication:\n  elements: []\n  threads:\n"
		 "    - { name: t0 }\n    - { name: t1 }\n    - { name: t2 }\n    - { name: t3 }\n"
		 "trees:\n  - { name: sum, threads: [t0, t1, t2, t3], fanout: 4, collectors: true }\n",
		 argv[1]);
	es_collectors_register();
	pm_map *m;
	if (pm_load_string("app_tree", text, strlen(text), &m, err, sizeof(err)) ||
	    pm_job_create(m, "p0", &job, err, sizeof(err))) {
		fprintf(stderr, "app_tree: %s\n", err);
		return 1;
	}
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, participant, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pm_job_destroy(job);
	pm_destroy(m);
	return bad;
}
