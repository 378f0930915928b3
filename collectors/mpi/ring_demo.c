/* ring_demo.c - a small MPI program to watch: ranks compute, pass a ring, and allreduce; one rank loses two seconds once, or (deadlock) the ring turns unsafe. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void compute(double ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	volatile double x = 1;
	do {
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double seconds = argc > 1 ? atof(argv[1]) : 6;
	/* deadlock: a third of the way in, every rank sends synchronously to
	 * its right before it receives from its left, the classic unsafe ring */
	int deadlock = argc > 2 && !strcmp(argv[2], "deadlock");
	int steps = (int)(seconds * 100), right = (rank + 1) % size, left = (rank - 1 + size) % size;
	double row[256] = { 0 }, halo[256], sum = 0;
	for (int s = 0; s < steps; s++) {
		if (deadlock && s == steps / 3) {
			MPI_Ssend(row, 256, MPI_DOUBLE, right, 2, MPI_COMM_WORLD);
			MPI_Recv(halo, 256, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		/* the last rank gets stuck in its own work for two seconds, once */
		compute(rank == size - 1 && s == steps / 3 && !deadlock ? 2000 : 5);
		MPI_Sendrecv(row, 256, MPI_DOUBLE, right, 1, halo, 256, MPI_DOUBLE, left, 1,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (s % 10 == 0)
			MPI_Allreduce(&halo[0], &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
