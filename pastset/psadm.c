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
#include "trace/trace.h" /* es_job_ok: the one rule for job names */

static const char *usage =
	"usage: psadm list               segments on this host, with their state\n"
	"       psadm list HOST:PORT [PREFIX]  segments a tuple server serves\n"
	"       psadm show NAME...       a segment's elements and their counts\n"
	"                                (HOST:PORT/NAME: one a tuple server serves)\n"
	"       psadm rm NAME...         remove segments, or a job's (its name: every segment\n"
	"                                of it whose process has ended)\n"
	"       psadm clean [--dry-run] [--all] [PREFIX]  remove what the keep policy lets go\n"
	"                                (PREFIX: only segments whose names start with it, a job's):\n"
	"                                ended jobs' segments (unless keep: always), those\n"
	"                                of jobs that died only with keep: never, and ones\n"
	"                                left incomplete for over 10 s; --all: every one\n"
	"                                whose creator is gone; and the notes of your\n"
	"                                monitors that died waiting for their jobs\n"
	"       psadm serve PREFIX [--addr A] [--port P] [--secret-file F] [--writable]\n"
	"                  [--port-file F]  the node daemon: serves this host's segments\n"
	"                                whose names start with PREFIX over TCP, on\n"
	"                                127.0.0.1 unless --addr (which needs a secret)\n"
	"       psadm --help | --version\n"
	"Remote commands read the shared secret from $PS_SECRET_FILE if set.\n"
	"A segment is live while its creator runs, closed once it exited cleanly,\n"
	"and stale if it died without closing; closed and stale ones stay readable\n"
	"until removed.  The keep policy (ES_KEEP, esrun --keep, a pathmap's trace:\n"
	"keep:) is " PS_KEEP_RULE ":\n"
	"a job's last process to end cleanly removes its segments unless kept always.\n";

static const char *state_name(enum ps_shm_state s)
{
	switch (s) {
	case PS_SHM_LIVE: return "live";
	case PS_SHM_CLOSED: return "closed";
	case PS_SHM_STALE: return "stale";
	}
	return "?";
}

static void print_segment(const char *name, int rc, const struct ps_shm_info *in)
{
	if (rc)
		printf("%-40s  (%s)\n", name, ps_strerror(rc));
	else
		printf("%-40s %10.1f MiB %9.1f MiB used %6u elems  pid %-7d %-6s keep: %s\n", name,
		       in->size / 1048576.0, in->used / 1048576.0, in->elems, in->creator_pid,
		       state_name(in->state), ps_keep_name(in->keep));
}

static int list_one(const char *name, void *arg)
{
	(void)arg;
	struct ps_shm_info in;
	print_segment(name, ps_shm_info(name, &in), &in);
	return 0;
}

/* --- psadm list: this host's segments, by job ------------------------------------ */

struct seg {
	char name[PS_NAME_MAX + 1];
	int rc;
	struct ps_shm_info in;
};
struct segs {
	struct seg *v;
	int n, cap;
};

static int gather(const char *name, void *arg)
{
	struct segs *g = arg;
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		struct seg *v = realloc(g->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return PS_ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	struct seg *s = &g->v[g->n++];
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->rc = ps_shm_info(name, &s->in);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct seg *)a)->name, ((const struct seg *)b)->name);
}

/* A segment's job: its name up to the last dot (JOB.r3, JOB.t0, JOB.HOST). */
static size_t job_len(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot ? (size_t)(dot - name) : strlen(name);
}

/* The job's line: live while a process of it runs; died when one left its
 * segment without closing it (its remains kept or not, by policy); ended. */
