/* load_topology.c - the pathmap's elements, threads, cluster (hosts and cores) and mapping (processes) sections. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "internal.h"
#include "load.h"

int pm__elements(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	int rc = pm__need_list(ld, list, "application.elements");
	if (rc)
		return rc;
	int n = pm__list_len(list);
	NOMEM(m->el = pm__alloc(m, sizeof(*m->el) * (size_t)n));
	if ((rc = pm__names_init(m, &m->el_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "tuple_size", "threshold", "mode", NULL };
	static const char *const req[] = { "name", "tuple_size", NULL };
	static const char *const modes[] = { "discard", "flow", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *e = pm__item(ld, list, i), *v;
		struct pm_element *el = &m->el[i];
		if ((rc = pm__check_map(ld, e, "element", keys, req)) ||
		    (rc = pm__as_name(ld, pm__get(ld, e, "name"), "element name", PS_NAME_MAX, &el->name)))
			return rc;
		int j = pm__names_put(&m->el_ix, el->name, i);
		if (j >= 0)
			return pm__fail(ld, pm__get(ld, e, "name"), "duplicate element name '%s' "
				    "(first defined at line %d)", el->name, m->el[j].line);
		el->line = (int)e->start_mark.line + 1;
		long lv;
		if ((rc = pm__as_int(ld, pm__get(ld, e, "tuple_size"), "tuple_size", 1, PS_TUPLE_MAX, &lv)))
			return rc;
		el->tuple_size = (size_t)lv;
		el->threshold = 1;
		if ((v = pm__get(ld, e, "threshold"))) {
			if ((rc = pm__as_int(ld, v, "threshold", 1, PS_THRESHOLD_MAX, &lv)))
				return rc;
			el->threshold = (uint32_t)lv;
		}
		int mode = PS_FLOW;
		if ((v = pm__get(ld, e, "mode")) && (rc = pm__as_choice(ld, v, "mode", modes, &mode)))
			return rc;
		el->mode = (enum ps_mode)mode;
	}
	m->model.nelements = n;
	return 0;
}

/* A list of names that must be threads: indices into out[]. */
int pm__thread_refs(struct ld *ld, yaml_node_t *list, const char *what, int **out, int *count)
{
	pm_map *m = ld->m;
	int rc = pm__need_list(ld, list, what);
	if (rc)
		return rc;
	int n = pm__list_len(list);
	struct set seen;
	NOMEM(*out = pm__alloc(m, sizeof(int) * (size_t)n));
	if ((rc = pm__set_init(&seen, (size_t)n)))
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		yaml_node_t *t = pm__item(ld, list, i);
		const char *s = pm__sval(t);
		int k = s ? pm_find_thread(m, s) : -1;
		if (k < 0)
			rc = pm__fail(ld, t, "%s: expected the name of a thread, got %s%s%s", what,
				  s ? "undefined thread '" : "", s ? s : pm__kind(t), s ? "'" : "");
		else if (pm__set_put(&seen, (uint64_t)k, i) >= 0)
			rc = pm__fail(ld, t, "%s: thread '%s' listed twice", what, s);
		else
			(*out)[i] = k;
	}
	pm__set_free(&seen);
	*count = n;
	return rc;
}

int pm__threads(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	int rc = pm__need_list(ld, list, "application.threads");
	if (rc)
		return rc;
	int n = pm__list_len(list);
	NOMEM(m->th = pm__alloc(m, sizeof(*m->th) * (size_t)n));
	if ((rc = pm__names_init(m, &m->th_ix, n)))
		return rc;
	size_t total = 0; /* uses in all, an alias counted each time it is used */
	static const char *const keys[] = { "name", "uses", NULL };
	static const char *const req[] = { "name", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *t = pm__item(ld, list, i), *uses;
		struct pm_thread *th = &m->th[i];
		if ((rc = pm__check_map(ld, t, "thread", keys, req)) ||
		    (rc = pm__as_name(ld, pm__get(ld, t, "name"), "thread name", PS_NAME_MAX, &th->name)))
			return rc;
		int dup = pm__names_put(&m->th_ix, th->name, i);
		if (dup >= 0)
			return pm__fail(ld, pm__get(ld, t, "name"), "duplicate thread name '%s' "
				    "(first defined at line %d)", th->name, m->th[dup].line);
		th->line = (int)t->start_mark.line + 1;
		th->process = -1;
		th->core = -1;
		if (!(uses = pm__get(ld, t, "uses")))
			continue;
		if ((rc = pm__need_list(ld, uses, "uses")))
			return rc;
		int k = pm__list_len(uses);
		if ((total += (size_t)k) > PM_MAX_USES)
			return pm__fail(ld, t, "thread '%s': more than %u uses in all (each thread's uses, "
				    "an alias counted each time it is used): expected at "
				    "most that many", th->name, PM_MAX_USES);
		int *u = pm__alloc(m, sizeof(int) * (size_t)k);
		struct set seen;
		NOMEM(u);
		if ((rc = pm__set_init(&seen, (size_t)k)))
			return rc;
		for (int j = 0; j < k && !rc; j++) {
			yaml_node_t *en = pm__item(ld, uses, j);
			const char *s = pm__sval(en);
			int e = s ? pm_find_element(m, s) : -1;
			if (e < 0)
				rc = pm__fail(ld, en, "thread '%s' uses %s%s%s: expected the name of an "
					  "element in application.elements", th->name,
					  s ? "undefined element '" : "", s ? s : pm__kind(en), s ? "'" : "");
			else if (pm__set_put(&seen, (uint64_t)e, j) >= 0)
				rc = pm__fail(ld, en, "thread '%s' lists element '%s' twice", th->name, s);
			else
				u[j] = e;
		}
		pm__set_free(&seen);
		if (rc)
			return rc;
		th->uses = u;
		th->nuses = k;
	}
	m->model.nthreads = n;
	return 0;
}

