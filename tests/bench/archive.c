/* archive.c - how fast an archive of a million MPI events becomes OTF2 (and JSON): prints otf2_events_per_s and json_events_per_s. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/convert.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	char dir[4096], err[4400], p[4200];
	snprintf(dir, sizeof(dir), "%s/esbarch.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(p, sizeof(p), "%s/a", dir);
	ar_writer *w;
	if (ar_create(p, "bench", &w, err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	/* four ranks: sends to the next, receives from the last, an allreduce every tenth */
	enum { RANKS = 4 };
	for (int r = 0; r < RANKS; r++) {
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "bench.r%d", r);
		snprintf(name, sizeof(name), "rank%d.thread0", r);
		ar_set_thread(w, r, proc, name);
	}
	static const int world[RANKS] = { 0, 1, 2, 3 };
	const uint32_t size[2] = { RANKS, 0 };
	const int *const members[2] = { world, NULL };
	ar_set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, size, members);
	uint64_t t = 1000;
	for (size_t i = 0; i < n; i++) {
		int r = (int)(i % RANKS);
		size_t k = i / RANKS;
		struct es_trace e = { .start = t, .end = t + 500, .seq = (uint32_t)k, .element = (uint32_t)((r + 1) % RANKS),
				      .size = 4096, .arg = 5, .comm = 0 };
		if (k % 10 == 9) {
			e.op = ES_OP_MPI_ALLREDUCE;
			e.element = 0xffffffffu;
			e.arg = (uint32_t)(k / 10);
		} else if (k % 2) {
			e.op = ES_OP_MPI_RECV;
			e.element = (uint32_t)((r + RANKS - 1) % RANKS);
		} else {
			e.op = ES_OP_MPI_SEND;
		}
		if (ar_write(w, &e, (uint32_t)r))
			return 1;
		if (r == RANKS - 1)
			t += 1000;
	}
	if (ar_finish(w, 0, 0, "bench", err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	ar_archive *a;
	if (ar_open(p, &a, err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	struct ar_out_stats st;
	snprintf(p, sizeof(p), "%s/otf2", dir);
	double t0 = now();
	if (ar_to_otf2(a, p, "traces", &st, err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	double t1 = now();
	snprintf(p, sizeof(p), "%s/t.json", dir);
	if (ar_to_json(a, p, 0, UINT64_MAX, &st, err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	double t2 = now();
	ar_close(a);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	printf("archive: %zu events: OTF2 in %.3f s, JSON in %.3f s\n", n, t1 - t0, t2 - t1);
	printf("otf2_events_per_s=%.0f json_events_per_s=%.0f\n", (double)n / (t1 - t0), (double)n / (t2 - t1));
	return 0;
}
