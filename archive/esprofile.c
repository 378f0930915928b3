/* esprofile.c - an mpiP-style profile of a job, live (recorded to its end) or from an archive esrecord wrote. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/convert.h"
#include "monitors/monitors.h"

static const char *usage =
	"usage: esprofile [options] JOB|ARCHIVE\n"
	"The page an mpiP user expects: time in MPI per call and per rank (count,\n"
	"total, mean, max, bytes) and its share of the run, the collectives with\n"
	"the worst imbalance and the rank that came last, each communicator's\n"
	"collectives, the heaviest rank-to-rank traffic.  Of an archive esrecord\n"
	"wrote, or of a running job, recorded until it ends (or Ctrl-C).\n"
	"  -o, --output FILE    write there instead of standard output\n"
	"  -n, --top N          rows in the top lists (default 20)\n"
	"      --json           every row as one JSON object instead, for scripts\n"
	"  -w, --wait S         a live job: wait up to S seconds for it (default 10)\n"
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n";

/* The scratch archive: its files (whatever the archive holds now) and itself. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	char p[4200];
	for (struct dirent *e; d && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "top", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'J' },
		{ "wait", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, MON_REMOTE_OPTS, { 0 } };
	const char *outfile = NULL;
	int top = 20, c;
	bool json = false;
	double wait = 10;
	while ((c = getopt_long(argc, argv, "o:n:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': outfile = optarg; break;
		case 'n': top = (int)mon_number("esprofile", "--top", optarg, 1); break;
		case 'J': json = true; break;
		case 'w': wait = mon_number("esprofile", "--wait", optarg, 0); break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esprofile (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "esprofile: expected one JOB or ARCHIVE\n%s", usage);
		return 2;
	}
	const char *what = argv[optind];
	struct stat st;
	char tmp[4096] = "", err[4400];
	const char *dir = what;
	if (strchr(what, '/') && (stat(what, &st) || !S_ISDIR(st.st_mode))) {
		/* no job's name has a slash: a path, to an archive that is not there */
		fprintf(stderr, "esprofile: %s: %s\n", what, stat(what, &st) ? strerror(errno) :
			"not an archive (a directory)");
		return 1;
	}
	if (stat(what, &st) || !S_ISDIR(st.st_mode)) {
		/* a live job: record it whole into a scratch archive first */
		snprintf(tmp, sizeof(tmp), "%s/esprofile.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(tmp)) {
			perror(tmp);
			return 1;
		}
		rmdir(tmp); /* ar_create makes it */
		mon_signals();
		int rc = mon_record("esprofile", what, &(struct mon_record_opts){ .dir = tmp, .period = 1, .wait = wait, .quiet = true },
				    err, sizeof(err));
		if (rc) {
			fprintf(stderr, "esprofile: %s\n", err);
			remove_dir(tmp);
			return mon_status(rc);
		}
		dir = tmp;
	}
	ar_archive *a;
	int rc = ar_open(dir, &a, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "esprofile: %s\n", err);
		if (*tmp)
			remove_dir(tmp);
		return 1;
	}
	ar_print_state(a, "esprofile", dir, stderr);
	FILE *out = stdout;
	if (outfile && !(out = base_fopen_out(outfile, 0600))) {
		perror(outfile);
		ar_close(a);
		if (*tmp)
			remove_dir(tmp);
		return 1;
	}
	rc = json ? ar_profile_json(a, out, err, sizeof(err)) : ar_profile(a, out, top, err, sizeof(err));
	if (rc)
		fprintf(stderr, "esprofile: %s\n", err);
	if (out != stdout && fclose(out) && !rc) {
		perror(outfile);
		rc = 1;
	}
	ar_close(a);
	if (*tmp)
		remove_dir(tmp);
	return rc ? 1 : 0;
}