static void print_job(const struct seg *v, int n)
{
	int live = 0, stale = 0, other = 0;
	uint64_t size = 0, used = 0;
	for (int i = 0; i < n; i++) {
		if (v[i].rc) {
			other++;
			continue;
		}
		live += v[i].in.state == PS_SHM_LIVE;
		stale += v[i].in.state == PS_SHM_STALE;
		size += v[i].in.size;
		used += v[i].in.used;
	}
	printf("job %.*s: ", (int)job_len(v[0].name), v[0].name);
	if (live)
		printf("live, %d of %d segments' processes running", live, n);
	else if (stale) {
		printf("died: ");
		for (int i = 0, k = 0; i < n; i++)
			if (!v[i].rc && v[i].in.state == PS_SHM_STALE)
				printf("%s%s (pid %d)", k++ ? ", " : "", v[i].name, v[i].in.creator_pid);
		printf(" gone without closing; its remains are kept");
		if (v[0].in.keep == PS_KEEP_NEVER)
			printf(" until psadm clean");
		else
			printf(" (psadm rm %.*s removes them)", (int)job_len(v[0].name), v[0].name);
	} else if (other == n)
		printf("not readable");
	else
		printf("ended%s %.*s%s", v[0].in.keep == PS_KEEP_ALWAYS ? ", kept (keep: always; psadm rm" :
		       " (psadm clean", (int)job_len(v[0].name), v[0].name, " removes it)");
	printf("; %.1f MiB in memory of %.1f MiB\n", used / 1048576.0, size / 1048576.0);
}

