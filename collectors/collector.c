/* collector.c - the collector wrapper: one trace tuple for every operation that passes it. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "collectors.h"

struct coll {
	ps_elem *te;           /* its trace element */
	_Atomic uint64_t *notes; /* its notes: the operation in flight */
	es_space *sp;
	_Atomic uint32_t seq;
	uint32_t element;
	uint16_t id;
	bool many;
};

static int collector_op(paths_stage *self, struct paths_op *op)
{
	struct coll *c = self->state;
	struct es_trace t;
	t.start = es_now();
	es_note_begin(c->notes, t.start, op->code + ES_OP_WRITE, c->element);
	int rc = paths_forward(self, op);
	t.end = es_now();
	/* Only "many" collectors are shared between threads; the rest keep
	 * the count with a plain add. */
	t.seq = c->many ? atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed)
			: atomic_load_explicit(&c->seq, memory_order_relaxed);
	if (!c->many)
		atomic_store_explicit(&c->seq, t.seq + 1, memory_order_relaxed);
	t.op = (uint16_t)((op->code + ES_OP_WRITE) | (rc ? ES_OP_FAILED : 0));
	t.collector = c->id;
	t.element = c->element;
	t.size = (uint32_t)op->size;
	t.arg = (uint32_t)op->idx;
	/* Never waits (a discard element), and a full one drops the oldest
	 * tuple and counts it: the application is never held up here. */
	ps_write(c->te, &t, 0, NULL);
	return rc;
}

static int collector_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "space", "name", "threshold", "thread", "where",
					     "element", "writers", NULL };
	struct coll *c = self->state;
	const char *space, *name, *thread, *where, *writers;
	long threshold, element;
	int rc = paths_params_only(p, known);
	if (rc || (rc = paths_param_int(p, "threshold", 200, 1, PS_THRESHOLD_MAX, &threshold)) < 0 ||
	    (rc = paths_param_int(p, "element", 0, 0, UINT32_MAX, &element)) < 0)
		return rc;
	paths_param_str(p, "space", "", &space);
	paths_param_str(p, "name", "", &name);
	paths_param_str(p, "thread", "", &thread);
	paths_param_str(p, "where", p && p->path ? p->path : "", &where);
	paths_param_str(p, "writers", "one", &writers);
	if (strcmp(writers, "one") && strcmp(writers, "many"))
		return paths_params_fail(p, "writers", "writers: expected one or many, not '%s'", writers);
	if (strlen(name) > PS_NAME_MAX)
		return paths_params_fail(p, "name", "name: at most %d characters", PS_NAME_MAX);
	c->many = !strcmp(writers, "many");
	c->element = (uint32_t)element;
	es_clock_init();
	if ((rc = es_space_get(space, &c->sp)))
		return paths_params_fail(p, "space", "trace space '%s': %s", space, ps_strerror(rc));
	struct es_meta m;
	memset(&m, 0, sizeof(m));
	m.element = c->element;
	snprintf(m.trace, sizeof(m.trace), "%s", name);
	snprintf(m.thread, sizeof(m.thread), "%s", thread);
	snprintf(m.where, sizeof(m.where), "%s", where);
	if ((rc = es_space_add(c->sp, &m, (uint32_t)threshold, c->many, &c->id, &c->te))) {
		es_space_put(c->sp);
		return paths_params_fail(p, "name", "trace element '%s': %s", *name ? name : "(auto)",
					 ps_strerror(rc));
	}
	/* Shared stages have no single operation in flight to note. */
	c->notes = c->many ? NULL : ps_elem_notes(c->te);
	return 0;
}

static void collector_fini(paths_stage *self)
{
	struct coll *c = self->state;
	ps_elem_close(c->te);
	es_space_put(c->sp);
}

static const struct paths_wrapper_type collector_type = {
	.name = "collector",
	.state_size = sizeof(struct coll),
	.init = collector_init,
	.op = collector_op,
	.fini = collector_fini,
};

int es_collectors_register(void)
{
	return paths_register(&collector_type);
}
