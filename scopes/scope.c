/* scope.c - finds a job's trace spaces and builds the gather tree a scope pulls through. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define T sizeof(struct es_trace)

void es_scope_spec_default(struct es_scope_spec *s, const char *job)
{
	memset(s, 0, sizeof(*s));
	s->job = job;
	s->view = PM_VIEW_NODE;
	s->fanout = 4;
	s->runs = PM_RUNS_MONITOR;
	s->reduce = ES_REDUCE_LATEST;
	s->convert = true;
}

int es_scope_spec_from(const pm_map *m, const char *scope, const char *job,
		       struct es_scope_spec *out)
{
	const struct pm_model *md = pm_model(m);
	for (int i = 0; i < md->nscopes; i++) {
		const struct pm_scope *sc = &md->scopes[i];
		if (strcmp(sc->name, scope))
			continue;
		es_scope_spec_default(out, job ? job : md->name);
		out->view = sc->view;
		out->of = sc->of;
		out->fanout = sc->fanout;
		out->runs = sc->runs;
		out->concurrent = sc->concurrent;
		out->rate_hz = sc->rate_hz;
		out->reduce = ES_REDUCE_NONE;
		/* a view beyond this host, where the pathmap says the servers are */
		if (sc->view == PM_VIEW_CLUSTER || sc->view == PM_VIEW_MULTI) {
			out->servers = md->servers.list;
			out->secret_file = md->servers.secret_file;
			if (out->servers && out->runs == PM_RUNS_PROCESS)
				out->runs = PM_RUNS_THREAD;
		}
		_Static_assert(PM_SCOPE_HANDLERS <= ES_SCOPE_HANDLERS, "a pathmap's handlers fit a spec");
		out->nhandlers = sc->nhandlers;
		for (int k = 0; k < sc->nhandlers; k++)
			out->handlers[k] = sc->handlers[k];
		static const char *const names[] = { "latest", "min", "max", "sum", "count" };
		for (int k = 0; sc->reduce && k < 5; k++)
			if (!strcmp(sc->reduce, names[k]))
				out->reduce = (enum es_reduce)(k + 1);
		return 0;
	}
	return PS_ENOENT;
}

/* --- finding the job's trace spaces ------------------------------------------- */

struct found {
	const char *job;
	const char *at;  /* "HOST:PORT/" before each name, or "" */
	char (*names)[ES_WHERE_MAX];
	int n, cap;
};

static int collect(const char *name, void *arg)
{
	struct found *f = arg;
	if (!es_space_of(name, f->job, NULL, NULL))
		return 0;
	/* Two servers on one machine (hosts of a pathmap that share it) list
	 * the same segments: segment names are unique in a job, so the first
	 * server to list one serves it. */
	for (int i = 0; *f->at && i < f->n; i++) {
		const char *slash = strrchr(f->names[i], '/');
		if (slash && !strcmp(slash + 1, name))
			return 0;
	}
	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 16;
		void *p = realloc(f->names, sizeof(*f->names) * (size_t)cap);
		if (!p)
			return PS_ENOMEM;
		f->names = p;
		f->cap = cap;
	}
	snprintf(f->names[f->n++], ES_WHERE_MAX, "%s%s", f->at, name);
	return 0;
}

