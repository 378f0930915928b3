/* watch.c - esview's watch loop: pulls the job into the view's ring at the page's rate, numbers its messages, moves its clocks, judges it once a period (heartbeat's beat), matches its collectives, fires the triggers and their snapshots. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitors/handlers.h"
#include "view/watch.h"
#include "monitors/waitlive.h"

/* The threads as the page lists them, from the scope. */
static int set_threads(struct vw_watcher *w)
{
	int n = es_scope_threads(w->s);
	struct lv_thread *t = calloc((size_t)n + 1, sizeof(*t));
	char (*node)[128] = calloc((size_t)n + 1, sizeof(*node));
	int rc = -ENOMEM;
	if (t && node) {
		for (int i = 0; i < n; i++)
			t[i] = (struct lv_thread){ es_scope_thread(w->s, i), -1, node[i] };
		for (int i = 0; i < es_scope_leaves(w->s); i++) {
			const struct es_leaf *l = es_scope_leaf(w->s, i);
			t[l->thread].rank = l->rank;
			mon_server_of(w->s, i, node[l->thread], sizeof(node[0]));
		}
		pthread_mutex_lock(&w->sv->lock);
		rc = lv_set_threads(w->sv->v, t, n);
		pthread_mutex_unlock(&w->sv->lock);
	}
	free(t);
	free(node);
	return rc;
}

/* A collective complete: kept for the page, and the imbalance trigger. */
static void collective(struct vw_watcher *w, const struct cm_done *d)
{
	if (w->nrecent == (int)(sizeof(w->recent) / sizeof(w->recent[0])))
		memmove(w->recent, w->recent + 1, sizeof(w->recent) - sizeof(w->recent[0]));
	else
		w->nrecent++;
	w->recent[w->nrecent - 1] = *d;
	double bound = w->arm.imbalance_ms;
	if (bound > 0 && d->imb_ms > bound && !*w->pending)
		snprintf(w->pending, sizeof(w->pending),
			 "%s #%u: imbalance %.3f ms (trigger above %g ms), last in: rank %d", es_op_name(d->code),
			 d->num, d->imb_ms, bound, d->last_rank);
}

/* Sites met in a pull not yet named: (scope thread, its rank, site). */
struct unnamed {
	int thread, rank;
	uint16_t site;
};

/* The sites met, each named once: found under the view's lock (by the
 * caller), named without it (DWARF may take a while), set under it. */
static void name_sites(struct vw_watcher *w, const struct unnamed *u, int n)
{
	char (*names)[600] = n ? malloc(sizeof(*names) * (size_t)n) : NULL;
	if (!names)
		return;
	const struct es_site_rec *sites = NULL;
	const struct es_module_rec *mods = NULL;
	int ns = 0, nm = 0;
	for (int i = 0; i < n; i++) {
		/* each board read once a batch: sites met together are mostly one thread's */
		if (!i || u[i].thread != u[i - 1].thread)
			ns = es_mpi_sites(w->mpi, u[i].thread, &sites);
		if (!i || u[i].rank != u[i - 1].rank)
			nm = es_mpi_modules(w->mpi, u[i].rank, &mods);
		wl_site_name(w->sym, sites, ns, mods, nm, u[i].site, names[i], sizeof(names[i]));
	}
	pthread_mutex_lock(&w->sv->lock);
	for (int i = 0; i < n; i++)
		lv_set_site(w->sv->v, (uint32_t)u[i].thread, u[i].site, names[i]);
	pthread_mutex_unlock(&w->sv->lock);
	free(names);
}

/* Clocks across hosts (collectors.h): the ranks' clock points, read every
 * second, by which each event goes onto rank 0's host's clock as the
 * archive's readers put it (archive/clocks.c); on one host, none moves. */
