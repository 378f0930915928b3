/* io.c - MPI-IO's files: each opened one numbered on the rank's mpi.files, and found again by its handle on every read and write. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "collectors/mpi/wrap.h"

/*
 * Invariants:
 *  - A file name is numbered once per rank (a file opened again keeps its
 *    number), under es_g.lock; slot n of mpi.files has its name written
 *    before used.
 *  - handles[] maps an open file's handle to its number: entries are made
 *    and emptied under es_g.lock, and read without it: a reader loads
 *    the handle (acquire) and then the number, which is stored before the
 *    handle (release).  An emptied entry keeps a tombstone (1), so that a
 *    probe goes past it; the table is rebuilt from nothing when all its
 *    entries have been used (a read or write racing that rebuild may
 *    find no number: its tuple then names no file).
 */

#define HANDLES 1024u /* open files at once, with room: probes stay short */
#define TOMB 1u

static struct {
	_Atomic uintptr_t handle;
	uint32_t id;
} handles[HANDLES];

static struct {
	struct es_names names; /* mpi.files */
	uint32_t used;         /* entries of handles[] ever taken */
} files = { .names = { .n = 1 } };

static uint32_t slot_of(uintptr_t h)
{
	return (uint32_t)base_hash_slot(h, HANDLES);
}

uint32_t es__file_id(MPI_File fh)
{
	uintptr_t h = (uintptr_t)fh;
	for (uint32_t i = slot_of(h), k = 0; k < HANDLES; k++, i = (uint32_t)base_probe(i, HANDLES)) {
		uintptr_t x = atomic_load_explicit(&handles[i].handle, memory_order_acquire);
		if (x == h)
			return handles[i].id;
		if (!x)
			break;
	}
	return ES_NONE;
}

void es_files_setup(ps_server *srv)
{
	es_names_open(&files.names, srv, ES_FILES_ELEMENT, sizeof(struct es_file_rec), ES_FILES_SLOTS, ES_FILES_LAYOUT);
}

uint32_t es_file_opened(MPI_File fh, const char *filename)
{
	if (!es_tracing() || fh == MPI_FILE_NULL)
		return ES_NONE;
	pthread_mutex_lock(&es_g.lock);
	uint32_t id = es_names_id(&files.names, filename);
	if (id && files.used >= HANDLES - HANDLES / 4) { /* tombstones everywhere: start over with the live */
		uintptr_t live_h[HANDLES];
		uint32_t live_id[HANDLES], nlive = 0;
		for (uint32_t i = 0; i < HANDLES; i++) {
			uintptr_t x = atomic_load_explicit(&handles[i].handle, memory_order_relaxed);
			if (x > TOMB)
				live_h[nlive] = x, live_id[nlive++] = handles[i].id;
			atomic_store_explicit(&handles[i].handle, 0, memory_order_release);
		}
		files.used = 0;
		for (uint32_t k = 0; k < nlive; k++) {
			uint32_t i = slot_of(live_h[k]);
			while (atomic_load_explicit(&handles[i].handle, memory_order_relaxed))
				i = (uint32_t)base_probe(i, HANDLES);
			handles[i].id = live_id[k];
			atomic_store_explicit(&handles[i].handle, live_h[k], memory_order_release);
			files.used++;
		}
	}
	if (id) {
		uint32_t i = slot_of((uintptr_t)fh);
		while (atomic_load_explicit(&handles[i].handle, memory_order_relaxed) > TOMB)
			i = (uint32_t)base_probe(i, HANDLES);
		handles[i].id = id;
		files.used += atomic_load_explicit(&handles[i].handle, memory_order_relaxed) == 0;
		atomic_store_explicit(&handles[i].handle, (uintptr_t)fh, memory_order_release);
	}
	pthread_mutex_unlock(&es_g.lock);
	return id ? id : ES_NONE;
}

void es_file_closed(MPI_File fh)
{
	pthread_mutex_lock(&es_g.lock);
	uintptr_t h = (uintptr_t)fh;
	for (uint32_t i = slot_of(h), k = 0; k < HANDLES; k++, i = (uint32_t)base_probe(i, HANDLES)) {
		uintptr_t x = atomic_load_explicit(&handles[i].handle, memory_order_relaxed);
		if (!x)
			break;
		if (x == h) {
			atomic_store_explicit(&handles[i].handle, TOMB, memory_order_release);
			break;
		}
	}
	pthread_mutex_unlock(&es_g.lock);
}

void es_files_finalize(void)
{
	pthread_mutex_lock(&es_g.lock);
	es_names_close(&files.names);
	pthread_mutex_unlock(&es_g.lock);
}

/* --- Fortran's MPI_FILE_OPEN: the file name comes with its length apart --- */

typedef void f_open_t(MPI_Fint *comm, const char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
		      MPI_Fint *ierr, size_t len);
static void *f_open_real;

static void f_file_open(MPI_Fint *comm, const char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
			MPI_Fint *ierr, size_t len)
{
	f_open_t *real = (f_open_t *)es_f_real(&f_open_real, "file_open");
	if (!real) {
		*ierr = MPI_ERR_INTERN;
		return;
	}
	es_t.ra = __builtin_return_address(0);
	int want = es_want(ES_OP_MPI_FILE_OPEN);
	uint64_t t0 = want ? es_begin(ES_OP_MPI_FILE_OPEN, ES_NONE, 0, ES_NONE) : 0;
	real(comm, name, amode, info, fh, ierr, len);
	uint32_t id = ES_NONE;
	if (*ierr == MPI_SUCCESS) {
		char n[256];
		size_t k = len;
		while (k && name[k - 1] == ' ')
			k--; /* Fortran pads with blanks */
		snprintf(n, sizeof(n), "%.*s", (int)(k < sizeof(n) ? k : sizeof(n) - 1), name);
		id = es_file_opened(PMPI_File_f2c(*fh), n);
	}
	if (want)
		es_end(ES_OP_MPI_FILE_OPEN, t0, id, 0, 0, ES_COMM_NONE, (int)*ierr);
}

void mpi_file_open_(MPI_Fint *, const char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, size_t)
	ES_F_MPI_ALIAS(f_file_open);
void mpi_file_open__(MPI_Fint *, const char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, size_t)
	ES_F_MPI_ALIAS(f_file_open);
void MPI_FILE_OPEN(MPI_Fint *, const char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, size_t)
	ES_F_MPI_ALIAS(f_file_open);
void ompi_file_open_f(MPI_Fint *, const char *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, size_t)
	ES_F_MPI_ALIAS(f_file_open);