/* Every server of the spec's list, asked for the job's segments. */
static int list_servers(es_scope *s, struct found *f)
{
	char list[sizeof(s->servers)], *save = NULL;
	snprintf(list, sizeof(list), "%s", s->servers);
	struct ps_remote_attr ra = { .secret_file = s->secret_file[0] ? s->secret_file : NULL };
	for (char *tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char host[256], seg[PS_NAME_MAX + 1], at[300];
		int port, rc = ps_locator_parse(tok, host, sizeof(host), &port, seg);
		if (rc)
			return rc;
		snprintf(at, sizeof(at), "%s:%d/", host, port);
		f->at = at;
		if ((rc = ps_remote_list(host, port, &ra, s->job, collect, f)))
			return rc;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strverscmp(a, b); /* r2 before r10 */
}

static int thread_index(es_scope *s, const char *name)
{
	for (int i = 0; i < s->nthreads; i++)
		if (!strcmp(s->threads[i], name))
			return i;
	snprintf(s->threads[s->nthreads], PS_NAME_MAX + 1, "%.*s", PS_NAME_MAX, name);
	return s->nthreads++;
}

static int attach(es_scope *s)
{
	struct found f = { .job = s->job, .at = "" };
	int rc = s->servers[0] ? list_servers(s, &f) : ps_shm_list(collect, &f);
	if (rc || !f.n) {
		free(f.names);
		return rc ? rc : PS_ENOENT;
	}
	qsort(f.names, (size_t)f.n, sizeof(*f.names), by_name);
	s->segs = f.names;
	s->spaces = calloc((size_t)f.n, sizeof(*s->spaces));
	s->ncoll = calloc((size_t)f.n, sizeof(*s->ncoll));
	if (!s->spaces || !s->ncoll)
		return PS_ENOMEM;
	int total = 0;
	struct ps_remote_attr ra = { .secret_file = s->secret_file[0] ? s->secret_file : NULL };
	for (int i = 0; i < f.n; i++) {
		int orc = es_space_open_at(f.names[i], &ra, &s->spaces[s->nspaces]);
		if (orc) { /* not a trace space after all, gone, or not ours: said by the monitor */
			if (s->nskipped < (int)(sizeof(s->skipped) / sizeof(s->skipped[0]))) {
				snprintf(s->skipped[s->nskipped].seg, ES_WHERE_MAX, "%s", f.names[i]);
				s->skipped[s->nskipped].rc = orc;
			}
			s->nskipped++;
			continue;
		}
		memmove(s->segs[s->nspaces], f.names[i], sizeof(f.names[i]));
		s->ncoll[s->nspaces] = es_space_collectors(s->spaces[s->nspaces]);
		total += s->ncoll[s->nspaces];
		s->nspaces++;
	}
	s->leaves = calloc((size_t)total + 1, sizeof(*s->leaves));
	s->threads = calloc((size_t)total + (size_t)s->nseed + 1, sizeof(*s->threads));
	if (!s->leaves || !s->threads)
		return PS_ENOMEM;
	for (; s->nthreads < s->nseed; s->nthreads++)
		memcpy(s->threads[s->nthreads], s->seed[s->nthreads], sizeof(s->threads[0]));
	for (int i = 0; i < s->nspaces; i++) {
		/* collectors may have been added since they were counted */
		int n = es_space_collectors(s->spaces[i]);
		for (int c = 0; c < n && s->nleaves < total; c++) {
			struct es_leaf *l = &s->leaves[s->nleaves];
			if (es_space_meta(s->spaces[i], c, &l->meta))
				continue;
			l->meta.trace[PS_NAME_MAX] = l->meta.thread[PS_NAME_MAX] = 0;
			if (s->spec.view == PM_VIEW_THREAD && strcmp(l->meta.thread, s->of))
				continue;
			if (ps_elem_open(es_space_server(s->spaces[i]), l->meta.trace, T, &l->elem))
				continue;
			ps_elem_set_layout(l->elem, ES_TRACE_LAYOUT);
			l->segment = s->segs[i];
			l->space = s->spaces[i];
			l->clock = es_space_clock(s->spaces[i]);
			l->rank = es_space_rank(s->spaces[i], NULL);
			char key[PS_NAME_MAX + 1];
			snprintf(key, sizeof(key), "%.*s", PS_NAME_MAX,
				 l->meta.thread[0] ? l->meta.thread : l->meta.trace);
			l->thread = thread_index(s, key);
			s->nleaves++;
		}
	}
	if (!s->nleaves)
		return PS_ENOENT;
	/* Gather order: by thread, then as found. */
	struct es_leaf *sorted = calloc((size_t)s->nleaves, sizeof(*sorted));
	if (!sorted)
		return PS_ENOMEM;
	int k = 0;
	for (int t = 0; t < s->nthreads; t++)
		for (int i = 0; i < s->nleaves; i++)
			if (s->leaves[i].thread == t)
				sorted[k++] = s->leaves[i];
	free(s->leaves);
	s->leaves = sorted;
	if (!(s->elems = calloc((size_t)s->nleaves, sizeof(*s->elems))) ||
	    !(s->lost = calloc((size_t)s->nleaves, sizeof(*s->lost))))
		return PS_ENOMEM;
	for (int i = 0; i < s->nleaves; i++)
		s->elems[i] = s->leaves[i].elem;
	return 0;
}

/* --- the gather tree --------------------------------------------------------------- */

static int wrap(const char *type, const char *key, const char *value, paths_stage **st)
{
	struct paths_param kv = { key, value, 0, 0 };
	struct paths_params p = { .v = &kv, .n = key ? 1 : 0 };
	paths_stage *n;
	int rc = paths_stage_create(type, &p, *st, &n);
	paths_stage_release(*st);
	*st = rc ? NULL : n;
	return rc;
}

/* A gather node below s, or only a leaf's chain down to its element? */
static bool gathers(const paths_stage *s)
{
	for (; s; s = s->next)
		if (s->nbranches)
			return true;
	return false;
}

/* Groups n stages under gather nodes of `fanout`, level by level, until one
 * is left; reduces at every node if asked.  Takes the stages' references.
 * Concurrent gathering hands each child that gathers to a thread of its
 * own, not a leaf: a leaf's read is a few cache lines (remote ones were
 * fetched for the whole pull in one request per server), less than a
 * thread's wake-up, and a thread per leaf put hundreds of threads in the
 * way of the application on every pull. */
static int gather(es_scope *s, paths_stage **st, int n, bool reduce, paths_stage **out)
{
	static const char *const names[] = { "", "latest", "min", "max", "sum", "count" };
	int rc = 0;
	while (n > 1 && !rc) {
		int m = 0;
		for (int g = 0; g < n; g += s->spec.fanout) {
			int k = n - g < s->spec.fanout ? n - g : s->spec.fanout;
			paths_stage **kids = st + g, *node;
			size_t shares[k];
			for (int j = 0; j < k && !rc; j++) {
				shares[j] = es__scope_width_below(kids[j]) * T;
				if (s->spec.concurrent && gathers(kids[j]))
					rc = wrap("handoff", NULL, NULL, &kids[j]);
			}
			if (!rc)
				rc = paths_stage_fork_sized(kids, k, shares, &node);
			for (int j = 0; j < k; j++)
				paths_stage_release(kids[j]);
			if (!rc && reduce)
				rc = wrap("reduce", "op", names[s->spec.reduce], &node);
			if (!rc && s->spec.runs == PM_RUNS_THREAD)
				rc = wrap("handoff", NULL, NULL, &node);
			if (rc)
				break;
			st[m++] = node;
		}
		n = m;
	}
	*out = rc ? NULL : st[0];
	return rc;
}

static int build(es_scope *s)
{
	paths_stage **leaf = calloc((size_t)s->nleaves, sizeof(*leaf));
	paths_stage **thr = calloc((size_t)s->nthreads, sizeof(*thr));
	int rc = leaf && thr ? 0 : PS_ENOMEM;
	for (int i = 0; i < s->nleaves && !rc; i++) {
		rc = paths_stage_element(s->leaves[i].elem, &leaf[i]);
		if (!rc && s->spec.convert && !(rc = wrap("convert", NULL, NULL, &leaf[i])))
			es__convert_clock(leaf[i], s->leaves[i].clock); /* the space is open already */
		if (!rc)
			rc = wrap("latest", NULL, NULL, &leaf[i]);
	}
	/* One subtree per thread (a thread view), then the threads together. */
	int first = 0;
	for (int t = 0; t < s->nthreads && !rc; t++) {
		int n = 0;
		while (first + n < s->nleaves && s->leaves[first + n].thread == t)
			n++;
		rc = gather(s, leaf + first, n, s->spec.reduce != ES_REDUCE_NONE, &thr[t]);
		if (!rc && n == 1 && s->spec.reduce == ES_REDUCE_COUNT)
			rc = wrap("reduce", "op", "count", &thr[t]);
		first += n;
	}
	BASE_INVARIANT("the leaves are sorted by thread: each in its thread's subtree", rc || first == s->nleaves);
	paths_stage *root = NULL;
	if (!rc)
		rc = gather(s, thr, s->nthreads, false, &root);
	if (!rc) {
		s->width = (int)es__scope_width_below(root);
		BASE_INVARIANT("a view without a reduce pulls one tuple per leaf",
			     s->spec.reduce != ES_REDUCE_NONE || s->width == s->nleaves);
		rc = paths_path_create(s->job, root, (size_t)s->width * T, &s->root);
		paths_stage_release(root);
	}
	free(leaf);
	free(thr);
	return rc;
}

/* The helper process runs the tree the monitor built (the fork gave it a
 * copy, over the same shared mappings) and answers pulls until told to
 * stop, or until its monitor is gone. */
static void helper_main(es_scope *s, pid_t monitor)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct es_trace *buf = calloc((size_t)s->width, T);
	struct paths_op op = { .code = PATHS_READ_LATEST, .buf = buf, .size = (size_t)s->width * T };
	for (;;) {
		uint64_t ask;
		int rc = ps_take(s->req, &ask, 1000, NULL);
		if (rc == PS_ETIMEDOUT && getppid() == monitor)
			continue;
		if (rc || ask == 0 || !buf)
			_exit(0);
		if (paths_run(s->root, &op) || ps_write(s->rep, buf, 0, NULL))
			_exit(1);
	}
}

