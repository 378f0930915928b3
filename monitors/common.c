/* common.c - attaching to a job, pacing and stopping, shared by the monitors. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "monitors/monitors.h"

volatile sig_atomic_t mon_stop;
const char *mon_servers, *mon_secret_file;

int mon_remote(struct es_scope_spec *spec, char *err, size_t errlen)
{
	if (mon_servers) /* else what the pathmap's scope said, if anything */
		spec->servers = mon_servers;
	if (mon_secret_file)
		spec->secret_file = mon_secret_file;
	else
		mon_secret_file = spec->secret_file;
	char why[128];
	int rc = mon_secret_file ? ps_secret_check(mon_secret_file, why, sizeof(why)) : 0;
	if (rc) {
		snprintf(err, errlen, "--secret-file %s: %s", mon_secret_file, why);
		return -EACCES;
	}
	if (spec->servers && spec->runs == PM_RUNS_PROCESS) {
		/* a helper process cannot share our connections: threads do */
		fprintf(stderr, "note: with --servers the scope's nodes run in threads, not a process\n");
		spec->runs = PM_RUNS_THREAD;
	}
	return 0;
}

int mon_space_open(const char *segment, es_space **out)
{
	struct ps_remote_attr ra = mon_ra();
	return es_space_open_at(segment, &ra, out);
}

