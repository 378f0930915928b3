/* objects.c - a job's objects mirrored rank by rank: listed, set and called (checked on every rank before any is asked), and rules run here at each publication. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A field and its element as a user reads it: an array's index always, a
 * scalar's never (an index past it said too) */
static void field_text(const struct st_done *d, char *out, size_t len)
{
	char obj[4 * ST_NAME_MAX + 1], field[4 * ST_NAME_MAX + 1];
	st_text(d->obj, obj, sizeof(obj));
	st_text(d->field, field, sizeof(field));
	if (d->count > 1 || d->index)
		snprintf(out, len, "%s.%s[%u]", obj, field, d->index);
	else
		snprintf(out, len, "%s.%s", obj, field);
}

void mon_done_text(const struct st_done *d, char *out, size_t len)
{
	char f[300], why[4 * sizeof(d->why) + 1];
	field_text(d, f, sizeof(f));
	st_text(d->why, why, sizeof(why));
	unsigned kind = ST_ASK_KIND(d->kind);
	bool change = (kind == ST_ASK_SET || kind == ST_ASK_CALL) && *d->field;
	if (d->status == ST_ELOST)
		snprintf(out, len, "%u asks lost: %s", d->n, st_strerror(d->status));
	else if (d->status && change) /* the value refused, said */
		snprintf(out, len, "refused %s%s%.15g%s: %s%s%s", f, kind == ST_ASK_SET ? " = " : "(", d->new_value,
			 kind == ST_ASK_CALL ? ")" : "", st_strerror(d->status), *why ? ": " : "", why);
	else if (d->status)
		snprintf(out, len, "refused %s%s: %s%s%s", kind == ST_ASK_UNRULE ? "removing rule " : "",
			 kind == ST_ASK_UNRULE ? "" : f, st_strerror(d->status), *why ? ": " : "", why);
	else if (kind == ST_ASK_CALL)
		snprintf(out, len, "%s(%.15g) called", f, d->new_value);
	else if (kind == ST_ASK_RULE)
		snprintf(out, len, "rule %u begun", d->index);
	else if (kind == ST_ASK_UNRULE)
		snprintf(out, len, "rule %u removed (its action applied %.0f times)", d->index, d->new_value);
	else
		snprintf(out, len, "%s %.15g -> %.15g", f, d->old_value, d->new_value);
}

/* What the rules running in a rank did: counted, not logged one by one */
static void say_rules(const struct mon_objs_rank *r, const struct st_rule_rec *x, int n, FILE *out)
{
	for (int i = 0; i < n; i++) {
		char who[4 * ST_WHO_MAX + 1], text[4 * ST_RULE_MAX + 1], obj[4 * ST_NAME_MAX + 1];
		st_text(x[i].who, who, sizeof(who));
		st_text(x[i].text, text, sizeof(text));
		st_text(x[i].obj, obj, sizeof(obj));
		if (x[i].number)
			fprintf(out, "%s: rule %u (in the application, begun by %s): %s\n", r->name, x[i].number, who, text);
		else
			fprintf(out, "%s: a monitor's rule on %s, asking as %s\n", r->name, obj, who);
		fprintf(out, "%s:   applied %llu time%s, refused %llu", r->name, (unsigned long long)x[i].fired,
			x[i].fired == 1 ? "" : "s", (unsigned long long)x[i].refused);
		if (x[i].last_ns) {
			double ago = (double)(base_now_ns() - x[i].last_ns) / 1e9;
			fprintf(out, "; last %.1f s ago: %.15g%s%s", ago > 0 ? ago : 0, x[i].last_value,
				x[i].last_status ? ", refused: " : "", x[i].last_status ? st_strerror(x[i].last_status) : "");
		}
		fputc('\n', out);
	}
}

/* Every change each rank applied and every ask it refused, as its log holds
 * them; then what the rules did, counted */
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
			char text[1200], who[4 * ST_WHO_MAX + 1];
			mon_done_text(&d, text, sizeof(text));
			st_text(d.who, who, sizeof(who));
			fprintf(out, "%s: by %s: %s\n", o->r[r].name, who, text);
		}
		struct st_rule_rec x[ST_RULES_MAX + ST_RULE_ASKERS];
		int n = st_mirror_rules(o->r[r].m, x, ST_RULES_MAX + ST_RULE_ASKERS);
		say_rules(&o->r[r], x, n > 0 ? n : 0, out);
	}
}

