/* mpi_toggle.c - messages of known sizes, sent until told to stop, for a recording whose ranks esctl pauses and filters while they run: every message a trace pairs must have the size it was sent with. */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * mpi_toggle DIR (2 ranks).  Each round k, on a channel each:
 *  tag 1  0 -> 1: MPI_Send, received by a wildcard MPI_Irecv and MPI_Wait;
 *  tag 2  1 -> 0: MPI_Isend and MPI_Wait, received by MPI_Recv;
 *  tag 3  both ways: MPI_Sendrecv.
 * The k-th message of a channel has size(k, tag) bytes, a size that
 * repeats only every 1021 messages, so that a send paired with another
 * message's receive differs in bytes.  Rank 0 looks for DIR/stop every 64
 * rounds and tells rank 1; then each rank writes DIR/toggle.rR: the
 * messages it sent, "sent N".  DIR/running appears after the first round.
 */

#define MAXB (4 * 1021)

static int size_of(long k, int tag)
{
	return 4 * (int)(1 + (k * 7919 + tag * 101) % 1021);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 2 || argc != 2) {
		if (!me)
			fprintf(stderr, "usage: mpirun -np 2 mpi_toggle DIR\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	static char out[MAXB], in[MAXB];
	char path[4096];
	long k = 0, sent = 0;
	int other = 1 - me, stop = 0;
	while (!stop) {
		MPI_Status st;
		MPI_Request r;
		int n;
		if (me == 0) {
			MPI_Send(out, size_of(k, 1), MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(in, MAXB, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &st);
		} else {
			MPI_Irecv(in, MAXB, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, &st);
			MPI_Get_count(&st, MPI_BYTE, &n);
			if (n != size_of(k, 1)) {
				fprintf(stderr, "mpi_toggle: message %ld came with %d bytes, not %d\n", k, n, size_of(k, 1));
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			MPI_Isend(out, size_of(k, 2), MPI_BYTE, 0, 2, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		MPI_Sendrecv(out, size_of(k, 3), MPI_BYTE, other, 3, in, MAXB, MPI_BYTE, other, 3, MPI_COMM_WORLD, &st);
		sent += 2;
		usleep(1000); /* a pace a recorder keeps up with on a loaded machine */
		if (++k == 1 && !me) {
			snprintf(path, sizeof(path), "%s/running", argv[1]);
			FILE *f = fopen(path, "w");
			if (f)
				fclose(f);
		}
		if (k % 64 == 0) {
			snprintf(path, sizeof(path), "%s/stop", argv[1]);
			stop = !me && access(path, F_OK) == 0;
			MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
		}
	}
	snprintf(path, sizeof(path), "%s/toggle.r%d", argv[1], me);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	fprintf(f, "sent %ld\n", sent);
	fclose(f);
	MPI_Finalize();
	return 0;
}
