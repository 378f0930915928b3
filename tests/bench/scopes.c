/* scopes.c - benchmark: observe rates of scopes over 1, 14, 266 and 798 trace elements, and what they cost a running load. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scopes/scopes.h"

/*
 * The load, a separate process as an application would be: two worker
 * threads (one per core) do fixed units of work and write a trace tuple
 * into the next of many trace elements after each, as collectors would.
 * Its trace spaces stand for a cluster like the paper's: job S holds one
 * element, job A one node (19 threads x 14 elements = 266), job B three
 * such nodes (798).
 *
 * The monitor (this process) pulls through a scope as fast as the scope
 * lets it while the load runs.  Observe rate = full pulls per second;
 * slowdown = the load's time with the monitor / without, runs interleaved.
 */

#define UNITS 3000000L
#define REPS 5

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static char jobs[3][32]; /* S, A, B */

struct space_set {
	es_space *sp[5];
	ps_elem *te[1200];
	int n;
};

static void add_space(struct space_set *s, const char *seg, int threads, int per, const char *prefix)
{
	es_space *sp;
	if (es_space_create(seg, &sp)) {
		fprintf(stderr, "bench scopes: cannot make %s\n", seg);
		exit(1);
	}
	for (int i = 0; i < 5; i++)
		if (!s->sp[i]) {
			s->sp[i] = sp;
			break;
		}
	for (int t = 0; t < threads; t++)
		for (int c = 0; c < per; c++) {
			struct es_meta m = { .element = (uint32_t)c };
			snprintf(m.thread, sizeof(m.thread), "%s.th%d", prefix, t);
			uint16_t id;
			/* both workers write every element: many writers */
			es_space_add(sp, &m, 200, true, &id, &s->te[s->n++]);
		}
}

struct worker {
	struct space_set *set;
	int first;
	volatile double sink;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	double x = 1.0;
	struct es_trace t = { .op = ES_OP_WRITE, .size = 36 };
	for (long u = 0; u < UNITS; u++) {
		for (int k = 0; k < 40; k++)
			x = x * 1.0000001 + 1e-9; /* the computation being watched */
		t.start = es_now();
		t.end = t.start + 1;
		t.seq = (uint32_t)u;
		ps_write(w->set->te[(w->first + u) % w->set->n], &t, 0, NULL);
	}
	w->sink = x;
	return NULL;
}

/* The load: makes the spaces, says "ready", waits for "go", works, reports
 * its time, waits to be told to end. */
