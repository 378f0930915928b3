/* clocks.c - the archive's clocks file: how the recorder put each rank's stamps on its clock, the ranks' clock points, and the line through them that moves a rank's stamps onto rank 0's host's clock. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"

/*
 * The file, a line each, in any order:
 *   shift RANK NS          the recorder moved RANK's stamps by -NS onto its
 *                          clock: NS is RANK's host's clock minus its own,
 *                          when it connected (0 on its own host)
 *   sync RANK SERIAL KIND AT OFFSET RTT
 *                          RANK's clock point number SERIAL (collectors.h,
 *                          "Clocks across hosts"): at AT on the archive's
 *                          clock, its host's clock was OFFSET ns ahead of
 *                          rank 0's host's, good to RTT / 2
 * A stamp t of RANK on the archive's clock, as recorded, is
 *   t + shift(RANK) on RANK's host's clock, so t + shift(RANK) - OFFSET(t)
 *   on rank 0's host's, and t + shift(RANK) - OFFSET(t) - shift(0) on the
 *   archive's clock as rank 0's stamps are:
 *   moved by delta(t) = shift(RANK) - shift(0) - OFFSET(t),
 * where OFFSET(t) is the line through RANK's points (before the first,
 * its value; after the last, the last stretch's slope). A rank with no
 * point stays as recorded: on the recorder's host, or of an older
 * collector, whose stamps the recorder's connection put right enough.
 */
struct rank_clock {
	bool moves;   /* its line is not 0 at every point (then nowhere): as of settle() */
	bool shifted;
	int64_t shift;
	struct ar_sync *pts; /* by at_ns */
	int n, cap;
};

struct ar_clocks {
	struct rank_clock *r;
	int nr;
	bool settled; /* every rank's moves is up to date: cleared by any change */
};

struct ar_clocks *ar_clocks_new(void)
{
	return calloc(1, sizeof(struct ar_clocks));
}

void ar_clocks_free(struct ar_clocks *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nr; i++)
		free(c->r[i].pts);
	free(c->r);
	free(c);
}

static struct rank_clock *rank_of(struct ar_clocks *c, int rank)
{
	if (rank < 0 || rank > 1 << 24)
		return NULL;
	if (rank >= c->nr) {
		struct rank_clock *r = realloc(c->r, sizeof(*r) * (size_t)(rank + 1));
		if (!r)
			return NULL;
		memset(r + c->nr, 0, sizeof(*r) * (size_t)(rank + 1 - c->nr));
		c->r = r;
		c->nr = rank + 1;
	}
	return &c->r[rank];
}

int ar_clocks_shift(struct ar_clocks *c, int rank, int64_t shift_ns)
{
	struct rank_clock *r = rank_of(c, rank);
	if (!r)
		return -EINVAL;
	int changed = !r->shifted || r->shift != shift_ns;
	c->settled &= !changed;
	r->shifted = true;
	r->shift = shift_ns;
	return changed;
}

int ar_clocks_add(struct ar_clocks *c, const struct ar_sync *s)
{
	struct rank_clock *r = rank_of(c, s->rank);
	if (!r || !s->serial)
		return -EINVAL;
	int i = r->n;
	for (int k = 0; k < r->n; k++)
		if (r->pts[k].serial == s->serial)
			return 0; /* seen at an earlier look */
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 8;
		struct ar_sync *p = realloc(r->pts, sizeof(*p) * (size_t)cap);
		if (!p)
			return -ENOMEM;
		r->pts = p;
		r->cap = cap;
	}
	while (i > 0 && r->pts[i - 1].at_ns > s->at_ns) { /* kept in time order */
		r->pts[i] = r->pts[i - 1];
		i--;
	}
	r->pts[i] = *s;
	r->n++;
	c->settled = false;
	return 1;
}

