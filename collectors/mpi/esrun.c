/* esrun.c - runs an MPI program (C, C++ or Fortran) with the collector for its MPI preloaded (libescollect-openmpi.so, -mpich.so): `mpirun -np 4 esrun ./app`. */
#define _GNU_SOURCE
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"

static const char *usage =
	"usage: esrun [options] [--] PROGRAM [ARGS...]\n"
	"Runs PROGRAM with EventSpace's collectors on its MPI calls (the libescollect\n"
	"built for its MPI, Open MPI or MPICH, preloaded), from C, C++ and Fortran alike.\n"
	"Under mpirun (or MPICH's mpiexec) it runs on every rank:\n"
	"  mpirun -np 4 esrun ./app\n"
	"  mpirun -np 4 esrun --job run1 ./app     then, while it runs: heartbeat run1\n"
	"  -j, --job NAME        the job's name, what monitors are given (default: the\n"
	"                        program's name and rank 0's process id, as lmp-4312)\n"
	"  -p, --pathmap FILE    a pathmap: which calls to record (mpi: collect:), how\n"
	"                        much each thread keeps (trace:), servers for monitors\n"
	"                        on other hosts (servers:)\n"
	"  -s, --trace-size B    bytes of tuples each thread keeps (4M by default)\n"
	"  -k, --callpath N      a call site is the N innermost frames of the call path\n"
	"                        (1 to 7; 1 by default, the cheapest: more unwinds the\n"
	"                        stack at every call, as mpiP's -k does; 0 keeps none)\n"
	"      --serve WHERE     loopback or any: serve each node's trace spaces over TCP\n"
	"                        for monitors on other hosts (any needs --secret-file)\n"
	"      --secret-file F   the servers' shared secret (a file only you can read)\n"
	"      --keep WHEN       when the job's trace spaces are removed: failed (the\n"
	"                        default: at a clean end; kept when a rank died, for\n"
	"                        esrecord --remains), always (kept until psadm rm or\n"
	"                        psadm clean --all) or never (psadm clean removes even\n"
	"                        a dead job's); sets ES_KEEP\n"
	"      --mpi NAME        the MPI the program runs on (openmpi, mpich): esrun\n"
	"                        preloads the collector built for it (lib/libescollect-\n"
	"                        NAME.so); without it, esrun asks the dynamic loader\n"
	"                        which MPI library the program loads (as ldd would,\n"
	"                        running none of its code) and says when it finds none\n"
	"                        or one it has no collector for; a script needs --mpi\n"
	"  -q, --quiet           rank 0 does not say where the job's traces are\n"
	"  -h, --help\n"
	"      --version\n"
	"Rank 0 prints the job's name and the monitors to run.  A bad option or pathmap\n"
	"stops esrun before the program starts, with one line from rank 0.\n";

/* This rank's number under mpirun, or 0 when it cannot tell. */
static int launch_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
	for (int i = 0; vars[i]; i++)
		if (getenv(vars[i]))
			return atoi(getenv(vars[i]));
	return 0;
}

/* Why esrun will not run the program, said once, by the first rank.  The
 * others end a second later: MPICH's launcher ends every rank once one
 * failed, and under load took rank 0 before it had said why (9 times in
 * 40, the message lost). */
