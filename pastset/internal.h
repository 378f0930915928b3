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
 * Slots: nslots (a power of two >= threshold) slots of `stride` bytes.  The
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
	struct ps_ehdr *h;
	unsigned char *slots;
	struct ps_waitc *wc;
	ps_server *srv;
	uint64_t mask;
	uint32_t tuple_size, stride, threshold, nslots;
	enum ps_mode mode;
	unsigned flags;
	bool fast_write;   /* single writer, discard mode: the lock-free path */
	bool writable;     /* handle may write and take */
	bool can_register; /* wc is writable: waiters get woken, not polled */
	bool shared;       /* futexes are process-shared */
	char name[PS_NAME_MAX + 1];
};

/* element.c */
size_t ps__elem_bytes(uint32_t tuple_size, uint32_t threshold);
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

/* wait.c */
struct ps_deadline {
	bool forever;
	bool now;          /* timeout 0: never wait */
	struct timespec at; /* CLOCK_MONOTONIC */
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
