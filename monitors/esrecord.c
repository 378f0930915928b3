/* esrecord.c - the archive consumer: drains every trace element of a running job into an archive, with an exact count of what was lost; keeps a dead or hung job's remains; finishes an archive its recorder left. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"

static const char *usage =
	"usage: esrecord [options] -o DIR JOB\n"
	"       esrecord --remains [options] -o DIR JOB\n"
	"       esrecord --repair DIR\n"
	"Records every event of a running job into the archive DIR, from what its\n"
	"trace elements still hold when it attaches until the job ends (or Ctrl-C),\n"
	"pulling as often as the job's rate needs.  Then: esconvert DIR (OTF2,\n"
	"trace-event JSON), esprofile DIR.\n"
	"  -o, --output DIR     the archive (made at once, before the job is waited\n"
	"                       for; must not hold one already)\n"
	"  -p, --period MS      longest time between pulls (default 500, the most it\n"
	"                       uses: it pulls sooner when the job writes faster than\n"
	"                       its trace elements hold that long)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	"      --remains        the black box: one pull of what a dead, hung or running\n"
	"                       job's elements still hold, and the calls each thread was\n"
	"                       inside (marked unfinished), with the exact count of what\n"
	"                       they no longer hold; then the archive is finished\n"
	"      --repair DIR     finish an archive whose recorder was killed or whose\n"
	"                       disk filled: its events up to the last checkpoint and\n"
	"                       the whole ones written after it\n"
	MH_USAGE
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"The archive is on disk from the start and as it goes: every quarter second a\n"
	"checkpoint makes what was recorded so far readable, so a recorder killed\n"
	"(even with SIGKILL) at any moment or stopped by a full disk leaves an archive\n"
	"the readers open as it stands (they say first that it is incomplete, holds\n"
	"nothing yet, or what it lacks).  At the end it says how many events it wrote\n"
	"and exactly how many were discarded before it could read them, and which\n"
	"ranks died (INFO: died: RANK PID LAST_NS SEEN_NS).\n";

static int repair(const char *dir)
{
	char err[4400];
	uint64_t kept, after;
	int rc = ar_repair(dir, &kept, &after, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "esrecord: %s\n", err);
		return rc == -EALREADY ? 0 : 1;
	}
	ar_archive *a; /* what it still lacks (a communicator no checkpoint described), said first */
	if (!ar_open(dir, &a, err, sizeof(err))) {
		ar_print_state(a, "esrecord", dir, stderr);
		ar_close(a);
	}
	fflush(stderr);
	printf("esrecord: %s repaired: %llu events (%llu of them written after its last "
	       "checkpoint)\n", dir, (unsigned long long)kept, (unsigned long long)after);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "period", required_argument, NULL, 'p' },
		{ "wait", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "remains", no_argument, NULL, 'M' }, { "repair", required_argument, NULL, 'F' },
		{ "version", no_argument, NULL, 'V' }, MH_OPT, MON_REMOTE_OPTS, { 0 } };
	struct mon_record_opts o = { .period = 0.5, .wait = 10 };
	const char *fix = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "o:p:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.dir = optarg; break;
		case 'p': o.period = mon_number("esrecord", "--period", optarg, 1) / 1000; break;
		case 'w': o.wait = mon_number("esrecord", "--wait", optarg, 0); break;
		case 'M': o.remains = true; break;
		case 'F': fix = optarg; break;
		case MH_OPT_CODE: if (mh_opt("esrecord", optarg)) return 2; break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esrecord (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (fix) {
		if (optind != argc || o.dir || o.remains) {
			fprintf(stderr, "esrecord: --repair takes one DIR and nothing else\n%s", usage);
			return 2;
		}
		return repair(fix);
	}
	if (optind != argc - 1 || !o.dir) {
		fprintf(stderr, "esrecord: expected -o DIR and one JOB name\n%s", usage);
		return 2;
	}
	mon_signals();
	char err[4800];
	int rc = mh_start("esrecord", argv[optind], &o.handlers, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "esrecord: --handler %s\n", err);
		return 2;
	}
	rc = mon_record("esrecord", argv[optind], &o, err, sizeof(err));
	mh_stop(o.handlers, stderr);
	if (rc)
		fprintf(stderr, "esrecord: %s\n", err);
	return mon_status(rc);
}
