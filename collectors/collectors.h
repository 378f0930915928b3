/* collectors.h - event collectors: the cheap clock, trace spaces, the collector wrapper, the choice of MPI calls and of the collector for a program; the format they write is trace/trace.h, included here. */
#ifndef COLLECTORS_H
#define COLLECTORS_H

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>

#include "paths/paths.h"
#include "pathmaps/pathmaps.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which MPI calls a pathmap's `mpi: collect:` list selects: collect[code]
 * is set for each (all of them when the list is absent or empty).  Words
 * apply in order: "all", a group, "polls" (MPI_Test*, MPI_Iprobe...) or a
 * call's name adds, the same after a '-' removes ([all, -polls]).  Any
 * other word is PS_EINVAL with "FILE:LINE:COLUMN: ..." in err. */
int es_mpi_select(const struct pm_mpi *mpi, const char *file, unsigned char collect[256], char *err,
		  size_t errlen);

/* Which collector serves a program (esrun): of LIBDIR's libescollect-NAME.so,
 * one built per MPI (NAME: openmpi, mpich), the one linked with the very
 * libmpi* soname the dynamic loader maps for PROG (found as execvp finds
 * it), its own or through a library of its own.  WANT, when not NULL,
 * names the collector instead.  0 and its path in OUT; or, with why in
 * ERR: -ENOENT (no collector, none named WANT, no PROG), -ENOEXEC (PROG is
 * static, a script or not a 64-bit ELF program: WANT needed), -ESRCH (it
 * loads no MPI), -ENOTSUP (an MPI none was built for), -EINVAL (two). */
int es_mpi_pick(const char *libdir, const char *prog, const char *want, char *out, size_t len, char *err,
		size_t errlen);

/* --- clocks ------------------------------------------------------------- */

enum es_clock_source { ES_CLOCK_TSC = 1, ES_CLOCK_MONOTONIC = 2 };
#define ES_ECLOCK (-ERANGE) /* a TSC that kept no rate against CLOCK_MONOTONIC */

/* How to turn raw stamps into CLOCK_MONOTONIC ns: ns = ns0 + (raw - raw0) * mult >> 32. */
struct es_clock {
	uint32_t magic;
	uint32_t source;  /* enum es_clock_source */
	uint64_t raw0, ns0;
	uint64_t mult;    /* ns per tick, 32.32 fixed point */
	double ticks_per_ns;
};

/* Chooses the source and calibrates it against CLOCK_MONOTONIC.  The TSC
 * where CPUID says it is invariant: if the kernel chose another clock
 * source (virtual machines do), only if the calibration still holds a few
 * ms later and on every CPU the thread may run on.  ES_CLOCK=monotonic in
 * the environment forces the fallback.  Done once per process; later calls
 * return the same answer. */
const struct es_clock *es_clock_init(void);
uint64_t es_clock_ns(const struct es_clock *c, uint64_t raw);
/* Moves what es_clock_ns() gives by ns: another host's calibration onto
 * this host's CLOCK_MONOTONIC (see ps_server_clock_offset). */
void es_clock_shift(struct es_clock *c, int64_t ns);
/* This process converts with c's line from now on (and writes it into the
 * trace spaces it makes after): processes that share a TSC, the ranks of
 * one node, take one line, so that whoever reads their stamps orders them
 * as the TSC did.  -EINVAL, and nothing changed, unless both are TSC lines. */
int es_clock_adopt(const struct es_clock *c);
/* Checks a TSC calibration made on this host against CLOCK_MONOTONIC now
 * (a monitor does, on attaching to a trace space): 0 if it holds, within a
 * few us and 20 ppm of the time since; 1 if it had drifted and c now holds
 * the line through its calibration and now, the rate the TSC really kept;
 * ES_ECLOCK if the TSC kept no rate at all (went back, or 1% off: a jump,
 * a migration), c unchanged.  drift_ns: how far off it was. */
int es_clock_check(struct es_clock *c, int64_t *drift_ns);

extern int es__clock_tsc; /* set by es_clock_init: read the TSC */