static int start_helper(es_scope *s)
{
	/* a name no other user can take first (ps_server_create_private) */
	char prefix[PS_NAME_MAX + 1], why[300];
	snprintf(prefix, sizeof(prefix), "%.24s-scope", s->job);
	struct ps_shm_attr a = { .size = 1u << 20, .max_elems = 4, .keep = PS_KEEP_NEVER };
	int rc = ps_server_create_private(prefix, &a, &s->chan, s->chan_name, why, sizeof(why));
	if (rc)
		return rc;
	struct ps_elem_attr ra = { .tuple_size = 8, .threshold = 1, .mode = PS_FLOW };
	struct ps_elem_attr pa = { .tuple_size = (size_t)s->width * T, .threshold = 2,
				   .flags = PS_EXACT_WAKE };
	if ((rc = ps_elem_create(s->chan, "req", &ra, &s->req)) ||
	    (rc = ps_elem_create(s->chan, "rep", &pa, &s->rep)))
		return rc;
	fflush(NULL);
	pid_t monitor = getpid();
	s->helper = fork();
	if (s->helper < 0)
		return PS_ENOMEM;
	if (s->helper == 0)
		helper_main(s, monitor);
	return 0;
}

static int create(const struct es_scope_spec *spec, const es_scope *before, es_scope **out);

