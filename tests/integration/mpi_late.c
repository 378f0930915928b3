/* mpi_late.c - an MPI program whose last rank comes late to one allreduce, for colopmon. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <time.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long v = rank, sum;
	for (int i = 0; i < 6; i++) {
		if (i == 3 && rank == size - 1) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };
			nanosleep(&ts, NULL); /* the late contributor */
		}
		MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return sum == (long)size * (size - 1) / 2 ? 0 : 1;
}
