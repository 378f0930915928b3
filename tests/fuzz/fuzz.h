/* fuzz.h - what the fuzzer's targets share: one seeded generator, the case kept for replay, the hang bound. */
#ifndef ES_TESTS_FUZZ_H
#define ES_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#define HANG_S 5 /* a case that takes longer is a hang: alarm() ends the run */

uint64_t rnd(void);
size_t below(size_t n); /* 0 .. n - 1; 0 when n is 0 */
extern const char *outdir;
/* what into OUTDIR/fuzz-case.WHAT, before the case runs */
void keep_case(const char *what, const void *p, size_t n);

/* archive.c: real recordings (SEEDS/NAME/, each an archive) mutated where
 * their formats say something, then read by every reader */
int fuzz_archives(const char *seeds, long count, double seconds);

#endif
