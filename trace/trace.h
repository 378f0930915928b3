/* trace.h - the trace format every writer and reader shares: the 36-byte tuple, op codes and flags, messages' numbers and the one join of their ends, call sites, the MPI boards' records, the notes. */
#ifndef ES_TRACE_H
#define ES_TRACE_H

/*
 * The bottom of the readers' world: standard headers and the generated op
 * codes only, so that an analysis (waitstates/) or a reader of archives
 * (archive/) never reaches the pathmap model, PATHS or trace spaces.  The
 * collectors (collectors/collectors.h) write this format; everything else
 * reads it.  Prefix es_, as the collectors' own.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The trace tuple: exactly 36 bytes, native byte order, no padding.  An
 * MPI call's fields are described with the MPI section below. */
struct es_trace {
	uint64_t start;     /* raw clock when the operation entered the collector */
	uint64_t end;       /* raw clock when it came back */
	uint32_t seq;       /* the collector's own count of operations (wraps) */
	uint16_t op;        /* enum es_op or es_mpi_op, | ES_OP_FAILED... flags */
	union {
		uint16_t collector; /* on a path: the collector's id within its trace space */
		uint16_t comm;      /* an MPI call: its communicator's or window's serial, low
				     * 16 bits (ES_COMM_NONE: none), as its rank's mpi.comms lists it */
	};
	uint32_t element;   /* the element the operation touched (pathmap index), or the peer's world rank */
	uint32_t size;      /* bytes moved */
	uint32_t arg;       /* per op: tuple index (low 32 bits), MPI tag, a collective's number... */
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
#define ES_OP_FAILED 0x8000u /* the operation returned an error (or was cancelled) */
#define ES_OP_DONE   0x4000u /* completes a request, or Sendrecv's receive: start is when it began */
#define ES_OP_RECV   0x2000u /* MPI_Start(all): the request it started receives */
/* Never written by a collector: an archive's record of a call its thread
 * was inside when the archive was made (a snapshot, a dead or hung job's
 * remains); its end is that moment. */
#define ES_OP_UNFINISHED 0x1000u
/* A message's end (es_message): seq's low 16 bits are its number on its
 * channel (below, "Messages' numbers") */
#define ES_OP_NUMBERED 0x0800u
#define ES_OP_FLAGS  (ES_OP_FAILED | ES_OP_DONE | ES_OP_RECV | ES_OP_UNFINISHED | ES_OP_NUMBERED)
static inline unsigned es_op_code(unsigned op)
{
	return op & ~ES_OP_FLAGS;
}

/* What kind of operation a code is (see calls.def for the MPI ones). */
enum es_op_group { ES_GROUP_PASTSET = 0, ES_GROUP_SETUP, ES_GROUP_P2P, ES_GROUP_COLLECTIVES,
		   ES_GROUP_ONE_SIDED, ES_GROUP_PERSISTENT, ES_GROUP_COMMUNICATORS, ES_GROUP_IO };
enum es_op_kind {
	ES_KIND_TIMED = 1, /* one tuple over the call */
	ES_KIND_COLL,      /* a collective: arg = its number on its communicator (comm) */
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
/* What a tuple says of a message (the table above says which tuples are
 * which): its peer is the element (a world rank), its tag the arg, its
 * bytes the size, its communicator the comm.  Monitors and converters
 * pair sends and receives by it. */
enum es_msg {
	ES_MSG_NONE = 0,
	ES_MSG_SEND,       /* sent by a blocking call (MPI_Send..., MPI_Sendrecv): OTF2's MpiSend */
	ES_MSG_ISEND,      /* a send request posted (MPI_Isend..., a persistent send's MPI_Start): MpiIsend */
	ES_MSG_ISEND_DONE, /* ... completed: MpiIsendComplete */
	ES_MSG_RECV,       /* received by a blocking call (MPI_Recv, Mrecv, MPI_Sendrecv/done): MpiRecv */
	ES_MSG_IRECV_REQ,  /* a receive request posted (MPI_Irecv..., a persistent receive's start) */
	ES_MSG_IRECV,      /* ... completed, with what came: MpiIrecv */
};
enum es_msg es_msg_kind(unsigned op);
/* 1: a message's send (element its receiver), -1: its receive (element
 * its sender), 0: neither (a cancelled or failed one is neither). */
int es_message(unsigned op);
/* Whether a tuple is time spent inside an MPI call (a rank's MPI share):
 * not a completion's (it spans its request), a phase, MPI_Init or
 * MPI_Finalize, nor a call that had not returned. */
bool es_in_mpi_call(unsigned op);
/* The op's description (flags ignored), or NULL for a code no collector writes. */
const struct es_op_info *es_op_info(unsigned op);
const char *es_op_name(unsigned op); /* "write", "MPI_Send"...; "unknown" */
/* The name and its flags, as monitors print it: "MPI_Send", "MPI_Recv/failed",
 * "MPI_Iallreduce/done", "MPI_Start/recv".  Returns buf. */
const char *es_op_label(unsigned op, char *buf, size_t len);
unsigned es_op_from_name(const char *name); /* the code, or 0 */
/* The word for a group, as a pathmap's `mpi: collect:` takes it. */
const char *es_op_group_name(enum es_op_group g);
/* The MPI calls' ops, from collectors/mpi/calls.def: *n of them. */
const struct es_op_info *es_mpi_ops(int *n);
/* The class of a call every picture colours it by (esconvert's timeline,
 * esview, the JSON's categories: archive's ar_class_colour). */
enum es_class { ES_CLASS_P2P = 0, ES_CLASS_WAIT, ES_CLASS_COLL, ES_CLASS_ONE_SIDED, ES_CLASS_IO, ES_CLASS_OTHER,
		ES_CLASS_PATHS, ES_NCLASS };
enum es_class es_op_class(unsigned op);
const char *es_class_name(enum es_class c);   /* "point-to-point", "waits and polls"... */
/* --- what libescollect writes for an MPI program ------------------------------------ */

/*
 * Each rank's trace space JOB.rR says its rank (es_space_rank) and holds,
 * besides a trace element per thread that calls MPI (mpi.threadK):
 *
 *   mpi.comms   a record per communicator or window the rank made, met or
 *               freed (struct es_comm_rec), in order; live ones are written
 *               again before the ring comes round to them, so a reader that
 *               starts late still finds every one in force
 *   mpi.calls   a board: slot (serial & 0xffff) counts the collectives the
 *               rank has begun on that communicator or window, which is
 *               also the number its next one gets, and keeps its latest
 *               few (es_calls_rec)
 *   mpi.reqsK   a board per thread: the requests it has open (es_req_rec)
 *   mpi.chansK  a board per thread: how many messages it sent to and
 *               received from each (peer, tag, communicator) (es_chan_rec)
 *
 * Order of making, which readers rely on (they open each element once):
 * the rank's elements before any thread's, and a thread's boards before
 * its trace element, the thing that makes the thread seen.
 *
 * Communicators.  Each communicator and window has an id that is the same
 * on every member and unique in the job: MPI_COMM_WORLD's is
 * ES_COMM_WORLD_ID; one made collectively over a parent takes it from the
 * parent's id, how many the parent had made, and its first member's world
 * rank.  Within its rank each also has a serial (32 bits, never reused).
 * Tuples hold the serial's low 16 bits, notes and boards all of it: a
 * reader takes a tuple's communicator to be its rank's latest record with
 * those bits stamped no later than the tuple's start.
 *
 * An MPI call's tuple (calls.def says what each call's fields hold):
 *   element  a peer's, root's or target's world rank (ES_NONE: none, any)
 *   comm     its communicator's or window's serial, low 16 bits
 *   arg      a tag, or a collective's number on its communicator (each
 *            member counts its collectives there from 0, so the same call
 *            has the same number on every member)
 * Messages are one send tuple and one receive tuple each.  Sends: MPI_Send,
 * Bsend, Ssend, Rsend; the Isend family at the call; MPI_Start(all) of a
 * persistent send; MPI_Sendrecv(_replace) itself.  Receives: MPI_Recv,
 * MPI_Mrecv, every completion of a receive request (MPI_Irecv/done,
 * MPI_Imrecv/done, MPI_Recv_init/done) and Sendrecv's receive
 * (MPI_Sendrecv/done), with the source, tag and bytes received.  The wait
 * or test that completes a request writes its completion (op | ES_OP_DONE,
 * from the request's start to then; with ES_OP_FAILED if it was cancelled
 * or failed), sends' and nonblocking collectives' too.
 */
#define ES_COMM_NONE 0xffffu   /* a tuple's comm when the call has none */
#define ES_COMM_WORLD_ID 1u    /* MPI_COMM_WORLD's id */

#define ES_COMMS_ELEMENT "mpi.comms"
enum es_comms_flags {
	ES_COMMS_WINDOW = 1u << 0, /* a window (its fences are numbered like collectives) */
	ES_COMMS_FREED = 1u << 1,  /* freed: its serial names nothing from now on */
	ES_COMMS_INTER = 1u << 2,  /* an intercommunicator: size and me are of this rank's group */
	ES_COMMS_SIDE1 = 1u << 3,  /* ... which is its second group (the first has the lower
				    * world rank at its rank 0) */
	ES_COMMS_AGAIN = 1u << 4,  /* written again, still in force: not made anew */
	ES_COMMS_WORLD = 1u << 5,  /* MPI_COMM_WORLD */
};
struct es_comm_rec {
	uint64_t id;     /* the same on every member, unique in the job */
	uint64_t stamp;  /* raw clock when it was made, met or freed */
	uint32_t serial; /* what this rank's tuples and notes call it */
	uint32_t size;   /* members (of this rank's group, for an intercommunicator) */
	uint32_t me;     /* this rank's rank in it */
	uint32_t flags;  /* enum es_comms_flags */
};
_Static_assert(sizeof(struct es_comm_rec) == 32, "mpi.comms records have a fixed size");
#define ES_COMMS_LAYOUT "qqiiii"

#define ES_CALLS_ELEMENT "mpi.calls"
#define ES_CALLS_SLOTS 65536u /* one record per serial & 0xffff */
/* A communicator's or window's collectives on its rank: how many it has
 * begun, and what the latest ES_CALLS_HISTORY were (number n in
 * last[n % ES_CALLS_HISTORY]): a member that has gone past a collective
 * still says which call it made there, against one still inside it. */
#define ES_CALLS_HISTORY 6
struct es_calls_rec {
	uint64_t begun;
	uint32_t last[ES_CALLS_HISTORY]; /* ES_CALLS_ENTRY(op, root) */
};
_Static_assert(sizeof(struct es_calls_rec) == 32, "mpi.calls records have a fixed size");
#define ES_CALLS_LAYOUT "qiiiiii"
/* op's code (12 bits) and its root's world rank (20 bits; all ones: none or past them) */
#define ES_CALLS_ROOT_NONE 0xfffffu
#define ES_CALLS_ENTRY(op, root) \
	((uint32_t)((op) & 0xfffu) | (uint32_t)((root) < ES_CALLS_ROOT_NONE ? (root) : ES_CALLS_ROOT_NONE) << 12)
#define ES_CALLS_OP(e) ((e) & 0xfffu)
#define ES_CALLS_ROOT(e) ((e) >> 12 == ES_CALLS_ROOT_NONE ? ES_NONE : (e) >> 12)

/* A request a thread has open, on its board mpi.reqsK.  Its thread rewrites
 * it in place: ver is odd while it does, and moves on with every change,
 * so a copy is whole when ver is even and the same before and after.
 * waiter and done are the only words another thread writes. */
#define ES_REQS_ELEMENT "mpi.reqs"
#define ES_REQS_SLOTS 512u
enum es_req_state {
	ES_REQ_ACTIVE = 1u << 0,     /* started and not yet complete */
	ES_REQ_PERSISTENT = 1u << 1, /* made by an init call: stays after completion */
	ES_REQ_CANCELLED = 1u << 2,
	/* its call was not recorded (a pause, a collect list): followed only
	 * so that its message is counted (messages' numbers, below); its
	 * completion writes nothing */
	ES_REQ_QUIET = 1u << 3,
};
struct es_req_rec {
	uint64_t ver;
	uint64_t handle;  /* the request in its process; 0: a free slot */
	uint64_t start;   /* raw clock when made, or last started */
	uint16_t op;      /* the call that made it (MPI_Isend, MPI_Irecv, MPI_Ibarrier, MPI_Recv_init...) */
	uint16_t state;   /* enum es_req_state */
	uint32_t serial;  /* its communicator's or window's */
	uint32_t peer;    /* world rank: destination, source (ES_NONE: any), root (ES_NONE: none) */
	uint32_t arg;     /* tag (ES_NONE: any), or a collective's number */
	uint32_t size;    /* bytes */
	uint32_t spare;
	uint64_t waiter;  /* the start of the wait or poll streak that waits for it now; 0: none */
	uint64_t done;    /* another thread completed it: the ver it saw (its thread frees it) */
};
_Static_assert(sizeof(struct es_req_rec) == 64, "a request is a cache line");
#define ES_REQS_LAYOUT "qqqhhiiiiiqq"

/* Whether another thread completed the request in this record, as of the
 * ver it holds (done, a load of the record's done word): it is no longer
 * open, though its thread has not freed the slot yet. */
static inline bool es_req_done_by_other(uint64_t done, uint64_t ver)
{
	return done && done == ver;
}

/* A thread's count of messages on one channel, on its board mpi.chansK:
 * keyed by (peer, tag, serial, sent or received), added when first used,
 * never removed; a send counts when it is posted, a receive when it
 * completes.  Slot 0 is the board's own: flags ES_CHAN_FULL once a key
 * found no room (a reader then knows no more than what is there). */
#define ES_CHANS_ELEMENT "mpi.chans"
#define ES_CHANS_SLOTS 1024u
enum es_chan_flags { ES_CHAN_USED = 1u << 0, ES_CHAN_RECVD = 1u << 1, ES_CHAN_FULL = 1u << 2 };
struct es_chan_rec {
	uint32_t peer;   /* the other end's world rank */
	uint32_t tag;
	uint32_t serial; /* the communicator's */
	uint32_t flags;  /* enum es_chan_flags: set last, when the key is whole */
	uint64_t count;
};
_Static_assert(sizeof(struct es_chan_rec) == 24, "channel records have a fixed size");
#define ES_CHANS_LAYOUT "iiiiq"

/*
 * Messages' numbers.  While a rank is traced every message its threads
 * send or receive is counted on the thread's channels, recorded or not: a
 * pause or a collect list stops tuples, never counting.  By MPI's
 * non-overtaking rule the n-th message sent on a channel (sender,
 * receiver, communicator, tag) is the n-th received there, so equal
 * numbers are one message whatever either end left unrecorded, and a
 * reader pairs by them, never by the order of what it happens to hold.
 *
 * A message's tuple (a send, or a receive's completion) carries
 * ES_OP_NUMBERED and, in seq's low 16 bits, its number n:
 *  - n < 2^15 on a channel that has no mark yet: ES_NUM_WHOLE | n, whole;
 *  - else n mod 2^15, read from the channel's latest mark before it in
 *    its thread, whose count base has base <= n < base + ES_CHAN_MARK_EVERY
 *    (invariant), so that n is base + ((low - base) mod 2^15).
 * A mark (ES_OP_MPI_CHANNEL, with ES_OP_RECV for a receiving channel) is
 * written just before the first tuple of a channel whose number reaches
 * 2^15, and before any that would break the invariant: element, arg and
 * comm the channel's peer, tag and communicator, size the count's low 32
 * bits and seq its high 32, stamps when written.  A reader that lost the
 * latest mark (tuples lost, a recorder that came late) cannot read the
 * numbers after it until the next.  Marks are not calls: readers take
 * them in (es_is_mark) and draw, count or convert nothing of them.
 * Numbers are a thread's: a channel two threads of a rank use is not
 * numbered alike on both ends, and readers say so.
 */
#define ES_CHAN_MARK_EVERY 4096u
#define ES_NUM_WHOLE 0x8000u
/* A numbered tuple's number, given its channel's latest mark's count
 * (known: one was read); false when it cannot be told. */
static inline bool es_num_of(uint16_t low, bool known, uint64_t base, uint64_t *n)
{
	if (low & ES_NUM_WHOLE) {
		*n = low & (ES_NUM_WHOLE - 1);
		return true;
	}
	*n = base + ((low - base) & (ES_NUM_WHOLE - 1));
	return known;
}
#define ES_OP_MPI_CHANNEL 63u
static inline bool es_is_mark(unsigned op)
{
	return (op & ~(ES_OP_FLAGS)) == ES_OP_MPI_CHANNEL;
}
/*
 * Group marks.  The same code with ES_OP_DONE is no channel's: just after
 * the tuple of an MPI_Win_post (its origins) or MPI_Win_start (its
 * targets), one per member of the call's group: element the member's
 * world rank, comm the window's serial, arg the call's op code, size the
 * group's size.  They say who a general active target epoch waits for
 * (the wait states' Late Post and Early Wait); readers of channels'
 * numbers take in only channel marks.
 */
static inline bool es_is_channel_mark(unsigned op)
{
	return es_is_mark(op) && !(op & ES_OP_DONE);
}
static inline bool es_is_group_mark(unsigned op)
{
	return es_is_mark(op) && (op & ES_OP_DONE);
}
static inline uint64_t es_mark_count(const struct es_trace *t)
{
	return (uint64_t)t->seq << 32 | t->size;
}
/*
 * Reading the numbers (numbers.c): the one join of a message's two ends,
 * for every reader (archives, esview, the live wait states).  One reader
 * per consumer, given each thread's message ends and channel marks in the
 * order the thread wrote them, each with its thread's rank and its
 * communicator as every rank names it (comm: its id, the same on both
 * ends).  A message is keyed by (sender, receiver, communicator, tag,
 * number): its two ends, and only they, have equal keys.
 *
 * 0: *out filled, key and all.  ES_NUMR_MARK: a mark, taken in.
 * ES_NUMR_NONE: an end with no number to pair it by (unnumbered, or its
 * channel's mark was lost), ES_NUMR_SHARED: an end on a channel another
 * thread of its rank used first (numbers are a thread's): *out filled but
 * its key, which is 0: alone, never paired by guess.  ES_NUMR_NOT: no
 * message end (no peer, a group mark, not a message).  -ENOMEM.
 */
struct es_msg_end {
	uint32_t from, to, tag; /* world ranks; its tag */
	bool recv;
	uint64_t link; /* its channel without the direction: the sends' and the receives' alike */
	uint64_t num;  /* its number on its channel */
	uint64_t key;  /* the message's */
};
typedef struct es_numr es_numr;
enum { ES_NUMR_MARK = 1, ES_NUMR_NONE, ES_NUMR_SHARED, ES_NUMR_NOT };
int es_numr_create(es_numr **out);
void es_numr_destroy(es_numr *r);
int es_numr_read(es_numr *r, uint32_t thread, int rank, uint64_t comm, const struct es_trace *t,
		 struct es_msg_end *out);

/*
 * A tuple resolved: what every reader derives from a raw struct es_trace
 * (its own rank's serials, its thread's numbers) once, in one place, so
 * that every analysis after it reads the same thing.  Made by the
 * archive's reader (archive/waitfeed.c, ar_wait_event) and by the live
 * resolver (monitors/resolve.c); read by the wait-state engine, the live
 * wait states and the view.  A raw tuple is a struct es_trace; a resolved
 * one is a struct es_event, never the other way round.
 */
#define ES_EVENT_NO_MSG UINT64_MAX
struct es_event {
	uint64_t start, end; /* ns, on one clock for the whole job */
	uint32_t loc;        /* the reader's thread number: one thread's events come in its order */
	int32_t rank;        /* its world rank */
	uint16_t op;         /* the tuple's, with its flags */
	uint32_t peer;       /* the tuple's element: a peer's or root's world rank, ES_NONE */
	uint32_t arg;        /* the tuple's arg: a tag, or a collective's number */
	uint32_t size;       /* bytes */
	uint64_t comm;       /* its communicator's or window's id as the job numbers it; 0: none known,
			      * or an intercommunicator (whose collectives are not judged) */
	uint32_t members;    /* the communicator's size (this rank's group's) */
	uint32_t me;         /* this rank's rank in it */
	uint64_t msg;        /* a message's end: the key its other end has too; ES_EVENT_NO_MSG */
	uint32_t site;       /* the reader's key for its call site; 0: not known */
};

/*
 * Call sites.  An MPI call's tuple says where the program called it: its
 * seq holds the thread's number for that site in its high 16 bits
 * (ES_TRACE_SITE; 0: not known) and the count of the thread's calls in
 * the low 16.  Site s of a thread is slot s of its board mpi.sitesK: the
 * return addresses into the program, innermost first (one, or up to
 * ES_SITE_FRAMES when the call path is asked for), written once, frames
 * before their count.  Which file each address lies in is on the rank's
 * board mpi.modules: the modules the sites' addresses lie in, each once,
 * its path and load address before its end.  The reader maps addresses to
 * function, file and line; the application never does.
 */
#define ES_SITES_ELEMENT "mpi.sites"
#define ES_SITES_SLOTS 4096u /* site 0 means "not known": a thread names up to 4095 */
#define ES_SITE_FRAMES 7
struct es_site_rec {
	uint32_t frames; /* how many of pc[] are set; 0: a free slot */
	uint32_t spare;
	uint64_t pc[ES_SITE_FRAMES];
};
_Static_assert(sizeof(struct es_site_rec) == 64, "a site is a cache line");
#define ES_SITES_LAYOUT "iiqqqqqqq"
#define ES_TRACE_SITE(t) ((uint16_t)((t)->seq >> 16))

#define ES_MODULES_ELEMENT "mpi.modules"
#define ES_MODULES_SLOTS 512u
struct es_module_rec {
	uint64_t base; /* where it is loaded: an address minus base is its offset in the file */
	uint64_t end;  /* its last mapped byte + 1; 0: a free slot */
	char path[240];
};
_Static_assert(sizeof(struct es_module_rec) == 256, "module records have a fixed size");
#define ES_MODULES_LAYOUT "qq240b"

/* MPI-IO: the files a rank opened, on its board mpi.files; slot n is the
 * file whose I/O tuples have element n (from 1), written once, its name
 * before used.  An I/O tuple's size is the bytes read or written (a
 * blocking read's as its status says, others' as asked; a split
 * operation's at its begin, none at its end), arg 0. */
#define ES_FILES_ELEMENT "mpi.files"
#define ES_FILES_SLOTS 1024u
struct es_file_rec {
	uint32_t used;
	char name[252];
};
_Static_assert(sizeof(struct es_file_rec) == 256, "file names have a fixed size");
#define ES_FILES_LAYOUT "i252b"

/* Phases' names, on the rank's board mpi.regions: slot n names the phases
 * whose tuples (ES_OP_MPI_PCONTROL) have arg n, from 1; each written once,
 * its name before used. */
#define ES_REGIONS_ELEMENT "mpi.regions"
#define ES_REGIONS_SLOTS 1024u
struct es_region_rec {
	uint32_t used;
	char name[60];
};
_Static_assert(sizeof(struct es_region_rec) == 64, "region names have a fixed size");
#define ES_REGIONS_LAYOUT "i60b"

/* The rank's process, on its board mpi.proc (one slot, written once at
 * MPI_Init): for a profile's header, and to put wall-clock time on its
 * stamps. */
#define ES_PROC_ELEMENT "mpi.proc"
struct es_proc_rec {
	uint64_t raw;     /* the raw clock (the tuples') ... */
	uint64_t wall_ns; /* ... and CLOCK_REALTIME, read together; 0: a free slot */
	int32_t pid, rank, size;
	int32_t fatal;    /* the signal that ended it, when the collector saw one (ending.c) */
	char host[64];
	char cmd[416];    /* the command line, arguments space-separated (cut at 415) */
};
_Static_assert(sizeof(struct es_proc_rec) == 512, "the process record has a fixed size");
#define ES_PROC_LAYOUT "qqiiii480b"

/*
 * Clocks across hosts, on the rank's board mpi.clock.  The ranks of a
 * host stamp with one line (the TSC's, MPI_Init makes them share it);
 * hosts' clocks are apart by an offset that drifts.  As Score-P does, the
 * first rank of each host measures its clock against rank 0's host by a
 * ping-pong over MPI (the quickest of ES_SYNC_ROUNDS round trips: rank 0's
 * reading falls within it, so the middle is good to half the trip), at
 * MPI_Init, after a barrier, all-reduce, all-gather or all-to-all over
 * every rank (on MPI_COMM_WORLD, or on a dup of it unless the job asked
 * for MPI_THREAD_MULTIPLE) about every ES_SYNC_EVERY_S seconds
 * (ES_SYNC_EVERY in rank 0's environment) as rank 0 decides, and at
 * MPI_Finalize; every rank of the host writes the point.  Readers (archive/clocks.c) draw a
 * line through a rank's points and move its stamps onto rank 0's host's
 * clock.  On rank 0's host every offset is 0 by construction.
 * Slot 0: MPI_Init's, slot 1: MPI_Finalize's, the others the points in
 * between, in turn (a reader that comes late keeps what it saw before).
 * kind is written last (release): 0, a free slot.
 */
#define ES_CLOCK_ELEMENT "mpi.clock"
#define ES_SYNC_SLOTS 64u
#define ES_SYNC_ROUNDS 12
#define ES_SYNC_EVERY_S 10
enum es_sync_kind { ES_SYNC_INIT = 1, ES_SYNC_FINI = 2, ES_SYNC_RUN = 3 };
struct es_sync_rec {
	uint64_t raw;      /* the rank's raw clock (its tuples') at the middle of the quickest trip */
	int64_t offset_ns; /* its host's clock minus rank 0's host's then, in ns */
	uint32_t rtt_ns;   /* that trip: the offset is good to half of it; 0 on rank 0's host */
	uint32_t kind;     /* enum es_sync_kind; 0: a free slot */
	uint64_t serial;   /* the how-manieth point of the rank, from 1 */
};
_Static_assert(sizeof(struct es_sync_rec) == 32, "clock points have a fixed size");
#define ES_SYNC_LAYOUT "qqiiq"

/*
 * Live control (esctl): a rank's element "es.ctl" holds the latest order,
 * written by esctl (here, or through a tuple server with the access that
 * reading takes); the rank notices a new one with one load on the path
 * every MPI call takes (ps_elem_watch_word) and applies it there, then
 * writes what it records now to "es.ctl.now".
 */
struct es_ctl_rec {
	uint64_t gen;               /* the order's number: 0 is the pathmap's choice at MPI_Init */
	uint32_t paused;            /* record nothing until resumed */
	uint32_t refused;           /* es.ctl.now: the orders this rank refused (es_ctl_check) */
	unsigned char collect[256]; /* by op code, as es_mpi_select made it from list */
	char list[240];             /* the list as given ([all] ...), for esctl status */
};
_Static_assert(sizeof(struct es_ctl_rec) == 512, "the control record has a fixed size");
#define ES_CTL_LAYOUT "qii256b240b"
#define ES_CTL_ELEMENT "es.ctl"
#define ES_CTL_NOW_ELEMENT "es.ctl.now"
/* Why order c cannot be applied by a rank whose last applied order is
 * numbered `applied`, with `orders` written to es.ctl since; NULL if it
 * can.  Whoever may write es.ctl may steer the job, but not break it: an
 * order is numbered after the one applied and no further than the orders
 * written since (two esctl at once may give theirs the same number),
 * says 0 or 1 in paused and in each collect byte, and holds a list of
 * printable characters ended within its 240 bytes. */
const char *es_ctl_check(const struct es_ctl_rec *c, uint64_t applied, uint64_t orders);
/* An order's list as text to print: at most its 240 bytes, anything but
 * printable ASCII as '?'. */
void es_ctl_list(const struct es_ctl_rec *c, char out[241]);

/* A thread's boards are named for its trace element: mpi.thread3 has
 * mpi.reqs3 and mpi.chans3.  buf gets the name, "" if trace is no MPI
 * thread's element. */
void es_mpi_board_name(char *buf, size_t len, const char *trace, const char *board);

/* Calls whose tuples are matched across the members of a communicator
 * or window: the same (code, arg) on each. */
static inline bool es_op_matched(unsigned op)
{
	const struct es_op_info *i = es_op_info(op);
	return i && (i->kind == ES_KIND_COLL || i->kind == ES_KIND_ICOLL);
}

/*
 * While an operation is under way its collector keeps it in its trace
 * element's notes: word ES_NOTE_START holds the start stamp (stored last),
 * word ES_NOTE_WHAT the operation and element.  A monitor that finds a
 * start newer than the element's latest tuple knows the thread is inside
 * that operation now.  MPI calls also note what the thread waits on:
 *   WHAT  op | element << 32: the peer's or root's world rank (ES_NONE:
 *         none, any source), or for a wait or test how many requests it
 *         was given: those whose waiter is this start, on the boards of
 *         the rank's threads
 *   ARG   the tag (ES_NONE: any) | a Sendrecv's send tag << 32; or a
 *         collective's number | its bytes << 32
 *   COMM  the communicator's serial (ES_NONE: none) | a Sendrecv's
 *         destination's world rank << 32 (ES_NONE otherwise)
 */
enum { ES_NOTE_START = 0, ES_NOTE_WHAT = 1, ES_NOTE_ARG = 2, ES_NOTE_COMM = 3 };
static inline __attribute__((always_inline)) uint64_t es_note_what(unsigned op, uint32_t element)
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
static inline __attribute__((always_inline)) void es_note_call(_Atomic uint64_t *notes, uint64_t start, unsigned op,
				uint32_t element, uint64_t arg, uint64_t comm)
{
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_WHAT], es_note_what(op, element), __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_ARG], arg, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_COMM], comm, __ATOMIC_RELAXED);
	__atomic_store_n((uint64_t *)&notes[ES_NOTE_START], start, __ATOMIC_RELEASE);
}

