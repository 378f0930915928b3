/* load.c - reads a YAML pathmap with libyaml and checks every field, reporting file:line:column. */
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


/* --- names and sets, so that loading stays linear ------------------------------ */

/* What a pathmap may hold.  Past these it is refused with its position:
 * a real job is far inside them, and each costs time linear in its size. */
#define PM_MAX_DEPTH 32          /* nesting of lists and mappings (a pathmap needs 6) */
#define PM_MAX_NODES (1u << 21)  /* YAML events in the whole document */
#define PM_MAX_USES (1u << 20)   /* (thread, element) pairs, aliases counted each time */
#define PM_MAX_PARAMS 32         /* parameters of one stage */
#define PM_MAX_PATTERNS 256      /* paths.collectors patterns */


static uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}


/* A set of 64-bit keys with a value each, for one check: malloc'd. */
struct set {
	uint64_t *key; /* key + 1: 0 is empty */
	int *val;
	uint32_t mask;
};

static int set_init(struct set *s, size_t n)
{
	uint32_t cap = 8;
	while (cap < 2 * n)
		cap <<= 1;
	s->key = calloc(cap, sizeof(*s->key));
	s->val = calloc(cap, sizeof(*s->val));
	s->mask = cap - 1;
	if (!s->key || !s->val) {
		free(s->key);
		free(s->val);
		s->key = NULL;
		s->val = NULL;
		return PS_ENOMEM;
	}
	return 0;
}

static void set_free(struct set *s)
{
	free(s->key);
	free(s->val);
}

/* Adds key -> v; if the key is there, its value instead (and -1 if new). */
static int set_put(struct set *s, uint64_t key, int v)
{
	for (uint32_t k = (uint32_t)hash_u64(key) & s->mask;; k = (k + 1) & s->mask) {
		if (!s->key[k]) {
			s->key[k] = key + 1;
			s->val[k] = v;
			return -1;
		}
		if (s->key[k] == key + 1)
			return s->val[k];
	}
}

static int set_get(const struct set *s, uint64_t key)
{
	for (uint32_t k = (uint32_t)hash_u64(key) & s->mask; s->key[k]; k = (k + 1) & s->mask)
		if (s->key[k] == key + 1)
			return s->val[k];
	return -1;
}

