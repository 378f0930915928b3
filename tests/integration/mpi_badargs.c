/* mpi_badargs.c - MPI calls with arguments MPI refuses (NULL requests, statuses, counts, messages, handles of nothing), under MPI_ERRORS_RETURN: each call's error class, which t_badargs.sh holds the same with and without EventSpace. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/*
 * mpirun -np 2 mpi_badargs [NAME]: rank 0 prints a line per case,
 *   NAME CLASS
 * CLASS the error class MPI_Error_class gives the call's return code (0:
 * MPI_SUCCESS).  Every rank runs every case (collectives with a bad
 * argument return at once on each).  With NAME, only that case (to find
 * which crashed).  The cases are what MPI must refuse with a code, not a
 * crash, on both MPIs (each was run without EventSpace first).
 */

static MPI_Comm null_comm = MPI_COMM_NULL;
static int buf[64], rbuf[64], flag, idx, indices[4];
static MPI_Status st, sts[4];

static int run(const char *name)
{
	MPI_Request reqs[4] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	MPI_Message msg = MPI_MESSAGE_NULL;
	MPI_Comm c = MPI_COMM_NULL;
	MPI_Win w = MPI_WIN_NULL;
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#define IS(n) (!strcmp(name, n))
	if (IS("Request_free(NULL)")) return MPI_Request_free(NULL);
	if (IS("Cancel(NULL)")) return MPI_Cancel(NULL);
	if (IS("Wait(NULL)")) return MPI_Wait(NULL, &st);
	if (IS("Test(NULL)")) return MPI_Test(NULL, &flag, &st);
	if (IS("Test(flag NULL)")) return MPI_Test(&reqs[0], NULL, &st);
	if (IS("Testall(flag NULL)")) return MPI_Testall(1, reqs, NULL, sts);
	if (IS("Testany(index NULL)")) return MPI_Testany(1, reqs, NULL, &flag, &st);
	if (IS("Testany(flag NULL)")) return MPI_Testany(1, reqs, &idx, NULL, &st);
	if (IS("Testsome(outcount NULL)")) return MPI_Testsome(1, reqs, NULL, indices, sts);
	if (IS("Waitsome(outcount NULL)")) return MPI_Waitsome(1, reqs, NULL, indices, sts);
	if (IS("Waitany(index NULL)")) return MPI_Waitany(1, reqs, NULL, &st);
	if (IS("Waitall(count -1)")) return MPI_Waitall(-1, reqs, sts);
	if (IS("Testall(count -1)")) return MPI_Testall(-1, reqs, &flag, sts);
	if (IS("Isend(request NULL)")) return MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, NULL);
	if (IS("Irecv(request NULL)")) return MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, NULL);
	if (IS("Send_init(request NULL)")) return MPI_Send_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, NULL);
	if (IS("Recv_init(request NULL)")) return MPI_Recv_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_SELF, NULL);
	if (IS("Ibarrier(request NULL)")) return MPI_Ibarrier(MPI_COMM_WORLD, NULL);
	if (IS("Iallreduce(request NULL)"))
		return MPI_Iallreduce(buf, rbuf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL);
	if (IS("Start(NULL)")) return MPI_Start(NULL);
	if (IS("Mprobe(message NULL)")) return MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL, &st);
	if (IS("Improbe(message NULL)")) return MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, NULL, &st);
	if (IS("Improbe(flag NULL)")) return MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL, &msg, &st);
	if (IS("Iprobe(flag NULL)")) return MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL, &st);
	if (IS("Mrecv(message NULL)")) return MPI_Mrecv(buf, 1, MPI_INT, NULL, &st);
	if (IS("Imrecv(message NULL)")) return MPI_Imrecv(buf, 1, MPI_INT, NULL, &reqs[0]);
	if (IS("Mrecv(MESSAGE_NULL)")) return MPI_Mrecv(buf, 1, MPI_INT, &msg, &st);
	if (IS("Comm_free(NULL)")) return MPI_Comm_free(NULL);
	if (IS("Comm_free(COMM_NULL)")) return MPI_Comm_free(&c);
	if (IS("Comm_dup(newcomm NULL)")) return MPI_Comm_dup(MPI_COMM_WORLD, NULL);
	if (IS("Comm_split(newcomm NULL)")) return MPI_Comm_split(MPI_COMM_WORLD, 0, 0, NULL);
	if (IS("Comm_dup(COMM_NULL)")) return MPI_Comm_dup(null_comm, &c);
	if (IS("Win_free(NULL)")) return MPI_Win_free(NULL);
	if (IS("Win_free(WIN_NULL)")) return MPI_Win_free(&w);
	if (IS("Win_fence(WIN_NULL)")) return MPI_Win_fence(0, w);
	if (IS("Send(COMM_NULL)")) return MPI_Send(buf, 1, MPI_INT, 0, 0, null_comm);
	if (IS("Recv(COMM_NULL)")) return MPI_Recv(buf, 1, MPI_INT, 0, 0, null_comm, &st);
	if (IS("Isend(COMM_NULL)")) return MPI_Isend(buf, 1, MPI_INT, 0, 0, null_comm, &reqs[0]);
	if (IS("Sendrecv(COMM_NULL)"))
		return MPI_Sendrecv(buf, 1, MPI_INT, 0, 0, rbuf, 1, MPI_INT, 0, 0, null_comm, &st);
	if (IS("Barrier(COMM_NULL)")) return MPI_Barrier(null_comm);
	if (IS("Bcast(COMM_NULL)")) return MPI_Bcast(buf, 1, MPI_INT, 0, null_comm);
	if (IS("Allreduce(COMM_NULL)")) return MPI_Allreduce(buf, rbuf, 1, MPI_INT, MPI_SUM, null_comm);
	if (IS("Send(DATATYPE_NULL)")) return MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_SELF);
	if (IS("Send(count -1)")) return MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_SELF);
	if (IS("Send(dest past size)")) return MPI_Send(buf, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
	if (IS("Send(tag -5)")) return MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_SELF);
	if (IS("Bcast(root past size)")) return MPI_Bcast(buf, 1, MPI_INT, size + 5, MPI_COMM_WORLD);
	if (IS("Reduce(OP_NULL)")) return MPI_Reduce(buf, rbuf, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD);
	if (IS("Allreduce(DATATYPE_NULL)"))
		return MPI_Allreduce(buf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
	if (IS("Gather(root past size)"))
		return MPI_Gather(buf, 1, MPI_INT, rbuf, 1, MPI_INT, size + 5, MPI_COMM_WORLD);
	if (IS("Recv(status NULL)")) return MPI_Recv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL);
	if (IS("Probe(status NULL)")) return MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL);
	if (IS("Sendrecv(status NULL)"))
		return MPI_Sendrecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, rbuf, 1, MPI_INT, MPI_PROC_NULL, 0,
				    MPI_COMM_WORLD, NULL);
	return -1;
}

