/* profile_json.c - esprofile --json: the profile's every row as JSON, for scripts that compare runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "archive/profile.h"

/*
 * One object; times in ns, bytes as counted by the page (page.c says
 * what each row means).  A rank of -1 is a row over every rank.  Arrays
 * are in the order the rows were counted, not sorted: a script sorts as
 * it likes.
 */


static void head(const struct prof *p, FILE *f)
{
	const ar_archive *a = p->a;
	fprintf(f, "{\"tool\":\"esprofile\",\"version\":\"%s\",\"job\":", ES_VERSION);
	ar_json_string(f, ar_job(a));
	fprintf(f, ",\"events\":%zu,\"lost\":%llu", ar_nevents(a), (unsigned long long)ar_lost(a));
	const struct ar_rank *r0 = p->mpi ? ar_rank(a, 0) : NULL;
	if (r0) {
		fputs(",\"command\":", f);
		ar_json_string(f, r0->cmd);
	}
	fprintf(f, ",\"app_ns\":%llu,\"mpi_ns\":%llu,\n\"ranks\":[", (unsigned long long)p->app_all,
		(unsigned long long)p->mpi_all);
	for (int g = 0, n = 0; g < p->groups; g++) {
		if (p->run[g].first == UINT64_MAX)
			continue;
		const struct ar_rank *r = p->mpi ? ar_rank(a, g) : NULL;
		fprintf(f, "%s{\"%s\":%d,\"app_ns\":%llu,\"mpi_ns\":%llu", n++ ? "," : "", p->mpi ? "rank" : "thread", g,
			(unsigned long long)prof_app(p, g), (unsigned long long)p->run[g].mpi);
		if (r) {
			fputs(",\"host\":", f);
			ar_json_string(f, r->host);
			fprintf(f, ",\"pid\":%d", r->pid);
		}
		fputc('}', f);
	}
	fputs("]", f);
}

static void calls(const struct prof *p, FILE *f)
{
	fputs(",\n\"calls\":[", f);
	for (size_t i = 0, n = 0; i < p->rows.n; i++) {
		const struct stat_row *r = BASE_AT(p->rows, struct stat_row, i);
		if (r->site)
			continue;
		/* count: calls, each poll one; regions: as OTF2 and the JSON have them */
		fprintf(f, "%s{\"call\":\"%s\",\"rank\":%d,\"count\":%llu,\"regions\":%llu,\"total_ns\":%llu,"
			"\"min_ns\":%llu,\"max_ns\":%llu,\"bytes\":%llu}", n++ ? ",\n" : "", es_op_name(r->op), r->rank,
			(unsigned long long)r->count, (unsigned long long)r->regions, (unsigned long long)r->total,
			(unsigned long long)(r->min == UINT64_MAX ? 0 : r->min), (unsigned long long)r->max,
			(unsigned long long)r->bytes);
	}
	fputs("]", f);
}

static void sites(const struct prof *p, FILE *f)
{
	fputs(",\n\"sites\":[", f);
	for (uint32_t id = 1; id <= p->sites.n; id++) {
		const struct psite *s = prof_site(p, id);
		fprintf(f, "%s{\"site\":%u,\"call\":\"%s\",\"frames\":[", id > 1 ? ",\n" : "", id, es_op_name(s->op));
		for (int k = 0; k < s->where->nframes; k++) {
			const struct ar_frame *fr = &s->where->frames[k];
			fputs(k ? ",{\"function\":" : "{\"function\":", f);
			ar_json_string(f, fr->function);
			fputs(",\"file\":", f);
			ar_json_string(f, fr->file);
			fprintf(f, ",\"line\":%d,\"module\":", fr->line);
			ar_json_string(f, fr->module);
			fprintf(f, ",\"offset\":%llu}", (unsigned long long)fr->offset);
		}
		fputs("]}", f);
	}
	fputs("],\n\"site_stats\":[", f);
	for (size_t i = 0, n = 0; i < p->rows.n; i++) {
		const struct stat_row *r = BASE_AT(p->rows, struct stat_row, i);
		if (!r->site)
			continue;
		fprintf(f, "%s{\"site\":%u,\"call\":\"%s\",\"rank\":%d,\"count\":%llu,\"total_ns\":%llu,\"min_ns\":%llu,"
			"\"max_ns\":%llu,\"sent\":{\"count\":%llu,\"bytes\":%llu,\"min\":%llu,\"max\":%llu}",
			n++ ? ",\n" : "", r->site, es_op_name(r->op), r->rank, (unsigned long long)r->count,
			(unsigned long long)r->total, (unsigned long long)(r->min == UINT64_MAX ? 0 : r->min),
			(unsigned long long)r->max, (unsigned long long)r->sent_n,
			(unsigned long long)(r->sent_n ? r->bytes : 0),
			(unsigned long long)(r->sent_n ? r->sent_min : 0), (unsigned long long)r->sent_max);
		if (r->rank == ALL)
			fprintf(f, ",\"cov\":%.4f", prof_cov(p, r));
		fputc('}', f);
	}
	fputs("]", f);
}