/*
 * A job's trace spaces, one segment per process, are named for the job so
 * that monitors find them by the job's name alone: JOB.tP for process P of
 * a pathmap job, JOB.rR for rank R of an MPI job.
 */
enum es_space_kind { ES_SPACE_PROCESS = 't', ES_SPACE_RANK = 'r' };
/*
 * A job's name: 1 to ES_JOB_MAX characters of A-Z a-z 0-9 . _ -, the first
 * a letter or a digit (never "-rf" or ".."), so that its trace spaces fit a
 * segment name for any process count below 10^13.  esrun, libescollect,
 * pathmaps, scopes, the monitors and psadm all hold names to this one
 * rule: a name one of them takes, the others can watch.
 */
#define ES_JOB_MAX 32
#define ES_JOB_RULE "1 to 32 characters of A-Z a-z 0-9 . _ -, the first a letter or a digit"
bool es_job_ok(const char *job);
/* Fills buf (PS_NAME_MAX + 1 bytes or more); -EINVAL without a buffer,
 * PS_EBADNAME (-ENAMETOOLONG) when the name would be too long or not a
 * segment name, buf then empty. */
int es_space_name(char *buf, size_t len, const char *job, enum es_space_kind kind, int n);
/* Whether segment `name` is one of job's trace spaces (job NULL: of any
 * job); its kind and number if so (either may be NULL). */
bool es_space_of(const char *name, const char *job, enum es_space_kind *kind, int *n);

#ifdef __cplusplus
}
#endif

#endif
