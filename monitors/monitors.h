/* monitors.h - libesmon, what every monitor program shares (heartbeat, geteventmon, colopmon, esctl, esview, esrecord, esprofile): attaching to a job, pacing, the recorder, snapshots. */
#ifndef ES_MONITORS_H
#define ES_MONITORS_H

/*
 * The error convention: a function here returns 0 or a negative errno and,
 * where it takes err, says why there (one line, without the program's
 * name); only a program's main turns that into a message and an exit
 * status (mon_status).  What a function prints on stderr, prefixed prog,
 * is news the user should have while the monitor runs (a segment not
 * watched, a server that stopped answering, a rank that died), never its
 * error.  mon_number belongs to main's option parsing and exits 2 as
 * getopt's usage errors do.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "scopes/scopes.h"

extern volatile sig_atomic_t mon_stop; /* set by SIGINT/SIGTERM */
void mon_signals(void);
double mon_now(void);                 /* seconds, CLOCK_MONOTONIC */
void mon_sleep(double seconds);       /* returns early when mon_stop is set */

/*
 * The one loop every monitor runs, as Redis' ae.c serves every event: its
 * timers, each a function that does one round of the monitor's work and
 * says when it wants to run again (seconds from now), or MON_END to end
 * the loop.  Due timers run in the order added; between them the loop
 * sleeps until the next is due.  On SIGINT/SIGTERM (mon_stop) it wakes,
 * runs every timer once more (a consumer drains what is there; each sees
 * mon_stop) and ends.  A monitor paces itself only through what its
 * timers return.
 */
#define MON_END (-1.0)
#define MON_TIMERS 4
struct mon_loop {
	struct {
		double at;               /* mon_now() when due */
		double (*fn)(void *arg); /* seconds to its next run, or MON_END */
		void *arg;
	} t[MON_TIMERS];
	int n;
};
/* A timer, first due after first_s; -ENOSPC past MON_TIMERS. */
int mon_loop_add(struct mon_loop *l, double first_s, double (*fn)(void *arg), void *arg);
/* Runs the timers until one returns MON_END, or mon_stop's last round. */
void mon_loop_run(struct mon_loop *l);
/* How long a consumer may wait before its next pull: a quarter of the
 * scope's headroom (es_scope_headroom), at least 1 ms, at most period. */
double mon_pace(const es_scope *s, double period);

/* After the job ended cleanly: its segments on this host (JOB.*) removed
 * as their keep policy says, as the job's last process would have
 * (ps_shm_release).  How many were removed, or an error. */
int mon_release_job(const char *job);
/* Attaches a scope to the job, waiting up to wait_s for it to appear.
 * A monitor that waits says so (ps_shm_expect) until it exits: a job
 * that ends meanwhile leaves its segments, which the monitor releases as
 * it exits (mon_release_job).
 * With --servers, each server is asked first: one that cannot be reached
 * is named and left out (the others' threads are watched).  0; -EINVAL
 * (no job can have that name, a malformed --servers entry), -EHOSTUNREACH
 * (none of its servers answers), -ENOENT (no trace space of the job's),
 * or the scope's code. */
int mon_attach(const char *prog, struct es_scope_spec *spec, double wait_s, es_scope **out, char *err,
	       size_t errlen);

/*
 * Whether the job goes on, as far as the monitor can tell: some trace
 * space has a live writer; or none does and some cannot be reached (a node
 * daemon restarting, a host paused, or a job whose servers ended with it),
 * for less than the grace time.  Says so when servers stop or start
 * answering.  After false, mon_watch_end() tells why, for the summary.
 */
enum mon_seen { MON_LIVE = 1, MON_ENDED, MON_UNREACHABLE };
struct mon_watch {
	double grace;      /* seconds unreachable servers are waited for */
	enum mon_seen now;
	double lost_since; /* 0 while every server answers */
	char lost[200];    /* the first server that did not: "HOST:PORT: why" */
	bool said;         /* the loss outlasted one look, and was said */
};
bool mon_watch(const char *prog, const es_scope *s, struct mon_watch *w);
const char *mon_watch_end(const struct mon_watch *w);
/* After a consume: says when some leaves' servers stop answering (their
 * events are read when they answer again, or counted as discarded) and
 * when they answer again.  *was: whether some were lost last time. */
