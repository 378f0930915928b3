/* page.c - esprofile's page, as mpiP users read one: header, time per rank, call sites, calls, phases, I/O, collectives, traffic. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/profile.h"

/* qsort, which must not be given a NULL array even of no element */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static int by_total(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->rank - y->rank;
}

static int by_bytes_sent(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return by_total(a, b);
}

static int by_site_rank(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if ((x->rank == ALL) != (y->rank == ALL))
		return x->rank == ALL ? 1 : -1; /* the * row last, as mpiP */
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

static int by_pair_bytes(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->from != y->from ? x->from - y->from : x->to - y->to;
}




/* "MPI_Send" without "MPI_", as mpiP names calls in its site tables */
static const char *short_name(unsigned op)
{
	const char *n = es_op_name(op);
	return !strncmp(n, "MPI_", 4) ? n + 4 : n;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* "2026-11-24 21:50:01" of the wall-clock time at an archive stamp, by rank 0's word */
static void wall_time(const struct ar_rank *r, uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)((ns + r->wall_ns - r->ns) / 1000000000ull);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

/* The hosts the ranks ran on, each once: how many, and the first few named. */
static int hosts(const struct prof *p, char *buf, size_t len)
{
	int n = 0;
	size_t used = 0;
	buf[0] = 0;
	for (int r = 0; r < p->groups; r++) {
		const struct ar_rank *x = ar_rank(p->a, r);
		bool seen = !x;
		for (int q = 0; q < r && !seen; q++)
			seen = ar_rank(p->a, q) && !strcmp(ar_rank(p->a, q)->host, x->host);
		if (seen)
			continue;
		if (n++ < 8 && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", n > 1 ? ", " : "", x->host);
	}
	return n;
}

/* Said once, in the header: sites without a line, and how to get them. */
static void print_no_lines(const struct prof *p, FILE *out)
{
	size_t none = 0;
	const char *module = NULL;
	for (uint32_t id = 1; id <= p->sites.n; id++) {
		const struct psite *s = prof_site(p, id);
		if (s->where->nframes > 0 && !s->where->frames[0].line) {
			none++;
			module = module ? module : s->where->frames[0].module;
		}
	}
	if (none)
		fprintf(out, "@ Lines        : %zu of %zu call sites have no file and line (%s and perhaps others "
			"have no debug information): build with -g, or install the distribution's debug "
			"symbols (Debian: the package's -dbgsym, from debian-debug), and record again\n",
			none, p->sites.n, base_name(module));
}

/* mpiP's header: what ran, where, when, and what measured it */
static void print_header(const struct prof *p, FILE *out)
{
	const ar_archive *a = p->a;
	const struct ar_rank *r0 = p->mpi ? ar_rank(a, 0) : NULL;
	fprintf(out, "@ esprofile (EventSpace %s): job %s, %zu events", ES_VERSION, ar_job(a), ar_nevents(a));
	if (ar_lost(a))
		fprintf(out, " (%llu more were lost: the figures are short of them)", (unsigned long long)ar_lost(a));
	fputc('\n', out);
	if (r0)
		fprintf(out, "@ Command      : %s\n", r0->cmd);
	if (p->mpi) {
		char names[512];
		int n = hosts(p, names, sizeof(names));
		fprintf(out, "@ Ranks        : %d on %d host%s%s%s%s\n", p->groups, n, n == 1 ? "" : "s",
			n ? " (" : "", names, n > 8 ? ", ...)" : n ? ")" : "");
	}
	uint64_t first = UINT64_MAX, last = 0;
	for (size_t i = 0; i < ar_nevents(a); i++) {
		const struct es_trace *t = &ar_events(a)[i].t;
		first = t->start < first ? t->start : first;
		last = t->end > last ? t->end : last;
	}
	if (r0 && first <= last) {
		char from[32], to[32];
		wall_time(r0, first, from, sizeof(from));
		wall_time(r0, last, to, sizeof(to));
		fprintf(out, "@ Start time   : %s\n@ Stop time    : %s\n", from, to);
	}
	if (ar_partial(a, NULL))
		fprintf(out, "@ Incomplete   : as its recorder's last checkpoint left it (the recorder "
			"was killed, or its disk filled)\n");
	for (int i = 0; i < ar_ndied(a); i++)
		fprintf(out, "@ Died         : rank %d (pid %d)%s%s\n", ar_died(a, i)->rank, ar_died(a, i)->pid,
			ar_died(a, i)->signal ? ", signal " : "",
			ar_died(a, i)->signal ? sigabbrev_np(ar_died(a, i)->signal) : "");
	for (int r = 0; p->mpi && r < p->groups && r < 64; r++) {
		const struct ar_rank *x = ar_rank(a, r);
		if (x)
			fprintf(out, "@ Rank %-7d: %s, pid %d\n", r, x->host, x->pid);
	}
	fprintf(out, "@ time: a call from its start to its end; a poll streak from its first poll, "
		"counted as the polls it made (OTF2 and the JSON have a streak as one region, its polls "
		"an argument in the JSON; esprofile --json gives both counts); MPI_Start and MPI_Startall "
		"counted as the requests they started\n");
	print_no_lines(p, out);
}

static void print_runs(const struct prof *p, FILE *out)
{
	fprintf(out, "\n@--- %s time (ms): the run, and in %s ---\n", p->mpi ? "MPI" : "Operation",
		p->mpi ? "MPI" : "operations");
	fprintf(out, "%-8s %14s %14s %8s\n", p->mpi ? "Rank" : "Thread", "AppTime", p->mpi ? "MPITime" : "OpTime",
		p->mpi ? "MPI%" : "Op%");
	for (int g = 0; g < p->groups; g++) {
		struct rank_run *r = &p->run[g];
		if (r->first == UINT64_MAX)
			continue;
		uint64_t from = r->init ? r->init_end : r->first, to = r->fin ? r->fin_start : r->last;
		uint64_t app = to > from ? to - from : 0;
		char label[PS_NAME_MAX + 8];
		if (p->mpi)
			snprintf(label, sizeof(label), "%d", g);
		else
			snprintf(label, sizeof(label), "%s", ar_thread(p->a, g)->name);
		fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", label, ms(app), ms(r->mpi), pct(r->mpi, app));
	}
	fprintf(out, "%-8s %14.3f %14.3f %8.2f\n", "*", ms(p->app_all), ms(p->mpi_all), pct(p->mpi_all, p->app_all));
}

static void print_sites(const struct prof *p, FILE *out)
{
	fprintf(out, "\n@--- Call sites: %zu ---\n", p->sites.n);
	fprintf(out, "%4s %3s %-28s %6s %-24s %s\n", "ID", "Lev", "File/Address", "Line", "Parent_Funct",
		"MPI_Call");
	for (uint32_t id = 1; id <= p->sites.n; id++) {
		const struct psite *s = prof_site(p, id);
		for (int k = 0; k < s->where->nframes; k++) {
			const struct ar_frame *f = &s->where->frames[k];
			char place[64];
			if (f->line)
				snprintf(place, sizeof(place), "%s", base_name(f->file));
			else
				snprintf(place, sizeof(place), "%s+0x%llx", base_name(f->module),
					 (unsigned long long)f->offset);
			fprintf(out, "%4u %3d %-28s %6d %-24s %s\n", id, k, place, f->line, f->function,
				k ? "" : short_name(s->op));
		}
	}
}


static void print_site_tops(struct prof *p, FILE *out, int top)
{
	struct stat_row *rows = p->rows.v;
	sort(rows, p->rows.n, sizeof(*rows), by_total);
	fprintf(out, "\n@--- Aggregate time by call site (top %d, descending) ---\n", top);
	fprintf(out, "%-24s %5s %12s %8s %8s %10s %8s\n", "Call", "Site", "Time (ms)", "App%", "MPI%", "Count", "COV");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++)
		if (rows[i].site && rows[i].rank == ALL) {
			shown++;
			fprintf(out, "%-24s %5u %12.3f %8.2f %8.2f %10llu %8.2f\n", short_name(rows[i].op), rows[i].site,
				ms(rows[i].total), pct(rows[i].total, p->app_all), pct(rows[i].total, p->mpi_all),
				(unsigned long long)rows[i].count, prof_cov(p, &rows[i]));
		}
	sort(rows, p->rows.n, sizeof(*rows), by_bytes_sent);
	uint64_t sent_all = 0;
	for (size_t i = 0; i < p->rows.n; i++)
		if (rows[i].site && rows[i].rank == ALL)
			sent_all += rows[i].bytes;
	fprintf(out, "\n@--- Aggregate sent message size by call site (top %d, descending, bytes) ---\n", top);
	fprintf(out, "%-24s %5s %10s %14s %12s %8s\n", "Call", "Site", "Count", "Total", "Avrg", "Sent%");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++)
		if (rows[i].site && rows[i].rank == ALL && rows[i].sent_n) {
			shown++;
			fprintf(out, "%-24s %5u %10llu %14llu %12.1f %8.2f\n", short_name(rows[i].op), rows[i].site,
				(unsigned long long)rows[i].sent_n, (unsigned long long)rows[i].bytes,
				(double)rows[i].bytes / (double)rows[i].sent_n, pct(rows[i].bytes, sent_all));
		}
}

static void print_site_stats(struct prof *p, FILE *out)
{
	struct stat_row *rows = p->rows.v;
	sort(rows, p->rows.n, sizeof(*rows), by_site_rank);
	size_t n = 0;
	for (size_t i = 0; i < p->rows.n; i++)
		n += rows[i].site != 0;
	fprintf(out, "\n@--- Call site time statistics (all, milliseconds): %zu ---\n", n);
	fprintf(out, "%-24s %5s %5s %10s %12s %12s %12s %12s %8s %8s\n", "Name", "Site", "Rank", "Count", "Max",
		"Mean", "Min", "Total", "App%", "MPI%");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = &rows[i];
		if (!r->site)
			continue;
		uint64_t app = p->app_all, mpi = p->mpi_all;
		if (r->rank != ALL) {
			const struct rank_run *g = &p->run[r->rank];
			uint64_t from = g->init ? g->init_end : g->first, to = g->fin ? g->fin_start : g->last;
			app = to > from ? to - from : 0;
			mpi = g->mpi;
		}
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		uint64_t calls = r->count ? r->count : 1;
		fprintf(out, "%-24s %5u %5s %10llu %12.4f %12.4f %12.4f %12.4f %8.2f %8.2f\n", short_name(r->op),
			r->site, rank, (unsigned long long)r->count, ms(r->max), ms(r->total) / (double)calls,
			ms(r->min == UINT64_MAX ? 0 : r->min), ms(r->total), pct(r->total, app), pct(r->total, mpi));
	}
	fprintf(out, "\n@--- Call site message sent statistics (all, sent bytes) ---\n");
	fprintf(out, "%-24s %5s %5s %10s %12s %12s %12s %14s\n", "Name", "Site", "Rank", "Count", "Max", "Mean",
		"Min", "Sum");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *r = &rows[i];
		if (!r->site || !r->sent_n)
			continue;
		char rank[12];
		snprintf(rank, sizeof(rank), r->rank == ALL ? "*" : "%d", r->rank);
		fprintf(out, "%-24s %5u %5s %10llu %12llu %12.1f %12llu %14llu\n", short_name(r->op), r->site, rank,
			(unsigned long long)r->sent_n, (unsigned long long)r->sent_max,
			(double)r->bytes / (double)r->sent_n, (unsigned long long)r->sent_min,
			(unsigned long long)r->bytes);
	}
}

