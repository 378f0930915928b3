/* netns_shim.c - test scaffolding, preloaded into MPI ranks: each rank runs as if on a host of its own (its network namespace or not, its own /dev/shm, its own clock). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/*
 * ES_TEST_NETNS="nsA,nsB,..." names rank i's namespace (under /run/netns).
 * Before main, while the process has one thread, it takes a mount
 * namespace of its own with an empty /dev/shm: no segment of another
 * "host" is visible.  After MPI_Init, and once every pair of ranks has
 * connected (connections stay in the namespace they were made in), the
 * main thread moves into its network
 * namespace, so the threads and sockets the program makes from then on
 * live there, as on another host.
 */
/*
 * ES_TEST_HOSTS=1: the same without network namespaces: a /dev/shm of its
 * own, and a host name of its own (gethostname, below).
 * ES_TEST_CLOCK="OFF/PPM,OFF/PPM,...": rank i's CLOCK_MONOTONIC runs OFF ns
 * ahead of the machine's and gains PPM parts per million from the
 * process's start: a host whose clock is set apart and drifts.
 */
static int64_t skew_off, skew_base;
static double skew_ppm;
static int skewed;

/* An environment variable set, and not to 0 */
static int on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0");
}

static void take_skew(void)
{
	const char *list = getenv("ES_TEST_CLOCK"), *r = getenv("OMPI_COMM_WORLD_RANK");
	if (!list || !r)
		return;
	int rank = atoi(r);
	const char *p = list;
	for (int i = 0; p && i < rank; i++)
		p = (p = strchr(p, ',')) ? p + 1 : NULL;
	long long off;
	double ppm;
	if (!p || sscanf(p, "%lld/%lf", &off, &ppm) != 2) {
		fprintf(stderr, "netns_shim: ES_TEST_CLOCK=%s: expected OFF/PPM for rank %d\n", list, rank);
		_exit(95);
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	skew_base = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	skew_off = off;
	skew_ppm = ppm;
	skewed = off || ppm;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(id, ts);
	if (rc || !skewed || (id != CLOCK_MONOTONIC && id != CLOCK_MONOTONIC_RAW))
		return rc;
	int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
	t += skew_off + (int64_t)((double)(t - skew_base) * skew_ppm / 1e6);
	ts->tv_sec = t / 1000000000;
	ts->tv_nsec = t % 1000000000;
	return 0;
}

/* ES_TEST_HOSTS: each rank names another host ("NAME.rankN"), as the
 * collectors learn which ranks share one from the host's name */
int gethostname(char *name, size_t len)
{
	static int (*real)(char *, size_t);
	if (!real)
		real = (int (*)(char *, size_t))dlsym(RTLD_NEXT, "gethostname");
	int rc = real(name, len);
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	if (!rc && on("ES_TEST_HOSTS") && r && len > 0) {
		size_t n = strnlen(name, len);
		snprintf(name + n, len - n, ".rank%s", r);
	}
	return rc;
}

/*
 * ES_TEST_COMMS=FILE: each communicator made by a collective over
 * MPI_COMM_WORLD (MPI_Comm_split, _split_type, _dup, _create), a line
 * in FILE: Open MPI agrees on such a communicator's id by an
 * MPI_Iallreduce over MPI_COMM_WORLD, after which every poll of the
 * program also runs libnbc's progress routine (t_clocks: the collector
 * makes none).
 */
static void comm_made(const char *what, MPI_Comm parent)
{
	const char *file = getenv("ES_TEST_COMMS");
	if (!file || parent != MPI_COMM_WORLD)
		return;
	FILE *f = fopen(file, "a");
	if (f) {
		fprintf(f, "%s over MPI_COMM_WORLD\n", what);
		fclose(f);
	}
}

/* real: the routine of that name the next library has */
#define SHIM_REAL(fn) \
	static __typeof__(&fn) real; \
	if (!real) \
		real = (__typeof__(&fn))dlsym(RTLD_NEXT, #fn)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	SHIM_REAL(PMPI_Comm_split);
	comm_made("MPI_Comm_split", comm);
	return real(comm, color, key, newcomm);
}

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	SHIM_REAL(PMPI_Comm_split_type);
	comm_made("MPI_Comm_split_type", comm);
	return real(comm, type, key, info, newcomm);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	SHIM_REAL(PMPI_Comm_dup);
	comm_made("MPI_Comm_dup", comm);
	return real(comm, newcomm);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	SHIM_REAL(PMPI_Comm_create);
	comm_made("MPI_Comm_create", comm);
	return real(comm, group, newcomm);
}

__attribute__((constructor)) static void private_shm(void)
{
	if (getenv("ES_TEST_CLOCK")) {
		/* the real clock first: the skew is measured from here */
		skewed = 0;
		take_skew();
	}
	if (!getenv("ES_TEST_NETNS") && !on("ES_TEST_HOSTS"))
		return;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777")) {
		perror("netns_shim: a private /dev/shm");
		_exit(97);
	}
}

static void enter(void)
{
	const char *list = getenv("ES_TEST_NETNS");
	static int entered;
	int rank, size;
	if (!list || entered++ || PMPI_Comm_rank(MPI_COMM_WORLD, &rank) || PMPI_Comm_size(MPI_COMM_WORLD, &size))
		return;
	/* MPI opens its connections lazily, from the thread that first talks:
	 * every pair talks once here, while all are still in one namespace. */
	char *out = calloc((size_t)size, 1), *in = calloc((size_t)size, 1);
	if (!out || !in || PMPI_Alltoall(out, 1, MPI_BYTE, in, 1, MPI_BYTE, MPI_COMM_WORLD)) {
		fprintf(stderr, "netns_shim: connecting the ranks failed\n");
		_exit(96);
	}
	free(out);
	free(in);
	char buf[512], *save = NULL, *ns = NULL;
	snprintf(buf, sizeof(buf), "%s", list);
	ns = strtok_r(buf, ",", &save);
	for (int i = 0; ns && i < rank; i++)
		ns = strtok_r(NULL, ",", &save);
	char path[300];
	snprintf(path, sizeof(path), "/run/netns/%s", ns ? ns : "");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		perror(path);
		_exit(98);
	}
	close(fd);
}

/* Into the namespace right after MPI's own initialisation: whether the
 * program's MPI_Init is this one (the wind tunnel) or a collector's that
 * calls PMPI_Init (libescollect, preloaded before this), which then makes
 * its tuple server's socket in the namespace, as on another host. */
int PMPI_Init(int *argc, char ***argv)
{
	static int (*real)(int *, char ***);
	if (!real)
		real = (int (*)(int *, char ***))dlsym(RTLD_NEXT, "PMPI_Init");
	int rc = real(argc, argv);
	if (rc == MPI_SUCCESS)
		enter();
	return rc;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	static int (*real)(int *, char ***, int, int *);
	if (!real)
		real = (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "PMPI_Init_thread");
	int rc = real(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		enter();
	return rc;
}

int MPI_Init(int *argc, char ***argv)
{
	return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	return PMPI_Init_thread(argc, argv, required, provided);
}
