/* lga.c - FHP-I and FHP-II on bit-packed hexagonal rows: collision, bounce-back, inflow, propagation. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

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
	g->stride = (g->words + 3) / 4 * 4; /* whole vectors of four words */
	g->model = model;
	g->seed = seed;
	g->inflow_density = 65536 / 5; /* a gentle wind: a particle on a fifth of inflow steps */
	g->plate_x = width / 4;
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

/* The tunnel's walls, in one place: the top and bottom rows whole, and
 * the plate, a site at column plate_x in each row of the middle third.  The collision trusts these to know which rows hold any. */
static bool edge_row(const struct wt_geometry *g, int y)
{
	return y == 0 || y == g->height - 1;
}

static bool plate_row(const struct wt_geometry *g, int y)
{
	return !edge_row(g, y) && y >= g->height / 3 && y < 2 * g->height / 3;
}

void wt_row_walls(const struct wt_geometry *g, int y, uint64_t *row)
{
	uint64_t *wall = row + (size_t)WT_WALL * g->stride;
	memset(wall, 0, sizeof(uint64_t) * (size_t)g->stride);
	if (edge_row(g, y)) {
		for (int k = 0; k < g->words; k++)
			wall[k] = ~0ull;
		wall[g->words - 1] &= last_mask(g);
	} else if (plate_row(g, y)) {
		int x = g->plate_x;
		wall[x / 64] |= 1ull << (x % 64);
	}
}

/*
 * The kernels work on four words (256 sites) at a time, in GCC's vector
 * types: one source, compiled three times (KERNELS below) to AVX-512 with
 * its three-input logic, to AVX2, and to pairs of SSE2 words, the best the
 * processor has chosen at the first step (wt_vector_use overrides).  A
 * plane's stride is a whole number of vectors, its padding words always
 * empty, so no row needs a scalar tail.
 */
