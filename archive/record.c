/* record.c - the recorder's loop, shared by esrecord and esprofile: attach to a job, drain it into an archive, say what was lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/record.h"
#include "monitors/common.h"

/* A rank's record of a communicator; the rank is its trace space's .rN */
static int member(void *arg, const char *segment, const struct es_comm_rec *rec)
{
	int rank = mon_rank_of(segment);
	if (rank < 0 || (rec->k & (ES_COMMS_WINDOW | ES_COMMS_FREED)))
		return 0; /* not an MPI rank's space, a window, or a freeing */
	return ar_set_member(arg, rec->id, rec->size, rec->me, (uint32_t)rank);
}

/* Thread names and communicators as the scope knows them now. */
static int describe(ar_writer *w, const es_scope *s)
{
	int rc = 0;
	for (int i = 0; i < es_scope_leaves(s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		rc = ar_set_thread(w, l->thread, l->segment, es_scope_thread(s, l->thread));
	}
	return rc ? rc : mon_comms(s, member, w);
}

/*
 * Below the job's own processes, when its trace elements leave time to:
 * on a node whose cores the job fills, the recorder then takes time the
 * job leaves rather than preempting a rank its peers wait for (LAMMPS at
 * 2 ranks on 2 cores: 0.99 of its speed recorded, 1.035 at normal
 * priority).  Elements of a few hundred tuples (PATHS jobs' default) fill
 * in milliseconds: then it keeps its priority, and up.
 */
static void be_nice(const char *prog, const es_scope *s)
{
	for (int i = 0; i < es_scope_leaves(s); i++) {
		ps_elem *e = es_scope_leaf(s, i)->elem;
		if (!e || ps_elem_threshold(e) < 10000)
			return;
	}
	errno = 0;
	if (nice(10) == -1 && errno)
		fprintf(stderr, "%s: cannot lower its priority: %s\n", prog, strerror(errno));
}

int ar_record_job(const char *prog, const char *job, const char *dir, double period, double wait,
		  bool quiet)
{
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	mon_remote(prog, &spec);
	mon_signals();
	es_scope *s;
	int rc = mon_attach(prog, &spec, wait, &s);
	if (rc)
		return rc;
	be_nice(prog, s);
	char err[4400];
	ar_writer *w;
	if ((rc = ar_create(dir, job, &w, err, sizeof(err)))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		es_scope_destroy(s);
		return 1;
	}
	enum { MAX = 65536 };
	struct es_trace *ev = malloc(MAX * sizeof(*ev));
	if (!ev) {
		ar_abandon(w);
		es_scope_destroy(s);
		return 1;
	}
	uint64_t missed = 0;
	struct mon_watch watch = { .grace = period * 3 > 3 ? period * 3 : 3 };
	bool was_lost = false;
	int werr = 0;
	for (;;) {
		bool alive = mon_watch(prog, s, &watch);
		es_scope_refresh(s); /* ranks that started late, threads' first calls */
		int n;
		do { /* when behind, pull again at once */
			uint64_t lost;
			n = es_scope_consume(s, ev, MAX, &lost);
			if (n < 0) {
				fprintf(stderr, "%s: %s\n", prog, ps_strerror(n));
				break;
			}
			missed += lost;
			for (int i = 0; i < n && !werr; i++)
				werr = ar_write(w, &ev[i], (uint32_t)es_scope_leaf(s, es_scope_consumed_leaf(s, (size_t)i))->thread);
		} while (n == MAX && !mon_stop && !werr);
		mon_note_lost(prog, s, &was_lost);
		if (werr || n < 0 || mon_stop || !alive)
			break; /* a job that ended was drained once more above */
		/* until the job's rate is known (no events yet, or the first
		 * pull), look again soon: elements of a few hundred tuples fill
		 * in milliseconds */
		double pace = mon_pace(s, period);
		mon_sleep(isinf(es_scope_headroom(s)) && pace > 0.05 ? 0.05 : pace);
	}
	free(ev);
	if (!werr)
		werr = describe(w, s);
	uint64_t written = ar_written(w), before = es_scope_before_attach(s);
	const char *why = mon_watch_end(&watch); /* " (why)", or "" */
	char ended[320];
	snprintf(ended, sizeof(ended), "%s", *why ? why + 2 : "the job ended");
	if (*why)
		ended[strlen(ended) - 1] = 0;
	if (werr) {
		fprintf(stderr, "%s: %s/events: %s; the archive is incomplete (no INFO)\n", prog, dir,
			strerror(-werr));
		ar_abandon(w);
		es_scope_destroy(s);
		return 1;
	}
	if ((rc = ar_finish(w, missed, before, ended, err, sizeof(err)))) {
		fprintf(stderr, "%s: %s; the archive is incomplete (no INFO)\n", prog, err);
		es_scope_destroy(s);
		return 1;
	}
	if (!quiet || missed || before) {
		fprintf(stderr, "%s: %llu events written to %s, %llu discarded before they could be read",
			prog, (unsigned long long)written, dir, (unsigned long long)missed);
		if (before)
			fprintf(stderr, "; %llu earlier events had rotated out before it attached",
				(unsigned long long)before);
		fprintf(stderr, "%s\n", why);
	}
	es_scope_destroy(s);
	return 0;
}
