/* esview.c - the live view: watches a job and serves its page and data to browsers over HTTP (GNU libmicrohttpd). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <getopt.h>
#include <microhttpd.h>
#include <pthread.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"
#include "view/door.h"
#include "view/serve.h"
#include "view/watch.h"

static const char *usage =
	"usage: esview [options] JOB\n"
	"Watches JOB (this host's trace spaces, or --servers) and serves it to browsers:\n"
	"its ranks as lanes over the last seconds (calls coloured by class, messages\n"
	"as lines), who waits for whom, the balance of its ranks, and triggers that\n"
	"freeze the view and keep an archive.  It prints the URL to open.\n"
	"  -p, --port P         the HTTP port (default 0: any free one)\n"
	"      --addr A         listen on A (default 127.0.0.1); any other address\n"
	"                       needs --view-secret\n"
	"      --view-secret F  a key in file F (as the tuple servers' secrets: only\n"
	"                       you can read it, 16 to 256 bytes): the page is opened\n"
	"                       with ?key=KEY and whoever gives it is served.  Without\n"
	"                       it, esview serves only you (and root), on loopback\n"
	"      --host NAME      a further name browsers may reach esview by (a tunnel's\n"
	"                       or a proxy's): a request naming another is refused\n"
	"  -r, --rate HZ        pulls a second (default 10): the perturbation trade-off;\n"
	"                       the page's slider sets it too\n"
	"      --period MS      heartbeat's judgement: a thread with no event for MS is\n"
	"                       stalled, and who waits for whom is worked out (default 1000)\n"
	"      --window S       seconds of events kept (default 10, at most 3600), up to\n"
	"                       50,000 calls a second of it (2.4 MB): a busier job's page\n"
	"                       holds fewer seconds\n"
	"      --trigger LIST   armed at start: deadlock, stall=S, imbalance=MS\n"
	"                       (a collective's last rank in MS after its first),\n"
	"                       wait=PATTERN:PCT (a wait-state pattern, late_sender...,\n"
	"                       above PCT% of the ranks' MPI time in the last second)\n"
	"      --snapshot DIR   where triggers keep their archives: DIR/1, DIR/2..., each\n"
	"                       number taken by whoever makes it first, so that viewers\n"
	"                       sharing DIR never write over each other (default\n"
	"                       esview-JOB in the current directory)\n"
	"      --snapshots N    archives kept at most (default 10), and\n"
	"      --snapshot-bytes B  bytes at most in all (default 1G; K, M, G): the first\n"
	"                       are kept; past either, a trigger freezes the view and\n"
	"                       keeps none (one is begun only if it fits beside the\n"
	"                       largest so far)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"Browsers read what esview pulled: ten of them cost the job what one does.\n";


/* A size: a number with K, M or G after it; exits 2 saying what was expected. */
static double bytes_of(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	double unit = !*end ? 1 : !strcmp(end, "K") ? 1024 : !strcmp(end, "M") ? 1048576 : !strcmp(end, "G") ? 1073741824 : 0;
	if (errno || end == arg || !unit || !(v >= 0)) {
		fprintf(stderr, "esview: %s: expected a number of bytes, with K, M or G after it if you like, not '%s'\n",
			opt, arg);
		exit(2);
	}
	return v * unit;
}

/* wait=PATTERN:PCT(%): true when it is one */
static bool wait_trigger(const char *w, struct lv_arm *arm)
{
	char name[64], *end;
	const char *colon = strchr(w, ':');
	if (!colon || (size_t)(colon - w) >= sizeof(name))
		return false;
	memcpy(name, w, (size_t)(colon - w));
	name[colon - w] = 0;
	double pct = strtod(colon + 1, &end);
	end += *end == '%';
	if (ws_pattern_of(name) < 0 || end == colon + 1 || *end || pct < 0 || pct > 100)
		return false;
	arm->wait_pattern = ws_pattern_of(name) + 1;
	arm->wait_pct = pct;
	return true;
}

