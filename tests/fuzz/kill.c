/* kill.c - writers, tuple servers and monitors killed with SIGKILL at random points: counts stay exact, no tuple is torn, nobody waits on the dead. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pastset/pastset.h"

/*
 * A tuple carries its own index and a checksum of the rest, so a torn or
 * misplaced one shows.  Each trial runs under alarm(): a hang fails it.
 */
#define TS 40

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void make(unsigned char t[TS], uint64_t idx, uint32_t writer)
{
	uint64_t sum = idx * 0x9e3779b97f4a7c15ull ^ writer;
	memcpy(t, &idx, 8);
	memcpy(t + 8, &writer, 4);
	for (int i = 12; i < TS - 8; i++)
		t[i] = (unsigned char)(sum >> (i % 8 * 8));
	memcpy(t + TS - 8, &sum, 8);
}

static bool whole(const unsigned char t[TS], uint64_t *idx, uint32_t *writer)
{
	unsigned char want[TS];
	memcpy(idx, t, 8);
	memcpy(writer, t + 8, 4);
	make(want, *idx, *writer);
	return !memcmp(t, want, TS);
}

static int failures;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "kill: %s:%d: ", __FILE__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                             \
			fputc('\n', stderr);                                      \
			failures++;                                               \
			return;                                                   \
		}                                                                 \
	} while (0)

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	nanosleep(&ts, NULL);
}

/* Every tuple held, whole and in its place; returns how many. */
static uint64_t check_held(ps_elem *e, const char *what, int trial)
{
	struct ps_stats st;
	ps_elem_stats(e, &st);
	uint64_t held = st.written - st.oldest;
	unsigned char *buf = malloc((size_t)(held ? held : 1) * TS);
	int got = held ? ps_read_range(e, st.oldest, (size_t)held, buf, NULL) : 0;
	uint64_t bad = 0;
	for (int i = 0; i < got; i++) {
		uint64_t idx;
		uint32_t w;
		if (!whole(buf + (size_t)i * TS, &idx, &w) || (w == 1 && idx != st.oldest + (uint64_t)i))
			bad++;
	}
	free(buf);
	if ((uint64_t)got != held || bad) {
		fprintf(stderr, "kill: %s trial %d: %d of %llu held tuples read, %llu torn or misplaced\n",
			what, trial, got, (unsigned long long)held, (unsigned long long)bad);
		failures++;
	}
	return held;
}

/* --- writers ------------------------------------------------------------------ */

static void writer_trial(int trial)
{
	static const uint32_t thresholds[] = { 1, 2, 7, 64, 256, 1000, 1024 };
	uint32_t thr = thresholds[rnd() % 7];
	bool multi = rnd() % 2;
	char seg[64];
	snprintf(seg, sizeof(seg), "kw%d", (int)getpid());
	ps_shm_unlink(seg);
	ps_server *s;
	ps_elem *e;
	struct ps_shm_attr sa = { .size = 1u << 20 };
	struct ps_elem_attr a = { .tuple_size = TS, .threshold = thr,
				  .flags = multi ? PS_MULTI_WRITER : 0 };
	CHECK(!ps_server_create_shm(seg, &sa, &s) && !ps_elem_create(s, "t", &a, &e), "setup");
	/* one writer, or two with the element's lock between them, killed at
	 * a random moment: in a write, in the lock, between writes */
	int nw = multi ? 2 : 1;
	pid_t pid[2];
	for (int w = 0; w < nw; w++) {
		if ((pid[w] = fork()) == 0) {
			ps_server *cs;
			ps_elem *ce;
			if (ps_server_open_shm(seg, PS_RDWR, &cs) || ps_elem_open(cs, "t", TS, &ce))
				_exit(3);
			unsigned char t[TS];
			for (uint64_t i = 0;; i++) {
				if (multi) /* each writer's index is unknown to it: only whole is checked */
					make(t, 0, (uint32_t)(10 + w));
				else
					make(t, i, 1);
				if (ps_write(ce, t, PS_FOREVER, NULL))
					_exit(4);
			}
		}
	}
	sleep_us((long)(rnd() % 20000));
	for (int w = 0; w < nw; w++)
		kill(pid[w], SIGKILL);
	for (int w = 0; w < nw; w++)
		waitpid(pid[w], NULL, 0);
	check_held(e, "writer", trial);
	/* a writer that takes over goes on from the index next, and counts stay exact */
	struct ps_stats before, after;
	ps_elem_stats(e, &before);
	unsigned char t[TS];
	uint64_t idx;
	make(t, before.written, 1);
	CHECK(!ps_write(e, t, 0, &idx) && idx == before.written, "writer trial %d: the next write", trial);
	ps_elem_stats(e, &after);
	CHECK(after.written == before.written + 1 && after.unfinished == 0 &&
	      after.oldest == (after.written > thr ? after.written - thr : 0) &&
	      after.discarded == after.oldest,
	      "writer trial %d: counts after the kill: written %llu oldest %llu discarded %llu", trial,
	      (unsigned long long)after.written, (unsigned long long)after.oldest,
	      (unsigned long long)after.discarded);
	ps_elem_close(e);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}

/* --- tuple servers --------------------------------------------------------------- */