static void read_clocks(struct vw_watcher *w)
{
	uint64_t now = base_now_ns();
	if (!w->mpi || (w->clocks_at && now - w->clocks_at < 1000000000u))
		return;
	w->clocks_at = now;
	int ranks = es_mpi_ranks(w->mpi);
	if (!w->clocks && !(w->clocks = ar_clocks_new()))
		return;
	struct es_mpi_sync *pts = malloc(sizeof(*pts) * ES_SYNC_SLOTS);
	for (int k = 0; pts && k < ranks; k++) {
		int64_t shift = 0;
		int n = es_mpi_clock(w->mpi, k, pts, &shift);
		if (n > 0)
			ar_clocks_shift(w->clocks, k, shift);
		for (int i = 0; i < n; i++)
			ar_clocks_add(w->clocks, &(struct ar_sync){ k, pts[i].r.kind, pts[i].r.serial, pts[i].at_ns,
								     pts[i].r.offset_ns, pts[i].r.rtt_ns });
	}
	free(pts);
}

static void move_clock(struct vw_watcher *w, struct es_trace *t, int rank)
{
	if (!ar_clocks_moves(w->clocks, rank))
		return;
	t->start += (uint64_t)ar_clocks_delta(w->clocks, rank, t->start);
	t->end += (uint64_t)ar_clocks_delta(w->clocks, rank, t->end);
}

/* Every event since the last pull into the view (only numbered while it
 * is frozen), and the collectives they complete. */
static void pull(struct vw_watcher *w, struct es_trace *ev, int max)
{
	enum { UNNAMED = 64 }; /* sites named a batch at most: the rest at the next */
	struct unnamed unnamed[UNNAMED];
	int n;
	uint64_t lost;
	if (es_scope_refresh(w->s) > 0) {
		set_threads(w);
		es_mpi_close(w->mpi);
		if (es_mpi_open(w->s, &w->mpi))
			w->mpi = NULL;
	}
	if (w->mpi)
		es_mpi_refresh(w->mpi);
	if (w->rs)
		mon_rs_refreshed(w->rs);
	read_clocks(w);
	while ((n = es_scope_consume(w->s, ev, (size_t)max, &lost)) > 0) {
		mh_feed(w->mh, w->s, ev, n);
		pthread_mutex_lock(&w->sv->lock);
		if (lost || es_scope_before_attach(w->s))
			lv_unpaired(w->sv->v, lost ? "some calls were overwritten before esview read them: a busy "
						     "channel's messages are drawn again from its next mark"
						   : "esview came after the job's first calls had rotated out: a busy "
						     "channel's messages are drawn from its next mark");
		int nu = 0;
		for (int i = 0; i < n; i++) {
			const struct es_leaf *l = es_scope_leaf(w->s, es_scope_consumed_leaf(w->s, (size_t)i));
			hb_feed(w->hb, l->thread, &ev[i]); /* heartbeat's judgement, on the job's own clocks */
			move_clock(w, &ev[i], l->rank); /* for the collectives below too */
			const struct es_trace *t = &ev[i];
			struct lv_event e = { .start = t->start, .end = t->end, .thread = (uint32_t)l->thread,
					      .peer = t->element, .bytes = t->size, .tag = t->arg, .op = t->op,
					      .comm = t->comm, .seq = t->seq,
					      .comm_id = w->rs ? mon_rs_comm_id(w->rs, w->mpi, l->rank, t) : 0 };
			uint16_t s = ES_TRACE_SITE(t);
			if (w->mpi && l->rank >= 0 && s && es_op_code(t->op) >= ES_OP_MPI_INIT && !es_is_mark(t->op) &&
			    nu < UNNAMED && !lv_site_named(w->sv->v, (uint32_t)l->thread, s)) {
				bool dup = false;
				for (int k = 0; k < nu && !dup; k++)
					dup = unnamed[k].thread == l->thread && unnamed[k].site == s;
				if (!dup)
					unnamed[nu++] = (struct unnamed){ l->thread, l->rank, s };
			}
			if (w->sv->frozen)
				lv_count(w->sv->v, &e);
			else
				lv_add(w->sv->v, &e);
		}
		if (!w->sv->frozen) /* the last second's balance stays as it was at the trigger */
			lv_mark(w->sv->v, base_now_ns()); /* what was consumed ended by now */
		pthread_mutex_unlock(&w->sv->lock);
		name_sites(w, unnamed, nu);
		for (int i = 0; i < n && w->mpi; i++) {
			const struct es_leaf *l = es_scope_leaf(w->s, es_scope_consumed_leaf(w->s, (size_t)i));
			struct cm_done d;
			if (l->rank >= 0 && cm_event(w->cm, w->mpi, &ev[i], l->rank, &d))
				collective(w, &d);
			/* resolved whether frozen or not: a channel's numbers need every mark */
			struct es_event e;
			int rc = l->rank >= 0 && w->wl ? mon_rs_event(w->rs, w->mpi, &ev[i], l->thread, l->rank, &e)
						       : MON_RS_MARK;
			if (rc == 0 && !w->sv->frozen)
				w->newest = ev[i].end > w->newest ? ev[i].end : w->newest;
			if (w->wl && (rc < 0 || (rc == 0 && !w->sv->frozen && wl_event(w->wl, &e))))
				wl_destroy(w->wl), w->wl = NULL; /* no memory: the page says none */
		}
		if (n < max)
			break;
	}
	if (!w->primed) { /* the first period judges against where each thread was at the first pull */
		hb_prime(w->hb);
		w->primed = true;
	}
}

