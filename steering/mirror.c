/* mirror.c - the monitors' side of steering: a rank's objects mirrored from its trace space (schema, latest values), asks checked and written, their answers read. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "steering/steering.h"

struct mobj {
	struct st_member self;
	struct st_member m[ST_MEMBERS_MAX];
	ps_elem *data;
	unsigned char *buf; /* the latest publication read (self.offset bytes) */
	bool have;
};

struct st_mirror {
	ps_server *srv, *rw;
	ps_elem *schema, *ask, *done, *fired, *rules; /* fired, rules: NULL from an older application */
	uint64_t schema_next, done_next, fired_next;
	int nobj;
	struct mobj o[ST_OBJECTS_MAX];
	/* members read before their object's record: the object's writer puts
	 * them just before it, so one object's at a time */
	struct st_member pending[ST_MEMBERS_MAX];
	int npending;
	uint32_t asked;
};

int st_mirror_open(ps_server *srv, ps_server *rw, st_mirror **out)
{
	st_mirror *m = calloc(1, sizeof(*m));
	if (!m)
		return PS_ENOMEM;
	m->srv = srv;
	m->rw = rw;
	int rc = ps_elem_open(srv, ST_SCHEMA_ELEMENT, sizeof(struct st_member), &m->schema);
	if (!rc)
		rc = ps_elem_open(srv, ST_DONE_ELEMENT, sizeof(struct st_done), &m->done);
	if (!rc && rw)
		rc = ps_elem_open(rw, ST_ASK_ELEMENT, sizeof(struct st_ask), &m->ask);
	struct ps_stats st;
	if (!rc && !(rc = ps_elem_stats(m->done, &st)))
		m->done_next = st.written; /* answers to asks from now on */
	if (!rc && !ps_elem_open(srv, ST_FIRED_ELEMENT, sizeof(struct st_done), &m->fired) &&
	    !ps_elem_stats(m->fired, &st))
		m->fired_next = st.written;
	if (!rc)
		ps_elem_open(srv, ST_RULES_ELEMENT, sizeof(struct st_rule_rec), &m->rules);
	if (!rc)
		rc = st_mirror_refresh(m);
	if (rc) {
		st_mirror_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void st_mirror_close(st_mirror *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nobj; i++) {
		ps_elem_close(m->o[i].data);
		free(m->o[i].buf);
	}
	ps_elem_close(m->schema);
	ps_elem_close(m->done);
	ps_elem_close(m->fired);
	ps_elem_close(m->rules);
	ps_elem_close(m->ask);
	free(m);
}

/* An object's record: its members gathered, its data element opened.
 * A record that is no object's (its size, its count) is skipped. */
static int add_object(st_mirror *m, const struct st_member *self)
{
	if (m->nobj >= ST_OBJECTS_MAX || self->count > ST_MEMBERS_MAX ||
	    self->offset < sizeof(struct st_pub) || self->offset > PS_TUPLE_MAX)
		return 0;
	struct mobj *o = &m->o[m->nobj];
	memset(o, 0, sizeof(*o));
	o->self = *self;
	o->self.name[ST_NAME_MAX] = o->self.help[ST_HELP_MAX] = 0;
	uint32_t have = 0;
	for (int i = 0; i < m->npending; i++) {
		const struct st_member *p = &m->pending[i];
		if (p->obj == self->obj && p->idx >= 1 && p->idx <= self->count) {
			o->m[p->idx - 1] = *p;
			o->m[p->idx - 1].name[ST_NAME_MAX] = o->m[p->idx - 1].help[ST_HELP_MAX] = 0;
			have++;
		}
	}
	m->npending = 0;
	if (have != self->count)
		return 0;
	char name[PS_NAME_MAX + 1];
	snprintf(name, sizeof(name), ST_DATA_FORMAT, self->obj);
	int rc = ps_elem_open(m->srv, name, self->offset, &o->data);
	if (rc)
		return rc;
	if (!(o->buf = calloc(1, self->offset))) {
		ps_elem_close(o->data);
		return PS_ENOMEM;
	}
	m->nobj++;
	return 0;
}

int st_mirror_refresh(st_mirror *m)
{
	struct ps_stats st;
	int rc = ps_elem_stats(m->schema, &st);
	while (!rc && m->schema_next < st.written) {
		struct st_member r;
		uint64_t oldest;
		rc = ps_read(m->schema, m->schema_next, &r, 0, &oldest);
		if (rc)
			break;
		m->schema_next++;
		if (r.kind == ST_OBJECT)
			rc = add_object(m, &r);
		else if (m->npending < ST_MEMBERS_MAX)
			m->pending[m->npending++] = r;
	}
	return rc == PS_ETIMEDOUT ? 0 : rc;
}

int st_mirror_objects(const st_mirror *m)
{
	return m->nobj;
}

const struct st_member *st_mirror_object(const st_mirror *m, int i, const struct st_member **members)
{
	if (i < 0 || i >= m->nobj)
		return NULL;
	if (members)
		*members = m->o[i].m;
	return &m->o[i].self;
}

int st_mirror_find(const st_mirror *m, const char *obj)
{
	for (int i = 0; i < m->nobj; i++)
		if (!strcmp(m->o[i].self.name, obj))
			return i;
	return ST_ENOOBJ;
}

int st_mirror_latest(st_mirror *m, int i, struct st_pub *hdr)
{
	if (i < 0 || i >= m->nobj)
		return PS_EINVAL;
	struct mobj *o = &m->o[i];
	int rc = ps_read_latest(o->data, o->buf, NULL);
	if (rc)
		return rc;
	o->have = true;
	if (hdr)
		memcpy(hdr, o->buf, sizeof(*hdr));
	return 0;
}

int st_mirror_wait(st_mirror *m, int i, uint64_t seq, int timeout_ms)
{
	if (i < 0 || i >= m->nobj)
		return PS_EINVAL;
	struct mobj *o = &m->o[i];
	/* publication k is tuple k: wait for the one after seq */
	uint64_t oldest;
	int rc = ps_read(o->data, seq + 1, o->buf, timeout_ms, &oldest);
	if (rc == 0 || rc == PS_EDISCARDED)
		return st_mirror_latest(m, i, NULL);
	return rc;
}

double st_mirror_value(const st_mirror *m, int i, const struct st_member *f, uint32_t index)
{
	if (i < 0 || i >= m->nobj || !m->o[i].have || index >= f->count || f->kind == ST_METHOD)
		return 0;
	const struct mobj *o = &m->o[i];
	size_t each = f->kind == ST_INT ? sizeof(int) : sizeof(double);
	size_t at = sizeof(struct st_pub) + f->offset + index * each;
	if (at + each > o->self.offset)
		return 0;
	if (f->kind == ST_INT) {
		int v;
		memcpy(&v, o->buf + at, sizeof(v));
		return v;
	}
	double v;
	memcpy(&v, o->buf + at, sizeof(v));
	return v;
}

static const struct st_member *member(const struct mobj *o, const char *name)
{
	for (uint32_t k = 0; k < o->self.count; k++)
		if (!strcmp(o->m[k].name, name))
			return &o->m[k];
	return NULL;
}

int st_mirror_check(const st_mirror *m, const struct st_ask *k, char *err, size_t len)
{
	unsigned kind = ST_ASK_KIND(k->kind);
	if ((k->kind & ~(0xffu | ST_ASK_BY_RULE)) || kind < ST_ASK_SET || kind > ST_ASK_UNRULE)
		return ST_EBADASK;
	if (kind == ST_ASK_UNRULE) /* the application knows its rules' numbers */
		return 0;
	int i = st_mirror_find(m, k->obj);
	if (i < 0) {
		snprintf(err, len, "no object '%s' on this rank", k->obj);
		return ST_ENOOBJ;
	}
	const struct mobj *o = &m->o[i];
	if (kind == ST_ASK_RULE) {
		struct st_rule r;
		struct st_schema s = { .n = (int)o->self.count, .members = o->m };
		snprintf(s.obj, sizeof(s.obj), "%s", o->self.name);
		char why[160];
		if (st_rule_compile(k->u.rule, &s, &r, why, sizeof(why))) {
			snprintf(err, len, "rule: %s", why);
			return ST_ERULE;
		}
		return 0;
	}
	uint32_t n = kind == ST_ASK_CALL ? 1 : k->n;
	if (n < 1 || n > ST_SETS_MAX)
		return ST_EBADASK;
	for (uint32_t s = 0; s < n; s++) {
		const struct st_set *x = &k->u.set[s];
		const struct st_member *f = member(o, x->field);
		double v = kind == ST_ASK_CALL && !x->has_arg ? 0 : x->value;
		int rc = !f ? ST_ENOFIELD : kind == ST_ASK_CALL ? st_arg_check(f, v) : st_value_check(f, x->index, v);
		if (rc == ST_ERANGE)
			snprintf(err, len, "%s.%s: %.15g is out of its range [%.15g, %.15g]", k->obj, x->field, v, f->lo,
				 f->hi);
		else if (rc == ST_EINDEX)
			snprintf(err, len, "%s.%s[%u]: it has %u element%s", k->obj, x->field, x->index, f->count,
				 f->count == 1 ? "" : "s");
		else if (rc)
			snprintf(err, len, "%s.%s: %s", k->obj, x->field, st_strerror(rc));
		if (rc)
			return rc;
	}
	return 0;
}

int st_mirror_ask(st_mirror *m, struct st_ask *ask, uint64_t *id, char *err, size_t len)
{
	char spare[8];
	if (!err || !len)
		err = spare, len = sizeof(spare);
	*err = 0;
	if (!m->ask)
		return PS_EROFS;
	int rc = st_mirror_check(m, ask, err, len);
	if (rc)
		return rc;
	ask->id = (uint64_t)getpid() << 32 | ++m->asked;
	ask->stamp = base_now_ns(); /* its who: PastSet writes it (PS_STAMP_WHO) */
	rc = ps_write(m->ask, ask, 0, NULL);
	if (rc)
		snprintf(err, len, "%s", ps_strerror(rc));
	else if (id)
		*id = ask->id;
	return rc;
}

/* The answers to id among e's records from *next on, into out[*got..n) */
static int gather(ps_elem *e, uint64_t *next, uint64_t id, struct st_done *out, int n, int *got)
{
	struct ps_stats st;
	int rc = e ? ps_elem_stats(e, &st) : 0;
	if (!e || rc)
		return rc;
	if (*next < st.oldest)
		*next = st.oldest;
	while (*next < st.written && *got < n) {
		struct st_done d;
		uint64_t oldest;
		if (ps_read(e, *next, &d, 0, &oldest))
			break;
		++*next;
		if (d.ask == id) {
			d.who[ST_WHO_MAX] = d.obj[ST_NAME_MAX] = d.field[ST_NAME_MAX] = 0;
			d.why[sizeof(d.why) - 1] = 0;
			out[(*got)++] = d;
		}
	}
	return 0;
}

int st_mirror_answers(st_mirror *m, uint64_t id, struct st_done *out, int n, int timeout_ms)
{
	uint64_t until = base_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
	int got = 0;
	long nap = 100000; /* 0.1 ms, then doubling to 5 ms */
	for (;;) {
		/* a person's ask is answered in obj.done, a monitor's rule's in obj.fired */
		int rc = gather(m->done, &m->done_next, id, out, n, &got);
		if (!rc)
			rc = gather(m->fired, &m->fired_next, id, out, n, &got);
		if (rc)
			return rc;
		/* one refusal answers the whole ask */
		if (got >= n || (got && out[0].status) || base_now_ns() >= until)
			return got;
		struct timespec ts = { 0, nap };
		nanosleep(&ts, NULL);
		nap = nap < 5000000 ? nap * 2 : nap;
	}
}

int st_mirror_rules(st_mirror *m, struct st_rule_rec *out, int n)
{
	struct ps_stats st;
	if (!m->rules)
		return PS_ENOENT;
	int rc = ps_elem_stats(m->rules, &st);
	if (rc || st.written == 0)
		return rc;
	/* the latest record names its snapshot and how many it has: they are
	 * the last `of` written, all of that snapshot (read again if a newer
	 * one came meanwhile) */
	for (int tries = 0; tries < 4; tries++) {
		struct st_rule_rec last;
		uint64_t oldest;
		if ((rc = ps_read(m->rules, st.written - 1, &last, 0, &oldest)))
			return rc;
		uint32_t of = last.of < (uint32_t)n ? last.of : (uint32_t)n;
		if (last.of > st.written)
			return PS_EBADSEG;
		int got = 0;
		for (uint64_t i = st.written - (last.of ? last.of : 1); got < (int)of && i < st.written; i++)
			if (!ps_read(m->rules, i, &out[got], 0, &oldest) && out[got].snap == last.snap)
				got++;
		if (got == (int)of) {
			for (int k = 0; k < got; k++) {
				out[k].who[ST_WHO_MAX] = out[k].obj[ST_NAME_MAX] = out[k].text[ST_RULE_MAX] = 0;
			}
			return got;
		}
		if ((rc = ps_elem_stats(m->rules, &st)))
			return rc;
	}
	return PS_EAGAIN;
}

ps_elem *st_mirror_done_elem(st_mirror *m)
{
	return m->done;
}
