/* psadm.c - lists, inspects and removes PastSet shared-memory segments. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pastset.h"

static const char *usage =
	"usage: psadm list               segments on this host, with their state\n"
	"       psadm show NAME...       a segment's elements and their counts\n"
	"       psadm rm NAME...         remove segments\n"
	"       psadm clean [--dry-run]  remove segments whose creator is gone, and\n"
	"                                ones left incomplete for over 10 s\n"
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
	int rc = ps_server_open_shm(name, PS_RDONLY, &s);
	if (rc) {
		fprintf(stderr, "psadm: %s: %s\n", name, ps_strerror(rc));
		return 1;
	}
	list_one(name, NULL);
	printf("  %-32s %6s %9s %-7s %14s %14s %10s\n", "element", "tuple", "threshold",
	       "mode", "written", "discarded", "taken");
	int n = ps_server_count(s);
	for (int i = 0; i < n; i++) {
		char en[PS_NAME_MAX + 1];
		ps_elem *e;
		struct ps_stats st;
		if (ps_server_elem_name(s, i, en) || ps_elem_open(s, en, 0, &e))
			continue;
		ps_elem_stats(e, &st);
		printf("  %-32s %6u %9u %-7s %14llu %14llu %10llu\n", en, st.tuple_size,
		       st.threshold, st.mode == PS_FLOW ? "flow" : "discard",
		       (unsigned long long)st.written, (unsigned long long)st.discarded,
		       (unsigned long long)st.taken);
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
	if (rc == PS_EBADSEG && broken_and_old(name))
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

int main(int argc, char **argv)
{
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
