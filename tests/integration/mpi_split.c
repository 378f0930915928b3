/* mpi_split.c - collectives on two halves of the world and on the world, for colopmon to tell apart. */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	long v = 1, sum = 0;
	for (int i = 0; i < 3; i++)
		MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, half);
	for (int i = 0; i < 3; i++)
		MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
