/* mpi_wait.c - MPI programs that stall or deadlock in known ways, for heartbeat's waiting relation to name. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Work that calls no MPI. */
static void compute(double seconds)
{
	double until = now() + seconds;
	volatile double x = 1;
	while (now() < until)
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
}

static const char *usage =
	"usage: mpi_wait SCENARIO SECONDS\n"
	"  cycle     rank r receives from r+1 (mod size): a deadlock (-np 3)\n"
	"  chain     the last rank computes SECONDS; each other rank receives from the next\n"
	"  mismatch  ranks 0 and 1 of one half: MPI_Barrier against MPI_Allreduce; the\n"
	"            others wait in a barrier of the world (-np 4)\n"
	"  any       rank 0 receives from any source; rank 1 computes SECONDS, then sends;\n"
	"            rank 2 receives from rank 0 (-np 3)\n"
	"  anyknot   rank 0 receives from any source; the others receive from rank 0\n"
	"  early     the last rank finalizes at once; the others receive from it\n"
	"  probe     rank 0 polls MPI_Iprobe for a message from rank 1, which receives from\n"
	"            rank 0: a deadlock through a loop of polls (-np 2)\n"
	"  progress  a ring and an allreduce, for SECONDS: nothing stalls\n";

int main(int argc, char **argv)
{
	if (argc != 3) {
		fputs(usage, stderr);
		return 2;
	}
	const char *what = argv[1];
	double seconds = atof(argv[2]);
	MPI_Init(&argc, &argv);
	int rank, size, buf = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(what, "cycle")) {
		MPI_Recv(&buf, 1, MPI_INT, (rank + 1) % size, 5 + rank, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (!strcmp(what, "chain")) {
		if (rank == size - 1)
			compute(seconds);
		else
			MPI_Recv(&buf, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (rank > 0)
			MPI_Send(&buf, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD);
	} else if (!strcmp(what, "mismatch")) {
		MPI_Comm half;
		MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
		if (rank == 0) {
			MPI_Barrier(half);
		} else if (rank == 1) {
			int sum;
			MPI_Allreduce(&buf, &sum, 1, MPI_INT, MPI_SUM, half);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
		}
	} else if (!strcmp(what, "any")) {
		if (rank == 0) {
			MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int r = 2; r < size; r++)
				MPI_Send(&buf, 1, MPI_INT, r, 4, MPI_COMM_WORLD);
		} else if (rank == 1) {
			compute(seconds);
			MPI_Send(&buf, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
		} else {
			MPI_Recv(&buf, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(what, "anyknot")) {
		MPI_Recv(&buf, 1, MPI_INT, rank ? 0 : MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (!strcmp(what, "early")) {
		if (rank != size - 1)
			MPI_Recv(&buf, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (!strcmp(what, "probe")) {
		if (rank == 0) {
			int flag = 0;
			while (!flag)
				MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(&buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	} else if (!strcmp(what, "progress")) {
		/* the same number of steps on every rank, about 4 ms each */
		double sum;
		int right = (rank + 1) % size, left = (rank + size - 1) % size, halo, steps = (int)(seconds * 250) + 1;
		for (int s = 0; s < steps; s++) {
			compute(0.002);
			MPI_Sendrecv(&buf, 1, MPI_INT, right, 1, &halo, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
			double v = 1;
			MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
	} else {
		if (rank == 0)
			fputs(usage, stderr);
		MPI_Finalize();
		return 2;
	}
	MPI_Finalize();
	return 0;
}
