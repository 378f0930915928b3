/* mpi_crash.c - rank 1 sends a known run of messages, then ends badly (SIGSEGV, MPI_Abort, SIGKILL) or hangs, while rank 0 waits for one more: what a black box must keep. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, n = argc > 2 ? atoi(argv[2]) : 0;
	const char *how = argc > 1 ? argv[1] : "";
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (n <= 0 || (strcmp(how, "segv") && strcmp(how, "abort") && strcmp(how, "kill") &&
		       strcmp(how, "hang"))) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_crash segv|abort|kill|hang N\n");
		MPI_Finalize();
		return 2;
	}
	char buf[4096] = { 0 };
	if (rank == 1) {
		/* message i: tag i, 4 * i bytes, each a tuple the archive must hold */
		for (int i = 1; i <= n; i++)
			MPI_Send(buf, 4 * i, MPI_BYTE, 0, i, MPI_COMM_WORLD);
		struct timespec ts = { 0, 300 * 1000 * 1000 }; /* the recorder reads them first */
		nanosleep(&ts, NULL);
		if (!strcmp(how, "segv"))
			raise(SIGSEGV);
		else if (!strcmp(how, "abort"))
			MPI_Abort(MPI_COMM_WORLD, 7);
		else if (!strcmp(how, "kill"))
			raise(SIGKILL);
		MPI_Recv(buf, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* hang */
	} else if (rank == 0) {
		for (int i = 1; i <= n; i++)
			MPI_Recv(buf, 4 * i, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(buf, 1, MPI_BYTE, 1, n + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never comes */
	}
	MPI_Finalize();
	return 0;
}
