/* element.c - PastSet element operations on the ring layout of internal.h. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* How often a reader retries when the writer laps it mid-copy. */
#define PS_LAP_RETRIES 64

/* More slots than the threshold, always: a write claims its slot before it
 * publishes, so with no slot to spare a writer that died mid-write would
 * leave the oldest held tuple torn for good, and with it read_latest when
 * only one is held.  threshold is at most PS_THRESHOLD_MAX (checked). */
uint32_t ps__slots_for(uint32_t threshold)
{
	uint32_t p = 2;
	while (p <= threshold && p <= PS_THRESHOLD_MAX)
		p <<= 1;
	return p;
}

uint32_t ps__stride_for(uint32_t tuple_size)
{
	return (tuple_size + 7u) & ~7u;
}

int ps__check_name(const char *name)
{
	if (!name || !*name)
		return PS_EBADNAME;
	size_t n = 0;
	for (const char *p = name; *p; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		if (!ok || n >= PS_NAME_MAX)
			return PS_EBADNAME;
	}
	/* "." and ".." would be directory names in /dev/shm. */
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return PS_EBADNAME;
	return 0;
}

int ps__check_attr(const struct ps_elem_attr *a)
{
	if (!a)
		return PS_EINVAL;
	if (a->tuple_size == 0 || a->tuple_size > PS_TUPLE_MAX)
		return PS_ESIZE;
	if (a->threshold == 0 || a->threshold > PS_THRESHOLD_MAX)
		return PS_ETHRESHOLD;
	if (a->mode != PS_DISCARD && a->mode != PS_FLOW && a->mode != PS_BOARD)
		return PS_EINVAL;
	unsigned known = PS_MULTI_WRITER | PS_EXACT_WAKE | PS_CONTROL | PS_STAMP_WHO;
	if ((a->flags & 0xffffu & ~known) || (!(a->flags & PS_STAMP_WHO) && PS_WHO_OFF(a->flags)))
		return PS_EINVAL;
	if ((a->flags & PS_STAMP_WHO) && (size_t)PS_WHO_OFF(a->flags) + PS_WHO_LEN > a->tuple_size)
		return PS_EINVAL; /* who's place inside the tuple */
	/* a board's one writer stores in place: its slots are arrays of words */
	if (a->mode == PS_BOARD && (a->flags || a->tuple_size % 8))
		return PS_EINVAL;
	return 0;
}

size_t ps__elem_bytes(uint32_t tuple_size, uint32_t threshold)
{
	return PS_SLOTS_OFF + (size_t)ps__stride_for(tuple_size) * ps__slots_for(threshold);
}

int ps__elem_init(struct ps_ehdr *h, const struct ps_elem_attr *a, uint32_t id,
		  bool pshared)
{
	memset(h, 0, PS_SLOTS_OFF);
	h->tuple_size = (uint32_t)a->tuple_size;
	h->stride = ps__stride_for(h->tuple_size);
	h->threshold = a->threshold;
	h->nslots = ps__slots_for(a->threshold);
	h->mode = a->mode;
	h->flags = a->flags;
	h->id = id;
	int rc = ps__mutex_init(&h->wlock, pshared);
	if (rc)
		return rc;
	rc = ps__mutex_init(&h->tlock, pshared);
	if (rc) {
		pthread_mutex_destroy(&h->wlock);
		return rc;
	}
	h->magic = PS_EHDR_MAGIC;
	return 0;
}

int ps__elem_handle(ps_server *srv, struct ps_ehdr *h, struct ps_waitc *wc,
		    const char *name, const struct ps_elem_attr *a, bool writable,
		    bool can_register, bool shared, ps_elem **out)
{
	if (ps__check_attr(a))
		return PS_EBADSEG;
	size_t sz = (sizeof(ps_elem) + PS_CACHELINE - 1) / PS_CACHELINE * PS_CACHELINE;
	ps_elem *e = aligned_alloc(PS_CACHELINE, sz);
	if (!e)
		return PS_ENOMEM;
	memset(e, 0, sz);
	e->h = h;
	e->slots = h ? (unsigned char *)h + PS_SLOTS_OFF : NULL; /* NULL: remote */
	e->wc = wc;
	e->srv = srv;
	e->tuple_size = (uint32_t)a->tuple_size;
	e->stride = ps__stride_for(e->tuple_size);
	e->threshold = a->threshold;
	e->nslots = ps__slots_for(a->threshold);
	e->mask = e->nslots - 1;
	e->mode = a->mode;
	e->flags = a->flags;
	e->writable = writable;
	e->fast_write = writable && e->mode == PS_DISCARD && !e->flags;
	e->can_register = can_register;
	e->shared = shared;
	snprintf(e->name, sizeof(e->name), "%s", name);
	*out = e;
	return 0;
}

