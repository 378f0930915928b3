/* items.c - a thread's events as properly nested regions and points, in time order, for the converters (convert.h says how). */
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

struct span {
	uint64_t start, end;
	uint32_t event;
};

static int by_end(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

/* by start, the longer (the enclosing) first */
static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static int by_time(const void *a, const void *b)
{
	const struct ar_item *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

/* qsort, unless already in order: a thread's calls usually are, and this
 * is most of what a converter spends on them */
static void sort_spans(struct span *r, size_t n, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp(&r[i - 1], &r[i]) > 0) {
			qsort(r, n, sizeof(*r), cmp);
			return;
		}
}

int ar_thread_items(const ar_archive *a, int t, struct ar_item **out, size_t *n,
		    struct ar_out_stats *st)
{
	const struct ar_event *ev = ar_events(a);
	const uint32_t *idx;
	size_t ne = ar_thread_events(a, t, &idx), nr = 0, np = 0;
	*out = NULL;
	*n = 0;
	if (!ne) /* a listed thread that recorded nothing costs nothing */
		return 0;
	for (size_t j = 0; j < ne; j++)
		*(ev[idx[j]].t.op & ES_OP_DONE ? &np : &nr) += 1;
	/* a channel's mark (collectors.h) is no call: messages.c reads it */
	struct span *r = malloc(sizeof(*r) * (nr + 1)), **stack = malloc(sizeof(*stack) * (nr + 1));
	struct ar_item *p = malloc(sizeof(*p) * (2 * np + 1));
	struct ar_item *items = malloc(sizeof(*items) * (2 * nr + 2 * np + 1));
	if (!r || !stack || !p || !items) {
		free(r), free(stack), free(p), free(items);
		return -ENOMEM;
	}
	nr = np = 0;
	for (size_t j = 0; j < ne; j++) {
		uint32_t i = idx[j];
		const struct es_trace *e = &ev[i].t;
		uint64_t end = e->end < e->start ? e->start : e->end;
		if (es_is_mark(e->op))
			continue;
		if (e->op & ES_OP_DONE) {
			p[np++] = (struct ar_item){ e->start, (uint32_t)i, AR_REQUEST };
			p[np++] = (struct ar_item){ end, (uint32_t)i, AR_COMPLETE };
		} else {
			r[nr++] = (struct span){ e->start, end, (uint32_t)i };
		}
	}
	/* a streak of polls begins no earlier than what its thread did before it */
	sort_spans(r, nr, by_end);
	for (size_t i = 1; i < nr; i++) {
		const struct es_op_info *o = es_op_info(ev[r[i].event].t.op);
		if (o && o->kind == ES_KIND_POLL && r[i].start < r[i - 1].end)
			r[i].start = r[i - 1].end;
	}
	sort_spans(r, nr, by_start);
	qsort(p, np, sizeof(*p), by_time);
	size_t k = 0, depth = 0, ri = 0, pi = 0;
	while (ri < nr || pi < np) {
		bool region = ri < nr && (pi == np || r[ri].start <= p[pi].time);
		uint64_t now = region ? r[ri].start : p[pi].time;
		/* close what ended before now; at a region's start, what ended at it too */
		while (depth && (stack[depth - 1]->end < now || (region && stack[depth - 1]->end == now &&
								 stack[depth - 1]->start < now))) {
			depth--;
			items[k++] = (struct ar_item){ stack[depth]->end, stack[depth]->event, AR_LEAVE };
		}
		if (!region) {
			items[k++] = p[pi++];
			continue;
		}
		struct span *s = &r[ri++];
		if (depth && s->end > stack[depth - 1]->end) {
			s->end = stack[depth - 1]->end; /* it would overlap, not nest */
			if (st)
				st->clipped++;
		}
		items[k++] = (struct ar_item){ s->start, s->event, AR_ENTER };
		stack[depth++] = s;
	}
	while (depth) {
		depth--;
		items[k++] = (struct ar_item){ stack[depth]->end, stack[depth]->event, AR_LEAVE };
	}
	free(r);
	free(stack);
	free(p);
	*out = items;
	*n = k;
	return 0;
}

const char *ar_phase_name(const ar_archive *a, int thread, const struct es_trace *t, char *buf, size_t len)
{
	const char *n = ar_region_name(a, ar_thread(a, thread)->rank, t->arg);
	if (n)
		return n;
	snprintf(buf, len, "phase %u", t->arg);
	return buf;
}

