/* waits_out.c - the profile's wait states said: the page's section (pattern x call site x rank, by pattern, what was not judged) and --json's wait_states. */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "archive/profile.h"

/*
 * Scalasca's Cube shows a pattern's seconds including its sub-patterns'
 * (Late Sender holds Wrong Order's); so do these rows.  A rank's share is
 * of its time inside MPI calls, and its patterns without a parent sum to
 * no more than that: each is a part of one call's time, and a call's
 * wait and completion do not overlap.
 */

/* The analysis' indirect part of row i. */
/* A rank's time in MPI calls as the profile counts it (its ranks[].mpi_ns:
 * outermost calls only, so a poll's streak around other calls counts
 * once): the one whole that every share of it is taken of. */
static uint64_t rank_mpi(const struct prof *p, int rank)
{
	return p->mpi && rank >= 0 && rank < p->groups ? p->run[rank].mpi : 0;
}

static uint64_t indirect(const struct prof *p, uint32_t i)
{
	return i < p->why.nrows ? p->why.indirect_ns[i] : 0;
}

/* The rank that caused most of row i, or -1. */
static int caused_by(const struct prof *p, uint32_t i)
{
	return p->caused_by ? p->caused_by[i] : -1;
}

static int by_ns(const void *a, const void *b, void *rows)
{
	const struct ws_row *x = &((const struct ws_row *)rows)[*(const uint32_t *)a];
	const struct ws_row *y = &((const struct ws_row *)rows)[*(const uint32_t *)b];
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->pattern != y->pattern)
		return x->pattern - y->pattern;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->rank - y->rank;
}

/* The rows' indices, by time (most first): malloc'ed, NULL when none. */
static uint32_t *sorted(const struct prof *p, const struct ws_row **rows, size_t *n)
{
	*n = p->waits ? ws_rows(p->waits, rows) : 0;
	uint32_t *v = *n ? malloc(sizeof(*v) * *n) : NULL;
	if (!v) {
		*n = 0;
		return NULL;
	}
	for (uint32_t i = 0; i < *n; i++)
		v[i] = i;
	qsort_r(v, *n, sizeof(*v), by_ns, (void *)*rows);
	return v;
}

static const char *call_of(const struct ws_row *r, char *buf, size_t len)
{
	if (!r->of)
		return es_op_name(r->op);
	snprintf(buf, len, "%s(%s)", es_op_name(r->op), es_op_name(r->of) + 4);
	return buf;
}

static uint32_t site_number(const struct prof *p, uint32_t key)
{
	const struct psite *s = prof_site_at(p, key);
	return s ? s->number : 0;
}

static void print_stats(const struct prof *p, FILE *out)
{
	struct ws_stats st;
	ws_stats(p->waits, &st);
	fprintf(out, "judged: %llu receives, %llu sends that may have waited, %llu collectives and one-sided epochs",
		(unsigned long long)st.receives, (unsigned long long)st.sends, (unsigned long long)st.colls);
	if (st.unpaired)
		fprintf(out, "; %llu message ends without their other end", (unsigned long long)st.unpaired);
	if (st.incomplete)
		fprintf(out, "; %llu collectives without every member", (unsigned long long)st.incomplete);
	if (st.by_test)
		fprintf(out, "; %llu completed by a test (no wait)", (unsigned long long)st.by_test);
	if (st.not_analysed)
		fprintf(out, "; %llu calls of no pattern (neighbourhood, communicators, windows made)",
			(unsigned long long)st.not_analysed);
	if (st.clock_violations)
		fprintf(out, "; %llu waits cut at their call's end (the clocks put the other end later)",
			(unsigned long long)st.clock_violations);
	fputs("\n", out);
}

/* An activity of the analysis as the page says it: "phase solve", "MPI_Recv at site 3". */
static const char *activity(const struct prof *p, uint32_t key, bool phase, char *buf, size_t len)
{
	if (phase)
		snprintf(buf, len, "phase %s", prof_phase_name(p, key));
	else if (prof_site_at(p, key))
		snprintf(buf, len, "%s at site %u", es_op_name(prof_site_at(p, key)->op), prof_site_at(p, key)->number);
	else
		snprintf(buf, len, "MPI (site not known)");
	return buf;
}

static int by_cost(const void *a, const void *b)
{
	const struct ws_cost *x = a, *y = b;
	uint64_t i = x->short_ns + x->long_ns, j = y->short_ns + y->long_ns;
	if (i != j)
		return i > j ? -1 : 1;
	return x->rank != y->rank ? x->rank - y->rank : (x->key > y->key) - (x->key < y->key);
}

static int by_share(const void *a, const void *b)
{
	const struct ws_share *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->rank != y->rank ? x->rank - y->rank : (x->key > y->key) - (x->key < y->key);
}