static void print_calls(struct prof *p, FILE *out, int top)
{
	struct stat_row *rows = p->rows.v;
	sort(rows, p->rows.n, sizeof(*rows), by_total);
	fprintf(out, "\n@--- Aggregate time, every %s (top %d, descending) ---\n", p->mpi ? "rank" : "thread", top);
	fprintf(out, "%-30s %12s %8s %8s %10s %12s %12s %14s\n", "Call", "Time (ms)", "App%", "MPI%", "Count",
		"Mean (us)", "Max (us)", "Bytes");
	for (size_t i = 0, shown = 0; i < p->rows.n && (int)shown < top; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank != ALL || s->site)
			continue;
		shown++;
		fprintf(out, "%-30s %12.3f %8.2f %8.2f %10llu %12.3f %12.3f %14llu\n", es_op_name(s->op),
			ms(s->total), pct(s->total, p->app_all), pct(s->total, p->mpi_all), (unsigned long long)s->count,
			(double)s->total / (double)s->count / 1e3, (double)s->max / 1e3, (unsigned long long)s->bytes);
	}
	fprintf(out, "\n@--- Per %s: every call ---\n", p->mpi ? "rank" : "thread");
	fprintf(out, "%-30s %6s %10s %12s %12s %12s %14s\n", "Call", p->mpi ? "Rank" : "Thread", "Count",
		"Time (ms)", "Mean (us)", "Max (us)", "Bytes");
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct stat_row *s = &rows[i];
		if (s->rank == ALL || s->site)
			continue;
		fprintf(out, "%-30s %6d %10llu %12.3f %12.3f %12.3f %14llu\n", es_op_name(s->op), s->rank,
			(unsigned long long)s->count, ms(s->total), (double)s->total / (double)s->count / 1e3,
			(double)s->max / 1e3, (unsigned long long)s->bytes);
	}
}

