/* paths.c - benchmark: cost of a pass-through stage, latency of barrier and allreduce among threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paths/paths.h"
#include "tests/bench/bench.h"

#define WRITES 4000000
#define REPS 5

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "bench paths: %s: %s\n", what, ps_strerror(rc));
		exit(1);
	}
}

/* ns per write through `stages` pass-through stages into a local element. */
static double path_write_ns(ps_server *srv, int stages, int id)
{
	char name[32];
	snprintf(name, sizeof(name), "p%d", id);
	struct ps_elem_attr a = { .tuple_size = 36, .threshold = 200 };
	ps_elem *e;
	check(ps_elem_create(srv, name, &a, &e), "element");
	paths_stage *s, *n;
	check(paths_stage_element(e, &s), "stage");
	for (int i = 0; i < stages; i++) {
		check(paths_stage_create("pass", NULL, s, &n), "pass");
		paths_stage_release(s);
		s = n;
	}
	paths_path *p;
	check(paths_path_create(name, s, 36, &p), "path");
	paths_stage_release(s);
	unsigned char t[36];
	memset(t, 1, sizeof(t));
	double t0 = bench_cpu_ns();
	for (long i = 0; i < WRITES; i++) {
		memcpy(t, &i, sizeof(i));
		paths_write(p, t, 0, NULL);
	}
	double ns = (bench_cpu_ns() - t0) / WRITES;
	paths_path_destroy(p);
	ps_elem_close(e);
	return ns;
}

struct part {
	paths_tree *t;
	int me, iters, allreduce;
	double us;
};

static void *participant(void *arg)
{
	struct part *p = arg;
	paths_member *m;
	check(paths_member_create(p->t, p->me, &m), "member");
	int64_t v = p->me, out;
	paths_barrier(m, PS_FOREVER); /* everyone in before the clock starts */
	double t0 = bench_wall_ns();
	for (int i = 0; i < p->iters; i++)
		check(p->allreduce ? paths_allreduce(m, &v, &out, 1, PATHS_INT64, PATHS_SUM,
						     PS_FOREVER)
				   : paths_barrier(m, PS_FOREVER), "collective");
	p->us = (bench_wall_ns() - t0) / p->iters / 1000;
	paths_member_destroy(m);
	return NULL;
}

/* Wall-clock microseconds per collective, as participant 0 sees it. */
static double collective_us(int n, int allreduce)
{
	ps_server *srv;
	check(ps_server_create_local(&srv), "server");
	struct paths_tree_spec spec = { .name = "b", .nparticipants = n, .fanout = 2,
					.max_bytes = 8, .server = srv };
	paths_tree *t;
	check(paths_tree_create(&spec, &t), "tree");
	struct part ps[8];
	pthread_t th[8];
	for (int i = 0; i < n; i++) {
		ps[i] = (struct part){ t, i, 2000, allreduce, 0 };
		pthread_create(&th[i], NULL, participant, &ps[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	paths_tree_destroy(t);
	ps_server_destroy(srv);
	return ps[0].us;
}

int main(void)
{
	ps_server *srv;
	check(ps_server_create_local(&srv), "server");
	double w0[REPS], w3[REPS];
	int id = 0;
	for (int r = 0; r < REPS; r++) {
		w0[r] = path_write_ns(srv, 0, id++);
		w3[r] = path_write_ns(srv, 3, id++);
	}
	ps_server_destroy(srv);
	double W0 = bench_median(w0, REPS), W3 = bench_median(w3, REPS);
	double stage = (W3 - W0) / 3;
	printf("paths bench: 36-byte writes to an in-process element, median of %d runs\n", REPS);
	printf("  path with 0 pass stages: %.2f ns/write\n", W0);
	printf("  path with 3 pass stages: %.2f ns/write\n", W3);
	printf("  one pass-through stage:  %.2f ns (%.2fx the bare path per stage)\n", stage,
	       W0 > 0 ? stage / W0 : 0);
	printf("collectives among threads of one process (fanout 2, 2 cores), us per call:\n");
	printf("  %-8s %10s %12s\n", "threads", "barrier", "allreduce");
	double b[9] = { 0 }, a[9] = { 0 };
	for (int n = 2; n <= 8; n *= 2) {
		double bs[REPS], as[REPS];
		for (int r = 0; r < REPS; r++) {
			bs[r] = collective_us(n, 0);
			as[r] = collective_us(n, 1);
		}
		b[n] = bench_median(bs, REPS);
		a[n] = bench_median(as, REPS);
		printf("  %-8d %10.2f %12.2f\n", n, b[n], a[n]);
	}
	printf("  ratio barrier 8/2 threads: %.2f\n", b[8] / b[2]);
	printf("paths: stage_ns=%.2f barrier8_us=%.2f allreduce8_us=%.2f\n", stage, b[8], a[8]);
	return 0;
}
