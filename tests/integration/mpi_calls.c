/* mpi_calls.c - an MPI program that makes every call libescollect.so records, in a known order, from two threads. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;
static MPI_Comm side;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rank %d: %s:%d: %s\n", rank, __FILE__, __LINE__, #c); failures++; } } while (0)

/* A second thread talks on its own communicator while the first works. */
static void *second(void *arg)
{
	(void)arg;
	int out = rank, in = -1;
	MPI_Sendrecv(&out, 2, MPI_INT, (rank + 1) % size, 21, &in, 2, MPI_INT,
		     (rank - 1 + size) % size, 21, side, MPI_STATUS_IGNORE);
	CHECK(in == (rank - 1 + size) % size);
	return NULL;
}

int main(int argc, char **argv)
{
	/* "single": plain MPI_Init and one thread; otherwise two threads */
	int single = argc > 1 && !strcmp(argv[1], "single"), provided = MPI_THREAD_SINGLE;
	if (single)
		MPI_Init(&argc, &argv);
	else
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if ((!single && provided < MPI_THREAD_MULTIPLE) || size < 2) {
		fprintf(stderr, "needs MPI_THREAD_MULTIPLE and 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &side);
	pthread_t th;
	if (!single)
		pthread_create(&th, NULL, second, NULL);

	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	MPI_Barrier(MPI_COMM_WORLD);
	int ints[100];
	double dl[50], dr[50];
	MPI_Status st;
	if (rank == 0) {
		for (int i = 0; i < 100; i++)
			ints[i] = i;
		MPI_Send(ints, 100, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(ints, 100, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
		CHECK(ints[99] == 99);
	}
	MPI_Request rq[2];
	for (int i = 0; i < 50; i++)
		dr[i] = rank;
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &rq[1]);
	MPI_Wait(&rq[0], &st);
	MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
	CHECK(dl[0] == left);
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &rq[1]);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 11, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 11, MPI_COMM_WORLD, &rq[1]);
	int idx;
	MPI_Waitany(2, rq, &idx, &st);
	MPI_Waitany(2, rq, &idx, &st);
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 12, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 12, MPI_COMM_WORLD, &rq[1]);
	int flag = 0;
	while (!flag)
		MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
	/* the single test, any and some forms, and waitsome */
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 16, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 16, MPI_COMM_WORLD, &rq[1]);
	for (int k = 0; k < 2; k++)
		for (flag = 0; !flag;)
			MPI_Test(&rq[k], &flag, &st);
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 17, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 17, MPI_COMM_WORLD, &rq[1]);
	for (int done = 0; done < 2;) {
		MPI_Testany(2, rq, &idx, &flag, &st);
		done += flag && idx != MPI_UNDEFINED;
	}
	int outn, ids[2];
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 18, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 18, MPI_COMM_WORLD, &rq[1]);
	for (int done = 0; done < 2;) {
		MPI_Testsome(2, rq, &outn, ids, MPI_STATUSES_IGNORE);
		done += outn == MPI_UNDEFINED ? 0 : outn;
	}
	MPI_Irecv(dl, 50, MPI_DOUBLE, left, 19, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(dr, 50, MPI_DOUBLE, right, 19, MPI_COMM_WORLD, &rq[1]);
	for (int done = 0; done < 2;) {
		MPI_Waitsome(2, rq, &outn, ids, MPI_STATUSES_IGNORE);
		done += outn == MPI_UNDEFINED ? 0 : outn;
	}
	/* two sends at once, both done within their calls: Open MPI gives
	 * them one handle, and each must still complete once */
	double x = rank, from_l, from_r;
	MPI_Request r4[4];
	MPI_Irecv(&from_l, 1, MPI_DOUBLE, left, 20, MPI_COMM_WORLD, &r4[0]);
	MPI_Irecv(&from_r, 1, MPI_DOUBLE, right, 22, MPI_COMM_WORLD, &r4[1]);
	MPI_Isend(&x, 1, MPI_DOUBLE, right, 20, MPI_COMM_WORLD, &r4[2]);
	MPI_Isend(&x, 1, MPI_DOUBLE, left, 22, MPI_COMM_WORLD, &r4[3]);
	MPI_Waitall(4, r4, MPI_STATUSES_IGNORE);
	CHECK(from_l == left && from_r == right);
	int two[2] = { rank, rank }, back[2];
	MPI_Sendrecv(two, 2, MPI_INT, right, 13, back, 2, MPI_INT, left, 13, MPI_COMM_WORLD, &st);
	CHECK(back[0] == left);
	if (rank == 0) {
		int out3[3] = { 1, 2, 3 };
		MPI_Send(out3, 3, MPI_INT, 1, 14, MPI_COMM_WORLD);
		MPI_Send(out3, 3, MPI_INT, 1, 15, MPI_COMM_WORLD);
	} else if (rank == 1) {
		int three[3];
		MPI_Probe(0, 14, MPI_COMM_WORLD, &st);
		MPI_Recv(three, 3, MPI_INT, 0, 14, MPI_COMM_WORLD, &st);
		flag = 0;
		while (!flag)
			MPI_Iprobe(0, 15, MPI_COMM_WORLD, &flag, &st);
		MPI_Recv(three, 3, MPI_INT, 0, 15, MPI_COMM_WORLD, &st);
	}

	/* collectives, checked against what they must compute */
	int ten[10];
	for (int i = 0; i < 10; i++)
		ten[i] = rank == 0 ? 100 + i : -1;
	MPI_Bcast(ten, 10, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(ten[9] == 109);
	double four[4] = { 1, 2, 3, rank }, four_sum[4];
	MPI_Reduce(four, four_sum, 4, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
	if (rank == size - 1)
		CHECK(four_sum[0] == size && four_sum[3] == size * (size - 1) / 2);
	long long ll[2] = { rank, 1 }, llsum[2];
	MPI_Allreduce(ll, llsum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	CHECK(llsum[1] == size);
	int *all = calloc((size_t)size * (size_t)(size + 2) * 3, sizeof(int));
	int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
	int *ones = calloc((size_t)size, sizeof(int)), *pos = calloc((size_t)size, sizeof(int));
	int mine3[3] = { rank, rank, rank }, mine_v[64];
	for (int i = 0, d = 0; i < size; i++) {
		counts[i] = i + 1;
		displs[i] = d;
		d += i + 1;
		ones[i] = 1;
		pos[i] = i;
	}
	for (int i = 0; i < 64; i++)
		mine_v[i] = rank;
	MPI_Gather(mine3, 3, MPI_INT, all, 3, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(all[3 * (size - 1)] == size - 1);
	MPI_Gatherv(mine_v, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(all[displs[size - 1]] == size - 1);
	int got2[2], gotv[64];
	for (int i = 0; i < 2 * size; i++)
		all[i] = i / 2;
	MPI_Scatter(all, 2, MPI_INT, got2, 2, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(got2[1] == rank);
	for (int i = 0; i < size; i++)
		for (int k = 0; k < counts[i]; k++)
			all[displs[i] + k] = i;
	MPI_Scatterv(all, counts, displs, MPI_INT, gotv, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
	CHECK(gotv[rank] == rank);
	MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	CHECK(all[size - 1] == size - 1);
	MPI_Allgatherv(mine_v, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
	CHECK(all[displs[size - 1]] == size - 1);
	int *to = calloc((size_t)size, sizeof(int)), *from = calloc((size_t)size, sizeof(int));
	for (int i = 0; i < size; i++)
		to[i] = rank * 100 + i;
	MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD);
	CHECK(from[size - 1] == (size - 1) * 100 + rank);
	MPI_Alltoallv(to, ones, pos, MPI_INT, from, ones, pos, MPI_INT, MPI_COMM_WORLD);
	CHECK(from[0] == rank);
	int rs;
	MPI_Reduce_scatter(ones, &rs, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(rs == size);
	/* MPI_IN_PLACE: the send arguments are ignored, even a null type */
	ll[0] = 1;
	MPI_Allreduce(MPI_IN_PLACE, ll, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	CHECK(ll[0] == size);
	all[rank] = rank;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
	CHECK(all[size - 1] == size - 1);
	if (!single)
		pthread_join(th, NULL);
	free(all), free(counts), free(displs), free(ones), free(pos), free(to), free(from);
	MPI_Comm_free(&side);
	MPI_Finalize();
	return failures ? 1 : 0;
}
