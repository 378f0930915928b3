/* pastset.h - PastSet tuple spaces: elements of fixed-size tuples in tuple servers. */
#ifndef PASTSET_H
#define PASTSET_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/base.h" /* the clock, hashes, invariants, files: everyone's, PastSet's too */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The contract (the layers above it: docs/ARCHITECTURE.md):
 *  - An element has a name, a tuple size fixed at creation and a sequence of
 *    tuples.  Every tuple written gets the next 64-bit index; indices never
 *    repeat, and the count of tuples written is the next index.
 *  - PS_DISCARD elements hold at most `threshold` tuples: past that the
 *    oldest is dropped and counted; the writer never blocks.
 *  - PS_FLOW elements make the writer wait for space; a tuple leaves only
 *    when it is taken, so nothing unread is lost.
 *  - Reads observe without removing.  A read of an index that is no longer
 *    held fails with PS_EDISCARDED and reports the oldest index still held.
 *
 * Every function returns 0 (or a count, where documented) or a negative
 * error code; ps_strerror() turns a code into a message.  There is no global
 * error state.  Timeouts are in milliseconds: 0 never waits, PS_FOREVER
 * waits as long as it takes.
 */

/* Error codes.  Where errno has a fitting code it is used, negated. */
#define PS_EINVAL      (-EINVAL)    /* bad argument */
#define PS_ENOMEM      (-ENOMEM)    /* out of memory */
#define PS_EEXIST      (-EEXIST)    /* segment or element already exists */
#define PS_ENOENT      (-ENOENT)    /* no such segment or element */
#define PS_EACCES      (-EACCES)    /* permission denied */
#define PS_ETIMEDOUT   (-ETIMEDOUT) /* the wait ran out */
#define PS_EROFS       (-EROFS)     /* write through a read-only handle */
#define PS_ENOSPC      (-ENOSPC)    /* the segment has no room for the element */
#define PS_ENODATA     (-ENODATA)   /* the element holds no tuple */
#define PS_EAGAIN      (-EAGAIN)    /* the writer kept overtaking the reader */
#define PS_E2BIG       (-E2BIG)     /* a batch whose answer would not fit one frame */
#define PS_ERRBASE     4096
#define PS_EBADNAME    (-(PS_ERRBASE + 1)) /* name empty, too long or with bad characters */
#define PS_ESIZE       (-(PS_ERRBASE + 2)) /* tuple size differs from the element's */
#define PS_ETHRESHOLD  (-(PS_ERRBASE + 3)) /* threshold of 0 (or too large) */
#define PS_EDISCARDED  (-(PS_ERRBASE + 4)) /* index no longer held; see *oldest */
#define PS_EBADSEG     (-(PS_ERRBASE + 5)) /* not a PastSet segment, or another version */
#define PS_EPROTO      (-(PS_ERRBASE + 6)) /* a tuple server's answer broke the wire protocol */
#define PS_ELOST       (-(PS_ERRBASE + 7)) /* a tuple server unreachable, or it stopped answering */
#define PS_EHOST       (-(PS_ERRBASE + 8)) /* a host name that does not resolve */
#define PS_EPARTIAL    (-(PS_ERRBASE + 9)) /* a segment still being made, or left half-made */

#define PS_FOREVER     (-1)
#define PS_NAME_MAX    47            /* longest element or segment name */
#define PS_TUPLE_MAX   65536         /* largest tuple size in bytes */
#define PS_THRESHOLD_MAX (1u << 26)  /* largest threshold (tuples) */

const char *ps_strerror(int err);


typedef struct ps_server ps_server; /* a tuple server: in-process or shared memory */
typedef struct ps_elem ps_elem;     /* a process-local handle on one element */

enum ps_mode {
	PS_DISCARD = 0, /* bounded by a discard threshold; writer never blocks */
	PS_FLOW = 1,    /* bounded by flow control; writer waits for space */
	PS_BOARD = 2,   /* no sequence: `threshold` slots its writer rewrites in place (ps_board) */
};

