/* collector.c - benchmark: the cost of one collector, as the EventSpace paper measures it, beside LTTng-UST and a bare ring store. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "tests/bench/bench.h"
#include "tests/bench/es_tp.h"

/*
 * The parent sets up an LTTng session (its own session daemon if none runs,
 * a user-space channel in overwrite mode with the tracepoint enabled), runs
 * this program again as the child that measures, and tears the session
 * down.  The child measures, interleaved and repeated:
 *
 *   bare       an operation on a path: a write into a shared-memory element
 *   collector  the same path with one collector on it
 *   lttng      the bare operation, two timestamps, and the tracepoint
 *   floor      the bare operation, two timestamps, and a plain 36-byte store
 *
 * and, on a path with three collectors, the paper's way: the middle one's
 * cost is the outer one's interval minus its own.
 */

#define OPS 1000000
#define REPS 7

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench collector: %s: %s\n", what, rc < 0 ? ps_strerror(rc) : strerror(rc));
	exit(1);
}

static ps_server *data;
static char space_seg[64];

static paths_path *path_with(int collectors, const char *tag)
{
	char name[32];
	snprintf(name, sizeof(name), "d.%s", tag);
	struct ps_elem_attr a = { .tuple_size = 36, .threshold = 200 };
	ps_elem *e;
	int rc = ps_elem_create(data, name, &a, &e);
	if (rc)
		die(name, rc);
	paths_stage *s, *n;
	paths_stage_element(e, &s);
	for (int i = 0; i < collectors; i++) {
		char cname[32];
		snprintf(cname, sizeof(cname), "c.%s.%d", tag, i);
		struct paths_param kv[] = { { "space", space_seg, 0, 0 }, { "name", cname, 0, 0 } };
		struct paths_params p = { .v = kv, .n = 2 };
		if ((rc = paths_stage_create("collector", &p, s, &n)))
			die(cname, rc);
		paths_stage_release(s);
		s = n;
	}
	paths_path *path;
	paths_path_create(name, s, 36, &path);
	paths_stage_release(s);
	return path; /* the element handle lives as long as the run: fine for a bench */
}

enum { BARE, COLL, LTTNG, FLOOR, NVAR };
volatile uint32_t ring_head;

static double run(int variant, paths_path *bare, paths_path *coll)
{
	unsigned char t[36];
	memset(t, 7, sizeof(t));
	static struct es_trace ring[256];
	double t0 = bench_cpu_ns();
	for (uint32_t i = 0; i < OPS; i++) {
		memcpy(t, &i, sizeof(i));
		if (variant == COLL) {
			paths_write(coll, t, 0, NULL);
			continue;
		}
		uint64_t s = variant == BARE ? 0 : es_now();
		paths_write(bare, t, 0, NULL);
		if (variant == BARE)
			continue;
		uint64_t e = es_now();
		if (variant == LTTNG) {
			lttng_ust_tracepoint(es_bench, op, s, e, i, ES_OP_WRITE, 1, 0, 36, i);
		} else {
			struct es_trace *r = &ring[i & 255];
			*r = (struct es_trace){ .start = s, .end = e, .seq = i, .op = ES_OP_WRITE,
						.collector = 1, .size = 36, .arg = i };
			ring_head = i; /* published, as a ring's head would be */
		}
	}
	return (bench_cpu_ns() - t0) / OPS;
}

/* The paper's method: C1 -> C2 -> C3 -> element; C2 costs D1 - D2.  In
 * batches of 200 operations, as many as the trace elements hold. */
static double nested(paths_path *p3, const struct es_clock *ck)
{
	es_space *sp;
	es_space_get(space_seg, &sp);
	ps_elem *c[3];
	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof(name), "c.n.%d", k);
		if (ps_elem_open(es_space_server(sp), name, sizeof(struct es_trace), &c[k]))
			die(name, PS_ENOENT);
	}
	unsigned char t[36];
	memset(t, 3, sizeof(t));
	static struct es_trace tr[3][200];
	double sum = 0;
	int n = 0;
	for (int batch = 0; batch < 50; batch++) {
		for (uint32_t i = 0; i < 200; i++) {
			memcpy(t, &i, sizeof(i));
			paths_write(p3, t, 0, NULL);
		}
		for (int k = 0; k < 3; k++) {
			struct ps_stats st;
			ps_elem_stats(c[k], &st);
			if (ps_read_range(c[k], st.written - 200, 200, tr[k], NULL) != 200)
				die("reading the nested collectors' tuples", PS_EAGAIN);
		}
		/* c.n.0 is next to the element, c.n.2 outermost: the middle
		 * one's cost is the outer interval minus its own. */
		for (int i = 0; i < 200; i++, n++)
			sum += (double)(tr[2][i].end - tr[2][i].start) -
			       (double)(tr[1][i].end - tr[1][i].start);
	}
	for (int k = 0; k < 3; k++)
		ps_elem_close(c[k]);
	es_space_put(sp);
	return sum / n / ck->ticks_per_ns;
}