void ps_elem_close(ps_elem *e)
{
	if (!e)
		return;
	if (e->ops)
		e->ops->close(e);
	free(e);
}

uint32_t ps_elem_threshold(const ps_elem *e)
{
	return e->threshold;
}

size_t ps_elem_footprint(size_t tuple_size, uint32_t threshold)
{
	return ps__elem_bytes((uint32_t)tuple_size, threshold);
}

int ps_name_check(const char *name)
{
	return ps__check_name(name);
}

size_t ps_elem_tuple_size(const ps_elem *e)
{
	return e ? e->tuple_size : 0;
}

const char *ps_elem_name(const ps_elem *e)
{
	return e ? e->name : "";
}

/* Slot copies go word by word through relaxed atomics (ps_word, internal.h). */

/* The last, partial word of a tuple: fixed-size copies compile to plain
 * moves, where a variable-size one would go through memory. */
static inline uint64_t tail_load(const unsigned char *p, uint32_t n)
{
	uint64_t w = 0;
	switch (n) {
	case 1: memcpy(&w, p, 1); break;
	case 2: memcpy(&w, p, 2); break;
	case 3: memcpy(&w, p, 3); break;
	case 4: memcpy(&w, p, 4); break;
	case 5: memcpy(&w, p, 5); break;
	case 6: memcpy(&w, p, 6); break;
	case 7: memcpy(&w, p, 7); break;
	}
	return w;
}

static inline void tail_store(unsigned char *p, uint64_t w, uint32_t n)
{
	switch (n) {
	case 1: memcpy(p, &w, 1); break;
	case 2: memcpy(p, &w, 2); break;
	case 3: memcpy(p, &w, 3); break;
	case 4: memcpy(p, &w, 4); break;
	case 5: memcpy(p, &w, 5); break;
	case 6: memcpy(p, &w, 6); break;
	case 7: memcpy(p, &w, 7); break;
	}
}

static inline void slot_store(ps_word *dst, const unsigned char *src, uint32_t size)
{
	uint32_t n = size / 8, i;
	for (i = 0; i < n; i++) {
		uint64_t w;
		memcpy(&w, src + 8 * i, 8);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
	if (size % 8) {
		uint64_t w;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (size > 8) {
			/* The 8 bytes that end the tuple, shifted down: one
			 * load that stays inside the caller's buffer. */
			memcpy(&w, src + size - 8, 8);
			w >>= 8 * (8 - size % 8);
		} else
#endif
			w = tail_load(src + 8 * i, size % 8);
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
}

static inline void slot_load(unsigned char *dst, ps_word *src, uint32_t size)
{
	uint32_t n = size / 8, i;
	uint64_t w = 0;
	for (i = 0; i < n; i++) {
		w = atomic_load_explicit(&src[i], memory_order_relaxed);
		memcpy(dst + 8 * i, &w, 8);
	}
	if (size % 8) {
		uint64_t last = atomic_load_explicit(&src[i], memory_order_relaxed);
		uint32_t r = size % 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (size > 8) {
			/* Store the tuple's last 8 bytes in one go: the top of
			 * the previous word, then the partial one. */
			uint64_t v = (w >> (8 * r)) | (last << (8 * (8 - r)));
			memcpy(dst + size - 8, &v, 8);
			return;
		}
#endif
		tail_store(dst + 8 * i, last, r);
	}
}

/* After copying indices >= first: were they all whole? */
static inline bool copy_intact(const ps_elem *e, uint64_t first)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->h->wseq, memory_order_relaxed) <= first + e->nslots;
}

