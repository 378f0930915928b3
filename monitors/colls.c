/* colls.c - MPI collectives matched across ranks by (operation, communicator, number) as their tuples arrive. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"

/*
 * A collective is complete when every rank of its communicator reported
 * it; what each rank's tuple names is read from the ranks' own lists
 * (es_mpi).  Operations in progress sit in an open-addressing table and
 * leave it when complete, so the cost per event stays constant however
 * long the job runs.
 */
struct op {
	unsigned code;
	uint64_t comm;  /* the communicator's id */
	uint32_t arg, root, size;
	int nranks;
	uint64_t first_in, last_in, last_out;
	int last_rank;
	bool used;
};

#define TABLE (1 << 16)

struct cm {
	struct op *table; /* open addressing: the collectives not complete yet */
};

int cm_create(cm **out)
{
	cm *c = calloc(1, sizeof(*c));
	if (!c || !(c->table = calloc(TABLE, sizeof(*c->table)))) {
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void cm_destroy(cm *c)
{
	if (c)
		free(c->table);
	free(c);
}

/* A collective's key as one word (pastset.h's hash). */
static uint64_t op_key(unsigned code, uint64_t comm, uint32_t arg)
{
	return base_hash_fold(base_hash_fold(BASE_HASH_SEED, comm), (uint64_t)code << 32 | arg);
}

static struct op *find_op(struct op *table, unsigned code, uint64_t comm, uint32_t arg)
{
	size_t h = base_hash_slot(op_key(code, comm, arg), TABLE);
	for (uint32_t i = 0; i < TABLE; i++, h = base_probe(h, TABLE)) {
		struct op *o = &table[h];
		if (!o->used) {
			memset(o, 0, sizeof(*o));
			o->used = true;
			o->code = code;
			o->comm = comm;
			o->arg = arg;
			o->first_in = UINT64_MAX;
			return o;
		}
		if (o->code == code && o->comm == comm && o->arg == arg)
			return o;
	}
	return NULL; /* 65536 collectives in flight at once: give up on this one */
}

/* Removes o, keeping every other entry findable (backward-shift deletion). */
static void drop_op(struct op *table, struct op *o)
{
	size_t i = (size_t)(o - table);
	for (;;) {
		table[i].used = false;
		size_t j = i;
		for (;;) {
			j = base_probe(j, TABLE);
			if (!table[j].used)
				return;
			size_t h = base_hash_slot(op_key(table[j].code, table[j].comm, table[j].arg), TABLE);
			/* can the entry at j move to the hole at i? */
			if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j))
				break;
		}
		table[i] = table[j];
		i = j;
	}
}

int cm_event(cm *c, es_mpi *mpi, const struct es_trace *t, int rank, struct cm_done *d)
{
	unsigned code = es_op_code(t->op);
	/* a nonblocking collective is matched by the tuple of its completion,
	 * which runs from its call to the wait or test that completed it */
	if (!es_op_matched(code) || (es_op_info(code)->kind == ES_KIND_ICOLL && !(t->op & ES_OP_DONE)))
		return 0;
	const struct es_mpi_comm *cc = es_mpi_comm_of(mpi, rank, t->comm, 0xffff, t->start, NULL);
	struct op *o = cc ? find_op(c->table, code, cc->id, t->arg) : NULL;
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
	drop_op(c->table, o);
	return 1;
}