/* Vectors pass only between static functions of this file, so the ABI
 * GCC warns about never meets another compilation. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef uint64_t wv __attribute__((vector_size(32), aligned(8), may_alias));
#define LANES 4

#define INLINE static inline __attribute__((always_inline))

/* random_word() for words k..k+3, a lane each: the same bits */
INLINE wv mix_v(wv x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

INLINE wv
random_v(const struct wt_geometry *g, uint64_t step, int y, size_t k)
{
	uint64_t base = step * 0x100000001b3ull + (uint64_t)y * 0x3ffull + (uint64_t)k * 7;
	wv x = (wv){ base, base + 7, base + 14, base + 21 };
	return mix_v(g->seed ^ mix_v(x));
}

INLINE wv load(const uint64_t *p)
{
	return *(const wv *)p;
}

INLINE void store(uint64_t *p, wv v)
{
	*(wv *)p = v;
}

/* A row that will not be read again before it has left the cache is
 * written around it: no read of the line before the write. */
INLINE void put(uint64_t *p, wv v, bool stream)
{
#if defined(__x86_64__)
	if (stream) { /* SSE2's streaming store: in every clone; rows are 16-byte aligned */
		__m128i lo, hi;
		memcpy(&lo, &v, 16);
		memcpy(&hi, (const char *)&v + 16, 16);
		_mm_stream_si128((__m128i *)p, lo);
		_mm_stream_si128((__m128i *)p + 1, hi);
		return;
	}
#endif
	(void)stream;
	store(p, v);
}

INLINE int any(wv v)
{
	return (v[0] | v[1] | v[2] | v[3]) != 0;
}

/* Collision on 256 sites.  p: the eight planes' vectors. */
INLINE void collide_v(bool fhp2, wv *p, wv r)
{
	wv a = p[0], b = p[1], c = p[2], d = p[3], e = p[4], f = p[5], s = p[WT_REST];
	wv wall = p[WT_WALL], live = ~wall;
	/* head-on pairs, nothing else moving: rotate by 60 degrees, the way
	 * the chirality bit says */
	wv p0 = a & d & ~(b | c | e | f), p1 = b & e & ~(a | c | d | f), p2 = c & f & ~(a | b | d | e);
	/* symmetric triples: turn by 60 degrees */
	wv t = ((a & c & e & ~(b | d | f)) | (b & d & f & ~(a | c | e))) & live;
	wv fa = (p0 | (p1 & ~r) | (p2 & r)) & live;
	wv fb = (p1 | (p0 & r) | (p2 & ~r)) & live;
	wv fc = (p2 | (p0 & ~r) | (p1 & r)) & live;
	wv flip[6] = { fa | t, fb | t, fc | t, fa | t, fb | t, fc | t };
	wv frest = { 0, 0, 0, 0 };
	if (fhp2) {
		/* a particle and a rest particle <-> two particles 120 degrees apart */
		wv m[6] = { a, b, c, d, e, f };
		/* at least one, two, three moving particles in a site: "only
		 * particle i" is i and not two, "only the pair" is both and not three */
		wv s1 = { 0, 0, 0, 0 }, s2 = s1, s3 = s1;
		for (int j = 0; j < 6; j++) {
			s3 |= s2 & m[j];
			s2 |= s1 & m[j];
			s1 |= m[j];
		}
		for (int i = 0; i < 6; i++) {
			int l = (i + 5) % 6, rr = (i + 1) % 6;
			wv only_i = m[i] & ~s2;
			wv only_pair = m[l] & m[rr] & ~s3;
			wv ch = ((only_i & s) | (only_pair & ~s)) & live;
			flip[i] ^= ch;
			flip[l] ^= ch;
			flip[rr] ^= ch;
			frest ^= ch;
		}
	}
	for (int i = 0; i < 6; i++)
		p[i] ^= flip[i];
	p[WT_REST] = s ^ frest;
	/* walls send everything back where it came from */
	wv na = p[0], nb = p[1], nc = p[2];
	p[0] = (na & live) | (p[3] & wall);
	p[3] = (p[3] & live) | (na & wall);
	p[1] = (nb & live) | (p[4] & wall);
	p[4] = (p[4] & live) | (nb & wall);
	p[2] = (nc & live) | (p[5] & wall);
	p[5] = (p[5] & live) | (nc & wall);
}

unsigned wt_collide_site(enum wt_model model, unsigned state, unsigned r)
{
	wv p[WT_PLANES];
	for (int i = 0; i < WT_PLANES; i++)
		p[i] = (wv){ (state >> i) & 1, 0, 0, 0 };
	collide_v(model == WT_FHP2, p, (wv){ r & 1, 0, 0, 0 });
	unsigned out = 0;
	for (int i = 0; i < WT_PLANES; i++)
		out |= (unsigned)(p[i][0] & 1) << i;
	return out;
}

static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };

/* What the walls among four words take: bounce-back gives them twice what
 * arrives, and the plate's share is its drag. */
static void walls_feel(const struct wt_geometry *g, int y, int k, const wv *p,
		       struct wt_flow *flow)
{
	int px = g->plate_x;
	bool plate = plate_row(g, y);
	for (int l = 0; l < LANES; l++) {
		uint64_t wall = p[WT_WALL][l];
		if (!wall)
			continue;
		for (int d = 0; d < WT_DIRS; d++) {
			int64_t n = __builtin_popcountll(p[d][l] & wall);
			flow->mwall_x += 2 * vx[d] * n;
			flow->mwall_y += 2 * vy[d] * n;
		}
		uint64_t plate_bit = 1ull << (px % 64);
		if (plate && k + l == px / 64 && (wall & plate_bit))
			for (int d = 0; d < WT_DIRS; d++)
				if (p[d][l] & plate_bit)
					flow->drag += 2 * vx[d];
	}
}