/* "WORLD", or the communicator's number in the archive */
static void comm_label(const struct ar_comm *cm, int number, char *buf, size_t len)
{
	if (cm && (cm->flags & ES_COMMS_WORLD))
		snprintf(buf, len, "WORLD");
	else
		snprintf(buf, len, "%d%s", number, cm && (cm->flags & ES_COMMS_INTER) ? " inter" : "");
}

static void print_colls(struct prof *p, FILE *out, int top)
{
	struct coll *colls = p->colls.v;
	sort(colls, p->colls.n, sizeof(*colls), by_imbalance);
	fprintf(out, "\n@--- Collectives with the worst imbalance (top %d): from the first rank in "
		"to the last ---\n", top);
	fprintf(out, "%-30s %6s %12s %10s %14s %12s\n", "Call", "Number", "Communicator", "Last in",
		"Imbalance (us)", "Ranks");
	for (size_t i = 0; i < p->colls.n && (int)i < top; i++) {
		const struct coll *c = &colls[i];
		const struct ar_comm *cm = ar_comm(p->a, c->comm);
		char comm[32];
		comm_label(cm, c->comm, comm, sizeof(comm));
		fprintf(out, "%-30s %6u %12s %10d %14.3f %7d of %u\n", es_op_name(c->op), c->arg, comm, c->last_rank,
			(double)(c->last_in - c->first_in) / 1e3, c->n, cm ? cm->size[0] + cm->size[1] : 0);
	}
	fprintf(out, "\n@--- Communicators: their collectives, and the messages sent on them ---\n");
	fprintf(out, "%-12s %6s %12s %14s %14s %10s %14s  %s\n", "Communicator", "Size", "Collectives", "Time (ms)",
		"Coll. bytes", "Messages", "Msg. bytes", "World ranks");
	for (int k = 0; k < ar_ncomms(p->a); k++) {
		const struct ar_comm *cm = ar_comm(p->a, k);
		const struct comm_tot *t = &p->comms[k];
		if (!t->colls && !t->msgs)
			continue;
		char name[32];
		comm_label(cm, k, name, sizeof(name));
		fprintf(out, "%-12s %6u %12llu %14.3f %14llu %10llu %14llu ", name, cm->size[0] + cm->size[1],
			(unsigned long long)t->colls, ms(t->coll_time), (unsigned long long)t->coll_bytes,
			(unsigned long long)t->msgs, (unsigned long long)t->msg_bytes);
		for (int side = 0; side < 2; side++)
			for (uint32_t r = 0; r < cm->size[side] && r < 16; r++)
				fprintf(out, "%s %d", side && !r ? " |" : "", cm->members[side][r]);
		fprintf(out, "%s\n", cm->size[0] > 16 || cm->size[1] > 16 ? " ..." : "");
	}
}

