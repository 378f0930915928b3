/* mpi_msgs.c - messages whose ends a trace gets wrong most easily, each listed as it is sent, for the archive's converters to be held against. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each rank writes DIR/msgs.rR: a line per message it sends, "FROM TO TAG
 * BYTES COMM" in world ranks, COMM "world" or "sub". The messages:
 *  - on a split that numbers the ranks backwards: MPI_Send to its rank 0
 *    from each other rank, and a ring of MPI_Sendrecv there;
 *  - a ring of MPI_Sendrecv and of MPI_Sendrecv_replace on WORLD;
 *  - Irecv from any source, Isend to the right, MPI_Waitall;
 *  - persistent requests, started three times with MPI_Startall.
 */

static FILE *out;
static int rank, size;

static void sent(int to_world, int tag, int bytes, MPI_Comm c)
{
	fprintf(out, "%d %d %d %d %s\n", rank, to_world, tag, bytes, c == MPI_COMM_WORLD ? "world" : "sub");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char path[4096];
	snprintf(path, sizeof(path), "%s/msgs.r%d", argc > 1 ? argv[1] : ".", rank);
	if (!(out = fopen(path, "w"))) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int right = (rank + 1) % size, left = (rank + size - 1) % size, buf[4] = { rank, rank, rank, rank }, in[4];

	/* the split numbered backwards: its rank k is world rank size-1-k */
	MPI_Comm back;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &back);
	int me;
	MPI_Comm_rank(back, &me);
	if (me == 0) {
		for (int k = 1; k < size; k++)
			MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 1, back, MPI_STATUS_IGNORE);
	} else {
		MPI_Send(buf, 2, MPI_INT, 0, 1, back);
		sent(size - 1, 1, 8, back);
	}
	int bl = (me + size - 1) % size, br = (me + 1) % size;
	MPI_Sendrecv(buf, 3, MPI_INT, br, 2, in, 3, MPI_INT, bl, 2, back, MPI_STATUS_IGNORE);
	sent(size - 1 - br, 2, 12, back);

	/* rings on WORLD */
	MPI_Sendrecv(buf, 4, MPI_INT, right, 3, in, 4, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	sent(right, 3, 16, MPI_COMM_WORLD);
	MPI_Sendrecv_replace(buf, 1, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	sent(right, 4, 4, MPI_COMM_WORLD);

	/* any source, through requests */
	MPI_Request rq[2];
	MPI_Irecv(in, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(buf, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	sent(right, 5, 4, MPI_COMM_WORLD);

	/* persistent, on the split */
	MPI_Recv_init(in, 2, MPI_INT, bl, 6, back, &rq[0]);
	MPI_Send_init(buf, 2, MPI_INT, br, 6, back, &rq[1]);
	for (int i = 0; i < 3; i++) {
		MPI_Startall(2, rq);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		sent(size - 1 - br, 6, 8, back);
	}
	MPI_Request_free(&rq[0]);
	MPI_Request_free(&rq[1]);
	MPI_Comm_free(&back);
	fclose(out);
	MPI_Finalize();
	return 0;
}
