/* mpi_late.c - an MPI program whose last rank comes late to one allreduce (argv[1] ms late, 50 by default), for colopmon and esview's trigger. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long v = rank, sum, late_ms = argc > 1 ? atol(argv[1]) : 50;
	for (int i = 0; i < 6; i++) {
		if (i == 3 && rank == size - 1) {
			struct timespec ts = { late_ms / 1000, late_ms % 1000 * 1000 * 1000 };
			nanosleep(&ts, NULL); /* the late contributor */
		}
		MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return sum == (long)size * (size - 1) / 2 ? 0 : 1;
}