enum ps_elem_flags {
	/* Several threads or processes write the element: writes take a lock.
	 * Without it an element has exactly one writer and writes are lock-free. */
	PS_MULTI_WRITER = 1u << 0,
	/* Readers block on this element and must be woken at once (a tree's
	 * results, say).  Costs each write a full fence; without it a reader
	 * may sleep up to 2 ms past a write (trace elements don't care). */
	PS_EXACT_WAKE = 1u << 1,
	/* A control element: written by whoever may read its segment, here or
	 * through a tuple server that serves the segment read-only (esctl
	 * steers a job with the access watching it takes).  Give it
	 * PS_MULTI_WRITER too: its writers are other processes. */
	PS_CONTROL = 1u << 2,
	/* Who wrote each tuple is written into it by the writing side, never
	 * taken from the writer: PS_WHO_LEN bytes at the offset PS_WHO_AT
	 * gives (give PS_WHO_AT(off), not this bit alone).  A tuple server
	 * writing for a client puts the client there as the kernel reports it
	 * ("tcp from 10.1.2.3", "tcp from this host, uid 1000"); a process
	 * writing itself, its pid, user and name ("pid 4242 uid 1000
	 * esctl").  A process that may write the segment itself is its
	 * owner's (0600): it could write anything there, as it could trace
	 * the application. */
	PS_STAMP_WHO = 1u << 3,
};
#define PS_WHO_LEN 48
#define PS_WHO_AT(off) (PS_STAMP_WHO | (unsigned)(off) << 16)
#define PS_WHO_OFF(flags) ((flags) >> 16)

struct ps_elem_attr {
	size_t tuple_size;     /* bytes per tuple, 1..PS_TUPLE_MAX */
	uint32_t threshold;    /* tuples held at most, 1..PS_THRESHOLD_MAX */
	enum ps_mode mode;
	unsigned flags;        /* enum ps_elem_flags */
};

struct ps_stats {
	uint64_t written;   /* tuples ever written == the next index */
	uint64_t discarded; /* tuples dropped by the threshold before anyone took them */
	uint64_t taken;     /* tuples removed by ps_take() */
	uint64_t oldest;    /* oldest index still held (== written when empty) */
	/* 1 if a write has begun and not been published: for a moment while a
	 * writer is at it, for good if it died there (its tuple is skipped,
	 * never read torn).  Local and shared-memory elements only: 0 remote. */
	uint32_t unfinished;
	uint32_t threshold;
	uint32_t tuple_size;
	enum ps_mode mode;
	unsigned flags;
};

/* --- Tuple servers ------------------------------------------------------ */

/* An in-process server: elements live in this process's memory. */
int ps_server_create_local(ps_server **out);

/* Shared-memory servers.  A segment is a named POSIX shared-memory object,
 * mode 0600, that outlives its creator until ps_shm_unlink() (or the psadm
 * command) removes it, so monitors can read it after a crash.  Names follow
 * the element rules ([A-Za-z0-9._-], at most PS_NAME_MAX). */
/* When a job's segments are removed (docs/guide.md states it; psadm list
 * shows it; ps_shm_release and psadm clean honour it). */
enum ps_keep {
	PS_KEEP_FAILED = 0, /* default: removed when its job ended cleanly (every
			       segment of the group closed); kept when a process died */
	PS_KEEP_ALWAYS = 1, /* kept until removed by hand (psadm rm, psadm clean --all) */
	PS_KEEP_NEVER = 2,  /* removed at a clean end, and by psadm clean even when one died */
};
struct ps_shm_attr {
	size_t size;          /* bytes for element data; 0 = 64 MiB (sparse) */
	uint32_t max_elems;   /* elements the directory holds; 0 = 1024 */
	unsigned flags;       /* enum ps_shm_flags */
	enum ps_keep keep;    /* stored in the segment for whoever removes it */
};
enum ps_shm_flags {
	/* A segment of that name whose creator is gone (closed or stale) is
	 * removed first: the usual wish of a job that starts again.  One whose
	 * creator lives still gives PS_EEXIST. */
	PS_SHM_REPLACE_DEAD = 1u << 0,
};
int ps_server_create_shm(const char *name, const struct ps_shm_attr *attr,
			 ps_server **out);
