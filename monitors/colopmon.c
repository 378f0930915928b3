/* colopmon.c - the collective-operation monitor: its command line and loop over colopmon's judgement (colop.c): per collective, its latency, the last contributor and the imbalance. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/colop.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"
#include "waitstates/waitstates.h"

static const char *usage =
	"usage: colopmon [options] JOB\n"
	"Follows the collective operations of JOB on this host and reports, for\n"
	"each one, when every participant arrived and left:\n"
	" - MPI collectives recorded by libescollect.so (trace spaces JOB.rN):\n"
	"   latency (first arrival to last departure), the last rank to arrive,\n"
	"   and the imbalance (last arrival minus first);\n"
	" - PATHS trees with collectors on their edges (pathmap trees with\n"
	"   collectors: true): for each internal node, the arrival of every\n"
	"   child's contribution and the last contributor.\n"
	"Timestamps of all processes of the host share one clock (CLOCK_MONOTONIC).\n"
	"  -p, --period MS      longest time between pulls (default 200); shorter when the\n"
	"                       job writes faster than its trace elements hold that long\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	"  -q, --quiet          no line per operation, only the summary\n"
	"      --snapshot DIR   keep an archive of what every trace element holds, the\n"
	"                       first time a trigger below holds (the last seconds\n"
	"                       before it, for esprofile and esconvert)\n"
	"      --imbalance MS   trigger: a collective whose imbalance passes MS\n"
	"      --mpi-above PCT  trigger: a rank inside MPI more than PCT% of a second\n"
	"      --waits          also Scalasca's wait states, once a period: each\n"
	"                       pattern's time at each call site of each rank, and\n"
	"                       the rank that caused most of it; at the end, each\n"
	"                       pattern's total and the places that spent most\n"
	"      --places N       how many places the end lists (default 15; 0: all)\n"
	"      --wait-above PATTERN:PCT  trigger: a wait-state pattern (late_sender, wait_nxn,\n"
	"                       late_broadcast...) more than PCT% of the ranks' time in\n"
	"                       MPI over the last second\n"
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n";

/* --wait-above PATTERN:PCT; 0 or says what was expected. */
static int parse_wait(const char *arg, int *wait_pattern, double *wait_pct)
{
	char name[64], *end;
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;
	if (colon && n < sizeof(name)) {
		memcpy(name, arg, n);
		name[n] = 0;
		*wait_pattern = ws_pattern_of(name);
		*wait_pct = strtod(colon + 1, &end);
		end += *end == '%';
	}
	if (!colon || *wait_pattern < 0 || end == colon + 1 || *end || *wait_pct < 0 || *wait_pct > 100) {
		fprintf(stderr, "colopmon: --wait-above %s: expected PATTERN:PCT, PATTERN one of", arg);
		for (int p = 0; p < WS_NPATTERNS; p++)
			fprintf(stderr, " %s", ws_pattern_key(p));
		fprintf(stderr, ", PCT a share of MPI time from 0 to 100\n");
		return -1;
	}
	return 0;
}

struct opts {
	double period, wait; /* s */
	struct co_opts co;
};

/* -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "period", required_argument, NULL, 'p' }, { "wait", required_argument, NULL, 'w' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ "snapshot", required_argument, NULL, 'A' }, { "imbalance", required_argument, NULL, 'I' },
		{ "mpi-above", required_argument, NULL, 'M' }, { "waits", no_argument, NULL, 'W' },
		{ "wait-above", required_argument, NULL, 'X' },
		{ "places", required_argument, NULL, 'P' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
	*o = (struct opts){ .period = 0.2, .wait = 10,
			    .co = { .places = 15, .imbalance_ms = -1, .mpi_above = -1, .wait_pattern = -1, .wait_pct = -1 } };
	int c;
	while ((c = getopt_long(argc, argv, "p:w:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->period = mon_number("colopmon", "--period", optarg, 1) / 1000; break;
		case 'w': o->wait = mon_number("colopmon", "--wait", optarg, 0); break;
		case 'q': o->co.quiet = true; break;
		case 'A': o->co.snapshot = optarg; break;
		case 'I': o->co.imbalance_ms = mon_number("colopmon", "--imbalance", optarg, 0); break;
		case 'M': o->co.mpi_above = mon_number("colopmon", "--mpi-above", optarg, 0); break;
		case 'W': o->co.waits = true; break;
		case 'P': {
			double v = mon_number("colopmon", "--places", optarg, 0);
			o->co.places = v >= 1e9 ? 0 : (size_t)v; /* more than any job has: all */
			break;
		}
		case 'X': if (parse_wait(optarg, &o->co.wait_pattern, &o->co.wait_pct)) return 2; break;
		case MH_OPT_CODE: if (mh_opt("colopmon", optarg)) return 2; break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "colopmon: expected one JOB name\n%s", usage);
		return 2;
	}
	o->co.job = argv[optind];
	if ((o->co.imbalance_ms >= 0 || o->co.mpi_above >= 0 || o->co.wait_pattern >= 0) != (o->co.snapshot != NULL)) {
		fprintf(stderr, "colopmon: --snapshot DIR goes with a trigger (--imbalance MS, "
			"--mpi-above PCT, --wait-above PATTERN:PCT), and they with it\n");
		return 2;
	}
	return -1;
}