int es_scope_create(const struct es_scope_spec *spec, es_scope **out)
{
	return create(spec, NULL, out);
}

/* Every thread the scope before knew has leaves here too (so keeps its number). */
static bool keeps_threads(const es_scope *n, int nseed)
{
	for (int t = 0; t < nseed; t++) {
		bool found = false;
		for (int i = 0; i < n->nleaves && !found; i++)
			found = n->leaves[i].thread == t;
		if (!found)
			return false;
	}
	return true;
}

static int create(const struct es_scope_spec *spec, const es_scope *before, es_scope **out)
{
	if (!spec || !spec->job || !out || spec->fanout < 2 ||
	    (spec->view == PM_VIEW_THREAD && !spec->of) ||
	    (spec->runs != PM_RUNS_MONITOR && spec->runs != PM_RUNS_THREAD &&
	     spec->runs != PM_RUNS_PROCESS) ||
	    spec->reduce > ES_REDUCE_COUNT || spec->rate_hz < 0 ||
	    spec->nhandlers < 0 || spec->nhandlers > ES_SCOPE_HANDLERS ||
	    (spec->servers && spec->runs == PM_RUNS_PROCESS) ||
	    (spec->servers && strlen(spec->servers) >= sizeof(((es_scope *)0)->servers)) ||
	    (spec->secret_file && strlen(spec->secret_file) >= sizeof(((es_scope *)0)->secret_file)))
		return PS_EINVAL;
	if (!es_job_ok(spec->job))
		return PS_EBADNAME; /* no job is called that: refused, never cut */
	int rc = es_scopes_register();
	if (rc)
		return rc;
	es_scope *s = calloc(1, sizeof(*s));
	if (!s)
		return PS_ENOMEM;
	s->spec = *spec;
	snprintf(s->job, sizeof(s->job), "%s", spec->job);
	snprintf(s->of, sizeof(s->of), "%s", spec->of ? spec->of : "");
	s->spec.job = s->job;
	s->spec.of = s->of;
	snprintf(s->servers, sizeof(s->servers), "%s", spec->servers ? spec->servers : "");
	snprintf(s->secret_file, sizeof(s->secret_file), "%s", spec->secret_file ? spec->secret_file : "");
	s->spec.servers = spec->servers ? s->servers : NULL;
	s->spec.secret_file = spec->secret_file ? s->secret_file : NULL;
	if (before) {
		s->seed = (const char (*)[PS_NAME_MAX + 1])before->threads;
		s->nseed = before->nthreads;
		s->hs = before->hs; /* the same handlers, their state kept */
		s->hs_borrowed = true;
	}
	if ((rc = attach(s)) || (before && !keeps_threads(s, s->nseed) && (rc = PS_ENOENT)) || (rc = build(s)) ||
	    (spec->runs == PM_RUNS_PROCESS && (rc = start_helper(s))) ||
	    /* loaded once the job is there (a monitor waiting for it makes
	     * scopes again and again) */
	    (!before && (rc = es__hset_open(s)))) {
		es_scope_destroy(s);
		return rc;
	}
	for (int i = 0; i < ES_SCOPE_HANDLERS; i++)
		s->spec.handlers[i] = NULL; /* the caller's: the handlers hold their own */
	*out = s;
	return 0;
}

