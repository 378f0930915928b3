/* esconvert.c - turns an archive esrecord wrote into what other tools open: OTF2 (Vampir, otf2-print), trace-event JSON (Perfetto) and pictures (gnuplot). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

static const char *usage =
	"usage: esconvert [options] ARCHIVE\n"
	"Converts an archive esrecord wrote.\n"
	"  --otf2 DIR           an OTF2 archive in DIR (new): DIR/traces.otf2, for\n"
	"                       Vampir, otf2-print and Score-P's tools\n"
	"  --json FILE          trace-event JSON in FILE (new), for Perfetto\n"
	"                       (ui.perfetto.dev) and chrome://tracing: a track per\n"
	"                       thread, messages and collectives as arrows\n"
	"  --window A:B         JSON: only seconds A to B after the first event, for\n"
	"                       runs too long to open whole (A: or :B leave a side open)\n"
	"  --plot DIR           PNG pictures in DIR: timeline.png, each rank's time\n"
	"                       computing and inside MPI by class of call, its longest\n"
	"                       waits labelled; matrix.png, bytes sent rank to rank\n"
	"  -q, --quiet          say nothing when all went well\n"
	"  -h, --help\n"
	"      --version\n"
	"It says what it wrote: regions, messages, collectives, and the regions it\n"
	"had to cut to nest them in their thread's others.\n";

/* "A:B" in seconds into ns; either side may be empty */
static int window(const char *w, uint64_t *from, uint64_t *to)
{
	const char *colon = strchr(w, ':');
	char *end;
	if (!colon)
		return -1;
	if (colon != w) {
		double a = strtod(w, &end);
		if (end != colon || a < 0)
			return -1;
		*from = (uint64_t)(a * 1e9);
	}
	if (colon[1]) {
		double b = strtod(colon + 1, &end);
		if (*end || b < 0)
			return -1;
		*to = (uint64_t)(b * 1e9);
	}
	return *from <= *to ? 0 : -1;
}

/* Never silent: the message ends an output leaves out, and why. */
static void said_alone(const char *what, const struct ar_out_stats *st)
{
	char why[600];
	if (ar_msgs_said(&st->pairing, why, sizeof(why)))
		fprintf(stderr, "esconvert: %s: %s\n", what, why);
}

int main(int argc, char **argv)
{
	umask(077); /* what libotf2 and gnuplot make is the trace's owner's, as the archive is */
	static const struct option opts[] = {
		{ "otf2", required_argument, NULL, 'O' }, { "json", required_argument, NULL, 'J' },
		{ "window", required_argument, NULL, 'W' }, { "plot", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { 0 } };
	const char *otf2 = NULL, *json = NULL, *plot = NULL;
	uint64_t from = 0, to = UINT64_MAX;
	bool quiet = false;
	int c;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'O': otf2 = optarg; break;
		case 'J': json = optarg; break;
		case 'P': plot = optarg; break;
		case 'W':
			if (window(optarg, &from, &to)) {
				fprintf(stderr, "esconvert: --window: expected A:B, seconds with A before B "
					"(either may be left out), not '%s'\n", optarg);
				return 2;
			}
			break;
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
	if (!otf2 && !json && !plot) {
		fprintf(stderr, "esconvert: nothing to write: expected --otf2 DIR, --json FILE or --plot DIR\n");
		return 2;
	}
	char err[4400];
	ar_archive *a;
	if (ar_open(argv[optind], &a, err, sizeof(err))) {
		fprintf(stderr, "esconvert: %s\n", err);
		return 1;
	}
	ar_print_state(a, "esconvert", argv[optind], stderr);
	int rc = 0;
	struct ar_out_stats st;
	if (otf2) {
		if (ar_to_otf2(a, otf2, "traces", &st, err, sizeof(err))) {
			fprintf(stderr, "esconvert: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			/* OTF2 counts ends: a message is a send and a receive, a
			 * collective an event on each rank (the JSON counts arrows) */
			fprintf(stderr, "esconvert: %s/traces.otf2: %zu events of %d threads: %llu regions, "
				"%llu message ends (sends and receives), %llu collective events (one a rank), "
				"%llu nonblocking completions; %llu regions cut to nest\n", otf2, ar_nevents(a), ar_nthreads(a), (unsigned long long)st.regions,
				(unsigned long long)st.messages, (unsigned long long)st.colls,
				(unsigned long long)st.completes, (unsigned long long)st.clipped);
			if (st.unlocated) /* never silent: what OTF2 leaves out */
				fprintf(stderr, "esconvert: %s/traces.otf2: %llu threads that recorded nothing (and are "
					"no rank's first) are not locations\n", otf2, (unsigned long long)st.unlocated);
			said_alone("left out of OTF2's messages", &st);
		}
	}
	if (json) {
		if (ar_to_json(a, json, from, to, &st, err, sizeof(err))) {
			fprintf(stderr, "esconvert: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			fprintf(stderr, "esconvert: %s: %llu slices, %llu messages and %llu collectives as "
				"arrows; %llu slices cut to nest", json, (unsigned long long)st.regions,
				(unsigned long long)st.messages, (unsigned long long)st.colls,
				(unsigned long long)st.clipped);
			if (st.backwards) /* never silent: what the picture leaves out, and why */
				fprintf(stderr, "; %llu messages not drawn: received before they were sent, "
					"by the ranks' clocks", (unsigned long long)st.backwards);
			if (st.colls_backwards)
				fprintf(stderr, "; %llu collective arrows not drawn: a member left before the one "
					"it would come from came (by the ranks' clocks, or a collective that "
					"does not wait for all)", (unsigned long long)st.colls_backwards);
			fputc('\n', stderr);
			if (st.unlocated)
				fprintf(stderr, "esconvert: %s: %llu threads that recorded nothing have no track\n", json,
					(unsigned long long)st.unlocated);
			said_alone("not drawn", &st);
		}
	}
	if (plot) {
		int n;
		if (ar_plot(a, plot, &n, err, sizeof(err))) {
			fprintf(stderr, "esconvert: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			fprintf(stderr, "esconvert: %s: %s\n", plot, n > 1 ? "timeline.png, matrix.png" : "timeline.png");
		}
	}
	ar_close(a);
	return rc;
}
