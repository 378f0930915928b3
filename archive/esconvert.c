/* esconvert.c - turns an archive esrecord wrote into what other tools open: OTF2 (Vampir, otf2-print). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

static const char *usage =
	"usage: esconvert [options] ARCHIVE\n"
	"Converts an archive esrecord wrote.\n"
	"  --otf2 DIR           an OTF2 archive in DIR (new): DIR/traces.otf2, for\n"
	"                       Vampir, otf2-print and Score-P's tools\n"
	"  -q, --quiet          say nothing when all went well\n"
	"  -h, --help\n"
	"      --version\n"
	"It says what it wrote: regions, messages, collectives, and the regions it\n"
	"had to cut to nest them in their thread's others.\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "otf2", required_argument, NULL, 'O' }, { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { 0 } };
	const char *otf2 = NULL;
	bool quiet = false;
	int c;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'O': otf2 = optarg; break;
		case 'q': quiet = true; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esconvert (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "esconvert: expected one ARCHIVE\n%s", usage);
		return 2;
	}
	if (!otf2) {
		fprintf(stderr, "esconvert: nothing to write: expected --otf2 DIR\n");
		return 2;
	}
	char err[4400];
	ar_archive *a;
	if (ar_open(argv[optind], &a, err, sizeof(err))) {
		fprintf(stderr, "esconvert: %s\n", err);
		return 1;
	}
	int rc = 0;
	struct ar_out_stats st;
	if (otf2) {
		if (ar_to_otf2(a, otf2, "traces", &st, err, sizeof(err))) {
			fprintf(stderr, "esconvert: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			fprintf(stderr, "esconvert: %s/traces.otf2: %zu events of %d threads: %llu regions, "
				"%llu messages, %llu collectives, %llu nonblocking completions; %llu regions cut "
				"to nest\n", otf2, ar_nevents(a), ar_nthreads(a), (unsigned long long)st.regions,
				(unsigned long long)st.messages, (unsigned long long)st.colls,
				(unsigned long long)st.completes, (unsigned long long)st.clipped);
		}
	}
	ar_close(a);
	return rc;
}
