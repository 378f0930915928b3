/* psadm.c - lists, inspects and removes PastSet segments, and serves a host's segments over TCP (the node daemon). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pastset.h"
#include "pathmaps/pathmaps.h" /* pm_job_ok: the one rule for job names, inline */

static const char *usage =
	"usage: psadm list               segments on this host, with their state\n"
	"       psadm list HOST:PORT [PREFIX]  segments a tuple server serves\n"
	"       psadm show NAME...       a segment's elements and their counts\n"
	"                                (HOST:PORT/NAME: one a tuple server serves)\n"
	"       psadm rm NAME...         remove segments\n"
	"       psadm clean [--dry-run]  remove segments whose creator is gone, and\n"
	"                                ones left incomplete for over 10 s\n"
	"       psadm serve PREFIX [--addr A] [--port P] [--secret-file F] [--writable]\n"
	"                  [--port-file F]  the node daemon: serves this host's segments\n"
	"                                whose names start with PREFIX over TCP, on\n"
	"                                127.0.0.1 unless --addr (which needs a secret)\n"
	"       psadm --help | --version\n"
	"Remote commands read the shared secret from $PS_SECRET_FILE if set.\n"
	"A segment is live while its creator runs, closed once it exited cleanly,\n"
	"and stale if it died without closing; closed and stale ones stay readable\n"
	"until removed.\n";

static const char *state_name(enum ps_shm_state s)
{
	switch (s) {
	case PS_SHM_LIVE: return "live";
	case PS_SHM_CLOSED: return "closed";
	case PS_SHM_STALE: return "stale";
	}
	return "?";
}

static int list_one(const char *name, void *arg)
{
	(void)arg;
	struct ps_shm_info in;
	int rc = ps_shm_info(name, &in);
	if (rc)
		printf("%-40s  (%s)\n", name, ps_strerror(rc));
	else
		printf("%-40s %10.1f MiB %6u elems  pid %-7d %s\n", name,
		       in.size / 1048576.0, in.elems, in.creator_pid, state_name(in.state));
	return 0;
}

static int show(const char *name)
{
	ps_server *s;
	struct ps_remote_attr ra = { .secret_file = getenv("PS_SECRET_FILE") };
	int rc = ps_server_open_at(name, PS_RDONLY, &ra, &s);
	if (rc) {
		fprintf(stderr, "psadm: %s: %s\n", name, ps_strerror(rc));
		return 1;
	}
	if (strchr(name, ':'))
		printf("%s\n", name);
	else
		list_one(name, NULL);
	printf("  %-32s %6s %9s %-7s %14s %14s %10s\n", "element", "tuple", "threshold",
	       "mode", "written", "discarded", "taken");
	/* only a writer that is gone leaves a write unfinished for good */
	struct ps_shm_info info;
	bool gone = !strchr(name, ':') && !ps_shm_info(name, &info) && info.state != PS_SHM_LIVE;
	int n = ps_server_count(s);
	for (int i = 0; i < n; i++) {
		char en[PS_NAME_MAX + 1];
		ps_elem *e;
		struct ps_stats st;
		if (ps_server_elem_name(s, i, en) || ps_elem_open(s, en, 0, &e))
			continue;
		ps_elem_stats(e, &st);
		printf("  %-32s %6u %9u %-7s %14llu %14llu %10llu\n", en, st.tuple_size,
		       st.threshold, st.mode == PS_FLOW ? "flow" : st.mode == PS_BOARD ? "board" : "discard",
		       (unsigned long long)st.written, (unsigned long long)st.discarded,
		       (unsigned long long)st.taken);
		if (gone && st.unfinished)
			printf("    tuple %llu: its writer died writing it; skipped, the rest are whole\n",
			       (unsigned long long)st.written);
		ps_elem_close(e);
	}
	ps_server_destroy(s);
	return 0;
}

static int rm(const char *name)
{
	int rc = ps_shm_unlink(name);
	if (rc) {
		fprintf(stderr, "psadm: %s: %s\n", name, ps_strerror(rc));
		return 1;
	}
	printf("removed %s\n", name);
	return 0;
}

/* A segment whose creator died before finishing its header never becomes
 * readable; once it has sat unchanged for a while, it is debris. */
static bool broken_and_old(const char *name)
{
	char path[128];
	struct stat st;
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", name);
	return !stat(path, &st) && time(NULL) - st.st_mtime > 10;
}

static int clean_one(const char *name, void *arg)
{
	int dry = *(int *)arg;
	struct ps_shm_info in;
	int rc = ps_shm_info(name, &in);
	const char *why;
	if ((rc == PS_EBADSEG || rc == PS_EPARTIAL) && broken_and_old(name))
		why = "incomplete";
	else if (rc || in.state == PS_SHM_LIVE)
		return 0;
	else
		why = state_name(in.state);
	if (dry)
		printf("would remove %s (%s)\n", name, why);
	else
		rm(name);
	return 0;
}

