/* heartbeat.c - the heartbeat monitor: which threads of a running job stopped making progress, and where they wait. */
#define _GNU_SOURCE
#include <getopt.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "waitfor.h"

static const char *usage =
	"usage: heartbeat [options] JOB\n"
	"Every period, gathers the latest event of every thread of JOB (its trace\n"
	"spaces JOB.tN and JOB.rN on this host, or on --servers) and reports the threads that made\n"
	"no progress since the last period, and what they are inside; then, from\n"
	"who waits for whom, the root of each stall and every deadlock.\n"
	"  -p, --period MS      time between looks (default 1000)\n"
	"  -n, --count N        stop after N periods (default: when the job ends)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	"      --pathmap FILE   take the scope's shape (fan-out, placement, rate)\n"
	"      --scope NAME     from this scope of the pathmap\n"
	"  -q, --quiet          no status line per period, only the summary\n"
	"  -g, --graph FILE     write the wait-for graph as Graphviz DOT each period, and\n"
	"                       FILE's .png beside it when dot (Debian graphviz) is there\n"
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"Exit status: 0 if every thread progressed in every period (or ended), 1 if\n"
	"some thread made no progress for a whole period, 3 if a deadlock was seen\n"
	"(threads waiting in a cycle, a collective mismatch, a wait for a rank that\n"
	"ended or for an element no thread writes), 2 on a usage error or if the job\n"
	"never appeared.\n";

struct thr {
	char where[200];     /* where it was when last seen stalled */
	uint64_t last_end;   /* ns */
	int seen;            /* had an event */
	int ended;           /* its rank or process ended */
	int stalled_now, stalled_periods, progress_periods;
};

/* What thread t is inside, in words: the operation, and the path or the
 * peer it waits on. */
static void describe(const es_scope *s, bool inside, const struct es_flight *fp, char *buf, size_t len)
{
	if (!inside) {
		snprintf(buf, len, "between operations");
		return;
	}
	const struct es_flight f = *fp;
	const struct es_meta *m = &es_scope_leaf(s, f.leaf)->meta;
	const struct es_op_info *i = es_op_info(f.op);
	const char *in = i && i->kind == ES_KIND_POLL ? "polling" : "inside"; /* a streak of them */
	if (f.op >= ES_OP_MPI_INIT && f.element != ES_NONE)
		snprintf(buf, len, "%s %s with rank %u for %.2f s", in, es_op_name(f.op), f.element,
			 f.since_ns / 1e9);
	else if (f.op >= ES_OP_MPI_INIT)
		snprintf(buf, len, "%s %s for %.2f s", in, es_op_name(f.op), f.since_ns / 1e9);
	else
		snprintf(buf, len, "inside %s on %s for %.2f s", es_op_name(f.op),
			 m->where[0] ? m->where : "its element", f.since_ns / 1e9);
}

extern char **environ;

/* --graph: the DOT file, replaced whole, and its picture when dot is there. */
struct picture {
	const char *dot, *png;
	char tmp[4096];
	bool no_dot; /* said once */
};

static int picture_open(struct picture *p, const char *file)
{
	static char png[4096];
	p->dot = file;
	size_t n = strlen(file);
	if (n > 4 && !strcmp(file + n - 4, ".dot"))
		snprintf(png, sizeof(png), "%.*s.png", (int)(n - 4), file);
	else
		snprintf(png, sizeof(png), "%s.png", file);
	p->png = png;
	snprintf(p->tmp, sizeof(p->tmp), "%s.tmp", file);
	FILE *f = ps_fopen_out(p->tmp, 0644); /* say now, not after the first period, that it cannot be */
	if (!f) {
		fprintf(stderr, "heartbeat: --graph %s: %s\n", file, strerror(errno));
		return 2;
	}
	fclose(f);
	unlink(p->tmp);
	return 0;
}

