/* archive.c - how fast an archive of a million MPI events (over 4 ranks, or as many as asked; messages numbered as the collector numbers them) becomes OTF2, JSON and a profile: prints each's events per second. */
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

/* A message end numbered on its channel as the collector numbers it
 * (collectors/mpi/record.h, es_write_msg): whole below 2^15, then from the
 * channel's mark, written every ES_CHAN_MARK_EVERY messages.
 * ES_BENCH_KEEP=1 leaves the archive (for bench/waits, for perf). */
struct chan {
	uint64_t n, base;
};
static int number(ar_writer *w, struct es_trace *e, struct chan *c, int r, bool recv)
{
	uint16_t low;
	if (c->n < ES_NUM_WHOLE && !c->base) {
		low = (uint16_t)(ES_NUM_WHOLE | c->n);
	} else {
		if (c->n - c->base >= ES_CHAN_MARK_EVERY) {
			struct es_trace mk = { .start = e->start, .end = e->start, .seq = (uint32_t)(c->n >> 32),
					       .op = (uint16_t)(ES_OP_MPI_CHANNEL | (recv ? ES_OP_RECV : 0)), .comm = e->comm,
					       .element = e->element, .size = (uint32_t)c->n, .arg = e->arg };
			if (ar_write(w, &mk, (uint32_t)r))
				return -1;
			c->base = c->n;
		}
		low = (uint16_t)(c->n & (ES_NUM_WHOLE - 1));
	}
	e->op |= ES_OP_NUMBERED;
	e->seq = low;
	c->n++;
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	int RANKS = argc > 2 ? atoi(argv[2]) : 4; /* a thread each */
	if (RANKS < 2 || RANKS > 65536 || n < (size_t)RANKS) {
		fprintf(stderr, "usage: archive [EVENTS [RANKS (2 to 65536)]]\n");
		return 2;
	}
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
	/* ranks that send to the next and receive from the last, as many of
	 * each, an allreduce every eleventh: every message received as a real
	 * program's are, a few in flight (with a send more than receives in
	 * each ten, as once, 144,000 were in flight at the end, none received) */
	for (int r = 0; r < RANKS; r++) {
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "bench.r%d", r);
		snprintf(name, sizeof(name), "rank%d.thread0", r);
		ar_set_thread(w, r, proc, name);
	}
	int *world = malloc(sizeof(int) * (size_t)RANKS);
	if (!world)
		return 1;
	for (int r = 0; r < RANKS; r++)
		world[r] = r;
	const uint32_t size[2] = { (uint32_t)RANKS, 0 };
	const int *const members[2] = { world, NULL };
	ar_set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, size, members);
	uint64_t t = 1000;
	struct chan *sent = calloc((size_t)RANKS, sizeof(*sent)), *got = calloc((size_t)RANKS, sizeof(*got));
	if (!sent || !got)
		return 1;
	for (size_t i = 0; i < n; i++) {
		int r = (int)(i % RANKS);
		size_t k = i / RANKS;
		struct es_trace e = { .start = t, .end = t + 500, .seq = (uint32_t)k, .element = (uint32_t)((r + 1) % RANKS),
				      .size = 4096, .arg = 5, .comm = 0 };
		if (k % 11 == 10) {
			e.op = ES_OP_MPI_ALLREDUCE;
			e.element = 0xffffffffu;
			e.arg = (uint32_t)(k / 11);
		} else if (k % 11 % 2) {
			e.op = ES_OP_MPI_RECV;
			e.element = (uint32_t)((r + RANKS - 1) % RANKS);
		} else {
			e.op = ES_OP_MPI_SEND;
		}
		if ((e.op == ES_OP_MPI_SEND && number(w, &e, &sent[r], r, false)) ||
		    (e.op == ES_OP_MPI_RECV && number(w, &e, &got[r], r, true)) || ar_write(w, &e, (uint32_t)r))
			return 1;
		if (r == RANKS - 1)
			t += 1000;
	}
	if (ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "bench" }, err, sizeof(err))) {
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
	/* a message paired wrong or not at all would make the figures a lie */
	if (st.pairing.pairs * 2 != st.messages || !st.pairing.numbered) {
		fprintf(stderr, "bench archive: %llu messages paired of %llu ends\n", (unsigned long long)st.pairing.pairs,
			(unsigned long long)st.messages);
		return 1;
	}
	snprintf(p, sizeof(p), "%s/t.json", dir);
	if (ar_to_json(a, p, 0, UINT64_MAX, &st, err, sizeof(err))) {
		fprintf(stderr, "bench archive: %s\n", err);
		return 1;
	}
	double t2 = now();
	snprintf(p, sizeof(p), "%s/profile.txt", dir);
	FILE *pf = fopen(p, "w");
	if (!pf || ar_profile(a, pf, 20, err, sizeof(err))) {
		fprintf(stderr, "bench archive: profile: %s\n", err);
		return 1;
	}
	fclose(pf);
	double t3 = now();
	ar_close(a);
	free(world), free(sent), free(got);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (getenv("ES_BENCH_KEEP")) /* for bench/waits and perf: the archive left, and where */
		printf("archive: kept %s/a\n", dir);
	else if (system(cmd))
		return 1;
	printf("archive: %zu events of %d threads: OTF2 in %.3f s, JSON in %.3f s, profile in %.3f s\n", n, RANKS,
	       t1 - t0, t2 - t1, t3 - t2);
	printf("otf2_events_per_s=%.0f json_events_per_s=%.0f profile_events_per_s=%.0f otf2_s=%.3f profile_s=%.3f\n",
	       (double)n / (t1 - t0), (double)n / (t2 - t1), (double)n / (t3 - t2), t1 - t0, t3 - t2);
	return 0;
}
