/* record.c - the recorder's loop, shared by esrecord and esprofile: attach to a job, drain it into an archive, say what was lost. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/record.h"
#include "archive/symbols.h"
#include "monitors/common.h"

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

/* Each MPI thread's call sites, their frames named where the files still are. */
static int describe_sites(ar_writer *w, const es_scope *s, es_mpi *m)
{
	ar_symbols *sym;
	if (!m || ar_symbols_create(&sym))
		return 0; /* no site is known: the archive says nothing of them */
	int rc = 0;
	for (int t = 0; t < es_scope_threads(s) && !rc; t++) {
		int rank = es_mpi_rank_of(m, t);
		const struct es_site_rec *sites;
		const struct es_module_rec *mods;
		int n = rank < 0 ? 0 : es_mpi_sites(m, t, &sites);
		int nmods = n > 0 ? es_mpi_modules(m, rank, &mods) : 0;
		for (int id = 1; id < n && !rc; id++) {
			uint32_t k = sites[id].frames;
			if (k == 0 || k > ES_SITE_FRAMES)
				continue;
			struct ar_frame fr[ES_SITE_FRAMES];
			for (uint32_t i = 0; i < k; i++)
				fr[i] = frame_of(sym, mods, nmods > 0 ? nmods : 0, sites[id].pc[i]);
			rc = ar_set_site(w, t, id, fr, (int)k);
		}
	}
	ar_symbols_destroy(sym);
	return rc;
}

/* Each rank's process, as it described itself at MPI_Init, its phases' and files' names. */
static int describe_ranks(ar_writer *w, es_mpi *m)
{
	int rc = 0;
	for (int r = 0; m && r < es_mpi_ranks(m) && !rc; r++) {
		struct es_proc_rec p;
		uint64_t at;
		if (es_mpi_process(m, r, &p, &at))
			continue;
		struct ar_rank a = { .rank = r, .pid = p.pid, .wall_ns = p.wall_ns, .ns = at };
		snprintf(a.host, sizeof(a.host), "%s", p.host);
		snprintf(a.cmd, sizeof(a.cmd), "%s", p.cmd);
		rc = ar_set_rank(w, &a);
		struct es_region_rec *names;
		int n = rc ? 0 : es_mpi_regions(m, r, &names);
		for (int id = 1; id < n && !rc; id++)
			if (names[id].used)
				rc = ar_set_region(w, r, (uint32_t)id, names[id].name);
		struct es_file_rec *files;
		n = rc ? 0 : es_mpi_files(m, r, &files);
		for (int id = 1; id < n && !rc; id++)
			if (files[id].used)
				rc = ar_set_file(w, r, (uint32_t)id, files[id].name);
	}
	return rc;
}

/* Thread names and communicators as the scope and the ranks know them now. */
static int describe(ar_writer *w, const es_scope *s, es_mpi *m, const struct numbering *nb)
{
	int rc = 0;
	for (int i = 0; i < es_scope_leaves(s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		rc = ar_set_thread(w, l->thread, l->segment, es_scope_thread(s, l->thread));
	}
	if (m)
		es_mpi_refresh(m);
	for (int n = 0; n < nb->n && !rc; n++) {
		const struct es_mpi_comm *c = es_mpi_comm(m, nb->ids[n]);
		uint32_t none[2] = { 0, 0 };
		const int *const nomembers[2] = { NULL, NULL };
		rc = c ? ar_set_comm(w, n, c->id, c->flags, c->size, c->members)
		       : ar_set_comm(w, n, nb->ids[n], 0, none, nomembers);
	}
	if (!rc)
		rc = describe_ranks(w, m);
	return rc ? rc : describe_sites(w, s, m);
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
	spec.by_leaf = true; /* readers index the archive by thread: no merge by time */
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
	enum { MAX = 4096 }; /* a pull that stays in cache: its tuples are copied twice more */
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
	struct ps_remote_attr ra = { .secret_file = mon_secret_file };
	es_mpi *m = NULL;
	struct numbering nb = { .rank = -1 };
	if (es_mpi_open(s, &ra, &m))
		m = NULL;
	for (;;) {
		bool alive = mon_watch(prog, s, &watch);
		/* ranks that started late, threads' first calls */
		if (es_scope_refresh(s) > 0) {
			es_mpi_close(m);
			if (es_mpi_open(s, &ra, &m))
				m = NULL;
		}
		int n;
		do { /* when behind, pull again at once */
			uint64_t lost;
			n = es_scope_consume(s, ev, MAX, &lost);
			if (n < 0) {
				fprintf(stderr, "%s: %s\n", prog, ps_strerror(n));
				break;
			}
			missed += lost;
			if (m) /* the communicators these tuples name are listed by now */
				es_mpi_refresh(m);
			nb.rank = -1; /* what the refresh made known may name the serial anew */
			/* a leaf's tuples come together (by_leaf): a run at a time */
			for (int i = 0, j; i < n && !werr; i = j) {
				int leaf = es_scope_consumed_leaf(s, (size_t)i);
				const struct es_leaf *l = es_scope_leaf(s, leaf);
				for (j = i; j < n && es_scope_consumed_leaf(s, (size_t)j) == leaf; j++) {
					if (m)
						renumber(m, &nb, l->rank, &ev[j]);
					else if (l->rank >= 0 && es_op_code(ev[j].op) >= ES_OP_MPI_INIT)
						ev[j].comm = ES_COMM_NONE;
				}
				werr = ar_write_run(w, &ev[i], (size_t)(j - i), (uint32_t)l->thread);
			}
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
		werr = describe(w, s, m, &nb);
	es_mpi_close(m);
	free(nb.ids);
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
