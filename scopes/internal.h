/* internal.h - what the scope files share: the reduce and filter logic, subtree widths. */
#ifndef SCOPES_INTERNAL_H
#define SCOPES_INTERNAL_H

#include "scopes.h"

void es__reduce(enum es_reduce how, const struct es_trace *in, size_t k, struct es_trace *out);
bool es__filter_match(const void *filter_state, const struct es_trace *t);
/* Tuples a read through stage s returns: forks add their branches up,
 * reduces make one, the rest pass on what is below them. */
size_t es__scope_width_below(const paths_stage *s);
/* Gives a convert stage the clock of its leaf's trace space. */
void es__convert_clock(paths_stage *convert, const struct es_clock *c);

#endif
