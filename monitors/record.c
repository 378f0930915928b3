/* record.c - the recorder, shared by esrecord, esprofile and every monitor's snapshot: attach to a job, drain it into an archive, say what was lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"

/*
 * A tuple's communicator, as its rank's serial names it at the tuple's
 * start, becomes the archive's number for it, given in the order met; at
 * the end each numbered one is written with its members as the ranks
 * listed them.
 */
struct numbering {
	uint64_t *ids; /* by number */
	int n, cap;
	/* the last tuple's: a thread's tuples come in order, mostly on one
	 * communicator, and the same serial bits later name the same one
	 * (a serial's low 16 bits come round only after 65,536 more) */
	int rank;
	uint16_t serial;
	uint16_t number;
	uint64_t start;
};

static int number_of(struct numbering *nb, uint64_t id)
{
	for (int i = nb->n; i-- > 0;) /* the latest first: a run uses a few at a time */
		if (nb->ids[i] == id)
			return i;
	if (nb->n >= (int)ES_COMM_NONE)
		return ES_COMM_NONE;
	if (nb->n == nb->cap) {
		int cap = nb->cap ? nb->cap * 2 : 16;
		uint64_t *ids = realloc(nb->ids, sizeof(*ids) * (size_t)cap);
		if (!ids)
			return ES_COMM_NONE;
		nb->ids = ids;
		nb->cap = cap;
	}
	nb->ids[nb->n] = id;
	return nb->n++;
}

/* The tuple of an MPI rank's thread, its communicator numbered. */
static void renumber(es_mpi *m, struct numbering *nb, int rank, struct es_trace *t)
{
	if (rank < 0 || es_op_code(t->op) < ES_OP_MPI_INIT || t->comm == ES_COMM_NONE)
		return;
	if (rank == nb->rank && t->comm == nb->serial && t->start >= nb->start) {
		nb->start = t->start;
		t->comm = nb->number;
		return;
	}
	const struct es_mpi_comm *c = es_mpi_comm_of(m, rank, t->comm, 0xffff, t->start, NULL);
	uint16_t serial = t->comm;
	t->comm = c ? (uint16_t)number_of(nb, c->id) : ES_COMM_NONE;
	*nb = (struct numbering){ nb->ids, nb->n, nb->cap, rank, serial, t->comm, t->start };
}

/* A frame of a rank's: the module it lies in, and what DWARF says of it there. */
static struct ar_frame frame_of(ar_symbols *sym, const struct es_module_rec *mods, int nmods, uint64_t pc)
{
	struct ar_frame f = { .offset = pc };
	for (int i = 0; i < nmods; i++)
		if (pc >= mods[i].base && pc < mods[i].end) {
			f.module = mods[i].path;
			f.offset = pc - mods[i].base;
			break;
		}
	struct ar_symbol s;
	if (f.module && !ar_symbols_lookup(sym, f.module, f.offset, &s)) {
		f.function = s.function;
		f.file = s.file;
		f.line = s.line;
	}
	return f;
}

/*
 * A recording's state.  Invariants: the archive exists (ar_create) before
 * the recorder attaches, so that a recorder killed at any moment leaves
 * one (writer.c's invariants say what it holds then); every thread is
 * named to w before its first event is given to it; every event consumed
 * is given to w in the order consumed (a thread's in its order); what describe has said
 * (sites, phases' and files' names, by number) is never said again, as
 * the writer takes each once; a death is said once.
 */
struct rec {
	mh_set *mh;           /* --handler's: every event consumed is given to them too */
	const char *prog;
	es_scope *s;
	es_mpi *m;
	ar_writer *w;
	struct numbering nb;
	ar_symbols *sym;        /* NULL: no call site is named */
	int *sites_said;        /* by thread: sites below it described */
	int nsaid_threads;
	/* by rank, nranks of each: */
	int *regions_said, *files_said; /* phases and files below it described */
	uint64_t *last_end;     /* its latest event's end */
	bool *dead;             /* said to have died */
	int nranks;
	uint64_t missed;
	double checkpointed;    /* mon_now() of the last checkpoint */
};

