/* mpi_every.c - makes every MPI call libescollect gained beyond the first list, on 2 ranks, and writes down what each must record. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * Run under libescollect.so with ES_EXPECT_DIR set: rank N writes
 * ES_EXPECT_DIR/expect.rN, which mpi_expect then holds against the trace.
 * Every call checks its result: a wrong answer fails the program, so the
 * wrappers are shown to keep MPI's semantics as well as to record.
 */

#define NO -1L  /* "-": no element */
#define ANYV -2L /* "*": whatever it is */

static FILE *ex;
static int me, peer, failures;
static long cw; /* collectives on MPI_COMM_WORLD so far: the next one's number */

static void put_field(long v)
{
	if (v == NO)
		fprintf(ex, " -");
	else if (v == ANYV)
		fprintf(ex, " *");
	else
		fprintf(ex, " %ld", v);
}

static void E(const char *name, long element, long size, long arg)
{
	fprintf(ex, "%s", name);
	put_field(element);
	put_field(size);
	put_field(arg);
	fputc('\n', ex);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "rank %d: %s: wrong\n", me, what);
		failures++;
	}
}

/* Open MPI gives a send it completed within its call the one request it
 * gives every such request (a send to MPI_PROC_NULL gets it too): that
 * send's completion is recorded in its call, just after the call's tuple.
 * Found through PMPI, unrecorded. */
static MPI_Request shared_done = MPI_REQUEST_NULL;

static void find_shared(void)
{
	MPI_Request x, y;
	PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &x);
	PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &y);
	shared_done = x == y ? x : MPI_REQUEST_NULL;
	PMPI_Wait(&x, MPI_STATUS_IGNORE);
	PMPI_Wait(&y, MPI_STATUS_IGNORE);
}

/* A send just made: whether it completed in its call (its completion's
 * tuple expected now, and not at its wait). */
static int done_in_call(MPI_Request r, const char *name, long element, long size, long arg)
{
	if (r == MPI_REQUEST_NULL || r != shared_done)
		return 0;
	char done[64];
	snprintf(done, sizeof(done), "%s/done", name);
	E(done, element, size, arg);
	return 1;
}

/* A request completed by a wait: its completion's tuple (with what came,
 * for a receive), then the wait's (element: how many of the requests it
 * was given nobody follows; arg: how many it was given). */
static void done_wait(const char *name, long element, long size, long arg, const char *wait, long given)
{
	char done[64];
	snprintf(done, sizeof(done), "%s/done", name);
	E(done, element, size, arg);
	E(wait, 0, 0, given);
}

/* A nonblocking collective on WORLD, completed by MPI_Wait. */
static void icoll_wait(const char *name, long element, long size, MPI_Request *rq)
{
	char done[64];
	snprintf(done, sizeof(done), "%s/done", name);
	E(name, element, size, cw);
	MPI_Wait(rq, MPI_STATUS_IGNORE);
	E(done, element, size, cw);
	E("MPI_Wait", 0, 0, 1);
	cw++;
}

/*
 * Streaks: rank 1 polls a receive rank 0 has not sent (fruitless, for
 * certain: rank 0 sends only when told), tells rank 0, and waits for a
 * second message sent after the first; the next poll then completes.  Its
 * one tuple has the source and size of what came, and arg = every poll of
 * the streak.  First with the status ignored (the collector reads its own),
 * then given (the program must get it).
 */
