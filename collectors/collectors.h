/* collectors.h - event collectors: the 36-byte trace tuple, cheap clocks, trace spaces, the collector wrapper. */
#ifndef COLLECTORS_H
#define COLLECTORS_H

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>

#include "paths/paths.h"
#include "pathmaps/pathmaps.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An event collector records every operation that passes it as one trace
 * tuple in its own trace element: a PastSet element in discard mode whose
 * writer never waits.  When a monitor reads too slowly, the oldest tuples
 * are dropped and the element's discard count says exactly how many.
 *
 * Timestamps are raw clock ticks (the TSC where it is invariant and the
 * kernel trusts it, CLOCK_MONOTONIC nanoseconds otherwise).  Each trace
 * space stores its clock's calibration, so any reader converts a raw stamp
 * to CLOCK_MONOTONIC nanoseconds, comparable across the processes of a
 * host.  Tuples are in the writer's byte order; es_trace_portable() gives
 * the fixed form.
 */

/* The trace tuple: exactly 36 bytes, native byte order, no padding. */
struct es_trace {
	uint64_t start;     /* raw clock when the operation entered the collector */
	uint64_t end;       /* raw clock when it came back */
	uint32_t seq;       /* the collector's own count of operations (wraps) */
	uint16_t op;        /* enum es_op or es_mpi_op, | ES_OP_FAILED... flags */
	uint16_t collector; /* the collector's id within its trace space */
	uint32_t element;   /* the element the operation touched (pathmap index), or the peer rank */
	uint32_t size;      /* bytes moved */
	uint32_t arg;       /* per op: tuple index (low 32 bits), MPI tag, root... */
} __attribute__((packed));
_Static_assert(sizeof(struct es_trace) == 36, "the trace tuple is 36 bytes");
/* Its fields, for readers on a host of the other byte order (ps_elem_set_layout). */
#define ES_TRACE_LAYOUT "qqihhiii"

/* A tuple's or note's element that names no peer (any source, none). */
#define ES_NONE 0xffffffffu

/* The PastSet operations a collector on a path records; the MPI ones
 * (ES_OP_MPI_SEND...) are in es_mpi_ops.h, written at build time from
 * collectors/mpi/calls.def, which says what each one's tuple holds. */
enum es_op { ES_OP_WRITE = 1, ES_OP_READ, ES_OP_READ_LATEST, ES_OP_TAKE };
#include "es_mpi_ops.h"

/* Flags in a tuple's op, above its code. */
#define ES_OP_FAILED 0x8000u /* the operation returned an error */
#define ES_OP_DONE   0x4000u /* completes a nonblocking operation: start is when it was started */
#define ES_OP_RECV   0x2000u /* MPI_Start(all): the request it started receives */
#define ES_OP_FLAGS  (ES_OP_FAILED | ES_OP_DONE | ES_OP_RECV)
static inline unsigned es_op_code(unsigned op)
{
	return op & ~ES_OP_FLAGS;
}

/* What kind of operation a code is (see calls.def for the MPI ones). */
enum es_op_group { ES_GROUP_PASTSET = 0, ES_GROUP_SETUP, ES_GROUP_P2P, ES_GROUP_COLLECTIVES,
		   ES_GROUP_ONE_SIDED, ES_GROUP_PERSISTENT, ES_GROUP_COMMUNICATORS };
enum es_op_kind {
	ES_KIND_TIMED = 1, /* one tuple over the call */
	ES_KIND_COLL,      /* a collective: arg = communicator id << 20 | its number there */
	ES_KIND_ICOLL,     /* the same, nonblocking: a second tuple, | ES_OP_DONE, at completion */
	ES_KIND_POLL,      /* recorded when it completes something: arg = polls in its streak */
	ES_KIND_WAIT,      /* completes requests */
	ES_KIND_PINIT,     /* makes a persistent request */
	ES_KIND_START,     /* starts persistent requests: a tuple per request */
	ES_KIND_MANUAL,    /* MPI_Init, MPI_Finalize */
};
struct es_op_info {
	uint16_t code;
	uint8_t group; /* enum es_op_group */
	uint8_t kind;  /* enum es_op_kind */
	const char *name;
};
/* The op's description (flags ignored), or NULL for a code no collector writes. */
const struct es_op_info *es_op_info(unsigned op);
const char *es_op_name(unsigned op); /* "write", "MPI_Send"...; "unknown" */
/* The name and its flags, as monitors print it: "MPI_Send", "MPI_Recv/failed",
 * "MPI_Iallreduce/done", "MPI_Start/recv".  Returns buf. */
