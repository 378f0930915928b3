/* wrappers.c - the wrappers scope trees are made of: reduce, filter, convert, sort, latest. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define T sizeof(struct es_trace)

/* --- reduce: many tuples gathered below become one --------------------------- */

struct reduce {
	enum es_reduce how;
	struct es_trace *tmp;
	size_t k; /* tuples below */
};

static bool better(enum es_reduce how, const struct es_trace *a, const struct es_trace *b)
{
	uint64_t da = a->end - a->start, db = b->end - b->start;
	switch (how) {
	case ES_REDUCE_LATEST: return a->end > b->end;
	case ES_REDUCE_MIN: return da < db;
	case ES_REDUCE_MAX: return da > db;
	default: return false;
	}
}

void es__reduce(enum es_reduce how, const struct es_trace *in, size_t k, struct es_trace *out)
{
	memset(out, 0, T);
	uint32_t count = 0;
	uint64_t dur = 0, bytes = 0;
	for (size_t i = 0; i < k; i++) {
		const struct es_trace *t = &in[i];
		if (es_trace_empty(t))
			continue;
		if (!count || better(how, t, out))
			*out = *t;
		count++;
		dur += t->end - t->start;
		bytes += t->size;
	}
	if (!count)
		return;
	if (how == ES_REDUCE_SUM) {
		out->end = out->start + dur;
		out->size = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	}
	if (how == ES_REDUCE_COUNT)
		out->seq = count;
}

static int reduce_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "op", NULL };
	static const char *const ops[] = { "latest", "min", "max", "sum", "count" };
	struct reduce *r = paths_stage_state(self);
	const char *how;
	int rc = paths_params_only(p, known);
	if (rc)
		return rc;
	paths_param_str(p, "op", "latest", &how);
	for (int i = 0; i < 5 && !r->how; i++)
		if (!strcmp(how, ops[i]))
			r->how = (enum es_reduce)(i + 1);
	if (!r->how)
		return paths_params_fail(p, "op", "op: expected latest, min, max, sum or count, not '%s'",
					 how);
	/* What is below decides how many tuples come up to be reduced. */
	r->k = es__scope_width_below(self->next);
	if (!(r->tmp = calloc(r->k, T)))
		return PS_ENOMEM;
	return 0;
}

static int reduce_op(paths_stage *self, struct paths_op *op)
{
	struct reduce *r = paths_stage_state(self);
	if (op->code != PATHS_READ_LATEST && op->code != PATHS_READ)
		return paths_forward(self, op);
	if (op->size != T)
		return PS_ESIZE;
	struct paths_op sub = *op;
	sub.buf = r->tmp;
	sub.size = r->k * T;
	int rc = paths_forward(self, &sub);
	op->idx = sub.idx;
	op->oldest = sub.oldest;
	if (!rc)
		es__reduce(r->how, r->tmp, r->k, op->buf);
	return rc;
}

static void reduce_fini(paths_stage *self)
{
	free(((struct reduce *)paths_stage_state(self))->tmp);
}

/* --- filter: tuples that do not match become empty --------------------------------- */

struct filter {
	unsigned char ops[256]; /* by op & 0xff; all zero: any op */
	bool any_op;
	bool has_element;
	uint32_t element;
	uint64_t after, before;
};

bool es__filter_match(const void *state, const struct es_trace *t)
{
	const struct filter *f = state;
	unsigned op = es_op_code(t->op);
	return !es_trace_empty(t) && (f->any_op || (op < 256 && f->ops[op])) &&
	       (!f->has_element || t->element == f->element) && t->start >= f->after &&
	       (!f->before || t->end <= f->before);
}

static int filter_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "ops", "element", "after", "before", NULL };
	struct filter *f = paths_stage_state(self);
	int rc = paths_params_only(p, known);
	if (rc)
		return rc;
	const char *ops;
	f->any_op = paths_param_str(p, "ops", "", &ops) == 1 || !*ops;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", ops);
	char *save;
	for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		unsigned op = es_op_from_name(w);
		if (!op)
			return paths_params_fail(p, "ops", "ops: '%s' is not an operation (write, read, "
						 "take, MPI_Send...)", w);
		f->ops[op] = 1;
	}
	long v;
	if ((rc = paths_param_int(p, "element", 0, 0, UINT32_MAX, &v)) < 0)
		return rc;
	f->has_element = rc == 0;
	f->element = (uint32_t)v;
	if ((rc = paths_param_int(p, "after", 0, 0, INT64_MAX, &v)) < 0)
		return rc;
	f->after = (uint64_t)v;
	if ((rc = paths_param_int(p, "before", 0, 0, INT64_MAX, &v)) < 0)
		return rc;
	f->before = (uint64_t)v;
	return 0;
}