/* A segment of the caller's own, for itself (a monitor's answers, a
 * scope's channel to its helper): named PREFIX-R, R twelve hex digits
 * from getrandom, a name no other user can take first.  A name found
 * taken (by another user: said in why, with who) is passed over for
 * another.  The name made into name (PS_NAME_MAX + 1 bytes); PREFIX at
 * most PS_NAME_MAX - 13 characters.  0, or a negative code with why. */
int ps_server_create_private(const char *prefix, const struct ps_shm_attr *attr, ps_server **out, char *name,
			     char *why, size_t whylen);

enum ps_open_flags {
	PS_RDONLY = 0,     /* observe only: tuples are mapped read-only */
	PS_RDWR = 1u << 0, /* also write, take and create elements */
	/* ps_server_open_shm: a segment still being made is PS_EPARTIAL at
	 * once, rather than waited for (up to 0.2 s) when it is under a
	 * second old: for loops that must never wait on a segment */
	PS_NOWAIT = 1u << 1,
};
int ps_server_open_shm(const char *name, unsigned flags, ps_server **out);

/* Unmaps the server and frees its handles' memory.  Elements opened from it
 * must be closed first.  A shared segment stays until unlinked; its creator
 * marks it cleanly closed. */
void ps_server_destroy(ps_server *srv);

int ps_shm_unlink(const char *name);

/* What psadm shows about a segment, read without disturbing its users. */
enum ps_shm_state {
	PS_SHM_LIVE = 1,   /* its creator is running */
	PS_SHM_CLOSED = 2, /* its creator destroyed its server and went away */
	PS_SHM_STALE = 3,  /* its creator died without closing it */
};
struct ps_shm_info {
	char name[PS_NAME_MAX + 1];
	uint64_t size;      /* bytes mapped */
	uint32_t elems;
	int32_t creator_pid;
	enum ps_shm_state state;
	uint64_t creator_start; /* when its creator started, as ps_proc_start says */
	uint64_t used;      /* bytes of memory it really takes (pages written or reserved) */
	enum ps_keep keep;
};
int ps_shm_info(const char *name, struct ps_shm_info *info);
/* The segments `names` are one job's, on this host (one missing: on another
 * host, or gone).  Called by each of its processes as it ends cleanly,
 * after destroying its own server: once none is live and none was left by
 * a process that died, those whose keep is not PS_KEEP_ALWAYS are removed
 * (the last to end removes them all), unless a reader waits for them
 * (ps_shm_expect below: it releases them when done).  How many it removed. */
int ps_shm_release(const char *const *names, int n);
/*
 * Readers that wait.  A reader started before the segments it reads exist
 * (a monitor waiting for its job) says so with ps_shm_expect: while it
 * lives, ps_shm_release leaves the segments whose names begin with
 * PREFIX, so that a job that starts and ends between two of its looks is
 * still there to be read; at its end the reader calls ps_shm_expect_end
 * and then ps_shm_release on what it read, which removes the segments as
 * the job would have.  The job never waits for a reader: one that died is
 * passed over, and only the caller's own user's and root's notes count.
 */
typedef struct ps_expect ps_expect;
/* PREFIX: [A-Za-z0-9._-], at most PS_NAME_MAX.  0, PS_EINVAL, or an errno code. */
int ps_shm_expect(const char *prefix, ps_expect **out);
void ps_shm_expect_end(ps_expect *e);
/* Whether a live reader (of this user or root) waits for segment `name`. */
bool ps_shm_expected(const char *name);
/* Removes the caller's notes whose reader is gone (a monitor killed before
 * it could end its note; the next look at the job's prefix would too).
 * How many went, or a negative code. */
int ps_shm_expect_sweep(void);
/* The policy of a segment this user owns, set after it was made (by the
 * job that decides it, for segments its layers made). */
int ps_shm_set_keep(const char *name, enum ps_keep keep);
/* "failed", "always", "never": PS_EINVAL for anything else. */
int ps_keep_parse(const char *s, enum ps_keep *out);
const char *ps_keep_name(enum ps_keep k);
#define PS_KEEP_RULE "failed (removed when the job ends cleanly, kept when a process died), always or never"
/* When process pid (0: this one) started: clock ticks after boot
 * (sysconf(_SC_CLK_TCK) a second, /proc/PID/stat); 0 if it is gone or a
 * zombie.  A pid and its start name one process for good. */
