/* app.c - the application's side of steering: its objects declared, sealed into the rank's trace space, published, and the asks and rules applied at its safe points. */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steering/steering.h"

#define SCHEMA_RECORDS (ST_OBJECTS_MAX * (ST_MEMBERS_MAX + 1)) /* never discarded */
#define ASKS_HELD 64
#define DONE_HELD 1024
#define FIRED_HELD 256
#define RULES_HELD (4 * (ST_RULES_MAX + ST_RULE_ASKERS + 1)) /* the latest snapshot, and room to read it */
#define PUBS_HELD 16

/* A member's variable or method, beside its schema record */
struct binding {
	void *var;
	st_method_fn fn;
	void *arg;
};

/*
 * Locks: the app's (declarations, attaching, sealing, safe points) before
 * an object's (its publications).  An object's data and writer are set
 * and cleared under both; a publication reads them under its own.
 */
struct st_obj {
	st_app *a;
	uint32_t id;
	struct st_member self; /* kind ST_OBJECT */
	int n;
	struct st_member m[ST_MEMBERS_MAX]; /* m[i].idx == i + 1 */
	struct binding b[ST_MEMBERS_MAX];
	uint32_t bytes; /* of values */
	pthread_mutex_t lock;
	ps_elem *data; /* NULL: not sealed */
	struct ps_writer w;
	uint64_t seq;
};

/* What a rule's actions came to, counted at the safe point that made them */
struct count {
	uint64_t fired, refused, last_ns;
	double last_value;
	int32_t last_status;
};

struct rule {
	struct st_rule r;
	uint32_t number;
	st_obj *o;
	char who[ST_WHO_MAX + 1]; /* who installed it */
	struct count c;
};

/* The asks of one monitor's rules (by who asks), counted */
struct asker {
	char who[ST_WHO_MAX + 1];
	char obj[ST_NAME_MAX + 1];
	uint32_t kind;
	struct count c;
};

struct st_app {
	pthread_mutex_t lock;
	ps_server *srv;
	ps_elem *schema, *ask, *done, *fired, *log; /* log: obj.rules */
	_Atomic(const uint64_t *) ask_word; /* obj.ask's count written; NULL when detached */
	_Atomic uint64_t ask_seen;          /* ... as the last safe point saw it */
	_Atomic int unsealed;               /* objects not sealed yet, or rules running: a safe point has work */
	uint64_t ask_next;                  /* the next ask to read */
	int nobj;
	st_obj *obj[ST_OBJECTS_MAX];
	int nrules;
	struct rule rules[ST_RULES_MAX];
	uint32_t rule_serial;
	int naskers; /* the last, ST_RULE_ASKERS - 1, gathers any more ("others") */
	struct asker askers[ST_RULE_ASKERS];
	bool moved;       /* counts changed since the last snapshot */
	uint64_t snap, snap_ns; /* snapshots written, the last's time */
	void (*on_done)(void *, const struct st_done *);
	void *on_done_arg;
};

int st_app_create(st_app **out)
{
	st_app *a = calloc(1, sizeof(*a));
	if (!a)
		return PS_ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
}

static void close_elems(st_app *a)
{
	for (int i = 0; i < a->nobj; i++) {
		st_obj *o = a->obj[i];
		pthread_mutex_lock(&o->lock);
		ps_elem_close(o->data);
		o->data = NULL;
		pthread_mutex_unlock(&o->lock);
	}
	atomic_store(&a->ask_word, NULL);
	ps_elem_close(a->schema);
	ps_elem_close(a->ask);
	ps_elem_close(a->done);
	ps_elem_close(a->fired);
	ps_elem_close(a->log);
	a->schema = a->ask = a->done = a->fired = a->log = NULL;
	a->srv = NULL;
	a->nrules = a->naskers = 0; /* rules ran on a space that is gone */
}

