/* ra.c - hpcc's MPIRandomAccess communication, for MPIs Debian's hpcc is not built for: updates bucketed per rank and sent by MPI_Isend, a wildcard MPI_Irecv kept posted and polled by MPI_Test, the send polled by MPI_Testany; prints GUP/s. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * As hpcc's MPIRandomAccess does it (its "Power2NodesMPIRandomAccessUpdate"):
 * each rank owns 2^LOG slots of a table spread over the ranks and makes 4
 * updates per slot; an update for another rank waits in that rank's bucket
 * until the bucket is full, then goes by MPI_Isend once the previous send
 * is done; between updates the rank polls its one receive; at the end each
 * rank sends its buckets and a FINISHED message to every other, and
 * drains until it has all of theirs.  Only the pattern is hpcc's: the
 * figure (GUP/s) is this program's, a ratio between runs, not hpcc's.
 */
enum { UPDATE_TAG = 1, FINISHED_TAG = 2, BUCKET = 1024, LOG = 20 };
#define POLY 0x0000000000000007ULL

static uint64_t *table, mask, owned;
static int me, size;

static void apply(const uint64_t *u, int n)
{
	for (int i = 0; i < n; i++)
		table[u[i] & (owned - 1)] ^= u[i];
}

/* One poll of the receive: what came is applied, the receive posted
 * again; returns the FINISHED messages it took. */
static int poll_in(MPI_Request *in, uint64_t *buf)
{
	int done = 0, n;
	MPI_Status st;
	MPI_Test(in, &done, &st);
	if (!done)
		return 0;
	int finished = st.MPI_TAG == FINISHED_TAG;
	if (!finished) {
		MPI_Get_count(&st, MPI_UINT64_T, &n);
		apply(buf, n);
	}
	MPI_Irecv(buf, BUCKET, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, in);
	return finished;
}

/* A bucket's updates (tag UPDATE_TAG; FINISHED_TAG: none, the last) to
 * rank pe, once the previous send is done (polled by MPI_Testany, the
 * receive polled meanwhile). */
static int send_bucket(int pe, const uint64_t *bucket, int n, int tag, uint64_t *out, MPI_Request *outreq,
		       MPI_Request *in, uint64_t *inbuf)
{
	int finished = 0, idx, done = 0;
	while (!done) {
		MPI_Testany(1, outreq, &idx, &done, MPI_STATUS_IGNORE);
		if (!done)
			finished += poll_in(in, inbuf);
	}
	for (int i = 0; i < n; i++)
		out[i] = bucket[i];
	MPI_Isend(out, n, MPI_UINT64_T, pe, tag, MPI_COMM_WORLD, outreq);
	return finished;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	owned = 1ULL << (argc > 1 ? atoi(argv[1]) : LOG);
	mask = owned * (uint64_t)size - 1;
	table = calloc(owned, sizeof(*table));
	uint64_t *buckets = calloc((size_t)size * BUCKET, sizeof(uint64_t)), inbuf[BUCKET], out[BUCKET];
	int *fill = calloc((size_t)size, sizeof(int)), finished = 0;
	if (!table || !buckets || !fill)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Request in, outreq = MPI_REQUEST_NULL;
	MPI_Irecv(inbuf, BUCKET, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &in);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	uint64_t ran = 0x123456789ULL * (uint64_t)(me + 1), updates = 4 * owned;
	for (uint64_t i = 0; i < updates; i++) {
		if ((i & 15) == 0)
			finished += poll_in(&in, inbuf);
		ran = (ran << 1) ^ ((int64_t)ran < 0 ? POLY : 0);
		int pe = (int)((ran & mask) / owned);
		if (pe == me) {
			table[ran & (owned - 1)] ^= ran;
			continue;
		}
		buckets[(size_t)pe * BUCKET + fill[pe]++] = ran;
		if (fill[pe] == BUCKET) {
			finished += send_bucket(pe, &buckets[(size_t)pe * BUCKET], BUCKET, UPDATE_TAG, out, &outreq, &in, inbuf);
			fill[pe] = 0;
		}
	}
	for (int pe = 0; pe < size; pe++)
		if (pe != me && fill[pe])
			finished += send_bucket(pe, &buckets[(size_t)pe * BUCKET], fill[pe], UPDATE_TAG, out, &outreq, &in, inbuf);
	for (int pe = 0; pe < size; pe++)
		if (pe != me)
			finished += send_bucket(pe, NULL, 0, FINISHED_TAG, out, &outreq, &in, inbuf);
	while (finished < size - 1)
		finished += poll_in(&in, inbuf);
	MPI_Wait(&outreq, MPI_STATUS_IGNORE);
	double t = MPI_Wtime() - t0;
	MPI_Cancel(&in);
	MPI_Wait(&in, MPI_STATUS_IGNORE);
	double total = (double)updates * size, gups = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Reduce(&t, &gups, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (me == 0)
		printf("%.6f\n", total / gups / 1e9);
	free(table);
	free(buckets);
	free(fill);
	MPI_Finalize();
	return 0;
}