uint64_t ps_proc_start(pid_t pid);
/* Who owns the file that holds segment `name` (a link is not followed):
 * another user's means they took the name first, and the segment is not
 * ours to open.  0, or PS_ENOENT... */
int ps_shm_owner(const char *name, uid_t *uid);
/* Calls fn for every PastSet segment on this host; stops early and returns
 * what fn returned if that is non-zero. */
int ps_shm_list(int (*fn)(const char *name, void *arg), void *arg);

/* Number of elements the server holds, and the name of the i-th (0-based,
 * in creation order) copied into buf[PS_NAME_MAX + 1]. */
int ps_server_count(ps_server *srv);
int ps_server_elem_name(ps_server *srv, int i, char *buf);

/* 256 bytes in the segment header that a layer above may use for data every
 * reader needs (the collectors store their clock calibration there).  Written
 * once by the creator before readers look. */
#define PS_USER_AREA 256
int ps_server_user_area(ps_server *srv, void **area);

/* --- Elements ----------------------------------------------------------- */

int ps_elem_create(ps_server *srv, const char *name,
		   const struct ps_elem_attr *attr, ps_elem **out);
/* tuple_size 0 accepts whatever the element has; otherwise it must match. */
int ps_elem_open(ps_server *srv, const char *name, size_t tuple_size,
		 ps_elem **out);
void ps_elem_close(ps_elem *e);

size_t ps_elem_tuple_size(const ps_elem *e);
/* Tuples the element holds at most (its discard threshold or flow bound). */
uint32_t ps_elem_threshold(const ps_elem *e);
/* Bytes an element of that shape takes in its server (to size a segment). */
size_t ps_elem_footprint(size_t tuple_size, uint32_t threshold);
/* 0 if name can name an element or segment, PS_EBADNAME if not. */
int ps_name_check(const char *name);
const char *ps_elem_name(const ps_elem *e);
int ps_elem_stats(ps_elem *e, struct ps_stats *st);
/* A word that changes whenever a tuple is written to e (its count of
 * tuples written), for a reader that must notice a write on a hot path
 * with one load: __atomic_load_n(w, __ATOMIC_ACQUIRE) != what it saw last.
 * NULL for an element behind a tuple server.  Valid while e is open. */
const uint64_t *ps_elem_watch_word(ps_elem *e);

/* Appends one tuple.  A PS_DISCARD element never waits for room (a
 * multi-writer one waits only its turn among writers, each copying one
 * tuple); a PS_FLOW element waits up to timeout_ms for space.  *idx (may be
 * NULL) gets its index. */
int ps_write(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx);
/* ps_write of an element that stamps who writes (PS_STAMP_WHO), saying who
 * (a tuple server's client): what the tuple holds there is replaced.
 * Elsewhere the same as ps_write. */
int ps_write_as(ps_elem *e, const void *tuple, const char *who, int timeout_ms, uint64_t *idx);

/*
 * The writer's own path to a discard element in this process's memory, for
 * a collector that writes tuples of one fixed size on its hot path: what
 * ps_write does for it, with the element's fields already loaded and the
 * copy a run of word stores the compiler can see whole (a 36-byte trace
 * tuple in five stores, where ps_write's loop over any size took 70
 * instructions).  Only the element's one writer may use it, and only while
 * the element is open.  The protocol is ps_write's: ps_put_begin bumps
 * wseq before the slot is touched, ps_put_end publishes head after.
 */
struct ps_writer {
	_Atomic uint64_t *head, *wseq;
	unsigned char *slots;
	uint64_t mask;
	uint32_t stride;
	const _Atomic uint32_t *readers; /* somebody sleeps on head: wake them */
	ps_elem *e;
};
/* 0 and *w filled if e takes this path for tuples of tuple_size bytes
 * (in memory, single writer, discard mode, no flag but PS_EXACT_WAKE);
 * PS_EINVAL otherwise.  A PS_EXACT_WAKE element's tuples end with
 * ps_put_end_exact. */
