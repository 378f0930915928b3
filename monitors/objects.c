/* objects.c - a job's objects mirrored rank by rank: listed, set and called (checked on every rank before any is asked), and rules run here at each publication. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "monitors/objects.h"

static void close_rank(struct mon_objs_rank *r)
{
	st_mirror_close(r->m);
	if (r->rw != r->ro)
		ps_server_destroy(r->rw);
	ps_server_destroy(r->ro);
	r->m = NULL, r->ro = r->rw = NULL;
}

static bool seen(const struct mon_objs *o, int rank)
{
	for (int i = 0; i < o->n; i++)
		if (o->r[i].rank == rank)
			return true;
	return false;
}

/* One rank's mirror: 1 if it has objects, 0 if not, 2 if it ended, or an error */
static int open_rank(struct mon_objs_rank *r, const struct ps_remote_attr *ra)
{
	int st = ps_state_at(r->where, ra);
	if (st == PS_SHM_CLOSED || st == PS_SHM_STALE)
		return 2;
	int rc = ps_server_open_at(r->where, PS_RDONLY, ra, &r->ro);
	if (!rc && ps_server_open_at(r->where, PS_RDWR, ra, &r->rw))
		r->rw = NULL; /* watch only: asks are refused (PS_EROFS) */
	if (!rc)
		rc = st_mirror_open(r->ro, r->rw, &r->m);
	if (rc) {
		close_rank(r);
		return rc == PS_ENOENT ? 0 : rc;
	}
	return 1;
}

int mon_objs_open(const es_scope *s, const struct ps_remote_attr *ra, struct mon_objs *o, char *err, size_t len)
{
	memset(o, 0, sizeof(*o));
	o->ra = *ra;
	o->r = calloc((size_t)es_scope_leaves(s) + 1, sizeof(*o->r));
	if (!o->r)
		return -ENOMEM;
	struct mon_objs_rank *ranks = calloc((size_t)es_scope_leaves(s) + 1, sizeof(*ranks));
	int nranks = 0;
	for (int i = 0; ranks && i < es_scope_leaves(s); i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		/* an MPI rank's space, or a PATHS process's: each once */
		bool dup = false;
		for (int k = 0; k < nranks && !dup; k++)
			dup = l->rank >= 0 ? ranks[k].rank == l->rank : !strcmp(ranks[k].where, l->segment);
		if (!dup) {
			struct mon_objs_rank *r = &ranks[nranks++];
			r->rank = l->rank;
			snprintf(r->where, sizeof(r->where), "%s", l->segment);
			if (l->rank >= 0)
				snprintf(r->name, sizeof(r->name), "rank %d", l->rank);
			else /* its segment's name, the host's part left out */
				snprintf(r->name, sizeof(r->name), "%s", strrchr(l->segment, '/') ? strrchr(l->segment, '/') + 1
												 : l->segment);
		}
	}
	o->ranks = nranks;
	int rc = ranks ? 0 : -ENOMEM;
	for (int i = 0; i < nranks && !rc; i++) {
		int got = open_rank(&ranks[i], ra);
		if (got < 0) {
			snprintf(err, len, "%s (%s): %s", ranks[i].name, ranks[i].where, ps_strerror(got));
			rc = got;
		} else if (got == 1) {
			o->r[o->n++] = ranks[i];
		}
		o->ended += got == 2;
	}
	free(ranks);
	for (int i = 1; i < o->n; i++) /* few: by insertion */
		for (int k = i; k > 0 && o->r[k - 1].rank > o->r[k].rank; k--) {
			struct mon_objs_rank t = o->r[k];
			o->r[k] = o->r[k - 1], o->r[k - 1] = t;
		}
	if (rc)
		mon_objs_close(o);
	return rc;
}

void mon_objs_close(struct mon_objs *o)
{
	for (int i = 0; i < o->n; i++)
		close_rank(&o->r[i]);
	free(o->r);
	o->r = NULL;
	o->n = 0;
}

