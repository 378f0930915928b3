/* colls.c - MPI collectives matched across ranks by (operation, communicator, number) as their tuples arrive. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"

/*
 * A collective is complete when every rank of its communicator reported
 * it; what each rank's tuple names is read from the ranks' own lists
 * (es_mpi).  Operations in progress sit in a table and leave it when
 * complete, so the cost per event stays constant however long the job
 * runs.
 */
struct op {
	uint32_t arg, root, size;
	int nranks;
	uint64_t first_in, last_in, last_out;
	int last_rank;
};

#define MAX_OPS (1 << 16) /* collectives in flight at once: more are not matched */

struct cm {
	struct base_tab ops; /* op_key -> struct op: the collectives not complete yet */
};

int cm_create(cm **out)
{
	cm *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	base_tab_init(&c->ops, sizeof(struct op));
	*out = c;
	return 0;
}

void cm_destroy(cm *c)
{
	if (c)
		base_tab_free(&c->ops);
	free(c);
}

/* A collective's key as one word (base.h's hash). */
static uint64_t op_key(unsigned code, uint64_t comm, uint32_t arg)
{
	return base_hash_fold(base_hash_fold(BASE_HASH_SEED, comm), (uint64_t)code << 32 | arg);
}

static struct op *find_op(cm *c, uint64_t key, uint32_t arg)
{
	bool fresh = false;
	struct op *o = c->ops.n < MAX_OPS ? base_tab_put(&c->ops, key, &fresh) : base_tab_get(&c->ops, key);
	if (o && fresh)
		*o = (struct op){ .arg = arg, .first_in = UINT64_MAX };
	return o;
}

int cm_event(cm *c, es_mpi *mpi, const struct es_trace *t, int rank, struct cm_done *d)
{
	unsigned code = es_op_code(t->op);
	/* a nonblocking collective is matched by the tuple of its completion,
	 * which runs from its call to the wait or test that completed it */
	if (!es_op_matched(code) || (es_op_info(code)->kind == ES_KIND_ICOLL && !(t->op & ES_OP_DONE)))
		return 0;
	const struct es_mpi_comm *cc = es_mpi_comm_of(mpi, rank, t->comm, 0xffff, t->start, NULL);
	uint64_t key = cc ? op_key(code, cc->id, t->arg) : 0;
	struct op *o = cc ? find_op(c, key, t->arg) : NULL;
	if (!o)
		return 0;
	o->size = cc->size[0] + cc->size[1];
	o->root = t->element;
	o->nranks++;
	if (t->start < o->first_in)
		o->first_in = t->start;
	if (t->start >= o->last_in) {
		o->last_in = t->start;
		o->last_rank = rank;
	}
	if (t->end > o->last_out)
		o->last_out = t->end;
	if (o->nranks < (int)o->size)
		return 0;
	*d = (struct cm_done){ code, o->arg, o->root, (int)o->size, o->last_rank,
			       (double)(o->last_out - o->first_in) / 1e6, (double)(o->last_in - o->first_in) / 1e6,
			       o->last_in };
	base_tab_del(&c->ops, key);
	return 1;
}