static uint64_t current_oldest(const ps_elem *e)
{
	uint64_t t = atomic_load_explicit(&e->h->tail, memory_order_acquire);
	uint64_t h = atomic_load_explicit(&e->h->head, memory_order_acquire);
	uint64_t w = atomic_load_explicit(&e->h->wseq, memory_order_acquire);
	uint64_t lo = oldest_of(e, h, t);
	/* A write in progress has already claimed the oldest slot. */
	if (w > e->nslots && w - e->nslots > lo)
		lo = w - e->nslots;
	return lo;
}

/* The store itself, once the caller owns the right to write index head. */
static inline __attribute__((always_inline)) uint64_t publish(ps_elem *e, const void *tuple)
{
	/* the protocol ps_put_begin writes down, for a tuple of any size */
	const struct ps_writer w = { .head = &e->h->head, .wseq = &e->h->wseq, .slots = e->slots,
				     .mask = e->mask, .stride = e->stride };
	uint64_t i;
	slot_store(ps_put_begin(&w, &i), tuple, e->tuple_size);
	atomic_store_explicit(&e->h->head, i + 1, memory_order_release);
	return i;
}

static int write_locked(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx);

/* This process as a writer of a PS_STAMP_WHO element: what the kernel says
 * of it (its pid, user and name; the name read once, the pid each time:
 * a child of a fork writes as itself) */
static char self_comm[17] = "?";
static pthread_once_t self_comm_once = PTHREAD_ONCE_INIT;

static void self_comm_read(void)
{
	FILE *f = fopen("/proc/self/comm", "re");
	if (f) {
		if (fgets(self_comm, sizeof(self_comm), f))
			self_comm[strcspn(self_comm, "\n")] = 0;
		fclose(f);
	}
	for (char *c = self_comm; *c; c++) /* the name a process gave itself: no control bytes */
		*c = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
}

static const char *self_who(char *buf, size_t len)
{
	pthread_once(&self_comm_once, self_comm_read);
	snprintf(buf, len, "pid %d uid %u %s", (int)getpid(), (unsigned)geteuid(), self_comm);
	return buf;
}

int ps_write_as(ps_elem *e, const void *tuple, const char *who, int timeout_ms, uint64_t *idx)
{
	if (ps_unlikely(!e || !tuple))
		return PS_EINVAL;
	if (e->ops || !(e->flags & PS_STAMP_WHO))
		return ps_write(e, tuple, timeout_ms, idx);
	size_t n = e->tuple_size, off = PS_WHO_OFF(e->flags);
	unsigned char small[1024], *t = n <= sizeof(small) ? small : malloc(n);
	if (!t)
		return PS_ENOMEM;
	memcpy(t, tuple, n);
	memset(t + off, 0, PS_WHO_LEN);
	snprintf((char *)t + off, PS_WHO_LEN, "%s", who ? who : "");
	int rc = write_locked(e, t, timeout_ms, idx);
	if (t != small)
		free(t);
	return rc;
}

static __attribute__((noinline)) int write_slow(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx)
{
	char who[PS_WHO_LEN];
	if (!e->ops && (e->flags & PS_STAMP_WHO))
		return ps_write_as(e, tuple, self_who(who, sizeof(who)), timeout_ms, idx);
	return write_locked(e, tuple, timeout_ms, idx);
}

static int write_locked(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx)
{
	struct ps_ehdr *h = e->h;
	struct ps_deadline d;
	int rc;

	if (e->ops)
		return e->ops->write(e, tuple, timeout_ms, idx);
	if (!e->writable)
		return PS_EROFS;
	if (e->mode == PS_BOARD)
		return PS_EINVAL; /* rewritten in place, never appended to */
	/* Writers hold wlock to copy one tuple, but for a flow element's,
	 * which may wait under it for room.  A discard element's writer waits
	 * its turn whatever its timeout: a trylock lost the tuple of whichever
	 * of two racing writers came second (a tree edge's collector, shared by
	 * the child that writes and the node that takes, lost one in 20 runs). */
	ps__deadline(&d, e->mode == PS_DISCARD ? -1 : timeout_ms);
	bool locked = e->flags & PS_MULTI_WRITER;
	if (locked && (rc = ps__lock(&h->wlock, &d)))
		return rc;
	if (e->mode == PS_FLOW) {
		for (;;) {
			uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
			uint64_t hd = atomic_load_explicit(&h->head, memory_order_relaxed);
			if (hd - t < e->threshold)
				break;
			rc = ps__wait(e, &h->tail, t, &e->wc->writers, &d);
			if (rc)
				goto out;
		}
	}
	uint64_t i = publish(e, tuple);
	BASE_INVARIANT("a flow element holds at most threshold tuples: head - tail <= threshold",
		     e->mode != PS_FLOW || i + 1 - atomic_load_explicit(&h->tail, memory_order_relaxed) <= e->threshold);
	if (idx)
		*idx = i;
	/* Flow elements carry data someone is blocked on: pay for the fence
	 * so that no wake-up is ever missed (see wait.c). */
	if (e->mode == PS_FLOW || (e->flags & PS_EXACT_WAKE))
		atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->wc->readers, memory_order_relaxed))
		ps__wake(e, &h->head, &e->wc->readers);
	rc = 0;
