/* profile.c - the page an mpiP user expects, from an archive: time in MPI per call and rank, the worst collectives, communicators, the heaviest traffic. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/convert.h"

/*
 * A call's time is its region as ar_thread_items gives it: a poll streak
 * from the event before it on its thread (its polls and what the program
 * did between them: the polls' own time is not recorded), a nonblocking
 * collective's completion not at all (its wait has the time).  A rank's
 * run is from the end of its MPI_Init to the start of its MPI_Finalize,
 * as mpiP takes it, or its first to last event when it has neither; the
 * tables leave MPI_Init and MPI_Finalize out, as mpiP does.
 */

#define NONE 0xffffffffu

struct stat_row {
	unsigned op;
	int rank; /* -1: every rank */
	uint64_t count, total, max, bytes;
};

struct rank_run {
	uint64_t first, last, init_end, fin_start, mpi;
	bool init, fin;
};

struct coll {
	unsigned op;
	uint16_t comm;
	uint32_t arg;
	uint64_t first_in, last_in, last_out, time;
	int last_rank, n;
};

struct pair {
	int from, to;
	uint64_t bytes, count;
};

static int by_total(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->rank - y->rank;
}

static int by_imbalance(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;
	uint64_t i = x->last_in - x->first_in, j = y->last_in - y->first_in;
	if (i != j)
		return i > j ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return x->arg < y->arg ? -1 : x->arg > y->arg;
}

static int by_bytes(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->from != y->from ? x->from - y->from : x->to - y->to;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* the row for (op, rank), made if new */
static struct stat_row *row(struct stat_row **rows, size_t *n, size_t *cap, unsigned op, int rank)
{
	for (size_t i = *n; i-- > 0;)
		if ((*rows)[i].op == op && (*rows)[i].rank == rank)
			return &(*rows)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct stat_row *r = realloc(*rows, sizeof(*r) * c);
		if (!r)
			return NULL;
		*rows = r;
		*cap = c;
	}
	(*rows)[*n] = (struct stat_row){ .op = op, .rank = rank };
	return &(*rows)[(*n)++];
}

/* "WORLD", or the communicator's number in the archive */
static void comm_label(const struct ar_comm *cm, int number, char *buf, size_t len)
{
	if (cm && (cm->flags & ES_COMMS_WORLD))
		snprintf(buf, len, "WORLD");
	else
		snprintf(buf, len, "%d%s", number, cm && (cm->flags & ES_COMMS_INTER) ? " inter" : "");
}

