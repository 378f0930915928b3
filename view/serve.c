/* serve.c - esview's answers to browsers, from what its watch loop published: the page, its data (cached per question), the graph, the trigger armed and the pull rate. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "archive/archive.h"
#include "monitors/monitors.h"
#include "view/door.h"
#include "view/serve.h"

extern const unsigned char es_view_page[];
extern const size_t es_view_page_len;

static double arg_number(struct MHD_Connection *c, const char *name, double dflt, double lo, double hi)
{
	const char *a = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	char *end;
	double x = a ? strtod(a, &end) : dflt;
	if (!a || end == a || *end || x != x)
		x = dflt;
	return x < lo ? lo : x > hi ? hi : x;
}

/* The trigger's state, for the page. */
static void say_trigger(FILE *f, const struct lv_served *sv)
{
	fprintf(f, ",\"rate\":%g,\"trigger\":{\"deadlock\":%s,\"stall_s\":%g,\"imbalance_ms\":%g,\"wait\":\"%s\","
		   "\"wait_pct\":%g,\"frozen\":%s,\"fired\":%d,\"why\":", sv->rate, sv->arm.deadlock ? "true" : "false",
		sv->arm.stall_s, sv->arm.imbalance_ms, sv->arm.wait_pattern ? ws_pattern_key(sv->arm.wait_pattern - 1) : "",
		sv->arm.wait_pct, sv->frozen ? "true" : "false", sv->fired);
	ar_json_string(f, sv->why);
	fputs(",\"archive\":", f);
	ar_json_string(f, sv->archive);
	fputc('}', f);
}

/* /data?shown=MS&bins=N&open=LANES: the lanes as asked, from the cache
 * when another browser asked the same since the last pull. */
static enum MHD_Result data(struct lv_served *sv, struct MHD_Connection *c)
{
	const char *open = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "open");
	char *ask = NULL;
	double shown = arg_number(c, "shown", 5000, 1, (double)sv->window_ns / 1e6);
	int bins = (int)arg_number(c, "bins", 400, 1, 4000);
	if (asprintf(&ask, "%.0f/%d/%s", shown, bins, open ? open : "") < 0)
		return vd_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "no memory\n", 10, MHD_RESPMEM_PERSISTENT,
				NULL);
	char *json = NULL, *extra = NULL;
	size_t len = 0, elen = 0;
	pthread_mutex_lock(&sv->lock);
	for (int i = 0; i < LV_CACHED && !json; i++)
		if (sv->cache[i].json && sv->cache[i].gen == sv->gen && sv->cache[i].ask && !strcmp(sv->cache[i].ask, ask) &&
		    (json = malloc(sv->cache[i].len)))
			memcpy(json, sv->cache[i].json, len = sv->cache[i].len);
	FILE *f = json ? NULL : open_memstream(&extra, &elen);
	if (f) {
		fputs(sv->extra ? sv->extra : "", f);
		say_trigger(f, sv);
		fclose(f);
		struct lv_ask a = { sv->now_ns, (uint64_t)(shown * 1e6), bins, open ? open : "", 256, 400,
				    sv->inside, sv->ninside, sv->upto, sv->window_ns };
		if (extra && !lv_json(sv->v, sv->job, &a, extra, &json, &len)) {
			unsigned k = sv->next_cache++ % LV_CACHED;
			free(sv->cache[k].json);
			sv->cache[k].json = malloc(len);
			if (sv->cache[k].json)
				memcpy(sv->cache[k].json, json, len);
			sv->cache[k].len = len, sv->cache[k].gen = sv->gen;
			free(sv->cache[k].ask);
			sv->cache[k].ask = ask;
			ask = NULL;
		}
	}
	pthread_mutex_unlock(&sv->lock);
	free(extra);
	free(ask);
	if (!json)
		return vd_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "no memory\n", 10, MHD_RESPMEM_PERSISTENT,
				NULL);
	return vd_reply(c, MHD_HTTP_OK, "application/json", json, len, MHD_RESPMEM_MUST_FREE, NULL);
}

/* /call?lane=I&at=NS&tol=NS&shown=MS&open=LANES: the call under the
 * page's pointer (lv_call_json), at at ns of the clock /data's from_ns is
 * on, within tol (a few pixels' time). */