out:
	if (locked)
		pthread_mutex_unlock(&h->wlock);
	return rc;
}

int ps_writer_init(ps_elem *e, size_t tuple_size, struct ps_writer *w)
{
	/* an exact-wake element's one writer too (ps_put_end_exact) */
	bool one = e && e->writable && e->mode == PS_DISCARD && e->flags == PS_EXACT_WAKE && !e->ops;
	if (!e || !w || !(e->fast_write || one) || e->tuple_size != tuple_size)
		return PS_EINVAL;
	*w = (struct ps_writer){ .head = &e->h->head, .wseq = &e->h->wseq, .slots = e->slots,
				 .mask = e->mask, .stride = e->stride, .readers = &e->wc->readers, .e = e };
	return 0;
}

void ps__writer_wake(const struct ps_writer *w)
{
	ps__wake(w->e, &w->e->h->head, &w->e->wc->readers);
}

int ps_write(ps_elem *e, const void *tuple, int timeout_ms, uint64_t *idx)
{
	if (ps_unlikely(!e || !tuple))
		return PS_EINVAL;
	/* The trace-element case: one writer, discard mode, nobody to wait for. */
	if (ps_likely(e->fast_write)) {
		uint64_t i = publish(e, tuple);
		BASE_INVARIANT("a trace element has one writer: no write begun but this one's, which is published",
			     atomic_load_explicit(&e->h->wseq, memory_order_relaxed) == i + 1);
		if (idx)
			*idx = i;
		if (ps_unlikely(atomic_load_explicit(&e->wc->readers, memory_order_relaxed)))
			ps__wake(e, &e->h->head, &e->wc->readers);
		return 0;
	}
	return write_slow(e, tuple, timeout_ms, idx);
}

/* Slots [first, first + n) of a board, as they are: its writer's slot
 * versions, if it keeps any, say which copies are whole. */
static int board_read(ps_elem *e, uint64_t first, size_t n, void *out)
{
	if (first >= e->threshold)
		return 0;
	if (n > e->threshold - first)
		n = (size_t)(e->threshold - first);
	unsigned char *dst = out;
	for (size_t k = 0; k < n; k++)
		slot_load(dst + k * e->tuple_size, slot_of(e, first + k), e->tuple_size);
	atomic_thread_fence(memory_order_acquire);
	return (int)n;
}

void *ps_board(ps_elem *e)
{
	return e && !e->ops && e->writable && e->mode == PS_BOARD ? e->slots : NULL;
}

int ps_read(ps_elem *e, uint64_t idx, void *out, int timeout_ms, uint64_t *oldest)
{
	if (ps_unlikely(!e || !out))
		return PS_EINVAL;
	if (ps_unlikely(e->ops))
		return e->ops->read(e, idx, out, timeout_ms, oldest);
	if (ps_unlikely(e->mode == PS_BOARD))
		return board_read(e, idx, 1, out) == 1 ? 0 : PS_EINVAL;
	struct ps_ehdr *h = e->h;
	struct ps_deadline d;
	bool have_deadline = false;

	for (;;) {
		uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);
		if (ps_likely(idx < hd)) {
			uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
			uint64_t lo = oldest_of(e, hd, t);
			if (idx >= lo) {
				slot_load(out, slot_of(e, idx), e->tuple_size);
				if (copy_intact(e, idx))
					return 0;
			}
			if (oldest)
				*oldest = current_oldest(e);
			return PS_EDISCARDED;
		}
		if (!have_deadline) {
			ps__deadline(&d, timeout_ms);
			have_deadline = true;
		}
		int rc = ps__wait(e, &h->head, hd, &e->wc->readers, &d);
		if (rc)
			return rc;
	}
}