void es_scope_destroy(es_scope *s)
{
	if (!s)
		return;
	if (s->helper > 0) {
		uint64_t stop = 0;
		if (ps_write(s->req, &stop, 1000, NULL))
			kill(s->helper, SIGKILL);
		waitpid(s->helper, NULL, 0);
	}
	ps_elem_close(s->req);
	ps_elem_close(s->rep);
	if (s->chan) {
		ps_server_destroy(s->chan);
		ps_shm_unlink(s->chan_name);
	}
	paths_path_destroy(s->root); /* stops helper threads before the elements go */
	for (int i = 0; i < s->nleaves; i++)
		ps_elem_close(s->leaves[i].elem);
	for (int i = 0; i < s->nspaces; i++)
		es_space_destroy(s->spaces[i]);
	free(s->spaces);
	free(s->ncoll);
	free(s->segs);
	free(s->elems);
	free(s->lost);
	free(s->leaves);
	free(s->threads);
	free(s->cursor);
	free(s->got);
	free(s->got_leaf);
	if (!s->hs_borrowed)
		es__hset_close(s->hs);
	free(s);
}

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* The same trace spaces, each with the same collectors: a refresh would
 * build the same tree (cheap to ask, where building costs a round trip per
 * leaf through a tuple server). */
static bool unchanged(es_scope *s)
{
	struct found f = { .job = s->job, .at = "" };
	int rc = s->servers[0] ? list_servers(s, &f) : ps_shm_list(collect, &f);
	bool same = !rc && f.n == s->nspaces;
	if (same)
		qsort(f.names, (size_t)f.n, sizeof(*f.names), by_name);
	for (int i = 0; same && i < s->nspaces; i++)
		same = !strcmp(f.names[i], s->segs[i]) &&
		       es_space_collectors(s->spaces[i]) == s->ncoll[i];
	free(f.names);
	return same;
}