int ar_profile(const ar_archive *a, FILE *out, int top, char *err, size_t errlen)
{
	const struct ar_event *ev = ar_events(a);
	int nt = ar_nthreads(a), nranks = 0;
	for (int t = 0; t < nt; t++)
		nranks = ar_thread(a, t)->rank + 1 > nranks ? ar_thread(a, t)->rank + 1 : nranks;
	bool mpi = nranks > 0;
	int groups = mpi ? nranks : nt; /* rows per rank, or per thread when no MPI */
	struct rank_run *run = calloc((size_t)groups + 1, sizeof(*run));
	struct stat_row *rows = NULL;
	size_t nrows = 0, caprows = 0;
	struct coll *colls = NULL;
	size_t ncolls = 0, capcolls = 0;
	struct pair *pairs = NULL;
	size_t npairs = 0, cappairs = 0;
	int rc = run ? 0 : -ENOMEM;
	for (int g = 0; g < groups && run; g++)
		run[g].first = UINT64_MAX;
	for (int t = 0; t < nt && !rc; t++) {
		int g = mpi ? ar_thread(a, t)->rank : t;
		if (g < 0)
			continue; /* a thread of no rank in an MPI job */
		struct ar_item *items;
		size_t n;
		if ((rc = ar_thread_items(a, t, &items, &n, NULL)))
			break;
		uint64_t *enter = malloc(sizeof(uint64_t) * (n + 1));
		size_t depth = 0;
		if (!enter) {
			free(items);
			rc = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < n && !rc; i++) {
			const struct es_trace *e = &ev[items[i].event].t;
			if (items[i].kind == AR_ENTER)
				enter[depth++] = items[i].time;
			if (items[i].kind != AR_LEAVE || !depth)
				continue;
			uint64_t t0 = enter[--depth], t1 = items[i].time, d = t1 - t0;
			unsigned code = es_op_code(e->op);
			struct rank_run *r = &run[g];
			r->first = t0 < r->first ? t0 : r->first;
			r->last = t1 > r->last ? t1 : r->last;
			if (code == ES_OP_MPI_INIT) { /* MPI_Init_thread records as MPI_Init */
				r->init = true;
				r->init_end = t1;
			} else if (code == ES_OP_MPI_FINALIZE) {
				r->fin = true;
				r->fin_start = t0;
			} else if (depth == 0) {
				r->mpi += d; /* the outermost only: nested time is counted once */
			}
			if (code == ES_OP_MPI_INIT || code == ES_OP_MPI_FINALIZE)
				continue; /* outside the run, as mpiP counts it */
			struct stat_row *s1 = row(&rows, &nrows, &caprows, code, g),
					*s2 = s1 ? row(&rows, &nrows, &caprows, code, -1) : NULL;
			if (!s2) {
				rc = -ENOMEM;
				break;
			}
			s1 = row(&rows, &nrows, &caprows, code, g); /* the array may have moved */
			struct stat_row *both[2] = { s1, s2 };
			for (int k = 0; k < 2; k++) {
				both[k]->count++;
				both[k]->total += d;
				both[k]->max = d > both[k]->max ? d : both[k]->max;
				both[k]->bytes += e->size;
			}
			if (mpi && es_op_matched(e->op)) {
				struct coll *c = NULL;
				for (size_t k = ncolls; k-- > 0 && !c;)
					if (colls[k].op == code && colls[k].comm == e->comm && colls[k].arg == e->arg)
						c = &colls[k];
				if (!c) {
					if (ncolls == capcolls) {
						size_t cap = capcolls ? capcolls * 2 : 256;
						struct coll *m = realloc(colls, sizeof(*m) * cap);
						if (!m) {
							rc = -ENOMEM;
							break;
						}
						colls = m;
						capcolls = cap;
					}
					c = &colls[ncolls++];
					*c = (struct coll){ code, e->comm, e->arg, t0, t0, t1, 0, g, 0 };
				}
				c->n++;
				c->time += d;
				c->first_in = t0 < c->first_in ? t0 : c->first_in;
				c->last_out = t1 > c->last_out ? t1 : c->last_out;
				if (t0 >= c->last_in) {
					c->last_in = t0;
					c->last_rank = g;
				}
			}
			if (mpi && e->element != NONE && !(e->op & ES_OP_FAILED) && ar_message(e->op) > 0 &&
			    e->element < (uint32_t)nranks) {
				struct pair *p = NULL;
				for (size_t k = 0; k < npairs && !p; k++)
					if (pairs[k].from == g && pairs[k].to == (int)e->element)
						p = &pairs[k];
				if (!p) {
					if (npairs == cappairs) {
						size_t cap = cappairs ? cappairs * 2 : 64;
						struct pair *m = realloc(pairs, sizeof(*m) * cap);
						if (!m) {
							rc = -ENOMEM;
							break;
						}
						pairs = m;
						cappairs = cap;
					}
					p = &pairs[npairs++];
					*p = (struct pair){ g, (int)e->element, 0, 0 };
				}
				p->bytes += e->size;
				p->count++;
			}
		}
		free(enter);
		free(items);
	}
	if (rc) {
		snprintf(err, errlen, "%s", strerror(-rc));
		free(run), free(rows), free(colls), free(pairs);
		return rc;
	}
	/* the page */
	uint64_t app_all = 0, mpi_all = 0;
	fprintf(out, "@ esprofile: job %s, %zu events", ar_job(a), ar_nevents(a));
	if (ar_lost(a))
		fprintf(out, " (%llu more were lost: the figures are short of them)", (unsigned long long)ar_lost(a));
	fprintf(out, "\n@ time: a call from its start to its end; a poll streak from its first poll\n");
	fprintf(out, "\n@--- %s time (ms): the run, and in %s ---\n", mpi ? "MPI" : "Operation",
		mpi ? "MPI" : "operations");
	fprintf(out, "%-8s %14s %14s %8s\n", mpi ? "Rank" : "Thread", "AppTime", mpi ? "MPITime" : "OpTime",
		mpi ? "MPI%" : "Op%");
	for (int g = 0; g < groups; g++) {
		struct rank_run *r = &run[g];
		if (r->first == UINT64_MAX)
			continue;
		uint64_t from = r->init ? r->init_end : r->first, to = r->fin ? r->fin_start : r->last;
		uint64_t app = to > from ? to - from : 0;
		app_all += app;
		mpi_all += r->mpi;
		char label[PS_NAME_MAX + 8];
		if (mpi)
			snprintf(label, sizeof(label), "%d", g);
		else
			snprintf(label, sizeof(label), "%s", ar_thread(a, g)->name);
		fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", label, ms(app), ms(r->mpi),
			app ? 100.0 * (double)r->mpi / (double)app : 0.0);
	}
	fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", "*", ms(app_all), ms(mpi_all),
		app_all ? 100.0 * (double)mpi_all / (double)app_all : 0.0);

	qsort(rows, nrows, sizeof(*rows), by_total);
	fprintf(out, "\n@--- Aggregate time, every %s (top %d, descending) ---\n", mpi ? "rank" : "thread", top);
	fprintf(out, "%-30s %12s %8s %8s %10s %12s %12s %14s\n", "Call", "Time (ms)", "App%", "MPI%", "Count",
		"Mean (us)", "Max (us)", "Bytes");
	int shown = 0;
	for (size_t i = 0; i < nrows && shown < top; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank != -1)
			continue;
		shown++;
		fprintf(out, "%-30s %12.3f %8.2f %8.2f %10llu %12.3f %12.3f %14llu\n", es_op_name(s->op),
			ms(s->total), app_all ? 100.0 * (double)s->total / (double)app_all : 0.0,
			mpi_all ? 100.0 * (double)s->total / (double)mpi_all : 0.0, (unsigned long long)s->count,
			(double)s->total / (double)s->count / 1e3, (double)s->max / 1e3,
			(unsigned long long)s->bytes);
	}
	fprintf(out, "\n@--- Per %s: every call ---\n", mpi ? "rank" : "thread");
	fprintf(out, "%-30s %6s %10s %12s %12s %12s %14s\n", "Call", mpi ? "Rank" : "Thread", "Count",
		"Time (ms)", "Mean (us)", "Max (us)", "Bytes");
	for (size_t i = 0; i < nrows; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank == -1)
			continue;
		fprintf(out, "%-30s %6d %10llu %12.3f %12.3f %12.3f %14llu\n", es_op_name(s->op), s->rank,
			(unsigned long long)s->count, ms(s->total), (double)s->total / (double)s->count / 1e3,
			(double)s->max / 1e3, (unsigned long long)s->bytes);
	}
	if (mpi) {
		qsort(colls, ncolls, sizeof(*colls), by_imbalance);
		fprintf(out, "\n@--- Collectives with the worst imbalance (top %d): from the first rank in "
			"to the last ---\n", top);
		fprintf(out, "%-30s %6s %12s %10s %14s %12s\n", "Call", "Number", "Communicator", "Last in",
			"Imbalance (us)", "Ranks");
		for (size_t i = 0; i < ncolls && (int)i < top; i++) {
			const struct coll *c = &colls[i];
			const struct ar_comm *cm = ar_comm(a, c->comm);
			char comm[32];
			comm_label(cm, c->comm, comm, sizeof(comm));
			fprintf(out, "%-30s %6u %12s %10d %14.3f %7d of %u\n", es_op_name(c->op), c->arg, comm,
				c->last_rank, (double)(c->last_in - c->first_in) / 1e3, c->n,
				cm ? cm->size[0] + cm->size[1] : 0);
		}
		fprintf(out, "\n@--- Communicators: their collectives ---\n");
		fprintf(out, "%-12s %6s %12s %14s  %s\n", "Communicator", "Size", "Collectives", "Time (ms)",
			"World ranks");
		for (int k = 0; k < ar_ncomms(a); k++) {
			const struct ar_comm *cm = ar_comm(a, k);
			uint64_t n = 0, time = 0;
			for (size_t i = 0; i < ncolls; i++)
				if (colls[i].comm == k)
					n++, time += colls[i].time;
			if (!n)
				continue;
			char name[32];
			comm_label(cm, k, name, sizeof(name));
			fprintf(out, "%-12s %6u %12llu %14.3f ", name, cm->size[0] + cm->size[1], (unsigned long long)n,
				ms(time));
			for (int side = 0; side < 2; side++)
				for (uint32_t r = 0; r < cm->size[side] && r < 16; r++)
					fprintf(out, "%s %d", side && !r ? " |" : "", cm->members[side][r]);
			fprintf(out, "%s\n", cm->size[0] > 16 || cm->size[1] > 16 ? " ..." : "");
		}
		qsort(pairs, npairs, sizeof(*pairs), by_bytes);
		fprintf(out, "\n@--- Heaviest point-to-point traffic (top %d): sent from rank to rank ---\n", top);
		fprintf(out, "%6s %6s %10s %14s\n", "From", "To", "Messages", "Bytes");
		for (size_t i = 0; i < npairs && (int)i < top; i++)
			fprintf(out, "%6d %6d %10llu %14llu\n", pairs[i].from, pairs[i].to,
				(unsigned long long)pairs[i].count, (unsigned long long)pairs[i].bytes);
	}
	free(run), free(rows), free(colls), free(pairs);
	if (ferror(out)) {
		snprintf(err, errlen, "writing the profile: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}
