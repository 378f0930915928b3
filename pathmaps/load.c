/* load.c - reads a YAML pathmap with libyaml and checks every field, reporting file:line:column: the document, its trace, scopes, mpi and servers sections (the others in load_topology.c and load_paths.c). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "internal.h"
#include "load.h"

/* --- the sections ------------------------------------------------------------------ */

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
	int rc = pm__check_map(ld, t, "trace", keys, NULL);
	yaml_node_t *v, *sz;
	long lv;
	if (rc)
		return rc;
	if ((v = pm__get(ld, t, "threshold"))) {
		if ((rc = pm__as_int(ld, v, "trace threshold", 1, PS_THRESHOLD_MAX, &lv)))
			return rc;
		m->model.trace.threshold = (uint32_t)lv;
		m->model.trace.given = true;
	}
	if ((sz = pm__get(ld, t, "size"))) {
		uint64_t b;
		const char *s = pm__sval(sz);
		if (v)
			return pm__fail(ld, sz, "trace: threshold (tuples) or size (bytes), not both");
		if (!s || pm_parse_bytes(s, &b) || b < 36 || b / 36 > PS_THRESHOLD_MAX)
			return pm__fail(ld, sz, "trace size: expected bytes per trace element from 36 to "
				    "%llu, as a number with K, M or G if you like (4M), got %s%s%s",
				    (unsigned long long)PS_THRESHOLD_MAX * 36, s ? "'" : "",
				    s ? s : pm__kind(sz), s ? "'" : "");
		m->model.trace.threshold = (uint32_t)(b / 36);
		m->model.trace.given = true;
	}
	int pl;
	if ((v = pm__get(ld, t, "placement"))) {
		if ((rc = pm__as_choice(ld, v, "trace placement", places, &pl)))
			return rc;
		m->model.trace.shared = pl == 1;
	}
	int kp;
	if ((v = pm__get(ld, t, "keep"))) {
		if ((rc = pm__as_choice(ld, v, "trace keep", keeps, &kp)))
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

/* handler: LIB.so[:ARGS], or a list of up to four: loaded by the monitor
 * that reads the scope (the loader only checks their form), which asks
 * them; a helper process's tree could not be asked. */
static int scope_handlers(struct ld *ld, yaml_node_t *v, struct pm_scope *sc)
{
	int k = v->type == YAML_SEQUENCE_NODE ? pm__list_len(v) : 1;
	if (k < 1 || k > PM_SCOPE_HANDLERS)
		return pm__fail(ld, v, "handler: expected LIB.so[:ARGS] or a list of 1 to %d of them, got %d",
				PM_SCOPE_HANDLERS, k);
	if (sc->runs == PM_RUNS_PROCESS)
		return pm__fail(ld, v, "handler: a scope whose nodes run in a helper process (runs: process) "
				"cannot have one: it runs where the monitor reads (runs: monitor or thread)");
	for (int i = 0; i < k; i++) {
		yaml_node_t *w = v->type == YAML_SEQUENCE_NODE ? pm__item(ld, v, i) : v;
		const char *spec = pm__sval(w);
		size_t lib = spec ? strcspn(spec, ":") : 0;
		if (!spec || !lib || strlen(spec) > 239 || lib < 4 || strncmp(spec + lib - 3, ".so", 3))
			return pm__fail(ld, w, "handler: expected LIB.so[:ARGS] (a shared library, es_handler.h; at "
					"most 239 characters), got %s%s%s", spec ? "'" : "", spec ? spec : pm__kind(w),
					spec ? "'" : "");
		if (*spec != '/' && ld->dir) { /* the pathmap's own directory, never the monitor's */
			char abs[4400];
			int n = snprintf(abs, sizeof(abs), "%s/%s", ld->dir, spec);
			if (n > 239)
				return pm__fail(ld, w, "handler: '%s' in the pathmap's directory is %s, longer than 239 "
						"characters", spec, abs);
			NOMEM(sc->handlers[i] = pm__strdup(ld->m, abs));
		} else {
			NOMEM(sc->handlers[i] = pm__strdup(ld->m, spec));
		}
	}
	sc->nhandlers = k;
	return 0;
}

static int scopes(struct ld *ld, yaml_node_t *list)
{
	pm_map *m = ld->m;
	if (!list)
		return 0;
	int rc = pm__need_list(ld, list, "scopes");
	if (rc)
		return rc;
	int n = pm__list_len(list);
	NOMEM(m->sc = pm__alloc(m, sizeof(*m->sc) * (size_t)(n ? n : 1)));
	if ((rc = pm__names_init(m, &m->sc_ix, n)))
		return rc;
	static const char *const keys[] = { "name", "view", "of", "fanout", "runs", "gather",
					    "rate_limit_hz", "reduce", "handler", NULL };
	static const char *const req[] = { "name", "view", NULL };
	static const char *const views[] = { "thread", "node", "cluster", "multi-cluster", NULL };
	static const char *const runs[] = { "monitor", "thread", "process", NULL };
	static const char *const gathers[] = { "sequential", "concurrent", NULL };
	static const char *const reduces[] = { "latest", "min", "max", "sum", "count", NULL };
	for (int i = 0; i < n; i++) {
		yaml_node_t *s = pm__item(ld, list, i), *v;
		struct pm_scope *sc = &m->sc[i];
		int ch;
		long lv;
		if ((rc = pm__check_map(ld, s, "scope", keys, req)) ||
		    (rc = pm__as_name(ld, pm__get(ld, s, "name"), "scope name", PS_NAME_MAX, &sc->name)) ||
		    (rc = pm__as_choice(ld, pm__get(ld, s, "view"), "view", views, &ch)))
			return rc;
		if (pm__names_put(&m->sc_ix, sc->name, i) >= 0)
			return pm__fail(ld, pm__get(ld, s, "name"), "duplicate scope name '%s'", sc->name);
		sc->view = (enum pm_view)(ch + 1);
		if ((v = pm__get(ld, s, "of"))) {
			const char *o = pm__sval(v);
			bool ok = o && ((sc->view == PM_VIEW_THREAD && pm_find_thread(m, o) >= 0) ||
					(sc->view == PM_VIEW_NODE && pm__find_host(m, o) >= 0));
			if (!ok)
				return pm__fail(ld, v, "of: expected the name of a %s, got %s%s%s",
					    sc->view == PM_VIEW_THREAD ? "thread" :
					    sc->view == PM_VIEW_NODE ? "host" : "(nothing: this view "
					    "covers everything)", o ? "'" : "", o ? o : pm__kind(v), o ? "'" : "");
			NOMEM(sc->of = pm__strdup(m, o));
		}
		sc->fanout = 4;
		if ((v = pm__get(ld, s, "fanout"))) {
			if ((rc = pm__as_int(ld, v, "fanout", 2, 4096, &lv)))
				return rc;
			sc->fanout = (int)lv;
		}
		sc->runs = PM_RUNS_MONITOR;
		if ((v = pm__get(ld, s, "runs"))) {
			if ((rc = pm__as_choice(ld, v, "runs", runs, &ch)))
				return rc;
			sc->runs = (enum pm_runs)(ch + 1);
		}
		if ((v = pm__get(ld, s, "gather"))) {
			if ((rc = pm__as_choice(ld, v, "gather", gathers, &ch)))
				return rc;
			sc->concurrent = ch == 1;
		}
		if ((v = pm__get(ld, s, "rate_limit_hz")) &&
		    (rc = pm__as_double(ld, v, "rate_limit_hz", 0, &sc->rate_hz)))
			return rc;
		if ((v = pm__get(ld, s, "reduce"))) {
			if ((rc = pm__as_choice(ld, v, "reduce", reduces, &ch)))
				return rc;
			sc->reduce = reduces[ch];
		}
		if ((v = pm__get(ld, s, "handler")) && (rc = scope_handlers(ld, v, sc)))
			return rc;
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
	int rc = pm__check_map(ld, n, "mpi", keys, NULL);
	if (rc)
		return rc;
	m->model.mpi.given = true;
	yaml_node_t *c = pm__get(ld, n, "collect");
	if (!c)
		return 0;
	int k = c->type == YAML_SEQUENCE_NODE ? pm__list_len(c) : 1;
	const char **calls = pm__alloc(m, sizeof(char *) * (size_t)(k + 1));
	int *lines = pm__alloc(m, sizeof(int) * (size_t)(k + 1));
	int *cols = pm__alloc(m, sizeof(int) * (size_t)(k + 1));
	NOMEM(calls && lines && cols);
	for (int i = 0; i < k; i++) {
		yaml_node_t *w = c->type == YAML_SEQUENCE_NODE ? pm__item(ld, c, i) : c;
		const char *v = pm__sval(w);
		if (!v || !*v)
			return pm__fail(ld, w, "mpi collect: expected all, a group of calls or the name of an "
				    "MPI function, got %s", pm__kind(w));
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
	int rc = pm__check_map(ld, n, "servers", keys, NULL), k;
	yaml_node_t *v;
	long port = 0;
	if (rc)
		return rc;
	sv->given = true;
	sv->line = (int)n->start_mark.line + 1;
	if ((v = pm__get(ld, n, "runs"))) {
		if ((rc = pm__as_choice(ld, v, "servers runs", runs, &k)))
			return rc;
		sv->runs = (enum pm_server_runs)(k + 1);
	}
	if ((v = pm__get(ld, n, "listen"))) {
		if ((rc = pm__as_choice(ld, v, "servers listen", listen, &k)))
			return rc;
		sv->listen = (enum pm_listen)(k + 1);
	}
	if ((v = pm__get(ld, n, "port")) && (rc = pm__as_int(ld, v, "servers port", 0, 65535, &port)))
		return rc;
	sv->port = (int)port;
	if ((v = pm__get(ld, n, "secret_file"))) {
		const char *s = pm__sval(v);
		if (!s || !*s)
			return pm__fail(ld, v, "servers secret_file: expected the path of a file, got %s",
				    pm__kind(v));
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
		return pm__fail(ld, pm__get(ld, n, "listen"), "servers listen: a listener off loopback needs "
			    "secret_file (a file only its owner can read, on every host)");
	if (sv->runs == PM_SERVER_DAEMON && !sv->port)
		return pm__fail(ld, pm__get(ld, n, "runs") , "servers runs: daemon: expected a port, where "
			    "each host's psadm serve listens");
	if (sv->listen == PM_LISTEN_HOST)
		for (int i = 0; i < ld->m->model.nhosts; i++)
			if (!ld->m->ho[i].address)
				return pm__fail(ld, pm__get(ld, n, "listen"), "servers listen: host: expected "
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

/* paths: the section read, then the paths made of it. */
static int paths(struct ld *ld, yaml_node_t *n)
{
	struct pm_paths_spec ps;
	int rc = pm__paths_section(ld, n, &ps);
	if (!rc)
		rc = pm__make_paths(ld, &ps);
	pm__set_free(&ps.custom_ix);
	return rc;
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
		return pm__fail(ld, NULL, "empty pathmap: expected a mapping with pathmap and name");
	if ((rc = pm__check_map(ld, root, "pathmap", keys, req)) ||
	    (rc = pm__as_int(ld, pm__get(ld, root, "pathmap"), "pathmap (the schema version)", 1, 1, &version)) ||
	    (rc = pm__as_name(ld, pm__get(ld, root, "name"), "name", ES_JOB_MAX, &m->model.name)))
		return rc;
	if (!es_job_ok(m->model.name))
		return pm__fail(ld, pm__get(ld, root, "name"), "name: the job's name, expected %s, got '%s'",
			    ES_JOB_RULE, m->model.name);
	/* No application map: an unmodified MPI program, say, that only
	 * libescollect.so watches. */
	yaml_node_t *app = pm__get(ld, root, "application"), empty = { .type = YAML_SEQUENCE_NODE };
	if ((app && (rc = pm__check_map(ld, app, "application", akeys, akeys))) ||
	    (rc = pm__elements(ld, app ? pm__get(ld, app, "elements") : &empty)) ||
	    (rc = pm__threads(ld, app ? pm__get(ld, app, "threads") : &empty)))
		return rc;
	/* the sections after the application, each by its loader, in the
	 * order they build on each other (paths on the mapping, trees on the
	 * paths' elements) */
	static const struct {
		const char *key;
		int (*load)(struct ld *ld, yaml_node_t *n); /* n NULL: the section is absent */
	} sections[] = {
		{ "cluster", pm__cluster }, { "mapping", pm__mapping }, { "paths", paths }, { "trees", pm__trees },
		{ "trace", trace }, { "scopes", scopes }, { "mpi", mpi }, { "servers", servers },
	};
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]) && !rc; i++)
		rc = sections[i].load(ld, pm__get(ld, root, sections[i].key));
	return rc;
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
				rc = pm__fail(ld, &at, "nested deeper than %d levels: expected a pathmap "
					  "(which needs 6)", PM_MAX_DEPTH);
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (ev.type == YAML_STREAM_END_EVENT) {
			done = true;
		}
		if (!rc && ++events > PM_MAX_NODES)
			rc = pm__fail(ld, &at, "more than %u YAML nodes: expected a pathmap", PM_MAX_NODES);
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

static int load_text(const char *file, const char *dir, const char *text, size_t len, pm_map **out,
		     char *err, size_t errlen);

int pm_load_string(const char *file, const char *text, size_t len, pm_map **out, char *err,
		   size_t errlen)
{
	return load_text(file, NULL, text, len, out, err, errlen);
}

static int load_text(const char *file, const char *dir, const char *text, size_t len, pm_map **out,
		     char *err, size_t errlen)
{
	if (!text || !out)
		return PS_EINVAL;
	if (err && errlen)
		err[0] = 0;
	pm_map *m = calloc(1, sizeof(*m));
	if (!m)
		return PS_ENOMEM;
	struct ld ld = { .m = m, .file = file ? file : "<pathmap>", .dir = dir, .err = err, .errlen = errlen };
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
		rc = pm__fail(&ld, &at, "YAML syntax: %s%s%s", parser.problem ? parser.problem : "error",
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
	pm__model_check(m);
	*out = m;
	return 0;
}

int pm_load(const char *file, pm_map **out, char *err, size_t errlen)
{
	if (!file || !out)
		return PS_EINVAL;
	/* a pathmap names code a monitor loads and orders the application
	 * follows: only its user's or root's, as OpenSSH takes its keys */
	char why[4400];
	int fd = base_open_trusted(file, why, sizeof(why));
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int e = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		if (err && errlen && fd >= 0)
			snprintf(err, errlen, "%s: %s", file, strerror(e));
		else if (err && errlen)
			snprintf(err, errlen, "%s%s", why, e == EACCES ? ": not read (a pathmap is taken only from its "
				 "user or root: it names code a monitor loads)" : e == EINVAL ? " (a pathmap is a YAML file)" : "");
		return -e;
	}
	char dir[PATH_MAX];
	if (!realpath(file, dir))
		snprintf(dir, sizeof(dir), ".");
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
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
	int rc = load_text(file, dir, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