INLINE void
collide_row(const struct wt_geometry *g, uint64_t step, int y, const uint64_t *in, uint64_t *out,
	    struct wt_flow *flow, bool fhp2)
{
	const size_t S = (size_t)g->stride;
	/* walls are where wt_row_walls puts them: most rows have none, and
	 * need not read their wall plane */
	bool walls = edge_row(g, y) || plate_row(g, y);
	/* inflow: the first site of a row that is not a wall may gain an
	 * eastward particle */
	uint64_t inflow = 0;
	if (!(in[(size_t)WT_WALL * S] & 1) && !(in[0] & 1) &&
	    (random_word(g, step, y, 0, 1) & 0xffff) < g->inflow_density) {
		inflow = 1;
		flow->in++;
		flow->min_x += 2;
	}
	for (size_t k = 0; k < S; k += LANES) {
		wv p[WT_PLANES];
		for (int i = 0; i < WT_DIRS; i++) {
			p[i] = load(in + (size_t)i * S + k);
			/* the next row, a line at a time: seven streams a row
			 * apart are more than the prefetcher follows */
			if (!(k & 7))
				__builtin_prefetch(in + (size_t)(WT_PLANES + i) * S + k);
		}
		p[WT_REST] = fhp2 ? load(in + (size_t)WT_REST * S + k) : (wv){ 0, 0, 0, 0 };
		p[WT_WALL] = walls ? load(in + (size_t)WT_WALL * S + k) : (wv){ 0, 0, 0, 0 };
		if (k == 0)
			p[0][0] |= inflow;
		if (walls && any(p[WT_WALL]))
			walls_feel(g, y, (int)k, p, flow);
		collide_v(fhp2, p, random_v(g, step, y, k));
		for (int i = 0; i < WT_DIRS; i++)
			store(out + (size_t)i * S + k, p[i]);
		if (fhp2)
			store(out + (size_t)WT_REST * S + k, p[WT_REST]);
	}
}

void wt_collide_row(const struct wt_geometry *g, uint64_t step, int y, uint64_t *row,
		    struct wt_flow *flow)
{
	wt_collide_row_into(g, step, y, row, row, flow);
}

/* x -> x + 1, a vector at a time, the word below carried in from the
 * vector before; returns the particles pushed past the last site */
INLINE int64_t
shift_east(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst, bool stream)
{
	const size_t S = (size_t)g->stride;
	wv prev = { 0, 0, 0, 0 };
	uint64_t over = 0;
	for (size_t k = 0; k < S; k += LANES) {
		wv v = load(src + k);
		wv below = __builtin_shuffle(prev, v, (wv){ 3, 4, 5, 6 });
		wv out = (v << 1) | (below >> 63);
		if (k + LANES >= (size_t)g->words) { /* the spare bit's vector */
			size_t last = (size_t)g->words - 1 - k;
			over |= out[last] & ~last_mask(g);
			out[last] &= last_mask(g);
		}
		put(dst + k, out, stream);
		prev = v;
	}
	return __builtin_popcountll(over);
}

/* x -> x - 1; returns the particles pushed off the first site */
INLINE int64_t
shift_west(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst, bool stream)
{
	const size_t S = (size_t)g->stride;
	int64_t lost = (int64_t)(src[0] & 1);
	wv v = load(src);
	for (size_t k = 0; k < S; k += LANES) {
		wv next = k + LANES < S ? load(src + k + LANES) : (wv){ 0, 0, 0, 0 };
		wv above = __builtin_shuffle(v, next, (wv){ 1, 2, 3, 4 });
		put(dst + k, (v >> 1) | (above << 63), stream);
		v = next;
	}
	return lost;
}

INLINE void
copy_plane(const struct wt_geometry *g, const uint64_t *src, uint64_t *dst, bool stream)
{
	for (size_t k = 0; k < (size_t)g->stride; k += LANES)
		put(dst + k, load(src + k), stream);
}

INLINE void
zero_plane(const struct wt_geometry *g, uint64_t *dst, bool stream)
{
	for (size_t k = 0; k < (size_t)g->stride; k += LANES)
		put(dst + k, (wv){ 0, 0, 0, 0 }, stream);
}