int ps_read_latest(ps_elem *e, void *out, uint64_t *idx)
{
	if (ps_unlikely(!e || !out))
		return PS_EINVAL;
	if (ps_unlikely(e->ops))
		return e->ops->read_latest(e, out, idx);
	if (ps_unlikely(e->mode == PS_BOARD))
		return PS_EINVAL;
	struct ps_ehdr *h = e->h;
	for (int tries = 0; tries < PS_LAP_RETRIES; tries++) {
		uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);
		uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
		if (oldest_of(e, hd, t) >= hd)
			return PS_ENODATA;
		slot_load(out, slot_of(e, hd - 1), e->tuple_size);
		if (copy_intact(e, hd - 1)) {
			if (idx)
				*idx = hd - 1;
			return 0;
		}
	}
	return PS_EAGAIN;
}

int ps_read_range(ps_elem *e, uint64_t first, size_t n, void *out, uint64_t *oldest)
{
	if (ps_unlikely(!e || (!out && n)))
		return PS_EINVAL;
	if (ps_unlikely(e->ops))
		return e->ops->read_range(e, first, n, out, oldest);
	if (ps_unlikely(e->mode == PS_BOARD))
		return board_read(e, first, n, out);
	struct ps_ehdr *h = e->h;
	uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
	if (first < oldest_of(e, hd, t)) {
		if (oldest)
			*oldest = current_oldest(e);
		return PS_EDISCARDED;
	}
	if (first >= hd || n == 0)
		return 0;
	if (n > hd - first)
		n = hd - first;
	if (n > (size_t)INT32_MAX)
		n = INT32_MAX;
	unsigned char *dst = out;
	for (size_t k = 0; k < n; k++)
		slot_load(dst + k * e->tuple_size, slot_of(e, first + k), e->tuple_size);
	/* Later indices are newer, so if the first copy is whole, all are. */
	if (!copy_intact(e, first)) {
		if (oldest)
			*oldest = current_oldest(e);
		return PS_EDISCARDED;
	}
	return (int)n;
}

int ps_take(ps_elem *e, void *out, int timeout_ms, uint64_t *idx)
{
	if (!e || !out)
		return PS_EINVAL;
	if (e->ops)
		return e->ops->take(e, out, timeout_ms, idx);
	struct ps_ehdr *h = e->h;
	struct ps_deadline d;
	int rc;

	if (!e->writable)
		return PS_EROFS;
	if (e->mode == PS_BOARD)
		return PS_EINVAL;
	ps__deadline(&d, timeout_ms);
	if ((rc = ps__lock(&h->tlock, &d)))
		return rc;
	if (atomic_load_explicit(&h->j_active, memory_order_relaxed)) {
		/* The last taker died mid-take: finish its bookkeeping.  Its
		 * tuple was taken, by a process that is gone. */
		atomic_store_explicit(&h->tail, h->j_tail, memory_order_release);
		atomic_store_explicit(&h->taken, h->j_taken, memory_order_release);
		atomic_store_explicit(&h->j_active, 0, memory_order_relaxed);
	}
	for (;;) {
		/* Takers hold tlock, so tail only moves under us. */
		uint64_t t = atomic_load_explicit(&h->tail, memory_order_relaxed);
		uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);
		uint64_t lo = oldest_of(e, hd, t);
		if (lo < hd) {
			slot_load(out, slot_of(e, lo), e->tuple_size);
			if (!copy_intact(e, lo))
				continue; /* discarded under us: the oldest moved on */
			/* tail before taken: a concurrent ps_elem_stats may then
			 * over-count discards for an instant, never under-count. */
			h->j_tail = lo + 1;
			h->j_taken = atomic_load_explicit(&h->taken, memory_order_relaxed) + 1;
			BASE_INVARIANT("every index below the oldest held was taken or discarded: taken <= tail <= head",
				     h->j_taken <= h->j_tail && h->j_tail <= hd);
			atomic_store_explicit(&h->j_active, 1, memory_order_release);
			atomic_store_explicit(&h->tail, h->j_tail, memory_order_release);
			atomic_store_explicit(&h->taken, h->j_taken, memory_order_release);
			atomic_store_explicit(&h->j_active, 0, memory_order_release);
			if (idx)
				*idx = lo;
			if (e->mode == PS_FLOW) {
				atomic_thread_fence(memory_order_seq_cst);
				if (atomic_load_explicit(&e->wc->writers, memory_order_relaxed))
					ps__wake(e, &h->tail, &e->wc->writers);
			}
			break;
		}
		if ((rc = ps__wait(e, &h->head, hd, &e->wc->readers, &d)))
			break;
	}
	pthread_mutex_unlock(&h->tlock);
	return rc;
}