static void print_causes(const struct prof *p, FILE *out, int top)
{
	const struct ws_analysis *a = &p->why;
	char buf[128];
	if (a->ncosts)
		qsort(a->costs, a->ncosts, sizeof(*a->costs), by_cost);
	fprintf(out, "\n@--- Root causes: what delayed others (delay costs, top %d, descending) ---\n", top);
	fprintf(out, "%5s %-44s %14s %14s\n", "Rank", "Activity", "Direct (ms)", "Long-term (ms)");
	for (size_t i = 0; i < a->ncosts && (int)i < top; i++)
		fprintf(out, "%5d %-44s %14.3f %14.3f\n", a->costs[i].rank,
			activity(p, a->costs[i].key, a->costs[i].phase, buf, sizeof(buf)), ms(a->costs[i].short_ns),
			ms(a->costs[i].long_ns));
	if (!a->ncosts)
		fputs("(none)\n", out);
	if (a->npath)
		qsort(a->path, a->npath, sizeof(*a->path), by_share);
	fprintf(out, "\n@--- Critical path: %.3f ms (top %d activities on it, descending) ---\n", ms(a->path_ns), top);
	fprintf(out, "%5s %-44s %12s %8s\n", "Rank", "Activity", "Time (ms)", "Path%");
	for (size_t i = 0; i < a->npath && (int)i < top; i++)
		fprintf(out, "%5d %-44s %12.3f %8.2f\n", a->path[i].rank,
			activity(p, a->path[i].key, a->path[i].phase, buf, sizeof(buf)), ms(a->path[i].ns),
			pct(a->path[i].ns, a->path_ns));
	fprintf(out, "%5s %14s %14s\n", "Rank", "On path (ms)", "Off path (ms)");
	for (int r = 0; r < a->nranks; r++)
		fprintf(out, "%5d %14.3f %14.3f\n", r, ms(a->on_path_ns[r]), ms(a->off_path_ns[r]));
}

void prof_print_waits(const struct prof *p, FILE *out, int top)
{
	size_t n;
	const struct ws_row *all;
	uint32_t *v = sorted(p, &all, &n);
	fprintf(out, "\n@--- Wait states (Scalasca's patterns, top %d, descending) ---\n", top);
	fprintf(out, "%-44s %-26s %5s %5s %12s %8s %10s %12s %6s\n", "Pattern", "Call", "Site", "Rank", "Time (ms)",
		"MPI%", "Count", "Worst (ms)", "By");
	for (size_t i = 0; i < n && (int)i < top; i++) {
		char buf[64], by[12] = "";
		const struct ws_row *r = &all[v[i]];
		int c = caused_by(p, v[i]);
		if (c >= 0)
			snprintf(by, sizeof(by), "%d", c);
		fprintf(out, "%-44s %-26s %5u %5d %12.3f %8.2f %10llu %12.3f %6s\n", ws_pattern_name(r->pattern),
			call_of(r, buf, sizeof(buf)), site_number(p, r->site), r->rank, ms(r->ns),
			pct(r->ns, rank_mpi(p, r->rank)), (unsigned long long)r->count, ms(r->worst_ns), by);
	}
	uint64_t by[WS_NPATTERNS] = { 0 }, mpi = 0;
	for (size_t i = 0; i < n; i++)
		by[all[v[i]].pattern] += all[v[i]].ns;
	for (int r = 0; r < p->groups; r++)
		mpi += rank_mpi(p, r);
	fprintf(out, "\n@--- Wait states by pattern (every rank) ---\n");
	fprintf(out, "%-44s %12s %8s\n", "Pattern", "Time (ms)", "MPI%");
	for (int k = 0; k < WS_NPATTERNS; k++)
		if (by[k])
			fprintf(out, "%-44s %12.3f %8.2f\n", ws_pattern_name(k), ms(by[k]), pct(by[k], mpi));
	if (!n)
		fputs("(none)\n", out);
	print_stats(p, out);
	free(v);
	print_causes(p, out, top);
}

/* "phase":NAME or the site's "site", "call", "file", "line", "function" */
static void json_activity(const struct prof *p, FILE *f, uint32_t key, bool phase)
{
	if (phase) {
		fputs("\"phase\":", f);
		ar_json_string(f, prof_phase_name(p, key));
		return;
	}
	const struct psite *s = prof_site_at(p, key);
	const struct ar_frame *fr = s && s->where->nframes ? &s->where->frames[0] : NULL;
	fprintf(f, "\"site\":%u,\"call\":\"%s\",\"file\":", s ? s->number : 0, s ? es_op_name(s->op) : "");
	ar_json_string(f, fr ? fr->file : "");
	fprintf(f, ",\"line\":%d,\"function\":", fr ? fr->line : 0);
	ar_json_string(f, fr ? fr->function : "");
}

