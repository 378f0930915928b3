/* waits.c - an archive's wait states for the profile: the engine fed (waitfeed.c) with the profile's call sites and phase names as keys, its causes and critical path. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive/profile.h"

/* A phase name's key (its index + 1; names are few), 0 when no memory. */
static uint32_t phase_key(struct prof *p, const char *name)
{
	for (size_t i = 0; i < p->nphase_names; i++)
		if (!strcmp(p->phase_names[i], name))
			return (uint32_t)i + 1;
	char **v = realloc(p->phase_names, sizeof(*v) * (p->nphase_names + 1));
	if (!v)
		return 0;
	p->phase_names = v;
	if (!(v[p->nphase_names] = strdup(name)))
		return 0;
	return (uint32_t)++p->nphase_names;
}

const char *prof_phase_name(const struct prof *p, uint32_t key)
{
	return key && key <= p->nphase_names ? p->phase_names[key - 1] : "(outside phases)";
}

/* the profile's keys: its call sites */
struct keys {
	struct prof *p;
	int nt, err;
};

static uint32_t site_key(void *arg, int thread, const struct es_trace *t)
{
	struct keys *k = arg;
	/* only the calls the page lists sites for: not a completion (the
	 * engine takes the completing call's) but MPI_Sendrecv's receive,
	 * which the engine judges as the call itself and which carries its
	 * site; not a mark, MPI_Init or Finalize */
	unsigned code = es_op_code(t->op);
	bool sendrecv = (t->op & ES_OP_DONE) && (code == ES_OP_MPI_SENDRECV || code == ES_OP_MPI_SENDRECV_REPLACE);
	if (thread >= k->nt || !(es_in_mpi_call(t->op) || sendrecv) || es_is_mark(t->op))
		return 0;
	return prof_site_key(k->p, thread, ES_TRACE_SITE(t), code);
}

static uint32_t phase_key_of(void *arg, const char *name)
{
	struct keys *k = arg;
	uint32_t key = phase_key(k->p, name);
	k->err = key ? k->err : -ENOMEM;
	return key;
}

/* Each row's rank that caused most of its time (the kept waits' delayers). */
static int causers(struct prof *p)
{
	const struct ws_row *rows;
	size_t nr = ws_rows(p->waits, &rows);
	uint32_t *t = malloc(sizeof(*t) * (nr + 1));
	p->caused_by = malloc(sizeof(*p->caused_by) * (nr + 1));
	int rc = t && p->caused_by ? ws_causers(p->waits, t) : -ENOMEM;
	for (size_t i = 0; !rc && i < nr; i++)
		p->caused_by[i] = t[i] < (uint32_t)ar_nthreads(p->a) ? ar_thread(p->a, (int)t[i])->rank : -1;
	free(t);
	return rc;
}

int prof_make(struct prof *p, const ar_archive *a)
{
	int rc = prof_build(p, a);
	if (!rc && p->mpi)
		rc = prof_waits(p);
	rc = rc ? rc : p->oom ? -ENOMEM : 0;
	return rc ? rc : prof_finish(p);
}

int prof_waits(struct prof *p)
{
	struct keys k = { .p = p, .nt = ar_nthreads(p->a) };
	int rc = ws_create(&p->waits);
	if (!rc) {
		ws_keep(p->waits);
		rc = ar_waits_feed(p->a, NULL, p->waits, &(struct ar_wait_keys){ site_key, phase_key_of, &k });
	}
	rc = rc ? rc : k.err;
	if (!rc)
		rc = ws_analyse(p->waits, &p->why);
	if (!rc)
		rc = causers(p);
	return rc;
}
