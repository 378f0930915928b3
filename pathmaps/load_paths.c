/* load_paths.c - the pathmap's paths (their stages, the collectors, the custom ones) and trees sections. */
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

/* A stage: a wrapper type name, or a mapping {type: NAME, PARAM: VALUE...}. */
int pm__stage(struct ld *ld, yaml_node_t *n, struct pm_stage *st)
{
	pm_map *m = ld->m;
	st->params.file = ld->file;
	st->params.line = (int)n->start_mark.line + 1;
	st->params.col = (int)n->start_mark.column + 1;
	const char *type = pm__sval(n);
	yaml_node_t *tn = n;
	if (n->type == YAML_MAPPING_NODE) {
		tn = pm__get(ld, n, "type");
		if (!tn)
			return pm__fail(ld, n, "stage: missing required key 'type'");
		type = pm__sval(tn);
		int np = 0;
		if (n->data.mapping.pairs.top - n->data.mapping.pairs.start > PM_MAX_PARAMS + 1)
			return pm__fail(ld, n, "stage: more than %d parameters", PM_MAX_PARAMS);
		struct paths_param *v = pm__alloc(m, sizeof(*v) *
						  (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start));
		NOMEM(v);
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = pm__node(ld, p->key), *val = pm__node(ld, p->value);
			if (!pm__sval(k))
				return pm__fail(ld, k, "stage: expected a parameter name, got %s", pm__kind(k));
			if (!strcmp(pm__sval(k), "type"))
				continue;
			if (!pm__sval(val))
				return pm__fail(ld, val, "stage parameter '%s': expected a single value, got %s",
					    pm__sval(k), pm__kind(val));
			for (int q = 0; q < np; q++)
				if (!strcmp(v[q].key, pm__sval(k)))
					return pm__fail(ld, k, "stage: parameter '%s' given twice", pm__sval(k));
			v[np].key = pm__strdup(m, pm__sval(k));
			v[np].value = pm__strdup(m, pm__sval(val));
			NOMEM(v[np].key && v[np].value);
			v[np].line = (int)val->start_mark.line + 1;
			v[np].col = (int)val->start_mark.column + 1;
			np++;
		}
		st->params.v = v;
		st->params.n = np;
	}
	if (!type || !*type)
		return pm__fail(ld, tn, "stage: expected a wrapper type name, got %s", pm__kind(tn));
	const struct paths_wrapper_type *wt = paths_lookup(type);
	if (!wt || !strcmp(type, "element") || !strcmp(type, "fork"))
		return pm__fail(ld, tn, "unknown wrapper type '%s' (expected pass, handoff, remote%s)", type,
			    paths_lookup("collector") ? ", collector" : "");
	NOMEM(st->type = pm__strdup(m, type));
	/* Try the parameters on a real instance now, so that a bad one is
	 * reported with its position before anything runs. */
	ps_server *srv;
	ps_elem *e;
	paths_stage *el, *s;
	struct ps_elem_attr a = { .tuple_size = 8, .threshold = 1 };
	int rc = ps_server_create_local(&srv);
	if (rc)
		return rc;
	if (!(rc = ps_elem_create(srv, "probe", &a, &e))) {
		if (!(rc = paths_stage_element(e, &el))) {
			struct paths_params p = st->params;
			p.err = ld->err;
			p.errlen = ld->errlen;
			rc = paths_stage_create(type, &p, el, &s);
			if (!rc)
				paths_stage_release(s);
			paths_stage_release(el);
		}
		ps_elem_close(e);
	}
	ps_server_destroy(srv);
	return rc;
}

int pm__stage_list(struct ld *ld, yaml_node_t *list, const char *what, struct pm_stage **out,
		      int *n)
{
	int rc = pm__need_list(ld, list, what);
	if (rc)
		return rc;
	*n = pm__list_len(list);
	NOMEM(*out = pm__alloc(ld->m, sizeof(**out) * (size_t)(*n ? *n : 1)));
	for (int i = 0; i < *n; i++)
		if ((rc = pm__stage(ld, pm__item(ld, list, i), &(*out)[i])))
			return rc;
	return 0;
}

