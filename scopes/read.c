/* read.c - reading a scope: each thread's latest through the tree at the asked rate (pull), every event once with an exact count of what was lost (consume), and where each thread waits now. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define T sizeof(struct es_trace)

/*
 * Pulls on an absolute schedule, one every 1/rate: a wake-up that comes late
 * (a timer's slack, a busy core) or a slow pull is made up in the next
 * periods, so that asking for 1 kHz gives 1 kHz, where sleeping "the rest
 * of the gap" after each pull lost every lateness for good (73% of 1 kHz).
 * A scope further behind than four periods or 50 ms, whichever is longer,
 * starts a new schedule: it makes up what a busy core's time slices take
 * (a few ms with two cores and 160 threads, where four periods of 1 kHz
 * lost 4% of the pulls), not a stopped monitor's seconds in one burst.
 */
static void pace(es_scope *s)
{
	if (s->spec.rate_hz <= 0)
		return;
	uint64_t gap = (uint64_t)(1e9 / s->spec.rate_hz), now = base_now_ns();
	uint64_t next = s->last + gap, slack = 4 * gap > 50000000u ? 4 * gap : 50000000u;
	if (!s->last || now >= next + slack) {
		s->last = now;
		return;
	}
	if (now < next) {
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	s->last = next;
}

/* An answer that says the leaf's server is gone, not that the leaf is empty. */
static bool unreachable(int rc)
{
	return rc < 0 && rc != PS_ENODATA && rc != PS_EAGAIN && rc != PS_EDISCARDED;
}

bool es_scope_leaf_lost(const es_scope *s, int i)
{
	return s && i >= 0 && i < s->nleaves && s->lost[i];
}

int es_scope_pull(es_scope *s, struct es_trace *out)
{
	if (!s || !out)
		return PS_EINVAL;
	pace(s);
	if (s->helper > 0) {
		/* Ask the helper, and wait for its answer; a helper that died
		 * or hangs gives an error, not a stuck monitor. */
		uint64_t ask = ++s->asked;
		int rc = ps_write(s->req, &ask, 5000, NULL);
		if (!rc && !(rc = ps_read(s->rep, ask - 1, out, 5000, NULL)))
			es__hset_pulled(s, out, (size_t)s->width);
		return rc;
	}
	/* Remote leaves: all of them in one request per server, which the
	 * tree's reads then find waiting. */
	if (s->servers[0]) {
		int rc = ps_prefetch_latest(s->elems, s->nleaves);
		if (rc < 0)
			return rc;
		/* a server that could not be reached: its leaves come up empty
		 * (the latest guard), and the monitor can tell why */
		for (int i = 0; i < s->nleaves; i++)
			s->lost[i] = unreachable(ps_prefetched(s->elems[i]));
	}
	struct paths_op op = { .code = PATHS_READ_LATEST, .buf = out, .size = (size_t)s->width * T };
	int rc = paths_run(s->root, &op);
	if (s->servers[0])
		ps_prefetch_forget(s->elems, s->nleaves); /* a failed pull leaves none behind */
	if (!rc)
		es__hset_pulled(s, out, (size_t)s->width);
	return rc;
}

/* --- consuming every event ------------------------------------------------------------ */

struct ev {
	struct es_trace t;
	int leaf;
};

static int by_start(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->t.start != y->t.start)
		return x->t.start < y->t.start ? -1 : 1;
	return x->leaf - y->leaf;
}