static uint64_t pair(int a, int b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

/* --- reading YAML nodes, with positions --------------------------------------- */

struct ld {
	pm_map *m;
	yaml_document_t *doc;
	const char *file;
	char *err;
	size_t errlen;
};

static int fail(struct ld *ld, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct ld *ld, const yaml_node_t *n, const char *fmt, ...)
{
	if (!ld->err || !ld->errlen)
		return PS_EINVAL;
	int k = snprintf(ld->err, ld->errlen, "%s:%zu:%zu: ", ld->file,
			 n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1);
	if (k > 0 && (size_t)k < ld->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ld->err + k, ld->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return PS_EINVAL;
}

static yaml_node_t *node(struct ld *ld, int i)
{
	return yaml_document_get_node(ld->doc, i);
}

static const char *sval(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_SCALAR_NODE: return n->data.scalar.length ? "a scalar" : "nothing";
	default: return "nothing";
	}
}

/* Whether a pair's key is the scalar `key`: a key may be any node ([a]: 1). */
static bool is_key(struct ld *ld, const yaml_node_pair_t *p, const char *key)
{
	const char *s = sval(node(ld, p->key));
	return s && !strcmp(s, key);
}

/* Checks that n is a mapping whose keys are scalars from `allowed`, each
 * once, and that `required` ones are there. */
static int check_map(struct ld *ld, yaml_node_t *n, const char *what,
		     const char *const *allowed, const char *const *required)
{
	if (n->type != YAML_MAPPING_NODE)
		return fail(ld, n, "%s: expected a mapping, got %s", what, kind(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(ld, p->key);
		const char *key = sval(k);
		if (!key)
			return fail(ld, k, "%s: expected a key name, got %s", what, kind(k));
		bool ok = false;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(*a, key);
		if (!ok) {
			char list[400] = "";
			for (const char *const *a = allowed; *a; a++) {
				if (a != allowed)
					strncat(list, ", ", sizeof(list) - strlen(list) - 1);
				strncat(list, *a, sizeof(list) - strlen(list) - 1);
			}
			return fail(ld, k, "unknown key '%s' in %s (expected %s)", key, what, list);
		}
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
			if (is_key(ld, q, key))
				return fail(ld, k, "%s: key '%s' given twice (first at line %zu)",
					    what, key, node(ld, q->key)->start_mark.line + 1);
	}
	for (const char *const *r = required; r && *r; r++) {
		bool found = false;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top && !found; p++)
			found = is_key(ld, p, *r);
		if (!found)
			return fail(ld, n, "%s: missing required key '%s'", what, *r);
	}
	return 0;
}

static yaml_node_t *get(struct ld *ld, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		if (is_key(ld, p, key))
			return node(ld, p->value);
	return NULL;
}

static int need_list(struct ld *ld, yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(ld, n, "%s: expected a list, got %s", what, kind(n));
	return 0;
}

static int list_len(yaml_node_t *n)
{
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *item(struct ld *ld, yaml_node_t *n, int i)
{
	return node(ld, n->data.sequence.items.start[i]);
}

static int as_int(struct ld *ld, yaml_node_t *n, const char *what, long min, long max, long *out)
{
	const char *s = sval(n);
	char *end;
	errno = 0;
	long v = s && *s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || errno || *end || v < min || v > max)
		return fail(ld, n, "%s: expected an integer from %ld to %ld, got %s%s%s", what, min,
			    max, s ? "'" : "", s ? s : kind(n), s ? "'" : "");
	*out = v;
	return 0;
}

static int as_double(struct ld *ld, yaml_node_t *n, const char *what, double min, double *out)
{
	const char *s = sval(n);
	char *end;
	errno = 0;
	double v = s && *s ? strtod(s, &end) : 0;
	if (!s || !*s || errno || *end || !(v >= min))
		return fail(ld, n, "%s: expected a number of at least %g, got %s%s%s", what, min,
			    s ? "'" : "", s ? s : kind(n), s ? "'" : "");
	*out = v;
	return 0;
}

static int as_bool(struct ld *ld, yaml_node_t *n, const char *what, bool *out)
{
	const char *s = sval(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
		*out = true;
	else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
		*out = false;
	else
		return fail(ld, n, "%s: expected true or false, got %s%s%s", what, s ? "'" : "",
			    s ? s : kind(n), s ? "'" : "");
	return 0;
}

/* One of the words in `choices` (NULL-terminated); *out gets its index. */
static int as_choice(struct ld *ld, yaml_node_t *n, const char *what,
		     const char *const *choices, int *out)
{
	const char *s = sval(n);
	char list[400] = "";
	for (int i = 0; choices[i]; i++) {
		if (s && !strcmp(s, choices[i])) {
			*out = i;
			return 0;
		}
		if (i)
			strncat(list, choices[i + 1] ? ", " : " or ", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	return fail(ld, n, "%s: expected %s, got %s%s%s", what, list, s ? "'" : "",
		    s ? s : kind(n), s ? "'" : "");
}

static bool good_name(const char *s, size_t max)
{
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return n > 0 && n <= max && strcmp(s, ".") && strcmp(s, "..");
}

static int as_name(struct ld *ld, yaml_node_t *n, const char *what, size_t max, const char **out)
{
	const char *s = sval(n);
	if (!s || !good_name(s, max))
		return fail(ld, n, "%s: expected a name of 1 to %zu characters from A-Z a-z 0-9 . _ -, "
			    "got %s%s%s", what, max, s ? "'" : "", s ? s : kind(n), s ? "'" : "");
	*out = pm__strdup(ld->m, s);
	return *out ? 0 : PS_ENOMEM;
}

/* --- the sections ------------------------------------------------------------------ */

#define NOMEM(p) do { if (!(p)) return PS_ENOMEM; } while (0)

static int elements(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	int rc = need_list(ld, list, "application.elements");
	if (rc)
		return rc;
	int n = list_len(list);
	NOMEM(m->el = pm__alloc(m, sizeof(*m->el) * (size_t)n));
	if ((rc = pm__names_init(m, &m->el_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "tuple_size", "threshold", "mode", NULL };
	static const char *const req[] = { "name", "tuple_size", NULL };
	static const char *const modes[] = { "discard", "flow", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *e = item(ld, list, i), *v;
		struct pm_element *el = &m->el[i];
		if ((rc = check_map(ld, e, "element", keys, req)) ||
		    (rc = as_name(ld, get(ld, e, "name"), "element name", PS_NAME_MAX, &el->name)))
			return rc;
		int j = pm__names_put(&m->el_ix, el->name, i);
		if (j >= 0)
			return fail(ld, get(ld, e, "name"), "duplicate element name '%s' "
				    "(first defined at line %d)", el->name, m->el[j].line);
		el->line = (int)e->start_mark.line + 1;
		long lv;
		if ((rc = as_int(ld, get(ld, e, "tuple_size"), "tuple_size", 1, PS_TUPLE_MAX, &lv)))
			return rc;
		el->tuple_size = (size_t)lv;
		el->threshold = 1;
		if ((v = get(ld, e, "threshold"))) {
			if ((rc = as_int(ld, v, "threshold", 1, PS_THRESHOLD_MAX, &lv)))
				return rc;
			el->threshold = (uint32_t)lv;
		}
		int mode = PS_FLOW;
		if ((v = get(ld, e, "mode")) && (rc = as_choice(ld, v, "mode", modes, &mode)))
			return rc;
		el->mode = (enum ps_mode)mode;
	}
	m->model.nelements = n;
	return 0;
}


static int find_host(const pm_map *m, const char *name)
{
	int i = pm__names_get(&m->ho_ix, name);
	i = i < m->model.nhosts ? i : -1; /* only hosts read so far */
	return i < 0 ? -1 : i;
}

/* A list of names that must be threads: indices into out[]. */
static int thread_refs(struct ld *ld, yaml_node_t *list, const char *what, int **out, int *count)
{
	pm_map *m = ld->m;
	int rc = need_list(ld, list, what);
	if (rc)
		return rc;
	int n = list_len(list);
	struct set seen;
	NOMEM(*out = pm__alloc(m, sizeof(int) * (size_t)n));
	if ((rc = set_init(&seen, (size_t)n)))
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		yaml_node_t *t = item(ld, list, i);
		const char *s = sval(t);
		int k = s ? pm_find_thread(m, s) : -1;
		if (k < 0)
			rc = fail(ld, t, "%s: expected the name of a thread, got %s%s%s", what,
				  s ? "undefined thread '" : "", s ? s : kind(t), s ? "'" : "");
		else if (set_put(&seen, (uint64_t)k, i) >= 0)
			rc = fail(ld, t, "%s: thread '%s' listed twice", what, s);
		else
			(*out)[i] = k;
	}
	set_free(&seen);
	*count = n;
	return rc;
}

static int threads(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	int rc = need_list(ld, list, "application.threads");
	if (rc)
		return rc;
	int n = list_len(list);
	NOMEM(m->th = pm__alloc(m, sizeof(*m->th) * (size_t)n));
	if ((rc = pm__names_init(m, &m->th_ix, n)))
		return rc;
	size_t total = 0; /* uses in all, an alias counted each time it is used */
	static const char *const keys[] = { "name", "uses", NULL };
	static const char *const req[] = { "name", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *t = item(ld, list, i), *uses;
		struct pm_thread *th = &m->th[i];
		if ((rc = check_map(ld, t, "thread", keys, req)) ||
		    (rc = as_name(ld, get(ld, t, "name"), "thread name", PS_NAME_MAX, &th->name)))
			return rc;
		int dup = pm__names_put(&m->th_ix, th->name, i);
		if (dup >= 0)
			return fail(ld, get(ld, t, "name"), "duplicate thread name '%s' "
				    "(first defined at line %d)", th->name, m->th[dup].line);
		th->line = (int)t->start_mark.line + 1;
		th->process = -1;
		th->core = -1;
		if (!(uses = get(ld, t, "uses")))
			continue;
		if ((rc = need_list(ld, uses, "uses")))
			return rc;
		int k = list_len(uses);
		if ((total += (size_t)k) > PM_MAX_USES)
			return fail(ld, t, "thread '%s': more than %u uses in all (each thread's uses, "
				    "an alias counted each time it is used): expected at "
				    "most that many", th->name, PM_MAX_USES);
		int *u = pm__alloc(m, sizeof(int) * (size_t)k);
		struct set seen;
		NOMEM(u);
		if ((rc = set_init(&seen, (size_t)k)))
			return rc;
		for (int j = 0; j < k && !rc; j++) {
			yaml_node_t *en = item(ld, uses, j);
			const char *s = sval(en);
			int e = s ? pm_find_element(m, s) : -1;
			if (e < 0)
				rc = fail(ld, en, "thread '%s' uses %s%s%s: expected the name of an "
					  "element in application.elements", th->name,
					  s ? "undefined element '" : "", s ? s : kind(en), s ? "'" : "");
			else if (set_put(&seen, (uint64_t)e, j) >= 0)
				rc = fail(ld, en, "thread '%s' lists element '%s' twice", th->name, s);
			else
				u[j] = e;
		}
		set_free(&seen);
		if (rc)
			return rc;
		th->uses = u;
		th->nuses = k;
	}
	m->model.nthreads = n;
	return 0;
}

static int cores_of(struct ld *ld, yaml_node_t *v, struct pm_host *h)
{
	long count;
	if (v->type == YAML_SCALAR_NODE) {
		int rc = as_int(ld, v, "cores", 1, 4096, &count);
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
	if (v->type != YAML_SEQUENCE_NODE || !list_len(v))
		return fail(ld, v, "cores: expected a number of cores or a list of core numbers, got %s",
			    kind(v));
	int n = list_len(v), rc = 0;
	int *c = pm__alloc(ld->m, sizeof(int) * (size_t)n);
	struct set seen;
	NOMEM(c);
	if ((rc = set_init(&seen, (size_t)n)))
		return rc;
	for (int i = 0; i < n && !rc; i++) {
		long x;
		if ((rc = as_int(ld, item(ld, v, i), "core", 0, 65535, &x)))
			break;
		if (set_put(&seen, (uint64_t)x, i) >= 0)
			rc = fail(ld, item(ld, v, i), "core %ld listed twice", x);
		c[i] = (int)x;
	}
	set_free(&seen);
	if (rc)
		return rc;
	h->cores = c;
	h->ncores = n;
	return 0;
}

static int cluster(struct ld *ld, yaml_node_t *c)
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
	if ((rc = check_map(ld, c, "cluster", keys, keys)))
		return rc;
	yaml_node_t *list = get(ld, c, "hosts");
	if ((rc = need_list(ld, list, "cluster.hosts")))
		return rc;
	int n = list_len(list);
	if (!n)
		return fail(ld, list, "cluster.hosts: expected at least one host");
	NOMEM(m->ho = pm__alloc(m, sizeof(*m->ho) * (size_t)n));
	if ((rc = pm__names_init(m, &m->ho_ix, n)))
		return rc;
	static const char *const hkeys[] = { "name", "cores", "address", NULL };
	static const char *const hreq[] = { "name", "cores", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *h = item(ld, list, i);
		yaml_node_t *a = get(ld, h, "address");
		if ((rc = check_map(ld, h, "host", hkeys, hreq)) ||
		    (rc = as_name(ld, get(ld, h, "name"), "host name", 20, &m->ho[i].name)))
			return rc;
		if (pm__names_put(&m->ho_ix, m->ho[i].name, i) >= 0)
			return fail(ld, get(ld, h, "name"), "duplicate host name '%s'", m->ho[i].name);
		if (strlen(m->model.name) + 1 + strlen(m->ho[i].name) > PS_NAME_MAX)
			return fail(ld, get(ld, h, "name"), "host name '%s': with the job's name '%s' it "
				    "makes the host's segment name longer than %d characters",
				    m->ho[i].name, m->model.name, PS_NAME_MAX);
		if ((rc = cores_of(ld, get(ld, h, "cores"), &m->ho[i])))
			return rc;
		if (a) {
			struct in_addr in;
			const char *s = sval(a);
			if (!s || inet_pton(AF_INET, s, &in) != 1)
				return fail(ld, a, "host address: expected an IPv4 address like 10.0.0.2, "
					    "got %s%s%s", s ? "'" : "", s ? s : kind(a), s ? "'" : "");
			NOMEM(m->ho[i].address = pm__strdup(m, s));
		}
	}
	m->model.nhosts = n;
	return 0;
}

static void host_list(const pm_map *m, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < m->model.nhosts; i++) {
		if (i)
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, m->ho[i].name, len - strlen(buf) - 1);
	}
}

static void core_list(const struct pm_host *h, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < h->ncores && strlen(buf) + 12 < len; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? " " : "", h->cores[i]);
}

static int processes(struct ld *ld, yaml_node_t *list, const struct set *cores);

static int mapping(struct ld *ld, yaml_node_t *mp)
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
	if ((rc = check_map(ld, mp, "mapping", keys, keys)))
		return rc;
	yaml_node_t *list = get(ld, mp, "processes");
	if ((rc = need_list(ld, list, "mapping.processes")))
		return rc;
	int n = list_len(list);
	NOMEM(m->pr = pm__alloc(m, sizeof(*m->pr) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->pr_ix, n)))
		return rc;
	/* every host's cores, to check a process's in constant time */
	struct set cores;
	size_t ncores = 0;
	for (int h = 0; h < m->model.nhosts; h++)
		ncores += (size_t)m->ho[h].ncores;
	if ((rc = set_init(&cores, ncores)))
		return rc;
	for (int h = 0; h < m->model.nhosts; h++)
		for (int k = 0; k < m->ho[h].ncores; k++)
			set_put(&cores, pair(h, m->ho[h].cores[k]), k);
	rc = processes(ld, list, &cores);
	set_free(&cores);
	return rc;
}