static enum MHD_Result call(struct lv_served *sv, struct MHD_Connection *c)
{
	const char *open = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "open");
	const char *at = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "at");
	char *end = NULL;
	uint64_t at_ns = at ? strtoull(at, &end, 10) : 0;
	int lane = (int)arg_number(c, "lane", -1, -1, 1 << 20);
	double tol = arg_number(c, "tol", 1e6, 0, 1e10), shown = arg_number(c, "shown", 5000, 1, (double)sv->window_ns / 1e6);
	if (!at || !end || *end || lane < 0)
		return vd_reply(c, MHD_HTTP_BAD_REQUEST, "text/plain", "expected lane=I&at=NS\n", 22,
				MHD_RESPMEM_PERSISTENT, NULL);
	char *json = NULL;
	size_t len = 0;
	pthread_mutex_lock(&sv->lock);
	struct lv_ask a = { sv->now_ns, (uint64_t)(shown * 1e6), 1, open ? open : "", 256, 0, sv->inside, sv->ninside,
			    sv->upto, sv->window_ns };
	int rc = lv_call_json(sv->v, &a, lane, at_ns, (uint64_t)tol, &json, &len);
	pthread_mutex_unlock(&sv->lock);
	if (rc)
		return vd_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "no memory\n", 10, MHD_RESPMEM_PERSISTENT,
				NULL);
	return vd_reply(c, MHD_HTTP_OK, "application/json", json, len, MHD_RESPMEM_MUST_FREE, NULL);
}

static enum MHD_Result picture(struct lv_served *sv, struct MHD_Connection *c)
{
	pthread_mutex_lock(&sv->lock);
	char *svg = sv->svg ? malloc(sv->svg_len) : NULL;
	size_t len = svg ? sv->svg_len : 0;
	if (svg)
		memcpy(svg, sv->svg, len);
	pthread_mutex_unlock(&sv->lock);
	if (!svg)
		return vd_reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "no graph\n", 9, MHD_RESPMEM_PERSISTENT, NULL);
	return vd_reply(c, MHD_HTTP_OK, "image/svg+xml", svg, len, MHD_RESPMEM_MUST_FREE, NULL);
}

/* POST /arm?deadlock=1&stall=S&imbalance=MS&wait=PATTERN&wait_pct=PCT:
 * arms the trigger and runs the view again; POST /rate?hz=H: the pull rate. */
static enum MHD_Result control(struct lv_served *sv, struct MHD_Connection *c, const char *url)
{
	pthread_mutex_lock(&sv->lock);
	if (!strcmp(url, "/arm")) {
		const char *wait = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "wait");
		sv->arm = (struct lv_arm){ arg_number(c, "deadlock", 0, 0, 1) > 0, arg_number(c, "stall", 0, 0, 86400),
					arg_number(c, "imbalance", 0, 0, 86400000), ws_pattern_of(wait) + 1,
					arg_number(c, "wait_pct", 0, 0, 100) };
		sv->frozen = false;
	} else {
		sv->rate = arg_number(c, "hz", sv->rate, 0.1, 100);
	}
	sv->gen++;
	pthread_mutex_unlock(&sv->lock);
	return vd_reply(c, MHD_HTTP_OK, "text/plain", "ok\n", 3, MHD_RESPMEM_PERSISTENT, NULL);
}

/* POST /set?where=SPACE&obj=O&field=F&index=I&value=V and
 * /call?where=SPACE&obj=O&method=M[&arg=X]: an ask of the job's object,
 * checked against its schema first (a value out of range, a read-only
 * field, an unknown name: 400 and why, nothing asked); applied at the
 * application's next safe point, which the page's changes show. */