int es_scope_consume(es_scope *s, struct es_trace *out, size_t max, uint64_t *missed)
{
	if (!s || (!out && max))
		return PS_EINVAL;
	if (!s->cursor) {
		/* The first call starts from the backlog: the oldest held. */
		s->cursor = calloc((size_t)s->nleaves, sizeof(*s->cursor));
		if (!s->cursor)
			return PS_ENOMEM;
		for (int i = 0; i < s->nleaves; i++)
			s->cursor[i] = CURSOR_UNSET;
	}
	if (max > s->cap) {
		void *g = realloc(s->got, max * sizeof(struct ev)), *l;
		if (!g)
			return PS_ENOMEM;
		s->got = g;
		if (!(l = realloc(s->got_leaf, max * sizeof(int))))
			return PS_ENOMEM;
		s->got_leaf = l;
		s->cap = max;
	}
	pace(s);
	struct ev *ev = (struct ev *)s->got;
	size_t n = 0;
	uint64_t lost = 0;
	uint64_t now = base_now_ns();
	double dt = s->last_consume ? (double)(now - s->last_consume) / 1e9 : 0;
	double headroom = INFINITY;
	for (int i = 0; i < s->nleaves && n < max; i++) {
		const struct es_leaf *l = &s->leaves[i];
		size_t n0 = n;
		if (s->cursor[i] == CURSOR_UNSET) {
			/* starts from the backlog, once its server answers */
			struct ps_stats st;
			int rc = ps_elem_stats(l->elem, &st);
			if ((s->lost[i] = unreachable(rc)) || rc)
				continue;
			s->cursor[i] = st.oldest;
			s->before += st.oldest;
		}
		for (;;) {
			uint64_t oldest;
			struct es_trace buf[64];
			/* by leaf: read straight into out, as much as it takes, and
			 * convert in place (one copy of each tuple, not two) */
			size_t want = s->spec.by_leaf ? max - n : max - n < 64 ? max - n : 64;
			int k = ps_read_range(l->elem, s->cursor[i], want, s->spec.by_leaf ? &out[n] : buf, &oldest);
			if (k == PS_EDISCARDED) {
				lost += oldest - s->cursor[i]; /* dropped before we came */
				s->cursor[i] = oldest;
				continue;
			}
			s->lost[i] = unreachable(k);
			if (k <= 0)
				break;
			if (s->spec.by_leaf) { /* nothing to merge */
				es_trace_portable_n(l->clock, &out[n], &out[n], (size_t)k);
				for (int j = 0; j < k; j++)
					s->got_leaf[n++] = i;
			} else {
				for (int j = 0; j < k; j++) {
					es_trace_portable(l->clock, &buf[j], &ev[n].t);
					ev[n++].leaf = i;
				}
			}
			s->cursor[i] += (uint64_t)k;
			if (n == max)
				break;
		}
		/* what this leaf wrote since the last consume, against what it holds */
		if (dt > 0 && n > n0) {
			double fill = (double)ps_elem_threshold(l->elem) * dt / (double)(n - n0);
			headroom = fill < headroom ? fill : headroom;
		}
	}
	/* A consume cut short by max has not seen every leaf: keep the last
	 * estimate.  Discards say it was too slow, whatever the counts say. */
	if (n < max || dt <= 0) {
		s->headroom = lost ? 0 : headroom;
		s->last_consume = now;
	}
	if (!s->spec.by_leaf) {
		qsort(ev, n, sizeof(*ev), by_start);
		for (size_t i = 0; i < n; i++) {
			out[i] = ev[i].t;
			s->got_leaf[i] = ev[i].leaf;
		}
	}
	if (missed)
		*missed = lost;
	es__hset_consumed(s, out, n);
	return (int)n;
}

double es_scope_headroom(const es_scope *s)
{
	return s && s->last_consume ? s->headroom : INFINITY;
}

uint64_t es_scope_before_attach(const es_scope *s)
{
	return s ? s->before : 0;
}

int es_scope_consumed_leaf(const es_scope *s, size_t i)
{
	return s && s->got_leaf && i < s->cap ? s->got_leaf[i] : -1;
}

/* --- where a thread waits ----------------------------------------------------------------- */

int es_scope_in_flight(const es_scope *s, int thread, struct es_flight *f)
{
	int found = 0;
	uint64_t best = 0;
	for (int i = 0; i < s->nleaves; i++) {
		const struct es_leaf *l = &s->leaves[i];
		/* One read is enough: the start (word 0) is read first, and the
		 * writer stores it last.  Words of a call begun since belong with
		 * an older start, whose call has ended: its tuple, read after,
		 * says so. */
		uint64_t w[PS_NOTE_WORDS];
		if (l->thread != thread || ps_notes_get(l->elem, w))
			continue;
		uint64_t start = w[ES_NOTE_START];
		struct es_trace last;
		bool done = ps_read_latest(l->elem, &last, NULL) == 0 && last.start >= start;
		if (!start || done || start <= best)
			continue;
		best = start;
		f->op = (unsigned)(w[ES_NOTE_WHAT] & 0xffff);
		f->element = (uint32_t)(w[ES_NOTE_WHAT] >> 32);
		f->arg = w[ES_NOTE_ARG];
		f->comm = w[ES_NOTE_COMM];
		f->start = start;
		uint64_t now_ns = base_now_ns(), at = es_clock_ns(l->clock, start);
		f->since_ns = now_ns > at ? now_ns - at : 0;
		f->leaf = i;
		found = 1;
	}
	return found;
}

int es_scope_space_clock(const es_scope *s, int i, const char **segment, int64_t *drift_ns)
{
	if (!s || i < 0 || i >= s->nspaces)
		return PS_EINVAL;
	if (segment)
		*segment = s->segs[i];
	return es_space_clock_checked(s->spaces[i], drift_ns);
}

int es_scope_skipped(const es_scope *s, int i, const char **segment)
{
	if (!s)
		return PS_EINVAL;
	if (i < 0)
		return s->nskipped;
	if (i >= s->nskipped || i >= (int)(sizeof(s->skipped) / sizeof(s->skipped[0])))
		return PS_EINVAL;
	if (segment)
		*segment = s->skipped[i].seg;
	return s->skipped[i].rc;
}

const char *es_scope_secret_file(const es_scope *s)
{
	return s->secret_file[0] ? s->secret_file : NULL;
}