static void server_trial(int trial)
{
	char seg[96], prefix[64];
	snprintf(prefix, sizeof(prefix), "ks%d.", (int)getpid());
	snprintf(seg, sizeof(seg), "%sseg", prefix);
	ps_shm_unlink(seg);
	ps_server *s;
	ps_elem *e;
	struct ps_shm_attr sa = { .size = 1u << 20 };
	struct ps_elem_attr a = { .tuple_size = TS, .threshold = 100 };
	CHECK(!ps_server_create_shm(seg, &sa, &s) && !ps_elem_create(s, "t", &a, &e), "setup");
	int pfd[2];
	CHECK(!pipe(pfd), "pipe");
	pid_t daemon = fork();
	if (daemon == 0) { /* the node daemon, serving the segment */
		struct ps_tcp_attr ta = { .shm_prefix = prefix };
		ps_tcp *t;
		if (ps_tcp_start(&ta, &t))
			_exit(3);
		int port = ps_tcp_port(t);
		if (write(pfd[1], &port, sizeof(port)) != sizeof(port))
			_exit(4);
		for (;;)
			pause();
	}
	int port = 0;
	CHECK(read(pfd[0], &port, sizeof(port)) == sizeof(port), "the daemon's port");
	close(pfd[0]);
	close(pfd[1]);
	/* the application writes on; a monitor reads through the daemon,
	 * which dies at a random moment */
	ps_server *r;
	ps_elem *re;
	struct ps_remote_attr ra = { .timeout_ms = 2000 };
	CHECK(!ps_server_open_remote("127.0.0.1", port, seg, PS_RDONLY, &ra, &r) &&
	      !ps_elem_open(r, "t", TS, &re), "server trial %d: open", trial);
	long kill_at = (long)(rnd() % 20000);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool killed = false;
	int lost = 0;
	unsigned char t[TS];
	for (uint64_t i = 0; i < 2000; i++) {
		make(t, i, 1);
		CHECK(!ps_write(e, t, 0, NULL), "the application's write");
		int rc = ps_read_latest(re, t, NULL);
		uint64_t idx;
		uint32_t w;
		if (!rc && (!whole(t, &idx, &w) || idx > i))
			CHECK(0, "server trial %d: a torn tuple through the server", trial);
		lost += rc == PS_ELOST;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!killed && (now.tv_sec - t0.tv_sec) * 1000000 + (now.tv_nsec - t0.tv_nsec) / 1000 >= kill_at) {
			kill(daemon, SIGKILL);
			waitpid(daemon, NULL, 0);
			killed = true;
		}
		if (killed && lost)
			break;
	}
	if (!killed) {
		kill(daemon, SIGKILL);
		waitpid(daemon, NULL, 0);
	}
	/* the application's element lost nothing to the daemon's death */
	struct ps_stats st;
	ps_elem_stats(e, &st);
	check_held(e, "server", trial);
	CHECK(st.discarded == st.oldest && st.written - st.oldest <= 100, "server trial %d: counts",
	      trial);
	ps_elem_close(re);
	ps_server_destroy(r);
	ps_elem_close(e);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}

/* --- monitors ---------------------------------------------------------------------- */

static void monitor_trial(int trial)
{
	char seg[64];
	snprintf(seg, sizeof(seg), "km%d", (int)getpid());
	ps_shm_unlink(seg);
	ps_server *s;
	ps_elem *e;
	struct ps_shm_attr sa = { .size = 1u << 20 };
	struct ps_elem_attr a = { .tuple_size = TS, .threshold = 50, .flags = PS_EXACT_WAKE };
	CHECK(!ps_server_create_shm(seg, &sa, &s) && !ps_elem_create(s, "t", &a, &e), "setup");
	pid_t mon = fork();
	if (mon == 0) { /* a monitor: waits for tuples, reads ranges, latest */
		ps_server *ms;
		ps_elem *me;
		if (ps_server_open_shm(seg, PS_RDONLY, &ms) || ps_elem_open(ms, "t", TS, &me))
			_exit(3);
		unsigned char buf[50 * TS];
		for (uint64_t next = 0;;) {
			uint64_t oldest;
			int rc = ps_read(me, next, buf, 100, &oldest);
			if (rc == PS_EDISCARDED)
				next = oldest;
			else if (!rc)
				next++;
			ps_read_range(me, next, 10, buf, NULL);
		}
	}
	/* the application writes throughout: the monitor's death never stops it */
	long kill_at = (long)(rnd() % 20000);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool killed = false;
	unsigned char t[TS];
	uint64_t i = 0;
	for (; !killed || i % 1000; i++) {
		make(t, i, 1);
		CHECK(!ps_write(e, t, 0, NULL), "monitor trial %d: the application's write %llu", trial,
		      (unsigned long long)i);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!killed && (now.tv_sec - t0.tv_sec) * 1000000 + (now.tv_nsec - t0.tv_nsec) / 1000 >= kill_at) {
			kill(mon, SIGKILL);
			waitpid(mon, NULL, 0);
			killed = true;
		}
	}
	struct ps_stats st;
	ps_elem_stats(e, &st);
	CHECK(st.written == i && st.oldest == (i > 50 ? i - 50 : 0) && st.discarded == st.oldest,
	      "monitor trial %d: counts: written %llu of %llu", trial, (unsigned long long)st.written,
	      (unsigned long long)i);
	check_held(e, "monitor", trial);
	ps_elem_close(e);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 100;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	if (!seed)
		seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	rng = seed | 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kill: seed %llu\n", (unsigned long long)seed);
	struct {
		const char *what;
		void (*fn)(int);
	} kinds[] = { { "writers", writer_trial }, { "servers", server_trial }, { "monitors", monitor_trial } };
	for (int k = 0; k < 3; k++) {
		int before = failures;
		for (int i = 0; i < trials; i++) {
			alarm(30); /* a trial that hangs fails the run */
			kinds[k].fn(i);
			alarm(0);
		}
		printf("kill: %s: %d trials, killed with SIGKILL at random points: %d failed\n", kinds[k].what,
		       trials, failures - before);
	}
	return failures ? 1 : 0;
}
