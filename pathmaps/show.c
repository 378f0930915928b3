/* show.c - a loaded pathmap in words: the summary of pathmap check and the plan of pathmap show. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

static void where(const pm_map *m, enum pm_place pl, int home, char *buf, size_t len)
{
	char seg[PS_NAME_MAX + 1]; /* a segment name, or it could not be made */
	/* no process to place it in: a pathmap without threads, or without processes */
	if (home < 0 || home >= (pl == PM_PROCESS ? m->model.nprocesses : m->model.nhosts)) {
		snprintf(buf, len, "not placed (no thread uses it)");
		return;
	}
	switch (pl) {
	case PM_PROCESS:
		snprintf(buf, len, "in process %s", m->pr[home].name);
		break;
	case PM_NODE:
		pm__host_segment(m, home, seg, sizeof(seg));
		snprintf(buf, len, "in shared segment %s", seg);
		break;
	case PM_REMOTE:
		pm__host_segment(m, home, seg, sizeof(seg));
		snprintf(buf, len, "in shared segment %s, reached from other hosts through its "
			 "tuple server", seg);
		break;
	}
}

/* The servers section, in words: who serves, where, and with what secret. */
static void servers_words(const pm_map *m, char *buf, size_t len)
{
	const struct pm_servers *sv = &m->model.servers;
	static const char *const listen[] = { "", "loopback", "each host's address", "every address" };
	char port[48];
	if (sv->port)
		snprintf(port, sizeof(port), "port %d", sv->port);
	else
		snprintf(port, sizeof(port), "any free port (told at start-up)");
	snprintf(buf, len, "%s, on %s, %s, %s%s",
		 sv->runs == PM_SERVER_DAEMON ? "a node daemon on each host"
					      : "a thread of each host's first process",
		 listen[sv->listen], port, sv->secret_file ? "secret in " : "no secret",
		 sv->secret_file ? sv->secret_file : "");
}

void pm_summary(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	int coll = 0, shared = 0, remote = 0;
	for (int i = 0; i < md->npaths; i++)
		coll += md->paths[i].collector;
	for (int i = 0; i < md->nelements; i++) {
		shared += md->elements[i].place == PM_NODE;
		remote += md->elements[i].place == PM_REMOTE;
	}
	fprintf(out, "%s: job '%s' is valid\n", md->file, md->name);
	fprintf(out, "  %d thread%s in %d process%s on %d host%s%s\n", md->nthreads,
		md->nthreads == 1 ? "" : "s", md->nprocesses, md->nprocesses == 1 ? "" : "es",
		md->nhosts, md->nhosts == 1 ? "" : "s",
		md->hosts[0].from_hwloc ? " (this host, from hwloc)" : "");
	fprintf(out, "  %d elements (%d in shared segments, %d remote)\n", md->nelements, shared, remote);
	fprintf(out, "  %d paths, %d with collectors (trace elements: threshold %u, %s)\n",
		md->npaths, coll, md->trace.threshold, md->trace.shared ? "shared" : "in-process");
	fprintf(out, "  %d trees, %d scopes\n", md->ntrees, md->nscopes);
	if (pm_needs_servers(m)) {
		char buf[512];
		servers_words(m, buf, sizeof(buf));
		fprintf(out, "  tuple servers: %s\n", buf);
	}
}

static void print_stage(FILE *out, const struct pm_stage *s)
{
	fprintf(out, "%s", s->type);
	if (s->params.n) {
		fputc('(', out);
		for (int i = 0; i < s->params.n; i++)
			fprintf(out, "%s%s=%s", i ? ", " : "", s->params.v[i].key, s->params.v[i].value);
		fputc(')', out);
	}
	fputs(" -> ", out);
}

static void show_servers(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	const struct pm_servers *sv = &md->servers;
	char buf[160];
	servers_words(m, buf, sizeof(buf));
	fprintf(out, "servers: %s\n", buf);
	for (int i = 0; i < md->nhosts; i++) {
		const char *a = sv->listen != PM_LISTEN_LOOPBACK && md->hosts[i].address ? md->hosts[i].address
											 : "127.0.0.1";
		fprintf(out, "  %s: ", md->hosts[i].name);
		if (sv->runs == PM_SERVER_DAEMON) /* what must run there first */
			fprintf(out, "psadm serve %s. --addr %s --port %d%s%s --writable\n", md->name,
				sv->listen == PM_LISTEN_ANY ? "0.0.0.0" : a, sv->port, sv->secret_file ? " --secret-file " : "",
				sv->secret_file ? sv->secret_file : "");
		else if (sv->port)
			fprintf(out, "%s:%d\n", a, sv->port);
		else
			fprintf(out, "%s, port chosen at start-up\n", a);
	}
}