static inline __attribute__((always_inline)) uint64_t es_now(void)
{
#ifdef ES_BENCH_NOCLOCK /* tests/bench/mpi.sh's library only: the calls' cost without their clock reads */
	static __thread uint64_t ticks;
	if (__builtin_expect(es__clock_tsc, 1))
		return ++ticks;
#endif
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(es__clock_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return base_now_ns();
}

/* The fixed form a reader on any machine can use: ns timestamps,
 * little-endian fields, same layout. */
void es_trace_portable(const struct es_clock *c, const struct es_trace *in, struct es_trace *out);
/* The same for n tuples (in and out may be the same). */
void es_trace_portable_n(const struct es_clock *c, const struct es_trace *in, struct es_trace *out, size_t n);

/* --- trace spaces ----------------------------------------------------------- */

/*
 * A trace space is where one process's collectors keep their trace
 * elements: a shared segment (mode 0600) monitors on the host attach to
 * read-only, or process memory.  Its header holds the clock calibration;
 * its element "es.meta" describes every collector in it.
 */
typedef struct es_space es_space;

/* segment NULL: in process memory.  data_bytes: room for its trace
 * elements in the segment (0: 16 MiB), taken as they are written. */
int es_space_create(const char *segment, size_t data_bytes, es_space **out);
/* A monitor's view: read-only. */
int es_space_open(const char *segment, es_space **out);
/* The same for "SEGMENT" or "HOST:PORT/SEGMENT" (served by a tuple server
 * there): stamps read through it convert to this host's clock. */
#define ES_WHERE_MAX 128
int es_space_open_at(const char *where, const struct ps_remote_attr *ra, es_space **out);
/* An MPI rank's trace space: es_space_create's, saying whose it is, so
 * that readers know the rank as data, not from the segment's name. */
int es_space_create_rank(const char *segment, size_t data_bytes, int rank, int size, es_space **out);
/* The MPI rank a space belongs to, and how many ranks the job has
 * (*size may be NULL); -1 for a space that is no rank's. */
int es_space_rank(const es_space *sp, int *size);
void es_space_destroy(es_space *sp);
ps_server *es_space_server(es_space *sp);
const struct es_clock *es_space_clock(const es_space *sp);
/* What es_clock_check said of the space's clock when it was opened on the
 * writer's host (0 for spaces made here, or across hosts). */
int es_space_clock_checked(const es_space *sp, int64_t *drift_ns);

/* What es.meta says about one collector. */
struct es_meta {
	uint16_t collector;
	uint16_t flags;
	uint32_t element;          /* as in the tuples */
	char trace[PS_NAME_MAX + 1];  /* its trace element */
	char thread[PS_NAME_MAX + 1]; /* the thread whose operations it records */
	char where[64];               /* what it watches: a path, an MPI rank... */
};
_Static_assert(sizeof(struct es_meta) == 168, "es.meta tuples have a fixed size");
#define ES_META_LAYOUT "hhi160b"

/* Creates a trace element and its es.meta record; *id is the collector id. */
int es_space_add(es_space *sp, const struct es_meta *meta, uint32_t threshold,
		 bool multi_writer, uint16_t *id, ps_elem **out);
/* Number of collectors, and the i-th one's record. */
int es_space_collectors(es_space *sp);
int es_space_meta(es_space *sp, int i, struct es_meta *out);

/* The process's spaces by segment name ("" for process memory), created on
 * first use and shared by every collector stage that names them; each get
 * takes a reference, each put drops one.  A shared segment outlives its
 * process, so monitors can read it after the job; psadm removes it. */
int es_space_get(const char *segment, es_space **out);
void es_space_put(es_space *sp);

/* --- the collector wrapper --------------------------------------------------- */

/*
 * Registers the wrapper type "collector" with PATHS (idempotent).  Its
 * parameters, all optional:
 *   space      the segment of its trace space (see es_space_get; default "")
 *   name       its trace element (default "cN", N its collector id)
 *   threshold  tuples its trace element keeps (default 200)
 *   thread     the thread whose operations it sees, and
 *   where      what it watches, both recorded in es.meta
 *   element    the number put in each tuple's element field
 *   writers    one (default) or many, when several threads send operations
 *              through the same stage
 */
int es_collectors_register(void);

#ifdef __cplusplus
}
#endif
#endif /* COLLECTORS_H */
