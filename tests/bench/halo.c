/* halo.c - LAMMPS's communication in a melt, for MPIs Debian's LAMMPS is not built for: each step some computing, six halo exchanges (MPI_Irecv, MPI_Send, MPI_Wait), atoms moved every 20 steps (MPI_Sendrecv of counts, then of atoms), an MPI_Allreduce every 50; prints steps per second. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * As LAMMPS's CommBrick does it for the melt example on 2 ranks: the
 * ghost atoms' positions go to the neighbour in each of the three
 * dimensions and both directions each step (the forces back are not sent:
 * newton off), and every 20 steps (a neighbour list rebuilt) atoms that
 * left go to their new rank; thermo output sums over the ranks.  The
 * computing between (the pair forces) is a loop of about the cost of 2,000
 * atoms' on 2 ranks.  Only the pattern is LAMMPS's: the figure (steps/s) is
 * this program's, a ratio between runs.
 */
enum { GHOSTS = 600, ATOMS = 2000, MOVED = 40 };

static double x[ATOMS * 3], f[ATOMS * 3];

static void forces(void)
{
	for (int i = 0; i < ATOMS; i++) {
		double fx = 0;
		for (int k = 0; k < 24; k++) {
			double r = x[3 * i] - x[3 * ((i + k * 37) % ATOMS)] + 1.1;
			double r2 = 1.0 / (r * r), r6 = r2 * r2 * r2;
			fx += r6 * (r6 - 0.5) * r2;
		}
		f[3 * i] = fx;
	}
	for (int i = 0; i < ATOMS * 3; i++)
		x[i] += 1e-9 * f[i];
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, size, steps = argc > 1 ? atoi(argv[1]) : 2000;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	static double sendbuf[GHOSTS * 3], recvbuf[GHOSTS * 3], moved[MOVED * 3], in[MOVED * 3];
	for (int i = 0; i < ATOMS * 3; i++)
		x[i] = (double)((i * 7919) % 1000) / 100.0;
	int right = (me + 1) % size, left = (me - 1 + size) % size;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime(), sum = 0, all = 0;
	for (int s = 0; s < steps; s++) {
		for (int d = 0; d < 6; d++) {
			int to = d % 2 ? left : right, from = d % 2 ? right : left;
			MPI_Request r;
			for (int i = 0; i < GHOSTS * 3; i++)
				sendbuf[i] = x[i];
			MPI_Irecv(recvbuf, GHOSTS * 3, MPI_DOUBLE, from, d, MPI_COMM_WORLD, &r);
			MPI_Send(sendbuf, GHOSTS * 3, MPI_DOUBLE, to, d, MPI_COMM_WORLD);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		forces();
		if (s % 20 == 0) {
			int n = MOVED, got = 0;
			MPI_Sendrecv(&n, 1, MPI_INT, right, 10, &got, 1, MPI_INT, left, 10, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
			MPI_Sendrecv(moved, n * 3, MPI_DOUBLE, right, 11, in, got * 3, MPI_DOUBLE, left, 11,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (s % 50 == 0) {
			sum = f[0];
			MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
	}
	double t = MPI_Wtime() - t0, worst = 0;
	MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("%.3f\n", steps / worst + 0 * all);
	MPI_Finalize();
	return 0;
}