/* Rows keyed by a name and a rank (phases, files: struct named first):
 * by name, each name's ranks in order and its total (ALL) last. */
static int by_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if ((x->rank == ALL) != (y->rank == ALL))
		return x->rank == ALL ? 1 : -1;
	return x->rank - y->rank;
}

/* Each phase per rank and over all, its calls' time counted in the innermost phase around them. */
static int print_phases(struct prof *p, FILE *out)
{
	sort(p->phases.v, p->phases.n, sizeof(struct phase_row), by_named);
	fprintf(out, "\n@--- Phases: their time, and the time of the MPI calls made inside each (its "
		"innermost phase) ---\n");
	fprintf(out, "%-28s %5s %8s %14s %14s %8s %10s\n", "Phase", "Rank", "Count", "Time (ms)", "MPI (ms)", "MPI%",
		"Calls");
	for (size_t i = 0; i < p->phases.n; i++) {
		const struct phase_row *r = BASE_AT(p->phases, struct phase_row, i);
		char rank[12];
		snprintf(rank, sizeof(rank), r->key.rank == ALL ? "*" : "%d", r->key.rank);
		fprintf(out, "%-28s %5s %8llu %14.3f %14.3f %8.2f %10llu\n", r->key.name, rank, (unsigned long long)r->count,
			ms(r->time), ms(r->mpi), pct(r->mpi, r->time), (unsigned long long)r->calls);
	}
	return 0;
}

