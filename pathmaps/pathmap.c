/* pathmap.c - the pathmap command: check a pathmap, or show the paths and trees it generates. */
#include <stdio.h>
#include <string.h>

#include "collectors/collectors.h"
#include "pathmaps.h"

static const char *usage =
	"usage: pathmap check FILE...   validate pathmaps (and what this host needs to run\n"
	"                               them: the servers' secret file) and summarise each\n"
	"       pathmap show FILE       print the paths, trees and placements it generates\n"
	"       pathmap --help | --version\n"
	"Errors name the file, line and column, and what was expected.\n";

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("pathmap (EventSpace) " ES_VERSION);
		return 0;
	}
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	bool check = argc >= 3 && !strcmp(argv[1], "check");
	bool show = argc == 3 && !strcmp(argv[1], "show");
	if (!check && !show) {
		fprintf(stderr, "pathmap: expected check FILE... or show FILE, got '%s%s%s'\n%s",
			argc > 1 ? argv[1] : "", argc > 2 ? " " : "", argc > 2 ? argv[2] : "", usage);
		return 2;
	}
	/* The tool knows every wrapper type a job may use, so that it checks
	 * their parameters too (the library itself stays below collectors). */
	es_collectors_register();
	int status = 0;
	for (int i = 2; i < argc; i++) {
		char err[512];
		pm_map *m;
		if (pm_load(argv[i], &m, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			status = 1;
			continue;
		}
		/* the MPI calls are libescollect's vocabulary; check also asks
		 * whether this host could run it */
		unsigned char collect[256];
		if (es_mpi_select(&pm_model(m)->mpi, argv[i], collect, err, sizeof(err)) ||
		    (check && pm_check_here(m, err, sizeof(err)))) {
			fprintf(stderr, "%s\n", err);
			status = 1;
		} else if (show) {
			pm_show(m, stdout);
		} else {
			pm_summary(m, stdout);
		}
		pm_destroy(m);
	}
	return status;
}