INLINE void
propagate(const struct wt_geometry *g, int y, const uint64_t *above, const uint64_t *at,
	  const uint64_t *below, uint64_t *out, struct wt_flow *flow, bool statics, bool stream)
{
	const size_t S = (size_t)g->stride;
	int64_t lost = 0, n;
	/* each plane's particles lost through the ends, with their momentum */
#define LOST(d, expr) (n = (expr), lost += n, flow->mout_x += vx[d] * n, flow->mout_y += vy[d] * n)
	/* east and west stay in the row */
	LOST(0, shift_east(g, at, out, stream));
	LOST(3, shift_west(g, at + 3 * S, out + 3 * S, stream));
	/* north-east and north-west come from the row below (y + 1); where
	 * they land depends on that row's parity, odd rows sitting half a
	 * site to the right */
	int odd_below = (y + 1) & 1, odd_above = (y - 1) & 1;
	if (below) {
		LOST(1, odd_below ? shift_east(g, below + 1 * S, out + 1 * S, stream)
				  : (copy_plane(g, below + 1 * S, out + 1 * S, stream), 0));
		LOST(2, odd_below ? (copy_plane(g, below + 2 * S, out + 2 * S, stream), 0)
				  : shift_west(g, below + 2 * S, out + 2 * S, stream));
	} else {
		zero_plane(g, out + 1 * S, stream);
		zero_plane(g, out + 2 * S, stream);
	}
	/* south-west and south-east come from the row above (y - 1) */
	if (above) {
		LOST(4, odd_above ? (copy_plane(g, above + 4 * S, out + 4 * S, stream), 0)
				  : shift_west(g, above + 4 * S, out + 4 * S, stream));
		LOST(5, odd_above ? shift_east(g, above + 5 * S, out + 5 * S, stream)
				  : (copy_plane(g, above + 5 * S, out + 5 * S, stream), 0));
	} else {
		zero_plane(g, out + 4 * S, stream);
		zero_plane(g, out + 5 * S, stream);
	}
#undef LOST
	/* rest particles and walls stay */
	if (statics || g->model == WT_FHP2)
		copy_plane(g, at + (size_t)WT_REST * S, out + (size_t)WT_REST * S, stream);
	if (statics)
		copy_plane(g, at + (size_t)WT_WALL * S, out + (size_t)WT_WALL * S, stream);
	flow->out += lost;
}

void wt_propagate_row(const struct wt_geometry *g, int y, const uint64_t *above,
		      const uint64_t *at, const uint64_t *below, uint64_t *out,
		      struct wt_flow *flow)
{
	propagate(g, y, above, at, below, out, flow, true, false);
}

INLINE int64_t row_particles(const struct wt_geometry *g, const uint64_t *row)
{
	int64_t n = 0;
	for (int i = 0; i < WT_WALL; i++)
		for (int k = 0; k < g->words; k++)
			n += __builtin_popcountll(row[(size_t)i * g->stride + k]);
	return n;
}

INLINE void row_momentum(const struct wt_geometry *g, const uint64_t *row, int64_t *px, int64_t *py)
{
	for (int i = 0; i < WT_DIRS; i++) {
		int64_t n = 0;
		for (int k = 0; k < g->words; k++)
			n += __builtin_popcountll(row[(size_t)i * g->stride + k]);
		*px += vx[i] * n;
		*py += vy[i] * n;
	}
}

/* --- one set of kernels per instruction set ---------------------------------- */

struct kernels {
	const char *name;
	void (*collide)(const struct wt_geometry *g, uint64_t step, int y, const uint64_t *in,
			uint64_t *out, struct wt_flow *flow);
	void (*propagate)(const struct wt_geometry *g, int y, const uint64_t *above,
			  const uint64_t *at, const uint64_t *below, uint64_t *out,
			  struct wt_flow *flow, bool stream);
	int64_t (*particles)(const struct wt_geometry *g, const uint64_t *row);
	void (*momentum)(const struct wt_geometry *g, const uint64_t *row, int64_t *px, int64_t *py);
};

/* The bodies above are inlined into each set, and so compiled for its
 * instruction set; the constant flags make each model and each kind of
 * store a loop of its own. */
