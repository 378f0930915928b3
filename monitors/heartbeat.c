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
	"  -x, --exit-on-deadlock  stop at the first deadlock named (status 3): a job\n"
	"                       script can then end the hung job, not wait for its limit\n"
	"  -g, --graph FILE     write the wait-for graph as Graphviz DOT each period, and\n"
	"                       FILE's .png beside it when dot (Debian graphviz) is there\n"
	"      --snapshot DIR   the first time a deadlock is named (or, with --stall, a\n"
	"                       thread is stalled that long), keep an archive of what\n"
	"                       every trace element holds then, the calls each thread is\n"
	"                       inside and the wait-for graph (DIR/waitfor): the last\n"
	"                       seconds before the hang, for esprofile and esconvert\n"
	"      --stall S        with --snapshot: also when a thread has made no progress\n"
	"                       for S seconds\n"
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
 * peer it waits on, as the graph said it when there is one (what it
 * waits for, with world ranks, tags, roots and communicators). */
static void describe(const es_scope *s, const wf_graph *g, int t, bool inside, const struct es_flight *fp,
		     char *buf, size_t len)
{
	if (!inside) {
		snprintf(buf, len, "between operations");
		return;
	}
	const struct es_flight f = *fp;
	const char *said = g ? wf_what(g, t) : NULL;
	if (said && *said) {
		snprintf(buf, len, "%s for %.2f s", said, f.since_ns / 1e9);
		return;
	}
	const struct es_meta *m = &es_scope_leaf(s, f.leaf)->meta;
	const struct es_op_info *i = es_op_info(f.op);
	const char *in = i && i->kind == ES_KIND_POLL ? "polling" : "inside"; /* a streak of them */
	if (f.op >= ES_OP_MPI_INIT)
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
	FILE *f = ps_fopen_out(p->tmp, 0600); /* say now, not after the first period, that it cannot be */
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
	FILE *f = ps_fopen_out(p->tmp, 0600);
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
	FILE *png = ps_fopen_out(p->tmp, 0600);
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

struct opts {
	double period, wait; /* s */
	long count;          /* periods; -1: until the job ends */
	int quiet, exit_on_deadlock;
	const char *pathmap, *scope, *graph, *job, *snapshot;
	double stall;        /* s; 0: no trigger on stalls */
};

/* -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "period", required_argument, NULL, 'p' }, { "count", required_argument, NULL, 'n' },
		{ "wait", required_argument, NULL, 'w' }, { "pathmap", required_argument, NULL, 'P' },
		{ "scope", required_argument, NULL, 'S' }, { "quiet", no_argument, NULL, 'q' },
		{ "graph", required_argument, NULL, 'g' }, { "exit-on-deadlock", no_argument, NULL, 'x' },
		{ "snapshot", required_argument, NULL, 'A' }, { "stall", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' }, MON_REMOTE_OPTS, { 0 } };
	*o = (struct opts){ .period = 1.0, .wait = 10, .count = -1 };
	int c;
	while ((c = getopt_long(argc, argv, "p:n:w:qg:xh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->period = mon_number("heartbeat", "--period", optarg, 1) / 1000; break;
		case 'n': o->count = (long)mon_number("heartbeat", "--count", optarg, 1); break;
		case 'w': o->wait = mon_number("heartbeat", "--wait", optarg, 0); break;
		case 'P': o->pathmap = optarg; break;
		case 'S': o->scope = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'x': o->exit_on_deadlock = 1; break;
		case 'g': o->graph = optarg; break;
		case 'A': o->snapshot = optarg; break;
		case 'T': o->stall = mon_number("heartbeat", "--stall", optarg, 0.001); break;
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
	o->job = argv[optind];
	if (o->stall && !o->snapshot) {
		fprintf(stderr, "heartbeat: --stall S goes with --snapshot DIR (what to do then)\n");
		return 2;
	}
	return -1;
}

/* What heartbeat knows of the job between periods. */
struct watch {
	const struct opts *o;
	es_scope *s;
	es_mpi *mpi;            /* the MPI side: read once, then what is new each period */
	struct mon_snapshot snap;
	int n;                  /* threads */
	struct thr *th;         /* per thread */
	struct es_trace *beat;  /* per thread: its latest event */
	wf_graph *wfg;
	struct picture pic;
	double t0;
	int any_stalled;
	bool deadlocked, wf_failed;
	char *last_findings;
};

/* Threads may appear (a rank starting late, a thread's first call): takes
 * them in, keeping what is known of the others by name.  0, or -1 for no
 * memory. */
static int take_new_threads(struct watch *h)
{
	int oldn = h->n, rc = 0;
	char **names = calloc((size_t)oldn + 1, sizeof(*names));
	if (!names)
		return -1;
	for (int t = 0; t < oldn; t++)
		names[t] = strdup(es_scope_thread(h->s, t));
	if (es_scope_refresh(h->s) > 0) {
		int n = es_scope_threads(h->s);
		es_mpi_close(h->mpi);
		struct ps_remote_attr ra = { .secret_file = mon_secret_file };
		if (es_mpi_open(h->s, &ra, &h->mpi))
			h->mpi = NULL; /* waits judged without what the ranks say: none named */
		struct thr *nth = calloc((size_t)n, sizeof(*nth));
		struct es_trace *nbeat = calloc((size_t)es_scope_width(h->s), sizeof(*nbeat));
		if (nth && nbeat) {
			for (int t = 0; t < n; t++)
				for (int o = 0; o < oldn; o++)
					if (names[o] && !strcmp(names[o], es_scope_thread(h->s, t)))
						nth[t] = h->th[o];
			free(h->th);
			free(h->beat);
			h->th = nth;
			h->beat = nbeat;
			h->n = n;
			if (!h->o->quiet)
				printf("heartbeat: now watching %d threads\n", n);
		} else {
			free(nth);
			free(nbeat);
			rc = -1;
		}
	}
	for (int t = 0; t < oldn; t++)
		free(names[t]);
	free(names);
	return rc;
}

/* One period's view of every thread. */
struct period {
	bool *lost;             /* behind a server that did not answer: not judged */
	bool *progressed, *stall;
	double *idle_s;
	/* what each thread is inside: read once a period, for the stalled only
	 * unless the waiting relation needs every thread's */
	bool *in, *asked;
	struct es_flight *fl;
	char lost_at[128];
	int nstall;
	bool looked;            /* who waits for whom was worked out */
	/* the counts, and the stalled threads in words */
	int progressing, stalled, idle, unreachable, ended;
	char line[4096];
};

static void period_free(struct period *p)
{
	free(p->lost), free(p->progressed), free(p->stall), free(p->idle_s);
	free(p->in), free(p->asked), free(p->fl);
}

static int period_alloc(struct period *p, int n)
{
	size_t k = (size_t)n + 1;
	*p = (struct period){ .lost = calloc(k, sizeof(bool)), .progressed = calloc(k, sizeof(bool)),
			      .stall = calloc(k, sizeof(bool)), .idle_s = calloc(k, sizeof(double)),
			      .in = calloc(k, sizeof(bool)), .asked = calloc(k, sizeof(bool)),
			      .fl = calloc(k, sizeof(struct es_flight)) };
	if (p->lost && p->progressed && p->stall && p->idle_s && p->in && p->asked && p->fl)
		return 0;
	period_free(p);
	return -1;
}

/* Which threads progressed since the last period and which did not. */
static void judge(struct watch *h, struct period *p)
{
	for (int i = 0; i < es_scope_leaves(h->s); i++)
		if (es_scope_leaf_lost(h->s, i)) {
			p->lost[es_scope_leaf(h->s, i)->thread] = true;
			if (!*p->lost_at)
				mon_server_of(h->s, i, p->lost_at, sizeof(p->lost_at));
		}
	double now = mon_now();
	for (int t = 0; t < h->n; t++) {
		struct thr *x = &h->th[t];
		const struct es_trace *b = &h->beat[t];
		if (p->lost[t])
			continue;
		if (es_trace_empty(b)) {
			/* no event yet -- unless it is stuck in its first one */
			p->asked[t] = true;
			p->in[t] = es_scope_in_flight(h->s, t, &p->fl[t]);
			p->nstall += p->stall[t] = p->in[t] && p->fl[t].since_ns >= h->o->period * 1e9;
			continue;
		}
		p->idle_s[t] = now * 1e9 > (double)b->end ? (now * 1e9 - (double)b->end) / 1e9 : 0;
		if (x->seen && b->end == x->last_end)
			p->nstall += p->stall[t] = true;
		else
			p->progressed[t] = true;
		x->seen = 1;
		x->last_end = b->end;
	}
}

/* A deadlock is named only if every thread in it is still inside the very
 * call it was read in: the notes, the boards and the counts are read one
 * after the other, and a thread that moved meanwhile would make a knot of
 * waits that never stood at one moment. */
static void confirm(struct watch *h, const struct period *p)
{
	int *t = malloc(sizeof(int) * (size_t)(h->n + 1));
	if (!t)
		return;
	for (int i = wf_deadlocks(h->wfg); i-- > 0;) {
		int n = wf_deadlock_threads(h->wfg, i, t, h->n);
		for (int k = 0; k < n; k++) {
			struct es_flight now;
			int x = t[k];
			bool inside = x < h->n && p->in[x];
			if (inside && (!es_scope_in_flight(h->s, x, &now) || now.start != p->fl[x].start)) {
				wf_drop_deadlock(h->wfg, i);
				break;
			}
		}
	}
	free(t);
}

/* Who waits for whom: only when something stalled (or a picture is
 * wanted), from what the collectors already wrote. */
static void look(struct watch *h, struct period *p)
{
	if (!p->nstall && !h->o->graph)
		return;
	for (int t = 0; t < h->n; t++)
		if (!p->lost[t] && !p->asked[t])
			p->in[t] = es_scope_in_flight(h->s, t, &p->fl[t]);
	if (h->mpi)
		es_mpi_refresh(h->mpi);
	struct wf_look lk = { h->beat, p->progressed, p->lost, p->idle_s, p->in, p->fl, h->mpi };
	wf_clear(h->wfg);
	int rc = wf_from_scope(h->wfg, h->s, &lk);
	if (!rc)
		rc = wf_analyze(h->wfg);
	if (!rc)
		confirm(h, p);
	if (rc && !h->wf_failed) {
		fprintf(stderr, "heartbeat: who waits for whom: %s\n", ps_strerror(rc));
		h->wf_failed = true;
	}
	p->looked = !rc;
}

/* Each thread's verdict for the period, counted and kept. */
static void tally(struct watch *h, struct period *p)
{
	size_t used = 0;
	for (int t = 0; t < h->n; t++) {
		struct thr *x = &h->th[t];
		x->stalled_now = 0;
		if (p->lost[t]) {
			p->unreachable++;
		} else if (p->progressed[t]) {
			x->progress_periods++;
			p->progressing++;
			x->ended = 0;
		} else if (p->stall[t] && p->looked && wf_state_of(h->wfg, t) == WF_ENDED) {
			p->ended++; /* a rank that finished is not stalled */
			x->ended = 1;
		} else if (p->stall[t]) {
			x->stalled_now = 1;
			x->stalled_periods++;
			p->stalled++;
			describe(h->s, p->looked ? h->wfg : NULL, t, p->in[t], &p->fl[t], x->where, sizeof(x->where));
			used += (size_t)snprintf(p->line + used, used < sizeof(p->line) ? sizeof(p->line) - used : 0,
						 "%s%s (%s)", p->stalled > 1 ? ", " : "",
						 es_scope_thread(h->s, t), x->where);
		} else if (es_trace_empty(&h->beat[t])) {
			p->idle++;
		}
	}
	h->any_stalled |= p->stalled > 0;
}

/* The snapshot's trigger: the first deadlock named, or a stall of --stall. */
static void trigger(struct watch *h, const char *findings)
{
	char why[400] = "";
	if (!h->o->snapshot || h->snap.taken)
		return;
	if (h->deadlocked)
		snprintf(why, sizeof(why), "a deadlock named at %.1f s", mon_now() - h->t0);
	for (int t = 0; t < h->n && !*why && h->o->stall; t++)
		if (h->th[t].stalled_now && h->th[t].stalled_periods * h->o->period >= h->o->stall)
			snprintf(why, sizeof(why), "%s stalled for %.1f s (--stall %g), %s",
				 es_scope_thread(h->s, t), h->th[t].stalled_periods * h->o->period, h->o->stall,
				 h->th[t].where);
	if (*why)
		mon_snapshot("heartbeat", &h->snap, why, "waitfor", findings && *findings ? findings :
			     "(the wait-for graph named nothing)\n");
}

/* The period's line, the roots of its stalls and deadlocks, its picture. */
static void report(struct watch *h, const struct period *p)
{
	char *findings = NULL;
	size_t flen = 0;
	if (p->looked) {
		h->deadlocked |= wf_deadlocks(h->wfg) > 0;
		FILE *mf = open_memstream(&findings, &flen);
		if (mf) {
			wf_report(h->wfg, mf, "  ");
			fclose(mf);
		}
		if (findings && *findings) {
			free(h->last_findings);
			h->last_findings = strdup(findings);
		}
		if (h->o->graph) {
			char title[300];
			snprintf(title, sizeof(title), "job %s, heartbeat at %.1f s", h->o->job, mon_now() - h->t0);
			picture_write(&h->pic, h->wfg, title);
		}
	}
	if (!h->o->quiet) {
		printf("heartbeat %.1fs: %d threads: %d progressing, %d stalled%s%s", mon_now() - h->t0,
		       h->n, p->progressing, p->stalled, p->stalled ? ": " : "", p->stalled ? p->line : "");
		if (p->ended)
			printf(", %d ended", p->ended);
		if (p->idle)
			printf(", %d without events yet", p->idle);
		if (p->unreachable)
			printf(", %d behind a tuple server that did not answer (%s)", p->unreachable,
			       p->lost_at);
		putchar('\n');
		if (findings)
			fputs(findings, stdout);
		fflush(stdout);
	}
	trigger(h, findings);
	free(findings);
}

static void summary(struct watch *h, long periods, const struct mon_watch *w)
{
	bool at_deadlock = h->o->exit_on_deadlock && h->deadlocked && w->now != MON_ENDED;
	printf("heartbeat: summary after %ld periods%s\n", periods,
	       at_deadlock ? " (at the first deadlock)" : mon_watch_end(w));
	for (int t = 0; t < h->n; t++) {
		const struct thr *x = &h->th[t];
		printf("  %-24s %s: progressed in %d periods, stalled in %d%s%s\n", es_scope_thread(h->s, t),
		       x->ended ? "ended" : x->stalled_now ? "STALLED" : x->seen ? "ok" : "no events",
		       x->progress_periods, x->stalled_periods,
		       x->stalled_periods ? "; last seen " : "", x->stalled_periods ? x->where : "");
	}
	if (h->last_findings)
		printf("heartbeat: %s\n%s", h->deadlocked ? "deadlocks and stalls, as last seen:"
							  : "stalls, as last seen:", h->last_findings);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("heartbeat (EventSpace) " ES_VERSION);
		return 0;
	}
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct watch h = { .o = &o, .snap = { .dir = o.snapshot, .job = o.job } };
	if (o.graph && picture_open(&h.pic, o.graph))
		return 2;
	struct es_scope_spec spec;
	if (mon_spec("heartbeat", o.pathmap, o.scope, o.job, &spec))
		return 2;
	mon_remote("heartbeat", &spec);
	spec.reduce = ES_REDUCE_LATEST; /* one timestamp per thread: its latest event */
	mon_signals();
	if ((rc = mon_attach("heartbeat", &spec, o.wait, &h.s)))
		return rc;
	h.n = es_scope_threads(h.s);
	struct ps_remote_attr ra = { .secret_file = mon_secret_file };
	if (es_mpi_open(h.s, &ra, &h.mpi))
		h.mpi = NULL;
	h.th = calloc((size_t)h.n, sizeof(*h.th));
	h.beat = calloc((size_t)es_scope_width(h.s), sizeof(*h.beat));
	if (!h.th || !h.beat || wf_create(&h.wfg))
		return 2;
	printf("heartbeat: watching %d threads of job '%s' (%d trace elements), every %.0f ms\n",
	       h.n, o.job, es_scope_leaves(h.s), o.period * 1000);
	fflush(stdout);
	/* Where every thread is now: the first period judges against this, so
	 * a thread that stopped before we came is seen at once. */
	if (!es_scope_pull(h.s, h.beat))
		for (int t = 0; t < h.n; t++)
			if (!es_trace_empty(&h.beat[t])) {
				h.th[t].seen = 1;
				h.th[t].last_end = h.beat[t].end;
			}
	h.t0 = mon_now();
	long periods = 0;
	struct mon_watch w = { .grace = o.period * 3 > 3 ? o.period * 3 : 3 };
	while (!mon_stop && (o.count < 0 || periods < o.count)) {
		mon_sleep(o.period);
		/* A job that ended is not stalled: stop before judging it. */
		if (mon_stop || !mon_watch("heartbeat", h.s, &w))
			break;
		if (w.now == MON_UNREACHABLE) { /* nothing to judge by */
			periods++;
			if (!o.quiet)
				printf("heartbeat %.1fs: cannot reach the job's tuple servers (%s)\n",
				       mon_now() - h.t0, w.lost);
			fflush(stdout);
			continue;
		}
		if (take_new_threads(&h))
			break;
		if ((rc = es_scope_pull(h.s, h.beat))) {
			fprintf(stderr, "heartbeat: pull: %s\n", ps_strerror(rc));
			break;
		}
		periods++;
		struct period p;
		if (period_alloc(&p, h.n))
			break;
		judge(&h, &p);
		look(&h, &p);
		tally(&h, &p);
		report(&h, &p);
		period_free(&p);
		if (o.exit_on_deadlock && h.deadlocked)
			break;
	}
	summary(&h, periods, &w);
	free(h.last_findings);
	wf_destroy(h.wfg);
	es_mpi_close(h.mpi);
	free(h.th);
	free(h.beat);
	es_scope_destroy(h.s);
	return h.deadlocked ? 3 : h.any_stalled ? 1 : 0;
}