/* --- listing ----------------------------------------------------------------------------- */

static void print_values(const st_mirror *m, int i, const struct st_member *f, bool have, FILE *out)
{
	if (!have) {
		fputs(" (not published yet)", out);
		return;
	}
	for (uint32_t k = 0; k < f->count && k < 8; k++) {
		char v[40];
		st_value_format(f, st_mirror_value(m, i, f, k), v, sizeof(v));
		fprintf(out, " %s", v);
	}
	if (f->count > 8)
		fprintf(out, " ... (%u in all)", f->count);
}

static void print_member(const st_mirror *m, int i, const struct st_member *f, bool have, FILE *out)
{
	char type[24], range[112] = "";
	if (f->kind == ST_METHOD) {
		fprintf(out, "    %s(arg)  method  %s\n", f->name, f->help);
		return;
	}
	snprintf(type, sizeof(type), f->count > 1 ? "%s[%u]" : "%s", f->kind == ST_INT ? "int" : "double", f->count);
	if (f->flags & ST_WRITABLE) {
		char lo[40], hi[40];
		st_value_format(f, f->lo, lo, sizeof(lo));
		st_value_format(f, f->hi, hi, sizeof(hi));
		snprintf(range, sizeof(range), "writable in [%s, %s]", lo, hi);
	} else {
		snprintf(range, sizeof(range), "read-only");
	}
	fprintf(out, "    %s  %s  %s  %s\n      =", f->name, type, range, f->help);
	print_values(m, i, f, have, out);
	fputc('\n', out);
}

void mon_objs_list(struct mon_objs *o, FILE *out)
{
	if (!o->n)
		fprintf(out, "no rank of the job's %d exposes an object (es_object.h)\n", o->ranks);
	for (int r = 0; r < o->n; r++) {
		st_mirror *m = o->r[r].m;
		st_mirror_refresh(m);
		for (int i = 0; i < st_mirror_objects(m); i++) {
			const struct st_member *ms, *self = st_mirror_object(m, i, &ms);
			struct st_pub h;
			bool have = st_mirror_latest(m, i, &h) == 0;
			fprintf(out, "%s: %s  %s", o->r[r].name, self->name, self->help);
			if (have)
				fprintf(out, "  (published %llu time%s)", (unsigned long long)h.seq + 1, h.seq ? "s" : "");
			fputc('\n', out);
			for (uint32_t k = 0; k < self->count; k++)
				print_member(m, i, &ms[k], have, out);
		}
	}
}

void mon_done_text(const struct st_done *d, char *out, size_t len)
{
	if (d->status == ST_ELOST)
		snprintf(out, len, "%u asks lost: %s", d->n, st_strerror(d->status));
	else if (d->status)
		snprintf(out, len, "refused %s.%s: %s%s%.95s", d->obj, d->field, st_strerror(d->status), *d->why ? ": " : "",
			 d->why);
	else if (d->kind == ST_ASK_CALL)
		snprintf(out, len, "%s.%s(%.15g) called", d->obj, d->field, d->new_value);
	else if (d->kind == ST_ASK_RULE || d->kind == ST_ASK_UNRULE)
		snprintf(out, len, "rule %u %s", d->index, d->kind == ST_ASK_RULE ? "begun" : "removed");
	else if (d->index)
		snprintf(out, len, "%s.%s[%u] %.15g -> %.15g", d->obj, d->field, d->index, d->old_value, d->new_value);
	else
		snprintf(out, len, "%s.%s %.15g -> %.15g", d->obj, d->field, d->old_value, d->new_value);
}