static void json_causes(const struct prof *p, FILE *f)
{
	const struct ws_analysis *a = &p->why;
	fputs(",\n\"delay_costs\":[", f);
	for (size_t i = 0; i < a->ncosts; i++) {
		fprintf(f, "%s{\"rank\":%d,", i ? ",\n" : "", a->costs[i].rank);
		json_activity(p, f, a->costs[i].key, a->costs[i].phase);
		fprintf(f, ",\"seconds\":%.9f,\"longterm_seconds\":%.9f}", (double)a->costs[i].short_ns / 1e9,
			(double)a->costs[i].long_ns / 1e9);
	}
	fprintf(f, "],\n\"critical_path\":{\"seconds\":%.9f,\"activities\":[", (double)a->path_ns / 1e9);
	for (size_t i = 0; i < a->npath; i++) {
		fprintf(f, "%s{\"rank\":%d,", i ? ",\n" : "", a->path[i].rank);
		json_activity(p, f, a->path[i].key, a->path[i].phase);
		fprintf(f, ",\"seconds\":%.9f,\"share\":%.6f}", (double)a->path[i].ns / 1e9,
			pct(a->path[i].ns, a->path_ns) / 100.0);
	}
	fputs("],\"ranks\":[", f);
	for (int r = 0; r < a->nranks; r++)
		fprintf(f, "%s{\"rank\":%d,\"on_path_seconds\":%.9f,\"off_path_seconds\":%.9f}", r ? "," : "", r,
			(double)a->on_path_ns[r] / 1e9, (double)a->off_path_ns[r] / 1e9);
	fputs("]}", f);
}

void prof_json_waits(const struct prof *p, FILE *f)
{
	size_t n;
	const struct ws_row *all;
	uint32_t *v = sorted(p, &all, &n);
	fputs(",\n\"wait_states\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct ws_row *r = &all[v[i]];
		const struct psite *s = prof_site_at(p, r->site);
		const struct ar_frame *fr = s && s->where->nframes ? &s->where->frames[0] : NULL;
		fprintf(f, "%s{\"pattern\":\"%s\",\"name\":\"%s\",\"call\":\"%s\",\"of\":\"%s\",\"site\":%u,",
			i ? ",\n" : "", ws_pattern_key(r->pattern), ws_pattern_name(r->pattern), es_op_name(r->op),
			es_op_name(r->of ? r->of : r->op), s ? s->number : 0);
		fputs("\"file\":", f);
		ar_json_string(f, fr ? fr->file : "");
		fprintf(f, ",\"line\":%d,\"function\":", fr ? fr->line : 0);
		ar_json_string(f, fr ? fr->function : "");
		uint32_t ix = v[i];
		fprintf(f, ",\"rank\":%d,\"seconds\":%.9f,\"count\":%llu,\"worst_seconds\":%.9f,\"mpi_share\":%.6f,"
			"\"indirect_seconds\":%.9f,\"caused_by\":%d}", r->rank, (double)r->ns / 1e9,
			(unsigned long long)r->count, (double)r->worst_ns / 1e9,
			pct(r->ns, rank_mpi(p, r->rank)) / 100.0, (double)indirect(p, ix) / 1e9, caused_by(p, ix));
	}
	fputs("],\n\"wait_ranks\":[", f);
	for (int rk = 0, k = 0; p->waits && rk < ws_ranks(p->waits); rk++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += all[v[i]].rank == rk && ws_pattern_parent(all[v[i]].pattern) < 0 ? all[v[i]].ns : 0;
		fprintf(f, "%s{\"rank\":%d,\"mpi_seconds\":%.9f,\"wait_seconds\":%.9f}", k++ ? "," : "", rk,
			(double)rank_mpi(p, rk) / 1e9, (double)sum / 1e9);
	}
	struct ws_stats st = { 0 };
	if (p->waits)
		ws_stats(p->waits, &st);
	fprintf(f, "],\n\"wait_judged\":{\"receives\":%llu,\"sends\":%llu,\"collectives\":%llu,\"unpaired\":%llu,"
		"\"incomplete\":%llu,\"by_test\":%llu,\"not_analysed\":%llu,\"clock_violations\":%llu}",
		(unsigned long long)st.receives, (unsigned long long)st.sends, (unsigned long long)st.colls,
		(unsigned long long)st.unpaired, (unsigned long long)st.incomplete, (unsigned long long)st.by_test,
		(unsigned long long)st.not_analysed, (unsigned long long)st.clock_violations);
	free(v);
	json_causes(p, f);
}