#define KERNELS(sfx, target)                                                                      \
	target static void collide_##sfx(const struct wt_geometry *g, uint64_t step, int y,       \
					 const uint64_t *in, uint64_t *out, struct wt_flow *flow)  \
	{                                                                                         \
		if (g->model == WT_FHP2)                                                          \
			collide_row(g, step, y, in, out, flow, true);                             \
		else                                                                              \
			collide_row(g, step, y, in, out, flow, false);                            \
	}                                                                                         \
	target static void propagate_##sfx(const struct wt_geometry *g, int y,                    \
					   const uint64_t *above, const uint64_t *at,              \
					   const uint64_t *below, uint64_t *out,                   \
					   struct wt_flow *flow, bool stream)                      \
	{                                                                                         \
		if (stream)                                                                       \
			propagate(g, y, above, at, below, out, flow, false, true);                \
		else                                                                              \
			propagate(g, y, above, at, below, out, flow, false, false);               \
	}                                                                                         \
	target static int64_t particles_##sfx(const struct wt_geometry *g, const uint64_t *row)  \
	{                                                                                         \
		return row_particles(g, row);                                                     \
	}                                                                                         \
	target static void momentum_##sfx(const struct wt_geometry *g, const uint64_t *row,       \
					  int64_t *px, int64_t *py)                               \
	{                                                                                         \
		row_momentum(g, row, px, py);                                                     \
	}                                                                                         \
	static const struct kernels kernels_##sfx = { #sfx, collide_##sfx, propagate_##sfx,       \
						      particles_##sfx, momentum_##sfx };

KERNELS(portable, )
#if defined(__x86_64__) && defined(__GNUC__)
KERNELS(avx2, __attribute__((target("avx2,bmi2,popcnt"))))
KERNELS(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,bmi2,popcnt"))))
#define X86_KERNELS 1
#endif

static const struct kernels *kernel_sets(int i)
{
	static const struct kernels *const all[] = {
#ifdef X86_KERNELS
		&kernels_avx512, &kernels_avx2,
#endif
		&kernels_portable,
	};
	return i < (int)(sizeof(all) / sizeof(all[0])) ? all[i] : NULL;
}

static bool supported(const struct kernels *k)
{
#ifdef X86_KERNELS
	__builtin_cpu_init();
	if (k == &kernels_avx512)
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
	if (k == &kernels_avx2)
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
#endif
	return k != NULL;
}

static _Atomic(const struct kernels *) chosen;

static const struct kernels *use(void)
{
	const struct kernels *k = atomic_load_explicit(&chosen, memory_order_acquire);
	if (__builtin_expect(k != NULL, 1))
		return k;
	for (int i = 0; (k = kernel_sets(i)) && !supported(k); i++)
		;
	/* threads that race here all pick the same set */
	atomic_store_explicit(&chosen, k, memory_order_release);
	return k;
}

int wt_vector_use(const char *name)
{
	const struct kernels *k;
	for (int i = 0; (k = kernel_sets(i)); i++)
		if (!name || !strcmp(name, k->name)) {
			if (!supported(k)) {
				if (name)
					return -EOPNOTSUPP; /* this processor lacks it */
				continue;
			}
			atomic_store_explicit(&chosen, k, memory_order_release);
			return 0;
		}
	return -EINVAL;
}

const char *wt_vector_path(void)
{
	return use()->name;
}

void wt_collide_row_into(const struct wt_geometry *g, uint64_t step, int y, const uint64_t *in,
			 uint64_t *out, struct wt_flow *flow)
{
	use()->collide(g, step, y, in, out, flow);
}

void wt_propagate_moving(const struct wt_geometry *g, int y, const uint64_t *above,
			 const uint64_t *at, const uint64_t *below, uint64_t *out,
			 struct wt_flow *flow, bool stream)
{
	use()->propagate(g, y, above, at, below, out, flow, stream);
}

int64_t wt_row_particles(const struct wt_geometry *g, const uint64_t *row)
{
	return use()->particles(g, row);
}

void wt_row_momentum(const struct wt_geometry *g, const uint64_t *row, int64_t *px, int64_t *py)
{
	use()->momentum(g, row, px, py);
}