int pm__paths_section(struct ld *ld, yaml_node_t *p, struct pm_paths_spec *ps)
{
	pm_map *m = ld->m;
	*ps = (struct pm_paths_spec){ 0 };
	ps->none = true;
	if (!p)
		return 0;
	static const char *const keys[] = { "stages", "collectors", "custom", NULL };
	int rc = pm__check_map(ld, p, "paths", keys, NULL);
	yaml_node_t *v;
	if (rc)
		return rc;
	if ((v = pm__get(ld, p, "stages")) &&
	    (rc = pm__stage_list(ld, v, "paths.stages", &ps->dflt, &ps->ndefault)))
		return rc;
	if ((v = pm__get(ld, p, "collectors"))) {
		const char *s = pm__sval(v);
		if (s && !strcmp(s, "all")) {
			ps->all = true;
			ps->none = false;
		} else if (s && !strcmp(s, "none")) {
			ps->none = true;
		} else if (v->type == YAML_SEQUENCE_NODE) {
			ps->none = false;
			ps->npatterns = pm__list_len(v);
			if (ps->npatterns > PM_MAX_PATTERNS)
				return pm__fail(ld, v, "collectors: %d patterns: expected at most %d",
					    ps->npatterns, PM_MAX_PATTERNS);
			NOMEM(ps->patterns = pm__alloc(m, sizeof(char *) * (size_t)(ps->npatterns + 1)));
			for (int i = 0; i < ps->npatterns; i++) {
				yaml_node_t *pat = pm__item(ld, v, i);
				const char *ps_ = pm__sval(pat);
				if (!ps_ || !strchr(ps_, ':'))
					return pm__fail(ld, pat, "collectors: expected a pattern THREAD:ELEMENT "
						    "(* and ? match), got %s%s%s", ps_ ? "'" : "",
						    ps_ ? ps_ : pm__kind(pat), ps_ ? "'" : "");
				NOMEM(ps->patterns[i] = pm__strdup(m, ps_));
			}
		} else {
			return pm__fail(ld, v, "collectors: expected all, none or a list of THREAD:ELEMENT "
				    "patterns, got %s%s%s", s ? "'" : "", s ? s : pm__kind(v), s ? "'" : "");
		}
	}
	if (!(v = pm__get(ld, p, "custom")))
		return 0;
	if ((rc = pm__need_list(ld, v, "paths.custom")))
		return rc;
	ps->ncustom = pm__list_len(v);
	NOMEM(ps->custom = pm__alloc(m, sizeof(*ps->custom) * (size_t)(ps->ncustom + 1)));
	struct set used; /* every (thread, element) a thread uses */
	size_t nused = 0;
	for (int t = 0; t < m->model.nthreads; t++)
		nused += (size_t)m->th[t].nuses;
	if ((rc = pm__set_init(&used, nused)))
		return rc;
	if ((rc = pm__set_init(&ps->custom_ix, (size_t)ps->ncustom))) {
		pm__set_free(&used);
		return rc;
	}
	for (int t = 0; t < m->model.nthreads; t++)
		for (int k = 0; k < m->th[t].nuses; k++)
			pm__set_put(&used, pm__pair(t, m->th[t].uses[k]), k);
	rc = pm__custom_paths(ld, v, ps, &used);
	pm__set_free(&used);
	return rc;
}

int pm__custom_paths(struct ld *ld, yaml_node_t *v, struct pm_paths_spec *ps, const struct set *used)
{
	pm_map *m = ld->m;
	int rc;
	static const char *const ckeys[] = { "thread", "element", "stages", NULL };
	for (int i = 0; i < ps->ncustom; i++) {
		yaml_node_t *c = pm__item(ld, v, i), *tn, *en;
		if ((rc = pm__check_map(ld, c, "custom path", ckeys, ckeys)))
			return rc;
		tn = pm__get(ld, c, "thread");
		en = pm__get(ld, c, "element");
		int t = pm__sval(tn) ? pm_find_thread(m, pm__sval(tn)) : -1;
		if (t < 0)
			return pm__fail(ld, tn, "custom path: expected the name of a thread, got %s%s%s",
				    pm__sval(tn) ? "undefined thread '" : "", pm__sval(tn) ? pm__sval(tn) : pm__kind(tn),
				    pm__sval(tn) ? "'" : "");
		int e = pm__sval(en) ? pm_find_element(m, pm__sval(en)) : -1;
		if (e < 0)
			return pm__fail(ld, en, "custom path: expected the name of an element, got %s%s%s",
				    pm__sval(en) ? "undefined element '" : "", pm__sval(en) ? pm__sval(en) : pm__kind(en),
				    pm__sval(en) ? "'" : "");
		if (pm__set_get(used, pm__pair(t, e)) < 0)
			return pm__fail(ld, en, "custom path: thread '%s' does not use element '%s' "
				    "(expected it in the thread's uses)", m->th[t].name, m->el[e].name);
		if (pm__set_put(&ps->custom_ix, pm__pair(t, e), i) >= 0)
			return pm__fail(ld, c, "custom path %s -> %s given twice", m->th[t].name,
				    m->el[e].name);
		ps->custom[i].thread = t;
		ps->custom[i].element = e;
		if ((rc = pm__stage_list(ld, pm__get(ld, c, "stages"), "custom path stages",
				     &ps->custom[i].stages, &ps->custom[i].nstages)))
			return rc;
	}
	return 0;
}