/* *v (of *n ints, or bytes) grown to hold i, zeroed */
static int hold(void **v, int *n, int i, size_t each)
{
	if (i < *n)
		return 0;
	int cap = i + 16;
	char *g = realloc(*v, each * (size_t)cap);
	if (!g)
		return -ENOMEM;
	memset(g + each * (size_t)*n, 0, each * (size_t)(cap - *n));
	*v = g;
	*n = cap;
	return 0;
}

/* The by-rank arrays grown to hold rank. */
static int hold_ranks(struct rec *r, int rank)
{
	if (rank < r->nranks)
		return 0;
	int n[4] = { r->nranks, r->nranks, r->nranks, r->nranks };
	int rc = hold((void **)&r->dead, &n[0], rank, 1);
	if (!rc)
		rc = hold((void **)&r->last_end, &n[1], rank, sizeof(uint64_t));
	if (!rc)
		rc = hold((void **)&r->regions_said, &n[2], rank, sizeof(int));
	if (!rc)
		rc = hold((void **)&r->files_said, &n[3], rank, sizeof(int));
	if (!rc)
		r->nranks = n[0]; /* each grew from nranks to the same cap */
	return rc;
}

/* Each MPI thread's call sites not said yet, their frames named where the files still are. */
static int describe_sites(struct rec *r)
{
	int rc = 0;
	for (int t = 0; r->m && r->sym && t < es_scope_threads(r->s) && !rc; t++) {
		int rank = es_mpi_rank_of(r->m, t);
		const struct es_site_rec *sites;
		const struct es_module_rec *mods;
		int n = rank < 0 ? 0 : es_mpi_sites(r->m, t, &sites);
		if (n <= 1 || (rc = hold((void **)&r->sites_said, &r->nsaid_threads, t, sizeof(int))))
			continue;
		int nmods = es_mpi_modules(r->m, rank, &mods);
		for (int id = r->sites_said[t] ? r->sites_said[t] : 1; id < n && !rc; id++) {
			uint32_t k = sites[id].frames;
			if (k == 0 || k > ES_SITE_FRAMES)
				break; /* not written whole yet: said at a later checkpoint */
			struct ar_frame fr[ES_SITE_FRAMES];
			for (uint32_t i = 0; i < k; i++)
				fr[i] = frame_of(r->sym, mods, nmods > 0 ? nmods : 0, sites[id].pc[i]);
			if (!(rc = ar_set_site(r->w, t, id, fr, (int)k)))
				r->sites_said[t] = id + 1;
		}
	}
	return rc;
}

/* A rank's phases' or files' names from *said on (numbers given in order). */
static int describe_names(struct rec *r, int rank, bool files)
{
	struct es_region_rec *names;
	struct es_file_rec *fnames;
	int *said = files ? &r->files_said[rank] : &r->regions_said[rank];
	int n = files ? es_mpi_files(r->m, rank, &fnames) : es_mpi_regions(r->m, rank, &names);
	int rc = 0;
	for (int id = *said ? *said : 1; id < n && !rc; id++) {
		if (files ? !fnames[id].used : !names[id].used)
			break;
		rc = files ? ar_set_file(r->w, rank, (uint32_t)id, fnames[id].name)
			   : ar_set_region(r->w, rank, (uint32_t)id, names[id].name);
		*said = id + 1;
	}
	return rc;
}

/* A rank's clock points as it wrote them so far (those a look missed,
 * rotated out since, are lost; each kept once it was seen), and how this
 * recorder put its stamps on its own clock. */
static int describe_clock(struct rec *r, int rank)
{
	struct es_mpi_sync pts[ES_SYNC_SLOTS];
	int64_t shift = 0;
	int n = es_mpi_clock(r->m, rank, pts, &shift), rc = 0;
	if (n <= 0)
		return 0; /* a collector of before clock points */
	rc = ar_set_clock_shift(r->w, rank, shift);
	for (int i = 0; i < n && !rc; i++) {
		struct ar_sync s = { .rank = rank, .kind = pts[i].r.kind, .serial = pts[i].r.serial,
				     .at_ns = pts[i].at_ns, .offset_ns = pts[i].r.offset_ns, .rtt_ns = pts[i].r.rtt_ns };
		rc = ar_add_sync(r->w, &s);
	}
	return rc;
}