void mon_note_lost(const char *prog, const es_scope *s, bool *was);
/* The tuple server of leaf i ("HOST:PORT"), or "" for this host's. */
const char *mon_server_of(const es_scope *s, int i, char *buf, size_t len);
/* Fills spec from --pathmap/--scope if both were given; 0 or -EINVAL. */
int mon_spec(const char *pathmap, const char *scope, const char *job, struct es_scope_spec *spec, char *err,
	     size_t errlen);
/* --servers HOST:PORT[,...] and --secret-file FILE: watch the job through
 * tuple servers (from another host) instead of this host's segments. */
#define MON_REMOTE_OPTS \
	{ "servers", required_argument, NULL, 'R' }, { "secret-file", required_argument, NULL, 'K' }
#define MON_REMOTE_USAGE \
	"      --servers LIST   HOST:PORT,... : the job's tuple servers (psadm serve, or\n" \
	"                       the job's own), when it runs on other hosts\n" \
	"      --secret-file F  their shared secret (a file only you can read)\n"
extern const char *mon_servers, *mon_secret_file;
/* How the monitor reaches a tuple server: with --secret-file's secret (or
 * the pathmap scope's, once mon_remote took it), given once and carried
 * down to every open. */
static inline struct ps_remote_attr mon_ra(void)
{
	return (struct ps_remote_attr){ .secret_file = mon_secret_file };
}

/*
 * The recorder (record.c): attaches to JOB (waiting up to o->wait
 * seconds), drains it into the archive o->dir until it ends or a signal,
 * checkpointing it every quarter second, and says on stderr, as PROG, what
 * it wrote and lost (unless quiet and nothing was lost), and which ranks
 * died.  0, or a negative errno with why in err: the archive then stands
 * as its last checkpoint left it (none when the job was never found).
 */
struct mon_record_opts {
	const char *dir; /* the archive */
	double period;   /* longest time between pulls, s (at most 0.5 is used) */
	double wait;     /* for the job to appear, s */
	bool quiet;      /* say nothing at the end unless something was lost */
	bool remains;    /* one pull of what the elements hold, and the calls
			    every thread is inside, then finish: a dead or hung job's */
	struct mh_set *handlers; /* every event recorded is given to them too (handlers.h); NULL: none */
};
int mon_record(const char *prog, const char *job, const struct mon_record_opts *o, char *err, size_t errlen);

/*
 * A snapshot on a trigger, as a flight recorder keeps one: the first time
 * a monitor's condition holds (a deadlock, a stall too long, an
 * imbalance, a rank's MPI share), the archive DIR of what every trace
 * element of the job holds at that moment, with the calls each thread is
 * inside (mon_record's remains, in this process, through the same
 * --servers), its TRIGGER file saying why, and FILE holding TEXT (what the
 * monitor saw: the wait-for graph...).  Later calls do nothing.  0, or a
 * negative errno with why in err.
 */
struct mon_snapshot {
	const char *dir; /* NULL: no snapshot asked for */
	const char *job;
	bool taken;
};
int mon_snapshot(const char *prog, struct mon_snapshot *sn, const char *why, const char *file,
		 const char *text, char *err, size_t errlen);
/* Puts --servers and --secret-file into spec.  0, or -EACCES/-EINVAL when
 * the secret file cannot be one (why in err). */
int mon_remote(struct es_scope_spec *spec, char *err, size_t errlen);
/* A trace space of the scope's, wherever it is. */
int mon_space_open(const char *segment, es_space **out);
/* Opens path for writing, truncated, readable by its owner only (0600,
 * also when it existed): a copy of a trace is as private as the trace. */
FILE *mon_fopen_private(const char *path);
/* Graphviz's dot draws the DOT file in as fmt ("png", "svg") into out,
 * 0600, renamed into place once whole.  0; -ENOENT when dot is not
 * installed, -EPROTO when it failed, or the negative errno of a file. */
int mon_dot(const char *in, const char *fmt, const char *out);
/* A number from the command line, or exits 2 naming the option. */
double mon_number(const char *prog, const char *opt, const char *arg, double min);
/* The exit status of a program whose work ended in rc (0 or a negative
 * errno): 0; 2 when the job or what it was asked is wrong (no such job,
 * none of its servers, a bad name or option: -ENOENT, -EHOSTUNREACH,
 * -EINVAL, -EACCES); 1 for any other failure. */
int mon_status(int rc);

#endif
