/* common.h - what the monitor programs share: attaching to a job, time, signals. */
#ifndef MONITORS_COMMON_H
#define MONITORS_COMMON_H

#include <signal.h>
#include <stdbool.h>

#include "scopes/scopes.h"

extern volatile sig_atomic_t mon_stop; /* set by SIGINT/SIGTERM */
void mon_signals(void);
double mon_now(void);                 /* seconds, CLOCK_MONOTONIC */
void mon_sleep(double seconds);       /* returns early when mon_stop is set */

/* Attaches a scope to the job, waiting up to wait_s for it to appear. */
int mon_attach(const struct es_scope_spec *spec, double wait_s, es_scope **out);
/* Whether any of the job's trace spaces still has a live writer. */
bool mon_job_alive(const es_scope *s);
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
/* Puts --servers and --secret-file into spec. */
void mon_remote(struct es_scope_spec *spec);
/* A trace space of the scope's, wherever it is. */
int mon_space_open(const char *segment, es_space **out);
/* A number from the command line, or exits 2 naming the option. */
double mon_number(const char *prog, const char *opt, const char *arg, double min);

#endif