int es_scope_refresh(es_scope *s)
{
	if (!s)
		return PS_EINVAL;
	if (unchanged(s))
		return 0;
	struct es_scope_spec spec = s->spec;
	if (spec.runs == PM_RUNS_PROCESS)
		spec.runs = PM_RUNS_MONITOR; /* the helper is restarted below, not twice */
	es_scope *n;
	/* threads keep their numbers; a scope where one is gone (its segment
	 * removed) is not taken: the one before, with its leaves, stays */
	int rc = create(&spec, s, &n);
	if (rc)
		return rc == PS_ENOENT ? 0 : rc;
	int added = n->nleaves - s->nleaves;
	if (added <= 0) {
		es_scope_destroy(n);
		return 0;
	}
	/* A consumer goes on where it was on the leaves it knew; on new ones
	 * it starts at their first tuple: they appeared while it watched. */
	if (s->cursor) {
		n->cursor = calloc((size_t)n->nleaves, sizeof(*n->cursor));
		if (!n->cursor) {
			es_scope_destroy(n);
			return PS_ENOMEM;
		}
		for (int j = 0; j < n->nleaves; j++)
			for (int i = 0; i < s->nleaves; i++)
				if (!strcmp(n->leaves[j].segment, s->leaves[i].segment) &&
				    !strcmp(n->leaves[j].meta.trace, s->leaves[i].meta.trace))
					n->cursor[j] = s->cursor[i];
		SWAP(s->cursor, n->cursor);
	}
	SWAP(s->nspaces, n->nspaces);
	SWAP(s->spaces, n->spaces);
	SWAP(s->ncoll, n->ncoll);
	SWAP(s->segs, n->segs);
	SWAP(s->nleaves, n->nleaves);
	SWAP(s->leaves, n->leaves);
	SWAP(s->elems, n->elems);
	SWAP(s->lost, n->lost);
	SWAP(s->nthreads, n->nthreads);
	SWAP(s->threads, n->threads);
	SWAP(s->root, n->root);
	SWAP(s->width, n->width);
	bool helper = s->helper > 0;
	if (helper) { /* its tree is the old one: start a new one */
		SWAP(s->helper, n->helper);
		SWAP(s->chan, n->chan);
		SWAP(s->req, n->req);
		SWAP(s->rep, n->rep);
		SWAP(s->asked, n->asked);
		memcpy(n->chan_name, s->chan_name, sizeof(n->chan_name));
	}
	es_scope_destroy(n); /* the old tree, leaves and spaces */
	if (helper && (rc = start_helper(s)))
		return rc;
	return added;
}

int es_scope_leaves(const es_scope *s) { return s->nleaves; }
const struct es_leaf *es_scope_leaf(const es_scope *s, int i)
{
	return i >= 0 && i < s->nleaves ? &s->leaves[i] : NULL;
}
int es_scope_threads(const es_scope *s) { return s->nthreads; }
const char *es_scope_thread(const es_scope *s, int i)
{
	return i >= 0 && i < s->nthreads ? s->threads[i] : NULL;
}
int es_scope_width(const es_scope *s) { return s->width; }