static int fail(const char *fmt, const char *a, const char *b)
{
	if (launch_rank() == 0) {
		fprintf(stderr, "esrun: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	} else {
		sleep(1);
	}
	return 2;
}

/* The collector for PROG's MPI, of those beside us (BIN/../lib, in the
 * build tree and an installed prefix alike): 0, or esrun's status. */
static int take_collector(const char *prog, const char *mpi, char *out, size_t len)
{
	char self[PATH_MAX], dir[PATH_MAX + 8], real[PATH_MAX], err[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return fail("cannot find where esrun is (/proc/self/exe)%s%s", "", "");
	self[n] = 0;
	snprintf(dir, sizeof(dir), "%s/../lib", dirname(self));
	if (!realpath(dir, real))
		return fail("no lib/ beside esrun's bin/ (%s): EventSpace's collectors are built and "
			    "installed there%s", dir, "");
	if (es_mpi_pick(real, prog, mpi, out, len, err, sizeof(err)))
		return fail("%s%s", err, "");
	return 0;
}

/* The pathmap, checked here, once, so that a mistake stops the run before
 * it starts; then ES_PATHMAP, its whole path.  0, or esrun's status. */
static int take_pathmap(const char *pathmap)
{
	char err[512], abs[PATH_MAX];
	pm_map *m;
	unsigned char collect[256];
	if (pm_load(pathmap, &m, err, sizeof(err)))
		return fail("%s%s", err, "");
	int rc = es_mpi_select(&pm_model(m)->mpi, pathmap, collect, err, sizeof(err));
	pm_destroy(m);
	if (rc)
		return fail("%s%s", err, "");
	if (!realpath(pathmap, abs))
		return fail("%s: %s", pathmap, "cannot resolve its path");
	setenv("ES_PATHMAP", abs, 1);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("esrun (EventSpace) " ES_VERSION);
		return 0;
	}
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' }, { "pathmap", required_argument, NULL, 'p' },
		{ "trace-size", required_argument, NULL, 's' }, { "serve", required_argument, NULL, 'S' },
		{ "secret-file", required_argument, NULL, 'K' }, { "quiet", no_argument, NULL, 'q' },
		{ "callpath", required_argument, NULL, 'k' }, { "keep", required_argument, NULL, 'E' },
		{ "mpi", required_argument, NULL, 'M' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *job = NULL, *pathmap = NULL, *size = NULL, *serve = NULL, *secret = NULL, *depth = NULL,
		   *keep = NULL, *mpi = NULL;
	int quiet = 0, c;
	/* "+": options end at the program, whose own options are its own */
	while ((c = getopt_long(argc, argv, "+j:p:s:k:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': job = optarg; break;
		case 'p': pathmap = optarg; break;
		case 's': size = optarg; break;
		case 'k': depth = optarg; break;
		case 'S': serve = optarg; break;
		case 'K': secret = optarg; break;
		case 'E': keep = optarg; break;
		case 'M': mpi = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		if (launch_rank() == 0)
			fprintf(stderr, "esrun: expected the program to run\n%s", usage);
		else
			sleep(1); /* as fail() */
		return 2;
	}
	if (job) {
		if (!es_job_ok(job))
			return fail("--job '%s': expected %s", job, ES_JOB_RULE);
		setenv("ES_JOB", job, 1);
	}
	if (size) {
		uint64_t b;
		if (pm_parse_bytes(size, &b))
			return fail("--trace-size '%s': expected bytes, as a number with K, M or G if you "
				    "like (8M)%s", size, "");
		if (b < sizeof(struct es_trace))
			return fail("--trace-size '%s': %s", size, "expected at least 36 bytes, one tuple "
				    "(4M keeps about 116,000)");
		setenv("ES_TRACE_SIZE", size, 1);
	}
	if (depth) {
		char *end;
		long k = strtol(depth, &end, 10);
		if (*end || end == depth || k < 0 || k > ES_SITE_FRAMES)
			return fail("--callpath '%s': expected frames, 0 to %s", depth, "7");
		setenv("ES_CALLPATH", depth, 1);
	}
	if (keep) {
		enum ps_keep k;
		if (ps_keep_parse(keep, &k))
			return fail("--keep '%s': expected %s", keep, PS_KEEP_RULE);
		setenv("ES_KEEP", keep, 1);
	}
	if (serve) {
		if (strcmp(serve, "loopback") && strcmp(serve, "any"))
			return fail("--serve '%s': expected loopback or any%s", serve, "");
		setenv("ES_SERVE", serve, 1);
	}
	if (secret) {
		char why[128];
		if (ps_secret_check(secret, why, sizeof(why)))
			return fail("--secret-file %s: %s", secret, why);
		setenv("ES_SECRET_FILE", secret, 1);
	}
	if (pathmap && (c = take_pathmap(pathmap)))
		return c;
	char lib[PATH_MAX];
	if ((c = take_collector(argv[optind], mpi, lib, sizeof(lib))))
		return c;
	if (!quiet)
		setenv("ES_VERBOSE", "1", 1);
	const char *pre = getenv("LD_PRELOAD");
	char *all = NULL;
	if (asprintf(&all, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "") < 0)
		return fail("%s%s", "out of memory", "");
	setenv("LD_PRELOAD", all, 1);
	free(all);
	execvp(argv[optind], argv + optind);
	return fail("%s: cannot run it: %s", argv[optind], strerror(errno));
}