_Atomic uint64_t *ps_elem_notes(ps_elem *e)
{
	return e && e->writable && !e->ops ? e->h->note : NULL;
}

uint64_t ps_note_get(const ps_elem *e, unsigned word)
{
	if (!e || word >= PS_NOTE_WORDS)
		return 0;
	if (e->ops) {
		uint64_t v[PS_NOTE_WORDS];
		return e->ops->notes(e, v) ? 0 : v[word];
	}
	return atomic_load_explicit(&e->h->note[word], memory_order_relaxed);
}

int ps_notes_get(const ps_elem *e, uint64_t out[PS_NOTE_WORDS])
{
	if (!e || !out)
		return PS_EINVAL;
	if (e->ops)
		return e->ops->notes(e, out);
	for (unsigned w = 0; w < PS_NOTE_WORDS; w++)
		out[w] = atomic_load_explicit(&e->h->note[w], memory_order_acquire);
	return 0;
}

const uint64_t *ps_elem_watch_word(ps_elem *e)
{
	return e && !e->ops ? (const uint64_t *)&e->h->head : NULL;
}

int ps_elem_stats(ps_elem *e, struct ps_stats *st)
{
	if (!e || !st)
		return PS_EINVAL;
	if (e->ops)
		return e->ops->stats(e, st);
	struct ps_ehdr *h = e->h;
	uint64_t taken = atomic_load_explicit(&h->taken, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
	uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);
	uint64_t lo = oldest_of(e, hd, t);
	/* a board holds its slots from the first to the last, always */
	if (e->mode == PS_BOARD)
		hd = e->threshold, lo = 0;
	st->written = hd;
	st->taken = taken;
	st->unfinished = atomic_load_explicit(&h->wseq, memory_order_acquire) > hd;
	/* Every index below the oldest held was either taken or discarded. */
	st->discarded = lo > taken ? lo - taken : 0;
	st->oldest = lo;
	st->threshold = e->threshold;
	st->tuple_size = e->tuple_size;
	st->mode = e->mode;
	st->flags = e->flags;
	return 0;
}

const char *ps_strerror(int err)
{
	switch (err) {
	case 0: return "success";
	case PS_EINVAL: return "invalid argument";
	case PS_ENOMEM: return "out of memory";
	case PS_EEXIST: return "segment or element already exists";
	case PS_ENOENT: return "no such segment or element";
	case PS_EACCES: return "permission denied";
	case PS_ETIMEDOUT: return "timed out";
	case PS_EROFS: return "handle is read-only";
	case PS_ENOSPC: return "no room left in the segment, or in the memory behind it (df /dev/shm)";
	case PS_ENODATA: return "element holds no tuple";
	case PS_EAGAIN: return "writer kept overtaking the reader; try again";
	case PS_E2BIG: return "the batch's answer would exceed a frame; ask for fewer";
	case PS_EBADNAME: return "bad name (1-47 characters of A-Z a-z 0-9 . _ -)";
	case PS_ESIZE: return "tuple size does not match the element";
	case PS_ETHRESHOLD: return "threshold must be between 1 and 2^26 tuples";
	case PS_EDISCARDED: return "tuple no longer held (discarded or taken)";
	case PS_EBADSEG: return "not a PastSet segment of this version";
	case PS_EPROTO: return "the tuple server broke the wire protocol";
	case PS_ELOST: return "lost the tuple server: unreachable, or it stopped answering";
	case PS_EHOST: return "unknown host name";
	case PS_EPARTIAL: return "the segment is still being made, or its maker died making it";
	default: return err < 0 && err > -PS_ERRBASE ? strerror(-err) : "unknown error";
	}
}
