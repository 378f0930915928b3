/* backlog.c - a job whose trace elements hold a backlog of events and nothing more happens: what a recorder costs per event, drained again and again (versus.sh). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"

/*
 * usage: backlog JOB THREADS EVENTS READYFILE
 * Makes JOB.t0 with THREADS trace elements of EVENTS tuples each, fills
 * them (calls of every kind PATHS collectors write, their stamps rising),
 * writes READYFILE and waits for SIGTERM, keeping the segment alive so that
 * a recorder finds a live job whose elements hold EVENTS each.
 */

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: backlog JOB THREADS EVENTS READYFILE\n");
		return 2;
	}
	int threads = atoi(argv[2]);
	long events = atol(argv[3]);
	if (threads < 1 || threads > 64 || events < 1 || events > 1L << 24) {
		fprintf(stderr, "backlog: expected 1 to 64 threads and 1 to 2^24 events\n");
		return 2;
	}
	char seg[128];
	snprintf(seg, sizeof(seg), "%s.t0", argv[1]);
	es_space *sp;
	int rc = es_space_create(seg, (size_t)threads * ((size_t)events * 64 + (1u << 20)), &sp);
	if (rc) {
		fprintf(stderr, "backlog: %s: %s\n", seg, ps_strerror(rc));
		return 1;
	}
	static const unsigned ops[] = { ES_OP_WRITE, ES_OP_READ, ES_OP_TAKE };
	for (int t = 0; t < threads && !rc; t++) {
		struct es_meta m = { .element = (uint32_t)t };
		snprintf(m.thread, sizeof(m.thread), "worker%d", t);
		snprintf(m.where, sizeof(m.where), "worker%d->e%d", t, t);
		uint16_t id;
		ps_elem *e;
		if ((rc = es_space_add(sp, &m, (uint32_t)events, false, &id, &e)))
			break;
		uint64_t at = base_now_ns() - (uint64_t)events * 1000;
		for (long i = 0; i < events && !rc; i++, at += 1000) {
			struct es_trace tr = { .start = at, .end = at + 400, .op = (uint16_t)ops[i % 3],
					       .element = (uint32_t)t, .size = 36, .arg = (uint32_t)i };
			rc = ps_write(e, &tr, 0, NULL);
		}
	}
	if (rc) {
		fprintf(stderr, "backlog: filling %s: %s\n", seg, ps_strerror(rc));
		es_space_destroy(sp);
		ps_shm_unlink(seg);
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	FILE *f = fopen(argv[4], "w");
	if (f)
		fclose(f);
	while (!stop)
		pause();
	es_space_destroy(sp);
	ps_shm_unlink(seg);
	return 0;
}