/* Every change each rank applied and every ask it refused, as its log holds them */
void mon_objs_changes(struct mon_objs *o, FILE *out)
{
	for (int r = 0; r < o->n; r++) {
		ps_elem *e = st_mirror_done_elem(o->r[r].m);
		struct ps_stats st;
		if (ps_elem_stats(e, &st))
			continue;
		if (st.oldest)
			fprintf(out, "%s: %llu older records no longer held\n", o->r[r].name,
				(unsigned long long)st.oldest);
		for (uint64_t i = st.oldest; i < st.written; i++) {
			struct st_done d;
			if (ps_read(e, i, &d, 0, NULL))
				continue;
			d.who[ST_WHO_MAX] = d.obj[ST_NAME_MAX] = d.field[ST_NAME_MAX] = 0;
			d.why[sizeof(d.why) - 1] = 0;
			char text[300];
			mon_done_text(&d, text, sizeof(text));
			fprintf(out, "%s: by %s: %s\n", o->r[r].name, d.who, text);
		}
	}
}

/* --- asking ---------------------------------------------------------------------------------- */

int mon_objs_parse_set(const char *text, char obj[ST_NAME_MAX + 1], struct st_set *set, char *err, size_t len)
{
	memset(set, 0, sizeof(*set));
	const char *dot = strchr(text, '.'), *eq = strchr(text, '=');
	const char *br = dot ? strchr(dot, '[') : NULL;
	if (!dot || !eq || dot > eq || (size_t)(dot - text) > ST_NAME_MAX) {
		snprintf(err, len, "'%s': expected OBJECT.FIELD=VALUE or OBJECT.FIELD[INDEX]=VALUE", text);
		return ST_EBADASK;
	}
	snprintf(obj, ST_NAME_MAX + 1, "%.*s", (int)(dot - text), text);
	const char *fend = br && br < eq ? br : eq;
	if ((size_t)(fend - dot - 1) > ST_NAME_MAX || fend == dot + 1) {
		snprintf(err, len, "'%s': expected a field's name after '%s.'", text, obj);
		return ST_EBADASK;
	}
	snprintf(set->field, sizeof(set->field), "%.*s", (int)(fend - dot - 1), dot + 1);
	char *end;
	if (br && br < eq) {
		unsigned long i = strtoul(br + 1, &end, 10);
		if (end == br + 1 || *end != ']' || end + 1 != eq || i > UINT32_MAX) {
			snprintf(err, len, "'%s': expected an index in brackets before '='", text);
			return ST_EBADASK;
		}
		set->index = (uint32_t)i;
	}
	set->value = strtod(eq + 1, &end);
	if (end == eq + 1 || *end) {
		snprintf(err, len, "'%s': expected a number after '='", text);
		return ST_EBADASK;
	}
	if (st_name_check(obj) || st_name_check(set->field)) {
		snprintf(err, len, "'%s': names are letters, digits and _ (31 at most)", text);
		return ST_EBADASK;
	}
	return 0;
}

/* What one answer says, in a user's words */
static void say_answer(const struct mon_objs_rank *r, const struct st_ask *k, const struct st_done *d, FILE *out)
{
	if (d->status) {
		fprintf(out, "%s: refused: %s.%s: %s%s%s\n", r->name, d->obj, d->field, st_strerror(d->status),
			*d->why ? ": " : "", d->why);
		return;
	}
	char old[40], now[40];
	if (k->kind == ST_ASK_RULE) {
		fprintf(out, "%s: rule %u runs in the application\n", r->name, d->index);
	} else if (k->kind == ST_ASK_UNRULE) {
		fprintf(out, "%s: rule %u removed\n", r->name, d->index);
	} else if (k->kind == ST_ASK_CALL) {
		snprintf(now, sizeof(now), "%.15g", d->new_value);
		fprintf(out, "%s: %s.%s(%s) called\n", r->name, d->obj, d->field, now);
	} else {
		snprintf(old, sizeof(old), "%.15g", d->old_value);
		snprintf(now, sizeof(now), "%.15g", d->new_value);
		fprintf(out, "%s: %s.%s", r->name, d->obj, d->field);
		if (d->index)
			fprintf(out, "[%u]", d->index);
		fprintf(out, " %s -> %s\n", old, now);
	}
}