int ps_writer_init(ps_elem *e, size_t tuple_size, struct ps_writer *w);
void ps__writer_wake(const struct ps_writer *w); /* ps_put_end's rare case */

/* The slot's words for the next tuple: store them (relaxed), then ps_put_end. */
static inline _Atomic uint64_t *ps_put_begin(const struct ps_writer *w, uint64_t *i)
{
	*i = atomic_load_explicit(w->head, memory_order_relaxed);
	atomic_store_explicit(w->wseq, *i + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	return (_Atomic uint64_t *)(w->slots + (size_t)(*i & w->mask) * w->stride);
}

static inline void ps_put_end(const struct ps_writer *w, uint64_t i)
{
	atomic_store_explicit(w->head, i + 1, memory_order_release);
	if (__builtin_expect(atomic_load_explicit(w->readers, memory_order_relaxed) != 0, 0))
		ps__writer_wake(w);
}

/* ps_put_end for a PS_EXACT_WAKE element: the fence that lets no sleeping
 * reader miss the tuple (wait.c) */
static inline void ps_put_end_exact(const struct ps_writer *w, uint64_t i)
{
	atomic_store_explicit(w->head, i + 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(w->readers, memory_order_relaxed) != 0)
		ps__writer_wake(w);
}

/* Copies tuple idx into out, waiting up to timeout_ms for it to be written.
 * If idx is no longer held: PS_EDISCARDED and *oldest (may be NULL) gets the
 * oldest index held, so a reader can resume from there. */
int ps_read(ps_elem *e, uint64_t idx, void *out, int timeout_ms,
	    uint64_t *oldest);

/* Copies the newest tuple; PS_ENODATA when there is none.  *idx may be NULL. */
int ps_read_latest(ps_elem *e, void *out, uint64_t *idx);

/* Copies up to n tuples starting at index first, never waiting; returns the
 * number copied (0 when first is not written yet).  If first is no longer
 * held, or the writer overtakes the copy: PS_EDISCARDED and *oldest. */
int ps_read_range(ps_elem *e, uint64_t first, size_t n, void *out,
		  uint64_t *oldest);

/* Removes the oldest tuple and copies it into out, waiting up to timeout_ms
 * for one.  *idx (may be NULL) gets its index. */
int ps_take(ps_elem *e, void *out, int timeout_ms, uint64_t *idx);

/* Notes: a few words beside an element's tuples that its writer may set at
 * any time and readers observe, without the tuple protocol (each word is
 * read whole, but not together with the others).  Collectors keep the
 * operation in flight there, so a monitor can tell where a thread waits. */
#define PS_NOTE_WORDS 4
/* The words themselves, for a writer's hot path; NULL for a read-only handle. */
_Atomic uint64_t *ps_elem_notes(ps_elem *e);
uint64_t ps_note_get(const ps_elem *e, unsigned word);
/* All of them at once (one request for a remote element), word 0 first,
 * each read with acquire; 0 or an error. */
int ps_notes_get(const ps_elem *e, uint64_t out[PS_NOTE_WORDS]);

/*
 * Boards: an element of mode PS_BOARD is not a sequence but a table of
 * `threshold` slots of tuple_size bytes (a multiple of 8), all zero at
 * first, that its one writer rewrites in place through ps_board(), as a
 * process keeps a table of its state where monitors can see it: the
 * requests it has open, say.  Readers copy slots with ps_read_range (first
 * = the first slot; locally or through a tuple server alike) and ps_read;
 * whether a slot copied while its writer rewrote it is whole is the
 * writer's and readers' business (a version word in each slot, say):
 * PastSet only keeps and serves the bytes.  Writes, takes and read_latest
 * are PS_EINVAL on a board; its stats say written = threshold, oldest 0.
 */
/* The writer's slots, each tuple_size bytes apart; NULL for a read-only or
 * remote handle, or an element that is no board. */
void *ps_board(ps_elem *e);

/* --- Across hosts (pastset/PROTOCOL.md) -------------------------------- */

/*
 * A tuple server over TCP serves segments: in-process servers the
 * application adds by name, and (for a node daemon) this host's shared
 * segments, opened on demand.  Its event loop is a thread of its own on
 * io_uring.  It never waits for a client: reads of tuples not there yet,
 * takes of nothing and writes to a full flow element answer at once, and
 * the client polls.  Stop it before destroying the servers it serves.
 */
typedef struct ps_tcp ps_tcp;
struct ps_tcp_attr {
	const char *addr;        /* NULL: 127.0.0.1; any other needs secret_file */
	int port;                /* 0: any free port */
	const char *secret_file; /* the shared secret: a file only its owner can read */
	const char *shm_prefix;  /* also serve this host's segments whose names
				    start so (a node daemon); NULL: only those added */
	bool shm_writable;       /* open those read-write (else read-only) */
	int idle_ms;             /* a client silent this long after connecting, or this
				    long into a frame, or not reading replies, is
				    dropped; 0: 5000 */
	int sndbuf;              /* kernel send buffer per client (bytes); 0: the default */
};
int ps_tcp_start(const struct ps_tcp_attr *attr, ps_tcp **out);
/* Serves srv as `segment` from now on. */
int ps_tcp_add(ps_tcp *t, const char *segment, ps_server *srv);
int ps_tcp_port(const ps_tcp *t);
/* The address to give others: the one it listens on, or for 0.0.0.0 this
 * host's first IPv4 interface that is up and not loopback. */
const char *ps_tcp_addr(const ps_tcp *t);
struct ps_tcp_counts {
	uint64_t accepted;  /* connections */
	uint64_t frames;    /* requests served */
	uint64_t bad;       /* dropped: a malformed, oversized or unknown frame */
	uint64_t refused;   /* dropped: wrong secret or version, or no room */
	uint64_t slow;      /* dropped: stalled mid-frame, or not reading replies */
	uint64_t held;      /* handshakes held before the secret was looked at (guard.c) */
};
void ps_tcp_counts(const ps_tcp *t, struct ps_tcp_counts *c);
void ps_tcp_stop(ps_tcp *t);

#define PS_SECRET_MAX 256
#define PS_SECRET_MIN 16
/* Whether file can hold a shared secret: a regular file of yours that only
 * you can read, of PS_SECRET_MIN to PS_SECRET_MAX bytes (a final newline
 * aside: a shorter one is guessed).  0, or an error and, in why (may be
 * NULL), the reason in words. */
int ps_secret_check(const char *file, char *why, size_t len);
/* The secret itself, its final newlines cut, into out (PS_SECRET_MAX + 1
 * bytes): for a program that checks what others send (esview); the same
 * refusals as ps_secret_check, the reason in why (may be NULL). */
int ps_secret_read(const char *file, char *out, size_t *len, char *why, size_t wlen);
/* Whether given is the secret want, in a time that tells nothing of how
 * much of it was right. */
bool ps_secret_equal(const char *want, size_t want_len, const char *given, size_t given_len);

/*
 * Who is on the other end of a connection, and how fast those who do not
 * know a secret may guess it (guard.c: the policy and its figures).  The
 * tuple servers and esview keep one guard each.
 *
 * ps_peer_who: a key for the client of connection fd.  On loopback it is
 * the user the kernel says owns the client's end (*uid gets it; any
 * address of 127/8 is the same user), elsewhere the address (IPv6 by its
 * /64; *uid -1).  0 with *uid -2: the client is already gone.
 */
#define PS_WHO_IPV4 (1ull << 62)
#define PS_WHO_IPV6 (2ull << 62)
#define PS_WHO_USER (3ull << 62)
uint64_t ps_peer_who(int fd, long *uid);
typedef struct ps_guard ps_guard;
int ps_guard_create(ps_guard **out);
void ps_guard_destroy(ps_guard *g);
/* How long (ms) to hold a handshake of who before its secret is looked
 * at; 0: at once.  Held, never refused: the caller looks at the secret
 * when the hold is over and must bound how many handshakes it holds. */
int64_t ps_guard_hold(ps_guard *g, uint64_t who, int64_t now_ms);
/* A handshake of who passed or failed. */
void ps_guard_note(ps_guard *g, uint64_t who, bool passed, int64_t now_ms);
struct ps_guard_counts {
	uint64_t failed, passed, held;
};
void ps_guard_counts(const ps_guard *g, struct ps_guard_counts *c);
struct ps_remote_attr {
	const char *secret_file; /* needed by servers off loopback */
	int timeout_ms;          /* a server silent this long is an error; 0: 10000 */
	int spin_us;             /* poll for a reply this long before sleeping (the
				    caller's CPU, never the server's); 0: 100, < 0: never */
};
/* A segment served at addr:port, as a server like any other: elements
 * opened from it answer every element call over the network (one
 * connection per address, shared).  Creating elements there is the owning
 * host's business (PS_EROFS).  flags: PS_RDONLY or PS_RDWR. */
int ps_server_open_remote(const char *addr, int port, const char *segment, unsigned flags,
			  const struct ps_remote_attr *attr, ps_server **out);
/* The server's host's CLOCK_MONOTONIC minus ours, in ns, as measured when
 * its connection opened (within half the quickest of five round trips);
 * 0 for this host's servers. */
int64_t ps_server_clock_offset(const ps_server *srv);
/* "NAME" (a segment of this host) or "HOST:PORT/NAME" (one served there). */
int ps_server_open_at(const char *where, unsigned flags, const struct ps_remote_attr *attr,
		      ps_server **out);
/* Whether the segment at `where` (as above) has a live writer: an enum
 * ps_shm_state, or an error (a tuple server that is gone: its errno). */
int ps_state_at(const char *where, const struct ps_remote_attr *attr);
/* Splits "HOST:PORT[/NAME]"; segment[PS_NAME_MAX + 1] gets "" without NAME. */
int ps_locator_parse(const char *where, char *host, size_t hostlen, int *port, char *segment);
/* Calls fn with every segment the server at addr:port serves whose name
 * starts with prefix. */
int ps_remote_list(const char *addr, int port, const struct ps_remote_attr *attr,
		   const char *prefix, int (*fn)(const char *segment, void *arg), void *arg);

/* Byte order.  Tuples cross in the writer's order.  A reader whose order
 * differs converts them on arrival, field by field, if it named the
 * layout: one letter per field, b (1 byte), h (2), i (4), q (8), each
 * optionally after a count ("hhi160b": two shorts, an int, 160 bytes).  Without a
 * layout tuples are bytes and cross as they are.  Local elements accept and
 * ignore it. */
#define PS_LAYOUT_MAX 63
int ps_elem_set_layout(ps_elem *e, const char *layout);

/* Batches.  The newest tuple of each of n elements, remote ones in one
 * request per server (all servers asked before any answer is read): out
 * holds the tuples one after another; status[i] and idx[i] (may be NULL)
 * each one's result.  Returns the number read, or an error. */
int ps_read_latest_many(ps_elem *const *e, int n, void *out, uint64_t *idx, int *status);
/* The same for a caller that keeps what it read: idx[i] holds on entry the
 * index of the tuple out already holds for e[i] (PS_NONE: none), and an
 * element whose newest is still that one is not copied again: status[i] is
 * PS_SAME.  On return idx[i] is the index now in out, or PS_NONE where the
 * read failed.  Local elements are swept with their headers and newest
 * slots fetched ahead, so that the cache misses overlap.  Returns the
 * number read or the same, or an error. */
#define PS_NONE UINT64_MAX
#define PS_SAME 1
int ps_read_latest_since(ps_elem *const *e, int n, void *out, uint64_t *idx, int *status);
/* The same fetch, kept for each element's next ps_read_latest(): how a tree
 * of single reads over remote leaves costs one round trip.  Returns the
 * number fetched; a server that failed fails its own elements' next reads
 * (PS_ELOST...), not the others'.  An element fetched and not read yet is
 * not fetched again (a scope fetches for its tree, whose sweep then asks
 * for the same).  Forget drops what was not read. */
int ps_prefetch_latest(ps_elem *const *e, int n);
void ps_prefetch_forget(ps_elem *const *e, int n);
/* What the last fetch got for e, not yet read: 0 (a tuple, or nothing
 * fetched, or a local element), PS_ENODATA, or the error its server gave
 * (PS_ELOST for one that could not be reached). */
int ps_prefetched(ps_elem *e);

#ifdef __cplusplus
}
#endif
#endif /* PASTSET_H */