static int list_local(void)
{
	struct segs g = { 0 };
	int rc = ps_shm_list(gather, &g);
	if (rc) {
		fprintf(stderr, "psadm: listing /dev/shm: %s\n", ps_strerror(rc));
		free(g.v);
		return 1;
	}
	if (g.n) /* qsort must not be given NULL, even for nothing */
		qsort(g.v, (size_t)g.n, sizeof(*g.v), by_name);
	for (int i = 0, j; i < g.n; i = j) {
		size_t jl = job_len(g.v[i].name);
		for (j = i + 1; j < g.n && job_len(g.v[j].name) == jl && !strncmp(g.v[i].name, g.v[j].name, jl); j++)
			;
		print_job(&g.v[i], j - i);
		for (int k = i; k < j; k++)
			print_segment(g.v[k].name, g.v[k].rc, &g.v[k].in);
	}
	free(g.v);
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

struct job_rm {
	const char *job;
	int found, live, status;
};

static int rm_of_job(const char *name, void *arg)
{
	struct job_rm *j = arg;
	size_t n = strlen(j->job);
	if (strncmp(name, j->job, n) || name[n] != '.' || job_len(name) != n)
		return 0; /* another job's, or one whose name only begins with it */
	struct ps_shm_info in;
	j->found++;
	if (!ps_shm_info(name, &in) && in.state == PS_SHM_LIVE) {
		printf("kept %s: its process runs\n", name);
		j->live++;
		return 0;
	}
	j->status |= rm(name);
	return 0;
}

/* psadm rm NAME: a segment, or a job by the name users type (every
 * segment of it but those whose process still runs). */
static int rm_name(const char *name)
{
	struct ps_shm_info in;
	int rc = ps_shm_info(name, &in);
	if (rc != PS_ENOENT)
		return rm(name);
	struct job_rm j = { name, 0, 0, 0 };
	ps_shm_list(rm_of_job, &j);
	if (!j.found) {
		fprintf(stderr, "psadm: %s: no segment and no job of that name (psadm list)\n", name);
		return 1;
	}
	return j.status;
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

struct clean {
	bool dry, all;
	const char *prefix; /* only segments whose names start with it (a job's): NULL, every one */
};

/* What psadm clean does with a segment: removed, or why it stays (the keep
 * policy: closed ones go unless kept always; a dead job's remains stay
 * unless keep: never, or --all). */
static int clean_one(const char *name, void *arg)
{
	const struct clean *c = arg;
	if (c->prefix && strncmp(name, c->prefix, strlen(c->prefix)))
		return 0; /* another job's: not asked about */
	struct ps_shm_info in;
	int rc = ps_shm_info(name, &in);
	const char *why;
	if ((rc == PS_EBADSEG || rc == PS_EPARTIAL) && broken_and_old(name))
		why = "incomplete";
	else if (rc || in.state == PS_SHM_LIVE)
		return 0;
	else if (in.state == PS_SHM_STALE && in.keep != PS_KEEP_NEVER && !c->all) {
		printf("kept %s: its process died; the job's remains (psadm rm %.*s removes them)\n", name,
		       (int)job_len(name), name);
		return 0;
	} else if (in.state == PS_SHM_CLOSED && in.keep == PS_KEEP_ALWAYS && !c->all) {
		printf("kept %s: keep: always (psadm rm %.*s removes it)\n", name, (int)job_len(name), name);
		return 0;
	} else
		why = state_name(in.state);
	if (c->dry)
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
		else if (!strcmp(argv[i], "--port") && more) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || v < 0 || v > 65535) {
				fprintf(stderr, "psadm: serve: --port '%s': expected a port number, 1 to 65535 "
					"(0: any free one)\n", argv[i]);
				return 2;
			}
			a.port = (int)v;
		}
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
	if (pl && a.shm_prefix[pl - 1] == '.' && !es_job_ok(job)) {
		fprintf(stderr, "psadm: serve %s: no job can be called '%s' (expected %s)\n", a.shm_prefix,
			job, ES_JOB_RULE);
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
		FILE *f = base_fopen_out(tmp, 0644);
		if (!f || fprintf(f, "%d\n", ps_tcp_port(t)) < 0 || fclose(f) || rename(tmp, port_file))
			fprintf(stderr, "psadm: %s: cannot write the port\n", port_file);
	}
	while (!stop)
		pause();
	struct ps_tcp_counts c;
	ps_tcp_counts(t, &c);
	ps_tcp_stop(t);
	printf("psadm: served %llu requests on %llu connections; dropped %llu malformed, %llu "
	       "refused, %llu slow; held %llu handshakes of clients guessing the secret\n",
	       (unsigned long long)c.frames, (unsigned long long)c.accepted, (unsigned long long)c.bad,
	       (unsigned long long)c.refused, (unsigned long long)c.slow, (unsigned long long)c.held);
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
		status = list_local();
	} else if (!strcmp(cmd, "list") && (argc == 3 || argc == 4)) {
		status = remote_list(argv[2], argc == 4 ? argv[3] : NULL);
	} else if (!strcmp(cmd, "serve") && argc > 2) {
		status = serve(argc, argv);
	} else if (!strcmp(cmd, "show") && argc > 2) {
		for (int i = 2; i < argc; i++)
			status |= show(argv[i]);
	} else if (!strcmp(cmd, "rm") && argc > 2) {
		for (int i = 2; i < argc; i++)
			status |= rm_name(argv[i]);
	} else if (!strcmp(cmd, "clean")) {
		struct clean c = { 0 };
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--dry-run"))
				c.dry = true;
			else if (!strcmp(argv[i], "--all"))
				c.all = true;
			else if (argv[i][0] != '-' && !c.prefix && !ps_name_check(argv[i]))
				c.prefix = argv[i];
			else {
				fprintf(stderr, "psadm: clean: unexpected '%s' (expected --dry-run, --all and at most one "
					"PREFIX of a segment's name)\n%s", argv[i], usage);
				return 2;
			}
		}
		ps_shm_list(clean_one, &c);
		int notes = c.dry ? 0 : ps_shm_expect_sweep(); /* a killed monitor's note waits for nothing */
		if (notes > 0)
			printf("removed %d note%s of monitors that died waiting for their jobs\n", notes,
			       notes == 1 ? "" : "s");
	} else {
		fprintf(stderr, "psadm: expected list, show NAME..., rm NAME..., clean or serve PREFIX, got '%s'\n%s",
			cmd, usage);
		return 2;
	}
	return status;
}
