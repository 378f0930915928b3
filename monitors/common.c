/* common.c - attaching to a job, pacing and stopping, shared by the monitors. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

volatile sig_atomic_t mon_stop;
const char *mon_servers, *mon_secret_file;

void mon_remote(struct es_scope_spec *spec)
{
	if (mon_servers) /* else what the pathmap's scope said, if anything */
		spec->servers = mon_servers;
	if (mon_secret_file)
		spec->secret_file = mon_secret_file;
	else
		mon_secret_file = spec->secret_file;
	if (spec->servers && spec->runs == PM_RUNS_PROCESS) {
		/* a helper process cannot share our connections: threads do */
		fprintf(stderr, "note: with --servers the scope's nodes run in threads, not a process\n");
		spec->runs = PM_RUNS_THREAD;
	}
}

int mon_space_open(const char *segment, es_space **out)
{
	struct ps_remote_attr ra = { .secret_file = mon_secret_file };
	return es_space_open_at(segment, &ra, out);
}

static void on_signal(int sig)
{
	(void)sig;
	mon_stop = 1;
}

void mon_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

double mon_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void mon_sleep(double seconds)
{
	double until = mon_now() + seconds;
	while (!mon_stop) {
		double left = until - mon_now();
		if (left <= 0)
			break;
		if (left > 0.05)
			left = 0.05; /* wake to notice a signal */
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

int mon_attach(const struct es_scope_spec *spec, double wait_s, es_scope **out)
{
	double until = mon_now() + wait_s;
	for (;;) {
		int rc = es_scope_create(spec, out);
		if (rc != PS_ENOENT || mon_now() >= until || mon_stop)
			return rc;
		mon_sleep(0.05);
	}
}

bool mon_job_alive(const es_scope *s)
{
	const char *seen = NULL;
	for (int i = 0; i < es_scope_leaves(s); i++) {
		const char *seg = es_scope_leaf(s, i)->segment;
		if (seen && !strcmp(seen, seg))
			continue;
		seen = seg;
		struct ps_remote_attr ra = { .secret_file = mon_secret_file };
		if (ps_state_at(seg, &ra) == PS_SHM_LIVE)
			return true;
	}
	return false;
}

int mon_spec(const char *prog, const char *pathmap, const char *scope, const char *job,
	     struct es_scope_spec *spec)
{
	es_scope_spec_default(spec, job);
	if (!pathmap && !scope)
		return 0;
	if (!pathmap || !scope) {
		fprintf(stderr, "%s: --pathmap and --scope go together\n", prog);
		return 2;
	}
	char err[512];
	pm_map *m;
	if (pm_load(pathmap, &m, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	/* The spec keeps pointers into the map: it lives as long as the program. */
	int rc = es_scope_spec_from(m, scope, job, spec);
	if (rc) {
		fprintf(stderr, "%s: %s has no scope '%s'\n", prog, pathmap, scope);
		pm_destroy(m);
		return 2;
	}
	return 0;
}

double mon_number(const char *prog, const char *opt, const char *arg, double min)
{
	char *end;
	errno = 0;
	double v = arg ? strtod(arg, &end) : 0;
	if (!arg || errno || end == arg || *end || !(v >= min)) {
		fprintf(stderr, "%s: %s: expected a number of at least %g, not '%s'\n", prog, opt, min,
			arg ? arg : "");
		exit(2);
	}
	return v;
}
