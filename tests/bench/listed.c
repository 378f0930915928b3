/* listed.c - writes an archive that lists many threads of which 4 recorded 106 events (4 ranks of many threads each, or a rank a thread): what esprofile and esconvert must read in time linear in the threads. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"

/* usage: listed DIR THREADS [ranks]: 4 ranks, or with "ranks" a rank a thread */
int main(int argc, char **argv)
{
	int n = argc >= 3 ? atoi(argv[2]) : 0;
	bool ranks = argc == 4 && !strcmp(argv[3], "ranks");
	if (n < 4 || argc > 4 || (argc == 4 && !ranks)) {
		fprintf(stderr, "usage: listed DIR THREADS (at least 4) [ranks]\n");
		return 2;
	}
	int world_n = ranks ? n : 4;
	char err[4400];
	ar_writer *w;
	if (ar_create(argv[1], "listed", &w, err, sizeof(err))) {
		fprintf(stderr, "listed: %s\n", err);
		return 1;
	}
	int *world = malloc(sizeof(int) * (size_t)n);
	if (!world)
		return 1;
	for (int t = 0; t < n; t++) { /* thread t of rank t % world_n */
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "listed.r%d", t % world_n);
		snprintf(name, sizeof(name), "rank%d.thread%d", t % world_n, t / world_n);
		world[t] = t;
		if (ar_set_thread(w, t, proc, name))
			return 1;
	}
	const uint32_t size[2] = { (uint32_t)world_n, 0 };
	const int *const members[2] = { world, NULL };
	if (ar_set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, size, members))
		return 1;
	/* ranks 0 to 3: a ring of sends and receives, an allreduce of theirs
	 * every fifth (a collective most members of which recorded nothing) */
	uint64_t t = 1000;
	for (int i = 0; i < 106; i++) {
		int r = i % 4, k = i / 4;
		struct es_trace e = { .start = t, .end = t + 500, .seq = (uint32_t)k, .size = 64, .arg = 7,
				      .comm = 0, .element = (uint32_t)((r + 1) % 4), .op = ES_OP_MPI_SEND };
		if (k % 5 == 4)
			e.op = ES_OP_MPI_ALLREDUCE, e.element = ES_NONE, e.arg = (uint32_t)(k / 5);
		else if (k % 2)
			e.op = ES_OP_MPI_RECV, e.element = (uint32_t)((r + 3) % 4);
		if (ar_write(w, &e, (uint32_t)r))
			return 1;
		t += r == 3 ? 1000 : 0;
	}
	free(world);
	if (ar_finish(w, &(struct ar_end){ .why = "bench" }, err, sizeof(err))) {
		fprintf(stderr, "listed: %s\n", err);
		return 1;
	}
	return 0;
}