static int child(void)
{
	const struct es_clock *ck = es_clock_init();
	es_collectors_register();
	snprintf(space_seg, sizeof(space_seg), "bench-c%d", (int)getpid());
	char dseg[64];
	snprintf(dseg, sizeof(dseg), "bench-d%d", (int)getpid());
	int rc = ps_server_create_shm(dseg, NULL, &data);
	if (rc)
		die(dseg, rc);
	if (!lttng_ust_tracepoint_enabled(es_bench, op)) {
		fprintf(stderr, "bench collector: the LTTng tracepoint is not enabled in a live "
			"session: its figure would be meaningless\n");
		return 1;
	}
	paths_path *bare = path_with(0, "b"), *coll = path_with(1, "c"), *p3 = path_with(3, "n");
	double v[NVAR][REPS], paper[REPS];
	for (int r = 0; r < REPS; r++) {
		for (int k = 0; k < NVAR; k++)
			v[k][r] = run(k, bare, coll);
		paper[r] = nested(p3, ck);
	}
	double m[NVAR];
	for (int k = 0; k < NVAR; k++)
		m[k] = bench_median(v[k], REPS);
	double coll_ns = bench_median(paper, REPS);
	double with_without = m[COLL] - m[BARE], lttng_ns = m[LTTNG] - m[BARE];
	double floor_ns = m[FLOOR] - m[BARE];
	printf("collector bench: %d operations a run, median of %d runs; clock %s (%.3f ticks/ns)\n",
	       OPS, REPS, ck->source == ES_CLOCK_TSC ? "TSC" : "CLOCK_MONOTONIC", ck->ticks_per_ns);
	printf("  bare path write (shared-memory element):       %7.2f ns\n", m[BARE]);
	printf("  one collector, paper's method (C1-C2, nested): %7.2f ns\n", coll_ns);
	printf("  one collector, with minus without:             %7.2f ns\n", with_without);
	printf("  LTTng-UST tracepoint + 2 timestamps, overwrite: %6.2f ns\n", lttng_ns);
	printf("  floor: 2 timestamps + bare 36-byte ring store:  %6.2f ns\n", floor_ns);
	const char *mpi = getenv("ES_BENCH_MPI");
	if (mpi && *mpi)
		printf("  libescollect.so per recorded MPI call:          %s\n", mpi);
	printf("  ratios: collector/lttng %.2f, collector/floor %.2f\n", coll_ns / lttng_ns,
	       coll_ns / floor_ns);
	printf("collector: collector_ns=%.2f lttng_ns=%.2f floor_ns=%.2f ratio_lttng=%.2f\n",
	       coll_ns, lttng_ns, floor_ns, coll_ns / lttng_ns);
	paths_path_destroy(bare);
	paths_path_destroy(coll);
	paths_path_destroy(p3);
	ps_server_destroy(data);
	ps_shm_unlink(dseg);
	ps_shm_unlink(space_seg);
	return 0;
}

/* --- the parent: MPI figures, and the LTTng session around the child ------- */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* mpi_cost's four figures (ns a call): MPI_Barrier on COMM_SELF,
 * MPI_Sendrecv, a fruitless MPI_Testany, Isend+Irecv+Waitall. */
enum { MPI_FIGS = 4 };
static int mpi_cost(const char *dir, const char *preload, double fig[MPI_FIGS])
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mpirun --oversubscribe --allow-run-as-root -np 1 %s%s%s "
		 "-x ES_JOB=bench-m%d %s/mpi_cost 2>/dev/null", preload ? "-x LD_PRELOAD=" : "",
		 preload ? preload : "", "", (int)getpid(), dir);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	int n = fscanf(f, "%lf %lf %lf %lf", &fig[0], &fig[1], &fig[2], &fig[3]);
	pclose(f);
	return n == MPI_FIGS ? 0 : -1;
}

static pid_t sessiond_pid(void)
{
	FILE *f = fopen(geteuid() ? NULL : "/var/run/lttng/lttng-sessiond.pid", "r");
	char path[512];
	if (!f && geteuid()) {
		snprintf(path, sizeof(path), "%s/.lttng/lttng-sessiond.pid",
			 getenv("LTTNG_HOME") ? getenv("LTTNG_HOME") : getenv("HOME"));
		f = fopen(path, "r");
	}
	int pid = 0;
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid > 0 && kill(pid, 0) == 0 ? pid : 0;
}

/*
 * LTTng-UST's wait files (/dev/shm/lttng-ust-wait-ABI, -ABI-UID), which
 * liblttng-ust makes as it loads (in this program, before main) and the
 * session daemon keeps: made since this process began, they are this
 * benchmark's to remove (make bench leaves no segment behind); made
 * before, another user of LTTng's, left alone.
 */
