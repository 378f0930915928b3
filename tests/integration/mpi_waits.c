/* mpi_waits.c - known delays for t_waits.sh: in each step one rank works D ms (phase "delay") before the step's call, so one wait-state pattern appears where it says; each rank writes when it entered the step's key call, as its own clock says. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/mpi/es_region.h"

/*
 * mpirun -np 3 mpi_waits D DIR [UNTIL]   (D in ms; 0: a balanced run)
 *
 * Every step is balanced: the ranks that do not wait work D too, so that
 * all leave the step about D after they began it; the barrier between
 * steps ("sync") waits only for what the scheduler did.  DIR/truth.RANK
 * gets a line per step and per sync:
 *   STEP RANK ENTER_NS LINE
 * the CLOCK_MONOTONIC time just before the rank's key call (the call it
 * waits in, or the delayed rank's late call) and that call's line, from
 * which t_waits.sh computes each wait as Scalasca defines it.  With UNTIL
 * (esview's run) the first step, a Late Sender, comes again until the file
 * UNTIL exists (two minutes at most): how soon a monitor sees it is the
 * machine's to decide, not a number of steps.
 */

static FILE *truth;
static int me;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void work(int ms)
{
	es_region_begin("delay");
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
	es_region_end("delay");
}

static void ok(int rc)
{
	if (rc != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 1);
}

/* the key call: the clock read just before it, written after it (no
 * write between the two for the scheduler to stop it in); its result
 * checked, so that it is never a tail call (whose site would be the
 * caller's) */
static double stamp;
/* with the call's leave too (a fifth field): the one-sided epochs' rules
 * judge both ends, and a wait lies within its call, whatever the scheduler
 * did between the program's stamps and the collector's */
#define KEY2(step, call) (stamp = now_ns(), ok(call), \
			  fprintf(truth, "%s %d %.0f %d %.0f\n", (step), me, stamp, __LINE__, now_ns()))
#define KEY(step, call) KEY2(step, call)

static void late_sender(int d)
{
	int x = 1;
	if (me == 1)
		work(d), KEY("late_sender", MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
	else if (me == 0)
		KEY("late_sender", MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	else
		work(d);
}

static void late_sender_wait(int d)
{
	int x = 2;
	MPI_Request r;
	if (me == 1) {
		work(d);
		KEY("late_sender_wait", MPI_Isend(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &r));
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	} else if (me == 0) {
		MPI_Irecv(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
		KEY("late_sender_wait", MPI_Wait(&r, MPI_STATUS_IGNORE));
	} else {
		work(d);
	}
}

/* rank 2's message is there before rank 1's, which rank 0 waits for first */
static void wrong_order(int d)
{
	int x = 3;
	if (me == 2) {
		KEY("wrong_order", MPI_Send(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
		work(d);
	} else if (me == 1) {
		work(d), KEY("wrong_order", MPI_Send(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
	} else {
		KEY("wrong_order", MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		KEY("wrong_order2", MPI_Recv(&x, 1, MPI_INT, 2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
}

static void late_receiver(int d)
{
	int x = 4;
	if (me == 0)
		KEY("late_receiver", MPI_Ssend(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
	else if (me == 1)
		work(d), KEY("late_receiver", MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	else
		work(d);
}

static void barrier(int d)
{
	if (me == 2)
		work(d);
	KEY("barrier", MPI_Barrier(MPI_COMM_WORLD));
}

static void allreduce(int d)
{
	int x = me, y;
	if (me == 1)
		work(d);
	KEY("allreduce", MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

static void bcast(int d)
{
	int x = 5;
	if (me == 0)
		work(d);
	KEY("bcast", MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
}

static void reduce(int d)
{
	int x = me, y;
	if (me != 0)
		work(d);
	KEY("reduce", MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}

static void scan(int d)
{
	int x = me, y;
	if (me == 0)
		work(d);
	KEY("scan", MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

static void ibcast(int d)
{
	int x = 6;
	MPI_Request r;
	if (me == 0) {
		work(d);
		KEY("ibcast", MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	} else {
		MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
		KEY("ibcast", MPI_Wait(&r, MPI_STATUS_IGNORE));
	}
}

/* one-sided, general active target: rank 1's window exposed to rank 0 */
static MPI_Win win;
static int cell;
static MPI_Group peer_group(int rank)
{
	MPI_Group world, g;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &rank, &g);
	MPI_Group_free(&world);
	return g;
}

/* An epoch of rank 0 on rank 1's window, the target's calls after dt ms
 * of work, the origin's complete after do_ ms: every call's enter and
 * leave written, for Scalasca's rules on both ends (waits_check.py). */
static void epoch(const char *step, int dt, int do_)
{
	int x = 7;
	if (me == 1) {
		MPI_Group g = peer_group(0);
		work(dt);
		char s[64];
		snprintf(s, sizeof(s), "%s_post", step);
		KEY2(s, MPI_Win_post(g, 0, win));
		snprintf(s, sizeof(s), "%s_wait", step);
		KEY2(s, MPI_Win_wait(win));
		MPI_Group_free(&g);
	} else if (me == 0) {
		MPI_Group g = peer_group(1);
		char s[64];
		snprintf(s, sizeof(s), "%s_start", step);
		KEY2(s, MPI_Win_start(g, 0, win));
		work(do_);
		MPI_Put(&x, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
		snprintf(s, sizeof(s), "%s_complete", step);
		KEY2(s, MPI_Win_complete(win));
		MPI_Group_free(&g);
	} else {
		work(dt > do_ ? dt : do_);
	}
}

/* the target posts late: the origin waits in MPI_Win_start or _complete */
static void late_post(int d)
{
	epoch("late_post", d, 0);
}

/* the origin completes late: the target waits in MPI_Win_wait */
static void early_wait(int d)
{
	epoch("early_wait", 0, d);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int n;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if ((argc != 3 && argc != 4) || n != 3) {
		if (!me)
			fprintf(stderr, "usage: mpirun -np 3 mpi_waits D_MS DIR [UNTIL]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int d = atoi(argv[1]);
	double until_ns = now_ns() + 120e9;
	char path[4096];
	snprintf(path, sizeof(path), "%s/truth.%d", argv[2], me);
	if (!(truth = fopen(path, "w"))) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Win_create(&cell, sizeof(cell), sizeof(cell), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	void (*steps[])(int) = { late_sender, late_sender_wait, wrong_order, late_receiver, barrier,
				 allreduce, bcast, reduce, scan, ibcast, late_post, early_wait };
	for (int more = argc == 4; more;) { /* rank 0 decides, for all */
		KEY2("sync", MPI_Barrier(MPI_COMM_WORLD));
		late_sender(d);
		if (me == 0)
			more = access(argv[3], F_OK) != 0 && now_ns() < until_ns;
		MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	for (size_t i = 0; i <= sizeof(steps) / sizeof(steps[0]); i++) {
		KEY2("sync", MPI_Barrier(MPI_COMM_WORLD)); /* with its leave: the scheduler's waits are bounded, not guessed */
		if (i < sizeof(steps) / sizeof(steps[0]))
			steps[i](d);
	}
	MPI_Win_free(&win);
	fclose(truth);
	MPI_Finalize();
	return 0;
}