/* Builds the path list: one per (thread, element it uses). */
int pm__make_paths(struct ld *ld, const struct pm_paths_spec *ps)
{
	pm_map *m = ld->m;
	int n = 0;
	for (int t = 0; t < m->model.nthreads; t++)
		n += m->th[t].nuses;
	NOMEM(m->pa = pm__alloc(m, sizeof(*m->pa) * (size_t)(n ? n : 1)));
	int k = 0;
	for (int t = 0; t < m->model.nthreads; t++)
		for (int u = 0; u < m->th[t].nuses; u++) {
			struct pm_path *p = &m->pa[k++];
			int e = m->th[t].uses[u];
			p->thread = t;
			p->element = e;
			p->stages = ps->dflt;
			p->nstages = ps->ndefault;
			int c = ps->ncustom ? pm__set_get(&ps->custom_ix, pm__pair(t, e)) : -1;
			if (c >= 0) {
				p->stages = ps->custom[c].stages;
				p->nstages = ps->custom[c].nstages;
			}
			char who[2 * PS_NAME_MAX + 2];
			snprintf(who, sizeof(who), "%s:%s", m->th[t].name, m->el[e].name);
			p->collector = ps->all;
			for (int q = 0; q < ps->npatterns && !p->collector; q++)
				p->collector = !fnmatch(ps->patterns[q], who, 0);
		}
	m->model.npaths = n;
	return 0;
}

int pm__trees(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	if (!list)
		return 0;
	int rc = pm__need_list(ld, list, "trees");
	if (rc)
		return rc;
	int n = pm__list_len(list);
	NOMEM(m->tr = pm__alloc(m, sizeof(*m->tr) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->tr_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "threads", "fanout", "max_bytes", "runs_on",
					    "collectors", NULL };
	static const char *const req[] = { "name", "threads", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *t = pm__item(ld, list, i), *v;
		struct pm_tree *tr = &m->tr[i];
		if ((rc = pm__check_map(ld, t, "tree", keys, req)) ||
		    (rc = pm__as_name(ld, pm__get(ld, t, "name"), "tree name", 24, &tr->name)))
			return rc;
		if (pm__names_put(&m->tr_ix, tr->name, i) >= 0)
			return pm__fail(ld, pm__get(ld, t, "name"), "duplicate tree name '%s'", tr->name);
		int *th;
		if ((rc = pm__thread_refs(ld, pm__get(ld, t, "threads"), "tree threads", &th, &tr->n)))
			return rc;
		if (!tr->n)
			return pm__fail(ld, pm__get(ld, t, "threads"), "tree threads: expected at least one thread");
		tr->threads = th;
		long lv;
		tr->fanout = 2;
		if ((v = pm__get(ld, t, "fanout"))) {
			if ((rc = pm__as_int(ld, v, "fanout", 2, tr->n < 2 ? 2 : tr->n, &lv)))
				return rc;
			tr->fanout = (int)lv;
		}
		tr->max_bytes = 64;
		if ((v = pm__get(ld, t, "max_bytes"))) {
			if ((rc = pm__as_int(ld, v, "max_bytes", 0, 1 << 20, &lv)))
				return rc;
			tr->max_bytes = (size_t)lv;
		}
		if ((v = pm__get(ld, t, "collectors")) && (rc = pm__as_bool(ld, v, "collectors", &tr->collector)))
			return rc;
		tr->nnodes = paths_tree_shape(tr->n, tr->fanout, NULL, NULL, 0);
		int *runs = pm__alloc(m, sizeof(int) * (size_t)tr->nnodes);
		NOMEM(runs);
		for (int k = 0; k < tr->nnodes; k++)
			runs[k] = -1;
		tr->runs_on = runs;
		if (!(v = pm__get(ld, t, "runs_on")))
			continue;
		if (v->type != YAML_MAPPING_NODE)
			return pm__fail(ld, v, "runs_on: expected a mapping NODE: THREAD, got %s", pm__kind(v));
		if ((rc = pm__runs_on(ld, v, tr)))
			return rc;
	}
	m->model.ntrees = n;
	return 0;
}

/* runs_on: which of the tree's threads runs each node it names. */
int pm__runs_on(struct ld *ld, yaml_node_t *v, struct pm_tree *tr)
{
	pm_map *m = ld->m;
	const int *th = tr->threads;
	int *runs = (int *)tr->runs_on, rc = 0;
	struct set pos; /* thread -> its place in the tree */
	if ((rc = pm__set_init(&pos, (size_t)tr->n)))
		return rc;
	for (int q = 0; q < tr->n; q++)
		pm__set_put(&pos, (uint64_t)th[q], q);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; !rc && p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = pm__node(ld, p->key), *vn = pm__node(ld, p->value);
		long idx;
		if ((rc = pm__as_int(ld, kn, "runs_on node", 0, tr->nnodes - 1, &idx)))
			break;
		const char *s = pm__sval(vn);
		int k = s ? pm_find_thread(m, s) : -1;
		int who = k >= 0 ? pm__set_get(&pos, (uint64_t)k) : -1;
		if (who < 0)
			rc = pm__fail(ld, vn, "runs_on: expected a thread of tree '%s', got %s%s%s",
				  tr->name, s ? "'" : "", s ? s : pm__kind(vn), s ? "'" : "");
		else
			runs[idx] = who;
	}
	pm__set_free(&pos);
	return rc;
}
