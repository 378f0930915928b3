/* mpi_wait.c - MPI programs that stall or deadlock in known ways, for heartbeat's waiting relation to name. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;
static double seconds;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Work that calls no MPI, for at least s seconds.  With MPI_WAIT_UNTIL
 * set to a file's path, the work goes on until that file exists (at most
 * two minutes): the test makes it once heartbeat has named the stall, so
 * whether a loaded machine gives heartbeat a period inside the work is no
 * longer the machine's speed to decide. */
static void compute(double s)
{
	const char *until_file = s > 0.1 ? getenv("MPI_WAIT_UNTIL") : NULL;
	double start = now(), until = start + s;
	volatile double x = 1;
	while (now() < until || (until_file && access(until_file, F_OK) != 0 && now() < start + 120))
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
}

/* Tells the test (MPI_WAIT_MADE, a file's path) that what it waits for
 * before it starts heartbeat is made: a file, made by each rank, the
 * test counting them. */
static void made(void)
{
	const char *path = getenv("MPI_WAIT_MADE");
	if (!path)
		return;
	char p[4096];
	snprintf(p, sizeof(p), "%s.%d", path, rank);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static int right_of(int r, int n) { return (r + 1) % n; }
static int left_of(int r, int n) { return (r + n - 1) % n; }

/* --- stalls and deadlocks through blocking calls ------------------------------------------- */

static void cycle(void)
{
	int buf;
	MPI_Recv(&buf, 1, MPI_INT, (rank + 1) % size, 5 + rank, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void chain(void)
{
	int buf = 0;
	if (rank == size - 1)
		compute(seconds);
	else
		MPI_Recv(&buf, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (rank > 0)
		MPI_Send(&buf, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD);
}

static void mismatch(void)
{
	MPI_Comm half;
	int buf = 0, sum;
	MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &half);
	if (rank == 0)
		MPI_Barrier(half);
	else if (rank == 1)
		MPI_Allreduce(&buf, &sum, 1, MPI_INT, MPI_SUM, half);
	else
		MPI_Barrier(MPI_COMM_WORLD);
}

static void any(void)
{
	int buf = 0;
	if (rank == 0) {
		MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int r = 2; r < size; r++)
			MPI_Send(&buf, 1, MPI_INT, r, 4, MPI_COMM_WORLD);
	} else if (rank == 1) {
		compute(seconds);
		MPI_Send(&buf, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&buf, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
}

static void anyknot(void)
{
	int buf;
	MPI_Recv(&buf, 1, MPI_INT, rank ? 0 : MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void early(void)
{
	int buf;
	if (rank != size - 1)
		MPI_Recv(&buf, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void probe(void)
{
	int buf, flag = 0;
	if (rank == 0)
		while (!flag)
			MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	else if (rank == 1)
		MPI_Recv(&buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void progress(void)
{
	/* the same number of steps on every rank, about 4 ms each */
	double sum;
	int buf = 0, halo, steps = (int)(seconds * 250) + 1;
	for (int s = 0; s < steps; s++) {
		compute(0.002);
		MPI_Sendrecv(&buf, 1, MPI_INT, right_of(rank, size), 1, &halo, 1, MPI_INT,
			     left_of(rank, size), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		double v = 1;
		MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
}

/* The same steps on every rank, about 4 ms each, through requests,
 * persistent requests, a split numbered backwards, a nonblocking
 * collective, rooted collectives and a poll: nothing stalls. */
static void progressreq(void)
{
	MPI_Comm back;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &back);
	int me, out = rank, in[2], sum, flag, idx, steps = (int)(seconds * 250) + 1;
	MPI_Comm_rank(back, &me);
	int l = left_of(me, size), r = right_of(me, size);
	MPI_Request pr[2], rq[4];
	MPI_Recv_init(&in[0], 1, MPI_INT, l, 8, back, &pr[0]);
	MPI_Send_init(&out, 1, MPI_INT, r, 8, back, &pr[1]);
	for (int s = 0; s < steps; s++) {
		compute(0.002);
		MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 1, back, &rq[0]);
		MPI_Irecv(&in[1], 1, MPI_INT, r, 2, back, &rq[1]);
		MPI_Isend(&out, 1, MPI_INT, r, 1, back, &rq[2]);
		MPI_Isend(&out, 1, MPI_INT, l, 2, back, &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		MPI_Startall(2, pr);
		MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
		MPI_Iallreduce(&out, &sum, 1, MPI_INT, MPI_SUM, back, &rq[0]);
		MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
		MPI_Reduce(&out, &sum, 1, MPI_INT, MPI_SUM, s % size, MPI_COMM_WORLD);
		MPI_Bcast(&sum, 1, MPI_INT, (s + 1) % size, back);
		MPI_Irecv(&in[0], 1, MPI_INT, l, 3, back, &rq[0]);
		MPI_Send(&out, 1, MPI_INT, r, 3, back);
		for (flag = 0; !flag;)
			MPI_Testany(1, rq, &idx, &flag, MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&pr[0]);
	MPI_Request_free(&pr[1]);
	MPI_Comm_free(&back);
}

/* --- correct programs whose last world rank is slow: a stall, never a deadlock ----------- */

/* Each rank exchanges with both neighbours on c through requests; the
 * slow one computes before it posts anything. */
static void halo_on(MPI_Comm c, int any_source)
{
	int me, n, out[2] = { rank, rank }, in[2];
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	MPI_Request rq[4];
	if (rank == size - 1)
		compute(seconds);
	int l = any_source ? MPI_ANY_SOURCE : left_of(me, n), r = any_source ? MPI_ANY_SOURCE : right_of(me, n);
	MPI_Irecv(&in[0], 1, MPI_INT, l, 1, c, &rq[0]);
	MPI_Irecv(&in[1], 1, MPI_INT, r, 1, c, &rq[1]);
	MPI_Isend(&out[0], 1, MPI_INT, left_of(me, n), 1, c, &rq[2]);
	MPI_Isend(&out[1], 1, MPI_INT, right_of(me, n), 1, c, &rq[3]);
	MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
}

/* On a split that numbers the ranks backwards: rank r there is world
 * rank size - 1 - r. */
static void halo(void)
{
	MPI_Comm back;
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &back);
	halo_on(back, 0);
	MPI_Barrier(back);
	MPI_Comm_free(&back);
}

static void anyhalo(void)
{
	halo_on(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Persistent requests in a ring on a duplicate, the slow rank late in
 * the third round. */
static void persist(void)
{
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	int out = rank, in;
	MPI_Request rq[2];
	MPI_Recv_init(&in, 1, MPI_INT, left_of(rank, size), 4, dup, &rq[0]);
	MPI_Send_init(&out, 1, MPI_INT, right_of(rank, size), 4, dup, &rq[1]);
	for (int round = 0; round < 4; round++) {
		if (round == 2 && rank == size - 1)
			compute(seconds);
		MPI_Startall(2, rq);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
	}
	MPI_Request_free(&rq[0]);
	MPI_Request_free(&rq[1]);
	MPI_Comm_free(&dup);
}

/* A Sendrecv ring on comm c, the slow rank late. */
static void ring_on(MPI_Comm c)
{
	int me, n, out = rank, in;
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	if (rank == size - 1)
		compute(seconds);
	MPI_Sendrecv(&out, 1, MPI_INT, right_of(me, n), 2, &in, 1, MPI_INT, left_of(me, n), 2, c,
		     MPI_STATUS_IGNORE);
}

static void ring(void)
{
	ring_on(MPI_COMM_WORLD);
}

/* 55 duplicates, all alive: rings on the 47th and the 55th. */
static void dups(void)
{
	MPI_Comm d[55];
	for (int i = 0; i < 55; i++)
		MPI_Comm_dup(i ? d[i - 1] : MPI_COMM_WORLD, &d[i]);
	int out = rank, in;
	MPI_Sendrecv(&out, 1, MPI_INT, right_of(rank, size), 2, &in, 1, MPI_INT, left_of(rank, size), 2,
		     d[46], MPI_STATUS_IGNORE);
	ring_on(d[54]);
	for (int i = 54; i >= 0; i--)
		MPI_Comm_free(&d[i]);
}

/* 682 splits, each freed but the last few: ids must never clash. */
static void splits(void)
{
	MPI_Comm keep[4];
	for (int i = 0; i < 682; i++) {
		MPI_Comm c;
		MPI_Comm_split(MPI_COMM_WORLD, (rank + i) % 2, rank, &c);
		if (i >= 678)
			keep[i - 678] = c;
		else
			MPI_Comm_free(&c);
	}
	MPI_Comm whole;
	MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &whole);
	ring_on(whole);
	MPI_Comm_free(&whole);
	for (int i = 0; i < 4; i++)
		MPI_Comm_free(&keep[i]);
}

/* One communicator made first and kept, 20,000 made and freed after it
 * (mpi.comms holds 16,383): a ring on the first. */
static void manycomms(void)
{
	MPI_Comm keep;
	MPI_Comm_dup(MPI_COMM_WORLD, &keep);
	/* of MPI_COMM_SELF: each rank comes round alone, not at the pace of
	 * 40,000 collectives on a loaded machine */
	for (int i = 0; i < 20000; i++) {
		MPI_Comm c;
		MPI_Comm_dup(MPI_COMM_SELF, &c);
		MPI_Comm_free(&c);
	}
	made();
	ring_on(keep);
	MPI_Comm_free(&keep);
}

/* Two halves joined by an intercommunicator: each rank of the first
 * receives from its partner in the second, the slow rank among them. */
static void intercomm(void)
{
	MPI_Comm half, inter;
	int side = rank < size / 2 ? 0 : 1, buf = rank;
	MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, side ? 0 : size / 2, 7, &inter);
	int me;
	MPI_Comm_rank(inter, &me);
	if (side == 0) {
		MPI_Recv(&buf, 1, MPI_INT, me, 3, inter, MPI_STATUS_IGNORE);
	} else {
		if (rank == size - 1)
			compute(seconds);
		MPI_Send(&buf, 1, MPI_INT, me, 3, inter);
	}
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
}

/* A Gatherv the slow rank is late for, then a Bcast from its root. */
static void gatherv(void)
{
	int mine[4] = { rank, rank, rank, rank }, all[64], counts[16], displs[16], b = 0;
	for (int r = 0; r < size && r < 16; r++)
		counts[r] = 1 + r % 4, displs[r] = 4 * r;
	if (rank == size - 1)
		compute(seconds);
	MPI_Gatherv(mine, 1 + rank % 4, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

/* A loop of MPI_Testany on a receive from the slow rank. */
static void testany(void)
{
	int buf = rank, flag = 0, idx;
	MPI_Request rq[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
	if (rank == 0) {
		MPI_Irecv(&buf, 1, MPI_INT, size - 1, 6, MPI_COMM_WORLD, &rq[1]);
		while (!flag)
			MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
	} else if (rank == size - 1) {
		compute(seconds);
		MPI_Send(&buf, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* --- deadlocks through requests ------------------------------------------------------------ */

/* A nonblocking barrier against a blocking one. */
static void nbc(void)
{
	MPI_Request rq;
	if (rank == 0) {
		MPI_Ibarrier(MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
}

/* Each receives from its right through MPI_Wait before it sends. */
static void waitcycle(void)
{
	int buf = rank;
	MPI_Request rq;
	MPI_Irecv(&buf, 1, MPI_INT, right_of(rank, size), 5, MPI_COMM_WORLD, &rq);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	MPI_Send(&buf, 1, MPI_INT, left_of(rank, size), 5, MPI_COMM_WORLD);
}

/* A persistent receive for tag 1; the persistent send has tag 2 and its
 * sender goes on to a barrier. */
static void ptag(void)
{
	int buf = rank;
	MPI_Request rq;
	if (rank == 0)
		MPI_Recv_init(&buf, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq);
	else if (rank == 1)
		MPI_Send_init(&buf, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq);
	if (rank < 2) {
		MPI_Start(&rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_Reduce, rank 0 naming itself the root, the others rank 1. */
static void root(void)
{
	int v = 1, sum;
	MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
}

/* A halo exchange in which the last rank sends to nobody and goes on to
 * a barrier. */
static void halonobody(void)
{
	int out[2] = { rank, rank }, in[2];
	MPI_Request rq[4];
	int n = 2;
	MPI_Irecv(&in[0], 1, MPI_INT, left_of(rank, size), 1, MPI_COMM_WORLD, &rq[0]);
	MPI_Irecv(&in[1], 1, MPI_INT, right_of(rank, size), 1, MPI_COMM_WORLD, &rq[1]);
	if (rank != size - 1) {
		MPI_Isend(&out[0], 1, MPI_INT, left_of(rank, size), 1, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(&out[1], 1, MPI_INT, right_of(rank, size), 1, MPI_COMM_WORLD, &rq[3]);
		n = 4;
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 1 waits on a receive whose send rank 0 forgot: rank 0 ends. */
static void forgot(void)
{
	int buf;
	MPI_Request rq;
	if (rank == 1) {
		MPI_Irecv(&buf, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
}

static const struct scenario {
	const char *name;
	void (*run)(void);
	const char *says;
} scenarios[] = {
	{ "cycle", cycle, "rank r receives from r+1 (mod size): a deadlock (-np 3)" },
	{ "chain", chain, "the last rank computes SECONDS; each other rank receives from the next" },
	{ "mismatch", mismatch, "ranks 0 and 1 of one half: MPI_Barrier against MPI_Allreduce; the\n"
				"\t\tothers wait in a barrier of the world (-np 4)" },
	{ "any", any, "rank 0 receives from any source; rank 1 computes SECONDS, then sends;\n"
		      "\t\trank 2 receives from rank 0 (-np 3)" },
	{ "anyknot", anyknot, "rank 0 receives from any source; the others receive from rank 0" },
	{ "early", early, "the last rank finalizes at once; the others receive from it" },
	{ "probe", probe, "rank 0 polls MPI_Iprobe for a message from rank 1, which receives from\n"
			  "\t\trank 0: a deadlock through a loop of polls (-np 2)" },
	{ "progress", progress, "a ring and an allreduce, for SECONDS: nothing stalls" },
	{ "progressreq", progressreq, "halos, persistent requests, collectives blocking and not,\n"
				      "\t\ta poll, on a split numbered backwards, for SECONDS" },
	/* correct, the last rank computing SECONDS */
	{ "halo", halo, "Irecv, Isend both ways, Waitall on a split numbered backwards" },
	{ "anyhalo", anyhalo, "the same on WORLD, receiving from any source" },
	{ "persist", persist, "a ring of persistent requests on a duplicate" },
	{ "ring", ring, "a ring of MPI_Sendrecv" },
	{ "dups", dups, "55 live duplicates: rings on the 47th and 55th" },
	{ "splits", splits, "682 splits, then a ring on one more" },
	{ "manycomms", manycomms, "a ring on a duplicate made before 20,000 others made and freed" },
	{ "intercomm", intercomm, "the first half receives from the second through an\n"
				  "\t\tintercommunicator (-np 4)" },
	{ "gatherv", gatherv, "MPI_Gatherv to rank 0, then MPI_Bcast from it" },
	{ "testany", testany, "rank 0 polls MPI_Testany for a receive from the last" },
	/* deadlocks through requests */
	{ "nbc", nbc, "rank 0 in MPI_Ibarrier and MPI_Wait, the others in MPI_Barrier" },
	{ "waitcycle", waitcycle, "each waits on a receive from its right before it sends" },
	{ "ptag", ptag, "a persistent receive of tag 1, a persistent send of tag 2" },
	{ "root", root, "MPI_Reduce to root 0 on rank 0, root 1 on the others" },
	{ "halonobody", halonobody, "a halo exchange whose last rank sends nothing" },
	{ "forgot", forgot, "rank 1 waits on a receive from rank 0, which ends" },
};
enum { NSCENARIOS = sizeof(scenarios) / sizeof(scenarios[0]) };

static void usage(void)
{
	fputs("usage: mpi_wait SCENARIO SECONDS\n", stderr);
	for (int i = 0; i < NSCENARIOS; i++)
		fprintf(stderr, "  %-12s  %s\n", scenarios[i].name, scenarios[i].says);
}

int main(int argc, char **argv)
{
	const struct scenario *sc = NULL;
	for (int i = 0; argc == 3 && i < NSCENARIOS; i++)
		if (!strcmp(argv[1], scenarios[i].name))
			sc = &scenarios[i];
	if (!sc) {
		usage();
		return 2;
	}
	seconds = atof(argv[2]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	sc->run();
	MPI_Finalize();
	return 0;
}
