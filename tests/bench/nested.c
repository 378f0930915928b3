/* nested.c - the cost of one collector on the wind tunnel's own paths, the paper's way: three collectors per path, the middle one timed by the outer. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopes/scopes.h"

int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: nested JOB   (after windtunnel --nested -j JOB)\n");
		return 2;
	}
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, argv[1]);
	spec.reduce = ES_REDUCE_NONE;
	es_scope *s;
	if (es_scope_create(&spec, &s)) {
		fprintf(stderr, "nested: no job %s\n", argv[1]);
		return 1;
	}
	/* per path, its collectors in the order they were made: the two the
	 * pathmap names (inside) first, the automatic one (outside) last */
	double sum = 0, *all = NULL;
	long events = 0, cap = 0;
	int n = es_scope_leaves(s);
	for (int i = 0; i + 2 < n; i++) {
		const struct es_leaf *l[3] = { es_scope_leaf(s, i), es_scope_leaf(s, i + 1), es_scope_leaf(s, i + 2) };
		if (strcmp(l[0]->meta.where, l[1]->meta.where) || strcmp(l[0]->meta.where, l[2]->meta.where) ||
		    strcmp(l[0]->segment, l[2]->segment) || strchr(l[0]->meta.where, '>') == NULL)
			continue;
		struct ps_stats st[3];
		for (int k = 0; k < 3; k++)
			ps_elem_stats(l[k]->elem, &st[k]);
		if (st[0].written != st[2].written || st[0].written < 50)
			continue;
		uint64_t first = st[2].oldest > st[1].oldest ? st[2].oldest : st[1].oldest;
		for (uint64_t k = first; k < st[2].written; k++) {
			struct es_trace mid, out;
			if (ps_read(l[1]->elem, k, &mid, 0, NULL) || ps_read(l[2]->elem, k, &out, 0, NULL))
				continue;
			double ns = ((double)(out.end - out.start) - (double)(mid.end - mid.start)) /
				    l[2]->clock->ticks_per_ns;
			if (events == cap) {
				cap = cap ? 2 * cap : 4096;
				double *p = realloc(all, sizeof(double) * (size_t)cap);
				if (!p)
					return 1;
				all = p;
			}
			all[events++] = ns;
			sum += ns;
		}
		i += 2;
	}
	if (!events) {
		fprintf(stderr, "nested: no paths with three collectors in %s\n", argv[1]);
		return 1;
	}
	/* the median: with 32 threads on 2 cores, a thread is now and then
	 * preempted between two stamps, and one such gap outweighs thousands
	 * of events in a mean */
	qsort(all, (size_t)events, sizeof(double), cmp);
	printf("%.2f %.2f %ld\n", all[events / 2], sum / (double)events, events);
	free(all);
	es_scope_destroy(s);
	return 0;
}