/* The wait-for graph's picture, by dot, when something waits. */
static void draw_graph(struct vw_watcher *w, const char *title)
{
	char dot[4200], svg[4200];
	snprintf(dot, sizeof(dot), "%s/waitfor.dot", w->dir);
	snprintf(svg, sizeof(svg), "%s/waitfor.svg", w->dir);
	FILE *f = base_fopen_out(dot, 0600);
	if (!f)
		return;
	int rc = wf_dot(hb_graph(w->hb), f, title);
	if (fclose(f) || rc || mon_dot(dot, "svg", svg))
		return;
	FILE *in = fopen(svg, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = in ? open_memstream(&buf, &len) : NULL;
	char chunk[8192];
	size_t k;
	while (out && (k = fread(chunk, 1, sizeof(chunk), in)) > 0)
		fwrite(chunk, 1, k, out);
	if (in)
		fclose(in);
	if (!out || fclose(out))
		return;
	pthread_mutex_lock(&w->sv->lock);
	free(w->sv->svg);
	w->sv->svg = buf, w->sv->svg_len = len;
	w->sv->svg_gen++;
	pthread_mutex_unlock(&w->sv->lock);
}

/* The findings, a line each: [kind, text]. */
static void say_findings(FILE *f, const char *text)
{
	fputs(",\"findings\":[", f);
	char line[2048];
	int k = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		const char *l = line + strspn(line, " ");
		const char *kind = !strncmp(l, "deadlock", 8) ? "deadlock" : !strncmp(l, "stall", 5) ? "stall" : "note";
		fprintf(f, "%s[\"%s\",", k++ ? "," : "", kind);
		ar_json_string(f, l);
		fputc(']', f);
		p = nl ? nl + 1 : p + n;
	}
	fputc(']', f);
}

/* heartbeat's judgement, once a period: who progressed, who waits for
 * whom, and the deadlock and stall triggers. */