/* Each file's reads and writes per rank and over all (Darshan's first page). */
static void print_io(struct prof *p, FILE *out)
{
	sort(p->io.v, p->io.n, sizeof(struct io_row), by_named);
	fprintf(out, "\n@--- I/O (MPI-IO): per file and rank, reads and writes as asked (a blocking read's as "
		"read) ---\n");
	fprintf(out, "%-40s %5s %8s %14s %8s %14s %8s %12s\n", "File", "Rank", "Reads", "Bytes read", "Writes",
		"Bytes written", "Calls", "Time (ms)");
	for (size_t i = 0; i < p->io.n; i++) {
		const struct io_row *r = BASE_AT(p->io, struct io_row, i);
		char rank[12];
		snprintf(rank, sizeof(rank), r->key.rank == ALL ? "*" : "%d", r->key.rank);
		fprintf(out, "%-40s %5s %8llu %14llu %8llu %14llu %8llu %12.3f\n", r->key.name, rank,
			(unsigned long long)r->reads, (unsigned long long)r->read_bytes, (unsigned long long)r->writes,
			(unsigned long long)r->written, (unsigned long long)r->calls, ms(r->time));
	}
}

static void print_traffic(struct prof *p, FILE *out, int top)
{
	struct pair *pairs = p->pairs.v;
	sort(pairs, p->pairs.n, sizeof(*pairs), by_pair_bytes);
	fprintf(out, "\n@--- Heaviest point-to-point traffic (top %d): sent from rank to rank ---\n", top);
	fprintf(out, "%6s %6s %10s %14s\n", "From", "To", "Messages", "Bytes");
	for (size_t i = 0; i < p->pairs.n && (int)i < top; i++)
		fprintf(out, "%6d %6d %10llu %14llu\n", pairs[i].from, pairs[i].to, (unsigned long long)pairs[i].count,
			(unsigned long long)pairs[i].bytes);
}

int ar_profile(const ar_archive *a, FILE *out, int top, char *err, size_t errlen)
{
	struct prof p;
	int rc = prof_make(&p, a);
	if (!rc) {
		print_header(&p, out);
		print_runs(&p, out);
		if (p.mpi && p.sites.n) {
			print_sites(&p, out);
			print_site_tops(&p, out, top);
		}
		print_calls(&p, out, top);
		if (p.mpi && p.sites.n)
			print_site_stats(&p, out);
		if (p.phases.n)
			rc = print_phases(&p, out);
		if (p.io.n)
			print_io(&p, out);
		if (p.mpi) {
			print_colls(&p, out, top);
			print_traffic(&p, out, top);
			prof_print_waits(&p, out, top);
		}
	}
	return prof_end(&p, rc, out, err, errlen);
}
