/* mpi_cost.c - times cheap MPI calls, so that running it with and without libescollect.so gives the cost per recorded call, per fruitless poll and per Isend+Irecv+Waitall. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	/* argv[1]: calls per loop (callgrind wants few) */
	const int N = argc > 1 ? atoi(argv[1]) : 200000;
	double best_b = 1e30, best_p = 1e30, best_t = 1e30, best_w = 1e30;
	int x = 1, y, z[4], idx, flag;
	/* receives nobody sends: every MPI_Testany on them is a fruitless poll */
	MPI_Request rq[4];
	for (int i = 0; i < 4; i++)
		MPI_Irecv(&z[i], 1, MPI_INT, 0, 100 + i, MPI_COMM_SELF, &rq[i]);
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now();
		for (int i = 0; i < N; i++)
			MPI_Barrier(MPI_COMM_SELF);
		double t1 = now();
		for (int i = 0; i < N; i++) /* a send and a receive to oneself, with their waits */
			MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, MPI_COMM_SELF,
				     MPI_STATUS_IGNORE);
		double t2 = now();
		for (int i = 0; i < N; i++)
			MPI_Testany(4, rq, &idx, &flag, MPI_STATUS_IGNORE);
		double t3 = now();
		for (int i = 0; i < N; i++) { /* a halo exchange's pattern, with oneself */
			MPI_Request hw[2];
			MPI_Irecv(&y, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &hw[0]);
			MPI_Isend(&x, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &hw[1]);
			MPI_Waitall(2, hw, MPI_STATUSES_IGNORE);
		}
		double t4 = now();
		if ((t4 - t3) / N < best_w)
			best_w = (t4 - t3) / N;
		if ((t3 - t2) / N < best_t)
			best_t = (t3 - t2) / N;
		if ((t1 - t0) / N < best_b)
			best_b = (t1 - t0) / N;
		if ((t2 - t1) / N < best_p)
			best_p = (t2 - t1) / N;
	}
	for (int i = 0; i < 4; i++) {
		MPI_Cancel(&rq[i]);
		MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
	}
	printf("%.2f %.2f %.2f %.2f\n", best_b, best_p, best_t, best_w);
	MPI_Finalize();
	return 0;
}
