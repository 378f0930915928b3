/* common.c - attaching to a job, pacing and stopping, shared by the monitors. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

volatile sig_atomic_t mon_stop;
const char *mon_servers, *mon_secret_file;

void mon_remote(const char *prog, struct es_scope_spec *spec)
{
	if (mon_servers) /* else what the pathmap's scope said, if anything */
		spec->servers = mon_servers;
	if (mon_secret_file)
		spec->secret_file = mon_secret_file;
	else
		mon_secret_file = spec->secret_file;
	char why[128];
	if (mon_secret_file && ps_secret_check(mon_secret_file, why, sizeof(why))) {
		fprintf(stderr, "%s: --secret-file %s: %s\n", prog, mon_secret_file, why);
		exit(2);
	}
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

FILE *mon_fopen_private(const char *path)
{
	return ps_fopen_out(path, 0600);
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
	return (double)ps_now_ns() / 1e9;
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
		     size_t len)
{
	struct ps_remote_attr ra = { .secret_file = mon_secret_file };
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
			fprintf(stderr, "%s: --servers: '%s': expected HOST:PORT (a list: "
				"HOST:PORT,HOST:PORT...)\n", prog, item);
			return 2;
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
		fprintf(stderr, "%s: job '%s': none of its tuple servers could be reached\n", prog, job);
		return 2;
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

int mon_attach(const char *prog, struct es_scope_spec *spec, double wait_s, es_scope **out)
{
	static char list[1024];
	if (!pm_job_ok(spec->job)) {
		fprintf(stderr, "%s: job '%s': no job can have that name (expected %s)\n", prog,
			spec->job, PM_JOB_RULE);
		return 2;
	}
	if (spec->servers) {
		int rc = reachable(prog, spec->job, spec->servers, list, sizeof(list));
		if (rc)
			return rc;
		if (strcmp(list, spec->servers))
			fprintf(stderr, "%s: watching the threads behind %s only\n", prog, list);
		spec->servers = list;
	}
	double until = mon_now() + wait_s;
	for (;;) {
		int rc = es_scope_create(spec, out);
		if (!rc) {
			skipped(prog, *out);
			clocks(prog, *out);
			return 0;
		}
		if (rc != PS_ENOENT || mon_now() >= until || mon_stop) {
			if (rc == PS_ENOENT && spec->servers)
				fprintf(stderr, "%s: job '%s': no trace spaces on %s\n", prog, spec->job,
					spec->servers);
			else if (rc == PS_ENOENT) /* an ended job's are gone: say what it may be */
				fprintf(stderr, "%s: job '%s': no trace spaces on this host (it has ended, has "
					"not started%s, or runs on other hosts: --servers)\n", prog, spec->job,
					wait_s > 0 ? " yet" : "");
			else
				fprintf(stderr, "%s: job '%s': %s\n", prog, spec->job, ps_strerror(rc));
			return 2;
		}
		mon_sleep(0.05);
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
		struct ps_remote_attr ra = { .secret_file = mon_secret_file };
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

/* --- snapshots on a trigger ----------------------------------------------------- */

/* esrecord beside this program: BIN/esrecord, as built and installed. */
static int recorder_path(char *out, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(out, len, "%s/esrecord", self);
	return access(out, X_OK) ? -1 : 0;
}

/* A file of the snapshot beside the archive, owner-only as the archive is. */
static void snapshot_file(const char *prog, const char *dir, const char *name, const char *text)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = ps_fopen_out(p, 0600);
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "%s: %s: %s\n", prog, p, strerror(errno));
		if (f)
			fclose(f);
	}
}

int mon_snapshot(const char *prog, struct mon_snapshot *sn, const char *why, const char *file,
		 const char *text)
{
	if (!sn->dir || sn->taken)
		return 0;
	sn->taken = true; /* the first time only: the moment it went wrong */
	char rec[4200];
	if (recorder_path(rec, sizeof(rec))) {
		fprintf(stderr, "%s: no snapshot: esrecord is not beside %s\n", prog, prog);
		return -ENOENT;
	}
	const char *argv[16];
	int k = 0;
	argv[k++] = "esrecord", argv[k++] = "--remains", argv[k++] = "-w", argv[k++] = "0";
	argv[k++] = "-o", argv[k++] = sn->dir;
	if (mon_servers)
		argv[k++] = "--servers", argv[k++] = mon_servers;
	if (mon_secret_file)
		argv[k++] = "--secret-file", argv[k++] = mon_secret_file;
	argv[k++] = sn->job, argv[k] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(rec, (char *const *)argv);
		_exit(127);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s: the snapshot of job %s in %s failed (esrecord above)\n", prog, sn->job,
			sn->dir);
		return -EIO;
	}
	char line[600];
	snprintf(line, sizeof(line), "%s: %s\n", prog, why);
	snapshot_file(prog, sn->dir, "TRIGGER", line);
	if (file && text)
		snapshot_file(prog, sn->dir, file, text);
	printf("%s: snapshot of job %s in %s: %s (esprofile %s; esconvert --otf2 DIR %s)\n", prog,
	       sn->job, sn->dir, why, sn->dir, sn->dir);
	fflush(stdout);
	return 0;
}

extern char **environ;

int mon_dot(const char *in, const char *fmt, const char *out)
{
	char tmp[4096], opt[16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	snprintf(opt, sizeof(opt), "-T%s", fmt);
	/* dot draws to its stdout, a file opened the safe way, which takes
	 * the picture's name once whole */
	FILE *f = ps_fopen_out(tmp, 0600);
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
	int rc = 127;
	if (!spawned && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		rc = WEXITSTATUS(st);
	if (!rc && rename(tmp, out))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

void mon_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
