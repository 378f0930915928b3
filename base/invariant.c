/* invariant.c - what a broken BASE_INVARIANT says before it aborts. */
#include <stdio.h>
#include <stdlib.h>

#include "base.h"

_Noreturn void base__invariant_broken(const char *name, const char *cond, const char *file, int line)
{
	fprintf(stderr, "EventSpace: invariant broken: %s (%s, at %s:%d)\n", name, cond, file, line);
	fflush(stderr);
	abort();
}
