/* pastset.c - benchmark: ns per write and per read of 36-byte tuples, in-process and shared memory. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pastset/pastset.h"
#include "tests/bench/bench.h"

/*
 * Costs are CPU time of the measuring thread divided by its operations, so a
 * thread that the other threads push off one of the two cores is not billed
 * for the time it waited.  Each figure is the median of REPS runs, and every
 * ratio printed compares figures taken in this one run.
 */
#define TUPLE 36
#define REPS 5
#define WRITES 4000000ull

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench pastset: %s: %s\n", what, ps_strerror(rc));
	exit(1);
}

struct reader {
	ps_elem *e;
	atomic_int *stop;
	double ns;
	uint64_t ops;
};

static void *read_latest_loop(void *arg)
{
	struct reader *r = arg;
	unsigned char t[TUPLE];
	double t0 = bench_cpu_ns();
	while (!atomic_load_explicit(r->stop, memory_order_relaxed)) {
		for (int i = 0; i < 256; i++)
			if (ps_read_latest(r->e, t, NULL) == 0)
				r->ops++;
	}
	r->ns = r->ops ? (bench_cpu_ns() - t0) / r->ops : 0;
	return NULL;
}

struct figures {
	double write_ns, read_latest_ns, read_seq_ns;
};

/* One run: writes flat out with nreaders threads sampling the newest tuple. */
static struct figures run(ps_server *srv, const char *name, int nreaders)
{
	struct ps_elem_attr a = { .tuple_size = TUPLE, .threshold = 200 };
	ps_elem *w;
	int rc = ps_elem_create(srv, name, &a, &w);
	if (rc)
		die(name, rc);
	unsigned char t[TUPLE];
	memset(t, 0x5a, sizeof(t));
	ps_write(w, t, 0, NULL); /* so readers never see an empty element */

	atomic_int stop = 0;
	struct reader rd[2];
	pthread_t th[2];
	for (int i = 0; i < nreaders; i++) {
		rd[i] = (struct reader){ .stop = &stop };
		if ((rc = ps_elem_open(srv, name, TUPLE, &rd[i].e)))
			die(name, rc);
		pthread_create(&th[i], NULL, read_latest_loop, &rd[i]);
	}
	double t0 = bench_cpu_ns();
	for (uint64_t i = 0; i < WRITES; i++) {
		memcpy(t, &i, sizeof(i)); /* a real writer changes its tuple */
		ps_write(w, t, 0, NULL);
	}
	struct figures f = { .write_ns = (bench_cpu_ns() - t0) / WRITES };
	atomic_store(&stop, 1);
	double sum = 0;
	for (int i = 0; i < nreaders; i++) {
		pthread_join(th[i], NULL);
		sum += rd[i].ns;
		ps_elem_close(rd[i].e);
	}
	if (nreaders) {
		f.read_latest_ns = sum / nreaders;
	} else {
		const uint64_t n = WRITES / 4;
		t0 = bench_cpu_ns();
		for (uint64_t i = 0; i < n; i++)
			ps_read_latest(w, t, NULL);
		f.read_latest_ns = (bench_cpu_ns() - t0) / n;
	}
	/* Sequential reads of everything held, as a consumer catching up. */
	struct ps_stats st;
	ps_elem_stats(w, &st);
	t0 = bench_cpu_ns();
	uint64_t reads = 0;
	for (int rep = 0; rep < 5000; rep++)
		for (uint64_t i = st.oldest; i < st.written; i++, reads++)
			ps_read(w, i, t, 0, NULL);
	f.read_seq_ns = (bench_cpu_ns() - t0) / reads;
	ps_elem_close(w);
	return f;
}

volatile uint64_t floor_head; /* seen by nobody, but stored like head */

/* The floor: the same 36 bytes stored into a plain ring, no protocol. */
static double floor_ns(void)
{
	static unsigned char ring[256][40];
	unsigned char t[TUPLE];
	memset(t, 1, sizeof(t));
	double t0 = bench_cpu_ns();
	for (uint64_t i = 0; i < WRITES; i++) {
		memcpy(t, &i, sizeof(i));
		memcpy(ring[i & 255], t, TUPLE);
		__asm__ __volatile__("" ::: "memory");
		floor_head = i + 1;
	}
	return (bench_cpu_ns() - t0) / WRITES;
}

int main(void)
{
	char seg[64];
	snprintf(seg, sizeof(seg), "bench-%d", (int)getpid());
	ps_server *local, *shm;
	int rc;
	if ((rc = ps_server_create_local(&local)))
		die("local server", rc);
	ps_shm_unlink(seg);
	if ((rc = ps_server_create_shm(seg, NULL, &shm)))
		die(seg, rc);

	const char *kinds[2] = { "local", "shm" };
	ps_server *srvs[2] = { local, shm };
	double w[2][2][REPS], rl[2][2][REPS], rs[2][2][REPS], fl[REPS];
	int n = 0;
	for (int rep = 0; rep < REPS; rep++) {
		fl[rep] = floor_ns();
		for (int k = 0; k < 2; k++)
			for (int r = 0; r < 2; r++) {
				char name[32];
				snprintf(name, sizeof(name), "e%d", n++);
				struct figures f = run(srvs[k], name, r ? 2 : 0);
				w[k][r][rep] = f.write_ns;
				rl[k][r][rep] = f.read_latest_ns;
				rs[k][r][rep] = f.read_seq_ns;
			}
	}
	printf("pastset bench: 36-byte tuples, threshold 200, %llu writes a run, "
	       "median of %d runs, ns of thread CPU time per operation\n",
	       WRITES, REPS);
	printf("%-6s %8s %10s %15s %12s\n", "server", "readers", "write_ns",
	       "read_latest_ns", "read_seq_ns");
	double W[2][2], RL[2][2];
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < 2; r++) {
			W[k][r] = bench_median(w[k][r], REPS);
			RL[k][r] = bench_median(rl[k][r], REPS);
			printf("%-6s %8d %10.2f %15.2f %12.2f\n", kinds[k], r ? 2 : 0,
			       W[k][r], RL[k][r], bench_median(rs[k][r], REPS));
		}
	double F = bench_median(fl, REPS);
	printf("floor (plain ring store of 36 bytes): %.2f ns\n", F);
	printf("ratios: shm/local write %.2f, shm write 2 readers/0 readers %.2f, "
	       "shm write/floor %.2f\n", W[1][0] / W[0][0], W[1][1] / W[1][0], W[1][0] / F);
	printf("pastset: shm_write_ns=%.2f shm_read_latest_ns=%.2f local_write_ns=%.2f\n",
	       W[1][0], RL[1][0], W[0][0]);
	ps_server_destroy(local);
	ps_server_destroy(shm);
	ps_shm_unlink(seg);
	return 0;
}
