/* view.c - the live view's data: a ring of the last events of a job, and the JSON the page draws from. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "view.h"

/* Invariants: ev holds the last min(added, cap) events in the order
 * added, the oldest at (next - n) mod cap; nothing else refers to them. */
struct lv {
	struct lv_event *ev;
	size_t cap, n, next;
	uint64_t added;
};

int lv_create(size_t max, lv **out)
{
	lv *v = calloc(1, sizeof(*v));
	if (!v || !max || !(v->ev = calloc(max, sizeof(*v->ev)))) {
		free(v);
		return -ENOMEM;
	}
	v->cap = max;
	*out = v;
	return 0;
}

void lv_destroy(lv *v)
{
	if (v)
		free(v->ev);
	free(v);
}

void lv_add(lv *v, const struct lv_event *e)
{
	v->ev[v->next] = *e;
	v->next = (v->next + 1) % v->cap;
	v->n += v->n < v->cap;
	v->added++;
}

uint64_t lv_added(const lv *v)
{
	return v->added;
}

static const char *group_name(unsigned op)
{
	const struct es_op_info *o = es_op_info(op);
	return es_op_group_name(o ? (enum es_op_group)o->group : ES_GROUP_PASTSET);
}

/* A JSON string without quotes that need escaping: names here are
 * thread and call names, [A-Za-z0-9._-] and the like; anything else is
 * written as '?'. */
static void plain(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++)
		fputc(*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 ? '?' : *s, f);
	fputc('"', f);
}

int lv_json(const lv *v, const char *job, const struct lv_thread *threads, int nthreads, uint64_t now_ns,
	    uint64_t window_ns, size_t max, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	if (!f)
		return -ENOMEM;
	uint64_t from = now_ns > window_ns ? now_ns - window_ns : 0;
	fputs("{\"job\":", f);
	plain(f, job);
	fprintf(f, ",\"window_ms\":%.3f,\"added\":%llu,\"threads\":[", (double)window_ns / 1e6,
		(unsigned long long)v->added);
	for (int t = 0; t < nthreads; t++) {
		fprintf(f, "%s{\"name\":", t ? "," : "");
		plain(f, threads[t].name);
		fprintf(f, ",\"rank\":%d}", threads[t].rank);
	}
	fputs("],\"ops\":{", f);
	unsigned char seen[256] = { 0 };
	int nops = 0;
	for (size_t i = 0; i < v->n; i++) {
		unsigned code = es_op_code(v->ev[i].op);
		if (code < 256 && !seen[code]) {
			seen[code] = 1;
			fprintf(f, "%s\"%u\":[", nops++ ? "," : "", code);
			plain(f, es_op_name(code));
			fputc(',', f);
			plain(f, group_name(code));
			fputc(']', f);
		}
	}
	fputs("},\"events\":[", f);
	/* the newest max of the window: a page draws a few thousand calls a
	 * frame, not every one a busy job made */
	size_t first = v->n, in = 0;
	while (first > 0 && in < max) {
		const struct lv_event *e = &v->ev[(v->next + v->cap - v->n + first - 1) % v->cap];
		if (e->end < from)
			break;
		in += e->end <= now_ns;
		first--;
	}
	size_t k = 0;
	for (size_t i = first; i < v->n; i++) {
		const struct lv_event *e = &v->ev[(v->next + v->cap - v->n + i) % v->cap];
		if (e->end < from || e->end > now_ns || (int)e->thread >= nthreads)
			continue;
		uint64_t s = e->start > from ? e->start - from : 0;
		fprintf(f, "%s[%u,%u,%.3f,%.3f,%d]", k++ ? "," : "", e->thread, es_op_code(e->op), (double)s / 1e6,
			(double)(e->end - from) / 1e6, e->peer == ES_NONE ? -1 : (int)e->peer);
	}
	fputs("]}", f);
	return fclose(f) ? -ENOMEM : 0;
}
