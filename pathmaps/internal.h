/* internal.h - the pathmap's in-memory form, shared by the model, the loader, the generator, the printer and the job builder. */
#ifndef PATHMAPS_INTERNAL_H
#define PATHMAPS_INTERNAL_H

#include "pathmaps.h"

/* Names to indices, for lookups in constant time: a pathmap of n threads
 * loads in time linear in n (open addressing, at most half full). */
/* Names to indices: by the name's hash; a second name of a hash already
 * taken (never seen: hashes are 64 bits) kept aside in more, so that a
 * lookup is always exact. */
struct pm_name {
	const char *name;
	int i;
};
struct pm_names {
	struct base_tab t;    /* hash -> struct pm_name */
	struct base_vec more; /* struct pm_name */
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

/*
 * The parts, one way: load.c reads the YAML into the model and calls
 * generate.c, which decides placements; job.c makes a process of it real;
 * show.c prints it.  Each uses model.c, which uses none of them.
 */

/* model.c: memory owned by the map, and names to indices. */
void *pm__alloc(pm_map *m, size_t bytes); /* zeroed, freed with the map */
char *pm__strdup(pm_map *m, const char *s);
int pm__find_tree(const pm_map *m, const char *name); /* its index, or PS_ENOENT */
int pm__names_init(pm_map *m, struct pm_names *x, int n); /* room for n, in the map */
int pm__names_put(struct pm_names *x, const char *name, int i); /* -1, or the index already there */
int pm__names_get(const struct pm_names *x, const char *name); /* its index, or -1 */
void pm__names_free(struct pm_names *x);
/* The segment that holds host h's shared elements and trees: JOB.HOST. */
void pm__host_segment(const pm_map *m, int host, char *buf, size_t len);

/* generate.c: decides placements and builds the path list; messages like the loader's. */
int pm__generate(pm_map *m, char *err, size_t errlen);
/* The model's invariants (model.c), checked in the debug builds once it is loaded. */
void pm__model_check(const pm_map *m);

/* The local host as hwloc sees it: its name and the OS indices of its cores. */
int pm__local_host(pm_map *m, struct pm_host *h);

/* job.c: whether the segment info describes was made by a process that
 * started over a minute before one that started at `started` (as
 * ps_proc_start says): then it is another run's. */
bool pm__made_before_start(const struct ps_shm_info *info, uint64_t started);


#endif