int ar_clocks_print(const struct ar_clocks *c, FILE *f)
{
	for (int i = 0; c && i < c->nr; i++) {
		const struct rank_clock *r = &c->r[i];
		if (r->shifted)
			fprintf(f, "shift %d %" PRId64 "\n", i, r->shift);
		for (int k = 0; k < r->n; k++) {
			const struct ar_sync *s = &r->pts[k];
			fprintf(f, "sync %d %" PRIu64 " %u %" PRIu64 " %" PRId64 " %u\n", i, s->serial, s->kind,
				s->at_ns, s->offset_ns, s->rtt_ns);
		}
	}
	return ferror(f) ? -EIO : 0;
}

/* A line of the file, its number kept so that repeats resolve as
 * ar_clocks_add resolves them: the first of a (rank, serial) stays, and
 * points of one time keep the file's order. */
struct read_pt {
	struct ar_sync s;
	int line;
};

static int by_serial(const void *x, const void *y)
{
	const struct read_pt *a = x, *b = y;
	if (a->s.rank != b->s.rank)
		return a->s.rank < b->s.rank ? -1 : 1;
	if (a->s.serial != b->s.serial)
		return a->s.serial < b->s.serial ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int by_time(const void *x, const void *y)
{
	const struct read_pt *a = x, *b = y;
	if (a->s.rank != b->s.rank)
		return a->s.rank < b->s.rank ? -1 : 1;
	if (a->s.at_ns != b->s.at_ns)
		return a->s.at_ns < b->s.at_ns ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* The points read, each rank's given to it at once: sorted, not inserted
 * one by one, so that a file of any order reads in n log n. */
static int settle_points(struct ar_clocks *c, struct read_pt *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_serial);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || v[i].s.rank != v[k - 1].s.rank || v[i].s.serial != v[k - 1].s.serial)
			v[k++] = v[i];
	qsort(v, k, sizeof(*v), by_time);
	for (size_t i = 0, e; i < k; i = e) {
		for (e = i; e < k && v[e].s.rank == v[i].s.rank;)
			e++;
		struct rank_clock *r = rank_of(c, v[i].s.rank);
		if (!r || !(r->pts = malloc(sizeof(*r->pts) * (e - i))))
			return -ENOMEM;
		for (size_t j = i; j < e; j++)
			r->pts[j - i] = v[j].s;
		r->n = r->cap = (int)(e - i);
	}
	c->settled = false;
	return 0;
}

/* One line into c (a shift) or v (a point); -EINVAL: not one of them, or
 * a rank or a clock no recorder writes */
static int read_line(const char *buf, int line, int rank_bound, struct ar_clocks *c, struct read_pt *pt)
{
	struct ar_sync s = { 0 };
	int64_t shift;
	char tail;
	if (sscanf(buf, "shift %d %" SCNd64 " %c", &s.rank, &shift, &tail) == 2)
		return s.rank >= 0 && s.rank < rank_bound && shift >= -AR_CLOCK_SPAN && shift <= AR_CLOCK_SPAN &&
			       ar_clocks_shift(c, s.rank, shift) >= 0 ? 0 : -EINVAL;
	if (sscanf(buf, "sync %d %" SCNu64 " %u %" SCNu64 " %" SCNd64 " %u %c", &s.rank, &s.serial, &s.kind,
		   &s.at_ns, &s.offset_ns, &s.rtt_ns, &tail) != 6 || s.rank < 0 || s.rank >= rank_bound ||
	    !s.serial || s.offset_ns < -AR_CLOCK_SPAN || s.offset_ns > AR_CLOCK_SPAN)
		return -EINVAL;
	*pt = (struct read_pt){ s, line };
	return 1;
}

