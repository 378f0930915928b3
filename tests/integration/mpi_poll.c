/* mpi_poll.c - hpcc RandomAccess's polling loop in 30 lines: a wildcard MPI_Irecv kept posted and completed by MPI_Test, the MPI_Isend beside it by MPI_Testany(1, ...), then MPI_Wait; each message's value is its number, written to DIR/poll.rN for the tests. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 200;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int to = (rank + 1) % size, in = 0, out = 0, got_from = -1, got_total = 0;
	MPI_Request rr, sr;
	MPI_Status st;
	MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rr);
	for (int i = 0; i < n; i++) {
		out = i;
		MPI_Isend(&out, 1, MPI_INT, to, 2, MPI_COMM_WORLD, &sr);
		int got = 0, sent = 0, idx;
		while (!got) {
			MPI_Test(&rr, &got, &st);
			if (!sent)
				MPI_Testany(1, &sr, &idx, &sent, MPI_STATUS_IGNORE);
		}
		got_from = st.MPI_SOURCE;
		got_total++;
		if (i + 1 < n)
			MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rr);
		MPI_Wait(&sr, MPI_STATUS_IGNORE);
	}
	if (argc > 2) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/poll.r%d", argv[2], rank);
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d sent %d to %d, received %d from %d\n", rank, n, to, got_total, got_from);
			fclose(f);
		}
	}
	MPI_Finalize();
	return 0;
}