void mon_objs_rules(struct mon_objs *o, const char *job, FILE *out)
{
	int any = 0;
	for (int r = 0; r < o->n; r++) {
		struct st_rule_rec x[ST_RULES_MAX + ST_RULE_ASKERS];
		int n = st_mirror_rules(o->r[r].m, x, ST_RULES_MAX + ST_RULE_ASKERS);
		if (n < 0)
			fprintf(out, "%s: its rules cannot be read: %s\n", o->r[r].name, st_strerror(n));
		say_rules(&o->r[r], x, n > 0 ? n : 0, out);
		any += n > 0;
	}
	any += mon_rules_running(job, out);
	if (!any)
		fprintf(out, "no rule runs in job '%s' or in a monitor of it on this host\n", job);
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
		unsigned long i = strtoul(br + 1, &end, 10); /* digits only: no sign, no space */
		if (br[1] < '0' || br[1] > '9')
			end = (char *)br + 1;
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
		char text[1200];
		mon_done_text(d, text, sizeof(text));
		fprintf(out, "%s: %s\n", r->name, text);
		return;
	}
	char text[1200];
	if (ST_ASK_KIND(k->kind) == ST_ASK_RULE) {
		fprintf(out, "%s: rule %u runs in the application\n", r->name, d->index);
	} else {
		mon_done_text(d, text, sizeof(text));
		fprintf(out, "%s: %s\n", r->name, text);
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
	int applied = 0, want = ST_ASK_KIND(ask->kind) == ST_ASK_SET ? (int)ask->n : 1;
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

/*
 * A rule run here is said where `esctl JOB rules` finds it: a segment of
 * this process's own (JOB-rules-R, a name nobody else can take, removed
 * with it or, if it is killed, by psadm clean), its element "rule" holding
 * the rule and what its actions came to, written when they move (at most
 * twice a second).
 */
#define RULES_PREFIX "%.24s-rules"
struct mon_rule_rec {
	uint64_t started_ns, asked, applied, refused;
	int32_t pid, ranks;
	char obj[ST_NAME_MAX + 1];
	char text[ST_RULE_MAX + 1];
};

struct reg {
	ps_server *srv;
	ps_elem *e;
	char name[PS_NAME_MAX + 1];
	struct mon_rule_rec x;
	bool moved;
	double said;
};

static void reg_open(struct reg *g, const char *job, const char *text, const char *obj, int ranks)
{
	char prefix[PS_NAME_MAX + 1], why[200];
	snprintf(prefix, sizeof(prefix), RULES_PREFIX, job);
	struct ps_shm_attr a = { .size = 64u << 10, .max_elems = 2, .keep = PS_KEEP_NEVER };
	struct ps_elem_attr ea = { .tuple_size = sizeof(struct mon_rule_rec), .threshold = 4, .mode = PS_DISCARD };
	*g = (struct reg){ .x = { .started_ns = base_now_ns(), .pid = (int32_t)getpid(), .ranks = ranks } };
	snprintf(g->x.obj, sizeof(g->x.obj), "%s", obj);
	snprintf(g->x.text, sizeof(g->x.text), "%s", text);
	if (ps_server_create_private(prefix, &a, &g->srv, g->name, why, sizeof(why)))
		return; /* the rule runs all the same, unlisted */
	if (ps_elem_create(g->srv, "rule", &ea, &g->e)) {
		ps_server_destroy(g->srv);
		ps_shm_unlink(g->name);
		g->srv = NULL;
		return;
	}
	ps_write(g->e, &g->x, 0, NULL);
}

static void reg_say(struct reg *g, bool now)
{
	if (g->e && g->moved && (now || mon_now() >= g->said + 0.5)) {
		ps_write(g->e, &g->x, 0, NULL);
		g->moved = false;
		g->said = mon_now();
	}
}

static void reg_close(struct reg *g)
{
	if (!g->srv)
		return;
	ps_elem_close(g->e);
	ps_server_destroy(g->srv);
	ps_shm_unlink(g->name);
}

struct listing {
	const char *job;
	FILE *out;
	int found;
};

static int one_rule(const char *segment, void *arg)
{
	struct listing *l = arg;
	char prefix[PS_NAME_MAX + 8];
	int n = snprintf(prefix, sizeof(prefix), RULES_PREFIX "-", l->job);
	struct ps_shm_info info;
	ps_server *srv;
	ps_elem *e;
	struct mon_rule_rec x;
	if (strncmp(segment, prefix, (size_t)n) || ps_shm_info(segment, &info) || info.state != PS_SHM_LIVE ||
	    ps_server_open_shm(segment, PS_RDONLY | PS_NOWAIT, &srv))
		return 0; /* a live monitor's, ours only */
	if (!ps_elem_open(srv, "rule", sizeof(x), &e)) {
		if (!ps_read_latest(e, &x, NULL)) {
			char text[4 * ST_RULE_MAX + 1];
			x.text[ST_RULE_MAX] = 0;
			st_text(x.text, text, sizeof(text));
			fprintf(l->out, "esctl pid %d: rule (run there, on %d rank%s): %s\n", (int)info.creator_pid, x.ranks,
				x.ranks == 1 ? "" : "s", text);
			fprintf(l->out, "esctl pid %d:   asked %llu time%s: applied %llu, refused %llu\n",
				(int)info.creator_pid, (unsigned long long)x.asked, x.asked == 1 ? "" : "s",
				(unsigned long long)x.applied, (unsigned long long)x.refused);
			l->found++;
		}
		ps_elem_close(e);
	}
	ps_server_destroy(srv);
	return 0;
}

int mon_rules_running(const char *job, FILE *out)
{
	struct listing l = { job, out, 0 };
	ps_shm_list(one_rule, &l);
	return l.found;
}

/* One rank's turn: its answer read, its next publication waited for and judged */
static void rule_turn(struct mon_objs_rank *r, struct ruled *u, struct reg *g, int wait_ms, FILE *out)
{
	if (u->busy) {
		struct st_done d;
		if (st_mirror_answers(r->m, u->busy, &d, 1, 0) == 1) {
			say_answer(r, &u->k, &d, out);
			fflush(out);
			u->busy = 0;
			u->after = d.stamp;
			g->x.applied += !d.status, g->x.refused += d.status != 0, g->moved = true;
		}
	}
	if (st_mirror_wait(r->m, u->obj, u->seq, wait_ms))
		return;
	struct st_pub h;
	st_mirror_latest(r->m, u->obj, &h);
	u->seq = h.seq;
	const struct st_member *ms;
	st_mirror_object(r->m, u->obj, &ms);
	struct getter g2 = { r->m, u->obj, ms };
	double v;
	/* one action at a time, judged on what was published after the last
	 * was applied (stamps of the application's one clock) */
	if (u->busy || h.stamp <= u->after || !st_rule_eval(&u->r, get, &g2, &v))
		return;
	st_rule_ask(&u->r, v, &u->k);
	char err[200];
	if (st_mirror_ask(r->m, &u->k, &u->busy, err, sizeof(err))) {
		fprintf(out, "%s: the rule's action not asked: %s\n", r->name, err);
		u->busy = 0;
	} else {
		g->x.asked++, g->moved = true;
	}
}

/* Watches the ranks the rule runs on until they end: how many still run */
static int still_running(struct mon_objs *o, struct ruled *u, int n, FILE *out)
{
	for (int i = 0; i < o->n; i++) {
		int st = u[i].obj >= 0 ? ps_state_at(o->r[i].where, &o->ra) : 0;
		/* ended, died, or ended and its segment removed (a remote one
		 * out of reach is waited for) */
		if (st == PS_SHM_CLOSED || st == PS_SHM_STALE || st == PS_ENOENT) {
			fprintf(out, "%s has %s: the rule stops there\n", o->r[i].name, st == PS_SHM_STALE ? "died" : "ended");
			u[i].obj = -1, n--;
		}
	}
	return n;
}

int mon_objs_rule(struct mon_objs *o, const char *job, int only, const char *text, double seconds, FILE *out,
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
	struct reg g = { 0 };
	if (!rc)
		reg_open(&g, job, text, obj, n);
	double until = seconds > 0 ? mon_now() + seconds : INFINITY, look = 0;
	while (!rc && !mon_stop && mon_now() < until && n) {
		for (int i = 0; i < o->n; i++)
			if (u[i].obj >= 0)
				rule_turn(&o->r[i], &u[i], &g, n == 1 ? 50 : 5, out);
		reg_say(&g, false);
		if (mon_now() < look)
			continue;
		look = mon_now() + 0.5; /* a rank that ended has no more publications */
		n = still_running(o, u, n, out);
	}
	reg_close(&g);
	free(u);
	return rc;
}
