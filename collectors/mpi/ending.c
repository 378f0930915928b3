/* ending.c - how a rank ends when it does not finalize: MPI_Abort recorded before it kills the job, and the fatal signal that ends a rank noted where monitors read it. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include "collectors/mpi/wrap.h"

/*
 * A monitor finds a rank gone when its segment is left unclosed; what
 * killed it is said here, in the rank's mpi.proc record (its `fatal`, a
 * signal number): one plain store from the handler, which then passes
 * the signal on to whoever had it before (Open MPI prints its backtrace)
 * or to the default action.  The handlers are installed once the job is
 * traced, after MPI_Init, so the MPI library's own come first in line.
 */

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM };
static struct sigaction before[sizeof(fatal_signals) / sizeof(fatal_signals[0])];
static int32_t *volatile fatal_at;

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	int32_t *f = fatal_at;
	if (f && !*f)
		__atomic_store_n(f, sig, __ATOMIC_RELAXED);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		if (fatal_signals[i] != sig)
			continue;
		const struct sigaction *o = &before[i];
		if (o->sa_flags & SA_SIGINFO) {
			o->sa_sigaction(sig, si, uc);
			return;
		}
		if (o->sa_handler == SIG_IGN)
			return;
		if (o->sa_handler != SIG_DFL) {
			o->sa_handler(sig);
			return;
		}
		/* the default action: pending until this handler returns (the
		 * signal is blocked in it), for a fault sent by kill() as well */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
}

void es_ending_setup(int32_t *fatal)
{
	fatal_at = fatal;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* a stack overflow's SIGSEGV runs where it can */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		if (sigaction(fatal_signals[i], &sa, &before[i]))
			memset(&before[i], 0, sizeof(before[i])); /* SIG_DFL */
}

void es_ending_finalize(void)
{
	/* the record goes with the segment: a fault after MPI_Finalize must
	 * not store into memory no longer mapped (the handler passes it on) */
	fatal_at = NULL;
}

/* MPI_Abort does not return: its tuple is written before the library
 * ends the job (start and end the moment it was called, arg the error
 * code), so the rank's last event says how it ended. */
static int abort_job(MPI_Comm comm, int code)
{
	if (es_want(ES_OP_MPI_ABORT)) {
		uint64_t t = es_now();
		es_write(ES_OP_MPI_ABORT, t, t, (uint32_t)es_g.rank, 0, (uint32_t)code, ES_COMM_NONE,
			 MPI_SUCCESS);
	}
	return PMPI_Abort(comm, code);
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	es_t.ra = __builtin_return_address(0);
	return abort_job(comm, errorcode);
}

static void f_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	*ierr = (MPI_Fint)abort_job(MPI_Comm_f2c(*comm), (int)*errorcode);
}
void mpi_abort_(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_MPI_ALIAS(f_abort);
void mpi_abort__(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_MPI_ALIAS(f_abort);
void MPI_ABORT(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_MPI_ALIAS(f_abort);
void ompi_abort_f(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_MPI_ALIAS(f_abort);
#if defined(MPICH_VERSION) /* MPICH's mpi_f08 MPI_Abort calls PMPI_Abort (fortran.c) */
static void f08_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	int rc = abort_job(MPI_Comm_f2c(*comm), (int)*errorcode);
	if (ierr)
		*ierr = rc;
}
void mpi_abort_f08_(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_ALIAS(f08_abort);
#endif