static int print_name(const char *name, void *arg)
{
	(void)arg;
	printf("%s\n", name);
	return 0;
}

static int remote_list(const char *where, const char *prefix)
{
	char host[256], seg[PS_NAME_MAX + 1];
	int port, rc = ps_locator_parse(where, host, sizeof(host), &port, seg);
	struct ps_remote_attr ra = { .secret_file = getenv("PS_SECRET_FILE") };
	if (!rc)
		rc = ps_remote_list(host, port, &ra, prefix ? prefix : "", print_name, NULL);
	if (rc)
		fprintf(stderr, "psadm: %s: %s\n", where, ps_strerror(rc));
	return rc ? 1 : 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int serve(int argc, char **argv)
{
	struct ps_tcp_attr a = { .shm_prefix = argv[2] };
	const char *port_file = NULL;
	for (int i = 3; i < argc; i++) {
		bool more = i + 1 < argc;
		if (!strcmp(argv[i], "--addr") && more)
			a.addr = argv[++i];
		else if (!strcmp(argv[i], "--port") && more)
			a.port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--secret-file") && more)
			a.secret_file = argv[++i];
		else if (!strcmp(argv[i], "--port-file") && more)
			port_file = argv[++i];
		else if (!strcmp(argv[i], "--writable"))
			a.shm_writable = true;
		else {
			fprintf(stderr, "psadm: serve: unknown option '%s'\n%s", argv[i], usage);
			return 2;
		}
	}
	/* "JOB.": a job's segments, under the rule every other tool holds job names to */
	size_t pl = strlen(a.shm_prefix);
	char job[PS_NAME_MAX + 1];
	snprintf(job, sizeof(job), "%.*s", pl ? (int)(pl - 1) : 0, a.shm_prefix);
	if (pl && a.shm_prefix[pl - 1] == '.' && !pm_job_ok(job)) {
		fprintf(stderr, "psadm: serve %s: no job can be called '%s' (expected %s)\n", a.shm_prefix,
			job, PM_JOB_RULE);
		return 2;
	}
	char why[128];
	if (a.secret_file && ps_secret_check(a.secret_file, why, sizeof(why))) {
		fprintf(stderr, "psadm: serve: --secret-file %s: %s\n", a.secret_file, why);
		return 2;
	}
	ps_tcp *t;
	int rc = ps_tcp_start(&a, &t);
	if (rc) {
		fprintf(stderr, "psadm: serve on %s:%d: %s%s\n", a.addr ? a.addr : "127.0.0.1", a.port,
			ps_strerror(rc), rc == PS_EACCES && !a.secret_file ?
			" (an address off loopback needs --secret-file)" : "");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("psadm: serving segments %s* on %s:%d\n", a.shm_prefix, a.addr ? a.addr : "127.0.0.1",
	       ps_tcp_port(t));
	fflush(stdout);
	if (port_file) {
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
		FILE *f = ps_fopen_out(tmp, 0644);
		if (!f || fprintf(f, "%d\n", ps_tcp_port(t)) < 0 || fclose(f) || rename(tmp, port_file))
			fprintf(stderr, "psadm: %s: cannot write the port\n", port_file);
	}
	while (!stop)
		pause();
	struct ps_tcp_counts c;
	ps_tcp_counts(t, &c);
	ps_tcp_stop(t);
	printf("psadm: served %llu requests on %llu connections; dropped %llu malformed, %llu "
	       "refused, %llu slow\n", (unsigned long long)c.frames, (unsigned long long)c.accepted,
	       (unsigned long long)c.bad, (unsigned long long)c.refused, (unsigned long long)c.slow);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("psadm (EventSpace) " ES_VERSION);
		return 0;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	int status = 0;
	if (!strcmp(cmd, "list") && argc == 2) {
		int rc = ps_shm_list(list_one, NULL);
		if (rc) {
			fprintf(stderr, "psadm: listing /dev/shm: %s\n", ps_strerror(rc));
			return 1;
		}
	} else if (!strcmp(cmd, "list") && (argc == 3 || argc == 4)) {
		status = remote_list(argv[2], argc == 4 ? argv[3] : NULL);
	} else if (!strcmp(cmd, "serve") && argc > 2) {
		status = serve(argc, argv);
	} else if (!strcmp(cmd, "show") && argc > 2) {
		for (int i = 2; i < argc; i++)
			status |= show(argv[i]);
	} else if (!strcmp(cmd, "rm") && argc > 2) {
		for (int i = 2; i < argc; i++)
			status |= rm(argv[i]);
	} else if (!strcmp(cmd, "clean") && (argc == 2 ||
		   (argc == 3 && !strcmp(argv[2], "--dry-run")))) {
		int dry = argc == 3;
		ps_shm_list(clean_one, &dry);
	} else {
		fprintf(stderr, "psadm: bad command line\n%s", usage);
		return 2;
	}
	return status;
}
