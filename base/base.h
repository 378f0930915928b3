/* base.h - what every layer builds with: the one hash table and vector, the hash, the clock, checked invariants, UTF-8, and how files are opened. */
#ifndef ES_BASE_H
#define ES_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The bottom layer (docs/ARCHITECTURE.md): standard headers only, nothing
 * of EventSpace's below it.  Functions return 0 or -errno; none keeps
 * global state.
 */

/*
 * Invariants checked, as SQLite's pager asserts its states: where a
 * comment states an invariant, BASE_INVARIANT(NAME, COND) checks it in the
 * debug builds (-DES_DEBUG: the sanitizer flavour of make check, and the
 * collector make check preloads as build/.../lib/debug/libescollect.so)
 * and costs nothing in the others.  NAME is the invariant's words, as the
 * comment states it; a broken one says NAME, COND, file and line on
 * stderr and aborts, so that the test that broke it fails where it did.
 */
#ifdef ES_DEBUG
#define BASE_INVARIANT(name, cond) ((cond) ? (void)0 : base__invariant_broken(name, #cond, __FILE__, __LINE__))
#else
#define BASE_INVARIANT(name, cond) ((void)0)
#endif
_Noreturn void base__invariant_broken(const char *name, const char *cond, const char *file, int line);

/*
 * The one hash of EventSpace's tables: a key of several words or a string
 * is folded into one word (FNV-1a), and the word placed by Fibonacci
 * hashing, its product with 2^64/phi, whose top bits every bit of the key
 * moves (one multiply on the hot paths).  Collisions probe the next slot.
 * Only for memory of one process: what another process reads is scanned,
 * never probed.
 *
 * A folded key is used as the key itself (messages' keys, call sites,
 * channels): two of a job's keys folding alike would take 2^32 of them to
 * be likely.  A table whose keys are names (the pathmaps') refuses a
 * second name of equal fold rather than mistake one for the other.
 */
#define BASE_HASH_SEED 0xcbf29ce484222325ull
static inline uint64_t base_hash_fold(uint64_t h, uint64_t word)
{
	return (h ^ word) * 0x100000001b3ull;
}
static inline uint64_t base_hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = base_hash_fold(h, (unsigned char)*s);
	return base_hash_fold(h, 0xff); /* the end: "ab" + "c" is not "a" + "bc" */
}
/* key's slot in a table of cap slots, a power of two and at least 2. */
static inline size_t base_hash_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll((unsigned long long)cap)));
}
static inline size_t base_probe(size_t i, size_t cap)
{
	return (i + 1) & (cap - 1);
}

/*
 * The one hash table: 64-bit keys (any value, 0 too) to values of a fixed
 * size, in the table itself.  Open addressing, linear probing, at most
 * half full, deletion by backward shift (no tombstones: a live reader's
 * table, keys coming and going for hours, never fills with them).
 *
 * A zeroed table maps to uint32_t values (most tables map a key to an
 * index into a base_vec); base_tab_init gives it another value size
 * before its first use.  A value pointer is good until the next
 * base_tab_put or base_tab_del of the table (both may move values).
 *
 * Invariants (checked in the debug builds, base_tab_check):
 *  - cap is 0 or a power of two, n < cap / 2 + 1;
 *  - n is the number of used slots;
 *  - every used key is reached from its home slot without crossing an
 *    unused one (what backward shift keeps and lookups rely on).
 */
struct base_tab {
	unsigned char *slots; /* cap slots of stride bytes: the key, then the value */
	unsigned char *used;  /* a byte per slot: 1 used */
	size_t n, cap, size, stride;
};
void base_tab_init(struct base_tab *t, size_t value_size);
/* The value of key; NULL if absent. */
void *base_tab_get(const struct base_tab *t, uint64_t key);
/* The value of key, added zeroed when new (*fresh says which, if fresh is
 * not NULL); NULL: no memory (the table is as it was). */