/* --trigger deadlock,stall=S,imbalance=MS,wait=PATTERN:PCT; 0 or says what was expected. */
static int parse_trigger(const char *list, struct lv_arm *arm)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '='), *end = NULL;
		double x = eq ? strtod(eq + 1, &end) : 0;
		bool number = eq && end != eq + 1 && !*end && x > 0;
		if (!strcmp(w, "deadlock"))
			arm->deadlock = true;
		else if (number && !strncmp(w, "stall=", 6))
			arm->stall_s = x;
		else if (number && !strncmp(w, "imbalance=", 10))
			arm->imbalance_ms = x;
		else if (!strncmp(w, "wait=", 5) && wait_trigger(w + 5, arm))
			;
		else {
			fprintf(stderr, "esview: --trigger %s: at '%s': expected deadlock, stall=SECONDS, "
					"imbalance=MS (numbers above 0) or wait=PATTERN:PCT (a wait-state pattern, "
					"late_sender...; a share of MPI time from 0 to 100)\n", list, w);
			return 2;
		}
	}
	return 0;
}

static int parse(int argc, char **argv, struct vw_opts *o)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' }, { "addr", required_argument, NULL, 'A' },
		{ "view-secret", required_argument, NULL, 'S' }, { "rate", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'W' }, { "wait", required_argument, NULL, 'w' },
		{ "period", required_argument, NULL, 'P' }, { "trigger", required_argument, NULL, 'T' },
		{ "snapshot", required_argument, NULL, 'N' }, { "host", required_argument, NULL, 'H' },
		{ "snapshots", required_argument, NULL, 'n' }, { "snapshot-bytes", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
	*o = (struct vw_opts){ .addr = "127.0.0.1", .rate = 10, .window = 10, .wait = 10, .period = 1, .snapshots = 10,
			    .snapshot_bytes = 1073741824.0 };
	int c;
	while ((c = getopt_long(argc, argv, "p:r:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->port = (int)mon_number("esview", "--port", optarg, 0); break;
		case 'A': o->addr = optarg; break;
		case 'S': o->secret_file = optarg; break;
		case 'r': o->rate = mon_number("esview", "--rate", optarg, 0.1); break;
		case 'W': o->window = mon_number("esview", "--window", optarg, 1); break;
		case 'w': o->wait = mon_number("esview", "--wait", optarg, 0); break;
		case 'P': o->period = mon_number("esview", "--period", optarg, 10) / 1000; break;
		case 'T': if (parse_trigger(optarg, &o->arm)) return 2; break;
		case 'N': o->snapshot = optarg; break;
		case 'n': o->snapshots = (int)mon_number("esview", "--snapshots", optarg, 0); break;
		case 'B': o->snapshot_bytes = bytes_of("--snapshot-bytes", optarg); break;
		case 'H':
			if (o->nhosts == MAX_HOSTS || !*optarg || strpbrk(optarg, ":/ ")) {
				fprintf(stderr, "esview: --host %s: expected a host name or address, at most %d of them\n",
					optarg, MAX_HOSTS);
				return 2;
			}
			o->hosts[o->nhosts++] = optarg;
			break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case MH_OPT_CODE: if (mh_opt("esview", optarg)) return 2; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esview (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "esview: expected one JOB name\n%s", usage);
		return 2;
	}
	o->job = argv[optind];
	if (o->port > 65535) {
		fprintf(stderr, "esview: --port %d: expected a port number, 0 to 65535\n", o->port);
		return 2;
	}
	if (o->window > 3600) {
		fprintf(stderr, "esview: --window %g: expected at most 3600 seconds (50,000 calls a second of it, "
				"2.4 MB, are kept)\n", o->window);
		return 2;
	}
	return -1;
}

/* The door (door.c) with the key, if any, and the page it serves. */
static vd *open_door(const struct vw_opts *o, struct lv_served *sv)
{
	char key[PS_SECRET_MAX + 1], why[400];
	size_t klen = 0;
	if (o->secret_file && ps_secret_read(o->secret_file, key, &klen, why, sizeof(why))) {
		fprintf(stderr, "esview: --view-secret %s: %s\n", o->secret_file, why);
		return NULL;
	}
	/* the page is whole before the door opens: the token made here */
	unsigned char r[32];
	char token[65];
	int rc = getrandom(r, sizeof(r), 0) == (ssize_t)sizeof(r) ? 0 : -EIO;
	for (int i = 0; i < 32; i++)
		snprintf(token + 2 * i, 3, "%02x", r[i]);
	if (rc || (rc = lv_serve_page(sv, token))) {
		fprintf(stderr, "esview: the page: %s\n", ps_strerror(rc));
		return NULL;
	}
	struct vd_attr a = { .addr = o->addr, .port = o->port, .secret = o->secret_file ? key : NULL,
			     .secret_len = klen, .hosts = o->hosts, .nhosts = o->nhosts, .token = token,
			     .serve = lv_serve, .cls = sv };
	vd *d = NULL;
	rc = vd_open(&a, &d, why, sizeof(why));
	memset(key, 0, sizeof(key));
	if (rc) {
		fprintf(stderr, "esview: %s\n", why);
		return NULL;
	}
	return d;
}

/* After the job: nothing to pull, the page served as it stands. */
static double idle(void *arg)
{
	(void)arg;
	return mon_stop ? MON_END : 3600;
}

int main(int argc, char **argv)
{
	struct vw_opts o;
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char snapdir[4096];
	if (!o.snapshot) {
		snprintf(snapdir, sizeof(snapdir), "esview-%s", o.job);
		o.snapshot = snapdir;
	}
	struct lv_served sv = { .lock = PTHREAD_MUTEX_INITIALIZER, .objs.lock = PTHREAD_MUTEX_INITIALIZER, .job = o.job, .rate = o.rate, .arm = o.arm,
			     .window_ns = (uint64_t)(o.window * 1e9) };
	struct vw_watcher w = { .o = &o, .sv = &sv };
	const char *tmp = getenv("TMPDIR");
	snprintf(w.dir, sizeof(w.dir), "%s/esview.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(w.dir)) {
		fprintf(stderr, "esview: %s: %s\n", w.dir, strerror(errno));
		return 1;
	}
	size_t calls = (size_t)(o.window * 50000); /* 50,000 calls a second, 2.4 MB a second */
	if (lv_create(calls, &sv.v)) {
		fprintf(stderr, "esview: --window %g: no memory for %zu calls (%.1f GB); a shorter window needs less\n",
			o.window, calls, o.window * 2.4e6 / 1e9);
		rmdir(w.dir);
		return 1;
	}
	vd *d = open_door(&o, &sv);
	if (!d) {
		rmdir(w.dir);
		lv_destroy(sv.v);
		free(sv.page);
		return 2;
	}
	mon_signals();
	printf("esview: job %s at http://%s:%d/%s\n", o.job, o.addr, vd_port(d), o.secret_file ? "?key=KEY" : "");
	fflush(stdout);
	char herr[600];
	if ((rc = mh_start("esview", o.job, &w.mh, herr, sizeof(herr)))) {
		fprintf(stderr, "esview: --handler %s\n", herr);
		rc = 2;
	} else if (!(rc = vw_attach(&o, &w)) && vw_watch(&w)) {
		fprintf(stderr, "esview: no memory for a pull's %zu bytes\n", (size_t)PULL_MAX * sizeof(struct es_trace));
		rc = 1;
	} else if (!rc) {
		printf("esview: the job ended; the page shows its last %.0f s until esview is stopped\n", o.window);
		fflush(stdout);
		struct mon_loop loop = { 0 }; /* the door's threads serve; this one waits for a signal */
		mon_loop_add(&loop, 3600, idle, NULL);
		mon_loop_run(&loop);
	}
	vd_close(d);
	mh_stop(w.mh, stderr);
	vw_detach(&w);
	lv_served_fini(&sv);
	lv_destroy(sv.v);
	return rc;
}
