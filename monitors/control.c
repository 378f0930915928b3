/* control.c - live control of a running MPI job's ranks: their control elements opened, an order written and waited for, what each applied said (esctl collect, pause, resume, status). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/control.h"

/* A rank's control: its segment's two elements. */
struct rank {
	int rank;
	const char *where;
	ps_server *srv, *ro; /* es.ctl is written; es.ctl.now, the rank's own word, only read */
	ps_elem *ctl, *now;
};

static int open_rank(struct rank *r, const struct ps_remote_attr *ra)
{
	int st = ps_state_at(r->where, ra);
	if (st == PS_SHM_CLOSED || st == PS_SHM_STALE) {
		fprintf(stderr, "esctl: rank %d (%s) has %s: nothing to steer\n", r->rank, r->where,
			st == PS_SHM_CLOSED ? "ended" : "died");
		return PS_ENOENT;
	}
	int rc = ps_server_open_at(r->where, PS_RDWR, ra, &r->srv);
	if (!rc)
		rc = ps_server_open_at(r->where, PS_RDONLY, ra, &r->ro);
	if (!rc && !(rc = ps_elem_open(r->srv, ES_CTL_ELEMENT, sizeof(struct es_ctl_rec), &r->ctl)))
		rc = ps_elem_open(r->ro, ES_CTL_NOW_ELEMENT, sizeof(struct es_ctl_rec), &r->now);
	if (rc == PS_ENOENT && r->srv)
		fprintf(stderr, "esctl: %s: no control element: a job recorded by an EventSpace before "
			"live control, or by a PATHS collector\n", r->where);
	else if (rc)
		fprintf(stderr, "esctl: %s: %s\n", r->where, ps_strerror(rc));
	return rc;
}

static void close_rank(struct rank *r)
{
	ps_elem_close(r->ctl);
	ps_elem_close(r->now);
	ps_server_destroy(r->ro);
	ps_server_destroy(r->srv);
}

/* What the rank applied: its word, es.ctl.now, which an order builds on.
 * An order written and not applied yet is not built on: whoever wrote it
 * (another esctl, or anyone who may steer the job) may have numbered it
 * so that the rank refuses it, and ours after it would be refused too.
 * PS_EPROTO if the word is not one (its list not text, its number the
 * last there is). */
static int current(const struct rank *r, struct es_ctl_rec *now)
{
	if (ps_read_latest(r->now, now, NULL))
		return PS_ENOENT;
	struct es_ctl_rec c = *now;
	c.gen++, c.refused = 0;
	return now->gen == UINT64_MAX || es_ctl_check(&c, now->gen, 1) ? PS_EPROTO : 0;
}

/* LIST as es_mpi_select takes it: words split at commas and blanks, the
 * brackets of a YAML flow list dropped.  0, or 2 with the reason said. */
static int parse_list(const char *list, struct es_ctl_rec *c)
{
	char buf[sizeof(c->list)], *words[64];
	int lines[64], cols[64], n = 0;
	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "esctl: collect: a list of at most %zu characters\n", sizeof(buf) - 1);
		return 2;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *p = buf; *p && n < 64;) {
		p += strspn(p, "[], \t");
		if (!*p)
			break;
		size_t k = strcspn(p, "[], \t");
		words[n] = p, lines[n] = 1, cols[n] = (int)(p - buf) + 1;
		n++;
		p += k;
		if (*p)
			*p++ = 0;
	}
	if (!n) {
		fprintf(stderr, "esctl: collect: expected a list of calls ([all], [-all, MPI_Allreduce]...)\n");
		return 2;
	}
	struct pm_mpi m = { .given = true, .ncalls = n, .calls = (const char **)words, .lines = lines,
			    .cols = cols };
	char err[600];
	if (es_mpi_select(&m, "collect", c->collect, err, sizeof(err))) {
		fprintf(stderr, "esctl: %s\n", err);
		return 2;
	}
	/* kept as a flow list whatever way it was typed ("all", "[all]"):
	 * esctl status says every list the same way */
	size_t at = 0;
	for (int i = 0; i < n && at < sizeof(c->list); i++)
		at += (size_t)snprintf(c->list + at, sizeof(c->list) - at, "%s%s%s", i ? ", " : "[", words[i],
				       i == n - 1 ? "]" : "");
	if (at >= sizeof(c->list)) {
		fprintf(stderr, "esctl: collect: a list of at most %zu characters\n", sizeof(c->list) - 1);
		return 2;
	}
	return 0;
}

/* Who has applied an order (its generation) or refused it, as the ranks say. */
struct answers {
	const struct rank *r;
	int n;
	const uint64_t *gen;
	const uint32_t *refused;
	double until, nap;
	int applied, nos;
};

/* A look at every rank's word: MON_END once all answered, at the wait's
 * end or on a signal; else soon (a busy rank applies it within
 * microseconds), then less often (one in a long computation, at 50 Hz). */
static double look(void *arg)
{
	struct answers *a = arg;
	a->applied = a->nos = 0;
	for (int i = 0; i < a->n; i++) {
		struct es_ctl_rec c;
		bool said = ps_read_latest(a->r[i].now, &c, NULL) == 0;
		a->applied += said && c.gen >= a->gen[i];
		a->nos += said && c.gen < a->gen[i] && c.refused != a->refused[i];
	}
	if (a->applied + a->nos == a->n || mon_now() >= a->until || mon_stop)
		return MON_END;
	double nap = a->nap;
	a->nap = nap < 0.02 ? nap * 2 : 0.02;
	return nap;
}

