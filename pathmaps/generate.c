/* generate.c - placements from the three maps (each element and tree in a process, a host's segment or behind its server) and the local host from hwloc. */
#define _GNU_SOURCE
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int pm__local_host(pm_map *m, struct pm_host *h)
{
	char name[256] = "localhost";
	gethostname(name, sizeof(name) - 1);
	/* Keep it a valid segment-name part: the first label, safe characters. */
	char clean[21];
	int k = 0;
	for (int i = 0; name[i] && name[i] != '.' && k < 20; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '-';
		clean[k++] = ok ? c : '_';
	}
	clean[k] = 0;
	h->name = pm__strdup(m, k ? clean : "localhost");
	h->from_hwloc = true;
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
		/* Without hwloc's view, fall back to what the kernel says. */
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		h->ncores = n > 0 ? (int)n : 1;
		int *c = pm__alloc(m, sizeof(int) * (size_t)h->ncores);
		if (!c || !h->name)
			return PS_ENOMEM;
		for (int i = 0; i < h->ncores; i++)
			c[i] = i;
		h->cores = c;
		return 0;
	}
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	int *c = pm__alloc(m, sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (!c || !h->name) {
		hwloc_topology_destroy(topo);
		return PS_ENOMEM;
	}
	for (int i = 0; i < n; i++)
		c[i] = (int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i)->os_index;
	h->cores = c;
	h->ncores = n;
	hwloc_topology_destroy(topo);
	return 0;
}

/* Where something used by threads `who` (n of them) lives. */
static void place(const pm_map *m, const int *who, int n, enum pm_place *pl, int *home)
{
	if (n == 0) {
		*pl = PM_PROCESS;
		*home = 0;
		return;
	}
	int p0 = m->th[who[0]].process, h0 = m->pr[p0].host;
	bool one_proc = true, one_host = true;
	for (int i = 1; i < n; i++) {
		int p = m->th[who[i]].process;
		one_proc &= p == p0;
		one_host &= m->pr[p].host == h0;
	}
	*pl = one_proc ? PM_PROCESS : one_host ? PM_NODE : PM_REMOTE;
	*home = one_proc ? p0 : h0;
}

/* Each element goes where its users are, found in one pass over the uses. */
int pm__generate(pm_map *m, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	struct seen { int n, p0, h0; bool one_proc, one_host; } *sn;
	sn = calloc((size_t)m->model.nelements + 1, sizeof(*sn));
	if (!sn)
		return PS_ENOMEM;
	for (int t = 0; t < m->model.nthreads; t++) {
		int p = m->th[t].process, h = m->pr[p].host;
		for (int u = 0; u < m->th[t].nuses; u++) {
			struct seen *x = &sn[m->th[t].uses[u]];
			if (!x->n++) {
				*x = (struct seen){ 1, p, h, true, true };
				continue;
			}
			x->one_proc &= p == x->p0;
			x->one_host &= h == x->h0;
		}
	}
	for (int e = 0; e < m->model.nelements; e++) {
		const struct seen *x = &sn[e];
		m->el[e].place = !x->n || x->one_proc ? PM_PROCESS : x->one_host ? PM_NODE : PM_REMOTE;
		m->el[e].home = !x->n ? 0 : x->one_proc ? x->p0 : x->h0;
	}
	free(sn);
	for (int i = 0; i < m->model.ntrees; i++)
		place(m, m->tr[i].threads, m->tr[i].n, &m->tr[i].place, &m->tr[i].home);
	return 0;
}