int ar_clocks_read(FILE *f, const char *path, int rank_bound, struct ar_clocks **out, char *err, size_t errlen)
{
	struct ar_clocks *c = ar_clocks_new();
	struct read_pt *v = NULL;
	size_t n = 0, cap = 0;
	char buf[256];
	int line = 0, rc = c ? 0 : -ENOMEM;
	while (!rc && fgets(buf, sizeof(buf), f)) {
		line++;
		if (n == cap) {
			struct read_pt *g = realloc(v, sizeof(*v) * (cap = cap ? 2 * cap : 64));
			if (!g) {
				rc = -ENOMEM;
				break;
			}
			v = g;
		}
		int got = read_line(buf, line, rank_bound, c, &v[n]);
		if (got < 0)
			snprintf(err, errlen, "%s:%d: expected \"shift RANK NS\" or \"sync RANK SERIAL KIND AT OFFSET "
				 "RTT\", RANK below %d, SERIAL from 1, NS and OFFSET within %lld s", path, line,
				 rank_bound, (long long)(AR_CLOCK_SPAN / 1000000000));
		rc = got < 0 ? got : 0;
		n += got > 0;
	}
	if (!rc && (rc = settle_points(c, v, n)))
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	free(v);
	if (rc) {
		ar_clocks_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static bool has_points(const struct ar_clocks *c, int rank)
{
	return c && rank >= 0 && rank < c->nr && c->r[rank].n > 0;
}

/* The line through a rank's points at t: between two, the straight line
 * from one to the other; before the first, its value.  After the last,
 * the drift from the first point to the last goes on when it is known,
 * that is when their offsets differ by more than their errors (half a
 * round trip each); else the last value stays. */
static double offset_at(const struct rank_clock *r, uint64_t t)
{
	const struct ar_sync *p = r->pts, *a, *b;
	if (r->n == 1 || t <= p[0].at_ns)
		return (double)p[0].offset_ns;
	if (t >= p[r->n - 1].at_ns) {
		a = &p[0], b = &p[r->n - 1];
		double moved = (double)b->offset_ns - (double)a->offset_ns;
		if (b->at_ns == a->at_ns || fabs(moved) <= ((double)a->rtt_ns + (double)b->rtt_ns) / 2)
			return (double)b->offset_ns;
	} else {
		int k = 1;
		while (p[k].at_ns < t)
			k++;
		a = &p[k - 1], b = &p[k];
		if (b->at_ns == a->at_ns)
			return (double)b->offset_ns;
	}
	double slope = ((double)b->offset_ns - (double)a->offset_ns) / ((double)b->at_ns - (double)a->at_ns);
	return (double)a->offset_ns + slope * ((double)t - (double)a->at_ns);
}

int64_t ar_clocks_delta(const struct ar_clocks *c, int rank, uint64_t t)
{
	if (!has_points(c, rank))
		return 0;
	const struct rank_clock *r = &c->r[rank];
	int64_t s0 = c->nr > 0 && c->r[0].shifted ? c->r[0].shift : 0;
	double d = (double)r->shift - (double)s0 - offset_at(r, t);
	/* the writer's values are any; a file's are within AR_CLOCK_SPAN */
	d = d < -1.5 * AR_CLOCK_SPAN ? -1.5 * AR_CLOCK_SPAN : d > 1.5 * AR_CLOCK_SPAN ? 1.5 * AR_CLOCK_SPAN : d;
	return (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

int ar_clocks_points(const struct ar_clocks *c, int rank, const struct ar_sync **out)
{
	if (!c || rank < 0 || rank >= c->nr) {
		*out = NULL;
		return 0;
	}
	*out = c->r[rank].pts;
	return c->r[rank].n;
}

/* A rank moves when its line is not 0 at every point, so not anywhere
 * (linear between them): on rank 0's host it is 0 by construction.  Once
 * for every rank after a change, so that asking costs nothing per event. */
static void settle(struct ar_clocks *c)
{
	for (int k = 0; k < c->nr; k++) {
		struct rank_clock *r = &c->r[k];
		r->moves = false;
		for (int i = 0; i < r->n && !r->moves; i++)
			r->moves = ar_clocks_delta(c, k, r->pts[i].at_ns) != 0;
	}
	c->settled = true;
}

bool ar_clocks_moves(struct ar_clocks *c, int rank)
{
	if (!has_points(c, rank))
		return false;
	if (!c->settled)
		settle(c);
	return c->r[rank].moves;
}