static void colls_and_traffic(const struct prof *p, FILE *f)
{
	fputs(",\n\"collectives\":[", f);
	for (size_t i = 0; i < p->colls.n; i++) {
		const struct coll *c = BASE_AT(p->colls, struct coll, i);
		const struct ar_comm *cm = ar_comm(p->a, c->comm);
		fprintf(f, "%s{\"call\":\"%s\",\"number\":%u,\"comm\":%u,\"world\":%s,\"last_rank\":%d,"
			"\"imbalance_ns\":%llu,\"ranks_in\":%d,\"time_ns\":%llu}", i ? ",\n" : "", es_op_name(c->op), c->arg,
			c->comm, cm && (cm->flags & ES_COMMS_WORLD) ? "true" : "false", c->last_rank,
			(unsigned long long)(c->last_in - c->first_in), c->n, (unsigned long long)c->time);
	}
	fputs("],\n\"communicators\":[", f);
	for (int k = 0, n = 0; k < ar_ncomms(p->a); k++) {
		const struct comm_tot *t = &p->comms[k];
		const struct ar_comm *cm = ar_comm(p->a, k);
		if (!t->colls && !t->msgs)
			continue;
		fprintf(f, "%s{\"comm\":%d,\"id\":\"%llx\",\"size\":%u,\"collectives\":%llu,\"coll_time_ns\":%llu,"
			"\"coll_bytes\":%llu,\"messages\":%llu,\"msg_bytes\":%llu}", n++ ? ",\n" : "", k,
			(unsigned long long)cm->id, cm->size[0] + cm->size[1], (unsigned long long)t->colls,
			(unsigned long long)t->coll_time, (unsigned long long)t->coll_bytes, (unsigned long long)t->msgs,
			(unsigned long long)t->msg_bytes);
	}
	fputs("],\n\"traffic\":[", f);
	for (size_t i = 0; i < p->pairs.n; i++) {
		const struct pair *q = BASE_AT(p->pairs, struct pair, i);
		fprintf(f, "%s{\"from\":%d,\"to\":%d,\"messages\":%llu,\"bytes\":%llu}", i ? ",\n" : "", q->from, q->to,
			(unsigned long long)q->count, (unsigned long long)q->bytes);
	}
	fputs("]", f);
}

static void phases_and_io(const struct prof *p, FILE *f)
{
	fputs(",\n\"phases\":[", f);
	for (size_t i = 0; i < p->phases.n; i++) {
		const struct phase_row *r = BASE_AT(p->phases, struct phase_row, i);
		fputs(i ? ",\n{\"phase\":" : "{\"phase\":", f);
		ar_json_string(f, r->key.name);
		fprintf(f, ",\"rank\":%d,\"count\":%llu,\"time_ns\":%llu,\"mpi_ns\":%llu,\"calls\":%llu}", r->key.rank,
			(unsigned long long)r->count, (unsigned long long)r->time, (unsigned long long)r->mpi,
			(unsigned long long)r->calls);
	}
	fputs("],\n\"io\":[", f);
	for (size_t i = 0; i < p->io.n; i++) {
		const struct io_row *r = BASE_AT(p->io, struct io_row, i);
		fputs(i ? ",\n{\"file\":" : "{\"file\":", f);
		ar_json_string(f, r->key.name);
		fprintf(f, ",\"rank\":%d,\"reads\":%llu,\"bytes_read\":%llu,\"writes\":%llu,\"bytes_written\":%llu,"
			"\"calls\":%llu,\"time_ns\":%llu}", r->key.rank, (unsigned long long)r->reads,
			(unsigned long long)r->read_bytes, (unsigned long long)r->writes, (unsigned long long)r->written,
			(unsigned long long)r->calls, (unsigned long long)r->time);
	}
	fputs("]}\n", f);
}

int ar_profile_json(const ar_archive *a, FILE *out, char *err, size_t errlen)
{
	struct prof p;
	int rc = prof_make(&p, a);
	if (!rc) {
		head(&p, out);
		calls(&p, out);
		sites(&p, out);
		colls_and_traffic(&p, out);
		if (p.mpi)
			prof_json_waits(&p, out);
		phases_and_io(&p, out);
	}
	return prof_end(&p, rc, out, err, errlen);
}
