/* netns_shim.c - test scaffolding, preloaded into MPI ranks: each rank runs as if on a host of its own (its network namespace, its own /dev/shm). */
#define _GNU_SOURCE
#include <fcntl.h>
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
__attribute__((constructor)) static void private_shm(void)
{
	if (!getenv("ES_TEST_NETNS"))
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
	int rank, size;
	if (!list || MPI_Comm_rank(MPI_COMM_WORLD, &rank) || MPI_Comm_size(MPI_COMM_WORLD, &size))
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

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		enter();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		enter();
	return rc;
}
