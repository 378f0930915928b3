/* geteventmon.c - the get-event monitor: every virtual event of a job, written out, with an exact count of what was lost. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/handlers.h"
#include "monitors/monitors.h"

static const char *usage =
	"usage: geteventmon [options] JOB\n"
	"Consumes every event the job's collectors record (starting from what the\n"
	"trace elements still hold), merged by start time, and writes it out.\n"
	"  -f, --format FMT     text (default) or binary (see monitors/README.md)\n"
	"  -o, --output FILE    write there instead of standard output\n"
	"  -p, --period MS      longest time between pulls (default 100); shorter when the\n"
	"                       job writes faster than its trace elements hold that long\n"
	"  -n, --count N        stop after N pulls (default: when the job ends)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	"      --thread NAME    only that thread's events (a thread view)\n"
	"      --ops LIST       only these operations (write,take,MPI_Send,...)\n"
	"      --element N      only events on element (or peer rank) N\n"
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"At the end it says on standard error how many events it wrote and exactly\n"
	"how many were discarded before it could read them.\n";

/* Binary output: "ESEV" u32 version=1, u32 nthreads, then per thread a
 * 48-byte NUL-padded name; then records of a 36-byte portable trace tuple
 * (ns stamps, little-endian) followed by a u32 thread index. */
static void header(FILE *out, const es_scope *s)
{
	uint32_t v[2] = { 1, (uint32_t)es_scope_threads(s) };
	fwrite("ESEV", 1, 4, out);
	fwrite(v, sizeof(v), 1, out);
	for (int t = 0; t < es_scope_threads(s); t++) {
		char name[48] = { 0 };
		strncpy(name, es_scope_thread(s, t), sizeof(name) - 1);
		fwrite(name, sizeof(name), 1, out);
	}
}

struct opts {
	unsigned char want_op[65536 >> 3]; /* with any_op false: the operations kept */
	bool any_op, one_element;
	uint32_t element;
	double period, wait;  /* s */
	long count;           /* pulls; -1: until the job ends */
	int binary;
	const char *outfile, *thread, *job;
};

/* -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' }, { "output", required_argument, NULL, 'o' },
		{ "period", required_argument, NULL, 'p' }, { "count", required_argument, NULL, 'n' },
		{ "wait", required_argument, NULL, 'w' }, { "thread", required_argument, NULL, 'T' },
		{ "ops", required_argument, NULL, 'O' }, { "element", required_argument, NULL, 'E' },
		{ "help", no_argument, NULL, 'h' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
	memset(o, 0, sizeof(*o));
	o->any_op = true;
	o->period = 0.1;
	o->wait = 10;
	o->count = -1;
	int c;
	while ((c = getopt_long(argc, argv, "f:o:p:n:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "binary"))
				o->binary = 1;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "geteventmon: --format: expected text or binary, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'o': o->outfile = optarg; break;
		case 'p': o->period = mon_number("geteventmon", "--period", optarg, 1) / 1000; break;
		case 'n': o->count = (long)mon_number("geteventmon", "--count", optarg, 1); break;
		case 'w': o->wait = mon_number("geteventmon", "--wait", optarg, 0); break;
		case 'T': o->thread = optarg; break;
		case 'O': {
			o->any_op = false;
			char *save, *list = strdup(optarg);
			for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
				unsigned op = es_op_from_name(w);
				if (!op) {
					fprintf(stderr, "geteventmon: --ops: '%s' is not an operation "
						"(write, read, read_latest, take, MPI_Send...)\n", w);
					free(list);
					return 2;
				}
				o->want_op[op >> 3] |= (unsigned char)(1u << (op & 7));
			}
			free(list);
			break;
		}
		case 'E':
			o->one_element = true;
			o->element = (uint32_t)mon_number("geteventmon", "--element", optarg, 0);
			break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case MH_OPT_CODE:
			if (mh_opt("geteventmon", optarg))
				return 2;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "geteventmon: expected one JOB name\n%s", usage);
		return 2;
	}
	o->job = argv[optind];
	return -1;
}

/* Writes the n events one consume returned, those the filter keeps;
 * returns how many it left out. */
