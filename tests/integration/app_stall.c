/* app_stall.c - an application with known behaviour for the monitor tests: two threads that keep working, one that stops inside a take. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "pathmaps/pathmaps.h"

static pm_job *job;
static double seconds;
static int stall_at = 500; /* t2's operation that never completes (about 1 s in, so a
			     monitor sees it progress first); 0: its very first */
static volatile int done;
static struct timespec t_end; /* when the run ends: t2's wait ends with it */

static int left_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long ms = (t_end.tv_sec - now.tv_sec) * 1000 + (t_end.tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

static void *worker(void *arg)
{
	const char *name = arg;
	char elem[16];
	snprintf(elem, sizeof(elem), "own.%s", name);
	paths_path *p = pm_job_path(job, name, elem);
	char tuple[64] = { 0 };
	int n = 0;
	if (!strcmp(name, "t2") && stall_at == 0) {
		paths_take(pm_job_path(job, "t2", "never"), tuple, left_ms(), NULL);
		return NULL;
	}
	while (!done) {
		tuple[0] = (char)n++;
		paths_write(p, tuple, 0, NULL);
		usleep(2000);
		if (!strcmp(name, "t2") && n == stall_at) {
			/* t2 stops here: a take from an element nobody writes */
			paths_take(pm_job_path(job, "t2", "never"), tuple, left_ms(), NULL);
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/* first: t2 stops in its very first operation; shared: t1 has a path
	 * to 'never' too (and never writes it), so t2 waits for t1 */
	if (argc != 3 && !(argc == 4 && (!strcmp(argv[3], "first") || !strcmp(argv[3], "shared")))) {
		fprintf(stderr, "usage: app_stall JOB SECONDS [first|shared]\n");
		return 2;
	}
	seconds = atof(argv[2]);
	bool shared = argc == 4 && !strcmp(argv[3], "shared");
	if (argc == 4 && !shared)
		stall_at = 0;
	char text[2048], err[512];
	snprintf(text, sizeof(text),
		 "pathmap: 1\nname: %s\napplication:\n  elements:\n"
		 "    - { name: own.t0, tuple_size: 64, threshold: 8, mode: discard }\n"
		 "    - { name: own.t1, tuple_size: 64, threshold: 8, mode: discard }\n"
		 "    - { name: own.t2, tuple_size: 64, threshold: 8, mode: discard }\n"
		 "    - { name: never, tuple_size: 64 }\n"
		 "  threads:\n    - { name: t0, uses: [own.t0] }\n    - { name: t1, uses: [own.t1%s] }\n"
		 "    - { name: t2, uses: [own.t2, never] }\n"
		 "paths:\n  collectors: all\ntrace:\n  threshold: 100\n", argv[1], shared ? ", never" : "");
	es_collectors_register();
	pm_map *m;
	if (pm_load_string("app_stall", text, strlen(text), &m, err, sizeof(err)) ||
	    pm_job_create(m, "p0", &job, err, sizeof(err))) {
		fprintf(stderr, "app_stall: %s\n", err);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	t_end.tv_sec += (time_t)seconds;
	t_end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (t_end.tv_nsec >= 1000000000L) {
		t_end.tv_sec++;
		t_end.tv_nsec -= 1000000000L;
	}
	pthread_t th[3];
	static const char *names[3] = { "t0", "t1", "t2" };
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, (void *)names[i]);
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	nanosleep(&ts, NULL);
	done = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pm_job_destroy(job);
	pm_destroy(m);
	return 0;
}