void *base_tab_put(struct base_tab *t, uint64_t key, bool *fresh);
/* Room for n entries in all without growing: 0 or -ENOMEM. */
int base_tab_reserve(struct base_tab *t, size_t n);
/* key's entry removed; nothing if absent. */
void base_tab_del(struct base_tab *t, uint64_t key);
/* Every entry once, in no order: start with *at = 0; NULL at the end. */
void *base_tab_next(const struct base_tab *t, size_t *at, uint64_t *key);
/* Empties the table, keeping its memory and value size. */
void base_tab_clear(struct base_tab *t);
/* Frees its memory; the table is zeroed (a uint32_t table again). */
void base_tab_free(struct base_tab *t);
void base_tab_check(const struct base_tab *t);

/* A uint32_t table's common case: key -> val, 0 or -ENOMEM. */
static inline int base_tab_set32(struct base_tab *t, uint64_t key, uint32_t val)
{
	uint32_t *v = (uint32_t *)base_tab_put(t, key, NULL);
	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

/*
 * The one growable vector: n elements of size bytes, doubling.  Set size
 * before the first push ((struct base_vec){ .size = sizeof(T) }).  An
 * element pointer is good until the next push.
 */
struct base_vec {
	void *v;
	size_t n, cap, size;
};
/* A new element at the end, zeroed; NULL: no memory (the vector is as it was). */
void *base_vec_push(struct base_vec *v);
/* Room for at least n elements in all; 0 or -ENOMEM. */
int base_vec_reserve(struct base_vec *v, size_t n);
void base_vec_free(struct base_vec *v); /* keeps size */
#define BASE_AT(vec, type, i) (&((type *)(vec).v)[i])

/*
 * The one clock every layer waits, times out and paces by: CLOCK_MONOTONIC,
 * in ns.  A deadline is a point on it; a negative timeout's is UINT64_MAX.
 */
uint64_t base_now_ns(void);
/* timeout_ms from now: now for 0, UINT64_MAX for a negative timeout. */
uint64_t base_deadline_ns(int timeout_ms);
/* What is left of a deadline as a timeout: 0 once it passed, -1 (forever)
 * for UINT64_MAX, at most INT_MAX ms. */
int base_ms_left(uint64_t deadline_ns);

/* The length of the UTF-8 character at p (1 to 4), 0 if the bytes there
 * are none (a stray or overlong byte, a surrogate, past U+10FFFF, cut by
 * the string's end): what every printer of another process's text asks
 * (st_text, ar_json_string). */
static inline int base_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return c ? 1 : 0;
	int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n > 2 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) || (c == 0xf0 && p[1] < 0x90) ||
		      (c == 0xf4 && p[1] >= 0x90)))
		return 0;
	return n;
}

/* --- Files EventSpace writes and reads (files.c) --------------------------- */

/* Opens path to write it afresh, the way every file EventSpace writes is
 * opened: never through a symbolic link at path, never into a file another
 * user owns or one with a second name (a hard link); a new file gets mode,
 * one there already loses any bits beyond it.  NULL and errno if refused
 * (ELOOP for a link, EACCES another's file, EPERM not a plain file). */
FILE *base_fopen_out(const char *path, mode_t mode);
/* Opens path to read, only if it is a regular file: a FIFO, socket or
 * device (ES_PATHMAP=/some/fifo) would block or never end.  NULL and errno
 * if refused (EINVAL: not a regular file). */
FILE *base_fopen_in(const char *path);
/* Makes directory dir with mode, or takes the one there if it is a real
 * directory of ours that nobody else may write into: 0 or -errno. */
int base_mkdir_out(const char *dir, mode_t mode);
/* Opens path to read a file a program takes code or orders from (a
 * pathmap, a handler library), as OpenSSH takes its keys: only a regular
 * file owned by the program's user or root that neither its group nor
 * others may write, in directories (every one up to /) of its user or
 * root that nobody else may put files in (not writable by group or
 * others, unless sticky as /tmp).  Checked on the file opened, so that
 * what is read is what was checked.  A descriptor, or -errno with why
 * (naming the file or directory and whose it is) in why. */
int base_open_trusted(const char *path, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* ES_BASE_H */
