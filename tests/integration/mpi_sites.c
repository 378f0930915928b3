/* mpi_sites.c - MPI calls made from known lines, a known number of times each, for the call-site profile (t_sites.sh). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every call t_sites.sh checks sits on a line marked "site:NAME"; its
 * count per rank is in the table t_sites.sh keeps.  Two ranks.
 * Functions are not inlined so that each keeps its own name in the
 * profile's Parent_Funct column.
 */

#define NOINLINE __attribute__((noinline))

static NOINLINE void exchange(int peer)
{
	double out[64] = { 0 }, in[64];
	MPI_Sendrecv(out, 64, MPI_DOUBLE, peer, 1, in, 64, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* site:sendrecv */
}

static NOINLINE void reduce_twice(int me)
{
	int one = me, sum;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* site:allreduce_a */
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* site:allreduce_b */
}

/* not the function's last act: a tail call would return to main, and the
 * call site would be main's line, as in every profiler of return addresses */
static NOINLINE int barrier_from(void)
{
	int rc = MPI_Barrier(MPI_COMM_WORLD); /* site:barrier_fn */
	return rc + 1;
}

int main(int argc, char **argv)
{
	int me, np;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (np != 2) {
		fprintf(stderr, "mpi_sites: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int peer = 1 - me;
	for (int i = 0; i < 5; i++)
		exchange(peer); /* caller:exchange_loop */
	exchange(peer); /* caller:exchange_once */
	for (int i = 0; i < 3; i++)
		reduce_twice(me); /* caller:reduce */
	int fine = 0;
	for (int i = 0; i < 4; i++)
		fine += barrier_from() == MPI_SUCCESS + 1; /* caller:barrier */
	if (fine != 4)
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_Barrier(MPI_COMM_WORLD); /* site:barrier_main */
	/* a gather whose root's share is in place: 3 ints of its own, 5 from rank 1 */
	int gbuf[8] = { 0 }, counts[2] = { 3, 5 }, displs[2] = { 0, 3 };
	MPI_Gatherv(me == 0 ? MPI_IN_PLACE : gbuf, me == 0 ? 0 : 5, MPI_INT, gbuf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD); /* site:gatherv */
	int buf[100] = { 0 };
	if (me == 0) {
		MPI_Send(buf, 100, MPI_INT, 1, 7, MPI_COMM_WORLD); /* site:send */
		MPI_Send(buf, 10, MPI_INT, 1, 7, MPI_COMM_WORLD); /* site:send_small */
	} else {
		for (int i = 0; i < 2; i++)
			MPI_Recv(buf, 100, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* site:recv */
	}
	/* a poll streak: rank 1 waits in MPI_Test until rank 0 has sent, after a barrier */
	MPI_Request rq;
	int flag = 0, polls = 0;
	if (me == 1) {
		MPI_Irecv(buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &rq); /* site:irecv */
		MPI_Barrier(MPI_COMM_WORLD); /* site:barrier_poll1 */
		while (!flag) {
			MPI_Test(&rq, &flag, MPI_STATUS_IGNORE); /* site:test */
			polls++;
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD); /* site:barrier_poll0 */
		MPI_Send(buf, 1, MPI_INT, 1, 8, MPI_COMM_WORLD); /* site:send_poll */
	}
	/* t_sites.sh checks the poll count the profile gives against this */
	if (me == 1 && getenv("MPI_SITES_POLLS")) {
		FILE *f = fopen(getenv("MPI_SITES_POLLS"), "w");
		if (f) {
			fprintf(f, "%d\n", polls);
			fclose(f);
		}
	}
	MPI_Finalize();
	return 0;
}
