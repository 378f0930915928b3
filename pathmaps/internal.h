/* internal.h - the pathmap's in-memory form, shared by the loader, the generator and the job builder. */
#ifndef PATHMAPS_INTERNAL_H
#define PATHMAPS_INTERNAL_H

#include "pathmaps.h"

/* Names to indices, for lookups in constant time: a pathmap of n threads
 * loads in time linear in n (open addressing, at most half full). */
struct pm_names {
	const char **key;
	int *val;
	uint32_t mask; /* 0 while empty */
};

struct pm_map {
	struct pm_model model;
	struct pm_names el_ix, th_ix, pr_ix, ho_ix, tr_ix, sc_ix;
	struct pm_element *el;
	struct pm_thread *th;
	struct pm_process *pr;
	struct pm_host *ho;
	struct pm_path *pa;
	struct pm_tree *tr;
	struct pm_scope *sc;
	/* everything above points into these allocations */
	void **blocks;
	int nblocks, capblocks;
};

void *pm__alloc(pm_map *m, size_t bytes); /* zeroed, freed with the map */
int pm__find_tree(const pm_map *m, const char *name); /* its index, or PS_ENOENT */
char *pm__strdup(pm_map *m, const char *s);

/* generate.c: decides placements and builds the path list; messages like the loader's. */
int pm__generate(pm_map *m, char *err, size_t errlen);

/* The local host as hwloc sees it: its name and the OS indices of its cores. */
int pm__local_host(pm_map *m, struct pm_host *h);

/* job.c: whether host segment `name` was made over a minute before a
 * process that started at `started` (wall-clock seconds): then it is
 * another run's. */
bool pm__made_before_start(const char *name, double started);

/* Number of internal nodes paths_tree_create makes for n participants. */
int pm__tree_nodes(int n, int fanout);

#endif