static int processes(struct ld *ld, yaml_node_t *list, const struct set *cores)
{
	pm_map *m = ld->m;
	int rc, n = list_len(list);
	static const char *const pkeys[] = { "name", "host", "threads", "cores", NULL };
	static const char *const preq[] = { "name", "threads", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *p = item(ld, list, i), *v;
		struct pm_process *pr = &m->pr[i];
		if ((rc = check_map(ld, p, "process", pkeys, preq)) ||
		    (rc = as_name(ld, get(ld, p, "name"), "process name", PS_NAME_MAX, &pr->name)))
			return rc;
		if (pm__names_put(&m->pr_ix, pr->name, i) >= 0)
			return fail(ld, get(ld, p, "name"), "duplicate process name '%s'", pr->name);
		if ((v = get(ld, p, "host"))) {
			const char *s = sval(v);
			pr->host = s ? find_host(m, s) : -1;
			if (pr->host < 0) {
				char hosts[300];
				host_list(m, hosts, sizeof(hosts));
				return fail(ld, v, "process '%s' is mapped to unknown host %s%s%s "
					    "(expected one of: %s)", pr->name, s ? "'" : "",
					    s ? s : kind(v), s ? "'" : "", hosts);
			}
		}
		int *t;
		if ((rc = thread_refs(ld, get(ld, p, "threads"), "process threads", &t, &pr->nthreads)))
			return rc;
		pr->threads = t;
		for (int j = 0; j < pr->nthreads; j++) {
			struct pm_thread *th = &m->th[t[j]];
			if (th->process >= 0)
				return fail(ld, item(ld, get(ld, p, "threads"), j),
					    "thread '%s' is already mapped to process '%s'", th->name,
					    m->pr[th->process].name);
			th->process = i;
		}
		if (!(v = get(ld, p, "cores")))
			continue;
		if ((rc = need_list(ld, v, "process cores")))
			return rc;
		if (list_len(v) != pr->nthreads)
			return fail(ld, v, "process '%s': expected one core per thread (%d), got %d",
				    pr->name, pr->nthreads, list_len(v));
		const struct pm_host *h = &m->ho[pr->host];
		for (int j = 0; j < pr->nthreads; j++) {
			long c;
			yaml_node_t *cn = item(ld, v, j);
			if ((rc = as_int(ld, cn, "core", 0, 65535, &c)))
				return rc;
			if (set_get(cores, pair(pr->host, (int)c)) < 0) {
				char known[200];
				core_list(h, known, sizeof(known));
				return fail(ld, cn, "core %ld does not exist on host '%s' (its cores: %s)",
					    c, h->name, known);
			}
			m->th[t[j]].core = (int)c;
		}
	}
	m->model.nprocesses = n;
	for (int i = 0; i < m->model.nthreads; i++)
		if (m->th[i].process < 0)
			return fail(ld, list, "thread '%s' (line %d) is not mapped to any process: "
				    "expected it in some process's threads", m->th[i].name, m->th[i].line);
	return 0;
}

