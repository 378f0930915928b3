/* fortran.c - what the Fortran entry points need: the MPI library's own Fortran routines, and Fortran's MPI_IN_PLACE. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "collectors/mpi/wrap.h"

/*
 * A Fortran program's mpi_send_ (mpif.h, use mpi) and the mpi_f08
 * module's calls to Open MPI's ompi_send_f both land in our entry point,
 * which records the call around the MPI library's own Fortran routine: the
 * library keeps converting Fortran's handles, LOGICALs, 1-based indices and
 * sentinels as it always does, and the record reads the C handles through
 * MPI_*_f2c.  That routine calls PMPI_Send, never our MPI_Send, so a call
 * is recorded once.
 */
/* The first of FORMS (a printf form of LOWER) the libraries after us
 * define, kept in CACHE; NULL, said once per kind, if none. */
static void *look_up(void **cache, const char *lower, const char *const *forms, int n, int *said)
{
	char name[96];
	void *f = NULL;
	for (int i = 0; i < n && !f; i++) {
		snprintf(name, sizeof(name), forms[i], lower);
		f = dlsym(RTLD_NEXT, name);
	}
	if (!f) {
		if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "escollect: this MPI library has no Fortran routine %s for MPI_%s: "
				"the call fails with MPI_ERR_INTERN\n", name, lower);
		return NULL;
	}
	__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	return f;
}

void *es__f_real(void **cache, const char *lower)
{
	static const char *const forms[] = { "ompi_%s_f", "mpi_%s_" };
	static int said;
	return look_up(cache, lower, forms, 2, &said);
}

/*
 * MPICH is another story (wrap.h, ES_F_MPI_ALIAS): its mpif.h and `use
 * mpi` routines call our C entry points, and so do its mpi_f08 routines of
 * calls with a buffer (NAME_f08ts, through a C descriptor); its mpi_f08
 * routines of the others (NAME_f08) call PMPI_NAME, so those are ours too,
 * around MPICH's, as above.
 */
void *es__f08_real(void **cache, const char *lower)
{
	static const char *const forms[] = { "mpi_%s_f08_" };
	static int said;
	return look_up(cache, lower, forms, 1, &said);
}

/* MPICH's f08 MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are objects the
 * module binds by these names (its routines compare addresses with them). */
int es_f08_ignore(const void *status, int statuses)
{
	static const void *where[2];
	static int looked;
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		where[0] = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
		where[1] = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	return status && status == where[statuses != 0];
}

/* Fortran's MPI_IN_PLACE is the address of a common block: the one this
 * program uses is the one the dynamic linker resolves the name to. */
int es_f_in_place(const void *buf)
{
	static const void *where[4];
	static int looked;
	static const char *const names[4] = { "mpi_fortran_in_place_", "mpi_fortran_in_place",
					      "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE" };
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 4; i++)
			where[i] = dlsym(RTLD_DEFAULT, names[i]);
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < 4; i++)
		if (where[i] && buf == where[i])
			return 1;
	return 0;
}
