/* app_died.c - a two-process PATHS job whose writer process dies (SIGKILL) while the reader in the other waits for its element. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "pathmaps/pathmaps.h"

static pm_job *start(const pm_map *m, const char *process)
{
	char err[512];
	pm_job *job;
	if (pm_job_create(m, process, &job, err, sizeof(err))) {
		fprintf(stderr, "app_died: %s: %s\n", process, err);
		exit(1);
	}
	return job;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "p0") && strcmp(argv[3], "p1"))) {
		fprintf(stderr, "usage: app_died JOB SECONDS p0|p1 (p0 reads, p1 writes and dies)\n");
		return 2;
	}
	double seconds = atof(argv[2]);
	char text[2048], err[512];
	snprintf(text, sizeof(text),
		 "pathmap: 1\nname: %s\napplication:\n  elements:\n"
		 "    - { name: e, tuple_size: 64, threshold: 4 }\n"
		 "  threads:\n    - { name: writer, uses: [e] }\n    - { name: reader, uses: [e] }\n"
		 "cluster:\n  hosts:\n    - { name: node0, cores: 2 }\n"
		 "mapping:\n  processes:\n"
		 "    - { name: p0, host: node0, threads: [reader] }\n"
		 "    - { name: p1, host: node0, threads: [writer] }\n"
		 "paths:\n  collectors: all\ntrace:\n  threshold: 100\n", argv[1]);
	es_collectors_register();
	pm_map *m;
	if (pm_load_string("app_died", text, strlen(text), &m, err, sizeof(err))) {
		fprintf(stderr, "app_died: %s\n", err);
		return 1;
	}
	char tuple[64] = { 0 };
	if (!strcmp(argv[3], "p1")) {
		/* the writer: three tuples, then it is killed before it writes more */
		pm_job *wj = start(m, "p1");
		paths_path *w = pm_job_path(wj, "writer", "e");
		for (int i = 0; i < 3; i++) {
			tuple[0] = (char)i;
			paths_write(w, tuple, 0, NULL);
			usleep(100000);
		}
		raise(SIGKILL);
	}
	pm_job *job = start(m, "p0");
	paths_path *r = pm_job_path(job, "reader", "e");
	int got = 0;
	while (got < 4 && paths_take(r, tuple, (int)(seconds * 1000), NULL) == 0)
		got++;
	pm_job_destroy(job);
	pm_destroy(m);
	printf("app_died: took %d tuples\n", got);
	return got == 3 ? 0 : 1;
}
