/* mpi_clocks.c - messages both ways between rank 0 and each other rank for SECONDS (rank 0's clock) and then until the file STOP exists (when given; "-": none), of sizes 1 to 64 bytes, and an MPI_Allreduce on MPI_COMM_WORLD (or, given "dup", on a dup of it, as libraries make; "dup-multiple": the same, MPI initialised for MPI_THREAD_MULTIPLE) every 20 exchanges: what t_clocks.sh records across hosts whose clocks are apart. */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int provided;
	if (argc > 3 && !strcmp(argv[3], "dup-multiple"))
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init(&argc, &argv);
	int rank, size, go = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double secs = argc > 1 ? atof(argv[1]) : 3, t0 = MPI_Wtime();
	const char *stop = argc > 2 && strcmp(argv[2], "-") ? argv[2] : NULL;
	MPI_Comm all = MPI_COMM_WORLD;
	if (argc > 3 && !strncmp(argv[3], "dup", 3))
		MPI_Comm_dup(MPI_COMM_WORLD, &all);
	char buf[64] = { 0 };
	for (int i = 0; go; i++) {
		int n = 1 + i % 64, tag = i % 7;
		for (int p = 1; p < size; p++) {
			if (rank == 0) {
				MPI_Send(buf, n, MPI_CHAR, p, tag, MPI_COMM_WORLD);
				MPI_Recv(buf, 64, MPI_CHAR, p, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == p) {
				MPI_Recv(buf, 64, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, n, MPI_CHAR, 0, tag, MPI_COMM_WORLD);
			}
		}
		if (i % 20 == 19) { /* rank 0 says when it is over */
			int mine = rank == 0 ? MPI_Wtime() - t0 < secs || (stop && access(stop, F_OK)) : 1;
			MPI_Allreduce(&mine, &go, 1, MPI_INT, MPI_MIN, all);
		}
		usleep(200);
	}
	MPI_Finalize();
	return 0;
}
