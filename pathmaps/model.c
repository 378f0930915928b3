/* model.c - the loaded pathmap in memory: its allocations, its name indices and the lookups every part uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- memory owned by the map --------------------------------------------------- */

void *pm__alloc(pm_map *m, size_t bytes)
{
	if (m->nblocks == m->capblocks) {
		int cap = m->capblocks ? 2 * m->capblocks : 64;
		void **b = realloc(m->blocks, (size_t)cap * sizeof(*b));
		if (!b)
			return NULL;
		m->blocks = b;
		m->capblocks = cap;
	}
	void *p = calloc(1, bytes ? bytes : 1);
	if (p)
		m->blocks[m->nblocks++] = p;
	return p;
}

char *pm__strdup(pm_map *m, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = pm__alloc(m, n);
	if (d)
		memcpy(d, s, n);
	return d;
}

void pm_destroy(pm_map *m)
{
	if (!m)
		return;
	struct pm_names *ix[] = { &m->el_ix, &m->th_ix, &m->pr_ix, &m->ho_ix, &m->tr_ix, &m->sc_ix };
	for (size_t k = 0; k < sizeof(ix) / sizeof(ix[0]); k++)
		pm__names_free(ix[k]);
	for (int i = 0; i < m->nblocks; i++)
		free(m->blocks[i]);
	free(m->blocks);
	free(m);
}

/* --- names to indices ------------------------------------------------------------ */

/* Room for n names. */
int pm__names_init(pm_map *m, struct pm_names *x, int n)
{
	(void)m;
	pm__names_free(x);
	base_tab_init(&x->t, sizeof(struct pm_name));
	x->more = (struct base_vec){ .size = sizeof(struct pm_name) };
	return base_tab_reserve(&x->t, n > 0 ? (size_t)n : 1) < 0 ? PS_ENOMEM : 0;
}

void pm__names_free(struct pm_names *x)
{
	base_tab_free(&x->t);
	base_vec_free(&x->more);
}

static int names_find(const struct pm_names *x, const char *name, uint64_t h)
{
	const struct pm_name *e = base_tab_get(&x->t, h);
	if (!e || !strcmp(e->name, name))
		return e ? e->i : -1;
	for (size_t k = 0; k < x->more.n; k++)
		if (!strcmp(BASE_AT(x->more, struct pm_name, k)->name, name))
			return BASE_AT(x->more, struct pm_name, k)->i;
	return -1;
}

/* Adds name -> i; if the name is there already, its index instead.  -1
 * also when out of memory: the sets are reserved for their names first. */
int pm__names_put(struct pm_names *x, const char *name, int i)
{
	uint64_t h = base_hash_str(BASE_HASH_SEED, name);
	int there = names_find(x, name, h);
	if (there >= 0)
		return there;
	bool fresh;
	struct pm_name *e = base_tab_put(&x->t, h, &fresh);
	if (e && !fresh)
		e = base_vec_push(&x->more);
	if (e)
		*e = (struct pm_name){ name, i };
	return -1;
}

int pm__names_get(const struct pm_names *x, const char *name)
{
	return name ? names_find(x, name, base_hash_str(BASE_HASH_SEED, name)) : -1;
}

/* Only indices below n count: a lookup made while the list is read. */
static int found(int i, int n)
{
	return i >= 0 && i < n ? i : PS_ENOENT;
}

int pm_find_element(const pm_map *m, const char *name)
{
	return found(pm__names_get(&m->el_ix, name), m->model.nelements);
}

int pm_find_thread(const pm_map *m, const char *name)
{
	return found(pm__names_get(&m->th_ix, name), m->model.nthreads);
}

int pm_find_process(const pm_map *m, const char *name)
{
	return found(pm__names_get(&m->pr_ix, name), m->model.nprocesses);
}

int pm__find_tree(const pm_map *m, const char *name)
{
	return found(pm__names_get(&m->tr_ix, name), m->model.ntrees);
}