const char *es_op_label(unsigned op, char *buf, size_t len);
unsigned es_op_from_name(const char *name); /* the code, or 0 */
/* The word for a group, as a pathmap's `mpi: collect:` takes it. */
const char *es_op_group_name(enum es_op_group g);
/* What libescollect lists in each rank's "mpi.comms" element: a record
 * per communicator or window it met, in the order met.  A communicator's
 * handle may be reused once freed: its freeing is listed too (flags
 * ES_COMMS_FREED), so the latest record for a handle is the one in force. */
#define ES_COMMS_ELEMENT "mpi.comms"
#define ES_COMMS_WINDOW 0x80000000u
#define ES_COMMS_FREED  0x40000000u
struct es_comm_rec {
	uint32_t id;     /* a collective's arg >> 20: the same on every member */
	uint32_t size;   /* members */
	uint32_t me;     /* this rank's rank in it */
	uint32_t k;      /* the k-th of these members this rank met | ES_COMMS_WINDOW, _FREED */
	uint64_t handle; /* its handle in this process, as ES_NOTE_COMM holds it */
} __attribute__((packed));
_Static_assert(sizeof(struct es_comm_rec) == 24, "mpi.comms records have a fixed size");
#define ES_COMMS_LAYOUT "iiiiq"

/* Calls whose tuples are matched across the members of a communicator
 * or window: the same (code, arg) on each. */
static inline bool es_op_matched(unsigned op)
{
	const struct es_op_info *i = es_op_info(op);
	return i && (i->kind == ES_KIND_COLL || i->kind == ES_KIND_ICOLL);
}

/* Which MPI calls a pathmap's `mpi: collect:` list selects: collect[code]
 * is set for each (all of them when the list is absent or empty).  Words
 * apply in order: "all", a group, "polls" (MPI_Test*, MPI_Iprobe...) or a
 * call's name adds, the same after a '-' removes ([all, -polls]).  Any
 * other word is PS_EINVAL with "FILE:LINE:COLUMN: ..." in err. */
int es_mpi_select(const struct pm_mpi *mpi, const char *file, unsigned char collect[256], char *err,
		  size_t errlen);

/*
 * While an operation is under way its collector keeps it in its trace
 * element's notes: word ES_NOTE_START holds the start stamp (stored last),
 * word ES_NOTE_WHAT the operation and element.  A monitor that finds a
 * start newer than the element's latest tuple knows the thread is inside
 * that operation now.  MPI calls also note what the thread waits on:
 * ES_NOTE_ARG the tag (point-to-point) or the collective's id << 20 |
 * number, ES_NOTE_COMM the communicator's handle in that process (0:
 * none), which "mpi.comms" maps to an id and its members.
 */
enum { ES_NOTE_START = 0, ES_NOTE_WHAT = 1, ES_NOTE_ARG = 2, ES_NOTE_COMM = 3 };
static inline uint64_t es_note_what(unsigned op, uint32_t element)
{
	return (uint64_t)op | ((uint64_t)element << 32);
}
static inline void es_note_begin(_Atomic uint64_t *notes, uint64_t start, unsigned op,
				 uint32_t element)
{
	if (notes) {
		__atomic_store_n((uint64_t *)&notes[ES_NOTE_WHAT], es_note_what(op, element),
				 __ATOMIC_RELAXED);
		__atomic_store_n((uint64_t *)&notes[ES_NOTE_START], start, __ATOMIC_RELEASE);
	}
}
/* The same with the MPI words: three stores into the line the first one
 * brought in, then the start. */
static inline void es_note_call(_Atomic uint64_t *notes, uint64_t start, unsigned op,
				uint32_t element, uint32_t arg, uint64_t comm)
{
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_WHAT], es_note_what(op, element), __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_ARG], arg, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_COMM], comm, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_START], start, __ATOMIC_RELEASE);
}

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
/* Checks a TSC calibration made on this host against CLOCK_MONOTONIC now
 * (a monitor does, on attaching to a trace space): 0 if it holds, within a
 * few us and 20 ppm of the time since; 1 if it had drifted and c now holds
 * the line through its calibration and now, the rate the TSC really kept;
 * ES_ECLOCK if the TSC kept no rate at all (went back, or 1% off: a jump,
 * a migration), c unchanged.  drift_ns: how far off it was. */
int es_clock_check(struct es_clock *c, int64_t *drift_ns);

extern int es__clock_tsc; /* set by es_clock_init: read the TSC */

static inline uint64_t es_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(es__clock_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return ps_now_ns();
}

/* The fixed form a reader on any machine can use: ns timestamps,
 * little-endian fields, same layout. */
void es_trace_portable(const struct es_clock *c, const struct es_trace *in, struct es_trace *out);

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