/* Whether rank r takes part: it has the object (any, for an unrule) */
static bool takes_part(struct mon_objs_rank *r, int only, const struct st_ask *k)
{
	if (only >= 0 && r->rank != only)
		return false;
	st_mirror_refresh(r->m);
	return k->kind == ST_ASK_UNRULE || st_mirror_find(r->m, k->obj) >= 0;
}

int mon_objs_ask(struct mon_objs *o, int only, struct st_ask *ask, const char *what, double wait, FILE *out, char *err,
		 size_t len)
{
	int n = 0;
	for (int i = 0; i < o->n; i++) {
		if (!takes_part(&o->r[i], only, ask))
			continue;
		n++;
		int rc = st_mirror_check(o->r[i].m, ask, err, len);
		if (!rc && !o->r[i].rw)
			snprintf(err, len, "%s: its segment is read-only to you", o->r[i].name), rc = PS_EROFS;
		if (rc)
			return 2;
	}
	if (!n) {
		if (only >= 0 && !seen(o, only))
			snprintf(err, len, "rank %d exposes no object", only);
		else
			snprintf(err, len, "no rank exposes an object '%s' (esctl JOB objects lists them)", ask->obj);
		return 2;
	}
	uint64_t *ids = calloc((size_t)o->n, sizeof(*ids));
	if (!ids)
		return 2;
	for (int i = 0; i < o->n; i++)
		if (takes_part(&o->r[i], only, ask) && st_mirror_ask(o->r[i].m, ask, &ids[i], err, len)) {
			fprintf(out, "%s: not asked: %s\n", o->r[i].name, err);
			ids[i] = 0;
		}
	int applied = 0, want = ask->kind == ST_ASK_SET ? (int)ask->n : 1;
	double until = mon_now() + wait;
	for (int i = 0; i < o->n; i++) {
		if (!ids[i])
			continue;
		struct st_done d[ST_SETS_MAX];
		double left = until - mon_now();
		int got = st_mirror_answers(o->r[i].m, ids[i], d, want, left > 0 ? (int)(left * 1000) : 0);
		for (int k = 0; k < got; k++)
			say_answer(&o->r[i], ask, &d[k], out);
		if (got >= want && !d[0].status)
			applied++;
		else if (!got)
			fprintf(out, "%s: not applied within %.0f s (a rank applies asks at its next es_object_sync)\n",
				o->r[i].name, wait);
	}
	free(ids);
	fprintf(out, "esctl: %s: applied by %d of %d rank%s\n", what, applied, n, n == 1 ? "" : "s");
	return applied == n ? 0 : 1;
}

/* --- a rule run here ----------------------------------------------------------------------- */

struct ruled {
	int obj;       /* the object's index in the rank's mirror */
	struct st_rule r;
	uint64_t seq;  /* the last publication evaluated */
	uint64_t busy; /* the ask in flight, 0: none */
	uint64_t after; /* when its answer was applied: a publication before it still shows the old values */
	struct st_ask k;
};

struct getter {
	const st_mirror *m;
	int obj;
	const struct st_member *ms;
};

static double get(void *arg, uint32_t idx, uint32_t index)
{
	const struct getter *g = arg;
	return st_mirror_value(g->m, g->obj, &g->ms[idx - 1], index);
}

/* The rule compiled against rank r's object: 0, or 2 with why in err */
static int rule_on(struct mon_objs_rank *r, const char *text, const char *obj, struct ruled *u, char *err, size_t len)
{
	u->obj = st_mirror_find(r->m, obj);
	const struct st_member *ms, *self = st_mirror_object(r->m, u->obj, &ms);
	struct st_schema s = { .n = (int)self->count, .members = ms };
	snprintf(s.obj, sizeof(s.obj), "%s", obj);
	char why[160];
	if (st_rule_compile(text, &s, &u->r, why, sizeof(why))) {
		snprintf(err, len, "rule: %s", why);
		return 2;
	}
	u->seq = UINT64_MAX; /* the first publication is 0 */
	struct st_pub h;
	if (st_mirror_latest(r->m, u->obj, &h) == 0)
		u->seq = h.seq - 1; /* the latest is evaluated at once */
	return 0;
}

