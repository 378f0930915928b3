/* esrecord.c - the archive consumer: drains every trace element of a running job into an archive, with an exact count of what was lost. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/record.h"
#include "monitors/common.h"

static const char *usage =
	"usage: esrecord [options] -o DIR JOB\n"
	"Records every event of a running job into the archive DIR, from what its\n"
	"trace elements still hold when it attaches until the job ends (or Ctrl-C),\n"
	"pulling as often as the job's rate needs.  Then: esconvert DIR (OTF2,\n"
	"trace-event JSON).\n"
	"  -o, --output DIR     the archive (made; must not hold one already)\n"
	"  -p, --period MS      longest time between pulls (default 1000: a recorder need\n"
	"                       not pull often; it pulls sooner when the job writes faster\n"
	"                       than its trace elements hold that long)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"At the end it says how many events it wrote and exactly how many were\n"
	"discarded before it could read them.  An archive it could not finish has\n"
	"no INFO file, and the converters refuse it.\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "period", required_argument, NULL, 'p' },
		{ "wait", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, MON_REMOTE_OPTS, { 0 } };
	double period = 1, wait = 10;
	const char *dir = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "o:p:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'p': period = mon_number("esrecord", "--period", optarg, 1) / 1000; break;
		case 'w': wait = mon_number("esrecord", "--wait", optarg, 0); break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esrecord (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1 || !dir) {
		fprintf(stderr, "esrecord: expected -o DIR and one JOB name\n%s", usage);
		return 2;
	}
	return ar_record_job("esrecord", argv[optind], dir, period, wait, false);
}