static void judge(struct vw_watcher *w)
{
	struct hb_period p;
	if (hb_step(w->hb, "esview", &p))
		return;
	const wf_graph *g = hb_graph(w->hb);
	char *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0;
	FILE *t = open_memstream(&text, &tlen);
	if (t && p.looked)
		wf_report(g, t, "");
	if (t)
		fclose(t);
	pthread_mutex_lock(&w->sv->lock);
	bool frozen = w->sv->frozen;
	pthread_mutex_unlock(&w->sv->lock);
	if (p.looked && p.stalled && !frozen) /* a frozen view keeps the graph of its moment */
		draw_graph(w, w->o->job);
	FILE *f = open_memstream(&json, &jlen);
	if (f) {
		fprintf(f, ",\"waits\":{\"period_ms\":%.0f,\"threads\":%d,\"progressing\":%d,\"stalled\":%d,"
			   "\"ended\":%d,\"unreachable\":%d,\"graph\":%u,\"line\":",
			w->o->period * 1000, hb_threads(w->hb), p.progressing, p.stalled, p.ended, p.unreachable,
			p.looked && p.stalled ? w->sv->svg_gen : 0);
		ar_json_string(f, p.line);
		say_findings(f, text);
		fputc('}', f);
		fclose(f);
	}
	free(w->waits);
	w->waits = json;
	free(w->findings);
	w->findings = text;
	const struct lv_arm arm = w->arm;
	if (arm.deadlock && p.looked && wf_deadlocks(g) > 0 && !*w->pending)
		snprintf(w->pending, sizeof(w->pending), "a deadlock named");
	double secs;
	int i = arm.stall_s > 0 && !*w->pending ? hb_stalled_for(w->hb, arm.stall_s, &secs) : -1;
	if (i >= 0)
		snprintf(w->pending, sizeof(w->pending), "%s stalled for %.1f s (trigger above %g s), %s",
			 es_scope_thread(w->s, i), secs, arm.stall_s, hb_thread(w->hb, i)->where);
}

/* The calls the threads are inside now, as if they ended now; NULL when
 * there are none (or no memory: then none are drawn). */
static struct lv_event *inside_now(struct vw_watcher *w, uint64_t now, int *n)
{
	int nt = es_scope_threads(w->s);
	struct lv_event *in = calloc((size_t)nt + 1, sizeof(*in));
	*n = 0;
	for (int t = 0; in && t < nt; t++) {
		struct es_flight fl;
		if (!es_scope_in_flight(w->s, t, &fl) || fl.since_ns > now)
			continue;
		in[(*n)++] = (struct lv_event){ .start = now - fl.since_ns, .end = now, .thread = (uint32_t)t,
						.peer = fl.element, .tag = (uint32_t)fl.arg, .op = (uint16_t)fl.op };
	}
	return in;
}

/* The rows found at this pull kept with its time; those older than a
 * second dropped.  The pull's MPI time kept likewise. */
static void keep_found(struct vw_watcher *w, const struct wl_period *p, double now)
{
	size_t k = 0;
	for (size_t i = 0; i < w->nfound; i++)
		if (w->found[i].at > now - 1)
			w->found[k++] = w->found[i];
	w->nfound = k;
	if (w->nfound + p->n > w->capfound) {
		size_t cap = (w->nfound + p->n) * 2;
		struct vw_found *v = realloc(w->found, sizeof(*v) * cap);
		if (!v)
			return;
		w->found = v, w->capfound = cap;
	}
	for (size_t i = 0; i < p->n; i++)
		w->found[w->nfound++] = (struct vw_found){ now, p->rows[i] };
	w->in_mpi[w->nin_mpi % 64].at = now;
	w->in_mpi[w->nin_mpi++ % 64].mpi_ns = p->mpi_ns;
}

static bool same_row(const struct wl_row *x, const struct wl_row *y)
{
	return x->pattern == y->pattern && x->rank == y->rank && x->thread == y->thread && x->site == y->site &&
	       x->op == y->op && x->of == y->of;
}

/* The last second's rows, each (pattern, rank, site, call) summed, its
 * delayer the latest found; the most first. */
static size_t last_second(struct vw_watcher *w, struct wl_row *out, uint64_t *by_pattern)
{
	size_t n = 0;
	for (size_t i = 0; i < w->nfound; i++) {
		const struct wl_row *r = &w->found[i].r;
		by_pattern[r->pattern] += r->ns;
		size_t k = 0;
		while (k < n && !same_row(&out[k], r))
			k++;
		if (k == n)
			out[n++] = *r;
		else
			out[k].ns += r->ns, out[k].by = r->by >= 0 ? r->by : out[k].by;
	}
	for (size_t i = 1; i < n; i++) /* by time: few rows */
		for (size_t j = i; j > 0 && out[j].ns > out[j - 1].ns; j--) {
			struct wl_row t = out[j];
			out[j] = out[j - 1], out[j - 1] = t;
		}
	return n;
}

