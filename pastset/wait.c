/* wait.c - blocking for PastSet: deadlines, futex waits on shared counters, robust locks. */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/*
 * A waiter raises a "sleeping" flag, re-checks the counter and sleeps on its
 * low 32 bits; the side that moves the counter wakes the word only when the
 * flag is up, and lowers it, so a write makes no syscall unless somebody
 * went to sleep since the last wake.
 *
 * For PS_DISCARD elements the writer does not fence between publishing head
 * and reading the count (that fence would cost more than the rest of the
 * write), so a wake-up can in principle be missed.  Waiters therefore sleep
 * in slices of PS_WAIT_SLICE_NS and re-check: a missed wake-up costs at most
 * one slice, never a hang.  Handles that cannot register (a read-only
 * mapping) poll with a growing sleep.
 */
#define PS_WAIT_SLICE_NS  (2 * 1000 * 1000L)
#define PS_POLL_MIN_NS    (20 * 1000L)
#define PS_SPIN           256
#define PS_YIELDS         64

static uint32_t *lo32(_Atomic uint64_t *word)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t *)word;
#else
	return (uint32_t *)word + 1;
#endif
}

void ps__deadline(struct ps_deadline *d, int timeout_ms)
{
	d->forever = timeout_ms < 0;
	d->now = timeout_ms == 0;
	d->backoff = 0;
	d->slept = false;
	d->at = base_deadline_ns(timeout_ms);
}

/* Nanoseconds left before the deadline, capped at cap; 0 when it passed. */
static long remaining_ns(const struct ps_deadline *d, long cap)
{
	if (d->forever)
		return cap;
	if (d->now)
		return 0;
	uint64_t now = base_now_ns();
	if (now >= d->at)
		return 0;
	return d->at - now < (uint64_t)cap ? (long)(d->at - now) : cap;
}

static void futex_wait(uint32_t *addr, uint32_t val, long ns, bool shared)
{
	struct timespec ts = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L };
	int op = FUTEX_WAIT | (shared ? 0 : FUTEX_PRIVATE_FLAG);
	/* EAGAIN (value changed), EINTR and ETIMEDOUT all mean: look again. */
	syscall(SYS_futex, addr, op, val, &ts, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

int ps__wait(ps_elem *e, _Atomic uint64_t *word, uint64_t seen,
	     _Atomic uint32_t *waiters, struct ps_deadline *d)
{
	if (d->now)
		return PS_ETIMEDOUT;
	/* The other side is often a few hundred ns from moving the counter
	 * (a flow element's taker, a neighbour's next row): a short spin
	 * saves two syscalls and a context switch each way. */
	for (int i = 0; i < PS_SPIN; i++) {
		if (atomic_load_explicit(word, memory_order_acquire) != seen)
			return 0;
		cpu_relax();
	}
	/* With more threads than cores the one we wait for may be queued
	 * behind us: give it the core.  A futex wake-up costs tens of us on
	 * a virtual machine; a yield costs well under one. */
	for (int i = 0; i < PS_YIELDS && !d->slept; i++) {
		if (atomic_load_explicit(word, memory_order_acquire) != seen)
			return 0;
		sched_yield();
	}
	d->slept = true;
	long ns = remaining_ns(d, PS_WAIT_SLICE_NS);
	if (ns == 0)
		return PS_ETIMEDOUT;
	if (!e->can_register) {
		/* Nobody will wake us: sleep a little, then a little more. */
		if (atomic_load_explicit(word, memory_order_acquire) != seen)
			return 0;
		d->backoff = d->backoff ? d->backoff * 2 : PS_POLL_MIN_NS;
		if (d->backoff > PS_WAIT_SLICE_NS)
			d->backoff = PS_WAIT_SLICE_NS;
		futex_wait(lo32(word), (uint32_t)seen,
			   ns < d->backoff ? ns : d->backoff, e->shared);
		return 0;
	}
	atomic_store_explicit(waiters, 1, memory_order_seq_cst);
	if (atomic_load_explicit(word, memory_order_seq_cst) == seen)
		futex_wait(lo32(word), (uint32_t)seen, ns, e->shared);
	return 0;
}

void ps__wake(ps_elem *e, _Atomic uint64_t *word, _Atomic uint32_t *waiters)
{
	/* One wake per sleeping episode, not one per write: whoever clears
	 * the flag wakes everyone; a sleeper that sleeps again sets it again. */
	if (!atomic_exchange_explicit(waiters, 0, memory_order_relaxed))
		return;
	int op = FUTEX_WAKE | (e->shared ? 0 : FUTEX_PRIVATE_FLAG);
	syscall(SYS_futex, lo32(word), op, INT_MAX, NULL, NULL, 0);
}

int ps__mutex_init(pthread_mutex_t *m, bool pshared)
{
	pthread_mutexattr_t a;
	int rc = pthread_mutexattr_init(&a);
	if (rc)
		return -rc;
	if (pshared) {
		/* Robust: a writer killed while holding the lock must not
		 * wedge every other process on the segment. */
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	}
	rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -rc;
}

#ifdef __SANITIZE_THREAD__
/* GCC 12's TSan does not intercept pthread_mutex_clocklock and then reports
 * the unlock as a bug; give it the call it knows, on the realtime clock. */
static int clocklock(pthread_mutex_t *m, uint64_t at_ns)
{
	struct timespec now_r, at;
	uint64_t now = base_now_ns(), left = at_ns > now ? at_ns - now : 0;
	clock_gettime(CLOCK_REALTIME, &now_r);
	uint64_t r = (uint64_t)now_r.tv_sec * 1000000000u + (uint64_t)now_r.tv_nsec + left;
	at.tv_sec = (time_t)(r / 1000000000u);
	at.tv_nsec = (long)(r % 1000000000u);
	return pthread_mutex_timedlock(m, &at);
}
#else
static int clocklock(pthread_mutex_t *m, uint64_t at_ns)
{
	struct timespec at = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) };
	return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &at);
}
#endif

int ps__lock(pthread_mutex_t *m, const struct ps_deadline *d)
{
	int rc;
	if (d->forever)
		rc = pthread_mutex_lock(m);
	else if (d->now)
		rc = pthread_mutex_trylock(m);
	else
		rc = clocklock(m, d->at);
	if (rc == EOWNERDEAD) {
		/* The ring is consistent at every step (the seqlock covers a
		 * half-written slot), so the state can be taken over as is. */
		pthread_mutex_consistent(m);
		rc = 0;
	}
	if (rc == EBUSY || rc == ETIMEDOUT)
		return PS_ETIMEDOUT;
	return -rc;
}