static uint64_t write_events(const struct opts *o, es_scope *s, const struct es_trace *ev, int n,
			     FILE *out)
{
	uint64_t filtered = 0;
	for (int i = 0; i < n; i++) {
		unsigned op = es_op_code(ev[i].op);
		if ((!o->any_op && !(o->want_op[op >> 3] & (1u << (op & 7)))) ||
		    (o->one_element && ev[i].element != o->element)) {
			filtered++;
			continue;
		}
		const struct es_leaf *l = es_scope_leaf(s, es_scope_consumed_leaf(s, (size_t)i));
		if (o->binary) {
			uint32_t t = (uint32_t)l->thread;
			fwrite(&ev[i], sizeof(ev[i]), 1, out);
			fwrite(&t, sizeof(t), 1, out);
		} else {
			char label[64];
			fprintf(out, "%llu %llu %llu %s %s %u %u %u %u\n",
				(unsigned long long)ev[i].start, (unsigned long long)ev[i].end,
				(unsigned long long)(ev[i].end - ev[i].start),
				es_scope_thread(s, l->thread), es_op_label(ev[i].op, label, sizeof(label)),
				ev[i].element, ev[i].size, ev[i].arg, ev[i].seq);
		}
	}
	return filtered;
}

/* What the loop keeps between pulls. */
struct pulls {
	const struct opts *o;
	es_scope *s;
	mh_set *mh;
	FILE *out;
	struct es_trace *ev;
	uint64_t written, missed, filtered;
	long pulls;
	struct mon_watch w;
	bool was_lost;
};

/* One pull, drained (when behind, pulled again at once); the next when the
 * scope's headroom says, or MON_END once the job ended and was drained. */
static double pull(void *arg)
{
	struct pulls *p = arg;
	enum { MAX = 65536 };
	bool alive = mon_watch("geteventmon", p->s, &p->w);
	es_scope_refresh(p->s); /* ranks that started late, threads' first calls */
	int n;
	do {
		uint64_t lost;
		n = es_scope_consume(p->s, p->ev, MAX, &lost);
		if (n < 0) {
			fprintf(stderr, "geteventmon: %s\n", ps_strerror(n));
			break;
		}
		p->missed += lost;
		mh_feed(p->mh, p->s, p->ev, n);
		p->filtered += write_events(p->o, p->s, p->ev, n, p->out);
		p->written += (uint64_t)n;
	} while (n == MAX && !mon_stop);
	mon_note_lost("geteventmon", p->s, &p->was_lost);
	p->pulls++;
	if (n < 0 || mon_stop || !alive || (p->o->count > 0 && p->pulls >= p->o->count))
		return MON_END; /* a job that ended was drained once more above */
	return mon_pace(p->s, p->o->period);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("geteventmon (EventSpace) " ES_VERSION);
		return 0;
	}
	static struct opts o; /* 8 KB of operation bits: not on the stack */
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	FILE *out = stdout;
	if (o.outfile && !(out = mon_fopen_private(o.outfile))) {
		perror(o.outfile);
		return 2;
	}
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, o.job);
	spec.reduce = ES_REDUCE_NONE;
	char err[600];
	if ((rc = mon_remote(&spec, err, sizeof(err)))) {
		fprintf(stderr, "geteventmon: %s\n", err);
		return mon_status(rc);
	}
	if (o.thread) {
		spec.view = PM_VIEW_THREAD;
		spec.of = o.thread;
	}
	mon_signals();
	mh_set *mh; /* loaded first: a handler that cannot be is said before any wait */
	if ((rc = mh_start("geteventmon", o.job, &mh, err, sizeof(err)))) {
		fprintf(stderr, "geteventmon: --handler %s\n", err);
		return 2;
	}
	es_scope *s;
	if ((rc = mon_attach("geteventmon", &spec, o.wait, &s, err, sizeof(err)))) {
		fprintf(stderr, "geteventmon: %s\n", err);
		mh_stop(mh, stderr);
		return mon_status(rc);
	}
	if (o.binary)
		header(out, s);
	else
		fprintf(out, "# start_ns end_ns duration_ns thread op element size arg seq\n");
	enum { MAX = 65536 };
	struct es_trace *ev = malloc(MAX * sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "geteventmon: no memory for a pull's %zu bytes\n", MAX * sizeof(*ev));
		return 1;
	}
	struct pulls p = { .o = &o, .s = s, .mh = mh, .out = out, .ev = ev,
			   .w = { .grace = o.period * 3 > 3 ? o.period * 3 : 3 } };
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, pull, &p);
	mon_loop_run(&loop);
	mh_stop(mh, stderr);
	uint64_t written = p.written, missed = p.missed, filtered = p.filtered;
	struct mon_watch w = p.w;
	fflush(out);
	if (out != stdout)
		fclose(out);
	fprintf(stderr, "geteventmon: %llu events written, %llu discarded before they could be read",
		(unsigned long long)(written - filtered), (unsigned long long)missed);
	if (filtered)
		fprintf(stderr, ", %llu left out by the filter", (unsigned long long)filtered);
	if (es_scope_before_attach(s))
		fprintf(stderr, "; %llu earlier events had rotated out before it attached",
			(unsigned long long)es_scope_before_attach(s));
	fprintf(stderr, "%s\n", mon_watch_end(&w));
	free(ev);
	es_scope_destroy(s);
	return 0;
}