void pm__host_segment(const pm_map *m, int host, char *buf, size_t len)
{
	snprintf(buf, len, "%s.%s", m->model.name, m->ho[host].name);
}

const struct pm_model *pm_model(const pm_map *m)
{
	return &m->model;
}

/* --- the model's invariants ------------------------------------------------------- */

/*
 * A loaded, generated model (pm_load's, before anyone reads it):
 *  - every index names something of the model: an element's home is a
 *    process (PM_PROCESS) or a host (PM_NODE, PM_REMOTE), 0 in a model
 *    without any (no process then holds it, and `pathmap show` says so;
 *    an element no thread uses is process 0's); a thread's
 *    process, and the elements it uses; a process's host; a path's thread
 *    and element; a tree's participants; a tree's internal node runs on a
 *    participant or on none (-1);
 *  - a process lists exactly the threads whose process it is;
 *  - every element, thread and process is found by its name (pm_find_*),
 *    names being unique.
 * Checked where the loader publishes the model (BASE_INVARIANT: the debug
 * builds), so that a loader or generator that breaks one fails there and
 * not in the process that trusts it.
 */
#ifdef ES_DEBUG
static bool in(int i, int n)
{
	return i >= 0 && i < n;
}

void pm__model_check(const pm_map *m)
{
	const struct pm_model *d = &m->model;
	for (int i = 0; i < d->nelements; i++) {
		const struct pm_element *e = &d->elements[i];
		int homes = e->place == PM_PROCESS ? d->nprocesses : d->nhosts;
		BASE_INVARIANT("an element's home is a process or a host of the model (a model without any: 0)",
			     in(e->home, homes) || (!homes && !e->home));
		BASE_INVARIANT("every element is found by its name", pm_find_element(m, e->name) == i);
	}
	for (int i = 0; i < d->nthreads; i++) {
		const struct pm_thread *t = &d->threads[i];
		BASE_INVARIANT("a thread's process is a process of the model", in(t->process, d->nprocesses));
		for (int k = 0; k < t->nuses; k++)
			BASE_INVARIANT("a thread uses elements of the model", in(t->uses[k], d->nelements));
		BASE_INVARIANT("every thread is found by its name", pm_find_thread(m, t->name) == i);
	}
	for (int i = 0; i < d->nprocesses; i++) {
		const struct pm_process *p = &d->processes[i];
		BASE_INVARIANT("a process's host is a host of the model", in(p->host, d->nhosts));
		for (int k = 0; k < p->nthreads; k++)
			BASE_INVARIANT("a process lists the threads whose process it is",
				     in(p->threads[k], d->nthreads) && d->threads[p->threads[k]].process == i);
		BASE_INVARIANT("every process is found by its name", pm_find_process(m, p->name) == i);
	}
	int listed = 0;
	for (int i = 0; i < d->nprocesses; i++)
		listed += d->processes[i].nthreads;
	BASE_INVARIANT("a process lists exactly the threads whose process it is", listed == d->nthreads);
	for (int i = 0; i < d->npaths; i++)
		BASE_INVARIANT("a path runs from a thread to an element of the model",
			     in(d->paths[i].thread, d->nthreads) && in(d->paths[i].element, d->nelements));
	for (int i = 0; i < d->ntrees; i++) {
		const struct pm_tree *t = &d->trees[i];
		for (int k = 0; k < t->n; k++)
			BASE_INVARIANT("a tree's participants are threads of the model", in(t->threads[k], d->nthreads));
		for (int k = 0; t->runs_on && k < t->nnodes; k++)
			BASE_INVARIANT("a tree's node runs on a participant or on none", t->runs_on[k] >= -1 && t->runs_on[k] < t->n);
	}
}
#else
void pm__model_check(const pm_map *m)
{
	(void)m; /* the checks cost nothing outside the debug builds */
}
#endif