/* What the loop keeps between pulls. */
struct pulls {
	es_scope *s;
	mh_set *mh;
	co *c;
	struct es_trace *ev;
	double period;
	uint64_t missed;
	struct mon_watch w;
	bool was_lost;
};

/* One pull, drained, each event matched; the next when the scope's
 * headroom says, or MON_END once the job ended and was drained. */
static double pull(void *arg)
{
	struct pulls *p = arg;
	enum { MAX = 65536 };
	bool alive = mon_watch("colopmon", p->s, &p->w);
	/* ranks that started late, communicators met since */
	if (es_scope_refresh(p->s) > 0 && co_identify(p->c, p->s)) {
		fprintf(stderr, "colopmon: no memory for the ranks of %d trace elements\n", es_scope_leaves(p->s));
		return MON_END;
	}
	int n;
	do {
		uint64_t lost;
		n = es_scope_consume(p->s, p->ev, MAX, &lost);
		p->missed += lost;
		mh_feed(p->mh, p->s, p->ev, n);
		co_refreshed(p->c);
		for (int i = 0; i < n; i++)
			co_event(p->c, p->s, &p->ev[i], es_scope_consumed_leaf(p->s, (size_t)i));
	} while (n == MAX && !mon_stop);
	mon_note_lost("colopmon", p->s, &p->was_lost);
	co_period(p->c);
	if (n < 0 || mon_stop || !alive)
		return MON_END;
	fflush(stdout);
	return mon_pace(p->s, p->period);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("colopmon (EventSpace) " ES_VERSION);
		return 0;
	}
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, o.co.job);
	spec.reduce = ES_REDUCE_NONE;
	/* each thread's events in the order it wrote them: a completion comes
	 * before the wait it came in, which a merge by start time would put
	 * after the calls made since its request began (waitstates/engine.c) */
	spec.by_leaf = true;
	mon_signals();
	es_scope *s;
	char err[600];
	mh_set *mh; /* loaded first: a handler that cannot be is said before any wait */
	if ((rc = mh_start("colopmon", o.co.job, &mh, err, sizeof(err)))) {
		fprintf(stderr, "colopmon: --handler %s\n", err);
		return 2;
	}
	if ((rc = mon_remote(&spec, err, sizeof(err))) ||
	    (rc = mon_attach("colopmon", &spec, o.wait, &s, err, sizeof(err)))) {
		fprintf(stderr, "colopmon: %s\n", err);
		mh_stop(mh, stderr);
		return mon_status(rc);
	}
	co *c;
	if ((rc = co_create(&o.co, &c)) || (rc = co_identify(c, s))) {
		fprintf(stderr, "colopmon: no memory for the collectives' table, the wait states or the ranks of %d trace "
			"elements\n", es_scope_leaves(s));
		return 1;
	}
	printf("colopmon: job '%s': %d MPI ranks, %d tree edges with collectors\n", o.co.job, co_mpi_ranks(c),
	       co_tree_edges(c));
	enum { MAX = 65536 };
	struct es_trace *ev = malloc(MAX * sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "colopmon: no memory for a pull's %zu bytes\n", MAX * sizeof(*ev));
		return 1;
	}
	struct pulls p = { .s = s, .mh = mh, .c = c, .ev = ev, .period = o.period,
			   .w = { .grace = o.period * 3 > 3 ? o.period * 3 : 3 } };
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, pull, &p);
	mon_loop_run(&loop);
	mh_stop(mh, stderr);
	co_summary(c, &p.w, p.missed, es_scope_before_attach(s));
	free(ev);
	co_destroy(c);
	es_scope_destroy(s);
	return 0;
}