static void streak(const int *a, int tag, int polls, int any)
{
	int c[4] = { 0 }, flag = 1, idx;
	MPI_Request rq[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	MPI_Status st;
	if (me == 0) {
		MPI_Recv(NULL, 0, MPI_INT, 1, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 1, 0, tag + 1);
		MPI_Send(a, 4, MPI_INT, 1, tag, MPI_COMM_WORLD);
		E("MPI_Send", 1, 16, tag);
		MPI_Send(NULL, 0, MPI_INT, 1, tag + 2, MPI_COMM_WORLD);
		E("MPI_Send", 1, 0, tag + 2);
		return;
	}
	MPI_Irecv(c, 4, MPI_INT, 0, tag, MPI_COMM_WORLD, &rq[1]);
	E("MPI_Irecv", 0, 16, tag);
	for (int k = 0; k < polls - 1; k++) {
		if (any)
			MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
		else
			MPI_Test(&rq[1], &flag, &st);
		check(!flag, "a poll before the send");
	}
	MPI_Send(NULL, 0, MPI_INT, 0, tag + 1, MPI_COMM_WORLD);
	E("MPI_Send", 0, 0, tag + 1);
	MPI_Recv(NULL, 0, MPI_INT, 0, tag + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	E("MPI_Recv", 0, 0, tag + 2);
	/* the receive's completion, with what came, then the streak */
	E("MPI_Irecv/done", 0, 16, tag);
	if (any) {
		MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
		check(flag && idx == 1, "MPI_Testany after the send");
		E("MPI_Testany", NO, 0, polls);
	} else {
		MPI_Test(&rq[1], &flag, &st);
		check(flag && st.MPI_SOURCE == 0 && st.MPI_TAG == tag, "MPI_Test's status after the send");
		E("MPI_Test", NO, 0, polls);
	}
	check(c[0] == 0 && rq[1] == MPI_REQUEST_NULL, "the streak's receive"); /* rank 0's a */
}

static void streaks(const int *a)
{
	streak(a, 30, 4, 1);
	streak(a, 33, 3, 0);
}

static void point_to_point(void)
{
	int a[4] = { me, me, me, me }, b[4] = { 0 };
	MPI_Status st;
	MPI_Request rq[2];
	static char bsend_buf[4096];
	MPI_Buffer_attach(bsend_buf, sizeof(bsend_buf));
	if (me == 0) {
		MPI_Bsend(a, 4, MPI_INT, 1, 1, MPI_COMM_WORLD);
		E("MPI_Bsend", 1, 16, 1);
		MPI_Ssend(a, 4, MPI_INT, 1, 2, MPI_COMM_WORLD);
		E("MPI_Ssend", 1, 16, 2);
	} else {
		MPI_Recv(b, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 16, 1);
		MPI_Recv(b, 4, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
		E("MPI_Recv", 0, 16, 2);
		check(st.MPI_SOURCE == 0 && st.MPI_TAG == 2, "MPI_Recv's status");
	}
	/* a ready send needs its receive posted first */
	if (me == 1) {
		MPI_Irecv(b, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Irecv", 0, 16, 3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	E("MPI_Barrier", NO, 0, cw++);
	if (me == 0) {
		MPI_Rsend(a, 4, MPI_INT, 1, 3, MPI_COMM_WORLD);
		E("MPI_Rsend", 1, 16, 3);
		MPI_Ibsend(a, 4, MPI_INT, 1, 4, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Ibsend", 1, 16, 4);
		int ib = done_in_call(rq[0], "MPI_Ibsend", 1, 16, 4);
		MPI_Issend(a, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[1]);
		E("MPI_Issend", 1, 16, 5);
		int is = done_in_call(rq[1], "MPI_Issend", 1, 16, 5);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		if (!ib)
			E("MPI_Ibsend/done", 1, 16, 4);
		if (!is)
			E("MPI_Issend/done", 1, 16, 5);
		E("MPI_Waitall", 0, 0, 2);
	} else {
		MPI_Wait(&rq[0], &st);
		done_wait("MPI_Irecv", 0, 16, 3, "MPI_Wait", 1);
		MPI_Recv(b, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 16, 4);
		MPI_Recv(b, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 16, 5);
		MPI_Irecv(b, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Irecv", 0, 16, 6);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	E("MPI_Barrier", NO, 0, cw++);
	if (me == 0) {
		MPI_Irsend(a, 4, MPI_INT, 1, 6, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Irsend", 1, 16, 6);
	}
	if (me == 0 && done_in_call(rq[0], "MPI_Irsend", 1, 16, 6)) {
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		E("MPI_Wait", 0, 0, 1);
	} else {
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		done_wait(me == 1 ? "MPI_Irecv" : "MPI_Irsend", me == 1 ? 0 : 1, 16, 6, "MPI_Wait", 1);
	}
	check(me == 0 || b[0] == 0, "MPI_Irsend's data");

	/* both directions at once, in one buffer: the send, then what came */
	int r[4] = { me, me, me, me };
	MPI_Sendrecv_replace(r, 4, MPI_INT, peer, 7, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	E("MPI_Sendrecv_replace", peer, 16, 7);
	E("MPI_Sendrecv_replace/done", peer, 16, 7);
	check(r[3] == peer, "MPI_Sendrecv_replace's data");

	/* matched probes */
	MPI_Message msg;
	if (me == 0) {
		MPI_Send(a, 4, MPI_INT, 1, 8, MPI_COMM_WORLD);
		E("MPI_Send", 1, 16, 8);
		MPI_Send(a, 4, MPI_INT, 1, 9, MPI_COMM_WORLD);
		E("MPI_Send", 1, 16, 9);
	} else {
		MPI_Mprobe(0, 8, MPI_COMM_WORLD, &msg, &st);
		E("MPI_Mprobe", 0, 16, 8);
		MPI_Mrecv(b, 4, MPI_INT, &msg, MPI_STATUS_IGNORE);
		E("MPI_Mrecv", 0, 16, 8);
		int flag = 0;
		while (!flag)
			MPI_Improbe(0, 9, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
		E("MPI_Improbe", 0, 16, ANYV); /* arg: the polls it took */
		MPI_Imrecv(b, 4, MPI_INT, &msg, &rq[0]);
		E("MPI_Imrecv", NO, 16, NO);
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		done_wait("MPI_Imrecv", 0, 16, 9, "MPI_Wait", 1);
	}
	/* a poll that does not free its request */
	if (me == 0) {
		int flag = 0;
		MPI_Isend(a, 4, MPI_INT, 1, 10, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Isend", 1, 16, 10);
		int in = done_in_call(rq[0], "MPI_Isend", 1, 16, 10);
		while (!flag)
			MPI_Request_get_status(rq[0], &flag, MPI_STATUS_IGNORE);
		E("MPI_Request_get_status", ANYV, ANYV, ANYV);
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		if (in)
			E("MPI_Wait", 0, 0, 1);
		else
			done_wait("MPI_Isend", 1, 16, 10, "MPI_Wait", 1);
	} else {
		MPI_Recv(b, 4, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 16, 10);
	}
	streaks(a);
	void *old;
	int oldsize;
	MPI_Buffer_detach(&old, &oldsize);

	/* MPI_PROC_NULL: done at once, nobody on the other side */
	MPI_Send(a, 4, MPI_INT, MPI_PROC_NULL, 20, MPI_COMM_WORLD);
	E("MPI_Send", NO, 16, 20);
	MPI_Recv(b, 4, MPI_INT, MPI_PROC_NULL, 20, MPI_COMM_WORLD, &st);
	E("MPI_Recv", NO, 0, 20);
	check(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "MPI_Recv from MPI_PROC_NULL");
	/* MPI_REQUEST_NULL: nothing to wait for */
	rq[0] = rq[1] = MPI_REQUEST_NULL;
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	E("MPI_Waitall", 0, 0, 2);
	int flag = 0;
	MPI_Test(&rq[0], &flag, &st);
	/* done at once, having completed nothing: a fruitless poll, counted in
	 * the streak the next MPI_Test that completes writes (below, ANYV) */
	check(flag && st.MPI_SOURCE == MPI_ANY_SOURCE, "MPI_Test of MPI_REQUEST_NULL");
	/* an error returned, not raised: the program sees it, the tuple says so */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rc = MPI_Send(a, 4, MPI_INT, 99, 21, MPI_COMM_WORLD);
	check(rc != MPI_SUCCESS, "MPI_Send to rank 99 returned an error");
	E("MPI_Send/failed", NO, 16, 21); /* no world rank is that */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void persistent(void)
{
	int a[4] = { 7, 7, 7, 7 }, b[4] = { 0 };
	MPI_Request rq[2];
	MPI_Send_init(a, 4, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[0]);
	E("MPI_Send_init", peer, 16, 11);
	MPI_Recv_init(b, 4, MPI_INT, peer, 11, MPI_COMM_WORLD, &rq[1]);
	E("MPI_Recv_init", peer, 16, 11);
	for (int i = 0; i < 2; i++) {
		MPI_Startall(2, rq);
		E("MPI_Startall", peer, 16, 11);
		E("MPI_Startall/recv", peer, 16, 11);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		E("MPI_Send_init/done", peer, 16, 11);
		E("MPI_Recv_init/done", peer, 16, 11);
		E("MPI_Waitall", 0, 0, 2);
	}
	MPI_Start(&rq[1]);
	E("MPI_Start/recv", peer, 16, 11);
	MPI_Start(&rq[0]);
	E("MPI_Start", peer, 16, 11);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	E("MPI_Send_init/done", peer, 16, 11);
	E("MPI_Recv_init/done", peer, 16, 11);
	E("MPI_Waitall", 0, 0, 2);
	check(b[0] == 7, "persistent requests' data");
	MPI_Request_free(&rq[0]);
	E("MPI_Request_free", NO, 0, 0);
	MPI_Request_free(&rq[1]);
	E("MPI_Request_free", NO, 0, 0);
	/* the other sending modes, rank 0 to 1 */
	char buf[256];
	MPI_Buffer_attach(buf, sizeof(buf));
	if (me == 0) {
		MPI_Ssend_init(a, 2, MPI_INT, 1, 12, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Ssend_init", 1, 8, 12);
		MPI_Bsend_init(a, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &rq[1]);
		E("MPI_Bsend_init", 1, 4, 13);
		MPI_Startall(2, rq);
		E("MPI_Startall", 1, 8, 12);
		E("MPI_Startall", 1, 4, 13);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		E("MPI_Ssend_init/done", 1, 8, 12);
		E("MPI_Bsend_init/done", 1, 4, 13);
		E("MPI_Waitall", 0, 0, 2);
		MPI_Request_free(&rq[0]);
		E("MPI_Request_free", NO, 0, 0);
		MPI_Request_free(&rq[1]);
		E("MPI_Request_free", NO, 0, 0);
	} else {
		MPI_Recv(b, 2, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 8, 12);
		MPI_Recv(b, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		E("MPI_Recv", 0, 4, 13);
		MPI_Irecv(b, 1, MPI_INT, 0, 14, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Irecv", 0, 4, 14);
	}
	MPI_Barrier(MPI_COMM_WORLD); /* the ready send's receive is posted */
	E("MPI_Barrier", NO, 0, cw++);
	if (me == 0) {
		MPI_Rsend_init(a, 1, MPI_INT, 1, 14, MPI_COMM_WORLD, &rq[0]);
		E("MPI_Rsend_init", 1, 4, 14);
		MPI_Start(&rq[0]);
		E("MPI_Start", 1, 4, 14);
	}
	MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
	done_wait(me == 1 ? "MPI_Irecv" : "MPI_Rsend_init", me == 1 ? 0 : 1, 4, 14, "MPI_Wait", 1);
	if (me == 0) {
		MPI_Request_free(&rq[0]);
		E("MPI_Request_free", NO, 0, 0);
	}
	void *old;
	int oldsize;
	MPI_Buffer_detach(&old, &oldsize);
}

static void collectives(void)
{
	int one = me + 1, two[2] = { me, me }, out[2] = { 0 }, counts[2] = { 1, 1 }, displs[2] = { 0, 1 };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT };
	MPI_Request rq[2];
	MPI_Alltoallw(two, counts, (int[]){ 0, 4 }, types, out, counts, (int[]){ 0, 4 }, types,
		      MPI_COMM_WORLD);
	E("MPI_Alltoallw", NO, 8, cw++);
	MPI_Reduce_scatter_block(two, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	E("MPI_Reduce_scatter_block", NO, 8, cw++);
	check(out[0] == 1, "MPI_Reduce_scatter_block's sum");
	MPI_Scan(&one, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	E("MPI_Scan", NO, 4, cw++);
	check(out[0] == (me == 0 ? 1 : 3), "MPI_Scan's prefix");
	MPI_Exscan(&one, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	E("MPI_Exscan", NO, 4, cw++);

	/* every nonblocking collective, completed by a wait */
	MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ibarrier", NO, 0, &rq[0]);
	MPI_Ibcast(two, 2, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ibcast", 0, 8, &rq[0]);
	MPI_Ireduce(two, out, 2, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ireduce", 1, 8, &rq[0]);
	MPI_Iallreduce(&one, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iallreduce", NO, 4, &rq[0]);
	check(out[0] == 3, "MPI_Iallreduce's sum");
	MPI_Igather(&one, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Igather", 0, 4, &rq[0]);
	MPI_Igatherv(&one, 1, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Igatherv", 0, 4, &rq[0]);
	MPI_Iscatter(two, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iscatter", 0, me == 0 ? 8 : 0, &rq[0]);
	MPI_Iscatterv(two, counts, displs, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iscatterv", 0, me == 0 ? 8 : 0, &rq[0]);
	MPI_Iallgather(&one, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iallgather", NO, 4, &rq[0]);
	MPI_Iallgatherv(&one, 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iallgatherv", NO, 4, &rq[0]);
	MPI_Ialltoall(two, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ialltoall", NO, 8, &rq[0]);
	MPI_Ialltoallv(two, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ialltoallv", NO, 8, &rq[0]);
	MPI_Ialltoallw(two, counts, (int[]){ 0, 4 }, types, out, counts, (int[]){ 0, 4 }, types,
		       MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ialltoallw", NO, 8, &rq[0]);
	MPI_Ireduce_scatter(two, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ireduce_scatter", NO, 8, &rq[0]);
	MPI_Ireduce_scatter_block(two, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Ireduce_scatter_block", NO, 8, &rq[0]);
	MPI_Iscan(&one, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iscan", NO, 4, &rq[0]);
	MPI_Iexscan(&one, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
	icoll_wait("MPI_Iexscan", NO, 4, &rq[0]);

	/* two at once, completed together: each closes its own call */
	MPI_Iallreduce(&one, &out[0], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[0]);
	E("MPI_Iallreduce", NO, 4, cw);
	MPI_Ibcast(&out[1], 1, MPI_INT, 1, MPI_COMM_WORLD, &rq[1]);
	E("MPI_Ibcast", 1, 4, cw + 1);
	MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	E("MPI_Iallreduce/done", NO, 4, cw);
	E("MPI_Ibcast/done", 1, 4, cw + 1);
	E("MPI_Waitall", 0, 0, 2);
	cw += 2;
	check(out[0] == 2, "MPI_Iallreduce's max");
	/* completed by a poll: the poll that completes it closes it */
	int flag = 0;
	MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
	E("MPI_Ibarrier", NO, 0, cw);
	while (!flag)
		MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
	E("MPI_Ibarrier/done", NO, 0, cw++);
	E("MPI_Test", NO, 0, ANYV);
}

/* Communicators: made collectively over the old one (which numbers them),
 * and known to monitors at once. */
static void communicators(void)
{
	MPI_Comm dup, dupi, split, type, created, grouped, idup, self, inter, merged;
	MPI_Group world;
	MPI_Request rq;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	E("MPI_Comm_dup", NO, 0, cw++);
	MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupi);
	E("MPI_Comm_dup_with_info", NO, 0, cw++);
	MPI_Comm_split(MPI_COMM_WORLD, 0, me, &split);
	E("MPI_Comm_split", NO, 0, cw++);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &type);
	E("MPI_Comm_split_type", NO, 0, cw++);
	MPI_Comm_create(MPI_COMM_WORLD, world, &created);
	E("MPI_Comm_create", NO, 0, cw++);
	MPI_Comm_create_group(MPI_COMM_WORLD, world, 5, &grouped);
	E("MPI_Comm_create_group", NO, 0, 5); /* over the group only: arg is its tag */
	MPI_Comm_idup(MPI_COMM_WORLD, &idup, &rq);
	icoll_wait("MPI_Comm_idup", NO, 0, &rq);
	/* two single-rank halves, bridged into an intercommunicator and merged */
	MPI_Comm_split(MPI_COMM_WORLD, me, 0, &self);
	E("MPI_Comm_split", NO, 0, cw++);
	MPI_Intercomm_create(self, 0, MPI_COMM_WORLD, peer, 6, &inter);
	E("MPI_Intercomm_create", NO, 0, 0); /* the first on self */
	MPI_Intercomm_merge(inter, me, &merged);
	E("MPI_Intercomm_merge", NO, 0, 0);    /* the first on inter */
	int n = 0;
	MPI_Comm_size(merged, &n);
	check(n == 2, "MPI_Intercomm_merge's size");
	MPI_Comm *all[] = { &dup, &dupi, &split, &type, &created, &grouped, &idup, &merged, &inter, &self };
	long first[] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1 }; /* inter and self had one collective */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		MPI_Comm_free(all[i]);
		E("MPI_Comm_free", NO, 0, first[i]);
	}
	MPI_Group_free(&world);
}

/* Topologies and the neighbourhood collectives over them. */
static void neighbours(void)
{
	MPI_Comm cart, sub, graph, dist, adj;
	MPI_Request rq;
	int two[2] = { me, me }, out[2], counts[2] = { 1, 1 }, displs[2] = { 0, 1 };
	MPI_Aint wdispls[2] = { 0, 4 };
	MPI_Datatype types[2] = { MPI_INT, MPI_INT };
	MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){ 2 }, (int[]){ 1 }, 0, &cart);
	E("MPI_Cart_create", NO, 0, cw++);
	/* a periodic ring of 2: two neighbours, the same rank on both sides */
	long c = 0;
	MPI_Neighbor_allgather(two, 1, MPI_INT, out, 1, MPI_INT, cart);
	E("MPI_Neighbor_allgather", NO, 8, c++);
	MPI_Neighbor_allgatherv(two, 1, MPI_INT, out, counts, displs, MPI_INT, cart);
	E("MPI_Neighbor_allgatherv", NO, 8, c++);
	MPI_Neighbor_alltoall(two, 1, MPI_INT, out, 1, MPI_INT, cart);
	E("MPI_Neighbor_alltoall", NO, 8, c++);
	MPI_Neighbor_alltoallv(two, counts, displs, MPI_INT, out, counts, displs, MPI_INT, cart);
	E("MPI_Neighbor_alltoallv", NO, 8, c++);
	MPI_Neighbor_alltoallw(two, counts, wdispls, types, out, counts, wdispls, types, cart);
	E("MPI_Neighbor_alltoallw", NO, 8, c++);
	const char *inames[] = { "MPI_Ineighbor_allgather", "MPI_Ineighbor_allgatherv",
				 "MPI_Ineighbor_alltoall", "MPI_Ineighbor_alltoallv",
				 "MPI_Ineighbor_alltoallw" };
	for (int i = 0; i < 5; i++) {
		char done[64];
		if (i == 0)
			MPI_Ineighbor_allgather(two, 1, MPI_INT, out, 1, MPI_INT, cart, &rq);
		else if (i == 1)
			MPI_Ineighbor_allgatherv(two, 1, MPI_INT, out, counts, displs, MPI_INT, cart, &rq);
		else if (i == 2)
			MPI_Ineighbor_alltoall(two, 1, MPI_INT, out, 1, MPI_INT, cart, &rq);
		else if (i == 3)
			MPI_Ineighbor_alltoallv(two, counts, displs, MPI_INT, out, counts, displs, MPI_INT,
						cart, &rq);
		else
			MPI_Ineighbor_alltoallw(two, counts, wdispls, types, out, counts, wdispls, types,
						cart, &rq);
		E(inames[i], NO, 8, c);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		snprintf(done, sizeof(done), "%s/done", inames[i]);
		E(done, NO, 8, c++);
		E("MPI_Wait", 0, 0, 1);
	}
	MPI_Cart_sub(cart, (int[]){ 1 }, &sub);
	E("MPI_Cart_sub", NO, 0, c++);
	MPI_Comm_free(&sub);
	E("MPI_Comm_free", NO, 0, 0);
	MPI_Comm_free(&cart);
	E("MPI_Comm_free", NO, 0, c);
	/* a graph: one neighbour each */
	MPI_Graph_create(MPI_COMM_WORLD, 2, (int[]){ 1, 2 }, (int[]){ 1, 0 }, 0, &graph);
	E("MPI_Graph_create", NO, 0, cw++);
	MPI_Neighbor_allgather(two, 1, MPI_INT, out, 1, MPI_INT, graph);
	E("MPI_Neighbor_allgather", NO, 4, 0);
	MPI_Comm_free(&graph);
	E("MPI_Comm_free", NO, 0, 1);
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &peer, (int[]){ 1 }, 1, &peer, (int[]){ 1 },
				       MPI_INFO_NULL, 0, &adj);
	E("MPI_Dist_graph_create_adjacent", NO, 0, cw++);
	MPI_Neighbor_alltoall(two, 1, MPI_INT, out, 1, MPI_INT, adj);
	E("MPI_Neighbor_alltoall", NO, 4, 0);
	check(out[0] == peer, "MPI_Neighbor_alltoall's data");
	MPI_Comm_free(&adj);
	E("MPI_Comm_free", NO, 0, 1);
	MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, (int[]){ 1 }, &peer, (int[]){ 1 }, MPI_INFO_NULL,
			      0, &dist);
	E("MPI_Dist_graph_create", NO, 0, cw++);
	MPI_Comm_free(&dist);
	E("MPI_Comm_free", NO, 0, 0);
}

/* One-sided: element is the target, comm the window;
 * fences, creation and freeing are numbered on the window or communicator. */
static void one_sided(void)
{
	int *base, got[2], res[2], cmp = -1, one = 1;
	MPI_Win win;
	MPI_Request rq;
	MPI_Group pg, world;
	MPI_Alloc_mem(8 * sizeof(int), MPI_INFO_NULL, &base);
	for (int i = 0; i < 8; i++)
		base[i] = me * 100 + i;
	MPI_Win_create(base, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	E("MPI_Win_create", NO, 0, cw++);
	long wn = 0;
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	int two[2] = { me, me };
	MPI_Put(two, 2, MPI_INT, peer, 0, 2, MPI_INT, win);
	E("MPI_Put", peer, 8, ANYV);
	MPI_Get(got, 2, MPI_INT, peer, 4, 2, MPI_INT, win);
	E("MPI_Get", peer, 8, ANYV);
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	check(got[0] == peer * 100 + 4, "MPI_Get's data");
	MPI_Accumulate(two, 2, MPI_INT, peer, 2, 2, MPI_INT, MPI_SUM, win);
	E("MPI_Accumulate", peer, 8, ANYV);
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	MPI_Get_accumulate(two, 2, MPI_INT, res, 2, MPI_INT, peer, 2, 2, MPI_INT, MPI_SUM, win);
	E("MPI_Get_accumulate", peer, 8, ANYV);
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	MPI_Fetch_and_op(&one, res, MPI_INT, peer, 6, MPI_SUM, win);
	E("MPI_Fetch_and_op", peer, 4, ANYV);
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	MPI_Compare_and_swap(&one, &cmp, res, MPI_INT, peer, 7, win);
	E("MPI_Compare_and_swap", peer, 4, ANYV);
	MPI_Win_fence(0, win);
	E("MPI_Win_fence", NO, 0, wn++);
	/* passive target */
	MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
	E("MPI_Win_lock", peer, 0, ANYV);
	MPI_Rput(two, 1, MPI_INT, peer, 0, 1, MPI_INT, win, &rq);
	E("MPI_Rput", peer, 4, ANYV);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	done_wait("MPI_Rput", peer, 4, 0, "MPI_Wait", 1);
	MPI_Rget(got, 1, MPI_INT, peer, 1, 1, MPI_INT, win, &rq);
	E("MPI_Rget", peer, 4, ANYV);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	done_wait("MPI_Rget", peer, 4, 0, "MPI_Wait", 1);
	MPI_Raccumulate(two, 1, MPI_INT, peer, 3, 1, MPI_INT, MPI_SUM, win, &rq);
	E("MPI_Raccumulate", peer, 4, ANYV);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	done_wait("MPI_Raccumulate", peer, 4, 0, "MPI_Wait", 1);
	MPI_Rget_accumulate(two, 1, MPI_INT, res, 1, MPI_INT, peer, 3, 1, MPI_INT, MPI_SUM, win, &rq);
	E("MPI_Rget_accumulate", peer, 4, ANYV);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	done_wait("MPI_Rget_accumulate", peer, 4, 0, "MPI_Wait", 1);
	MPI_Win_flush(peer, win);
	E("MPI_Win_flush", peer, 0, ANYV);
	MPI_Win_flush_local(peer, win);
	E("MPI_Win_flush_local", peer, 0, ANYV);
	MPI_Win_unlock(peer, win);
	E("MPI_Win_unlock", peer, 0, ANYV);
	MPI_Win_lock_all(0, win);
	E("MPI_Win_lock_all", NO, 0, ANYV);
	MPI_Win_flush_all(win);
	E("MPI_Win_flush_all", NO, 0, ANYV);
	MPI_Win_flush_local_all(win);
	E("MPI_Win_flush_local_all", NO, 0, ANYV);
	MPI_Win_sync(win);
	E("MPI_Win_sync", NO, 0, ANYV);
	MPI_Win_unlock_all(win);
	E("MPI_Win_unlock_all", NO, 0, ANYV);
	/* post, start, complete, wait (and test) */
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &peer, &pg);
	MPI_Barrier(MPI_COMM_WORLD);
	E("MPI_Barrier", NO, 0, cw++);
	MPI_Win_post(pg, 0, win);
	E("MPI_Win_post", NO, 0, ANYV);
	MPI_Win_start(pg, 0, win);
	E("MPI_Win_start", NO, 0, ANYV);
	MPI_Put(two, 1, MPI_INT, peer, 5, 1, MPI_INT, win);
	E("MPI_Put", peer, 4, ANYV);
	MPI_Win_complete(win);
	E("MPI_Win_complete", NO, 0, ANYV);
	MPI_Win_wait(win);
	E("MPI_Win_wait", NO, 0, ANYV);
	MPI_Win_post(pg, 0, win);
	E("MPI_Win_post", NO, 0, ANYV);
	MPI_Win_start(pg, 0, win);
	E("MPI_Win_start", NO, 0, ANYV);
	MPI_Win_complete(win);
	E("MPI_Win_complete", NO, 0, ANYV);
	int flag = 0;
	while (!flag)
		MPI_Win_test(win, &flag);
	E("MPI_Win_test", NO, 0, ANYV);
	MPI_Group_free(&pg);
	MPI_Group_free(&world);
	MPI_Win_free(&win);
	E("MPI_Win_free", NO, 0, wn);
	MPI_Free_mem(base);
	/* the other ways to make a window */
	int *mem;
	MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	E("MPI_Win_allocate", NO, 0, cw++);
	MPI_Win_free(&win);
	E("MPI_Win_free", NO, 0, 0);
	MPI_Win_allocate_shared(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
	E("MPI_Win_allocate_shared", NO, 0, cw++);
	MPI_Win_free(&win);
	E("MPI_Win_free", NO, 0, 0);
	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	E("MPI_Win_create_dynamic", NO, 0, cw++);
	MPI_Win_free(&win);
	E("MPI_Win_free", NO, 0, 0);
}

/* Sizes of derived types, which the collector asks MPI for (predefined
 * ones it keeps in a table): a type freed and another made, perhaps at the
 * same handle, is measured anew. */
static void derived_types(void)
{
	int a[12] = { 0 };
	for (int k = 1; k <= 3; k++) {
		MPI_Datatype t;
		MPI_Type_contiguous(k, MPI_INT, &t);
		MPI_Type_commit(&t);
		if (me == 0) {
			MPI_Send(a, 2, t, 1, 40 + k, MPI_COMM_WORLD);
			E("MPI_Send", 1, 8 * k, 40 + k);
		} else {
			MPI_Recv(a, 2, t, 0, 40 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			E("MPI_Recv", 0, 8 * k, 40 + k);
		}
		MPI_Type_free(&t);
	}
}

int main(int argc, char **argv)
{
	int n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	const char *dir = getenv("ES_EXPECT_DIR");
	char file[4096];
	snprintf(file, sizeof(file), "%s/expect.r%d", dir ? dir : "(unset)", me);
	if (n != 2 || !dir || !(ex = fopen(file, "w"))) {
		fprintf(stderr, "mpi_every: needs 2 ranks and ES_EXPECT_DIR (%s)\n", file);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	peer = 1 - me;
	find_shared();
	E("MPI_Init", me, 0, 0);
	point_to_point();
	persistent();
	collectives();
	communicators();
	neighbours();
	one_sided();
	derived_types();
	E("MPI_Finalize", me, 0, 0);
	fclose(ex);
	MPI_Finalize();
	return failures ? 1 : 0;
}