static void say_rows(struct vw_watcher *w, FILE *f, const struct wl_row *rows, size_t n)
{
	for (size_t i = 0; i < n && i < 12; i++) {
		const struct wl_row *r = &rows[i];
		const char *where = wl_name(w->wl, w->mpi, w->sym, r->thread, r->rank, r->site);
		fprintf(f, "%s{\"pattern\":\"%s\",\"name\":\"%s\",\"rank\":%d,\"call\":\"%s\",\"of\":\"%s\",\"site\":",
			i ? "," : "", ws_pattern_key(r->pattern), ws_pattern_name(r->pattern), r->rank, es_op_name(r->op),
			es_op_name(r->of ? r->of : r->op));
		ar_json_string(f, where);
		fprintf(f, ",\"ms\":%.3f,\"by\":%d}", (double)r->ns / 1e6, r->by);
	}
}

/* The wait states found at this pull, and those of the last second for
 * the page: each pattern's time, the worst rows with where and who caused
 * them, the latest waits for the lanes; the wait trigger judged. */
static void wait_states(struct vw_watcher *w, bool ended)
{
	struct wl_period p;
	double now = mon_now();
	if (!w->wl || wl_period(w->wl, ended ? UINT64_MAX : w->newest, &p))
		return;
	keep_found(w, &p, now);
	for (size_t i = 0; i < p.nwaits; i++)
		w->bars[w->nbars++ % 512] = p.waits[i];
	wl_period_free(&p);
	uint64_t by[WS_NPATTERNS] = { 0 }, mpi = 0;
	struct wl_row *rows = malloc(sizeof(*rows) * (w->nfound + 1));
	char *json = NULL;
	size_t len = 0, n = rows ? last_second(w, rows, by) : 0;
	for (unsigned i = 0; i < w->nin_mpi && i < 64; i++)
		mpi += w->in_mpi[i].at > now - 1 ? w->in_mpi[i].mpi_ns : 0;
	FILE *f = rows ? open_memstream(&json, &len) : NULL;
	if (f) {
		fprintf(f, ",\"waitstates\":{\"mpi_ms\":%.3f,\"patterns\":{", (double)mpi / 1e6);
		for (int k = 0, m = 0; k < WS_NPATTERNS; k++)
			if (by[k])
				fprintf(f, "%s\"%s\":%.3f", m++ ? "," : "", ws_pattern_key(k), (double)by[k] / 1e6);
		struct ws_stats st; /* since the start: what could not be judged, said beside what was */
		ws_stats(wl_engine(w->wl), &st);
		fprintf(f, "},\"judged\":{\"receives\":%llu,\"sends\":%llu,\"collectives\":%llu,\"unpaired\":%llu,"
			   "\"unnumbered\":%llu,\"incomplete\":%llu,\"given_up\":%llu,\"unseen_calls\":%llu,\"horizon_s\":%u",
			(unsigned long long)st.receives, (unsigned long long)st.sends, (unsigned long long)st.colls,
			(unsigned long long)st.unpaired, (unsigned long long)mon_rs_unnumbered(w->rs),
			(unsigned long long)st.incomplete, (unsigned long long)st.given_up,
			(unsigned long long)st.unseen_calls, WL_HORIZON_S);
		fputs("},\"rows\":[", f);
		say_rows(w, f, rows, n);
		fputs("],\"bars\":[", f); /* the latest waits: [thread, rank, from ns, ns, pattern] */
		for (unsigned i = 0, nb = w->nbars < 512 ? w->nbars : 512; i < nb; i++) {
			const struct wl_wait *b = &w->bars[i];
			fprintf(f, "%s[%d,%d,%llu,%llu,%d]", i ? "," : "", b->thread, b->rank, (unsigned long long)b->from,
				(unsigned long long)b->ns, b->pattern);
		}
		fputs("],\"keys\":[", f);
		for (int k = 0; k < WS_NPATTERNS; k++)
			fprintf(f, "%s\"%s\"", k ? "," : "", ws_pattern_key(k));
		fputs("]}", f);
		if (!fclose(f)) {
			free(w->wstates);
			w->wstates = json;
		}
	}
	free(rows);
	int k = w->arm.wait_pattern - 1;
	double pct = k >= 0 && mpi ? 100.0 * (double)by[k] / (double)mpi : 0;
	if (k >= 0 && pct > w->arm.wait_pct && !*w->pending)
		snprintf(w->pending, sizeof(w->pending), "%s was %.1f%% of the ranks' time in MPI in the last second "
			 "(trigger above %g%%)", ws_pattern_name(k), pct, w->arm.wait_pct);
}

