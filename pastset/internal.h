/* internal.h - PastSet's private layout: element rings, segments, waits. */
#ifndef PASTSET_INTERNAL_H
#define PASTSET_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "pastset.h"

#define PS_CACHELINE 64
#define PS_EHDR_MAGIC 0x50534531u /* "PSE1" */

#define ps_likely(x)   __builtin_expect(!!(x), 1)
#define ps_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * One element's shared state, followed by its slots.  The same layout is
 * used in process memory and in a shared segment, so every operation has a
 * single implementation.
 *
 * Slots: nslots (a power of two > threshold) slots of `stride` bytes.  The
 * ring keeps up to nslots tuples physically, but only `threshold` count as
 * held; the slack lets index -> slot be a mask instead of a division.
 *
 * Consistency is a seqlock over the whole ring: the writer bumps `wseq`
 * before it touches slot (i & mask) for index i, and publishes `head` after.
 * A reader that copied index i and then sees wseq <= i + nslots knows no
 * write to that slot had started, so its copy is whole.
 */
struct ps_ehdr {
	/* Written by the writer on every write. */
	_Alignas(PS_CACHELINE) _Atomic uint64_t head; /* tuples published */
	_Atomic uint64_t wseq;                         /* writes started */
	_Atomic uint64_t note[PS_NOTE_WORDS];          /* the writer's notes, same line */
	/* Written by takers only, under tlock. */
	_Alignas(PS_CACHELINE) _Atomic uint64_t tail;  /* next index to take */
	_Atomic uint64_t taken;
	/* A take in progress, so that the next taker can finish it if this
	 * one dies between moving tail and counting: counts stay exact. */
	uint64_t j_tail, j_taken;
	_Atomic uint32_t j_active;
	/* Fixed at creation. */
	_Alignas(PS_CACHELINE) uint32_t magic;
	uint32_t tuple_size, stride, threshold, nslots, mode, flags, id;
	pthread_mutex_t wlock; /* serialises writers of PS_MULTI_WRITER elements */
	pthread_mutex_t tlock; /* serialises takers */
};

#define PS_SLOTS_OFF (((sizeof(struct ps_ehdr) + PS_CACHELINE - 1) / PS_CACHELINE) * PS_CACHELINE)

/* "Somebody may be asleep" flags, kept apart from the tuples so that a
 * monitor whose mapping of the tuples is read-only can still be woken. */
struct ps_waitc {
	_Alignas(PS_CACHELINE) _Atomic uint32_t readers; /* asleep on head */
	_Atomic uint32_t writers;                         /* asleep on tail */
};

struct ps_elem {
	/* What reads and writes use, in the first cache line (handles are
	 * line-aligned): a sweep over thousands of elements misses once per
	 * handle, not twice. */
	struct ps_ehdr *h;
	unsigned char *slots;
	const struct ps_elem_ops *ops; /* NULL: in memory, the inline path */
	struct ps__relem *remote;      /* ops' state: on another host (remote.c) */
	uint64_t mask;
	uint32_t tuple_size, stride, threshold, nslots;
	bool fast_write;   /* single writer, discard mode: the lock-free path */
	bool writable;     /* handle may write and take */
	bool can_register; /* wc is writable: waiters get woken, not polled */
	bool shared;       /* futexes are process-shared */
	struct ps_waitc *wc;
	ps_server *srv;
	enum ps_mode mode;
	unsigned flags;
	char name[PS_NAME_MAX + 1];
};

/*
 * Servers and elements that are not in this process's memory (a tuple
 * server on another host: remote.c) are reached through a table of
 * operations, as SQLite's pager picks its methods by state.  Those in
 * memory have none: element.c and server.c test for a table first and keep
 * their own code inline, so the local write path costs one predictable
 * branch, as before.
 */
