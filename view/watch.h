/* watch.h - esview's watch loop (watch.c): attaches to the job, pulls it into the view's ring, judges it, fires the triggers; esview.c parses the command line and opens the door. */
#ifndef ES_MONITORS_VIEW_WATCH_H
#define ES_MONITORS_VIEW_WATCH_H

#include "archive/archive.h"
#include "monitors/beat.h"
#include "monitors/colls.h"
#include "monitors/monitors.h"
#include "monitors/resolve.h"
#include "view/view.h"
#include "view/serve.h"
#include "monitors/waitlive.h"

enum { MAX_HOSTS = 16 };
struct vw_opts {
	int port;
	const char *addr, *secret_file, *job, *snapshot;
	double rate, window, wait, period;
	struct lv_arm arm;
	const char *hosts[MAX_HOSTS];
	int nhosts;
	int snapshots;           /* archives kept at most */
	double snapshot_bytes;   /* bytes in them at most */
};

/* What the watch loop keeps besides what it shares. */
struct vw_watcher {
	const struct vw_opts *o;
	struct lv_served *sv;
	es_scope *s;            /* every event, by leaf */
	struct mh_set *mh;      /* --handler's: every event pulled is given to them */
	char *handlers;         /* ,"handlers":[...] of every monitor's here, read each second */
	double handlers_at;
	hb *hb;                 /* heartbeat's judgement, fed from s's pulls */
	bool primed;            /* hb_prime done after the first pull */
	cm *cm;
	es_mpi *mpi;            /* the ranks' communicators, for the collectives */
	ar_symbols *sym;        /* call sites' names, for the hover (NULL: no memory for them) */
	struct ar_clocks *clocks; /* the ranks' clock points, read every second */
	uint64_t clocks_at;
	struct cm_done recent[16]; /* the latest collectives, newest last */
	int nrecent;
	double next_beat;
	char *waits;            /* ,"waits":{...} as of the last judgement */
	wl *wl;                 /* the wait states, fed every MPI tuple (NULL: no memory for them) */
	mon_rs *rs;             /* ... each resolved once (resolve.c); its table names the ring's communicators */
	char *wstates;          /* ,"waitstates":{...} of the last second */
	struct vw_found { double at; struct wl_row r; } *found; /* the rows found in the last second's pulls */
	size_t nfound, capfound;
	struct { double at; uint64_t mpi_ns; } in_mpi[64]; /* each pull's time in MPI, the last second's */
	unsigned nin_mpi;
	uint64_t newest;        /* the latest end fed: the engine's now */
	struct wl_wait bars[512]; /* the latest waits found, for the lanes (a ring) */
	unsigned nbars;
	char *findings;         /* its deadlocks and stalls in words */
	char pending[400];      /* a trigger that held during the pull */
	char dir[4096];         /* private: the graph's DOT and SVG */
	struct lv_arm arm;         /* the served one's, as of this pull */
	int kept;               /* snapshots written ... */
	double bytes, largest;  /* ... their bytes, and the largest one's */
};

enum { PULL_MAX = 65536 }; /* events a pull takes at most: 2.4 MB of buffer */

/* The scope (every event, by leaf: the ring's and the judgement's), the
 * ranks' view and the judgement.  0, or the exit status (said why). */
int vw_attach(const struct vw_opts *o, struct vw_watcher *w);
/* Pulls, judges and publishes until the job ends (0) or esview is stopped
 * (0); -ENOMEM without the pull's buffer. */
int vw_watch(struct vw_watcher *w);
/* What vw_attach took, and the graph's files. */
void vw_detach(struct vw_watcher *w);

#endif
