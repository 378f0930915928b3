/* objects.c - the job's objects in esview: mirrored every tenth of a second with a ring of each numeric field's recent values (the page's sparklines), the latest changes, and the page's sets and calls checked and asked. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive.h"
#include "view/objects.h"

/* The series of (rank i, object k, member m): found or made; NULL when full */
static struct vo_series *series(struct vo_objects *v, int i, int k, int m)
{
	for (int j = 0; j < v->ns; j++)
		if (v->s[j].rank == i && v->s[j].obj == k && v->s[j].member == m)
			return &v->s[j];
	if (v->ns >= VO_SERIES)
		return NULL;
	struct vo_series *s = &v->s[v->ns++];
	*s = (struct vo_series){ .rank = i, .obj = k, .member = m, .seq = UINT64_MAX };
	return s;
}

static void add(struct vo_objects *v, int i, int k)
{
	st_mirror *m = v->o.r[i].m;
	const struct st_member *ms, *self = st_mirror_object(m, k, &ms);
	struct st_pub h;
	if (st_mirror_latest(m, k, &h))
		return;
	for (uint32_t j = 0; j < self->count; j++) {
		struct vo_series *s = ms[j].kind != ST_METHOD ? series(v, i, k, (int)j) : NULL;
		if (!s || s->seq == h.seq)
			continue;
		s->seq = h.seq;
		s->v[s->at] = st_mirror_value(m, k, &ms[j], 0);
		s->at = (s->at + 1) % VO_HISTORY;
		s->n += s->n < VO_HISTORY;
	}
}

void vo_pull(struct vo_objects *v, const es_scope *s)
{
	double now = mon_now();
	pthread_mutex_lock(&v->lock);
	if (!v->open && now >= v->next_open) {
		char err[300];
		v->next_open = now + 2;
		v->open = mon_objs_open(s, &v->ra, &v->o, err, sizeof(err)) == 0;
		if (v->open && !v->o.n) { /* none yet: an application makes them visible at its first safe point */
			mon_objs_close(&v->o);
			v->open = false;
		}
	}
	if (v->open && now >= v->next_pull) {
		v->next_pull = now + 0.1;
		for (int i = 0; i < v->o.n; i++) {
			st_mirror_refresh(v->o.r[i].m);
			for (int k = 0; k < st_mirror_objects(v->o.r[i].m); k++)
				add(v, i, k);
		}
	}
	pthread_mutex_unlock(&v->lock);
}

/* A number as JSON has them: NaN and infinities (a program may publish
 * them, or give them as a range) are null */
static void num(FILE *out, const char *before, double x)
{
	if (isfinite(x))
		fprintf(out, "%s%.15g", before, x);
	else
		fprintf(out, "%snull", before);
}

static void member_json(struct vo_objects *v, int i, int k, const struct st_member *f, FILE *out)
{
	fputs("{\"name\":", out);
	ar_json_string(out, f->name);
	fputs(",\"help\":", out);
	ar_json_string(out, f->help);
	if (f->kind == ST_METHOD) {
		fputs(",\"kind\":\"method\"}", out);
		return;
	}
	fprintf(out, ",\"kind\":\"%s\",\"count\":%u,\"writable\":%s", f->kind == ST_INT ? "int" : "double",
		f->count, f->flags & ST_WRITABLE ? "true" : "false");
	num(out, ",\"lo\":", f->lo);
	num(out, ",\"hi\":", f->hi);
	fputs(",\"values\":[", out);
	for (uint32_t e = 0; e < f->count && e < 64; e++)
		num(out, e ? "," : "", st_mirror_value(v->o.r[i].m, k, f, e));
	fputs("],\"history\":[", out);
	const struct vo_series *s = series(v, i, k, (int)(f->idx - 1));
	for (int j = 0; s && j < s->n; j++)
		num(out, j ? "," : "", s->v[(s->at - s->n + j + VO_HISTORY) % VO_HISTORY]);
	fputs("]}", out);
}

/* The last few records of each space's log, oldest first */
static void changes_json(struct vo_objects *v, FILE *out)
{
	fputs(",\"changes\":[", out);
	bool first = true;
	for (int i = 0; i < v->o.n; i++) {
		ps_elem *e = st_mirror_done_elem(v->o.r[i].m);
		struct ps_stats st;
		if (ps_elem_stats(e, &st))
			continue;
		for (uint64_t j = st.written > 8 && st.written - 8 > st.oldest ? st.written - 8 : st.oldest; j < st.written; j++) {
			struct st_done d;
			if (ps_read(e, j, &d, 0, NULL))
				continue;
			d.who[ST_WHO_MAX] = d.obj[ST_NAME_MAX] = d.field[ST_NAME_MAX] = 0;
			char what[300], text[360];
			mon_done_text(&d, what, sizeof(what));
			snprintf(text, sizeof(text), "%s: %s", d.who, what);
			fprintf(out, "%s[", first ? "" : ",");
			ar_json_string(out, v->o.r[i].name);
			fputc(',', out);
			ar_json_string(out, text);
			fputc(']', out);
			first = false;
		}
	}
	fputc(']', out);
}

void vo_json(struct vo_objects *v, FILE *out)
{
	pthread_mutex_lock(&v->lock);
	fputs(",\"objects\":[", out);
	bool first = true;
	for (int i = 0; v->open && i < v->o.n; i++) {
		st_mirror *m = v->o.r[i].m;
		for (int k = 0; k < st_mirror_objects(m); k++) {
			const struct st_member *ms, *self = st_mirror_object(m, k, &ms);
			struct st_pub h;
			fprintf(out, "%s{\"where\":", first ? "" : ",");
			ar_json_string(out, v->o.r[i].name);
			fputs(",\"name\":", out);
			ar_json_string(out, self->name);
			fputs(",\"help\":", out);
			ar_json_string(out, self->help);
			fprintf(out, ",\"published\":%lld,\"members\":[",
				st_mirror_latest(m, k, &h) ? -1LL : (long long)h.seq + 1);
			for (uint32_t j = 0; j < self->count; j++) {
				if (j)
					fputc(',', out);
				member_json(v, i, k, &ms[j], out);
			}
			fputs("]}", out);
			first = false;
		}
	}
	fputc(']', out);
	if (v->open)
		changes_json(v, out);
	pthread_mutex_unlock(&v->lock);
}

int vo_ask(struct vo_objects *v, const char *where, struct st_ask *k, char *err, size_t len)
{
	pthread_mutex_lock(&v->lock);
	int rc = ST_ENOOBJ;
	snprintf(err, len, "no space '%s' with objects in this job", where);
	for (int i = 0; v->open && i < v->o.n; i++)
		if (!strcmp(v->o.r[i].name, where)) {
			if (!v->o.r[i].rw) {
				snprintf(err, len, "%s: its segment is read-only to esview", where);
				rc = PS_EROFS;
			} else {
				rc = st_mirror_ask(v->o.r[i].m, k, NULL, err, len);
			}
			break;
		}
	pthread_mutex_unlock(&v->lock);
	return rc;
}

void vo_close(struct vo_objects *v)
{
	if (v->open)
		mon_objs_close(&v->o);
	v->open = false;
}
