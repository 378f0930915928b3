/* archive.h - EventSpace archives: what esrecord keeps of a job, read back by the converters (OTF2, trace-event JSON) and profiles. */
#ifndef ES_ARCHIVE_H
#define ES_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pastset/pastset.h"
#include "trace/trace.h"

/*
 * An archive is a directory:
 *   events   "ESAR", u32 version (3), then one record per event: the 36-byte
 *            trace tuple (struct es_trace, stamps in ns, little-endian)
 *            and a u32 thread index; an MPI tuple's comm is the number of
 *            its communicator in comms (ES_COMM_NONE: none)
 *   threads  a line per thread: INDEX PROCESS NAME (tab-separated)
 *   comms    a line per communicator or window, by number from 0:
 *            NUMBER ID KIND SIZE WORLD-RANKS... [| SIZE WORLD-RANKS...],
 *            ID in hex, KIND comm, world, window or inter (whose two groups
 *            the | parts), a rank - where no rank said who it was
 *   sites    the call sites, a line per frame (sites.h); absent: none known
 *   regions  the phases' names: RANK NUMBER NAME (tab-separated), NUMBER a
 *            phase tuple's arg (ES_OP_MPI_PCONTROL) on that rank
 *   files    the files MPI-IO opened: RANK NUMBER NAME, NUMBER an I/O
 *            tuple's element on that rank
 *   ranks    a line per MPI rank that said who it was:
 *            RANK HOST PID WALL_NS NS COMMAND (tab-separated), WALL_NS the
 *            wall-clock time (ns since 1970) at the archive's time NS
 *   INFO     key: value lines (job, events, lost, ...), written last
 * INFO is written last, by rename, each file before it whole (written
 * beside it and renamed): what INFO counts is on disk.  ar_create makes
 * every file at once (events with its header, the others empty, INFO
 * counting none: "whole: no", "until: 0"), so that DIR is an archive from
 * the moment it exists.  A recorder checkpoints every fraction of a second
 * (INFO "whole: no", "until: NS"); a recorder killed, or whose disk
 * filled, leaves its last checkpoint, which ar_open reads as it stands
 * (ar_partial) and ar_repair finishes.  A directory with events but no
 * INFO (a skeleton cut while written in place, an older recorder's) is
 * read as partial, its whole records on known threads; threads or comms
 * absent (an older recorder's) as none.  A directory with neither INFO
 * nor events is no archive.  writer.c lists the invariants that hold on
 * disk at every instant.  The events are in the recorder's order: each
 * pull's a thread's at a time, so each thread's own are in the order it
 * wrote them; readers find a thread's through ar_thread_events.
 */

/* Every function returns 0 or a negative errno: the codes of the layers
 * below (pastset.h's PS_E* for system errors are these same -errno values,
 * and ps_strerror names both); messages go to the caller's err buffer. */

#define AR_VERSION 3 /* 2: the same, but an MPI tuple's seq is a count only (no site) */
#define AR_RECORD 40 /* bytes per event record */

/* --- writing ------------------------------------------------------------------ */

typedef struct ar_writer ar_writer;

/* Makes DIR (it may exist, but must hold no archive) and its events file.
 * 0, or a negative errno with "DIR: why" in err. */
int ar_create(const char *dir, const char *job, ar_writer **out, char *err, size_t errlen);
/* Thread INDEX is NAME in PROCESS (a trace space's segment: one process). */
int ar_set_thread(ar_writer *w, int index, const char *process, const char *name);
/* Communicator number n (tuples' comm) is this one: id, flags
 * (ES_COMMS_WORLD, _WINDOW, _INTER), its groups' sizes and members' world
 * ranks (-1: not known); numbers from 0, each set once, before ar_finish. */
int ar_set_comm(ar_writer *w, int n, uint64_t id, unsigned flags, const uint32_t size[2],
		const int *const members[2]);
int ar_write(ar_writer *w, const struct es_trace *t, uint32_t thread);
/* n events of one thread at once: ar_write's, a recorder's runs of a thread's tuples. */
int ar_write_run(ar_writer *w, const struct es_trace *t, size_t n, uint32_t thread);

/* An MPI rank's process: where and what it ran, and the wall-clock time
 * at one of the archive's stamps (wall = at + wall_ns - ns). */
struct ar_rank {
	int rank, pid;
	char host[64];
	char cmd[416];
	uint64_t wall_ns, ns;
};
int ar_set_rank(ar_writer *w, const struct ar_rank *r);
/* Rank's phase number id (a phase tuple's arg) is called name. */
int ar_set_region(ar_writer *w, int rank, uint32_t id, const char *name);
/* Rank's file number id (an I/O tuple's element) is the file name. */
int ar_set_file(ar_writer *w, int rank, uint32_t id, const char *name);

/* Clocks across hosts (collectors.h, "Clocks across hosts"): how the
 * recorder put rank's stamps on its clock (shift_ns: rank's host's clock
 * minus its own when it connected, 0 on its own host), and rank's clock
 * points, each (rank, serial) once, at_ns on the archive's clock as the
 * rank's stamps are.  Readers move each rank's stamps onto rank 0's host's
 * clock by the line through its points (archive/clocks.c). */