static enum MHD_Result steer(struct lv_served *sv, struct MHD_Connection *c, const char *url)
{
	const char *where = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "where");
	const char *obj = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "obj");
	bool call = !strcmp(url, "/call");
	const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, call ? "method" : "field");
	const char *value = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, call ? "arg" : "value");
	const char *index = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "index");
	char why[400], text[200], o[ST_NAME_MAX + 1];
	struct st_ask k = { .kind = call ? ST_ASK_CALL : ST_ASK_SET, .n = 1 };
	int rc = 0;
	if (!where || !obj || !name || strlen(obj) > ST_NAME_MAX || strlen(name) > ST_NAME_MAX ||
	    (!call && (!value || !index))) {
		snprintf(why, sizeof(why), "expected where, obj and %s\n", call ? "method" : "field, index and value");
		rc = 1;
	} else if (call) { /* in esctl's words: call OBJ.METHOD [ARG] */
		char *end = NULL;
		if (value && ((k.u.set[0].value = strtod(value, &end)), end == value || *end)) {
			snprintf(why, sizeof(why), "call: expected a number as the argument, got '%.40s'\n", value);
			rc = 1;
		}
		snprintf(k.u.set[0].field, sizeof(k.u.set[0].field), "%s", name);
		k.u.set[0].has_arg = value != NULL;
		snprintf(o, sizeof(o), "%s", obj);
	} else { /* set OBJ.FIELD[INDEX]=VALUE, read as esctl reads it */
		snprintf(text, sizeof(text), "%s.%s[%s]=%s", obj, name, index, value);
		if (mon_objs_parse_set(text, o, &k.u.set[0], why, sizeof(why) - 1) || strcmp(o, obj)) {
			if (strcmp(o, obj))
				snprintf(why, sizeof(why) - 1, "'%s': expected OBJECT.FIELD[INDEX]=VALUE", text);
			strcat(why, "\n");
			rc = 1;
		}
	}
	if (!rc) {
		snprintf(k.obj, sizeof(k.obj), "%s", o);
		if ((rc = vo_ask(&sv->objs, where, &k, why, sizeof(why) - 1)))
			strcat(why, "\n");
	}
	if (rc)
		return vd_reply(c, MHD_HTTP_BAD_REQUEST, "text/plain", strdup(why), strlen(why), MHD_RESPMEM_MUST_FREE, NULL);
	return vd_reply(c, MHD_HTTP_OK, "text/plain", "asked\n", 6, MHD_RESPMEM_PERSISTENT, NULL);
}

/* A request the door let through (door.c): GET reads, POST changes. */
enum MHD_Result lv_serve(void *cls, struct MHD_Connection *c, const char *url, bool post)
{
	struct lv_served *sv = cls;
	static const char nope[] = "not found\n";
	if (post && (!strcmp(url, "/arm") || !strcmp(url, "/rate")))
		return control(sv, c, url);
	if (post && (!strcmp(url, "/set") || !strcmp(url, "/call")))
		return steer(sv, c, url);
	if (!post && !strcmp(url, "/"))
		return vd_reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", sv->page, sv->page_len, MHD_RESPMEM_PERSISTENT,
				sv->csp);
	if (!post && !strcmp(url, "/call"))
		return call(sv, c);
	if (!post && !strcmp(url, "/data"))
		return data(sv, c);
	if (!post && !strcmp(url, "/waitfor.svg"))
		return picture(sv, c);
	return vd_reply(c, MHD_HTTP_NOT_FOUND, "text/plain", nope, sizeof(nope) - 1, MHD_RESPMEM_PERSISTENT, NULL);
}

/* The page as served: its token (which its POSTs carry) and its script's
 * nonce in place of the marks the file holds. */
int lv_serve_page(struct lv_served *sv, const char *token)
{
	unsigned char r[16];
	char nonce[33];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EIO;
	for (int i = 0; i < 16; i++)
		snprintf(nonce + 2 * i, 3, "%02x", r[i]);
	snprintf(sv->csp, sizeof(sv->csp), "default-src 'none'; script-src 'nonce-%s'; style-src 'unsafe-inline'; "
		 "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
		 nonce);
	FILE *f = open_memstream(&sv->page, &sv->page_len);
	if (!f)
		return -ENOMEM;
	const char *p = (const char *)es_view_page, *end = p + es_view_page_len;
	while (p < end) {
		const char *t = strstr(p, "{{TOKEN}}"), *n = strstr(p, "{{NONCE}}");
		const char *mark = t && (!n || t < n) ? t : n;
		if (!mark) {
			fwrite(p, 1, (size_t)(end - p), f);
			break;
		}
		fwrite(p, 1, (size_t)(mark - p), f);
		fputs(mark == t ? token : nonce, f);
		p = mark + 9;
	}
	return fclose(f) ? -ENOMEM : 0;
}

void lv_served_fini(struct lv_served *sv)
{
	free(sv->extra);
	free(sv->inside);
	free(sv->svg);
	free(sv->page);
	for (int i = 0; i < LV_CACHED; i++)
		free(sv->cache[i].json), free(sv->cache[i].ask);
}