static void picture_write(struct picture *p, const wf_graph *g, const char *title)
{
	FILE *f = ps_fopen_out(p->tmp, 0644);
	if (!f || wf_dot(g, f, title) || fclose(f)) {
		if (f)
			fclose(f);
		fprintf(stderr, "heartbeat: --graph %s: %s\n", p->dot, strerror(errno ? errno : EIO));
		unlink(p->tmp);
		return;
	}
	if (rename(p->tmp, p->dot)) {
		fprintf(stderr, "heartbeat: --graph %s: %s\n", p->dot, strerror(errno));
		return;
	}
	if (p->no_dot)
		return;
	/* dot draws to its stdout, a file we opened the safe way, which takes
	 * the picture's name once whole */
	char *argv[] = { "dot", "-Tpng", (char *)p->dot, NULL };
	FILE *png = ps_fopen_out(p->tmp, 0644);
	if (!png) {
		fprintf(stderr, "heartbeat: --graph %s: %s\n", p->png, strerror(errno));
		return;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fileno(png), STDOUT_FILENO);
	pid_t pid;
	int st = 0;
	int spawned = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	fclose(png);
	bool ran = !spawned && waitpid(pid, &st, 0) == pid && WIFEXITED(st);
	if (ran && !WEXITSTATUS(st)) {
		if (rename(p->tmp, p->png))
			fprintf(stderr, "heartbeat: --graph %s: %s\n", p->png, strerror(errno));
	} else {
		unlink(p->tmp);
	}
	if (!ran || WEXITSTATUS(st) == 127) {
		fprintf(stderr, "heartbeat: no picture of the graph: dot (Debian graphviz) is not installed\n");
		p->no_dot = true;
	} else if (WEXITSTATUS(st)) {
		fprintf(stderr, "heartbeat: dot could not draw %s (exit %d)\n", p->dot, WEXITSTATUS(st));
	}
	posix_spawn_file_actions_destroy(&fa);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("heartbeat (EventSpace) " ES_VERSION);
		return 0;
	}
	static const struct option opts[] = {
		{ "period", required_argument, NULL, 'p' }, { "count", required_argument, NULL, 'n' },
		{ "wait", required_argument, NULL, 'w' }, { "pathmap", required_argument, NULL, 'P' },
		{ "scope", required_argument, NULL, 'S' }, { "quiet", no_argument, NULL, 'q' },
		{ "graph", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' }, MON_REMOTE_OPTS, { 0 } };
	double period = 1.0, wait = 10;
	long count = -1;
	int quiet = 0, c;
	const char *pathmap = NULL, *scope = NULL, *graph = NULL;
	while ((c = getopt_long(argc, argv, "p:n:w:qg:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': period = mon_number("heartbeat", "--period", optarg, 1) / 1000; break;
		case 'n': count = (long)mon_number("heartbeat", "--count", optarg, 1); break;
		case 'w': wait = mon_number("heartbeat", "--wait", optarg, 0); break;
		case 'P': pathmap = optarg; break;
		case 'S': scope = optarg; break;
		case 'q': quiet = 1; break;
		case 'g': graph = optarg; break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "heartbeat: expected one JOB name\n%s", usage);
		return 2;
	}
	const char *job = argv[optind];
	struct picture pic = { 0 };
	if (graph && picture_open(&pic, graph))
		return 2;
	struct es_scope_spec spec;
	if (mon_spec("heartbeat", pathmap, scope, job, &spec))
		return 2;
	mon_remote("heartbeat", &spec);
	spec.reduce = ES_REDUCE_LATEST; /* one timestamp per thread: its latest event */
	mon_signals();
	es_scope *s;
	int rc = mon_attach("heartbeat", &spec, wait, &s);
	if (rc)
		return rc;
	int n = es_scope_threads(s);
	struct thr *th = calloc((size_t)n, sizeof(*th));
	struct es_trace *beat = calloc((size_t)es_scope_width(s), sizeof(*beat));
	if (!th || !beat)
		return 2;
	printf("heartbeat: watching %d threads of job '%s' (%d trace elements), every %.0f ms\n",
	       n, job, es_scope_leaves(s), period * 1000);
	fflush(stdout);
	/* Where every thread is now: the first period judges against this, so
	 * a thread that stopped before we came is seen at once. */
	if (!es_scope_pull(s, beat))
		for (int t = 0; t < n; t++)
			if (!es_trace_empty(&beat[t])) {
				th[t].seen = 1;
				th[t].last_end = beat[t].end;
			}
	double t0 = mon_now();
	long periods = 0;
	int any_stalled = 0;
	bool deadlocked = false, wf_failed = false;
	char *last_findings = NULL;
	wf_graph *wfg;
	if (wf_create(&wfg))
		return 2;
	struct mon_watch w = { .grace = period * 3 > 3 ? period * 3 : 3 };
	while (!mon_stop && (count < 0 || periods < count)) {
		mon_sleep(period);
		/* A job that ended is not stalled: stop before judging it. */
		if (mon_stop || !mon_watch("heartbeat", s, &w))
			break;
		if (w.now == MON_UNREACHABLE) { /* nothing to judge by */
			periods++;
			if (!quiet)
				printf("heartbeat %.1fs: cannot reach the job's tuple servers (%s)\n",
				       mon_now() - t0, w.lost);
			fflush(stdout);
			continue;
		}
		/* Threads may appear (a rank starting late, a thread's first
		 * call): take them in, keeping what is known by name. */
		char **names = NULL;
		int oldn = n;
		if (!(names = calloc((size_t)oldn + 1, sizeof(*names))))
			break;
		for (int t = 0; t < oldn; t++)
			names[t] = strdup(es_scope_thread(s, t));
		if (es_scope_refresh(s) > 0) {
			n = es_scope_threads(s);
			struct thr *nth = calloc((size_t)n, sizeof(*nth));
			struct es_trace *nbeat = calloc((size_t)es_scope_width(s), sizeof(*nbeat));
			if (!nth || !nbeat)
				break;
			for (int t = 0; t < n; t++)
				for (int o = 0; o < oldn; o++)
					if (names[o] && !strcmp(names[o], es_scope_thread(s, t)))
						nth[t] = th[o];
			free(th);
			free(beat);
			th = nth;
			beat = nbeat;
			if (!quiet)
				printf("heartbeat: now watching %d threads\n", n);
		}
		for (int t = 0; t < oldn; t++)
			free(names[t]);
		free(names);
		if ((rc = es_scope_pull(s, beat))) {
			fprintf(stderr, "heartbeat: pull: %s\n", ps_strerror(rc));
			break;
		}
		periods++;
		int progressing = 0, stalled = 0, idle = 0, unreachable = 0, ended = 0;
		char line[4096], lost_at[128] = "";
		size_t used = 0;
		/* threads behind a server that did not answer: not judged */
		bool *lost = calloc((size_t)n + 1, sizeof(*lost));
		bool *progressed = calloc((size_t)n + 1, sizeof(*progressed));
		bool *stall = calloc((size_t)n + 1, sizeof(*stall));
		double *idle_s = calloc((size_t)n + 1, sizeof(*idle_s));
		/* what each thread is inside: read once a period, for the stalled only
		 * unless the waiting relation needs every thread's */
		bool *in = calloc((size_t)n + 1, sizeof(*in)), *asked = calloc((size_t)n + 1, sizeof(*asked));
		struct es_flight *fl = calloc((size_t)n + 1, sizeof(*fl));
		if (!lost || !progressed || !stall || !idle_s || !in || !asked || !fl) {
			free(lost), free(progressed), free(stall), free(idle_s), free(in), free(asked), free(fl);
			break;
		}
		for (int i = 0; i < es_scope_leaves(s); i++)
			if (es_scope_leaf_lost(s, i)) {
				lost[es_scope_leaf(s, i)->thread] = true;
				if (!*lost_at)
					mon_server_of(s, i, lost_at, sizeof(lost_at));
			}
		double now = mon_now();
		int nstall = 0;
		for (int t = 0; t < n; t++) {
			struct thr *x = &th[t];
			const struct es_trace *b = &beat[t];
			if (lost[t])
				continue;
			if (es_trace_empty(b)) {
				/* no event yet -- unless it is stuck in its first one */
				asked[t] = true;
				in[t] = es_scope_in_flight(s, t, &fl[t]);
				nstall += stall[t] = in[t] && fl[t].since_ns >= period * 1e9;
				continue;
			}
			idle_s[t] = now * 1e9 > (double)b->end ? (now * 1e9 - (double)b->end) / 1e9 : 0;
			if (x->seen && b->end == x->last_end)
				nstall += stall[t] = true;
			else
				progressed[t] = true;
			x->seen = 1;
			x->last_end = b->end;
		}
		/* Who waits for whom: only when something stalled (or a picture is
		 * wanted), from what the collectors already wrote. */
		bool looked = false;
		if (nstall || graph) {
			for (int t = 0; t < n; t++)
				if (!lost[t] && !asked[t])
					in[t] = es_scope_in_flight(s, t, &fl[t]);
			struct wf_look lk = { beat, progressed, lost, idle_s, in, fl };
			wf_clear(wfg);
			rc = wf_from_scope(wfg, s, &lk);
			if (!rc)
				rc = wf_analyze(wfg);
			if (rc && !wf_failed) {
				fprintf(stderr, "heartbeat: who waits for whom: %s\n", ps_strerror(rc));
				wf_failed = true;
			}
			looked = !rc;
			rc = 0;
		}
		for (int t = 0; t < n; t++) {
			struct thr *x = &th[t];
			x->stalled_now = 0;
			if (lost[t]) {
				unreachable++;
			} else if (progressed[t]) {
				x->progress_periods++;
				progressing++;
				x->ended = 0;
			} else if (stall[t] && looked && wf_state_of(wfg, t) == WF_ENDED) {
				ended++; /* a rank that finished is not stalled */
				x->ended = 1;
			} else if (stall[t]) {
				x->stalled_now = 1;
				x->stalled_periods++;
				stalled++;
				describe(s, in[t], &fl[t], x->where, sizeof(x->where));
				used += (size_t)snprintf(line + used, used < sizeof(line) ? sizeof(line) - used : 0,
							 "%s%s (%s)", stalled > 1 ? ", " : "",
							 es_scope_thread(s, t), x->where);
			} else if (es_trace_empty(&beat[t])) {
				idle++;
			}
		}
		free(lost), free(progressed), free(stall), free(idle_s), free(in), free(asked), free(fl);
		any_stalled |= stalled > 0;
		char *findings = NULL;
		size_t flen = 0;
		if (looked) {
			deadlocked |= wf_deadlocks(wfg) > 0;
			FILE *mf = open_memstream(&findings, &flen);
			if (mf) {
				wf_report(wfg, mf, "  ");
				fclose(mf);
			}
			if (findings && *findings) {
				free(last_findings);
				last_findings = strdup(findings);
			}
			if (graph) {
				char title[300];
				snprintf(title, sizeof(title), "job %s, heartbeat at %.1f s", job, mon_now() - t0);
				picture_write(&pic, wfg, title);
			}
		}
		if (!quiet) {
			printf("heartbeat %.1fs: %d threads: %d progressing, %d stalled%s%s", mon_now() - t0,
			       n, progressing, stalled, stalled ? ": " : "", stalled ? line : "");
			if (ended)
				printf(", %d ended", ended);
			if (idle)
				printf(", %d without events yet", idle);
			if (unreachable)
				printf(", %d behind a tuple server that did not answer (%s)", unreachable,
				       lost_at);
			putchar('\n');
			if (findings)
				fputs(findings, stdout);
			fflush(stdout);
		}
		free(findings);
	}
	printf("heartbeat: summary after %ld periods%s\n", periods, mon_watch_end(&w));
	for (int t = 0; t < n; t++)
		printf("  %-24s %s: progressed in %d periods, stalled in %d%s%s\n", es_scope_thread(s, t),
		       th[t].ended ? "ended" : th[t].stalled_now ? "STALLED" : th[t].seen ? "ok" : "no events",
		       th[t].progress_periods, th[t].stalled_periods,
		       th[t].stalled_periods ? "; last seen " : "", th[t].stalled_periods ? th[t].where : "");
	if (last_findings) {
		printf("heartbeat: %s\n%s", deadlocked ? "deadlocks and stalls, as last seen:"
							: "stalls, as last seen:", last_findings);
		free(last_findings);
	}
	wf_destroy(wfg);
	free(th);
	free(beat);
	es_scope_destroy(s);
	return deadlocked ? 3 : any_stalled ? 1 : 0;
}