void st_app_destroy(st_app *a)
{
	if (!a)
		return;
	close_elems(a);
	for (int i = 0; i < a->nobj; i++) {
		pthread_mutex_destroy(&a->obj[i]->lock);
		free(a->obj[i]);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static int make(ps_server *srv, const char *name, size_t size, uint32_t held, unsigned flags, ps_elem **e)
{
	struct ps_elem_attr at = { .tuple_size = size, .threshold = held, .mode = PS_DISCARD, .flags = flags };
	return ps_elem_create(srv, name, &at, e);
}

static int unsealed(const st_app *a)
{
	int n = 0;
	for (int i = 0; i < a->nobj; i++)
		n += a->obj[i]->data == NULL;
	return n + a->nrules + a->moved; /* rules to run, counts to say */
}

int st_app_attach(st_app *a, ps_server *srv)
{
	if (!a)
		return PS_EINVAL;
	pthread_mutex_lock(&a->lock);
	close_elems(a);
	int rc = 0;
	if (srv) {
		if (!(rc = make(srv, ST_SCHEMA_ELEMENT, sizeof(struct st_member), SCHEMA_RECORDS, 0, &a->schema)))
			ps_elem_set_layout(a->schema, ST_MEMBER_LAYOUT);
		/* who asks is PastSet's to write, never the asker's (PS_STAMP_WHO) */
		if (!rc)
			rc = make(srv, ST_ASK_ELEMENT, sizeof(struct st_ask), ASKS_HELD,
				  PS_MULTI_WRITER | PS_CONTROL | PS_WHO_AT(offsetof(struct st_ask, who)), &a->ask);
		if (!rc)
			rc = make(srv, ST_DONE_ELEMENT, sizeof(struct st_done), DONE_HELD, 0, &a->done);
		if (!rc)
			rc = make(srv, ST_FIRED_ELEMENT, sizeof(struct st_done), FIRED_HELD, 0, &a->fired);
		if (!rc)
			rc = make(srv, ST_RULES_ELEMENT, sizeof(struct st_rule_rec), RULES_HELD, 0, &a->log);
		if (rc) {
			close_elems(a);
		} else {
			a->srv = srv;
			struct ps_stats st;
			ps_elem_stats(a->ask, &st);
			a->ask_next = st.written;
			atomic_store(&a->ask_seen, st.written);
			atomic_store(&a->ask_word, ps_elem_watch_word(a->ask));
		}
	}
	atomic_store(&a->unsealed, unsealed(a));
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void st_app_on_done(st_app *a, void (*fn)(void *arg, const struct st_done *d), void *arg)
{
	pthread_mutex_lock(&a->lock);
	a->on_done = fn;
	a->on_done_arg = arg;
	pthread_mutex_unlock(&a->lock);
}

/* --- declaring --------------------------------------------------------------------------- */

static st_obj *find_obj(const st_app *a, const char *name)
{
	for (int i = 0; i < a->nobj; i++)
		if (!strcmp(a->obj[i]->self.name, name))
			return a->obj[i];
	return NULL;
}

int st_obj_create(st_app *a, const char *name, const char *help, st_obj **out)
{
	if (!a || !out || st_name_check(name))
		return PS_EBADNAME;
	pthread_mutex_lock(&a->lock);
	int rc = a->nobj >= ST_OBJECTS_MAX ? ST_EFULL : find_obj(a, name) ? ST_EDUP : 0;
	st_obj *o = rc ? NULL : calloc(1, sizeof(*o));
	if (!rc && !o)
		rc = PS_ENOMEM;
	if (!rc) {
		o->a = a;
		o->id = (uint32_t)a->nobj + 1;
		o->self = (struct st_member){ .obj = o->id, .kind = ST_OBJECT };
		snprintf(o->self.name, sizeof(o->self.name), "%s", name);
		snprintf(o->self.help, sizeof(o->self.help), "%s", help ? help : "");
		pthread_mutex_init(&o->lock, NULL);
		a->obj[a->nobj++] = o;
		atomic_store(&a->unsealed, unsealed(a));
		*out = o;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

static int member_named(const st_obj *o, const char *name)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->m[i].name, name))
			return i;
	return -1;
}

/* A new member's record, or the reason there is none (under the app's lock) */
static int add_member(st_obj *o, const char *name, struct st_member *m)
{
	if (st_name_check(name))
		return PS_EBADNAME;
	if (o->data)
		return ST_ESEALED;
	if (o->n >= ST_MEMBERS_MAX)
		return ST_EFULL;
	if (member_named(o, name) >= 0)
		return ST_EDUP;
	*m = (struct st_member){ .obj = o->id, .idx = (uint32_t)o->n + 1 };
	snprintf(m->name, sizeof(m->name), "%s", name);
	return 0;
}

int st_obj_field(st_obj *o, const char *name, enum st_kind kind, void *var, uint32_t count, unsigned flags,
		 double lo, double hi, const char *help)
{
	if (!o || !var || !count || (kind != ST_INT && kind != ST_DOUBLE) || (flags & ~ST_WRITABLE) || !(lo <= hi))
		return PS_EINVAL;
	size_t each = kind == ST_INT ? sizeof(int) : sizeof(double);
	if (kind == ST_INT) { /* a set must fit the variable */
		lo = lo < INT_MIN ? INT_MIN : lo;
		hi = hi > INT_MAX ? INT_MAX : hi;
	}
	pthread_mutex_lock(&o->a->lock);
	struct st_member m;
	int rc = add_member(o, name, &m);
	uint32_t offset = (o->bytes + 7u) & ~7u;
	if (!rc && (count > ST_PUB_MAX / each || offset + count * each > ST_PUB_MAX - sizeof(struct st_pub)))
		rc = PS_E2BIG;
	if (!rc) {
		m.kind = kind, m.flags = flags, m.count = count, m.offset = offset, m.lo = lo, m.hi = hi;
		snprintf(m.help, sizeof(m.help), "%s", help ? help : "");
		o->m[o->n] = m;
		o->b[o->n++] = (struct binding){ .var = var };
		o->bytes = offset + count * (uint32_t)each;
	}
	pthread_mutex_unlock(&o->a->lock);
	return rc;
}

int st_obj_method(st_obj *o, const char *name, st_method_fn fn, void *arg, const char *help)
{
	return st_obj_method_range(o, name, fn, arg, -1e308, 1e308, help);
}

int st_obj_method_range(st_obj *o, const char *name, st_method_fn fn, void *arg, double lo, double hi,
			const char *help)
{
	if (!o || !fn || !(lo <= hi) || isinf(lo) || isinf(hi))
		return PS_EINVAL;
	pthread_mutex_lock(&o->a->lock);
	struct st_member m;
	int rc = add_member(o, name, &m);
	if (!rc) {
		m.kind = ST_METHOD, m.count = 1, m.lo = lo, m.hi = hi;
		snprintf(m.help, sizeof(m.help), "%s", help ? help : "");
		o->m[o->n] = m;
		o->b[o->n++] = (struct binding){ .fn = fn, .arg = arg };
	}
	pthread_mutex_unlock(&o->a->lock);
	return rc;
}

/* Makes o visible (under the app's lock): its data element, then its
 * members' records, then its own, so that a reader who sees the object's
 * record has the rest. */
static int seal(st_obj *o)
{
	st_app *a = o->a;
	if (o->data)
		return 0;
	if (!a->srv)
		return PS_ENOENT;
	char name[PS_NAME_MAX + 1];
	snprintf(name, sizeof(name), ST_DATA_FORMAT, o->id);
	size_t size = (sizeof(struct st_pub) + o->bytes + 7u) & ~(size_t)7u;
	ps_elem *e;
	int rc = make(a->srv, name, size, PUBS_HELD, PS_EXACT_WAKE, &e);
	struct ps_writer w;
	if (!rc && (rc = ps_writer_init(e, size, &w)))
		ps_elem_close(e);
	for (int i = 0; i < o->n && !rc; i++)
		rc = ps_write(a->schema, &o->m[i], 0, NULL);
	o->self.count = (uint32_t)o->n;
	o->self.offset = (uint32_t)size;
	if (!rc)
		rc = ps_write(a->schema, &o->self, 0, NULL);
	if (!rc) {
		pthread_mutex_lock(&o->lock);
		o->w = w;
		o->data = e;
		pthread_mutex_unlock(&o->lock);
	}
	atomic_store(&a->unsealed, unsealed(a));
	return rc;
}

/* --- publishing ---------------------------------------------------------------------------- */

int st_obj_publish(st_obj *o)
{
	if (!o)
		return PS_EINVAL;
	pthread_mutex_lock(&o->lock);
	if (__builtin_expect(!o->data, 0)) {
		pthread_mutex_unlock(&o->lock);
		pthread_mutex_lock(&o->a->lock);
		int rc = seal(o);
		pthread_mutex_unlock(&o->a->lock);
		if (rc)
			return rc == PS_ENOENT ? 0 : rc; /* no space yet: nobody to see it */
		pthread_mutex_lock(&o->lock);
		if (!o->data) { /* detached meanwhile */
			pthread_mutex_unlock(&o->lock);
			return 0;
		}
	}
	uint64_t i;
	unsigned char *slot = (unsigned char *)ps_put_begin(&o->w, &i);
	struct st_pub h = { .seq = o->seq++, .stamp = base_now_ns(), .obj = o->id, .bytes = o->bytes };
	memcpy(slot, &h, sizeof(h));
	unsigned char *values = slot + sizeof(h);
	for (int k = 0; k < o->n; k++)
		if (o->m[k].kind != ST_METHOD)
			memcpy(values + o->m[k].offset, o->b[k].var,
			       o->m[k].count * (o->m[k].kind == ST_INT ? sizeof(int) : sizeof(double)));
	ps_put_end_exact(&o->w, i);
	pthread_mutex_unlock(&o->lock);
	return 0;
}

/* --- the safe point ------------------------------------------------------------------------ */

static double get_value(const st_obj *o, int k, uint32_t index)
{
	return o->m[k].kind == ST_INT ? (double)((const int *)o->b[k].var)[index]
				      : ((const double *)o->b[k].var)[index];
}

static void put_value(st_obj *o, int k, uint32_t index, double v)
{
	if (o->m[k].kind == ST_INT)
		((int *)o->b[k].var)[index] = (int)v;
	else
		((double *)o->b[k].var)[index] = v;
}

/* A count moved by one action, applied (rc 0) or refused */
static void count(struct count *c, int rc, double v, uint64_t now)
{
	c->fired += !rc;
	c->refused += rc != 0;
	c->last_ns = now;
	c->last_value = v;
	c->last_status = rc;
}

/* An answer: a person's in obj.done (and told to on_done), a monitor's
 * rule's in obj.fired and counted by who asked. */
static void said(st_app *a, struct st_done *d)
{
	d->stamp = base_now_ns();
	if (d->kind & ST_ASK_BY_RULE) {
		ps_write(a->fired, d, 0, NULL);
		return;
	}
	ps_write(a->done, d, 0, NULL);
	if (a->on_done)
		a->on_done(a->on_done_arg, d);
}

/* The count of asks from a monitor's rule that asks as who */
static struct count *asker_of(st_app *a, const struct st_ask *k)
{
	for (int i = 0; i < a->naskers; i++)
		if (!strncmp(a->askers[i].who, k->who, ST_WHO_MAX))
			return &a->askers[i].c;
	struct asker *s = &a->askers[a->naskers < ST_RULE_ASKERS ? a->naskers++ : ST_RULE_ASKERS - 1];
	if (s - a->askers == ST_RULE_ASKERS - 1 && a->naskers == ST_RULE_ASKERS && *s->who)
		snprintf(s->who, sizeof(s->who), "others"); /* more askers than kept apart: together */
	else
		snprintf(s->who, sizeof(s->who), "%.*s", ST_WHO_MAX, k->who);
	snprintf(s->obj, sizeof(s->obj), "%.*s", ST_NAME_MAX, k->obj);
	s->kind = ST_ASK_KIND(k->kind);
	return &s->c;
}

/* A done record for ask k (names copied, bounded) */
static struct st_done answer(const struct st_ask *k, int status)
{
	struct st_done d = { .ask = k->id, .status = status, .kind = k->kind };
	snprintf(d.who, sizeof(d.who), "%.*s", ST_WHO_MAX, k->who);
	snprintf(d.obj, sizeof(d.obj), "%.*s", ST_NAME_MAX, k->obj);
	return d;
}

/* What an ask from a monitor's rule came to, counted too */
static void counted(st_app *a, const struct st_ask *k, int rc, double v)
{
	if (k->kind & ST_ASK_BY_RULE) {
		count(asker_of(a, k), rc, v, base_now_ns());
		a->moved = true;
	}
}

/* The sets of k: all checked, then all applied (under the app's lock) */
static int apply_sets(st_app *a, st_obj *o, const struct st_ask *k)
{
	int at[ST_SETS_MAX];
	if (k->n < 1 || k->n > ST_SETS_MAX) {
		struct st_done d = answer(k, ST_EBADASK);
		said(a, &d);
		counted(a, k, ST_EBADASK, 0);
		return 0;
	}
	for (uint32_t s = 0; s < k->n; s++) {
		char field[ST_NAME_MAX + 1];
		snprintf(field, sizeof(field), "%.*s", ST_NAME_MAX, k->u.set[s].field);
		at[s] = member_named(o, field);
		int rc = at[s] < 0 ? ST_ENOFIELD : st_value_check(&o->m[at[s]], k->u.set[s].index, k->u.set[s].value);
		if (rc) {
			struct st_done d = answer(k, rc);
			snprintf(d.field, sizeof(d.field), "%s", field);
			d.n = s, d.index = k->u.set[s].index, d.new_value = k->u.set[s].value;
			d.count = at[s] < 0 ? 0 : o->m[at[s]].count;
			said(a, &d);
			counted(a, k, rc, d.new_value);
			return 0;
		}
	}
	for (uint32_t s = 0; s < k->n; s++) {
		struct st_done d = answer(k, 0);
		snprintf(d.field, sizeof(d.field), "%s", o->m[at[s]].name);
		d.n = s, d.index = k->u.set[s].index, d.count = o->m[at[s]].count;
		d.old_value = get_value(o, at[s], d.index);
		put_value(o, at[s], d.index, k->u.set[s].value);
		d.new_value = get_value(o, at[s], d.index);
		said(a, &d);
		counted(a, k, 0, d.new_value);
	}
	return (int)k->n;
}

static int apply_call(st_app *a, st_obj *o, const struct st_ask *k)
{
	char name[ST_NAME_MAX + 1];
	snprintf(name, sizeof(name), "%.*s", ST_NAME_MAX, k->u.set[0].field);
	int at = member_named(o, name);
	double v = k->u.set[0].has_arg ? k->u.set[0].value : 0;
	/* its argument checked as a field's value: the monitor did, but an ask
	 * may come from anyone who may write */
	struct st_done d = answer(k, k->n != 1 ? ST_EBADASK : at < 0 ? ST_ENOFIELD : st_arg_check(&o->m[at], v));
	snprintf(d.field, sizeof(d.field), "%s", name);
	d.new_value = v;
	if (!d.status)
		o->b[at].fn(o->b[at].arg, v);
	said(a, &d);
	counted(a, k, d.status, v);
	return !d.status;
}

static int add_rule(st_app *a, st_obj *o, const struct st_ask *k)
{
	struct st_done d = answer(k, 0);
	char text[ST_RULE_MAX + 1];
	snprintf(text, sizeof(text), "%.*s", ST_RULE_MAX, k->u.rule);
	struct st_schema s = { .n = o->n, .members = o->m };
	snprintf(s.obj, sizeof(s.obj), "%s", o->self.name);
	struct rule *r = &a->rules[a->nrules];
	if (a->nrules >= ST_RULES_MAX) {
		d.status = ST_EFULL;
	} else if (st_rule_compile(text, &s, &r->r, d.why, sizeof(d.why))) {
		d.status = ST_ERULE;
	} else {
		*r = (struct rule){ .r = r->r, .number = ++a->rule_serial, .o = o };
		snprintf(r->who, sizeof(r->who), "%.*s", ST_WHO_MAX, k->who);
		d.index = r->number;
		a->nrules++;
		a->moved = true;
		a->snap_ns = 0; /* said at once */
	}
	said(a, &d);
	return !d.status;
}

static int drop_rule(st_app *a, const struct st_ask *k)
{
	struct st_done d = answer(k, ST_ERULE);
	d.index = k->n;
	for (int i = 0; i < a->nrules; i++)
		if (a->rules[i].number == k->n) {
			snprintf(d.obj, sizeof(d.obj), "%s", a->rules[i].o->self.name);
			d.new_value = (double)a->rules[i].c.fired; /* what it did, said as it goes */
			a->rules[i] = a->rules[--a->nrules];
			d.status = 0;
			a->moved = true;
			a->snap_ns = 0;
			break;
		}
	if (d.status)
		snprintf(d.why, sizeof(d.why), "no rule %u runs here", k->n);
	said(a, &d);
	return !d.status;
}

static int apply(st_app *a, const struct st_ask *k)
{
	char name[ST_NAME_MAX + 1];
	snprintf(name, sizeof(name), "%.*s", ST_NAME_MAX, k->obj);
	unsigned kind = ST_ASK_KIND(k->kind);
	bool by_rule = k->kind & ST_ASK_BY_RULE;
	if (kind == ST_ASK_UNRULE && !by_rule)
		return drop_rule(a, k);
	st_obj *o = find_obj(a, name);
	if (!o || !o->data || kind < ST_ASK_SET || kind > ST_ASK_RULE || (k->kind & ~(0xffu | ST_ASK_BY_RULE)) ||
	    (by_rule && kind == ST_ASK_RULE)) {
		struct st_done d = answer(k, !o || !o->data ? ST_ENOOBJ : ST_EBADASK);
		said(a, &d);
		counted(a, k, d.status, 0);
		return 0;
	}
	return kind == ST_ASK_SET ? apply_sets(a, o, k) : kind == ST_ASK_CALL ? apply_call(a, o, k) : add_rule(a, o, k);
}

/* The asks written since the last safe point, in order (under the app's lock) */
static int apply_asks(st_app *a)
{
	struct ps_stats st;
	int n = 0;
	if (ps_elem_stats(a->ask, &st))
		return 0;
	while (a->ask_next < st.written) {
		struct st_ask k;
		uint64_t oldest = 0;
		int rc = ps_read(a->ask, a->ask_next, &k, 0, &oldest);
		if (rc == PS_EDISCARDED && oldest > a->ask_next) {
			struct st_done d = { .status = ST_ELOST, .n = (uint32_t)(oldest - a->ask_next) };
			said(a, &d);
			a->ask_next = oldest;
			continue;
		}
		if (rc)
			break; /* not readable yet: the next safe point tries again */
		a->ask_next++;
		n += apply(a, &k);
	}
	atomic_store(&a->ask_seen, a->ask_next);
	return n;
}

static double rule_get(void *arg, uint32_t idx, uint32_t index)
{
	const st_obj *o = arg;
	return idx >= 1 && (int)idx <= o->n && o->m[idx - 1].kind != ST_METHOD && index < o->m[idx - 1].count
		       ? get_value(o, (int)idx - 1, index) : 0;
}

/* Each rule running here, evaluated on the variables as they are now; its
 * action checked like any ask's and applied where it was compiled to go,
 * counted, never written by itself (under the app's lock) */
static int run_rules(st_app *a)
{
	int n = 0;
	uint64_t now = 0;
	for (int i = 0; i < a->nrules; i++) {
		struct rule *r = &a->rules[i];
		double v;
		if (!st_rule_eval(&r->r, rule_get, r->o, &v))
			continue;
		int k = (int)r->r.target - 1; /* compiled: a member of r->o */
		const struct st_member *m = &r->o->m[k];
		int rc;
		if (r->r.kind == ST_ASK_SET) {
			if (!(rc = st_value_check(m, r->r.target_index, v)))
				put_value(r->o, k, r->r.target_index, v);
		} else if (!(rc = st_arg_check(m, v))) {
			r->o->b[k].fn(r->o->b[k].arg, v);
		}
		count(&r->c, rc, v, now ? now : (now = base_now_ns()));
		a->moved = true;
		n += !rc;
	}
	return n;
}

/* A record of obj.rules for rule r, or asker s */
static void rule_rec(const st_app *a, const struct rule *r, const struct asker *s, uint32_t of,
		     struct st_rule_rec *x)
{
	const struct count *c = r ? &r->c : &s->c;
	*x = (struct st_rule_rec){ .snap = a->snap, .stamp = a->snap_ns, .of = of, .fired = c->fired,
				   .refused = c->refused, .last_ns = c->last_ns, .last_value = c->last_value,
				   .last_status = c->last_status };
	if (r) {
		x->number = r->number, x->kind = r->r.kind;
		snprintf(x->who, sizeof(x->who), "%s", r->who);
		snprintf(x->obj, sizeof(x->obj), "%s", r->o->self.name);
		snprintf(x->text, sizeof(x->text), "%s", r->r.text);
	} else {
		x->kind = s->kind;
		snprintf(x->who, sizeof(x->who), "%s", s->who);
		snprintf(x->obj, sizeof(x->obj), "%s", s->obj);
	}
}

/* Every rule and asker now, as one snapshot, when their counts moved: at
 * once after a rule came or went, else at most every ST_RULES_EVERY_NS
 * (a rule's firing is never written by itself) */
static void snapshot(st_app *a)
{
	if (!a->moved)
		return;
	uint64_t now = base_now_ns();
	if (a->snap_ns && now - a->snap_ns < ST_RULES_EVERY_NS)
		return;
	a->moved = false;
	a->snap++;
	a->snap_ns = now;
	uint32_t of = (uint32_t)(a->nrules + a->naskers);
	struct st_rule_rec x;
	if (!of) { /* none runs: one record that says so */
		rule_rec(a, NULL, &(struct asker){ .who = "" }, 0, &x);
		ps_write(a->log, &x, 0, NULL);
	}
	for (int i = 0; i < a->nrules; i++) {
		rule_rec(a, &a->rules[i], NULL, of, &x);
		ps_write(a->log, &x, 0, NULL);
	}
	for (int i = 0; i < a->naskers; i++) {
		rule_rec(a, NULL, &a->askers[i], of, &x);
		ps_write(a->log, &x, 0, NULL);
	}
}

int st_app_sync(st_app *a)
{
	if (!a)
		return 0;
	const uint64_t *w = atomic_load_explicit(&a->ask_word, memory_order_acquire);
	if (!w || (__atomic_load_n(w, __ATOMIC_ACQUIRE) == atomic_load_explicit(&a->ask_seen, memory_order_relaxed) &&
		   !atomic_load_explicit(&a->unsealed, memory_order_relaxed)))
		return 0;
	pthread_mutex_lock(&a->lock);
	int n = 0;
	if (a->srv) {
		for (int i = 0; i < a->nobj; i++)
			if (!a->obj[i]->data)
				seal(a->obj[i]);
		n = apply_asks(a);
		n += run_rules(a);
		snapshot(a);
		atomic_store(&a->unsealed, unsealed(a));
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}
