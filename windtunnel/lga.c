/* lga.c - FHP-I and FHP-II on bit-packed hexagonal rows: collision, bounce-back, inflow, propagation. */
#include <stdbool.h>
#include <string.h>

#include "windtunnel.h"

int wt_geometry_init(struct wt_geometry *g, int width, int height, enum wt_model model,
		     uint64_t seed)
{
	if (!g || width < 8 || height < 3 || width > (1 << 24) || height > (1 << 24) ||
	    (model != WT_FHP1 && model != WT_FHP2))
		return -22; /* -EINVAL */
	g->width = width;
	g->height = height;
	/* one spare bit past the last site: a particle leaving east lands
	 * there for one moment, to be counted and cleared */
	g->words = width / 64 + 1;
	g->model = model;
	g->seed = seed;
	g->inflow_density = 65536 / 5; /* a gentle wind: a particle on a fifth of inflow steps */
	return 0;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser: every input bit reaches every output bit */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t random_word(const struct wt_geometry *g, uint64_t step, int y, int k, int what)
{
	return mix(g->seed ^ mix(step * 0x100000001b3ull + (uint64_t)y * 0x3ffull + (uint64_t)k * 7 +
				(uint64_t)what));
}

static uint64_t last_mask(const struct wt_geometry *g)
{
	int bits = g->width - 64 * (g->words - 1);
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

void wt_row_walls(const struct wt_geometry *g, int y, uint64_t *row)
{
	uint64_t *wall = row + (size_t)WT_WALL * g->words;
	memset(wall, 0, sizeof(uint64_t) * (size_t)g->words);
	if (y == 0 || y == g->height - 1) {
		for (int k = 0; k < g->words; k++)
			wall[k] = ~0ull;
		wall[g->words - 1] &= last_mask(g);
		return;
	}
	if (y >= g->height / 3 && y < 2 * g->height / 3) {
		int x = g->width / 4;
		wall[x / 64] |= 1ull << (x % 64);
	}
}

/* Collision on one word of 64 sites.  p: the eight planes' words. */
static void collide_word(enum wt_model model, uint64_t *p, uint64_t r)
{
	uint64_t a = p[0], b = p[1], c = p[2], d = p[3], e = p[4], f = p[5], s = p[WT_REST];
	uint64_t wall = p[WT_WALL], live = ~wall;
	/* head-on pairs, nothing else moving: rotate by 60 degrees, the way
	 * the chirality bit says */
	uint64_t p0 = a & d & ~(b | c | e | f), p1 = b & e & ~(a | c | d | f), p2 = c & f & ~(a | b | d | e);
	/* symmetric triples: turn by 60 degrees */
	uint64_t t = ((a & c & e & ~(b | d | f)) | (b & d & f & ~(a | c | e))) & live;
	uint64_t fa = (p0 | (p1 & ~r) | (p2 & r)) & live;
	uint64_t fb = (p1 | (p0 & r) | (p2 & ~r)) & live;
	uint64_t fc = (p2 | (p0 & ~r) | (p1 & r)) & live;
	uint64_t flip[6] = { fa | t, fb | t, fc | t, fa | t, fb | t, fc | t };
	uint64_t frest = 0;
	if (model == WT_FHP2) {
		/* a particle and a rest particle <-> two particles 120 degrees apart */
		uint64_t m[6] = { a, b, c, d, e, f };
		for (int i = 0; i < 6; i++) {
			int l = (i + 5) % 6, rr = (i + 1) % 6;
			/* bits are sites: "nothing else moving" is an OR over
			 * the other directions' planes */
			uint64_t not_i = 0, not_pair = 0;
			for (int j = 0; j < 6; j++) {
				if (j != i)
					not_i |= m[j];
				if (j != l && j != rr)
					not_pair |= m[j];
			}
			uint64_t only_i = m[i] & ~not_i;
			uint64_t only_pair = m[l] & m[rr] & ~not_pair;
			uint64_t split = only_i & s & live, join = only_pair & ~s & live;
			flip[i] ^= split | join;
			flip[l] ^= split | join;
			flip[rr] ^= split | join;
			frest ^= split | join;
		}
	}
	for (int i = 0; i < 6; i++)
		p[i] ^= flip[i];
	p[WT_REST] = s ^ frest;
	/* walls send everything back where it came from */
	uint64_t na = p[0], nb = p[1], nc = p[2];
	p[0] = (na & live) | (p[3] & wall);
	p[3] = (p[3] & live) | (na & wall);
	p[1] = (nb & live) | (p[4] & wall);
	p[4] = (p[4] & live) | (nb & wall);
	p[2] = (nc & live) | (p[5] & wall);
	p[5] = (p[5] & live) | (nc & wall);
}

unsigned wt_collide_site(enum wt_model model, unsigned state, unsigned r)
{
	uint64_t p[WT_PLANES];
	for (int i = 0; i < WT_PLANES; i++)
		p[i] = (state >> i) & 1;
	collide_word(model, p, r & 1);
	unsigned out = 0;
	for (int i = 0; i < WT_PLANES; i++)
		out |= (unsigned)(p[i] & 1) << i;
	return out;
}

void wt_collide_row(const struct wt_geometry *g, uint64_t step, int y, uint64_t *row,
		    struct wt_flow *flow)
{
	const int W = g->words;
	/* inflow: the first site of a row that is not a wall may gain an
	 * eastward particle */
	uint64_t *east = row, *wall = row + (size_t)WT_WALL * W;
	if (!(wall[0] & 1) && !(east[0] & 1) &&
	    (random_word(g, step, y, 0, 1) & 0xffff) < g->inflow_density) {
		east[0] |= 1;
		flow->in++;
		flow->min_x += 2;
	}
	/* the plate's site in this row, if it has one: what bounces off it
	 * pushes it downstream (the drag) */
	int px = g->width / 4;
	bool plate_row = y >= g->height / 3 && y < 2 * g->height / 3 && y > 0 && y < g->height - 1;
	uint64_t plate_bit = 1ull << (px % 64);
	uint64_t p[WT_PLANES];
	for (int k = 0; k < W; k++) {
		for (int i = 0; i < WT_PLANES; i++)
			p[i] = row[(size_t)i * W + k];
		static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };
		if (p[WT_WALL]) /* bounce-back gives the walls twice what arrives */
			for (int d = 0; d < WT_DIRS; d++) {
				int64_t n = __builtin_popcountll(p[d] & p[WT_WALL]);
				flow->mwall_x += 2 * vx[d] * n;
				flow->mwall_y += 2 * vy[d] * n;
			}
		if (plate_row && k == px / 64 && (p[WT_WALL] & plate_bit)) {
			for (int d = 0; d < WT_DIRS; d++)
				if (p[d] & plate_bit)
					flow->drag += 2 * vx[d];
		}
		collide_word(g->model, p, random_word(g, step, y, k, 0));
		for (int i = 0; i < WT_PLANES - 1; i++)
			row[(size_t)i * W + k] = p[i];
	}
}

/* x -> x + 1; returns the particles pushed past the last site */
static int64_t shift_east(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst)
{
	uint64_t carry = 0;
	for (int k = 0; k < g->words; k++) {
		uint64_t v = src[k];
		dst[k] = (v << 1) | carry;
		carry = v >> 63;
	}
	uint64_t over = dst[g->words - 1] & ~last_mask(g);
	dst[g->words - 1] &= last_mask(g);
	return __builtin_popcountll(over);
}

/* x -> x - 1; returns the particles pushed off the first site */
static int64_t shift_west(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst)
{
	int64_t lost = (int64_t)(src[0] & 1);
	for (int k = 0; k < g->words; k++)
		dst[k] = (src[k] >> 1) | (k + 1 < g->words ? src[k + 1] << 63 : 0);
	return lost;
}

static void copy_plane(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst)
{
	memcpy(dst, src, sizeof(uint64_t) * (size_t)g->words);
}

void wt_propagate_row(const struct wt_geometry *g, int y, const uint64_t *above,
		      const uint64_t *at, const uint64_t *below, uint64_t *out,
		      struct wt_flow *flow)
{
	const size_t W = (size_t)g->words;
	int64_t lost = 0, n;
	/* each plane's particles lost through the ends, with their momentum */
#define LOST(d, expr) (n = (expr), lost += n, flow->mout_x += vx[d] * n, flow->mout_y += vy[d] * n)
	static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };
	/* east and west stay in the row */
	LOST(0, shift_east(g, at, out));
	LOST(3, shift_west(g, at + 3 * W, out + 3 * W));
	/* north-east and north-west come from the row below (y + 1); where
	 * they land depends on that row's parity, odd rows sitting half a
	 * site to the right */
	int odd_below = (y + 1) & 1, odd_above = (y - 1) & 1;
	if (below) {
		LOST(1, odd_below ? shift_east(g, below + 1 * W, out + 1 * W)
				  : (copy_plane(g, below + 1 * W, out + 1 * W), 0));
		LOST(2, odd_below ? (copy_plane(g, below + 2 * W, out + 2 * W), 0)
				  : shift_west(g, below + 2 * W, out + 2 * W));
	} else {
		memset(out + 1 * W, 0, 2 * W * sizeof(uint64_t));
	}
	/* south-west and south-east come from the row above (y - 1) */
	if (above) {
		LOST(4, odd_above ? (copy_plane(g, above + 4 * W, out + 4 * W), 0)
				  : shift_west(g, above + 4 * W, out + 4 * W));
		LOST(5, odd_above ? shift_east(g, above + 5 * W, out + 5 * W)
				  : (copy_plane(g, above + 5 * W, out + 5 * W), 0));
	} else {
		memset(out + 4 * W, 0, 2 * W * sizeof(uint64_t));
	}
#undef LOST
	/* rest particles and walls stay */
	copy_plane(g, at + (size_t)WT_REST * W, out + (size_t)WT_REST * W);
	copy_plane(g, at + (size_t)WT_WALL * W, out + (size_t)WT_WALL * W);
	flow->out += lost;
}

int64_t wt_row_particles(const struct wt_geometry *g, const uint64_t *row)
{
	int64_t n = 0;
	for (int i = 0; i < WT_WALL; i++)
		for (int k = 0; k < g->words; k++)
			n += __builtin_popcountll(row[(size_t)i * g->words + k]);
	return n;
}

void wt_row_momentum(const struct wt_geometry *g, const uint64_t *row, int64_t *px, int64_t *py)
{
	static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };
	for (int i = 0; i < WT_DIRS; i++) {
		int64_t n = 0;
		for (int k = 0; k < g->words; k++)
			n += __builtin_popcountll(row[(size_t)i * g->words + k]);
		*px += vx[i] * n;
		*py += vy[i] * n;
	}
}