int pm__cores_of(struct ld *ld, yaml_node_t *v, struct pm_host *h)
{
	long count;
	if (v->type == YAML_SCALAR_NODE) {
		int rc = pm__as_int(ld, v, "cores", 1, 4096, &count);
		if (rc)
			return rc;
		int *c = pm__alloc(ld->m, sizeof(int) * (size_t)count);
		NOMEM(c);
		for (int i = 0; i < count; i++)
			c[i] = i;
		h->cores = c;
		h->ncores = (int)count;
		return 0;
	}
	if (v->type != YAML_SEQUENCE_NODE || !pm__list_len(v))
		return pm__fail(ld, v, "cores: expected a number of cores or a list of core numbers, got %s",
			    pm__kind(v));
	int n = pm__list_len(v), rc = 0;
	int *c = pm__alloc(ld->m, sizeof(int) * (size_t)n);
	struct set seen;
	NOMEM(c);
	if ((rc = pm__set_init(&seen, (size_t)n)))
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		long x;
		if ((rc = pm__as_int(ld, pm__item(ld, v, i), "core", 0, 65535, &x)))
			break;
		if (pm__set_put(&seen, (uint64_t)x, i) >= 0)
			rc = pm__fail(ld, pm__item(ld, v, i), "core %ld listed twice", x);
		c[i] = (int)x;
	}
	pm__set_free(&seen);
	if (rc)
		return rc;
	h->cores = c;
	h->ncores = n;
	return 0;
}

int pm__cluster(struct ld *ld, yaml_node_t *c)
{
	pm_map *m = ld->m;
	static const char *const keys[] = { "hosts", NULL };
	int rc;
	if (!c) {
		/* No cluster map: this host, as hwloc sees it. */
		NOMEM(m->ho = pm__alloc(m, sizeof(*m->ho)));
		if ((rc = pm__local_host(m, &m->ho[0])) || (rc = pm__names_init(m, &m->ho_ix, 1)))
			return rc;
		pm__names_put(&m->ho_ix, m->ho[0].name, 0);
		m->model.nhosts = 1;
		return 0;
	}
	if ((rc = pm__check_map(ld, c, "cluster", keys, keys)))
		return rc;
	yaml_node_t *list = pm__get(ld, c, "hosts");
	if ((rc = pm__need_list(ld, list, "cluster.hosts")))
		return rc;
	int n = pm__list_len(list);
	if (!n)
		return pm__fail(ld, list, "cluster.hosts: expected at least one host");
	NOMEM(m->ho = pm__alloc(m, sizeof(*m->ho) * (size_t)n));
	if ((rc = pm__names_init(m, &m->ho_ix, n)))
		return rc;
	static const char *const hkeys[] = { "name", "cores", "address", NULL };
	static const char *const hreq[] = { "name", "cores", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *h = pm__item(ld, list, i);
		yaml_node_t *a = pm__get(ld, h, "address");
		if ((rc = pm__check_map(ld, h, "host", hkeys, hreq)) ||
		    (rc = pm__as_name(ld, pm__get(ld, h, "name"), "host name", 20, &m->ho[i].name)))
			return rc;
		if (pm__names_put(&m->ho_ix, m->ho[i].name, i) >= 0)
			return pm__fail(ld, pm__get(ld, h, "name"), "duplicate host name '%s'", m->ho[i].name);
		if (strlen(m->model.name) + 1 + strlen(m->ho[i].name) > PS_NAME_MAX)
			return pm__fail(ld, pm__get(ld, h, "name"), "host name '%s': with the job's name '%s' it "
				    "makes the host's segment name longer than %d characters",
				    m->ho[i].name, m->model.name, PS_NAME_MAX);
		if ((rc = pm__cores_of(ld, pm__get(ld, h, "cores"), &m->ho[i])))
			return rc;
		if (a) {
			struct in_addr in;
			const char *s = pm__sval(a);
			if (!s || inet_pton(AF_INET, s, &in) != 1)
				return pm__fail(ld, a, "host address: expected an IPv4 address like 10.0.0.2, "
					    "got %s%s%s", s ? "'" : "", s ? s : pm__kind(a), s ? "'" : "");
			NOMEM(m->ho[i].address = pm__strdup(m, s));
		}
	}
	m->model.nhosts = n;
	return 0;
}