FILE *mon_fopen_private(const char *path)
{
	return base_fopen_out(path, 0600);
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
	return (double)base_now_ns() / 1e9;
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

int mon_loop_add(struct mon_loop *l, double first_s, double (*fn)(void *arg), void *arg)
{
	if (l->n >= MON_TIMERS)
		return -ENOSPC;
	l->t[l->n].at = mon_now() + first_s;
	l->t[l->n].fn = fn;
	l->t[l->n].arg = arg;
	l->n++;
	return 0;
}

void mon_loop_run(struct mon_loop *l)
{
	while (l->n) {
		if (mon_stop) { /* a last round, whatever is due: a consumer drains what is there */
			for (int i = 0; i < l->n; i++)
				l->t[i].fn(l->t[i].arg);
			return;
		}
		int next = 0;
		for (int i = 1; i < l->n; i++)
			if (l->t[i].at < l->t[next].at)
				next = i; /* the first added of those due first */
		double now = mon_now();
		if (l->t[next].at > now) {
			mon_sleep(l->t[next].at - now);
			continue; /* a signal, or due now: looked at again */
		}
		double again = l->t[next].fn(l->t[next].arg);
		if (again < 0)
			return;
		l->t[next].at = mon_now() + again;
	}
}

double mon_pace(const es_scope *s, double period)
{
	double h = es_scope_headroom(s) / 4;
	return h < 0.001 ? 0.001 : h < period ? h : period;
}

static int count_one(const char *seg, void *arg)
{
	(void)seg;
	++*(int *)arg;
	return 0;
}

/* The servers of --servers that answer, in list; the others named. */
static int reachable(const char *prog, const char *job, const char *servers, char *list,
		     size_t len, char *err, size_t errlen)
{
	struct ps_remote_attr ra = mon_ra();
	char prefix[64], item[128];
	snprintf(prefix, sizeof(prefix), "%s.", job);
	*list = 0;
	for (const char *p = servers; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(item, sizeof(item), "%.*s", (int)(n < sizeof(item) ? n : sizeof(item) - 1), p);
		p += n + (p[n] == ',');
		char host[64], seg[PS_NAME_MAX + 1];
		int port, found = 0;
		if (ps_locator_parse(item, host, sizeof(host), &port, seg) || *seg) {
			snprintf(err, errlen, "--servers: '%s': expected HOST:PORT (a list: "
				 "HOST:PORT,HOST:PORT...)", item);
			return -EINVAL;
		}
		int rc = ps_remote_list(host, port, &ra, prefix, count_one, &found);
		if (rc) {
			fprintf(stderr, "%s: cannot reach the tuple server %s: %s%s\n", prog, item,
				ps_strerror(rc), rc == PS_EACCES ? " (a wrong secret, or none given)" : "");
			continue;
		}
		snprintf(list + strlen(list), len - strlen(list), "%s%s", *list ? "," : "", item);
	}
	if (!*list) {
		snprintf(err, errlen, "job '%s': none of its tuple servers could be reached", job);
		return -EHOSTUNREACH;
	}
	return 0;
}

/* Loudly: a segment named like the job's that we cannot watch means ranks
 * or threads missing from what the monitor shows, perhaps because another
 * user made a file of that name first. */
static void skipped(const char *prog, const es_scope *s)
{
	int n = es_scope_skipped(s, -1, NULL);
	for (int i = 0; i < n && i < 16; i++) {
		const char *seg;
		int rc = es_scope_skipped(s, i, &seg);
		uid_t owner;
		if (!strchr(seg, ':') && !ps_shm_owner(seg, &owner) && owner != geteuid())
			fprintf(stderr, "%s: WARNING: %s is not watched: it is a file of user %ld, not "
				"yours (another user took the name; its job ran unmonitored)\n", prog, seg,
				(long)owner);
		else
			fprintf(stderr, "%s: WARNING: %s is not watched: %s\n", prog, seg, ps_strerror(rc));
	}
	if (n > 16)
		fprintf(stderr, "%s: WARNING: and %d more segments not watched\n", prog, n - 16);
}

/* What checking each writer's TSC calibration on attaching found, if it
 * did not simply hold. */
static void clocks(const char *prog, const es_scope *s)
{
	const char *seg;
	int64_t drift;
	for (int i = 0, rc; (rc = es_scope_space_clock(s, i, &seg, &drift)) != PS_EINVAL; i++)
		if (rc == 1)
			fprintf(stderr, "%s: %s's TSC calibration had drifted %.1f us from "
				"CLOCK_MONOTONIC: its times use the rate the TSC kept since\n", prog, seg,
				(double)drift / 1e3);
		else if (rc)
			fprintf(stderr, "%s: WARNING: %s's TSC kept no rate against CLOCK_MONOTONIC "
				"(off by %.1f us): its times are not to be trusted\n", prog, seg,
				(double)drift / 1e3);
}

struct seg_look {
	const char *job;
	bool found;
};

static int seg_of(const char *name, void *arg)
{
	struct seg_look *k = arg;
	size_t n = strlen(k->job);
	if (!strncmp(name, k->job, n) && name[n] == '.')
		k->found = true;
	return 0;
}

/* Whether the job has any segment on this host: a job that runs without
 * collectors still has its PATHS elements there. */
static bool job_has_segments(const char *job)
{
	struct seg_look k = { job, false };
	ps_shm_list(seg_of, &k);
	return k.found;
}

/*
 * A monitor that waits for its job says so (ps_shm_expect) before its
 * first look, and for as long as it runs: a job that starts and ends
 * between two looks leaves its segments for it rather than removing them
 * at its clean end.  As the monitor exits, its note goes first, then the
 * job's segments are released as the job would have released them
 * (pastset/expect.c: whichever of them looks last removes them).
 */
static struct waited {
	ps_expect *note;
	char job[PS_NAME_MAX + 1];
} waited[4];

struct job_names {
	const char *job;
	char (*v)[PS_NAME_MAX + 1];
	int n, cap;
};

static int job_segment(const char *name, void *arg)
{
	struct job_names *j = arg;
	size_t n = strlen(j->job);
	if (strncmp(name, j->job, n) || name[n] != '.')
		return 0;
	if (j->n == j->cap) {
		int cap = j->cap ? 2 * j->cap : 16;
		void *p = realloc(j->v, sizeof(*j->v) * (size_t)cap);
		if (!p)
			return PS_ENOMEM;
		j->v = p, j->cap = cap;
	}
	snprintf(j->v[j->n++], sizeof(*j->v), "%s", name);
	return 0;
}

int mon_release_job(const char *job)
{
	struct job_names j = { .job = job };
	int rc = ps_shm_list(job_segment, &j);
	const char **names = rc ? NULL : calloc((size_t)j.n + 1, sizeof(*names));
	for (int i = 0; names && i < j.n; i++)
		names[i] = j.v[i];
	rc = rc ? rc : !names ? PS_ENOMEM : ps_shm_release(names, j.n);
	free(names);
	free(j.v);
	return rc;
}

static void release_waited(void)
{
	for (size_t i = 0; i < sizeof(waited) / sizeof(waited[0]) && waited[i].note; i++) {
		ps_shm_expect_end(waited[i].note);
		waited[i].note = NULL;
		mon_release_job(waited[i].job);
	}
}

static void expect_job(const char *job)
{
	size_t i = 0, n = sizeof(waited) / sizeof(waited[0]);
	for (; i < n && waited[i].note; i++)
		if (!strcmp(waited[i].job, job))
			return;
	char prefix[PS_NAME_MAX + 2];
	snprintf(prefix, sizeof(prefix), "%s.", job);
	if (i == n || ps_shm_expect(prefix, &waited[i].note))
		return; /* not said: the job removes its segments at its end, as before */
	snprintf(waited[i].job, sizeof(waited[i].job), "%s", job);
	if (i == 0)
		atexit(release_waited);
}

int mon_attach(const char *prog, struct es_scope_spec *spec, double wait_s, es_scope **out, char *err,
	       size_t errlen)
{
	static char list[1024];
	if (!es_job_ok(spec->job)) {
		snprintf(err, errlen, "job '%s': no job can have that name (expected %s)", spec->job, ES_JOB_RULE);
		return -EINVAL;
	}
	if (spec->servers) {
		int rc = reachable(prog, spec->job, spec->servers, list, sizeof(list), err, errlen);
		if (rc)
			return rc;
		if (strcmp(list, spec->servers))
			fprintf(stderr, "%s: watching the threads behind %s only\n", prog, list);
		spec->servers = list;
	}
	if (wait_s > 0 && !spec->servers)
		expect_job(spec->job);
	double until = mon_now() + wait_s;
	/* a job of MPICH's can start and end in 50 ms: waiting, the scope is
	 * made again the moment a segment appears, not at the next tick */
	int in = !spec->servers && wait_s > 0 ? inotify_init1(IN_CLOEXEC | IN_NONBLOCK) : -1;
	if (in >= 0 && inotify_add_watch(in, "/dev/shm", IN_CREATE | IN_MOVED_TO) < 0) {
		close(in);
		in = -1;
	}
	for (;;) {
		int rc = es_scope_create(spec, out);
		if (!rc) {
			if (in >= 0)
				close(in);
			const char *why;
			for (int i = 0; i < es_scope_handlers(*out); i++)
				if (!es_scope_handler(*out, i, &why)) {
					snprintf(err, errlen, "the scope's handler %s", why);
					es_scope_destroy(*out);
					*out = NULL;
					return -EINVAL;
				}
			skipped(prog, *out);
			clocks(prog, *out);
			return 0;
		}
		if (rc != PS_ENOENT || mon_now() >= until || mon_stop) {
			if (rc == PS_ENOENT && spec->servers)
				snprintf(err, errlen, "job '%s': no trace spaces on %s", spec->job, spec->servers);
			else if (rc == PS_ENOENT && job_has_segments(spec->job))
				snprintf(err, errlen, "job '%s' has segments on this host (psadm list) but no trace "
					 "spaces: it runs without collectors (an MPI program: under esrun; the wind "
					 "tunnel: -c)", spec->job);
			else if (rc == PS_ENOENT) /* an ended job's are gone: say what it may be */
				snprintf(err, errlen, "job '%s': no trace spaces on this host (it has ended, has "
					 "not started%s, or runs on other hosts: --servers)", spec->job,
					 wait_s > 0 ? " yet" : "");
			else
				snprintf(err, errlen, "job '%s': %s", spec->job, ps_strerror(rc));
			if (in >= 0)
				close(in);
			return rc == PS_ENOENT ? -ENOENT : rc < 0 ? rc : -EIO;
		}
		if (in < 0) {
			mon_sleep(0.05);
			continue;
		}
		struct pollfd pf = { .fd = in, .events = POLLIN };
		if (poll(&pf, 1, 50) > 0) { /* 50 ms: a signal still seen soon */
			char buf[4096];
			while (read(in, buf, sizeof(buf)) > 0)
				;
		}
	}
}

const char *mon_server_of(const es_scope *s, int i, char *buf, size_t len)
{
	const char *seg = es_scope_leaf(s, i)->segment, *slash = strchr(seg, '/');
	snprintf(buf, len, "%.*s", slash ? (int)(slash - seg) : 0, seg);
	return buf;
}

void mon_note_lost(const char *prog, const es_scope *s, bool *was)
{
	int lost = 0, first = -1;
	for (int i = 0; i < es_scope_leaves(s); i++)
		if (es_scope_leaf_lost(s, i)) {
			lost++;
			first = first < 0 ? i : first;
		}
	char srv[128];
	if (lost && !*was)
		fprintf(stderr, "%s: %d trace elements behind %s cannot be read now; their events are "
			"read when it answers again, or counted as discarded\n", prog, lost,
			mon_server_of(s, first, srv, sizeof(srv)));
	else if (!lost && *was)
		fprintf(stderr, "%s: every tuple server answers again\n", prog);
	*was = lost > 0;
}

bool mon_watch(const char *prog, const es_scope *s, struct mon_watch *w)
{
	const char *seen = NULL;
	bool live = false, lost = false;
	char first[200] = "";
	for (int i = 0; i < es_scope_leaves(s) && !live; i++) {
		const char *seg = es_scope_leaf(s, i)->segment;
		if (seen && !strcmp(seen, seg))
			continue;
		seen = seg;
		struct ps_remote_attr ra = mon_ra();
		int st = ps_state_at(seg, &ra);
		live = st == PS_SHM_LIVE;
		/* a segment its server says is gone is a job that ended there; a
		 * server refused (nothing listens there now) went with its rank */
		if (st < 0 && st != PS_ENOENT && st != -ECONNREFUSED && !lost) {
			char srv[128];
			lost = true;
			snprintf(first, sizeof(first), "%s: %s", mon_server_of(s, i, srv, sizeof(srv)),
				 ps_strerror(st));
		}
	}
	double now = mon_now();
	w->now = live ? MON_LIVE : lost ? MON_UNREACHABLE : MON_ENDED;
	if (w->now != MON_UNREACHABLE) {
		if (w->said && w->now == MON_LIVE)
			fprintf(stderr, "%s: the job's tuple servers answer again\n", prog);
		w->lost_since = 0;
		w->said = false;
		return w->now == MON_LIVE;
	}
	if (!w->lost_since) {
		/* said only if it lasts: a job that ends cleanly drops its
		 * connections first, and refuses them at the next look */
		w->lost_since = now;
		snprintf(w->lost, sizeof(w->lost), "%s", first);
	} else if (!w->said) {
		w->said = true;
		fprintf(stderr, "%s: cannot reach the job's tuple servers (%s); trying again for %.0f s\n",
			prog, first, w->grace);
	}
	return now - w->lost_since < w->grace;
}

const char *mon_watch_end(const struct mon_watch *w)
{
	static char why[300];
	if (w->now == MON_ENDED)
		return " (the job ended)";
	if (w->now == MON_UNREACHABLE) {
		snprintf(why, sizeof(why), " (its tuple servers stopped answering: the job ended, or "
			 "its hosts cannot be reached; %s)", w->lost);
		return why;
	}
	return mon_stop ? " (stopped)" : "";
}

int mon_spec(const char *pathmap, const char *scope, const char *job, struct es_scope_spec *spec, char *err,
	     size_t errlen)
{
	es_scope_spec_default(spec, job);
	if (!pathmap && !scope)
		return 0;
	if (!pathmap || !scope)
		return snprintf(err, errlen, "--pathmap and --scope go together"), -EINVAL;
	pm_map *m;
	if (pm_load(pathmap, &m, err, errlen))
		return -EINVAL;
	/* The spec keeps pointers into the map: it lives as long as the program. */
	if (es_scope_spec_from(m, scope, job, spec)) {
		snprintf(err, errlen, "%s has no scope '%s'", pathmap, scope);
		pm_destroy(m);
		return -EINVAL;
	}
	return 0;
}

int mon_status(int rc)
{
	return !rc ? 0 : rc == -ENOENT || rc == -EHOSTUNREACH || rc == -EINVAL || rc == -EACCES ? 2 : 1;
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

/* --- pictures ------------------------------------------------------------------ */

extern char **environ;

int mon_dot(const char *in, const char *fmt, const char *out)
{
	char tmp[4096], opt[16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	snprintf(opt, sizeof(opt), "-T%s", fmt);
	/* dot draws to its stdout, a file opened the safe way, which takes
	 * the picture's name once whole */
	FILE *f = base_fopen_out(tmp, 0600);
	if (!f)
		return -errno;
	char *argv[] = { "dot", opt, (char *)in, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fileno(f), STDOUT_FILENO);
	pid_t pid;
	int st = 0;
	int spawned = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	fclose(f);
	posix_spawn_file_actions_destroy(&fa);
	int rc = spawned == ENOENT ? -ENOENT : -EPROTO;
	if (!spawned && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		rc = WEXITSTATUS(st) == 127 ? -ENOENT : WEXITSTATUS(st) ? -EPROTO : 0;
	if (!rc && rename(tmp, out))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