struct ar_sync {
	int rank;
	uint32_t kind;     /* ES_SYNC_INIT, _FINI, _RUN */
	uint64_t serial;   /* the rank's count of its points, from 1 */
	uint64_t at_ns;
	int64_t offset_ns; /* rank's host's clock minus rank 0's host's then */
	uint32_t rtt_ns;   /* the measurement's round trip: good to half of it */
};
int ar_set_clock_shift(ar_writer *w, int rank, int64_t shift_ns);
int ar_add_sync(ar_writer *w, const struct ar_sync *s);

/* Where a recorded MPI call was made: its site (a tuple's ES_TRACE_SITE,
 * numbered per thread), innermost frame first. */
struct ar_frame {
	const char *function; /* "-" where not known */
	const char *file;     /* the source file, "-" where not known */
	int line;             /* 0 where not known */
	const char *module;   /* the program or library, as loaded */
	uint64_t offset;      /* the return address's offset in it */
};
struct ar_site {
	int thread, site;
	int nframes;
	struct ar_frame *frames;
};
/* Site number site (from 1) of thread is these frames: each set once. */
int ar_set_site(ar_writer *w, int thread, int site, const struct ar_frame *frames, int n);
/* How a recording stands: lost (discarded before they could be read),
 * before (rotated out before the recorder attached), why it ended (at
 * ar_finish), until_ns (a checkpoint's time, on the archive's clock). */
struct ar_end {
	uint64_t lost, before, until_ns;
	const char *why;
};
/* Writes every event given so far and the other files as known now, then
 * INFO with "whole: no": readers open the archive as it stands, and a kill
 * or a full disk after it loses nothing before it.  Not synced (a killed
 * recorder leaves the page cache).  On an error the last checkpoint stands. */
int ar_checkpoint(ar_writer *w, const struct ar_end *end, char *err, size_t errlen);
/* Writes everything, synced, INFO last (whole); then frees w.  On an error
 * the archive stays as its last checkpoint left it. */
int ar_finish(ar_writer *w, const struct ar_end *end, char *err, size_t errlen);
/* A rank whose process died while it was recorded (its segment left
 * unclosed): last_ns its last event's end (0: none), seen_ns when the
 * recorder found it gone.  Said once per rank; INFO lists them
 * ("died: RANK PID LAST_NS SEEN_NS SIGNAL"). */
struct ar_death {
	int rank, pid;
	int signal; /* the signal that ended it, when its collector saw one; 0: not known */
	uint64_t last_ns, seen_ns;
};
int ar_set_died(ar_writer *w, const struct ar_death *d);
/* Gives up: closes and frees, leaving the archive as its last checkpoint
 * (or ar_create) left it. */
void ar_abandon(ar_writer *w);
/* Gives up before anything was recorded: removes the archive's files (and
 * DIR, when ar_create made it), then frees. */
void ar_discard(ar_writer *w);
uint64_t ar_written(const ar_writer *w);

/* --- reading ------------------------------------------------------------------ */

typedef struct ar_archive ar_archive;

struct ar_event {
	struct es_trace t; /* stamps in ns */
	uint32_t thread;
};
struct ar_thread {
	char process[PS_NAME_MAX + 1]; /* JOB.rN for an MPI rank */
	char name[PS_NAME_MAX + 1];
	int rank; /* the MPI rank (from PROCESS's .rN), or -1 */
};
struct ar_comm {
	uint64_t id;
	unsigned flags;      /* ES_COMMS_WORLD, _WINDOW, _INTER */
	uint32_t size[2];    /* its groups: an intercommunicator has two */
	int32_t *members[2]; /* world rank of each rank in each; -1 where unknown */
	/* the reader's: each member as world rank << 33 | group << 32 | its
	 * rank, sorted (a member's rank found by its world rank at once,
	 * however sparse the world ranks an archive gives) */
	uint64_t *by_world;
	uint32_t nby;
};

int ar_open(const char *dir, ar_archive **out, char *err, size_t errlen);
void ar_close(ar_archive *a);
const char *ar_job(const ar_archive *a);
size_t ar_nevents(const ar_archive *a);
const struct ar_event *ar_events(const ar_archive *a);
/* Thread t's events: *idx lists their indices into ar_events(), in the
 * file's order; how many. */
size_t ar_thread_events(const ar_archive *a, int t, const uint32_t **idx);
uint64_t ar_lost(const ar_archive *a);
/* Whether the archive is a checkpoint's (its recorder was killed, or its
 * disk filled): it holds the events up to *until_ns (the recorder's time). */
bool ar_partial(const ar_archive *a, uint64_t *until_ns);
/* Ranks that died while recorded: ar_died(a, 0 .. ar_ndied(a) - 1). */
int ar_ndied(const ar_archive *a);
const struct ar_death *ar_died(const ar_archive *a, int i);
/* What a reader says of a partial archive, "" of a whole one; the ranks
 * that died, "" when none: into buf, as snprintf. */
