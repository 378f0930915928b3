/* job.c - makes one process of a pathmap real: servers, elements, paths, trees, core binding. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <hwloc.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct pm_job {
	const pm_map *m;
	int proc;
	ps_server *local;      /* this process's elements */
	ps_server *node;       /* the host's shared segment, if any element needs it */
	ps_elem **elems;       /* by element index; NULL where this process has none */
	paths_path **paths;    /* by path index */
	paths_tree **trees;    /* by tree index */
	hwloc_topology_t topo;
	bool topo_loaded;
	char trace_space[PS_NAME_MAX + 1]; /* where collectors write: "" = process memory */
	/* across hosts */
	ps_tcp *tcp;           /* the tuple server this process runs for its host */
	ps_server **remote;    /* per host: its segment, reached through its server */
	char (*addr)[64];      /* per host: where its server listens */
	int *port;             /* per host: 0 if unknown */
	char servers[1024];
};

struct start_rec { /* what a process tells the others at start-up */
	int32_t rc;        /* how its start went so far */
	int32_t pid;
	int32_t host, port; /* its host's server, if it runs it; host -1 if not */
	char addr[64];
};

static int jfail(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int jfail(char *err, size_t len, int rc, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static void seg_name(const pm_map *m, int host, char *buf, size_t len)
{
	pm__host_segment(m, host, buf, len);
}

/* The process that makes p's host's segment and runs its server: the
 * first on the host. */
static int host_first(const pm_map *m, int p)
{
	for (int i = 0; i < p; i++)
		if (m->pr[i].host == m->pr[p].host)
			return i;
	return p;
}

/*
 * The segment of a run must not be confused with one another run of the
 * job made: two jobs would be one.  The first process on the host removes
 * a dead leftover and makes a fresh one (refusing a live one); the others
 * join it.  Under an exchange (mpirun) they learn the maker's pid and its
 * outcome first, and join only the segment that pid made.  Without one
 * they can only judge by its creator's age: see pm__made_before_start.
 */
static int make_node(pm_job *j, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	char name[PS_NAME_MAX + 8];
	seg_name(m, m->pr[j->proc].host, name, sizeof(name));
	struct ps_shm_attr a = { .flags = PS_SHM_REPLACE_DEAD };
	struct ps_shm_info info;
	int rc = ps_server_create_shm(name, &a, &j->node);
	if (rc == PS_EEXIST && ps_shm_info(name, &info) == 0)
		return jfail(err, errlen, rc, "shared segment %s is in use by process %d: "
			     "is another run of job '%s' going on?", name, info.creator_pid,
			     m->model.name);
	if (rc)
		return jfail(err, errlen, rc, "shared segment %s: %s", name, ps_strerror(rc));
	return 0;
}

/* Processes of one run start within seconds of each other; a segment whose
 * creator started more than a minute before a process did is another
 * run's.  Two runs started within a minute pass: only the exchange tells
 * those apart. */
bool pm__made_before_start(const struct ps_shm_info *info, uint64_t started)
{
	long hz = sysconf(_SC_CLK_TCK);
	return started && info->creator_start && hz > 0 &&
	       started > info->creator_start + 60 * (uint64_t)hz;
}

/* Joins the host's segment.  maker: the pid of this run's first process on
 * the host, as the exchange told it, or 0 without an exchange. */
static int join_node(pm_job *j, int32_t maker, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	char name[PS_NAME_MAX + 8];
	seg_name(m, m->pr[j->proc].host, name, sizeof(name));
	struct ps_shm_info info;
	int rc;
	for (int tries = 0; tries < 3000; tries++) { /* up to 30 s for a slow starter */
		if (ps_shm_info(name, &info) == 0 && info.state == PS_SHM_LIVE) {
			if (maker && info.creator_pid != maker)
				return jfail(err, errlen, PS_EEXIST, "shared segment %s was made by "
					     "process %d, not by this run's first process on the host "
					     "(pid %d): is another run of job '%s' going on?", name,
					     info.creator_pid, maker, m->model.name);
			if (!maker && pm__made_before_start(&info, ps_proc_start(0)))
				return jfail(err, errlen, PS_EEXIST, "shared segment %s is in use by "
					     "process %d since before this process started: is another "
					     "run of job '%s' going on?", name, info.creator_pid,
					     m->model.name);
			if ((rc = ps_server_open_shm(name, PS_RDWR, &j->node)) == 0) {
				/* the maker could have left and another run made it again
				 * between the look and the open */
				if (!maker || ps_shm_info(name, &info) || info.creator_pid == maker)
					return 0;
				ps_server_destroy(j->node);
				j->node = NULL;
				continue;
			}
		}
		usleep(10000);
	}
	return jfail(err, errlen, PS_ETIMEDOUT, "shared segment %s: its first process on this "
		     "host (%s) never made it", name, m->pr[host_first(m, j->proc)].name);
}

static bool uses_here(const pm_map *m, int p, int e)
{
	for (int t = 0; t < m->pr[p].nthreads; t++) {
		const struct pm_thread *th = &m->th[m->pr[p].threads[t]];
		for (int u = 0; u < th->nuses; u++)
			if (th->uses[u] == e)
				return true;
	}
	return false;
}

/* Whether process p has an element or a tree in its host's segment. */
static bool needs_node(const pm_map *m, int p)
{
	for (int e = 0; e < m->model.nelements; e++)
		if (m->el[e].place == PM_NODE && uses_here(m, p, e))
			return true;
	for (int i = 0; i < m->model.ntrees; i++)
		for (int k = 0; k < m->tr[i].n; k++)
			if (m->tr[i].place == PM_NODE && m->th[m->tr[i].threads[k]].process == p)
				return true;
	return false;
}

/* Host h's segment through its tuple server, opened on first use; waits up
 * to 30 s for a server that is not up yet. */
static int remote_server(pm_job *j, int h, ps_server **out, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	if (j->remote[h]) {
		*out = j->remote[h];
		return 0;
	}
	if (!j->port[h])
		return jfail(err, errlen, PS_EINVAL, "%s:%d: servers: where host '%s' serves is "
			     "unknown: port 0 needs the processes to exchange addresses at start-up "
			     "(under mpirun); give a port", m->model.file, m->model.servers.line,
			     m->ho[h].name);
	char seg[PS_NAME_MAX + 8];
	seg_name(m, h, seg, sizeof(seg));
	struct ps_remote_attr ra = { .secret_file = m->model.servers.secret_file };
	int rc = PS_ETIMEDOUT;
	for (int tries = 0; tries < 3000; tries++) {
		rc = ps_server_open_remote(j->addr[h], j->port[h], seg, PS_RDWR, &ra, &j->remote[h]);
		if (rc != -ECONNREFUSED && rc != PS_ENOENT)
			break;
		usleep(10000);
	}
	if (rc)
		return jfail(err, errlen, rc, "host '%s' (%s:%d, segment %s): %s", m->ho[h].name,
			     j->addr[h], j->port[h], seg, ps_strerror(rc));
	*out = j->remote[h];
	return 0;
}

/* An element another host makes: waits up to 30 s for it to appear. */
static int open_remote_elem(ps_server *srv, const char *name, size_t size, ps_elem **out)
{
	int rc = PS_ENOENT;
	for (int tries = 0; tries < 3000 && rc == PS_ENOENT; tries++)
		if ((rc = ps_elem_open(srv, name, size, out)) == PS_ENOENT)
			usleep(10000);
	return rc;
}

static int make_elem(pm_job *j, int e, char *err, size_t errlen)
{
	const struct pm_element *el = &j->m->el[e];
	int here = j->m->pr[j->proc].host, rc;
	if (el->place == PM_REMOTE && el->home != here) {
		ps_server *rs;
		if ((rc = remote_server(j, el->home, &rs, err, errlen)))
			return rc;
		if ((rc = open_remote_elem(rs, el->name, el->tuple_size, &j->elems[e])))
			return jfail(err, errlen, rc, "element '%s' on host '%s': %s%s", el->name,
				     j->m->ho[el->home].name, ps_strerror(rc),
				     rc == PS_EROFS ? " (its node daemon serves read-only: start it "
				     "with psadm serve --writable, as pathmap show says)" : "");
		return 0;
	}
	ps_server *srv = el->place == PM_PROCESS ? j->local : j->node;
	/* Several threads of a process may write a data element. */
	struct ps_elem_attr a = { .tuple_size = el->tuple_size, .threshold = el->threshold,
				  .mode = el->mode, .flags = PS_MULTI_WRITER | PS_EXACT_WAKE };
	rc = ps_elem_create(srv, el->name, &a, &j->elems[e]);
	if (rc == PS_EEXIST && el->place != PM_PROCESS)
		rc = ps_elem_open(srv, el->name, el->tuple_size, &j->elems[e]);
	if (rc)
		return jfail(err, errlen, rc, "element '%s': %s", el->name, ps_strerror(rc));
	return 0;
}

static int make_path(pm_job *j, int i, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	const struct pm_path *p = &m->pa[i];
	paths_stage *s, *n;
	int rc = paths_stage_element(j->elems[p->element], &s);
	if (rc)
		return rc;
	char perr[256] = "", name[2 * PS_NAME_MAX + 4];
	snprintf(name, sizeof(name), "%s->%s", m->th[p->thread].name, m->el[p->element].name);
	/* A collector goes first on the path, writing into this process's
	 * trace space. */
	char elem_id[16], thr[16];
	snprintf(elem_id, sizeof(elem_id), "%d", p->element);
	snprintf(thr, sizeof(thr), "%u", m->model.trace.threshold);
	const struct paths_param cp[] = {
		{ "space", j->trace_space, 0, 0 }, { "threshold", thr, 0, 0 },
		{ "thread", m->th[p->thread].name, 0, 0 }, { "element", elem_id, 0, 0 },
	};
	for (int k = p->nstages - 1; k >= -1 && !rc; k--) {
		if (k < 0 && !p->collector)
			break;
		const char *type = k >= 0 ? p->stages[k].type : "collector";
		struct paths_params pp = k >= 0 ? p->stages[k].params
			: (struct paths_params){ .file = m->model.file, .v = cp, .n = 4 };
		/* A collector the pathmap names itself writes, like the automatic
		 * one, into this process's trace space unless its parameters say
		 * otherwise. */
		struct paths_param merged[16];
		if (k >= 0 && !strcmp(type, "collector") && pp.n + 4 <= 16) {
			int nm = 0;
			for (int q = 0; q < pp.n; q++)
				merged[nm++] = pp.v[q];
			for (int d = 0; d < 4; d++) {
				bool given = false;
				for (int q = 0; q < pp.n && !given; q++)
					given = !strcmp(pp.v[q].key, cp[d].key);
				if (!given)
					merged[nm++] = cp[d];
			}
			pp.v = merged;
			pp.n = nm;
		}
		pp.err = perr;
		pp.errlen = sizeof(perr);
		pp.path = name;
		rc = paths_stage_create(type, &pp, s, &n);
		paths_stage_release(s);
		s = rc ? NULL : n;
	}
	if (rc == PS_ENOENT && p->collector)
		return jfail(err, errlen, rc, "path %s -> %s carries a collector, but no collector "
			     "wrapper is registered in this program", m->th[p->thread].name,
			     m->el[p->element].name);
	if (rc)
		return jfail(err, errlen, rc, "path %s -> %s: %s", m->th[p->thread].name,
			     m->el[p->element].name, *perr ? perr : ps_strerror(rc));
	rc = paths_path_create(name, s, m->el[p->element].tuple_size, &j->paths[i]);
	paths_stage_release(s);
	return rc;
}

static int make_tree(pm_job *j, int i, char *err, size_t errlen)
{
	const struct pm_tree *t = &j->m->tr[i];
	/* A tree across hosts keeps its elements on one host, its home: the
	 * others reach them through its server. */
	ps_server *srv = t->place == PM_PROCESS ? j->local : j->node;
	int rc;
	if (t->place == PM_REMOTE && t->home != j->m->pr[j->proc].host &&
	    (rc = remote_server(j, t->home, &srv, err, errlen)))
		return rc;
	static const char *const coll[1] = { "collector" };
	char thr[16];
	snprintf(thr, sizeof(thr), "%u", j->m->model.trace.threshold);
	/* An edge's path is used by two threads: the child's runner writes,
	 * the node's runner takes. */
	char who[PS_NAME_MAX + 1];
	snprintf(who, sizeof(who), "tree.%s", t->name); /* its edges, seen as one thread */
	const struct paths_param cp[] = {
		{ "space", j->trace_space, 0, 0 }, { "threshold", thr, 0, 0 },
		{ "writers", "many", 0, 0 }, { "thread", who, 0, 0 },
	};
	const struct paths_params params = { .file = j->m->model.file, .v = cp, .n = 4 };
	struct paths_tree_spec spec = {
		.name = t->name, .nparticipants = t->n, .fanout = t->fanout,
		.max_bytes = t->max_bytes, .runs_on = t->runs_on,
		.server = srv,
		.nstages = t->collector ? 1 : 0, .stage_types = coll, .stage_params = &params,
	};
	rc = paths_tree_create(&spec, &j->trees[i]);
	if (rc)
		return jfail(err, errlen, rc, "tree '%s': %s", t->name, ps_strerror(rc));
	return 0;
}

int pm_check_here(const pm_map *m, char *err, size_t errlen)
{
	const struct pm_servers *sv = &m->model.servers;
	char why[128];
	int rc;
	if (sv->secret_file && (rc = ps_secret_check(sv->secret_file, why, sizeof(why))))
		return jfail(err, errlen, rc, "%s:%d:%d: servers secret_file '%s': %s", m->model.file,
			     sv->secret_line, sv->secret_col, sv->secret_file, why);
	return 0;
}

bool pm_needs_servers(const pm_map *m)
{
	bool need = m->model.servers.given;
	for (int e = 0; e < m->model.nelements; e++)
		need |= m->el[e].place == PM_REMOTE;
	for (int i = 0; i < m->model.ntrees; i++)
		need |= m->tr[i].place == PM_REMOTE;
	return need;
}

/* Where each host's server listens, as the pathmap says it. */
static int servers_from_map(pm_job *j)
{
	const pm_map *m = j->m;
	const struct pm_servers *sv = &m->model.servers;
	int nh = m->model.nhosts;
	j->remote = calloc((size_t)nh, sizeof(*j->remote));
	j->addr = calloc((size_t)nh, sizeof(*j->addr));
	j->port = calloc((size_t)nh, sizeof(*j->port));
	if (!j->remote || !j->addr || !j->port)
		return PS_ENOMEM;
	for (int h = 0; h < nh; h++) {
		snprintf(j->addr[h], sizeof(j->addr[h]), "%s",
			 sv->listen != PM_LISTEN_LOOPBACK && m->ho[h].address ? m->ho[h].address
										: "127.0.0.1");
		j->port[h] = sv->port;
	}
	return 0;
}

/* Starts this host's tuple server if this process is the one to run it,
 * saying where it listens in *mine. */
static int start_server(pm_job *j, struct start_rec *mine, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	const struct pm_servers *sv = &m->model.servers;
	int here = m->pr[j->proc].host, rc;
	if ((rc = pm_check_here(m, err, errlen)) || (rc = servers_from_map(j)))
		return rc;
	if (sv->runs != PM_SERVER_THREAD || host_first(m, j->proc) != j->proc)
		return 0;
	char prefix[PS_NAME_MAX + 1];
	snprintf(prefix, sizeof(prefix), "%s.", m->model.name);
	const char *bind = sv->listen == PM_LISTEN_ANY ? "0.0.0.0" : j->addr[here];
	struct ps_tcp_attr ta = { .addr = bind, .port = sv->port, .secret_file = sv->secret_file,
				  .shm_prefix = prefix, .shm_writable = true };
	if ((rc = ps_tcp_start(&ta, &j->tcp)))
		return jfail(err, errlen, rc, "%s:%d: servers: listening on %s:%d: %s",
			     m->model.file, sv->line, bind, sv->port,
			     rc == -EADDRINUSE ? "the port is taken (another job, or a daemon?)"
			     : ps_strerror(rc));
	if (sv->listen == PM_LISTEN_ANY && !m->ho[here].address)
		snprintf(j->addr[here], sizeof(j->addr[here]), "%s", ps_tcp_addr(j->tcp));
	j->port[here] = ps_tcp_port(j->tcp);
	mine->host = here;
	mine->port = j->port[here];
	snprintf(mine->addr, sizeof(mine->addr), "%s", j->addr[here]);
	return 0;
}

/* Learns where the servers listen from what n processes told. */
static void learn_servers(pm_job *j, struct start_rec *all, int n)
{
	int nh = j->m->model.nhosts;
	for (int p = 0; p < n; p++)
		if (all[p].rc == 0 && all[p].host >= 0 && all[p].host < nh && all[p].port > 0) {
			all[p].addr[sizeof(all[p].addr) - 1] = 0;
			snprintf(j->addr[all[p].host], sizeof(j->addr[0]), "%s", all[p].addr);
			j->port[all[p].host] = all[p].port;
		}
	for (int h = 0; h < nh; h++)
		if (j->port[h])
			snprintf(j->servers + strlen(j->servers), sizeof(j->servers) - strlen(j->servers),
				 "%s%s:%d", j->servers[0] ? "," : "", j->addr[h], j->port[h]);
}

/*
 * Every process calls the exchange exactly once, whatever happened before
 * it, so that one failing process never leaves the others waiting in it.
 * Returns this process's outcome.
 */
static int exchange(pm_job *j, const struct pm_job_attr *attr, int rc, bool servers, bool joins,
		    struct start_rec *mine, int32_t *maker, char *err, size_t errlen)
{
	const pm_map *m = j->m;
	mine->rc = rc;
	mine->pid = (int32_t)getpid();
	struct start_rec *all = calloc((size_t)m->model.nprocesses, sizeof(*all));
	if (!all) /* the caller's abort is what frees the others then */
		return rc ? rc : PS_ENOMEM;
	int grc = attr->allgather(mine, all, sizeof(*mine), attr->arg);
	if (rc || grc) {
		free(all);
		return rc ? rc : jfail(err, errlen, grc, "exchanging what each process started: %s",
				       ps_strerror(grc));
	}
	if (servers)
		learn_servers(j, all, m->model.nprocesses);
	const struct start_rec *first = &all[host_first(m, j->proc)];
	*maker = first->rc ? first->rc : first->pid > 0 ? first->pid : PS_EPROTO;
	free(all);
	if (joins && *maker < 0) {
		char name[PS_NAME_MAX + 8];
		seg_name(m, m->pr[j->proc].host, name, sizeof(name));
		return jfail(err, errlen, *maker, "shared segment %s: this host's first process "
			     "(%s) could not start: %s", name, m->pr[host_first(m, j->proc)].name,
			     ps_strerror(*maker));
	}
	return 0;
}

int pm_job_create(const pm_map *m, const char *process, pm_job **out, char *err, size_t errlen)
{
	return pm_job_start(m, process, NULL, out, err, errlen);
}

/* The keep policy on the segments this process made (its trace space,
 * its host's segment if it made it): pm_keep's. */
static int set_keep(pm_job *j, bool made_node, char *err, size_t errlen)
{
	enum ps_keep keep;
	char why[256];
	if (pm_keep(j->m, &keep, why, sizeof(why)))
		return jfail(err, errlen, PS_EINVAL, "%s", why);
	char name[PS_NAME_MAX + 8];
	if (made_node) {
		seg_name(j->m, j->m->pr[j->proc].host, name, sizeof(name));
		ps_shm_set_keep(name, keep);
	}
	if (*j->trace_space)
		ps_shm_set_keep(j->trace_space, keep); /* made by its collectors, if it has any */
	return 0;
}

/* After a clean end: the job's segments on this host, every process's
 * trace space and every host's segment (those of other hosts are not
 * here), removed by the last process to end as their policy says. */
static void release(const pm_map *m)
{
	int n = m->model.nprocesses + m->model.nhosts;
	char (*names)[PS_NAME_MAX + 8] = calloc((size_t)n, sizeof(*names));
	const char **v = calloc((size_t)n, sizeof(*v));
	int k = 0;
	for (int p = 0; names && v && p < m->model.nprocesses && m->model.trace.shared; p++)
		if (es_space_name(names[k], sizeof(names[k]), m->model.name, ES_SPACE_PROCESS, p) == 0)
			v[k] = names[k], k++;
	for (int h = 0; names && v && h < m->model.nhosts; h++) {
		seg_name(m, h, names[k], sizeof(names[k]));
		v[k] = names[k], k++;
	}
	if (k)
		ps_shm_release(v, k);
	free(names);
	free(v);
}

int pm_job_start(const pm_map *m, const char *process, const struct pm_job_attr *attr,
		 pm_job **out, char *err, size_t errlen)
{
	if (!m || !process || !out)
		return PS_EINVAL;
	int p = pm_find_process(m, process);
	if (p < 0)
		return jfail(err, errlen, PS_ENOENT, "%s: no process '%s' in the mapping",
			     m->model.file, process);
	pm_job *j = calloc(1, sizeof(*j));
	if (!j)
		return PS_ENOMEM;
	j->m = m;
	j->proc = p;
	if (m->model.trace.shared)
		es_space_name(j->trace_space, sizeof(j->trace_space), m->model.name, ES_SPACE_PROCESS, p);
	j->elems = calloc((size_t)m->model.nelements + 1, sizeof(*j->elems));
	j->paths = calloc((size_t)m->model.npaths + 1, sizeof(*j->paths));
	j->trees = calloc((size_t)m->model.ntrees + 1, sizeof(*j->trees));
	int rc = PS_ENOMEM;
	if (!j->elems || !j->paths || !j->trees || (rc = ps_server_create_local(&j->local)))
		goto fail;
	/* Across hosts, each host's segment is what its server serves. */
	bool servers = pm_needs_servers(m), need_node = servers || needs_node(m, p);
	/* the first makes the segment for every process of its host */
	for (int q = p + 1; q < m->model.nprocesses && host_first(m, p) == p; q++)
		need_node |= m->pr[q].host == m->pr[p].host && needs_node(m, q);
	bool first = host_first(m, p) == p;
	struct start_rec mine = { .host = -1 };
	int32_t maker = 0;
	rc = need_node && first ? make_node(j, err, errlen) : 0;
	if (!rc && servers)
		rc = start_server(j, &mine, err, errlen);
	if (attr && attr->allgather)
		rc = exchange(j, attr, rc, servers, need_node && !first, &mine, &maker, err, errlen);
	else if (!rc && servers)
		learn_servers(j, &mine, 1); /* its own and what the pathmap says */
	if (rc || (need_node && !first && (rc = join_node(j, maker, err, errlen))))
		goto fail;
	for (int e = 0; e < m->model.nelements; e++)
		if (uses_here(m, p, e) && (rc = make_elem(j, e, err, errlen)))
			goto fail;
	for (int i = 0; i < m->model.npaths; i++)
		if (m->th[m->pa[i].thread].process == p && (rc = make_path(j, i, err, errlen)))
			goto fail;
	for (int i = 0; i < m->model.ntrees; i++) {
		bool here = false;
		for (int k = 0; k < m->tr[i].n; k++)
			here |= m->th[m->tr[i].threads[k]].process == p;
		if (here && (rc = make_tree(j, i, err, errlen)))
			goto fail;
	}
	if ((rc = set_keep(j, need_node && first, err, errlen)))
		goto fail;
	*out = j;
	return 0;
fail:
	pm_job_destroy(j);
	return rc;
}

const char *pm_job_servers(const pm_job *j)
{
	return j ? j->servers : "";
}

void pm_job_destroy(pm_job *j)
{
	if (!j)
		return;
	const pm_map *m = j->m;
	for (int i = 0; j->trees && i < m->model.ntrees; i++)
		paths_tree_destroy(j->trees[i]);
	for (int i = 0; j->paths && i < m->model.npaths; i++)
		paths_path_destroy(j->paths[i]);
	for (int i = 0; j->elems && i < m->model.nelements; i++)
		ps_elem_close(j->elems[i]);
	free(j->trees);
	free(j->paths);
	free(j->elems);
	ps_tcp_stop(j->tcp); /* before the segments it serves */
	for (int h = 0; j->remote && h < m->model.nhosts; h++)
		ps_server_destroy(j->remote[h]);
	free(j->remote);
	free(j->addr);
	free(j->port);
	ps_server_destroy(j->local);
	ps_server_destroy(j->node);
	if (j->topo_loaded)
		hwloc_topology_destroy(j->topo);
	release(m);
	free(j);
}

paths_path *pm_job_path(pm_job *j, const char *thread, const char *element)
{
	int t = pm_find_thread(j->m, thread), e = pm_find_element(j->m, element);
	for (int i = 0; t >= 0 && e >= 0 && i < j->m->model.npaths; i++)
		if (j->m->pa[i].thread == t && j->m->pa[i].element == e)
			return j->paths[i];
	return NULL;
}

int pm_job_where(const pm_job *j, const char *what, char *buf, size_t len)
{
	const pm_map *m = j->m;
	enum pm_place place = 0;
	int home = -1;
	if (!strncmp(what, "tree ", 5)) {
		int i = pm__find_tree(m, what + 5);
		if (i >= 0)
			place = m->tr[i].place, home = m->tr[i].home;
	} else {
		int e = pm_find_element(m, what);
		if (e >= 0)
			place = m->el[e].place, home = m->el[e].home;
	}
	if (!place)
		return PS_ENOENT;
	int here = m->pr[j->proc].host;
	char seg[PS_NAME_MAX + 8];
	if (place == PM_PROCESS) {
		snprintf(buf, len, "%s", home == j->proc ? "this process" : "another process");
	} else if (place == PM_NODE || home == here) {
		seg_name(m, here, seg, sizeof(seg));
		snprintf(buf, len, "this host's segment %s", seg);
	} else if (j->port && j->port[home]) {
		snprintf(buf, len, "host '%s' (%s:%d)", m->ho[home].name, j->addr[home], j->port[home]);
	} else {
		snprintf(buf, len, "host '%s'", m->ho[home].name);
	}
	return 0;
}

paths_tree *pm_job_tree(pm_job *j, const char *tree)
{
	int i = tree ? pm__find_tree(j->m, tree) : -1;
	return i >= 0 ? j->trees[i] : NULL;
}

int pm_job_bind(pm_job *j, const char *thread)
{
	int t = pm_find_thread(j->m, thread);
	if (t < 0)
		return PS_ENOENT;
	int core = j->m->th[t].core;
	if (core < 0)
		return 0;
	if (!j->topo_loaded) {
		if (hwloc_topology_init(&j->topo))
			return PS_ENOMEM;
		if (hwloc_topology_load(j->topo)) {
			hwloc_topology_destroy(j->topo);
			return PS_EINVAL;
		}
		j->topo_loaded = true;
	}
	hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(j->topo, (unsigned)core);
	if (!pu)
		return PS_ENOENT; /* the map names a core this machine lacks */
	return hwloc_set_cpubind(j->topo, pu->cpuset, HWLOC_CPUBIND_THREAD) ? PS_EINVAL : 0;
}

int pm_job_unlink(const pm_map *m, const char *process)
{
	int p = pm_find_process(m, process);
	if (p < 0)
		return PS_ENOENT;
	char name[PS_NAME_MAX + 8];
	seg_name(m, m->pr[p].host, name, sizeof(name));
	int rc = ps_shm_unlink(name);
	return rc == PS_ENOENT ? 0 : rc;
}
