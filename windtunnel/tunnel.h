/* tunnel.h - the wind tunnel run: its configuration, the pathmap generated for it, one process's share of it. */
#ifndef WT_TUNNEL_H
#define WT_TUNNEL_H

#include "pathmaps/pathmaps.h"
#include "windtunnel.h"

struct wt_totals {
	uint64_t step;
	int64_t initial;                 /* particles before the first step */
	int64_t particles, px, py, in, out;
	int64_t drag;                    /* momentum given to the plate so far */
	int64_t px0, py0;                /* momentum before the first step */
	int64_t min_x, mout_x, mout_y, mwall_x, mwall_y; /* see struct wt_flow */
	double seconds;
	double cpu_seconds;              /* CPU time of this process's slice threads */
	uint32_t inflow_density;         /* as every thread applies it now (struct wt_geometry) */
	int plate_x;
};

/* Another way to move border rows and totals than PastSet paths (the
 * windtunnel program's --transport mpi); every call comes from a slice's
 * own thread. */
struct wt_transport {
	/* Sends `top` to the slice above and `bottom` to the one below (NULL
	 * where there is none) and receives their rows into the halos. */
	int (*exchange)(void *ctx, int matrix, int slice, const uint64_t *top,
			const uint64_t *bottom, uint64_t *halo_up, uint64_t *halo_dn, size_t bytes);
	/* Sums v[0..n) over every thread of every process, in place. */
	int (*allreduce)(void *ctx, int64_t *v, int n);
	void *ctx;
};

struct wt_config {
	const char *job;
	int n;                 /* each matrix is 2N x N */
	int matrices, slices;  /* slices per matrix: one thread each */
	int processes;         /* that share the threads */
	int steps, stats_every;
	enum wt_model model;
	uint64_t seed;
	bool collectors;
	bool nested;          /* two more collectors inside each path's: the paper's way to time one */
	const struct wt_transport *transport; /* NULL: PastSet elements over PATHS paths */
	/* Across hosts: processes spread over `hosts` pathmap hosts (h0, h1...),
	 * elements and trees between them reached through tuple servers.
	 * serve: tuple servers even on one host, for monitors outside it. */
	int hosts;
	bool serve;
	const char *listen;      /* loopback (default), any */
	int port;
	const char *secret_file;
	const struct pm_job_attr *job_attr; /* how processes exchange server addresses */
	/* called by one thread after each allreduce of the totals */
	void (*progress)(const struct wt_totals *t, double seconds, void *arg);
	void *progress_arg;
	/* Steering: called by that same thread before each allreduce of the
	 * totals (arg progress_arg); what it sets (0: no change) goes round
	 * with the totals, and every thread of every process applies it after
	 * that allreduce, all at the same step.  inflow_density in 0..65536
	 * (it comes as UINT32_MAX), plate_x within [1, width - 2] (it comes as 0). */
	void (*steer)(void *arg, uint32_t *inflow_density, int *plate_x);
};

/* The pathmap for c, as YAML text: the length, or -1 if buf was too small. */
int wt_pathmap_text(const struct wt_config *c, char *buf, size_t len);

struct wt_run;
int wt_run_create(const struct wt_config *c, const pm_map *m, int process, struct wt_run **out,
		  char *err, size_t errlen);
/* Runs every thread of this process to the end; totals as of the last allreduce. */
int wt_run_go(struct wt_run *r, struct wt_totals *totals);
/* After wt_run_go failed: which thread, doing what on which element, and
 * where that element lives (another host's tuple server, say). */
const char *wt_run_error(const struct wt_run *r);
/* A digest of this process's rows of one matrix that adds up across
 * processes: equal sums mean equal lattices, however they were shared out. */
uint64_t wt_run_digest(const struct wt_run *r, int matrix);
const struct wt_geometry *wt_run_geometry(const struct wt_run *r);
/* Adds this process's rows of one matrix to a picture accumulator
 * (picture.h); sums over processes give the whole picture. */
void wt_run_picture(const struct wt_run *r, int matrix, int64_t *acc);
void wt_run_destroy(struct wt_run *r);
/* The job's tuple servers ("" without any): what monitors' --servers takes. */
const char *wt_run_servers(const struct wt_run *r);

#endif
