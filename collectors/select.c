/* select.c - which MPI calls a pathmap's (or esctl's) `collect:` list selects, by the op table of trace/trace.h. */
#include <stdio.h>
#include <string.h>

#include "collectors/collectors.h"

/* Does WORD (all, a group, polls or a name) name the op? */
static bool selects(const char *w, const struct es_op_info *o)
{
	return !strcmp(w, "all") || !strcmp(w, o->name) ||
	       !strcmp(w, es_op_group_name((enum es_op_group)o->group)) ||
	       (!strcmp(w, "polls") && o->kind == ES_KIND_POLL);
}

int es_mpi_select(const struct pm_mpi *mpi, const char *file, unsigned char collect[256], char *err,
		  size_t errlen)
{
	int nops;
	const struct es_op_info *ops = es_mpi_ops(&nops);
	bool every = !mpi || !mpi->given || mpi->ncalls == 0;
	memset(collect, 0, 256);
	for (int i = 0; i < nops; i++)
		collect[ops[i].code] = every;
	/* in order: a word adds what it names, -word takes it away again */
	for (int k = 0; !every && k < mpi->ncalls; k++) {
		const char *w = mpi->calls[k];
		bool drop = w[0] == '-', known = false;
		for (int i = 0; i < nops; i++) {
			const struct es_op_info *o = &ops[i];
			if (selects(w + drop, o)) {
				collect[o->code] = !drop;
				known = true;
			}
		}
		if (!known) {
			if (err)
				snprintf(err, errlen, "%s:%d:%d: mpi collect: expected all, a group (point-to-point, "
					 "collectives, one-sided, persistent, communicators), polls or the name of "
					 "an MPI function libescollect records (MPI_Send, MPI_Allreduce...), each "
					 "with a - to leave it out, got '%s'",
					 file ? file : "pathmap", mpi->lines ? mpi->lines[k] : 0,
					 mpi->cols ? mpi->cols[k] : 0, w);
			return PS_EINVAL;
		}
	}
	return 0;
}