/* What the page shows now: the judgement's, the collectives', the calls
 * threads are inside. */
static void publish(struct vw_watcher *w)
{
	char *extra = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&extra, &len);
	if (!f)
		return;
	uint64_t now = base_now_ns();
	int nin;
	struct lv_event *in = inside_now(w, now, &nin);
	fputs(w->waits ? w->waits : "", f);
	fputs(w->wstates ? w->wstates : "", f);
	vo_json(&w->sv->objs, f);
	if (mon_now() >= w->handlers_at) { /* the answers change once a second */
		char *h = NULL;
		size_t hl = 0;
		FILE *hf = open_memstream(&h, &hl);
		if (hf) {
			mh_json(w->o->job, hf);
			if (!fclose(hf)) {
				free(w->handlers);
				w->handlers = h;
			}
		}
		w->handlers_at = mon_now() + 1;
	}
	fputs(w->handlers ? w->handlers : "", f);
	fputs(",\"colls\":[", f);
	for (int i = w->nrecent; i-- > 0;) {
		const struct cm_done *d = &w->recent[i];
		fprintf(f, "%s{\"name\":\"%s\",\"num\":%u,\"members\":%d,\"last\":%d,\"imb_ms\":%.3f,\"lat_ms\":%.3f}",
			i < w->nrecent - 1 ? "," : "", es_op_name(d->code), d->num, d->members, d->last_rank, d->imb_ms,
			d->lat_ms);
	}
	fputc(']', f);
	if (fclose(f)) {
		free(in);
		return;
	}
	pthread_mutex_lock(&w->sv->lock);
	if (!w->sv->frozen) {
		free(w->sv->extra);
		w->sv->extra = extra;
		extra = NULL;
		free(w->sv->inside);
		w->sv->inside = in, w->sv->ninside = nin;
		in = NULL;
		w->sv->now_ns = now;
		w->sv->upto = lv_added(w->sv->v);
		w->sv->gen++;
	}
	pthread_mutex_unlock(&w->sv->lock);
	free(extra);
	free(in);
}

/* DIR/N for the first N nobody has made: mkdir is the claim, so that two
 * viewers of one DIR never take the same.  0, or an error. */