static double started_s(void) /* this process's start, in seconds since the epoch */
{
	unsigned long long ticks = 0, btime = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	char buf[1024];
	if (f && fgets(buf, sizeof(buf), f)) {
		const char *p = strrchr(buf, ')'); /* past the command's name, which may hold anything */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
				&ticks) != 1)
			ticks = 0;
	}
	if (f)
		fclose(f);
	f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return (double)btime + (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

static void ust_waits_remove_ours(void)
{
	glob_t g;
	if (glob("/dev/shm/lttng-ust-wait-*", 0, NULL, &g))
		return;
	double since = started_s() - 1; /* the tick's rounding, and btime's second */
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct statx st;
		if (!statx(AT_FDCWD, g.gl_pathv[i], AT_SYMLINK_NOFOLLOW, STATX_BTIME, &st) &&
		    (st.stx_mask & STATX_BTIME) && (double)st.stx_btime.tv_sec >= since && st.stx_uid == geteuid())
			unlink(g.gl_pathv[i]);
	}
	globfree(&g);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("ES_BENCH_CHILD"))
		return child();
	char self[4096], dir[4096];
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(dir, sizeof(dir), "%s", dirname(self));

	/* MPI: the same program with and without the collector library. */
	char lib[4200], mpi[400] = "";
	snprintf(lib, sizeof(lib), "%s/../lib/libescollect.so", dir);
	/* Runs alternate with and without, and each keeps its best: the
	 * machine's noise only ever adds. */
	double off[MPI_FIGS], on[MPI_FIGS], x[MPI_FIGS];
	for (int k = 0; k < MPI_FIGS; k++)
		off[k] = on[k] = 1e30;
	int ok = access(lib, R_OK) == 0;
	for (int r = 0; ok && r < 3; r++) {
		ok = mpi_cost(dir, NULL, x) == 0;
		for (int k = 0; ok && k < MPI_FIGS; k++)
			off[k] = x[k] < off[k] ? x[k] : off[k];
		ok = ok && mpi_cost(dir, lib, x) == 0;
		for (int k = 0; ok && k < MPI_FIGS; k++)
			on[k] = x[k] < on[k] ? x[k] : on[k];
	}
	if (ok) {
		snprintf(mpi, sizeof(mpi), "%.1f ns (MPI_Barrier on COMM_SELF %.1f -> %.1f ns), "
			 "%.1f ns (MPI_Sendrecv %.1f -> %.1f ns); a fruitless poll %.1f ns "
			 "(MPI_Testany on 4 receives %.1f -> %.1f ns); a halo exchange %.1f ns "
			 "(Isend+Irecv+Waitall %.1f -> %.1f ns)", on[0] - off[0], off[0], on[0],
			 on[1] - off[1], off[1], on[1], on[2] - off[2], off[2], on[2], on[3] - off[3],
			 off[3], on[3]);
		sh("rm -f /dev/shm/pastset.bench-m%d.r0", (int)getpid());
	} else {
		snprintf(mpi, sizeof(mpi), "not measured (mpirun or libescollect.so unavailable)");
	}

	char tmp[] = "/tmp/esbench.XXXXXX";
	if (!mkdtemp(tmp))
		die("mkdtemp", errno);
	pid_t ours = 0;
	if (!sessiond_pid()) {
		if (sh("lttng-sessiond --no-kernel --daemonize --quiet") != 0) {
			fprintf(stderr, "bench collector: cannot start lttng-sessiond\n");
			return 1;
		}
		ours = sessiond_pid();
	}
	int rc = 1;
	char session[64];
	snprintf(session, sizeof(session), "esbench%d", (int)getpid());
	if (sh("lttng -q create %s --output=%s/trace", session, tmp) ||
	    sh("lttng -q enable-channel -u --overwrite --subbuf-size=1M --num-subbuf=4 -s %s ch",
	       session) ||
	    sh("lttng -q enable-event -u -s %s -c ch es_bench:op", session) ||
	    sh("lttng -q start %s", session)) {
		fprintf(stderr, "bench collector: setting up the LTTng session failed\n");
	} else {
		setenv("ES_BENCH_CHILD", "1", 1);
		setenv("ES_BENCH_MPI", mpi, 1);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		sh("lttng -q stop %s", session);
	}
	sh("lttng -q destroy %s >/dev/null 2>&1", session);
	if (ours) {
		kill(ours, SIGTERM);
		for (int i = 0; i < 500 && kill(ours, 0) == 0; i++) /* its end, before its files go */
			usleep(10000);
	}
	ust_waits_remove_ours();
	sh("rm -rf %s", tmp);
	return rc;
}