static void load(int in, int out)
{
	struct space_set set = { 0 };
	char seg[128];
	snprintf(seg, sizeof(seg), "%s.t0", jobs[0]);
	add_space(&set, seg, 1, 1, "solo");
	snprintf(seg, sizeof(seg), "%s.t0", jobs[1]);
	add_space(&set, seg, 19, 14, "a");
	for (int n = 0; n < 3; n++) {
		snprintf(seg, sizeof(seg), "%s.t%d", jobs[2], n);
		char prefix[8];
		snprintf(prefix, sizeof(prefix), "b%d", n);
		add_space(&set, seg, 19, 14, prefix);
	}
	char c = 'r';
	if (write(out, &c, 1) != 1)
		exit(1);
	while (read(in, &c, 1) == 1 && c == 'g') {
		struct worker w[2] = { { &set, 0, 0 }, { &set, 500, 0 } };
		pthread_t th[2];
		double t0 = now();
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, work, &w[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		double dt = now() - t0;
		if (write(out, &dt, sizeof(dt)) != sizeof(dt))
			exit(1);
	}
	exit(0);
}

static int to_load, from_load;

/* One timed run of the load, with a monitor pulling through spec (or none). */
static double run(const struct es_scope_spec *spec, double *rate)
{
	es_scope *s = NULL;
	struct es_trace *buf = NULL;
	if (spec) {
		if (es_scope_create(spec, &s)) {
			fprintf(stderr, "bench scopes: cannot attach to %s\n", spec->job);
			exit(1);
		}
		buf = calloc((size_t)es_scope_width(s), sizeof(*buf));
	}
	char c = 'g';
	if (write(to_load, &c, 1) != 1)
		exit(1);
	long pulls = 0;
	double t0 = now(), dt;
	if (s) {
		/* pull until the load says it is done */
		fd_set fds;
		struct timeval zero = { 0, 0 };
		for (;;) {
			FD_ZERO(&fds);
			FD_SET(from_load, &fds);
			if (select(from_load + 1, &fds, NULL, NULL, &zero) > 0)
				break;
			es_scope_pull(s, buf);
			pulls++;
		}
	}
	double el = now() - t0;
	if (read(from_load, &dt, sizeof(dt)) != sizeof(dt))
		exit(1);
	if (rate)
		*rate = pulls / el;
	free(buf);
	es_scope_destroy(s);
	return dt;
}

int main(void)
{
	es_clock_init();
	for (int i = 0; i < 3; i++)
		snprintf(jobs[i], sizeof(jobs[i]), "bsc%d%c", (int)getpid(), "SAB"[i]);
	int a[2], b[2];
	if (pipe(a) || pipe(b))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(a[1]);
		close(b[0]);
		load(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	to_load = a[1];
	from_load = b[0];
	char c;
	if (read(from_load, &c, 1) != 1)
		return 1;

	struct es_scope_spec v1, v14, v266, seq, conc, paced, slow, proc;
	es_scope_spec_default(&v1, jobs[0]);
	es_scope_spec_default(&v14, jobs[1]);
	v14.view = PM_VIEW_THREAD;
	v14.of = "a.th0";
	es_scope_spec_default(&v266, jobs[1]);
	es_scope_spec_default(&seq, jobs[2]);      /* all 798, gathered in the monitor */
	seq.fanout = 8;
	conc = seq;                                 /* the same, children gathered at once */
	conc.concurrent = true;
	conc.fanout = 64;
	paced = seq;                                /* the same, at most 1 kHz */
	paced.rate_hz = 1000;
	slow = seq;                                 /* and at most 100 Hz */
	slow.rate_hz = 100;
	proc = seq;                                 /* the tree in a helper process */
	proc.runs = PM_RUNS_PROCESS;
	const struct es_scope_spec *views[4] = { &v1, &v14, &v266, &seq };
	const char *vname[4] = { "1 element", "14 (a thread)", "266 (a node)", "798 (3 nodes)" };
	enum { NCFG = 5 };
	const struct es_scope_spec *cfg[NCFG] = { &seq, &conc, &proc, &paced, &slow };
	const char *cname[NCFG] = { "sequential, fanout 8", "concurrent threads, fanout 64",
				    "in a helper process, fanout 8", "sequential, at most 1 kHz",
				    "sequential, at most 100 Hz" };
	double rate_v[4][REPS], rate_c[NCFG][REPS], slow_c[NCFG][REPS];
	for (int r = 0; r < REPS; r++) {
		for (int v = 0; v < 4; v++)
			run(views[v], &rate_v[v][r]);
		for (int k = 0; k < NCFG; k++) {
			double base = run(NULL, NULL); /* interleaved: same conditions */
			double with = run(cfg[k], &rate_c[k][r]);
			slow_c[k][r] = with / base;
		}
	}
	c = 'q';
	if (write(to_load, &c, 1) != 1)
		return 1;
	waitpid(pid, NULL, 0);
	double rv[4], rc[NCFG], sc[NCFG];
	for (int v = 0; v < 4; v++) {
		qsort(rate_v[v], REPS, sizeof(double), cmp_d);
		rv[v] = rate_v[v][REPS / 2];
	}
	for (int k = 0; k < NCFG; k++) {
		qsort(rate_c[k], REPS, sizeof(double), cmp_d);
		qsort(slow_c[k], REPS, sizeof(double), cmp_d);
		rc[k] = rate_c[k][REPS / 2];
		sc[k] = slow_c[k][REPS / 2];
	}
	printf("scopes bench: a 2-thread load writing one trace tuple per work unit; the monitor pulls "
	       "one tuple from every element of the view per observation; median of %d runs\n", REPS);
	printf("  observe rate by view (sequential, fanout 4, while the load runs):\n");
	for (int v = 0; v < 4; v++)
		printf("    %-16s %10.0f Hz\n", vname[v], rv[v]);
	printf("  the full view (798 elements) under %d scope configurations:\n", NCFG);
	for (int k = 0; k < NCFG; k++)
		printf("    %-32s %8.0f Hz, load slowdown %.3f\n", cname[k], rc[k], sc[k]);
	printf("  (paper: 2500 Hz, 1500 Hz, 200 Hz and 58-106 Hz for 1, 14, 266 and 1948 elements)\n");
	char seg[128];
	for (int i = 0; i < 3; i++)
		for (int n = 0; n < 3; n++) {
			snprintf(seg, sizeof(seg), "%s.t%d", jobs[i], n);
			ps_shm_unlink(seg);
		}
	/* The summary: the fastest configuration that keeps the slowdown at
	 * most 1.05, or else the gentlest. */
	int best = -1;
	for (int k = 0; k < NCFG; k++)
		if (sc[k] <= 1.05 && (best < 0 || rc[k] > rc[best]))
			best = k;
	if (best < 0)
		for (int k = 0; k < NCFG; k++)
			if (best < 0 || sc[k] < sc[best])
				best = k;
	printf("  summary uses: %s\n", cname[best]);
	printf("scopes: rate_1=%.0f rate_14=%.0f rate_266=%.0f rate_all=%.0f slowdown_all=%.3f\n", rv[0],
	       rv[1], rv[2], rc[best], sc[best]);
	return 0;
}