int pm__mapping(struct ld *ld, yaml_node_t *mp)
{
	pm_map *m = ld->m;
	int rc;
	if (!mp) {
		/* No mapping: one process, on the first host, runs every thread. */
		NOMEM(m->pr = pm__alloc(m, sizeof(*m->pr)));
		int *t = pm__alloc(m, sizeof(int) * (size_t)(m->model.nthreads + 1));
		NOMEM(t);
		for (int i = 0; i < m->model.nthreads; i++) {
			t[i] = i;
			m->th[i].process = 0;
		}
		m->pr[0] = (struct pm_process){ .name = "p0", .host = 0,
						.nthreads = m->model.nthreads, .threads = t };
		if ((rc = pm__names_init(m, &m->pr_ix, 1)))
			return rc;
		pm__names_put(&m->pr_ix, "p0", 0);
		m->model.nprocesses = 1;
		return 0;
	}
	static const char *const keys[] = { "processes", NULL };
	if ((rc = pm__check_map(ld, mp, "mapping", keys, keys)))
		return rc;
	yaml_node_t *list = pm__get(ld, mp, "processes");
	if ((rc = pm__need_list(ld, list, "mapping.processes")))
		return rc;
	int n = pm__list_len(list);
	NOMEM(m->pr = pm__alloc(m, sizeof(*m->pr) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->pr_ix, n)))
		return rc;
	/* every host's cores, to check a process's in constant time */
	struct set cores;
	size_t ncores = 0;
	for (int h = 0; h < m->model.nhosts; h++)
		ncores += (size_t)m->ho[h].ncores;
	if ((rc = pm__set_init(&cores, ncores)))
		return rc;
	for (int h = 0; h < m->model.nhosts; h++)
		for (int k = 0; k < m->ho[h].ncores; k++)
			pm__set_put(&cores, pm__pair(h, m->ho[h].cores[k]), k);
	rc = pm__processes(ld, list, &cores);
	pm__set_free(&cores);
	return rc;
}

int pm__processes(struct ld *ld, yaml_node_t *list, const struct set *cores)
{
	pm_map *m = ld->m;
	int rc, n = pm__list_len(list);
	static const char *const pkeys[] = { "name", "host", "threads", "cores", NULL };
	static const char *const preq[] = { "name", "threads", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *p = pm__item(ld, list, i), *v;
		struct pm_process *pr = &m->pr[i];
		if ((rc = pm__check_map(ld, p, "process", pkeys, preq)) ||
		    (rc = pm__as_name(ld, pm__get(ld, p, "name"), "process name", PS_NAME_MAX, &pr->name)))
			return rc;
		if (pm__names_put(&m->pr_ix, pr->name, i) >= 0)
			return pm__fail(ld, pm__get(ld, p, "name"), "duplicate process name '%s'", pr->name);
		if ((v = pm__get(ld, p, "host"))) {
			const char *s = pm__sval(v);
			pr->host = s ? pm__find_host(m, s) : -1;
			if (pr->host < 0) {
				char hosts[300];
				pm__host_list(m, hosts, sizeof(hosts));
				return pm__fail(ld, v, "process '%s' is mapped to unknown host %s%s%s "
					    "(expected one of: %s)", pr->name, s ? "'" : "",
					    s ? s : pm__kind(v), s ? "'" : "", hosts);
			}
		}
		int *t;
		if ((rc = pm__thread_refs(ld, pm__get(ld, p, "threads"), "process threads", &t, &pr->nthreads)))
			return rc;
		pr->threads = t;
		for (int j = 0; j < pr->nthreads; j++) {
			struct pm_thread *th = &m->th[t[j]];
			if (th->process >= 0)
				return pm__fail(ld, pm__item(ld, pm__get(ld, p, "threads"), j),
					    "thread '%s' is already mapped to process '%s'", th->name,
					    m->pr[th->process].name);
			th->process = i;
		}
		if (!(v = pm__get(ld, p, "cores")))
			continue;
		if ((rc = pm__need_list(ld, v, "process cores")))
			return rc;
		if (pm__list_len(v) != pr->nthreads)
			return pm__fail(ld, v, "process '%s': expected one core per thread (%d), got %d",
				    pr->name, pr->nthreads, pm__list_len(v));
		const struct pm_host *h = &m->ho[pr->host];
		for (int j = 0; j < pr->nthreads; j++) {
			long c;
			yaml_node_t *cn = pm__item(ld, v, j);
			if ((rc = pm__as_int(ld, cn, "core", 0, 65535, &c)))
				return rc;
			if (pm__set_get(cores, pm__pair(pr->host, (int)c)) < 0) {
				char known[200];
				pm__core_list(h, known, sizeof(known));
				return pm__fail(ld, cn, "core %ld does not exist on host '%s' (its cores: %s)",
					    c, h->name, known);
			}
			m->th[t[j]].core = (int)c;
		}
	}
	m->model.nprocesses = n;
	for (int i = 0; i < m->model.nthreads; i++)
		if (m->th[i].process < 0)
			return pm__fail(ld, list, "thread '%s' (line %d) is not mapped to any process: "
				    "expected it in some process's threads", m->th[i].name, m->th[i].line);
	return 0;
}