static void show_hosts_and_processes(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	fprintf(out, "hosts:\n");
	for (int i = 0; i < md->nhosts; i++) {
		fprintf(out, "  %s: cores", md->hosts[i].name);
		for (int c = 0; c < md->hosts[i].ncores; c++)
			fprintf(out, " %d", md->hosts[i].cores[c]);
		if (md->hosts[i].address)
			fprintf(out, ", address %s", md->hosts[i].address);
		fprintf(out, "%s\n", md->hosts[i].from_hwloc ? " (this host, from hwloc)" : "");
	}
	if (pm_needs_servers(m))
		show_servers(m, out);
	fprintf(out, "processes:\n");
	for (int i = 0; i < md->nprocesses; i++) {
		const struct pm_process *p = &md->processes[i];
		fprintf(out, "  %s on %s:", p->name, md->hosts[p->host].name);
		for (int t = 0; t < p->nthreads; t++) {
			const struct pm_thread *th = &md->threads[p->threads[t]];
			fprintf(out, " %s", th->name);
			if (th->core >= 0)
				fprintf(out, "@%d", th->core);
		}
		fputc('\n', out);
	}
}

static void show_elements_and_paths(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	char buf[160];
	fprintf(out, "elements:\n");
	for (int i = 0; i < md->nelements; i++) {
		const struct pm_element *e = &md->elements[i];
		where(m, e->place, e->home, buf, sizeof(buf));
		fprintf(out, "  %-24s %6zu bytes x %-6u %-7s %s\n", e->name, e->tuple_size, e->threshold,
			e->mode == PS_FLOW ? "flow" : "discard", buf);
	}
	fprintf(out, "paths:\n");
	for (int i = 0; i < md->npaths; i++) {
		const struct pm_path *p = &md->paths[i];
		fprintf(out, "  %s: ", md->threads[p->thread].name);
		if (p->collector)
			fputs("collector -> ", out);
		for (int s = 0; s < p->nstages; s++)
			print_stage(out, &p->stages[s]);
		const struct pm_element *e = &md->elements[p->element];
		bool far = e->place == PM_REMOTE && md->processes[md->threads[p->thread].process].host != e->home;
		/* the hop to another host: the element stage over a remote handle */
		if (far)
			fprintf(out, "[%s's tuple server] -> ", md->hosts[e->home].name);
		fprintf(out, "%s\n", e->name);
	}
}

/* A tree, and the grouping paths_tree_create makes of it. */
static void show_tree(const pm_map *m, const struct pm_tree *t, FILE *out)
{
	const struct pm_model *md = &m->model;
	char buf[160];
	where(m, t->place, t->home, buf, sizeof(buf));
	fprintf(out, "  %s: %d threads, fanout %d, %d nodes, %zu bytes, %s%s\n", t->name, t->n, t->fanout, t->nnodes,
		t->max_bytes, buf, t->collector ? ", collectors on edges" : "");
	struct paths_tree_node *nd = calloc((size_t)t->nnodes, sizeof(*nd));
	int *children = calloc((size_t)(t->n + t->nnodes), sizeof(int));
	if (nd && children && paths_tree_shape(t->n, t->fanout, nd, children, t->nnodes) == t->nnodes)
		for (int k = 0; k < t->nnodes; k++) {
			fprintf(out, "    node %d%s:", k, nd[k].parent < 0 ? " (root)" : "");
			for (int j = 0; j < nd[k].nchildren; j++) {
				int c = nd[k].children[j];
				if (c < 0)
					fprintf(out, " %s", md->threads[t->threads[-1 - c]].name);
				else
					fprintf(out, " node%d", c);
			}
			int runs = t->runs_on[k] >= 0 ? t->runs_on[k] : nd[k].runs_on;
			fprintf(out, "; runs on %s\n", md->threads[t->threads[runs]].name);
		}
	free(nd);
	free(children);
}

static void show_scopes(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	static const char *const views[] = { "", "thread", "node", "cluster", "multi-cluster" };
	static const char *const runs[] = { "", "the monitor", "a helper thread", "a helper process" };
	if (md->nscopes)
		fprintf(out, "scopes:\n");
	for (int i = 0; i < md->nscopes; i++) {
		const struct pm_scope *s = &md->scopes[i];
		fprintf(out, "  %s: %s view%s%s, fanout %d, nodes in %s, %s gathering", s->name, views[s->view],
			s->of ? " of " : "", s->of ? s->of : "", s->fanout, runs[s->runs],
			s->concurrent ? "concurrent" : "sequential");
		if (s->reduce)
			fprintf(out, ", reduce %s", s->reduce);
		if (s->rate_hz > 0)
			fprintf(out, ", at most %g Hz", s->rate_hz);
		for (int k = 0; k < s->nhandlers; k++)
			fprintf(out, "%s%s", k ? ", " : ", handlers ", s->handlers[k]);
		fputc('\n', out);
	}
}

void pm_show(const pm_map *m, FILE *out)
{
	const struct pm_model *md = &m->model;
	fprintf(out, "pathmap %s: job '%s'\n", md->file, md->name);
	show_hosts_and_processes(m, out);
	show_elements_and_paths(m, out);
	if (md->ntrees)
		fprintf(out, "trees:\n");
	for (int i = 0; i < md->ntrees; i++)
		show_tree(m, &md->trees[i], out);
	fprintf(out, "trace elements: threshold %u, %s\n", md->trace.threshold,
		md->trace.shared ? "in shared segments (monitors attach)" : "in process memory");
	show_scopes(m, out);
}