/* Writes the order to every rank, then waits for each to apply it or
 * refuse it (a rank refuses the latest order if it is not one). */
static int order(struct rank *r, int n, const char *cmd, const char *list, double wait, FILE *out)
{
	struct es_ctl_rec want = { 0 };
	if (!strcmp(cmd, "collect") && parse_list(list, &want))
		return 2;
	uint64_t gen[n + 1];
	uint32_t refused[n + 1];
	for (int i = 0; i < n; i++) {
		struct es_ctl_rec now, c;
		int rc = current(&r[i], &now);
		if (rc) {
			fprintf(stderr, "esctl: rank %d %s\n", r[i].rank, rc == PS_ENOENT ? "has said nothing of what it records"
							  : "says what it records in words esctl cannot read");
			return 1;
		}
		c = now;
		c.refused = 0;
		if (!strcmp(cmd, "collect")) {
			memcpy(c.collect, want.collect, sizeof(c.collect));
			memcpy(c.list, want.list, sizeof(c.list));
		}
		c.paused = !strcmp(cmd, "pause") ? 1 : !strcmp(cmd, "resume") ? 0 : c.paused;
		c.gen = gen[i] = c.gen + 1;
		refused[i] = now.refused;
		rc = ps_write(r[i].ctl, &c, 0, NULL);
		if (rc) {
			fprintf(stderr, "esctl: rank %d (%s): %s\n", r[i].rank, r[i].where, ps_strerror(rc));
			return 1;
		}
	}
	struct answers a = { .r = r, .n = n, .gen = gen, .refused = refused, .until = mon_now() + wait, .nap = 0.0005 };
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, look, &a);
	mon_loop_run(&loop);
	int applied = a.applied, nos = a.nos;
	fprintf(out, "esctl: %s%s%s: applied by %d of %d ranks", cmd, *list ? " " : "", list, applied, n);
	if (nos)
		fprintf(out, "; %d refused the latest order written to them (another was written after this one, "
		       "numbered out of turn or not an order: esctl status says what they record)", nos);
	else if (applied < n)
		fprintf(out, " within %.0f s (a rank applies it at its next MPI call)", wait);
	fputc('\n', out);
	return applied == n ? 0 : 1;
}

static void status(const struct rank *r, int n, FILE *out)
{
	for (int i = 0; i < n; i++) {
		struct es_ctl_rec now, ord;
		struct ps_stats st;
		char list[241];
		if (ps_read_latest(r[i].now, &now, NULL)) {
			fprintf(out, "rank %d: said nothing yet\n", r[i].rank);
			continue;
		}
		es_ctl_list(&now, list);
		fprintf(out, "rank %d: records %s%s (order %llu)", r[i].rank, list, now.paused ? ", paused" : "",
		       (unsigned long long)now.gen);
		if (now.refused)
			fprintf(out, "; refused %u order%s", now.refused, now.refused == 1 ? "" : "s");
		if (ps_read_latest(r[i].ctl, &ord, NULL) == 0 && ord.gen > now.gen) {
			const char *why = ps_elem_stats(r[i].ctl, &st) ? "unreadable" : es_ctl_check(&ord, now.gen, st.written);
			es_ctl_list(&ord, list);
			if (why)
				fprintf(out, "; the latest written is no order it will apply (%s)", why);
			else
				fprintf(out, "; order %llu (%s%s) not applied: %s", (unsigned long long)ord.gen, list,
				       ord.paused ? ", paused" : "",
				       now.refused ? "no MPI call since, or the rank refused it (its number out of turn)"
						   : "no MPI call since");
		}
		fputc('\n', out);
	}
}

/* The job's ranks, one per segment, in rank order. */
static int find_ranks(const es_scope *s, struct rank **out)
{
	int n = 0;
	struct rank *r = calloc((size_t)es_scope_leaves(s) + 1, sizeof(*r));
	if (!r)
		return -1;
	for (int i = 0; i < es_scope_leaves(s); i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		bool seen = l->rank < 0;
		for (int k = 0; k < n && !seen; k++)
			seen = r[k].rank == l->rank;
		if (!seen)
			r[n++] = (struct rank){ .rank = l->rank, .where = l->segment };
	}
	for (int i = 1; i < n; i++) /* few: by insertion */
		for (int k = i; k > 0 && r[k - 1].rank > r[k].rank; k--) {
			struct rank t = r[k];
			r[k] = r[k - 1], r[k - 1] = t;
		}
	*out = r;
	return n;
}


struct mon_ctl {
	struct rank *r;
	int n;
};

int mon_ctl_open(const es_scope *s, const char *job, const struct ps_remote_attr *ra, mon_ctl **out)
{
	mon_ctl *c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "esctl: no memory for the job's ranks\n");
		return 1;
	}
	c->n = find_ranks(s, &c->r);
	int rc = 0;
	if (c->n <= 0) {
		fprintf(stderr, "esctl: job '%s' has no MPI ranks recorded by libescollect\n", job);
		c->n = 0;
		rc = 1;
	}
	for (int i = 0; i < c->n && !rc; i++)
		if (open_rank(&c->r[i], ra))
			rc = 1;
	if (rc) {
		mon_ctl_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void mon_ctl_close(mon_ctl *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		close_rank(&c->r[i]);
	free(c->r);
	free(c);
}

int mon_ctl_order(mon_ctl *c, const char *cmd, const char *list, double wait, FILE *out)
{
	return order(c->r, c->n, cmd, list, wait, out);
}

void mon_ctl_status(const mon_ctl *c, FILE *out)
{
	status(c->r, c->n, out);
}