/* Each rank's process, as it described itself at MPI_Init, its phases' and files' names. */
static int describe_ranks(struct rec *r)
{
	int rc = 0;
	for (int k = 0; r->m && k < es_mpi_ranks(r->m) && !rc; k++) {
		struct es_proc_rec p;
		uint64_t at;
		if ((rc = hold_ranks(r, k)))
			break;
		if (es_mpi_process(r->m, k, &p, &at))
			continue;
		struct ar_rank a = { .rank = k, .pid = p.pid, .wall_ns = p.wall_ns, .ns = at };
		snprintf(a.host, sizeof(a.host), "%s", p.host);
		snprintf(a.cmd, sizeof(a.cmd), "%s", p.cmd);
		if (!(rc = ar_set_rank(r->w, &a)))
			rc = describe_names(r, k, false);
		if (!rc)
			rc = describe_names(r, k, true);
		if (!rc)
			rc = describe_clock(r, k);
	}
	return rc;
}

/* Every thread the scope knows, named: before its first tuple is written,
 * so that the archive's threads file lists every thread its events file
 * holds a record of (the writer writes it before the records). */
static int name_threads(struct rec *r)
{
	int rc = 0;
	for (int i = 0; i < es_scope_leaves(r->s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(r->s, i);
		rc = ar_set_thread(r->w, l->thread, l->segment, es_scope_thread(r->s, l->thread));
	}
	return rc;
}

/* Thread names and communicators as the scope and the ranks know them now. */
static int describe(struct rec *r)
{
	int rc = name_threads(r);
	if (r->m)
		es_mpi_refresh(r->m);
	for (int n = 0; n < r->nb.n && !rc; n++) {
		const struct es_mpi_comm *c = r->m ? es_mpi_comm(r->m, r->nb.ids[n]) : NULL;
		uint32_t none[2] = { 0, 0 };
		const int *const nomembers[2] = { NULL, NULL };
		rc = c ? ar_set_comm(r->w, n, c->id, c->flags, c->size, c->members)
		       : ar_set_comm(r->w, n, r->nb.ids[n], 0, none, nomembers);
	}
	if (!rc)
		rc = describe_ranks(r);
	return rc ? rc : describe_sites(r);
}

/* The ranks whose processes died (their segments left unclosed), each said once. */
static int watch_deaths(struct rec *r)
{
	const char *seen = NULL;
	int rc = 0;
	for (int i = 0; i < es_scope_leaves(r->s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(r->s, i);
		if (l->rank < 0 || (seen && !strcmp(seen, l->segment)))
			continue;
		seen = l->segment;
		if ((rc = hold_ranks(r, l->rank)))
			break;
		struct ps_remote_attr ra = mon_ra();
		if (r->dead[l->rank] || ps_state_at(l->segment, &ra) != PS_SHM_STALE)
			continue;
		struct es_proc_rec p;
		uint64_t at;
		struct ar_death d = { .rank = l->rank, .pid = -1, .last_ns = r->last_end[l->rank],
				      .seen_ns = base_now_ns() };
		if (r->m && !es_mpi_process(r->m, l->rank, &p, &at))
			d.pid = p.pid, d.signal = p.fatal;
		r->dead[l->rank] = true;
		fprintf(stderr, "%s: rank %d (pid %d) died", r->prog, d.rank, d.pid);
		if (d.signal)
			fprintf(stderr, " of signal %d (SIG%s)", d.signal, sigabbrev_np(d.signal) ?
				sigabbrev_np(d.signal) : "?");
		fprintf(stderr, "; its events up to then are kept\n");
		rc = ar_set_died(r->w, &d);
	}
	return rc;
}

/* The calls threads were inside and had not returned from (every thread's,
 * or only dead ranks'): an event each, ES_OP_UNFINISHED, ending now. */
static int add_unfinished(struct rec *r, bool all)
{
	int rc = 0;
	uint64_t now = base_now_ns();
	for (int t = 0; t < es_scope_threads(r->s) && !rc; t++) {
		struct es_flight f;
		if (!es_scope_in_flight(r->s, t, &f))
			continue;
		const struct es_leaf *l = es_scope_leaf(r->s, f.leaf);
		if (!all && (l->rank < 0 || l->rank >= r->nranks || !r->dead[l->rank]))
			continue;
		struct es_trace e = { .start = now > f.since_ns ? now - f.since_ns : 0, .end = now,
				      .op = (uint16_t)(f.op | ES_OP_UNFINISHED), .element = f.element,
				      .arg = (uint32_t)f.arg, .comm = (uint16_t)f.comm };
		if (r->m)
			renumber(r->m, &r->nb, l->rank, &e);
		else if (l->rank >= 0 && es_op_code(e.op) >= ES_OP_MPI_INIT)
			e.comm = ES_COMM_NONE;
		rc = ar_write(r->w, &e, (uint32_t)t);
	}
	return rc;
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

/* What the job's elements hold now, into the archive; 0, or -errno of the
 * write (an error reading was said, and ends it as well: *n < 0). */
static int drain(struct rec *r, struct es_trace *ev, int max, int *n)
{
	int werr = 0;
	do { /* when behind, pull again at once */
		uint64_t lost;
		*n = es_scope_consume(r->s, ev, (size_t)max, &lost);
		if (*n < 0) {
			fprintf(stderr, "%s: %s\n", r->prog, ps_strerror(*n));
			break;
		}
		r->missed += lost;
		mh_feed(r->mh, r->s, ev, *n); /* before the renumbering: as read */
		if (r->m) /* the communicators these tuples name are listed by now */
			es_mpi_refresh(r->m);
		r->nb.rank = -1; /* what the refresh made known may name the serial anew */
		/* a leaf's tuples come together (by_leaf): a run at a time */
		for (int i = 0, j; i < *n && !werr; i = j) {
			const struct es_leaf *l = es_scope_leaf(r->s, es_scope_consumed_leaf(r->s, (size_t)i));
			for (j = i; j < *n && es_scope_consumed_leaf(r->s, (size_t)j) ==
					       es_scope_consumed_leaf(r->s, (size_t)i); j++) {
				if (r->m)
					renumber(r->m, &r->nb, l->rank, &ev[j]);
				else if (l->rank >= 0 && es_op_code(ev[j].op) >= ES_OP_MPI_INIT)
					ev[j].comm = ES_COMM_NONE;
			}
			if (l->rank >= 0 && !(werr = hold_ranks(r, l->rank)) &&
			    ev[j - 1].end > r->last_end[l->rank])
				r->last_end[l->rank] = ev[j - 1].end;
			if (!werr)
				werr = ar_write_run(r->w, &ev[i], (size_t)(j - i), (uint32_t)l->thread);
		}
	} while (*n == max && !mon_stop && !werr);
	return werr;
}

/* A checkpoint: what is known now said, and on disk (ar_checkpoint). */
static int checkpoint(struct rec *r, char *err, size_t errlen)
{
	int rc = watch_deaths(r);
	if (!rc)
		rc = describe(r);
	if (rc)
		return snprintf(err, errlen, "%s", strerror(-rc)), rc;
	struct ar_end end = { .lost = r->missed, .before = es_scope_before_attach(r->s),
			      .until_ns = base_now_ns() };
	r->checkpointed = mon_now();
	return ar_checkpoint(r->w, &end, err, errlen);
}

static void rec_free(struct rec *r)
{
	es_mpi_close(r->m);
	ar_symbols_destroy(r->sym);
	free(r->nb.ids);
	free(r->sites_said), free(r->regions_said), free(r->files_said);
	free(r->last_end), free(r->dead);
	es_scope_destroy(r->s);
}

/* How often a recorder checkpoints, and the longest it sleeps: an event
 * is in the archive on disk within a second of being written. */
#define CHECKPOINT_S 0.25
#define LONGEST_SLEEP_S 0.5

/* Whether the view of the ranks misses a rank the scope knows: one
 * opened before a rank had said its number (a job whose ranks start as
 * the recorder attaches) would leave the archive without its ranks,
 * communicators and sites. */
static bool mpi_behind(const struct rec *r)
{
	for (int i = 0; i < es_scope_leaves(r->s); i++) {
		const struct es_leaf *l = es_scope_leaf(r->s, i);
		if (l->rank >= 0 && es_mpi_rank_of(r->m, l->thread) < 0)
			return true;
	}
	return false;
}

static void mpi_reopen(struct rec *r)
{
	es_mpi_close(r->m);
	if (es_mpi_open(r->s, &r->m))
		r->m = NULL;
}

/* What the loop keeps between pulls. */
struct pulls {
	struct rec *r;
	const struct mon_record_opts *o;
	struct mon_watch *watch;
	struct es_trace *ev;
	bool was_lost;
	int rc;
	char *err;
	size_t errlen;
};
enum { PULL_MAX = 4096 }; /* a pull that stays in cache: its tuples are copied twice more */

/* One pull, drained into the archive, a checkpoint when due; the next when
 * the scope's headroom says, or MON_END (the job ended and was drained, a
 * write failed, remains' one pull, or a signal). */
static double pull(void *arg)
{
	struct pulls *p = arg;
	struct rec *r = p->r;
	const struct mon_record_opts *o = p->o;
	bool alive = o->remains || mon_watch(r->prog, r->s, p->watch);
	/* ranks that started late, threads' first calls */
	if (es_scope_refresh(r->s) > 0 || mpi_behind(r))
		mpi_reopen(r);
	int n;
	if ((p->rc = name_threads(r)) || (p->rc = drain(r, p->ev, PULL_MAX, &n))) {
		snprintf(p->err, p->errlen, "%s/events: %s", o->dir, strerror(-p->rc));
		return MON_END;
	}
	mon_note_lost(r->prog, r->s, &p->was_lost);
	if (n < 0 || mon_stop || !alive || o->remains)
		return MON_END; /* a job that ended was drained once more above */
	if (mon_now() - r->checkpointed >= CHECKPOINT_S && (p->rc = checkpoint(r, p->err, p->errlen)))
		return MON_END;
	/* until the job's rate is known (no events yet, or the first pull),
	 * look again soon: elements of a few hundred tuples fill in
	 * milliseconds */
	double pace = mon_pace(r->s, o->period);
	if (isinf(es_scope_headroom(r->s)) && pace > 0.05)
		pace = 0.05;
	return pace < LONGEST_SLEEP_S ? pace : LONGEST_SLEEP_S;
}

/* Pulls until the job ends (or a signal, or an error); remains: once. */
static int record_loop(struct rec *r, const struct mon_record_opts *o, struct mon_watch *watch,
		       char *err, size_t errlen)
{
	struct pulls p = { .r = r, .o = o, .watch = watch, .ev = malloc(PULL_MAX * sizeof(struct es_trace)),
			   .err = err, .errlen = errlen };
	if (!p.ev)
		return snprintf(err, errlen, "%s", strerror(ENOMEM)), -ENOMEM;
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, pull, &p);
	mon_loop_run(&loop);
	free(p.ev);
	int rc = p.rc;
	if (!rc && !(rc = watch_deaths(r)))
		rc = add_unfinished(r, o->remains);
	if (rc && !*err)
		snprintf(err, errlen, "%s/events: %s", o->dir, strerror(-rc));
	return rc;
}

/* What the recorder says at the end. */
static void summary(const struct rec *r, const struct mon_record_opts *o, uint64_t written, const char *why)
{
	uint64_t before = es_scope_before_attach(r->s);
	if (o->quiet && !r->missed && !before)
		return;
	fprintf(stderr, "%s: %llu events written to %s, %llu discarded before they could be read",
		r->prog, (unsigned long long)written, o->dir, (unsigned long long)r->missed);
	if (before)
		fprintf(stderr, "; %llu earlier events had rotated out %s", (unsigned long long)before,
			o->remains ? "before it read them" : "before it attached");
	fprintf(stderr, "%s\n", why);
}

int mon_record(const char *prog, const char *job, const struct mon_record_opts *o, char *err, size_t errlen)
{
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	spec.by_leaf = true; /* readers index the archive by thread: no merge by time */
	struct rec r = { .prog = prog, .nb = { .rank = -1 }, .mh = o->handlers };
	*err = 0;
	int rc = mon_remote(&spec, err, errlen);
	/* the archive before anything else: a recorder killed while it waits
	 * for its job leaves one that says it recorded nothing */
	if (!rc && es_job_ok(job)) /* else mon_attach says why */
		rc = ar_create(o->dir, job, &r.w, err, errlen);
	if (rc)
		return rc;
	if ((rc = mon_attach(prog, &spec, o->wait, &r.s, err, errlen))) {
		ar_discard(r.w); /* no job: no archive of it */
		return rc;
	}
	BASE_INVARIANT("the archive exists (ar_create) before the recorder attaches", r.w != NULL);
	if (!o->remains)
		be_nice(prog, r.s);
	if (es_mpi_open(r.s, &r.m))
		r.m = NULL;
	if (ar_symbols_create(&r.sym))
		r.sym = NULL; /* no site is named: the archive says nothing of them */
	struct mon_watch watch = { .grace = o->period * 3 > 3 ? o->period * 3 : 3 };
	/* the first checkpoint at once: from now on the directory is an archive */
	if (!(rc = o->remains ? 0 : checkpoint(&r, err, errlen)))
		rc = record_loop(&r, o, &watch, err, errlen);
	if (!rc && mpi_behind(&r))
		mpi_reopen(&r); /* the last chance: the ranks' segments are still mapped */
	if (!rc && mpi_behind(&r))
		fprintf(stderr, "%s: %s: what some ranks said of themselves (their process, communicators and "
			"call sites) could not be read; the archive says what it lacks\n", prog, o->dir);
	if (!rc && !(rc = describe(&r)) && r.w) {
		const char *why = mon_watch_end(&watch); /* " (why)", or "" */
		char ended[320];
		snprintf(ended, sizeof(ended), "%s", o->remains ? "remains: what the job's elements held"
			 : *why ? why + 2 : "the job ended");
		if (*why && !o->remains)
			ended[strlen(ended) - 1] = 0;
		uint64_t written = ar_written(r.w);
		struct ar_end end = { .lost = r.missed, .before = es_scope_before_attach(r.s), .why = ended };
		rc = ar_finish(r.w, &end, err, errlen);
		r.w = NULL;
		if (!rc)
			summary(&r, o, written, o->remains ? "" : why);
	}
	if (rc) {
		char why[4400];
		snprintf(why, sizeof(why), "%s", *err ? err : strerror(-rc));
		snprintf(err, errlen, "%s; the archive stands as its last checkpoint left it (read as it "
			 "is, or esrecord --repair %s)", why, o->dir);
		ar_abandon(r.w);
	}
	rec_free(&r);
	return rc;
}

/* --- snapshots on a trigger: the recorder's remains, in the monitor's process ------------- */

/* A file of the snapshot beside the archive, owner-only as the archive is. */
static void snapshot_file(const char *prog, const char *dir, const char *name, const char *text)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = base_fopen_out(p, 0600);
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "%s: %s: %s\n", prog, p, strerror(errno));
		if (f)
			fclose(f);
	}
}

int mon_snapshot(const char *prog, struct mon_snapshot *sn, const char *why, const char *file,
		 const char *text, char *err, size_t errlen)
{
	if (!sn->dir || sn->taken)
		return 0;
	sn->taken = true; /* the first time only: the moment it went wrong */
	fflush(stdout);
	struct mon_record_opts o = { .dir = sn->dir, .remains = true };
	int rc = mon_record(prog, sn->job, &o, err, errlen);
	if (rc)
		return rc;
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