/* One rank's turn: its answer read, its next publication waited for and judged */
static void rule_turn(struct mon_objs_rank *r, struct ruled *u, const char *who, int wait_ms, FILE *out)
{
	if (u->busy) {
		struct st_done d;
		if (st_mirror_answers(r->m, u->busy, &d, 1, 0) == 1) {
			say_answer(r, &u->k, &d, out);
			fflush(out);
			u->busy = 0;
			u->after = d.stamp;
		}
	}
	if (st_mirror_wait(r->m, u->obj, u->seq, wait_ms))
		return;
	struct st_pub h;
	st_mirror_latest(r->m, u->obj, &h);
	u->seq = h.seq;
	const struct st_member *ms;
	st_mirror_object(r->m, u->obj, &ms);
	struct getter g = { r->m, u->obj, ms };
	double v;
	/* one action at a time, judged on what was published after the last
	 * was applied (stamps of the application's one clock) */
	if (u->busy || h.stamp <= u->after || !st_rule_eval(&u->r, get, &g, &v))
		return;
	st_rule_ask(&u->r, v, who, &u->k);
	char err[200];
	if (st_mirror_ask(r->m, &u->k, &u->busy, err, sizeof(err))) {
		fprintf(out, "%s: the rule's action not asked: %s\n", r->name, err);
		u->busy = 0;
	}
}

int mon_objs_rule(struct mon_objs *o, int only, const char *text, const char *who, double seconds, FILE *out,
		  char *err, size_t len)
{
	char obj[ST_NAME_MAX + 1];
	if (st_rule_object(text, obj)) {
		snprintf(err, len, "rule: expected 'when OBJECT.FIELD ...', got '%s'", text);
		return 2;
	}
	struct ruled *u = calloc((size_t)o->n + 1, sizeof(*u));
	int n = 0, rc = u ? 0 : 2;
	for (int i = 0; i < o->n && !rc; i++) {
		struct st_ask probe = { .kind = ST_ASK_SET };
		snprintf(probe.obj, sizeof(probe.obj), "%s", obj);
		u[i].obj = -1;
		if (!takes_part(&o->r[i], only, &probe))
			continue;
		if (!o->r[i].rw) {
			snprintf(err, len, "%s: its segment is read-only to you", o->r[i].name);
			rc = 2;
		} else if (!(rc = rule_on(&o->r[i], text, obj, &u[i], err, len))) {
			n++;
		}
	}
	if (!rc && !n) {
		snprintf(err, len, "no rank exposes an object '%s' (esctl JOB objects lists them)", obj);
		rc = 2;
	}
	double until = seconds > 0 ? mon_now() + seconds : INFINITY, look = 0;
	while (!rc && !mon_stop && mon_now() < until && n) {
		for (int i = 0; i < o->n; i++)
			if (u[i].obj >= 0)
				rule_turn(&o->r[i], &u[i], who, n == 1 ? 50 : 5, out);
		if (mon_now() < look)
			continue;
		look = mon_now() + 0.5; /* a rank that ended has no more publications */
		for (int i = 0; i < o->n; i++) {
			int st = u[i].obj >= 0 ? ps_state_at(o->r[i].where, &o->ra) : 0;
			/* ended, died, or ended and its segment removed (a remote one
			 * out of reach is waited for) */
			if (st == PS_SHM_CLOSED || st == PS_SHM_STALE || st == PS_ENOENT) {
				fprintf(out, "%s has %s: the rule stops there\n", o->r[i].name,
					st == PS_SHM_STALE ? "died" : "ended");
				u[i].obj = -1, n--;
			}
		}
	}
	free(u);
	return rc;
}