static int claim(const char *top, char *dir, size_t len)
{
	int rc = base_mkdir_out(top, 0700); /* ours, and nobody else may add names to it */
	for (int n = 1; !rc && n < 1000000; n++) {
		snprintf(dir, len, "%s/%d", top, n);
		if (!mkdir(dir, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return rc ? rc : -ENOSPC;
}

/* The bytes of the files in dir (an archive's are all in it). */
static double dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	double sum = 0;
	struct stat st;
	while (d && (e = readdir(d)))
		if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			sum += (double)st.st_size;
	if (d)
		closedir(d);
	return sum;
}

/* Where the trigger's archive goes, in dir, or why none is kept (in sv). */
static bool snapshot_room(struct vw_watcher *w, char *dir, size_t len)
{
	const struct vw_opts *o = w->o;
	int rc;
	if (w->kept >= o->snapshots || w->bytes + w->largest > o->snapshot_bytes || o->snapshot_bytes <= 0)
		snprintf(w->sv->archive, sizeof(w->sv->archive),
			 "none: %d archive(s), %.0f MB, kept already: the most --snapshots %d and --snapshot-bytes "
			 "%.0f MB allow (the first are kept)", w->kept, w->bytes / 1048576, o->snapshots,
			 o->snapshot_bytes / 1048576);
	else if ((rc = claim(o->snapshot, dir, len)))
		snprintf(w->sv->archive, sizeof(w->sv->archive), "none: %s: %s", o->snapshot, ps_strerror(rc));
	else
		return true;
	return false;
}

/* A trigger held: the view freezes at the moment just published, and an
 * archive of that moment is kept (DIR/N), within the caps. */
static void fire(struct vw_watcher *w)
{
	struct lv_served *sv = w->sv;
	char dir[4200];
	pthread_mutex_lock(&sv->lock);
	bool armed = !sv->frozen && (sv->arm.deadlock || sv->arm.stall_s > 0 || sv->arm.imbalance_ms > 0 ||
				      sv->arm.wait_pattern), room = false;
	if (armed) {
		sv->frozen = true;
		sv->fired++;
		snprintf(sv->why, sizeof(sv->why), "%s", w->pending);
		if ((room = snapshot_room(w, dir, sizeof(dir))))
			snprintf(sv->archive, sizeof(sv->archive), "(being written: %s)", dir);
		sv->gen++;
	}
	pthread_mutex_unlock(&sv->lock);
	*w->pending = 0;
	if (!armed)
		return;
	printf("esview: trigger: %s; the view is frozen%s%s\n", sv->why, room ? "" : "; archive: ", room ? "" : sv->archive);
	fflush(stdout);
	if (!room)
		return;
	struct mon_snapshot sn = { .dir = dir, .job = w->o->job };
	char err[4800];
	int rc = mon_snapshot("esview", &sn, sv->why, "waitfor", w->findings && *w->findings ? w->findings
				: "(the wait-for graph named nothing)\n", err, sizeof(err));
	if (rc)
		fprintf(stderr, "esview: no snapshot of job %s in %s: %s\n", sn.job, dir, err);
	double b = dir_bytes(dir);
	w->kept++;
	w->bytes += b;
	w->largest = b > w->largest ? b : w->largest;
	pthread_mutex_lock(&sv->lock);
	if (rc)
		snprintf(sv->archive, sizeof(sv->archive), "none: the snapshot failed (%s)", strerror(-rc));
	else
		snprintf(sv->archive, sizeof(sv->archive), "%s", dir);
	sv->gen++;
	pthread_mutex_unlock(&sv->lock);
}

/* The job ended (or its servers stopped answering): its threads are
 * ended, nobody stalls, and the page says which, not the last period's
 * "2 progressing". */
static void say_ended(struct vw_watcher *w, const struct mon_watch *mw)
{
	char *json = NULL, line[200];
	size_t len;
	FILE *f = open_memstream(&json, &len);
	if (!f)
		return;
	snprintf(line, sizeof(line), "%s", mw->now == MON_UNREACHABLE ? "its tuple servers stopped answering "
		 "(the job ended, or its hosts cannot be reached)" : "the job has ended");
	int n = hb_threads(w->hb);
	fprintf(f, ",\"waits\":{\"period_ms\":%.0f,\"threads\":%d,\"progressing\":0,\"stalled\":0,\"ended\":%d,"
		   "\"unreachable\":0,\"graph\":0,\"job_ended\":true,\"line\":", w->o->period * 1000, n, n);
	ar_json_string(f, line);
	fputs(",\"findings\":[]}", f);
	if (fclose(f)) {
		free(json);
		return;
	}
	free(w->waits);
	w->waits = json;
}

/* Pulls at the rate, judges once a period, fires the triggers. */

/* Pulls, judges and publishes until the job ends (0) or esview is stopped
 * (0); -ENOMEM without the pull's buffer. */
/* What the loop keeps between pulls. */
struct pulls {
	struct vw_watcher *w;
	struct es_trace *ev;
	struct mon_watch mw;
};

/* One pull, the judgement when a period has passed, the moment published
 * and a trigger fired; the next at the page's rate, or MON_END once the
 * job ended (said) or on a signal. */
static double tick(void *arg)
{
	struct pulls *p = arg;
	struct vw_watcher *w = p->w;
	bool alive = mon_watch("esview", w->s, &p->mw);
	pthread_mutex_lock(&w->sv->lock);
	w->arm = w->sv->arm;
	pthread_mutex_unlock(&w->sv->lock);
	pull(w, p->ev, PULL_MAX);
	if (mon_now() >= w->next_beat) {
		w->next_beat = mon_now() + w->o->period;
		judge(w);
	}
	if (!w->sv->frozen)
		wait_states(w, !alive); /* the job's end: what waited for an end it will never get is judged */
	vo_pull(&w->sv->objs, w->s);
	if (!alive)
		say_ended(w, &p->mw);
	publish(w);
	if (*w->pending)
		fire(w);
	if (!alive || mon_stop)
		return MON_END;
	pthread_mutex_lock(&w->sv->lock);
	double rate = w->sv->rate;
	pthread_mutex_unlock(&w->sv->lock);
	return 1 / rate;
}

int vw_watch(struct vw_watcher *w)
{
	struct pulls p = { .w = w, .ev = malloc(PULL_MAX * sizeof(struct es_trace)), .mw = { .grace = 3 } };
	if (!p.ev)
		return -ENOMEM;
	struct mon_loop loop = { 0 };
	mon_loop_add(&loop, 0, tick, &p);
	mon_loop_run(&loop);
	free(p.ev);
	return 0;
}

/* The one scope, every event by leaf: the ring's, and heartbeat's
 * judgement fed from the same pulls (hb_create_fed). */
int vw_attach(const struct vw_opts *o, struct vw_watcher *w)
{
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, o->job);
	spec.reduce = ES_REDUCE_NONE;
	spec.by_leaf = true;
	char err[600];
	int rc = mon_remote(&spec, err, sizeof(err));
	if (rc || (rc = mon_attach("esview", &spec, o->wait, &w->s, err, sizeof(err)))) {
		fprintf(stderr, "esview: %s\n", err);
		return mon_status(rc);
	}
	if (es_mpi_open(w->s, &w->mpi))
		w->mpi = NULL;
	w->sv->objs.ra = mon_ra();
	if (hb_create_fed(w->s, o->period, &w->hb) || cm_create(&w->cm) || set_threads(w)) {
		fprintf(stderr, "esview: no memory for the judgement, the collectives or the threads of %d threads\n",
			es_scope_threads(w->s));
		return 1;
	}
	if (ar_symbols_create(&w->sym))
		w->sym = NULL;
	if (mon_rs_create(&w->rs) || wl_create(&w->wl))
		w->wl = NULL;
	return 0;
}

void vw_detach(struct vw_watcher *w)
{
	char f[4200];
	snprintf(f, sizeof(f), "%s/waitfor.dot", w->dir);
	unlink(f);
	snprintf(f, sizeof(f), "%s/waitfor.svg", w->dir);
	unlink(f);
	if (*w->dir)
		rmdir(w->dir);
	vo_close(&w->sv->objs);
	hb_destroy(w->hb);
	cm_destroy(w->cm);
	es_mpi_close(w->mpi);
	ar_symbols_destroy(w->sym);
	ar_clocks_free(w->clocks);
	if (w->s)
		es_scope_destroy(w->s);
	free(w->waits);
	free(w->findings);
	free(w->wstates);
	free(w->handlers);
	free(w->found);
	wl_destroy(w->wl);
	mon_rs_destroy(w->rs);
}