/* A stage: a wrapper type name, or a mapping {type: NAME, PARAM: VALUE...}. */
static int stage(struct ld *ld, yaml_node_t *n, struct pm_stage *st)
{
	pm_map *m = ld->m;
	st->params.file = ld->file;
	st->params.line = (int)n->start_mark.line + 1;
	st->params.col = (int)n->start_mark.column + 1;
	const char *type = sval(n);
	yaml_node_t *tn = n;
	if (n->type == YAML_MAPPING_NODE) {
		tn = get(ld, n, "type");
		if (!tn)
			return fail(ld, n, "stage: missing required key 'type'");
		type = sval(tn);
		int np = 0;
		if (n->data.mapping.pairs.top - n->data.mapping.pairs.start > PM_MAX_PARAMS + 1)
			return fail(ld, n, "stage: more than %d parameters", PM_MAX_PARAMS);
		struct paths_param *v = pm__alloc(m, sizeof(*v) *
						  (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start));
		NOMEM(v);
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = node(ld, p->key), *val = node(ld, p->value);
			if (!sval(k))
				return fail(ld, k, "stage: expected a parameter name, got %s", kind(k));
			if (!strcmp(sval(k), "type"))
				continue;
			if (!sval(val))
				return fail(ld, val, "stage parameter '%s': expected a single value, got %s",
					    sval(k), kind(val));
			for (int q = 0; q < np; q++)
				if (!strcmp(v[q].key, sval(k)))
					return fail(ld, k, "stage: parameter '%s' given twice", sval(k));
			v[np].key = pm__strdup(m, sval(k));
			v[np].value = pm__strdup(m, sval(val));
			NOMEM(v[np].key && v[np].value);
			v[np].line = (int)val->start_mark.line + 1;
			v[np].col = (int)val->start_mark.column + 1;
			np++;
		}
		st->params.v = v;
		st->params.n = np;
	}
	if (!type || !*type)
		return fail(ld, tn, "stage: expected a wrapper type name, got %s", kind(tn));
	const struct paths_wrapper_type *wt = paths_lookup(type);
	if (!wt || !strcmp(type, "element") || !strcmp(type, "fork"))
		return fail(ld, tn, "unknown wrapper type '%s' (expected pass, handoff, remote%s)", type,
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

static int stage_list(struct ld *ld, yaml_node_t *list, const char *what, struct pm_stage **out,
		      int *n)
{
	int rc = need_list(ld, list, what);
	if (rc)
		return rc;
	*n = list_len(list);
	NOMEM(*out = pm__alloc(ld->m, sizeof(**out) * (size_t)(*n ? *n : 1)));
	for (int i = 0; i < *n; i++)
		if ((rc = stage(ld, item(ld, list, i), &(*out)[i])))
			return rc;
	return 0;
}

/* The paths section is kept as parsed; generate.c applies it. */
struct pm_paths_spec {
	int ndefault;
	struct pm_stage *dflt;
	bool all, none;
	int npatterns;
	const char **patterns;
	int ncustom;
	struct { int thread, element, nstages; struct pm_stage *stages; } *custom;
	struct set custom_ix; /* (thread, element) -> custom path; freed after make_paths */
};
static struct pm_paths_spec pspec_zero;

static int custom_paths(struct ld *ld, yaml_node_t *v, struct pm_paths_spec *ps, const struct set *used);

static int paths_section(struct ld *ld, yaml_node_t *p, struct pm_paths_spec *ps)
{
	pm_map *m = ld->m;
	*ps = pspec_zero;
	ps->none = true;
	if (!p)
		return 0;
	static const char *const keys[] = { "stages", "collectors", "custom", NULL };
	int rc = check_map(ld, p, "paths", keys, NULL);
	yaml_node_t *v;
	if (rc)
		return rc;
	if ((v = get(ld, p, "stages")) &&
	    (rc = stage_list(ld, v, "paths.stages", &ps->dflt, &ps->ndefault)))
		return rc;
	if ((v = get(ld, p, "collectors"))) {
		const char *s = sval(v);
		if (s && !strcmp(s, "all")) {
			ps->all = true;
			ps->none = false;
		} else if (s && !strcmp(s, "none")) {
			ps->none = true;
		} else if (v->type == YAML_SEQUENCE_NODE) {
			ps->none = false;
			ps->npatterns = list_len(v);
			if (ps->npatterns > PM_MAX_PATTERNS)
				return fail(ld, v, "collectors: %d patterns: expected at most %d",
					    ps->npatterns, PM_MAX_PATTERNS);
			NOMEM(ps->patterns = pm__alloc(m, sizeof(char *) * (size_t)(ps->npatterns + 1)));
			for (int i = 0; i < ps->npatterns; i++) {
				yaml_node_t *pat = item(ld, v, i);
				const char *ps_ = sval(pat);
				if (!ps_ || !strchr(ps_, ':'))
					return fail(ld, pat, "collectors: expected a pattern THREAD:ELEMENT "
						    "(* and ? match), got %s%s%s", ps_ ? "'" : "",
						    ps_ ? ps_ : kind(pat), ps_ ? "'" : "");
				NOMEM(ps->patterns[i] = pm__strdup(m, ps_));
			}
		} else {
			return fail(ld, v, "collectors: expected all, none or a list of THREAD:ELEMENT "
				    "patterns, got %s%s%s", s ? "'" : "", s ? s : kind(v), s ? "'" : "");
		}
	}
	if (!(v = get(ld, p, "custom")))
		return 0;
	if ((rc = need_list(ld, v, "paths.custom")))
		return rc;
	ps->ncustom = list_len(v);
	NOMEM(ps->custom = pm__alloc(m, sizeof(*ps->custom) * (size_t)(ps->ncustom + 1)));
	struct set used; /* every (thread, element) a thread uses */
	size_t nused = 0;
	for (int t = 0; t < m->model.nthreads; t++)
		nused += (size_t)m->th[t].nuses;
	if ((rc = set_init(&used, nused)))
		return rc;
	if ((rc = set_init(&ps->custom_ix, (size_t)ps->ncustom))) {
		set_free(&used);
		return rc;
	}
	for (int t = 0; t < m->model.nthreads; t++)
		for (int k = 0; k < m->th[t].nuses; k++)
			set_put(&used, pair(t, m->th[t].uses[k]), k);
	rc = custom_paths(ld, v, ps, &used);
	set_free(&used);
	return rc;
}

static int custom_paths(struct ld *ld, yaml_node_t *v, struct pm_paths_spec *ps, const struct set *used)
{
	pm_map *m = ld->m;
	int rc;
	static const char *const ckeys[] = { "thread", "element", "stages", NULL };
	for (int i = 0; i < ps->ncustom; i++) {
		yaml_node_t *c = item(ld, v, i), *tn, *en;
		if ((rc = check_map(ld, c, "custom path", ckeys, ckeys)))
			return rc;
		tn = get(ld, c, "thread");
		en = get(ld, c, "element");
		int t = sval(tn) ? pm_find_thread(m, sval(tn)) : -1;
		if (t < 0)
			return fail(ld, tn, "custom path: expected the name of a thread, got %s%s%s",
				    sval(tn) ? "undefined thread '" : "", sval(tn) ? sval(tn) : kind(tn),
				    sval(tn) ? "'" : "");
		int e = sval(en) ? pm_find_element(m, sval(en)) : -1;
		if (e < 0)
			return fail(ld, en, "custom path: expected the name of an element, got %s%s%s",
				    sval(en) ? "undefined element '" : "", sval(en) ? sval(en) : kind(en),
				    sval(en) ? "'" : "");
		if (set_get(used, pair(t, e)) < 0)
			return fail(ld, en, "custom path: thread '%s' does not use element '%s' "
				    "(expected it in the thread's uses)", m->th[t].name, m->el[e].name);
		if (set_put(&ps->custom_ix, pair(t, e), i) >= 0)
			return fail(ld, c, "custom path %s -> %s given twice", m->th[t].name,
				    m->el[e].name);
		ps->custom[i].thread = t;
		ps->custom[i].element = e;
		if ((rc = stage_list(ld, get(ld, c, "stages"), "custom path stages",
				     &ps->custom[i].stages, &ps->custom[i].nstages)))
			return rc;
	}
	return 0;
}

/* Builds the path list: one per (thread, element it uses). */
static int make_paths(struct ld *ld, const struct pm_paths_spec *ps)
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
			int c = ps->ncustom ? set_get(&ps->custom_ix, pair(t, e)) : -1;
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

static int runs_on(struct ld *ld, yaml_node_t *v, struct pm_tree *tr);

static int trees(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	if (!list)
		return 0;
	int rc = need_list(ld, list, "trees");
	if (rc)
		return rc;
	int n = list_len(list);
	NOMEM(m->tr = pm__alloc(m, sizeof(*m->tr) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->tr_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "threads", "fanout", "max_bytes", "runs_on",
					    "collectors", NULL };
	static const char *const req[] = { "name", "threads", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *t = item(ld, list, i), *v;
		struct pm_tree *tr = &m->tr[i];
		if ((rc = check_map(ld, t, "tree", keys, req)) ||
		    (rc = as_name(ld, get(ld, t, "name"), "tree name", 24, &tr->name)))
			return rc;
		if (pm__names_put(&m->tr_ix, tr->name, i) >= 0)
			return fail(ld, get(ld, t, "name"), "duplicate tree name '%s'", tr->name);
		int *th;
		if ((rc = thread_refs(ld, get(ld, t, "threads"), "tree threads", &th, &tr->n)))
			return rc;
		if (!tr->n)
			return fail(ld, get(ld, t, "threads"), "tree threads: expected at least one thread");
		tr->threads = th;
		long lv;
		tr->fanout = 2;
		if ((v = get(ld, t, "fanout"))) {
			if ((rc = as_int(ld, v, "fanout", 2, tr->n < 2 ? 2 : tr->n, &lv)))
				return rc;
			tr->fanout = (int)lv;
		}
		tr->max_bytes = 64;
		if ((v = get(ld, t, "max_bytes"))) {
			if ((rc = as_int(ld, v, "max_bytes", 0, 1 << 20, &lv)))
				return rc;
			tr->max_bytes = (size_t)lv;
		}
		if ((v = get(ld, t, "collectors")) && (rc = as_bool(ld, v, "collectors", &tr->collector)))
			return rc;
		tr->nnodes = paths_tree_shape(tr->n, tr->fanout, NULL, NULL, 0);
		int *runs = pm__alloc(m, sizeof(int) * (size_t)tr->nnodes);
		NOMEM(runs);
		for (int k = 0; k < tr->nnodes; k++)
			runs[k] = -1;
		tr->runs_on = runs;
		if (!(v = get(ld, t, "runs_on")))
			continue;
		if (v->type != YAML_MAPPING_NODE)
			return fail(ld, v, "runs_on: expected a mapping NODE: THREAD, got %s", kind(v));
		if ((rc = runs_on(ld, v, tr)))
			return rc;
	}
	m->model.ntrees = n;
	return 0;
}

/* runs_on: which of the tree's threads runs each node it names. */
static int runs_on(struct ld *ld, yaml_node_t *v, struct pm_tree *tr)
{
	pm_map *m = ld->m;
	const int *th = tr->threads;
	int *runs = (int *)tr->runs_on, rc = 0;
	struct set pos; /* thread -> its place in the tree */
	if ((rc = set_init(&pos, (size_t)tr->n)))
		return rc;
	for (int q = 0; q < tr->n; q++)
		set_put(&pos, (uint64_t)th[q], q);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; !rc && p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = node(ld, p->key), *vn = node(ld, p->value);
		long idx;
		if ((rc = as_int(ld, kn, "runs_on node", 0, tr->nnodes - 1, &idx)))
			break;
		const char *s = sval(vn);
		int k = s ? pm_find_thread(m, s) : -1;
		int who = k >= 0 ? set_get(&pos, (uint64_t)k) : -1;
		if (who < 0)
			rc = fail(ld, vn, "runs_on: expected a thread of tree '%s', got %s%s%s",
				  tr->name, s ? "'" : "", s ? s : kind(vn), s ? "'" : "");
		else
			runs[idx] = who;
	}
	set_free(&pos);
	return rc;
}

static int trace(struct ld *ld, yaml_node_t *t)
{
	pm_map *m = ld->m;
	m->model.trace.threshold = 200;
	m->model.trace.shared = true;
	if (!t)
		return 0;
	static const char *const keys[] = { "threshold", "size", "placement", "keep", NULL };
	static const char *const places[] = { "process", "node", NULL };
	static const char *const keeps[] = { "failed", "always", "never", NULL }; /* enum ps_keep's order */
	int rc = check_map(ld, t, "trace", keys, NULL);
	yaml_node_t *v, *sz;
	long lv;
	if (rc)
		return rc;
	if ((v = get(ld, t, "threshold"))) {
		if ((rc = as_int(ld, v, "trace threshold", 1, PS_THRESHOLD_MAX, &lv)))
			return rc;
		m->model.trace.threshold = (uint32_t)lv;
		m->model.trace.given = true;
	}
	if ((sz = get(ld, t, "size"))) {
		uint64_t b;
		const char *s = sval(sz);
		if (v)
			return fail(ld, sz, "trace: threshold (tuples) or size (bytes), not both");
		if (!s || pm_parse_bytes(s, &b) || b < 36 || b / 36 > PS_THRESHOLD_MAX)
			return fail(ld, sz, "trace size: expected bytes per trace element from 36 to "
				    "%llu, as a number with K, M or G if you like (4M), got %s%s%s",
				    (unsigned long long)PS_THRESHOLD_MAX * 36, s ? "'" : "",
				    s ? s : kind(sz), s ? "'" : "");
		m->model.trace.threshold = (uint32_t)(b / 36);
		m->model.trace.given = true;
	}
	int pl;
	if ((v = get(ld, t, "placement"))) {
		if ((rc = as_choice(ld, v, "trace placement", places, &pl)))
			return rc;
		m->model.trace.shared = pl == 1;
	}
	int kp;
	if ((v = get(ld, t, "keep"))) {
		if ((rc = as_choice(ld, v, "trace keep", keeps, &kp)))
			return rc;
		m->model.trace.keep = (enum ps_keep)kp;
	}
	return 0;
}

int pm_keep(const pm_map *m, enum ps_keep *out, char *err, size_t errlen)
{
	const char *env = getenv("ES_KEEP");
	*out = m ? m->model.trace.keep : PS_KEEP_FAILED;
	if (env && *env && ps_keep_parse(env, out)) {
		snprintf(err, errlen, "ES_KEEP=%s: expected %s", env, PS_KEEP_RULE);
		return PS_EINVAL;
	}
	return 0;
}

int pm_parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return PS_EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end += end[1] == 'i' && end[2] == 'B' ? 3 : end[1] == 'B' ? 2 : 1;
	if (errno || *end || v > (UINT64_MAX >> shift))
		return PS_EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int scopes(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	if (!list)
		return 0;
	int rc = need_list(ld, list, "scopes");
	if (rc)
		return rc;
	int n = list_len(list);
	NOMEM(m->sc = pm__alloc(m, sizeof(*m->sc) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->sc_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "view", "of", "fanout", "runs", "gather",
					    "rate_limit_hz", "reduce", NULL };
	static const char *const req[] = { "name", "view", NULL };
	static const char *const views[] = { "thread", "node", "cluster", "multi-cluster", NULL };
	static const char *const runs[] = { "monitor", "thread", "process", NULL };
	static const char *const gathers[] = { "sequential", "concurrent", NULL };
	static const char *const reduces[] = { "latest", "min", "max", "sum", "count", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *s = item(ld, list, i), *v;
		struct pm_scope *sc = &m->sc[i];
		int ch;
		long lv;
		if ((rc = check_map(ld, s, "scope", keys, req)) ||
		    (rc = as_name(ld, get(ld, s, "name"), "scope name", PS_NAME_MAX, &sc->name)) ||
		    (rc = as_choice(ld, get(ld, s, "view"), "view", views, &ch)))
			return rc;
		if (pm__names_put(&m->sc_ix, sc->name, i) >= 0)
			return fail(ld, get(ld, s, "name"), "duplicate scope name '%s'", sc->name);
		sc->view = (enum pm_view)(ch + 1);
		if ((v = get(ld, s, "of"))) {
			const char *o = sval(v);
			bool ok = o && ((sc->view == PM_VIEW_THREAD && pm_find_thread(m, o) >= 0) ||
					(sc->view == PM_VIEW_NODE && find_host(m, o) >= 0));
			if (!ok)
				return fail(ld, v, "of: expected the name of a %s, got %s%s%s",
					    sc->view == PM_VIEW_THREAD ? "thread" :
					    sc->view == PM_VIEW_NODE ? "host" : "(nothing: this view "
					    "covers everything)", o ? "'" : "", o ? o : kind(v), o ? "'" : "");
			NOMEM(sc->of = pm__strdup(m, o));
		}
		sc->fanout = 4;
		if ((v = get(ld, s, "fanout"))) {
			if ((rc = as_int(ld, v, "fanout", 2, 4096, &lv)))
				return rc;
			sc->fanout = (int)lv;
		}
		sc->runs = PM_RUNS_MONITOR;
		if ((v = get(ld, s, "runs"))) {
			if ((rc = as_choice(ld, v, "runs", runs, &ch)))
				return rc;
			sc->runs = (enum pm_runs)(ch + 1);
		}
		if ((v = get(ld, s, "gather"))) {
			if ((rc = as_choice(ld, v, "gather", gathers, &ch)))
				return rc;
			sc->concurrent = ch == 1;
		}
		if ((v = get(ld, s, "rate_limit_hz")) &&
		    (rc = as_double(ld, v, "rate_limit_hz", 0, &sc->rate_hz)))
			return rc;
		if ((v = get(ld, s, "reduce"))) {
			if ((rc = as_choice(ld, v, "reduce", reduces, &ch)))
				return rc;
			sc->reduce = reduces[ch];
		}
	}
	m->model.nscopes = n;
	return 0;
}

/* The calls libescollect.so records are its own vocabulary (es_mpi_select
 * checks them, with the positions kept here): the loader only sees words. */
static int mpi(struct ld *ld, yaml_node_t *n)
{
	pm_map *m = ld->m;
	if (!n)
		return 0;
	static const char *const keys[] = { "collect", NULL };
	int rc = check_map(ld, n, "mpi", keys, NULL);
	if (rc)
		return rc;
	m->model.mpi.given = true;
	yaml_node_t *c = get(ld, n, "collect");
	if (!c)
		return 0;
	int k = c->type == YAML_SEQUENCE_NODE ? list_len(c) : 1;
	const char **calls = pm__alloc(m, sizeof(char *) * (size_t)(k + 1));
	int *lines = pm__alloc(m, sizeof(int) * (size_t)(k + 1));
	int *cols = pm__alloc(m, sizeof(int) * (size_t)(k + 1));
	NOMEM(calls && lines && cols);
	for (int i = 0; i < k; i++) {
		yaml_node_t *w = c->type == YAML_SEQUENCE_NODE ? item(ld, c, i) : c;
		const char *v = sval(w);
		if (!v || !*v)
			return fail(ld, w, "mpi collect: expected all, a group of calls or the name of an "
				    "MPI function, got %s", kind(w));
		NOMEM(calls[i] = pm__strdup(m, v));
		lines[i] = (int)w->start_mark.line + 1;
		cols[i] = (int)w->start_mark.column + 1;
	}
	m->model.mpi.calls = calls;
	m->model.mpi.lines = lines;
	m->model.mpi.cols = cols;
	m->model.mpi.ncalls = k;
	return 0;
}

static int servers(struct ld *ld, yaml_node_t *n)
{
	struct pm_servers *sv = &ld->m->model.servers;
	sv->runs = PM_SERVER_THREAD;
	sv->listen = PM_LISTEN_LOOPBACK;
	if (!n)
		return 0;
	static const char *const keys[] = { "runs", "listen", "port", "secret_file", NULL };
	static const char *const runs[] = { "thread", "daemon", NULL };
	static const char *const listen[] = { "loopback", "host", "any", NULL };
	int rc = check_map(ld, n, "servers", keys, NULL), k;
	yaml_node_t *v;
	long port = 0;
	if (rc)
		return rc;
	sv->given = true;
	sv->line = (int)n->start_mark.line + 1;
	if ((v = get(ld, n, "runs"))) {
		if ((rc = as_choice(ld, v, "servers runs", runs, &k)))
			return rc;
		sv->runs = (enum pm_server_runs)(k + 1);
	}
	if ((v = get(ld, n, "listen"))) {
		if ((rc = as_choice(ld, v, "servers listen", listen, &k)))
			return rc;
		sv->listen = (enum pm_listen)(k + 1);
	}
	if ((v = get(ld, n, "port")) && (rc = as_int(ld, v, "servers port", 0, 65535, &port)))
		return rc;
	sv->port = (int)port;
	if ((v = get(ld, n, "secret_file"))) {
		const char *s = sval(v);
		if (!s || !*s)
			return fail(ld, v, "servers secret_file: expected the path of a file, got %s",
				    kind(v));
		NOMEM(sv->secret_file = pm__strdup(ld->m, s));
		sv->secret_line = (int)v->start_mark.line + 1;
		sv->secret_col = (int)v->start_mark.column + 1;
	}
	/* off this host's own loopback, only with the secret; host addresses
	 * that are all loopback (127.x: pathmap hosts sharing a machine) are not off it */
	bool off_loopback = sv->listen == PM_LISTEN_ANY;
	for (int i = 0; sv->listen == PM_LISTEN_HOST && i < ld->m->model.nhosts; i++)
		off_loopback |= ld->m->ho[i].address && strncmp(ld->m->ho[i].address, "127.", 4);
	if (off_loopback && !sv->secret_file)
		return fail(ld, get(ld, n, "listen"), "servers listen: a listener off loopback needs "
			    "secret_file (a file only its owner can read, on every host)");
	if (sv->runs == PM_SERVER_DAEMON && !sv->port)
		return fail(ld, get(ld, n, "runs") , "servers runs: daemon: expected a port, where "
			    "each host's psadm serve listens");
	if (sv->listen == PM_LISTEN_HOST)
		for (int i = 0; i < ld->m->model.nhosts; i++)
			if (!ld->m->ho[i].address)
				return fail(ld, get(ld, n, "listen"), "servers listen: host: expected "
					    "an address for every host in the cluster map (host "
					    "'%s' has none)", ld->m->ho[i].name);
	if (sv->port) {
		size_t len = (size_t)ld->m->model.nhosts * 24 + 1;
		char *list = pm__alloc(ld->m, len);
		NOMEM(list);
		for (int i = 0; i < ld->m->model.nhosts; i++)
			snprintf(list + strlen(list), len - strlen(list), "%s%s:%d", i ? "," : "",
				 ld->m->ho[i].address && sv->listen != PM_LISTEN_LOOPBACK ?
				 ld->m->ho[i].address : "127.0.0.1", sv->port);
		sv->list = list;
	}
	return 0;
}

static int document(struct ld *ld, yaml_node_t *root)
{
	pm_map *m = ld->m;
	static const char *const keys[] = { "pathmap", "name", "application", "cluster", "mapping",
					    "paths", "trees", "trace", "scopes", "mpi", "servers", NULL };
	static const char *const req[] = { "pathmap", "name", NULL };
	static const char *const akeys[] = { "elements", "threads", NULL };
	int rc;
	long version;
	if (!root)
		return fail(ld, NULL, "empty pathmap: expected a mapping with pathmap and name");
	if ((rc = check_map(ld, root, "pathmap", keys, req)) ||
	    (rc = as_int(ld, get(ld, root, "pathmap"), "pathmap (the schema version)", 1, 1, &version)) ||
	    (rc = as_name(ld, get(ld, root, "name"), "name", PM_JOB_MAX, &m->model.name)))
		return rc;
	if (!pm_job_ok(m->model.name))
		return fail(ld, get(ld, root, "name"), "name: the job's name, expected %s, got '%s'",
			    PM_JOB_RULE, m->model.name);
	/* No application map: an unmodified MPI program, say, that only
	 * libescollect.so watches. */
	yaml_node_t *app = get(ld, root, "application"), empty = { .type = YAML_SEQUENCE_NODE };
	if ((app && (rc = check_map(ld, app, "application", akeys, akeys))) ||
	    (rc = elements(ld, app ? get(ld, app, "elements") : &empty)) ||
	    (rc = threads(ld, app ? get(ld, app, "threads") : &empty)) ||
	    (rc = cluster(ld, get(ld, root, "cluster"))) ||
	    (rc = mapping(ld, get(ld, root, "mapping"))))
		return rc;
	struct pm_paths_spec ps;
	rc = paths_section(ld, get(ld, root, "paths"), &ps);
	if (!rc)
		rc = make_paths(ld, &ps);
	set_free(&ps.custom_ix);
	if (rc ||
	    (rc = trees(ld, get(ld, root, "trees"))) ||
	    (rc = trace(ld, get(ld, root, "trace"))) ||
	    (rc = scopes(ld, get(ld, root, "scopes"))) ||
	    (rc = mpi(ld, get(ld, root, "mpi"))) ||
	    (rc = servers(ld, get(ld, root, "servers"))))
		return rc;
	return 0;
}

/* A first pass over the YAML events, before libyaml builds the tree: its
 * scanner takes time quadratic in the nesting, so a pathmap nested deeper
 * than any real one is refused here, at the first level too many. */
static int prescan(struct ld *ld, const char *text, size_t len)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return PS_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int depth = 0, rc = 0;
	size_t events = 0;
	for (bool done = false; !done && !rc;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			break; /* the load that follows reports it */
		yaml_node_t at = { .start_mark = ev.start_mark };
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > PM_MAX_DEPTH)
				rc = fail(ld, &at, "nested deeper than %d levels: expected a pathmap "
					  "(which needs 6)", PM_MAX_DEPTH);
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (ev.type == YAML_STREAM_END_EVENT) {
			done = true;
		}
		if (!rc && ++events > PM_MAX_NODES)
			rc = fail(ld, &at, "more than %u YAML nodes: expected a pathmap", PM_MAX_NODES);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

static void publish(pm_map *m)
{
	m->model.elements = m->el;
	m->model.threads = m->th;
	m->model.processes = m->pr;
	m->model.hosts = m->ho;
	m->model.paths = m->pa;
	m->model.trees = m->tr;
	m->model.scopes = m->sc;
}

int pm_load_string(const char *file, const char *text, size_t len, pm_map **out, char *err,
		   size_t errlen)
{
	if (!text || !out)
		return PS_EINVAL;
	if (err && errlen)
		err[0] = 0;
	pm_map *m = calloc(1, sizeof(*m));
	if (!m)
		return PS_ENOMEM;
	struct ld ld = { .m = m, .file = file ? file : "<pathmap>", .err = err, .errlen = errlen };
	m->model.file = pm__strdup(m, ld.file);
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = prescan(&ld, text, len);
	if (rc) {
		pm_destroy(m);
		return rc;
	}
	if (!yaml_parser_initialize(&parser)) {
		pm_destroy(m);
		return PS_ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_node_t at = { .start_mark = parser.problem_mark };
		rc = fail(&ld, &at, "YAML syntax: %s%s%s", parser.problem ? parser.problem : "error",
			  parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		pm_destroy(m);
		return rc;
	}
	ld.doc = &doc;
	rc = document(&ld, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (!rc) {
		publish(m);
		rc = pm__generate(m, err, errlen);
	}
	if (rc) {
		if (rc == PS_ENOMEM && err && errlen)
			snprintf(err, errlen, "%s: out of memory", ld.file);
		pm_destroy(m);
		return rc;
	}
	publish(m);
	*out = m;
	return 0;
}

int pm_load(const char *file, pm_map **out, char *err, size_t errlen)
{
	if (!file || !out)
		return PS_EINVAL;
	FILE *f = ps_fopen_in(file);
	if (!f) {
		int e = errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", file,
				 e == EINVAL ? "not a regular file (a pathmap is a YAML file)" : strerror(e));
		return -e;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 8192;
			if (cap > (64u << 20)) {
				free(buf);
				fclose(f);
				if (err && errlen)
					snprintf(err, errlen, "%s: larger than 64 MiB: not a pathmap", file);
				return PS_EINVAL;
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return PS_ENOMEM;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", file);
		return -EIO;
	}
	int rc = pm_load_string(file, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

