/* common.h - what the monitor programs share: attaching to a job, time, signals. */
#ifndef MONITORS_COMMON_H
#define MONITORS_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "scopes/scopes.h"

extern volatile sig_atomic_t mon_stop; /* set by SIGINT/SIGTERM */
void mon_signals(void);
double mon_now(void);                 /* seconds, CLOCK_MONOTONIC */
void mon_sleep(double seconds);       /* returns early when mon_stop is set */
/* How long a consumer may wait before its next pull: a quarter of the
 * scope's headroom (es_scope_headroom), at least 1 ms, at most period. */
double mon_pace(const es_scope *s, double period);

/* Attaches a scope to the job, waiting up to wait_s for it to appear.
 * With --servers, each server is asked first: one that cannot be reached
 * is named and left out (the others' threads are watched), a malformed
 * entry is a usage error.  Prints why it failed; 0, or the exit status. */
int mon_attach(const char *prog, struct es_scope_spec *spec, double wait_s, es_scope **out);

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
/* Fills spec from --pathmap/--scope if both were given; 0 or prints why not. */
int mon_spec(const char *prog, const char *pathmap, const char *scope, const char *job,
	     struct es_scope_spec *spec);
/* --servers HOST:PORT[,...] and --secret-file FILE: watch the job through
 * tuple servers (from another host) instead of this host's segments. */
#define MON_REMOTE_OPTS \
	{ "servers", required_argument, NULL, 'R' }, { "secret-file", required_argument, NULL, 'K' }
#define MON_REMOTE_USAGE \
	"      --servers LIST   HOST:PORT,... : the job's tuple servers (psadm serve, or\n" \
	"                       the job's own), when it runs on other hosts\n" \
	"      --secret-file F  their shared secret (a file only you can read)\n"
extern const char *mon_servers, *mon_secret_file;

/*
 * A snapshot on a trigger, as a flight recorder keeps one: the first time
 * a monitor's condition holds (a deadlock, a stall too long, an
 * imbalance, a rank's MPI share), the archive DIR of what every trace
 * element of the job holds at that moment, with the calls each thread is
 * inside (esrecord --remains, run beside the monitor, through the same
 * --servers), its TRIGGER file saying why, and FILE holding TEXT (what the
 * monitor saw: the wait-for graph...).  Later calls do nothing.
 */
struct mon_snapshot {
	const char *dir; /* NULL: no snapshot asked for */
	const char *job;
	bool taken;
};
int mon_snapshot(const char *prog, struct mon_snapshot *sn, const char *why, const char *file,
		 const char *text);
/* Puts --servers and --secret-file into spec; exits 2 naming the secret
 * file if it cannot be one. */
void mon_remote(const char *prog, struct es_scope_spec *spec);
/* A trace space of the scope's, wherever it is. */
int mon_space_open(const char *segment, es_space **out);
/* Opens path for writing, truncated, readable by its owner only (0600,
 * also when it existed): a copy of a trace is as private as the trace. */
FILE *mon_fopen_private(const char *path);
/* Graphviz's dot draws the DOT file in as fmt ("png", "svg") into out,
 * 0600, renamed into place once whole.  0; 127 when dot is not
 * installed; else dot's exit status, or a negative errno. */
int mon_dot(const char *in, const char *fmt, const char *out);
/* s as a JSON string, quoted and escaped (esview's data, the converters'). */
void mon_json_string(FILE *f, const char *s);
/* A number from the command line, or exits 2 naming the option. */
double mon_number(const char *prog, const char *opt, const char *arg, double min);

#endif