size_t ar_partial_note(const ar_archive *a, const char *dir, char *buf, size_t len);
size_t ar_deaths_note(const ar_archive *a, char *buf, size_t len);
/* What the archive lacks of what its job said (ranks without their
 * process, communicators its events name that it does not describe), ""
 * when nothing: a reader says it first, never a silent "0 messages". */
size_t ar_missing_note(const ar_archive *a, char *buf, size_t len);
/* All three, when there is something to say, as lines "PROG: ..." on f,
 * what is missing first. */
void ar_print_state(const ar_archive *a, const char *prog, const char *dir, FILE *f);
/* Finishes the partial archive DIR (ar_partial): its events cut to the
 * whole records of known threads and communicators (the checkpoint's, and
 * those written after it), INFO rewritten whole, saying so.  *kept: the
 * events it holds, *after: how many of them came after the checkpoint.
 * -EALREADY when it is whole. */
int ar_repair(const char *dir, uint64_t *kept, uint64_t *after, char *err, size_t errlen);
int ar_nthreads(const ar_archive *a);
const struct ar_thread *ar_thread(const ar_archive *a, int i);
int ar_ncomms(const ar_archive *a);
/* Communicator number i (a tuple's comm), or NULL. */
const struct ar_comm *ar_comm(const ar_archive *a, int i);
/* The name of rank's phase number id, or NULL. */
const char *ar_region_name(const ar_archive *a, int rank, uint32_t id);
/* The name of rank's file number id, or NULL. */
const char *ar_file_name(const ar_archive *a, int rank, uint32_t id);
/* Rank r's process, or NULL when it did not say. */
const struct ar_rank *ar_rank(const ar_archive *a, int r);
/* Site number site of thread (a tuple's ES_TRACE_SITE), or NULL when not known. */
const struct ar_site *ar_site(const ar_archive *a, int thread, int site);
int ar_nsites(const ar_archive *a);
/* Rank's clock points as recorded (at_ns before the reader moved its
 * stamps), in time order; how many. */
int ar_sync_points(const ar_archive *a, int rank, const struct ar_sync **out);
/* What the reader did to the ranks' clocks, "" when nothing: into buf, as
 * snprintf ("clocks: ranks 1, 2 moved onto rank 0's host's clock by up to
 * 3.2 ms, from 6 points measured by MPI ping-pong"). */
size_t ar_clocks_note(const ar_archive *a, char *buf, size_t len);
/* The rank a world rank is in a communicator (its group with it), or -1. */
int ar_comm_rank(const struct ar_comm *c, int world);

/* --- Clocks: each rank's clock points, and the move they make of its
 * stamps (clocks.c; the archive's clocks file) -------------------------- */
struct ar_clocks;
struct ar_clocks *ar_clocks_new(void);
void ar_clocks_free(struct ar_clocks *c);
/* 1 if it changed what was known, 0 if not, or a negative code */
int ar_clocks_shift(struct ar_clocks *c, int rank, int64_t shift_ns);
int ar_clocks_add(struct ar_clocks *c, const struct ar_sync *s);
int ar_clocks_print(const struct ar_clocks *c, FILE *f);
/* The file f (named path), whole; a line it cannot read fails, saying
 * which: one that names a rank at or past rank_bound, or a shift or an
 * offset past AR_CLOCK_SPAN either way (no two hosts' clocks are 146
 * years apart; within it, no reader's sums of them overflow). */
#define AR_CLOCK_SPAN (INT64_C(1) << 62)
int ar_clocks_read(FILE *f, const char *path, int rank_bound, struct ar_clocks **out, char *err, size_t errlen);
/* Whether rank's stamps move (its line is not 0 at every point: never on
 * rank 0's host), and by how much at t (its stamp on the archive's clock,
 * as recorded): add it. */
bool ar_clocks_moves(struct ar_clocks *c, int rank);
int64_t ar_clocks_delta(const struct ar_clocks *c, int rank, uint64_t t);
/* Rank's points, in time order; how many. */
int ar_clocks_points(const struct ar_clocks *c, int rank, const struct ar_sync **out);

/* --- Call sites' addresses as function, file and line (symbols.c: DWARF
 * through elfutils' libdw; link $(pkg-config --libs libdw)) --------------- */
typedef struct ar_symbols ar_symbols;

struct ar_symbol {
	const char *function; /* NULL where not known; the strings live as long as the ar_symbols */
	const char *file;
	int line;             /* 0 where not known */
};

int ar_symbols_create(ar_symbols **out);
void ar_symbols_destroy(ar_symbols *s);
/* The call whose return address is at offset in the module file path:
 * 0, -ENOENT (the file, or anything of it, not found) or -ENOMEM. */
int ar_symbols_lookup(ar_symbols *s, const char *path, uint64_t offset, struct ar_symbol *out);

/* --- JSON (escape.c): the one string escaper of every JSON EventSpace
 * writes (the converters', esprofile's, esview's) ------------------------ */

/* s as a JSON string, quoted and escaped. */
void ar_json_string(FILE *f, const char *s);
/* The colour every picture gives a class of calls ("#1f77b4"...). */
const char *ar_class_colour(enum es_class c);

#endif