static int filter_after(paths_stage *self, struct paths_op *op, int rc)
{
	if (rc || op->code == PATHS_WRITE)
		return rc;
	struct es_trace *t = op->buf;
	for (size_t i = 0; i < op->size / T; i++)
		if (!es__filter_match(paths_stage_state(self), &t[i]))
			memset(&t[i], 0, T);
	return 0;
}

/* --- convert: raw stamps to ns, portable byte order --------------------------------- */

struct convert {
	struct es_clock clock;
	bool own; /* this process's own clock, calibrated when first needed (a
		   * scope gives each leaf its space's at once: a monitor like
		   * esctl then never spends the 20 ms calibrating) */
};

static int convert_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "space", NULL };
	struct convert *c = paths_stage_state(self);
	const char *seg;
	int rc = paths_params_only(p, known);
	if (rc)
		return rc;
	if (paths_param_str(p, "space", "", &seg) || !*seg) {
		c->own = true;
		return 0;
	}
	es_space *sp;
	if ((rc = es_space_open(seg, &sp)))
		return paths_params_fail(p, "space", "space '%s': %s", seg, ps_strerror(rc));
	c->clock = *es_space_clock(sp);
	es_space_destroy(sp);
	return 0;
}

void es__convert_clock(paths_stage *self, const struct es_clock *c)
{
	struct convert *cv = paths_stage_state(self);
	cv->clock = *c;
	cv->own = false;
	paths_stage_changed(self); /* tuples kept converted the old way are not */
}

static int convert_after(paths_stage *self, struct paths_op *op, int rc)
{
	if (rc || op->code == PATHS_WRITE)
		return rc;
	struct convert *c = paths_stage_state(self);
	struct es_trace *t = op->buf;
	if (c->own) {
		c->clock = *es_clock_init();
		c->own = false;
	}
	for (size_t i = 0; i < op->size / T; i++)
		if (!es_trace_empty(&t[i]))
			es_trace_portable(&c->clock, &t[i], &t[i]);
	return 0;
}

/* --- sort: the gathered tuples in order of start time ---------------------------------- */

static int by_start(const void *a, const void *b)
{
	const struct es_trace *x = a, *y = b;
	/* empty tuples last */
	if (es_trace_empty(x) != es_trace_empty(y))
		return es_trace_empty(x) ? 1 : -1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int sort_op(paths_stage *self, struct paths_op *op)
{
	int rc = paths_forward(self, op);
	if (!rc && op->code != PATHS_WRITE)
		qsort(op->buf, op->size / T, T, by_start);
	return rc;
}

/* --- latest: a leaf with nothing yet is empty, not an error --------------------------- */

size_t es__scope_width_below(const paths_stage *s)
{
	while (s) {
		if (s->nbranches) {
			size_t w = 0;
			for (int i = 0; i < s->nbranches; i++)
				w += es__scope_width_below(s->branches[i]);
			return w;
		}
		if (!strcmp(s->type->name, "reduce"))
			return 1;
		s = s->next;
	}
	return 1; /* the element */
}

static int latest_after(paths_stage *self, struct paths_op *op, int rc)
{
	(void)self;
	/* nothing yet, or a server lost for now: one leaf does not fail the
	 * pull (the scope notes which leaves were lost) */
	if (rc == PS_ENODATA || rc == PS_EAGAIN || rc == PS_ELOST) {
		memset(op->buf, 0, op->size);
		return 0;
	}
	return rc;
}

static const struct paths_wrapper_type types[] = {
	{ .name = "reduce", .state_size = sizeof(struct reduce), .init = reduce_init,
	  .op = reduce_op, .fini = reduce_fini },
	{ .name = "filter", .state_size = sizeof(struct filter), .init = filter_init,
	  .op = paths_after_op, .after = filter_after },
	{ .name = "convert", .state_size = sizeof(struct convert), .init = convert_init,
	  .op = paths_after_op, .after = convert_after },
	{ .name = "sort", .op = sort_op },
	{ .name = "latest", .op = paths_after_op, .after = latest_after },
};

int es_scopes_register(void)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		int rc = paths_register(&types[i]);
		if (rc)
			return rc;
	}
	return 0;
}
