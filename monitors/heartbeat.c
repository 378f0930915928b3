/* heartbeat.c - the heartbeat monitor: which threads of a running job stopped making progress, and where they wait. */
#define _GNU_SOURCE
#include <getopt.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/handlers.h"
#include "monitors/monitors.h"
#include "beat.h"

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
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"Exit status: 0 if every thread progressed in every period (or ended), 1 if\n"
	"some thread made no progress for a whole period, 3 if a deadlock was seen\n"
	"(threads waiting in a cycle, a collective mismatch, a wait for a rank that\n"
	"ended or for an element no thread writes), 2 on a usage error or if the job\n"
	"never appeared.\n";

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
	FILE *f = base_fopen_out(p->tmp, 0600); /* say now, not after the first period, that it cannot be */
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
	FILE *f = base_fopen_out(p->tmp, 0600);
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
	int rc = mon_dot(p->dot, "png", p->png);
	if (rc == -ENOENT) {
		fprintf(stderr, "heartbeat: no picture of the graph: dot (Debian graphviz) is not installed\n");
		p->no_dot = true;
	} else if (rc == -EPROTO) {
		fprintf(stderr, "heartbeat: dot could not draw %s\n", p->dot);
	} else if (rc) {
		fprintf(stderr, "heartbeat: --graph %s: %s\n", p->png, strerror(-rc));
	}
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
		{ "help", no_argument, NULL, 'h' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
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
		case MH_OPT_CODE: if (mh_opt("heartbeat", optarg)) return 2; break;
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

/* --handler's events, from their own scope */
static double pump(void *arg)
{
	mh_pump(arg);
	return mon_stop ? MON_END : 0.1;
}

/* What heartbeat knows of the job between periods. */
struct watch {
	const struct opts *o;
	es_scope *s;
	hb *hb;                 /* the judgement, period by period */
	struct mon_snapshot snap;
	struct picture pic;
	double t0;
	int any_stalled;
	char *last_findings;
	long periods;           /* judged so far */
	struct mon_watch w;
	int rc;                 /* a pull that failed */
	mh_set *mh;             /* --handler's, on a scope of their own (heartbeat reads each thread's latest only) */
};

/* The snapshot's trigger: the first deadlock named, or a stall of --stall. */
static void trigger(struct watch *h, const char *findings)
{
	char why[400] = "";
	if (!h->o->snapshot || h->snap.taken)
		return;
	if (hb_deadlocked(h->hb))
		snprintf(why, sizeof(why), "a deadlock named at %.1f s", mon_now() - h->t0);
	double secs;
	int t = !*why && h->o->stall ? hb_stalled_for(h->hb, h->o->stall, &secs) : -1;
	if (t >= 0)
		snprintf(why, sizeof(why), "%s stalled for %.1f s (--stall %g), %s", es_scope_thread(h->s, t), secs,
			 h->o->stall, hb_thread(h->hb, t)->where);
	char err[4800];
	if (*why && mon_snapshot("heartbeat", &h->snap, why, "waitfor", findings && *findings ? findings :
				 "(the wait-for graph named nothing)\n", err, sizeof(err)))
		fprintf(stderr, "heartbeat: no snapshot of job %s in %s: %s\n", h->snap.job, h->snap.dir, err);
}

/* The period's line, the roots of its stalls and deadlocks, its picture. */
static void report(struct watch *h, const struct hb_period *p)
{
	char *findings = NULL;
	size_t flen = 0;
	if (p->looked) {
		FILE *mf = open_memstream(&findings, &flen);
		if (mf) {
			wf_report(hb_graph(h->hb), mf, "  ");
			fclose(mf);
		}
		if (findings && *findings) {
			free(h->last_findings);
			h->last_findings = strdup(findings);
		}
		if (h->o->graph) {
			char title[300];
			snprintf(title, sizeof(title), "job %s, heartbeat at %.1f s", h->o->job, mon_now() - h->t0);
			picture_write(&h->pic, hb_graph(h->hb), title);
		}
	}
	if (!h->o->quiet) {
		printf("heartbeat %.1fs: %d threads: %d progressing, %d stalled%s%s", mon_now() - h->t0,
		       hb_threads(h->hb), p->progressing, p->stalled, p->stalled ? ": " : "", p->stalled ? p->line : "");
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
	bool at_deadlock = h->o->exit_on_deadlock && hb_deadlocked(h->hb) && w->now != MON_ENDED;
	printf("heartbeat: summary after %ld periods%s\n", periods,
	       at_deadlock ? " (at the first deadlock)" : mon_watch_end(w));
	for (int t = 0; t < hb_threads(h->hb); t++) {
		const struct hb_thread *x = hb_thread(h->hb, t);
		printf("  %-24s %s: progressed in %d periods, stalled in %d%s%s\n", es_scope_thread(h->s, t),
		       x->ended ? "ended" : x->stalled_now ? "STALLED" : x->seen ? "ok" : "no events",
		       x->progress_periods, x->stalled_periods,
		       x->stalled_periods ? "; last seen " : "", x->stalled_periods ? x->where : "");
	}
	if (h->last_findings)
		printf("heartbeat: %s\n%s", hb_deadlocked(h->hb) ? "deadlocks and stalls, as last seen:"
							  : "stalls, as last seen:", h->last_findings);
}

/* One period: the job's state, the judgement, the report; the next a
 * period later, or MON_END (the job ended, --count periods judged, a
 * deadlock with --exit-on-deadlock, a failed pull, or a signal). */
static double period(void *arg)
{
	struct watch *h = arg;
	const struct opts *o = h->o;
	/* A job that ended is not stalled: stop before judging it. */
	if (mon_stop || !mon_watch("heartbeat", h->s, &h->w))
		return MON_END;
	if (h->w.now == MON_UNREACHABLE) { /* nothing to judge by */
		h->periods++;
		if (!o->quiet && h->w.said)
			printf("heartbeat %.1fs: cannot reach the job's tuple servers (%s)\n", mon_now() - h->t0,
			       h->w.lost);
		fflush(stdout);
		return o->count < 0 || h->periods < o->count ? o->period : MON_END;
	}
	struct hb_period p;
	if ((h->rc = hb_step(h->hb, "heartbeat", &p))) {
		fprintf(stderr, "heartbeat: pull: %s\n", ps_strerror(h->rc));
		return MON_END;
	}
	h->periods++;
	if (p.more_threads && !o->quiet)
		printf("heartbeat: now watching %d threads\n", hb_threads(h->hb));
	h->any_stalled |= p.stalled > 0;
	report(h, &p);
	if (o->exit_on_deadlock && hb_deadlocked(h->hb))
		return MON_END;
	return o->count < 0 || h->periods < o->count ? o->period : MON_END;
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
	char err[600];
	if ((rc = mon_spec(o.pathmap, o.scope, o.job, &spec, err, sizeof(err))) ||
	    (rc = mon_remote(&spec, err, sizeof(err)))) {
		fprintf(stderr, "heartbeat: %s\n", err);
		return mon_status(rc);
	}
	spec.reduce = ES_REDUCE_LATEST; /* one timestamp per thread: its latest event */
	mon_signals();
	/* loaded first: a handler that cannot be is said before any wait */
	if ((rc = mh_start("heartbeat", o.job, &h.mh, err, sizeof(err)))) {
		fprintf(stderr, "heartbeat: --handler %s\n", err);
		return 2;
	}
	if ((rc = mon_attach("heartbeat", &spec, o.wait, &h.s, err, sizeof(err)))) {
		fprintf(stderr, "heartbeat: %s\n", err);
		mh_stop(h.mh, stderr);
		return mon_status(rc);
	}
	/* where every thread is now: the first period judges against it */
	if ((rc = hb_create(h.s, o.period, o.graph != NULL, &h.hb))) {
		fprintf(stderr, "heartbeat: no memory for the judgement of %d threads: %s\n", es_scope_threads(h.s),
			ps_strerror(rc));
		return 1;
	}
	if ((rc = mh_adopt(&h.mh, "heartbeat", o.job, h.s, err, sizeof(err)))) {
		fprintf(stderr, "heartbeat: the scope's handler %s\n", err);
		return 2;
	}
	if (mh_nspecs && (rc = mh_follow(h.mh, &spec, o.wait, err, sizeof(err)))) {
		fprintf(stderr, "heartbeat: --handler %s\n", err);
		return 2;
	}
	printf("heartbeat: watching %d threads of job '%s' (%d trace elements), every %.0f ms\n",
	       hb_threads(h.hb), o.job, es_scope_leaves(h.s), o.period * 1000);
	fflush(stdout);
	h.t0 = mon_now();
	h.w = (struct mon_watch){ .grace = o.period * 3 > 3 ? o.period * 3 : 3 };
	struct mon_loop loop = { 0 };
	if (o.count)
		mon_loop_add(&loop, o.period, period, &h);
	if (h.mh) /* ten times a second, whatever the period: a handler's queue holds 65,536 events */
		mon_loop_add(&loop, 0.1, pump, h.mh);
	mon_loop_run(&loop);
	mh_stop(h.mh, stderr);
	summary(&h, h.periods, &h.w);
	free(h.last_findings);
	bool deadlocked = hb_deadlocked(h.hb);
	hb_destroy(h.hb);
	es_scope_destroy(h.s);
	return deadlocked ? 3 : h.any_stalled ? 1 : 0;
}
