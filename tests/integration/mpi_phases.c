/* mpi_phases.c - phases named through es_region.h and MPI_Pcontrol, around known calls, for t_phases.sh; runs without EventSpace too. */
#include <mpi.h>
#include <stdio.h>

#include "collectors/mpi/es_region.h"

/*
 * Per rank (t_phases.sh holds the profile to it): phase, times entered,
 * MPI calls whose innermost phase it is:
 *   setup 1 2, solve 1 0, step 3 3, inner 1 1 (ended by solve's end),
 *   Pcontrol 2 1 1, Pcontrol 3 1 1, last 1 1 (ended by MPI_Finalize)
 */
int main(int argc, char **argv)
{
	int me, v = 1, sum;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	es_region_begin("setup");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	es_region_end("setup");
	es_region_begin("solve");
	for (int i = 0; i < 3; i++) {
		es_region_begin("step");
		MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		es_region_end("step");
	}
	es_region_begin("inner");
	MPI_Barrier(MPI_COMM_WORLD);
	es_region_end("solve");
	es_region_end("never begun"); /* ends nothing */
	MPI_Pcontrol(2);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(3);
	MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Pcontrol(0);
	es_region_begin("last");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (me == 0)
		printf("mpi_phases: done\n");
	return 0;
}
