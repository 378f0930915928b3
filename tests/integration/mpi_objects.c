/* mpi_objects.c - a program with an object monitors steer (es_object.h): fields of each kind, methods, a safe point each step; it runs until a monitor calls sim.stop (or 120 s), then prints what it ended with. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/mpi/es_object.h"

static int kicks, stopping, held;
static double last_kick;

static void kick(void *arg, double v)
{
	(void)arg;
	kicks++;
	last_kick = v;
}

static void stop(void *arg, double v)
{
	(void)arg, (void)v;
	stopping = 1;
}

/* hold: no safe point until the file argv[1] exists (a monitor's asks queue) */
static void hold(void *arg, double v)
{
	(void)arg, (void)v;
	held = 1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *release = argc > 1 ? argv[1] : "/nonexistent";
	double rate = argc > 2 ? 0.2 : 1, v[4] = { 0 }, sum = 0, odd[2] = { NAN, -INFINITY };
	int steps = 0, mode = 0;
	double flow = 0;
	/* argv[2]: the README's names (the wind tunnel's: tunnel.inflow in [0, 1]) */
	int readme = argc > 2 && !strcmp(argv[2], "tunnel");
	es_object *o = es_object_create(readme ? "tunnel" : "sim", "a simulation to steer");
	int rc = (readme ? es_object_double(o, "inflow", &rate, 1, 1, 0, 1, "particles in")
			 : es_object_double(o, "rate", &rate, 1, 1, 0, 10, "how fast it goes")) ||
		 es_object_int(o, "steps", &steps, 1, 0, 0, 0, "steps made") ||
		 es_object_double(o, "v", v, 4, 1, -1, 1, "a vector") ||
		 es_object_int(o, "mode", &mode, 1, 1, 0, 3, "a mode") ||
		 es_object_double(o, "odd", odd, 2, 0, 0, 0, "what a program may publish: NaN, infinity") ||
		 es_object_method(o, "kick", kick, NULL, "count a kick") ||
		 es_object_method(o, "stop", stop, NULL, "end the run") ||
		 es_object_method(o, "hold", hold, NULL, "no safe point until the release file exists") ||
		 /* and the README's sample's other two: a sensor, and a method with an argument */
		 (readme && (es_object_double(o, "mass_flow", &flow, 1, 0, 0, 0, "mass flow through the exit") ||
			     es_object_method(o, "reset", kick, NULL, "start the flow again")));
	/* declared wrong: said on stderr, refused */
	int bad;
	if (es_object_int(o, "steps", &bad, 1, 0, 0, 1, "again") == 0 || es_object_create("2bad", "") != NULL)
		rc = 1;
	double t0 = now();
	int applied = 0;
	while (!rc) {
		steps++;
		sum += rate;
		flow = rate + 0.5; /* what comes in, and what was there */
		es_object_publish(o);
		if (held && access(release, F_OK) == 0)
			held = 0;
		if (!held)
			applied += es_object_sync();
		int go = !stopping && now() - t0 < 120, all;
		MPI_Allreduce(&go, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (!all)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	/* a stop asked of every rank may have ended the loop on another rank
	 * first; esctl writes rank 0's ask first, so rank 0 has its own now
	 * (what t_objects checks) */
	applied += es_object_sync();
	printf("rank %d: rate=%g v=%g,%g,%g,%g mode=%d kicks=%d last_kick=%g applied=%d stopped=%d\n", rank, rate,
	       v[0], v[1], v[2], v[3], mode, kicks, last_kick, applied, stopping);
	MPI_Finalize();
	return rc;
}