struct ps_elem_ops {
	int (*write)(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx);
	int (*read)(ps_elem *e, uint64_t idx, void *out, int timeout_ms, uint64_t *oldest);
	int (*read_latest)(ps_elem *e, void *out, uint64_t *idx);
	int (*read_range)(ps_elem *e, uint64_t first, size_t n, void *out, uint64_t *oldest);
	int (*take)(ps_elem *e, void *out, int timeout_ms, uint64_t *idx);
	int (*stats)(ps_elem *e, struct ps_stats *st);
	int (*notes)(const ps_elem *e, uint64_t out[PS_NOTE_WORDS]);
	void (*close)(ps_elem *e); /* its own state; the handle is freed after */
};
struct ps_server_ops {
	int (*elem_open)(ps_server *s, const char *name, size_t tuple_size, ps_elem **out);
	int (*count)(ps_server *s);
	int (*elem_name)(ps_server *s, int i, char *buf);
	void *(*user_area)(ps_server *s);
	int64_t (*clock_offset)(const ps_server *s);
	int (*state)(ps_server *s); /* enum ps_shm_state, or an error */
	void (*close)(ps_server *s); /* its own state; the server is freed after */
};
/* server.c: a server reached through ops, with impl as its state. */
int ps__server_new(const struct ps_server_ops *ops, void *impl, const char *name, bool writable,
		   ps_server **out);
void *ps__server_impl(const ps_server *s);
bool ps__server_writable(const ps_server *s);
/* Its segment's state (enum ps_shm_state), as its server says; or a negative code. */
int ps__server_state(ps_server *s);

/* server.c: ps_shm_info, waiting or not for a segment being made */
int ps__shm_info(const char *name, struct ps_shm_info *info, bool may_wait);

/* element.c */
size_t ps__elem_bytes(uint32_t tuple_size, uint32_t threshold);
/*
 * Slot copies go word by word through relaxed atomics: a reader may race
 * with the writer on a slot (the seqlock then discards the copy), and the
 * language only allows that race on atomics.  On x86-64 and AArch64 these
 * are the same plain moves memcpy would make.
 */
typedef _Atomic uint64_t ps_word;

static inline ps_word *slot_of(const ps_elem *e, uint64_t idx)
{
	return (ps_word *)(e->slots + (size_t)(idx & e->mask) * e->stride);
}

/* Oldest index still held, given head and tail as loaded. */
static inline uint64_t oldest_of(const ps_elem *e, uint64_t head, uint64_t tail)
{
	uint64_t lo = head > e->threshold ? head - e->threshold : 0;
	return tail > lo ? tail : lo;
}

int ps__elem_init(struct ps_ehdr *h, const struct ps_elem_attr *a, uint32_t id,
		  bool pshared);
int ps__check_attr(const struct ps_elem_attr *a);
/* a: the element's attributes as checked by the caller, not re-read from h */
int ps__elem_handle(ps_server *srv, struct ps_ehdr *h, struct ps_waitc *wc,
		    const char *name, const struct ps_elem_attr *a, bool writable,
		    bool can_register, bool shared, ps_elem **out);
uint32_t ps__slots_for(uint32_t threshold);
uint32_t ps__stride_for(uint32_t tuple_size);
int ps__check_name(const char *name);
/* server.c: which file a segment of that name is now (it may be replaced) */
int ps__shm_id(const char *name, uint64_t *dev, uint64_t *ino);

/* layout.c: tuples in another byte order */
int ps__layout_check(const char *layout, size_t tuple_size);
void ps__layout_swap(const char *layout, unsigned char *tuple);

/* wait.c */
struct ps_deadline {
	bool forever;
	bool now;          /* timeout 0: never wait */
	uint64_t at;        /* base_now_ns() */
	long backoff;       /* polling sleep, for handles that cannot register */
	bool slept;         /* yielding is over: sleep from now on */
};
void ps__deadline(struct ps_deadline *d, int timeout_ms);
int ps__wait(ps_elem *e, _Atomic uint64_t *word, uint64_t seen,
	     _Atomic uint32_t *waiters, struct ps_deadline *d);
void ps__wake(ps_elem *e, _Atomic uint64_t *word, _Atomic uint32_t *waiters);
int ps__lock(pthread_mutex_t *m, const struct ps_deadline *d);
int ps__mutex_init(pthread_mutex_t *m, bool pshared);

#endif
