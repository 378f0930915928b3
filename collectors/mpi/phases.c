/* phases.c - a program's named phases: MPI_Pcontrol's levels and es_region_begin/end (C and Fortran), a tuple over each. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collectors/mpi/wrap.h"
#include "collectors/mpi/es_region.h"

/*
 * A phase is one tuple (ES_OP_MPI_PCONTROL) from its beginning to its end,
 * written when it ends: arg its name's number on the rank's mpi.regions,
 * element the phases it is within.  Phases nest per thread: ending one
 * ends those begun inside it that are still open, at the same time.
 * MPI_Pcontrol(level) ends the phase the last MPI_Pcontrol began (es_t.pcontrol:
 * its index + 1) and, for
 * a level other than 0, begins "Pcontrol LEVEL" (its further arguments
 * are never read: the standard gives them no type).  Phases still open
 * at MPI_Finalize end there.
 *
 * Names are numbered under es_g.lock at their first use; phases are
 * rare, and a name is looked for by a scan of those met.
 */

#define NAME_MAX_ 59

static struct es_names regions = { .n = 1 }; /* mpi.regions */

void es_phases_setup(ps_server *srv)
{
	es_names_open(&regions, srv, ES_REGIONS_ELEMENT, sizeof(struct es_region_rec), ES_REGIONS_SLOTS,
		      ES_REGIONS_LAYOUT);
}

/* The number of a phase's name (made at its first use), 0 when none is left. */
static uint32_t name_id(const char *name)
{
	pthread_mutex_lock(&es_g.lock);
	uint32_t id = es_names_id(&regions, name);
	pthread_mutex_unlock(&es_g.lock);
	return id;
}

static bool recording(void)
{
	return es_want(ES_OP_MPI_PCONTROL) && es_elem();
}

static void begin(uint32_t id)
{
	if (es_t.nphases < ES_PHASE_DEPTH)
		es_t.phases[es_t.nphases] = (struct es_phase){ id, es_now() };
	es_t.nphases++; /* deeper than kept: counted, so that ends still pair */
}

/* Ends the open phases from the innermost down to number k, all now. */
static void end_down_to(int k)
{
	uint64_t now = es_now();
	while (es_t.nphases > k) {
		int i = --es_t.nphases;
		if (i < ES_PHASE_DEPTH && es_t.phases[i].id)
			es_write(ES_OP_MPI_PCONTROL, es_t.phases[i].start, now, (uint32_t)i, 0, es_t.phases[i].id,
				 ES_COMM_NONE, MPI_SUCCESS);
		if (i + 1 == es_t.pcontrol)
			es_t.pcontrol = 0;
	}
}

void es_region_begin(const char *name)
{
	es_t.ra = __builtin_return_address(0);
	if (recording())
		begin(name_id(name));
}

static void end_named(const char *name)
{
	if (!recording() || !es_t.nphases)
		return;
	uint32_t id = name && *name ? name_id(name) : 0;
	int k = es_t.nphases - 1; /* no name: the innermost */
	while (id && k >= 0 && !(k < ES_PHASE_DEPTH && es_t.phases[k].id == id))
		k--;
	if (k >= 0) /* a name never begun ends nothing */
		end_down_to(k);
}

void es_region_end(const char *name)
{
	es_t.ra = __builtin_return_address(0);
	end_named(name);
}

static int pcontrol(int level)
{
	if (recording()) {
		if (es_t.pcontrol)
			end_down_to(es_t.pcontrol - 1);
		if (level != 0) {
			char name[32];
			snprintf(name, sizeof(name), "Pcontrol %d", level);
			begin(name_id(name));
			es_t.pcontrol = es_t.nphases;
		}
	}
	return PMPI_Pcontrol(level);
}

int MPI_Pcontrol(const int level, ...)
{
	es_t.ra = __builtin_return_address(0);
	return pcontrol(level);
}

void es_phases_finalize(void)
{
	if (es_t.elem)
		end_down_to(0);
	pthread_mutex_lock(&es_g.lock);
	es_names_close(&regions);
	pthread_mutex_unlock(&es_g.lock);
}

/* --- Fortran: CALL ES_REGION_BEGIN('name'), CALL MPI_PCONTROL(level, ierr) --- */

void es_f_str(char *out, size_t len, const char *s, size_t n)
{
	while (n && s[n - 1] == ' ')
		n--; /* Fortran pads with blanks */
	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

static void f_region_begin(const char *name, size_t len)
{
	char n[NAME_MAX_ + 1];
	es_f_str(n, sizeof(n), name, len);
	es_t.ra = __builtin_return_address(0);
	if (recording())
		begin(name_id(n));
}

static void f_region_end(const char *name, size_t len)
{
	char n[NAME_MAX_ + 1];
	es_f_str(n, sizeof(n), name, len);
	es_t.ra = __builtin_return_address(0);
	end_named(n);
}

/* MPI_PCONTROL(LEVEL) has no IERROR */
static void f_pcontrol(MPI_Fint *level)
{
	es_t.ra = __builtin_return_address(0);
	pcontrol((int)*level);
}

void es_region_begin_(const char *, size_t) ES_F_ALIAS(f_region_begin);
void es_region_begin__(const char *, size_t) ES_F_ALIAS(f_region_begin);
void ES_REGION_BEGIN(const char *, size_t) ES_F_ALIAS(f_region_begin);
void es_region_end_(const char *, size_t) ES_F_ALIAS(f_region_end);
void es_region_end__(const char *, size_t) ES_F_ALIAS(f_region_end);
void ES_REGION_END(const char *, size_t) ES_F_ALIAS(f_region_end);
void mpi_pcontrol_(MPI_Fint *) ES_F_MPI_ALIAS(f_pcontrol);
void mpi_pcontrol__(MPI_Fint *) ES_F_MPI_ALIAS(f_pcontrol);
void MPI_PCONTROL(MPI_Fint *) ES_F_MPI_ALIAS(f_pcontrol);
void ompi_pcontrol_f(MPI_Fint *) ES_F_MPI_ALIAS(f_pcontrol);
#if defined(MPICH_VERSION) /* MPICH's mpi_f08 MPI_Pcontrol calls PMPI_Pcontrol (fortran.c) */
void mpi_pcontrol_f08_(MPI_Fint *) ES_F_ALIAS(f_pcontrol);
#endif
