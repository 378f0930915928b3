/* pathmaps.h - YAML pathmaps: the application, cluster and mapping of a job, and the paths generated from them. */
#ifndef PATHMAPS_H
#define PATHMAPS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "paths/paths.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A pathmap says which threads use which elements (the application map),
 * which hosts and cores there are (the cluster map; absent, it is this host
 * as hwloc sees it), where threads and processes run (the mapping), how each
 * thread-to-element path is built, which paths carry collectors, the trace
 * elements' settings, the collective trees and the event scopes.  The schema
 * is in pathmaps/README.md.
 *
 * Loading validates everything before anything runs.  A bad pathmap gives
 * PS_EINVAL and one message "FILE:LINE:COLUMN: what was expected".
 */

typedef struct pm_map pm_map;

int pm_load(const char *file, pm_map **out, char *err, size_t errlen);
/* The same from memory; `file` only names it in messages. */
int pm_load_string(const char *file, const char *text, size_t len, pm_map **out,
		   char *err, size_t errlen);
void pm_destroy(pm_map *m);

/* --- the model ------------------------------------------------------------ */

/* Where an element lives, as the generator decided from the maps. */
enum pm_place {
	PM_PROCESS = 1, /* in the one process whose threads use it */
	PM_NODE,        /* in its host's shared segment: threads of several processes use it */
	PM_REMOTE,      /* used from several hosts: needs a remote tuple server */
};

struct pm_element {
	const char *name;
	size_t tuple_size;
	uint32_t threshold;
	enum ps_mode mode;
	enum pm_place place;
	int home;        /* the process (PM_PROCESS) or host (PM_NODE, PM_REMOTE) */
	int line;
};

struct pm_thread {
	const char *name;
	int nuses;
	const int *uses; /* element indices */
	int process;
	int core;        /* OS index of the core it is bound to, or -1 */
	int line;
};

struct pm_process {
	const char *name;
	int host;
	int nthreads;
	const int *threads;
};

struct pm_host {
	const char *name;
	const char *address; /* where other hosts reach it (IPv4), or NULL */
	int ncores;
	const int *cores; /* OS indices */
	bool from_hwloc;  /* the local host, as hwloc described it */
};

struct pm_stage {
	const char *type;
	struct paths_params params; /* file, positions; err is NULL */
};

/* One generated path: thread -> stages -> element. */
struct pm_path {
	int thread, element;
	int nstages;
	const struct pm_stage *stages; /* outermost first, not counting the element */
	bool collector;                /* a collector stage is first */
};

struct pm_tree {
	const char *name;
	int n;
	const int *threads;  /* participants in order */
	int fanout;
	size_t max_bytes;
	const int *runs_on;  /* per internal node: participant index, or -1 */
	int nnodes;
	enum pm_place place; /* where its elements live */
	int home;
	bool collector;      /* collectors on its edges */
};

enum pm_view { PM_VIEW_THREAD = 1, PM_VIEW_NODE, PM_VIEW_CLUSTER, PM_VIEW_MULTI };
enum pm_runs { PM_RUNS_MONITOR = 1, PM_RUNS_THREAD, PM_RUNS_PROCESS };

#define PM_SCOPE_HANDLERS 4
struct pm_scope {
	const char *name;
	enum pm_view view;
	const char *of;      /* the thread (thread view) or host (node view); may be NULL */
	int fanout;          /* at each level of the gather tree */
	enum pm_runs runs;   /* where its internal nodes run */
	bool concurrent;     /* gather children at the same time */
	double rate_hz;      /* pull-rate limit; 0 = none */
	const char *reduce;  /* reduce wrapper at the nodes, or NULL for gather only */
	/* handlers (LIB.so[:ARGS], es_handler.h) on the scope's top node */
	const char *handlers[PM_SCOPE_HANDLERS];
	int nhandlers;
};

struct pm_trace {
	uint32_t threshold;  /* tuples per trace element (default 200; `size:` gives it in bytes) */
	bool given;          /* the pathmap says (threshold or size) */
	bool shared;         /* node: in a shared segment monitors attach to (default) */
	enum ps_keep keep;   /* when its segments are removed (default failed; ES_KEEP wins) */
};

/* What libescollect.so records of an unmodified MPI program. */
struct pm_mpi {
	bool given;          /* the pathmap has an mpi section */
	int ncalls;
	const char **calls;  /* "all", a group of calls ("point-to-point"...) or an MPI function
				name; libescollect checks them (es_mpi_select) */
	const int *lines, *cols; /* where each is written */
};

