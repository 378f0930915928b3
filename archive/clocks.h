/* clocks.h - the archive's clocks file (clocks.c): each rank's clock points, and the move they make of its stamps. */
#ifndef ES_ARCHIVE_CLOCKS_H
#define ES_ARCHIVE_CLOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "archive/archive.h"

struct ar_clocks;
struct ar_clocks *ar_clocks_new(void);
void ar_clocks_free(struct ar_clocks *c);
/* 1 if it changed what was known, 0 if not, or a negative code */
int ar_clocks_shift(struct ar_clocks *c, int rank, int64_t shift_ns);
int ar_clocks_add(struct ar_clocks *c, const struct ar_sync *s);
int ar_clocks_print(const struct ar_clocks *c, FILE *f);
/* The file f (named path), whole; a line it cannot read fails, saying which. */
int ar_clocks_read(FILE *f, const char *path, struct ar_clocks **out, char *err, size_t errlen);
/* Whether rank's stamps move (its line is not 0 at every point: never on
 * rank 0's host), and by how much at t (its stamp on the archive's clock,
 * as recorded): add it. */
bool ar_clocks_moves(struct ar_clocks *c, int rank);
int64_t ar_clocks_delta(const struct ar_clocks *c, int rank, uint64_t t);
/* Rank's points, in time order; how many. */
int ar_clocks_points(const struct ar_clocks *c, int rank, const struct ar_sync **out);

#endif