static const char *const cases[] = {
	"Request_free(NULL)", "Cancel(NULL)", "Wait(NULL)", "Test(NULL)", "Test(flag NULL)", "Testall(flag NULL)",
	"Testany(index NULL)", "Testany(flag NULL)", "Testsome(outcount NULL)", "Waitsome(outcount NULL)",
	"Waitany(index NULL)", "Waitall(count -1)", "Testall(count -1)", "Isend(request NULL)",
	"Irecv(request NULL)", "Send_init(request NULL)", "Recv_init(request NULL)", "Ibarrier(request NULL)",
	"Iallreduce(request NULL)", "Start(NULL)", "Mprobe(message NULL)", "Improbe(message NULL)",
	"Improbe(flag NULL)", "Iprobe(flag NULL)", "Mrecv(message NULL)", "Imrecv(message NULL)",
	"Mrecv(MESSAGE_NULL)", "Comm_free(NULL)", "Comm_free(COMM_NULL)", "Comm_dup(newcomm NULL)",
	"Comm_split(newcomm NULL)", "Comm_dup(COMM_NULL)", "Win_free(NULL)", "Win_free(WIN_NULL)",
	"Win_fence(WIN_NULL)", "Send(COMM_NULL)", "Recv(COMM_NULL)", "Isend(COMM_NULL)", "Sendrecv(COMM_NULL)",
	"Barrier(COMM_NULL)", "Bcast(COMM_NULL)", "Allreduce(COMM_NULL)", "Send(DATATYPE_NULL)", "Send(count -1)",
	"Send(dest past size)", "Send(tag -5)", "Bcast(root past size)", "Reduce(OP_NULL)",
	"Allreduce(DATATYPE_NULL)", "Gather(root past size)", "Recv(status NULL)", "Probe(status NULL)",
	"Sendrecv(status NULL)",
};

/* What Open MPI 4 itself does not refuse but crashes on (SIGSEGV without
 * EventSpace): not run under it */
static const char *const ompi_crashes[] = {
	"Comm_free(NULL)", "Iallreduce(request NULL)", "Ibarrier(request NULL)", "Improbe(flag NULL)",
	"Imrecv(message NULL)", "Iprobe(flag NULL)", "Mrecv(MESSAGE_NULL)", "Mrecv(message NULL)", "Win_free(NULL)",
};

static int crashes_here(const char *name, int ompi)
{
	for (size_t i = 0; ompi && i < sizeof(ompi_crashes) / sizeof(ompi_crashes[0]); i++)
		if (!strcmp(name, ompi_crashes[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	/* errors return to the caller wherever MPI raises them */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int len, ompi;
	MPI_Get_library_version(lib, &len);
	ompi = strstr(lib, "Open MPI") != NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if ((argc > 1 && strcmp(argv[1], cases[i])) || (argc == 1 && crashes_here(cases[i], ompi)))
			continue;
		fprintf(stderr, "rank %d: %s\n", me, cases[i]); /* before it runs: a crash names it */
		fflush(stderr);
		int rc = run(cases[i]), cls = rc;
		if (rc != MPI_SUCCESS && rc != -1)
			MPI_Error_class(rc, &cls);
		if (me == 0) {
			printf("%s %d\n", cases[i], cls);
			fflush(stdout);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