/* Tuple servers: how elements and trace spaces are reached from other hosts. */
enum pm_server_runs { PM_SERVER_THREAD = 1, PM_SERVER_DAEMON };
enum pm_listen { PM_LISTEN_LOOPBACK = 1, PM_LISTEN_HOST, PM_LISTEN_ANY };
struct pm_servers {
	bool given;
	enum pm_server_runs runs; /* a thread in the host's first process (default), or
				     a node daemon (psadm serve) already there */
	enum pm_listen listen;    /* 127.0.0.1 (default), the host's address, or all */
	int port;                 /* 0: any free one, exchanged at start-up */
	const char *secret_file;  /* required unless listen is loopback */
	int line;
	int secret_line, secret_col; /* where secret_file is given */
	/* With a fixed port: "ADDR:PORT,..." of every host (a host without an
	 * address: 127.0.0.1), so a monitor finds the job from the pathmap
	 * alone; NULL when the processes choose their ports. */
	const char *list;
};

struct pm_model {
	const char *file;
	const char *name;    /* the job: prefix of its segments */
	int nelements, nthreads, nprocesses, nhosts, npaths, ntrees, nscopes;
	const struct pm_element *elements;
	const struct pm_thread *threads;
	const struct pm_process *processes;
	const struct pm_host *hosts;
	const struct pm_path *paths;
	const struct pm_tree *trees;
	const struct pm_scope *scopes;
	struct pm_trace trace;
	struct pm_mpi mpi;
	struct pm_servers servers;
};

const struct pm_model *pm_model(const pm_map *m);

/* "4194304", "4M", "4MiB", "512K", "1G": bytes; PS_EINVAL if it is not one. */
int pm_parse_bytes(const char *s, uint64_t *out);
/* The keep policy a job's segments get: $ES_KEEP if set, else the
 * pathmap's (m may be NULL), else failed; PS_EINVAL with the reason in
 * err when ES_KEEP is none of the three. */
int pm_keep(const pm_map *m, enum ps_keep *out, char *err, size_t errlen);
int pm_find_thread(const pm_map *m, const char *name);  /* index or PS_ENOENT */
int pm_find_element(const pm_map *m, const char *name);
int pm_find_process(const pm_map *m, const char *name);

/* What this host must have for the job that no pathmap can say of itself:
 * the servers' secret file, there and readable by its owner only.  0, or
 * an error naming the pathmap's file:line:column and what is wrong (a
 * pathmap describes a whole cluster, so pm_load leaves this to the host
 * that runs it: pathmap check, and every process at start-up). */
int pm_check_here(const pm_map *m, char *err, size_t errlen);

/* Prints the generated paths, trees and placements (the `pathmap show`
 * output), or a short summary (`pathmap check`). */
void pm_show(const pm_map *m, FILE *out);
void pm_summary(const pm_map *m, FILE *out);

/* --- instantiating one process of the job --------------------------------- */

/*
 * A job is the pathmap made real inside one process: its elements created
 * (or opened, when another process made them first) in the right servers,
 * its paths built with their stages, its trees ready for members.
 */
typedef struct pm_job pm_job;
int pm_job_create(const pm_map *m, const char *process, pm_job **out, char *err,
		  size_t errlen);

/*
 * A job whose elements or trees span hosts reaches them through tuple
 * servers (the pathmap's servers section): the first process of each host
 * runs one in a thread, serving the job's segments of that host, unless a
 * node daemon does.  Where they listen comes from the pathmap, or, for
 * port 0, from the processes themselves.
 *
 * Under mpirun the processes tell each other at start-up through
 * `allgather`, which every process calls exactly once (even one whose start
 * failed) with the same length, and which returns every process's bytes in
 * process order: where the servers listen, and which process made each
 * host's segment, so that a process joins its own run's segment and never
 * that of another run of the same job.  Without it a process can tell
 * another run's segment only by its age (over a minute older than itself).
 */
struct pm_job_attr {
	int (*allgather)(const void *mine, void *all, size_t len, void *arg);
	void *arg;
};
int pm_job_start(const pm_map *m, const char *process, const struct pm_job_attr *attr,
		 pm_job **out, char *err, size_t errlen);
/* Whether the job needs tuple servers (the same answer in every process). */
bool pm_needs_servers(const pm_map *m);
/* The job's tuple servers, one per host: "ADDR:PORT,ADDR:PORT..." (what a
 * monitor's --servers takes), or "" when it has none. */
const char *pm_job_servers(const pm_job *j);
void pm_job_destroy(pm_job *j);
/* The path from thread to element (both by name), or NULL if there is none
 * in this process. */
paths_path *pm_job_path(pm_job *j, const char *thread, const char *element);
paths_tree *pm_job_tree(pm_job *j, const char *tree);
/* Where an element (or, with "tree NAME", a tree's elements) lives, as
 * this process reaches it, for messages: "this process", "this host's
 * segment NAME" or "host 'H' (ADDR:PORT)".  Fills buf; 0 or PS_ENOENT. */
int pm_job_where(const pm_job *j, const char *what, char *buf, size_t len);
/* Binds the calling thread to the core the map gives `thread` (hwloc); 0
 * if the map gives none. */
int pm_job_bind(pm_job *j, const char *thread);
/* Removes the shared segments this job's pathmap names on this host. */
int pm_job_unlink(const pm_map *m, const char *process);

#ifdef __cplusplus
}
#endif
#endif /* PATHMAPS_H */
