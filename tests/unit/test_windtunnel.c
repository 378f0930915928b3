/* test_windtunnel.c - the lattice gas: collision rules, propagation, boundaries, and sliced runs that match serial ones. */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "windtunnel/windtunnel.h"

static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };

static void mass_momentum(unsigned s, int *m, int *px, int *py)
{
	*m = *px = *py = 0;
	for (int i = 0; i < 6; i++)
		if (s & (1u << i)) {
			++*m;
			*px += vx[i];
			*py += vy[i];
		}
	if (s & (1u << WT_REST))
		++*m;
}

/* Every input state, both chiralities, both models: particles and momentum
 * are conserved at every site; the rules do change what they should. */
START_TEST(collisions_conserve)
{
	for (int model = WT_FHP1; model <= WT_FHP2; model++)
		for (unsigned s = 0; s < 128; s++)
			for (unsigned r = 0; r < 2; r++) {
				if (model == WT_FHP1 && (s & (1u << WT_REST)))
					continue;
				unsigned o = wt_collide_site(model, s, r);
				int m0, x0, y0, m1, x1, y1;
				mass_momentum(s, &m0, &x0, &y0);
				mass_momentum(o, &m1, &x1, &y1);
				ck_assert_msg(m0 == m1 && x0 == x1 && y0 == y1,
					      "model %d state %#x r %u -> %#x", model, s, r, o);
				ck_assert_uint_eq(o & (1u << WT_WALL), 0);
			}
	/* head-on pair 0-3 turns one way or the other */
	ck_assert_uint_eq(wt_collide_site(WT_FHP1, 0x09, 1), 0x12); /* -> 1,4 */
	ck_assert_uint_eq(wt_collide_site(WT_FHP1, 0x09, 0), 0x24); /* -> 2,5 */
	ck_assert_uint_eq(wt_collide_site(WT_FHP1, 0x15, 0), 0x2a); /* triple 0,2,4 -> 1,3,5 */
	ck_assert_uint_eq(wt_collide_site(WT_FHP1, 0x03, 0), 0x03); /* no rule: unchanged */
	/* FHP-II: a particle meets a rest particle and splits, and back */
	ck_assert_uint_eq(wt_collide_site(WT_FHP2, 0x41, 0), 0x22); /* 0 + rest -> 5, 1 */
	ck_assert_uint_eq(wt_collide_site(WT_FHP2, 0x22, 0), 0x41);
	ck_assert_uint_eq(wt_collide_site(WT_FHP1, 0x22, 0), 0x22); /* not in FHP-I */
}
END_TEST

START_TEST(walls_bounce_back)
{
	for (unsigned s = 0; s < 64; s++) {
		unsigned o = wt_collide_site(WT_FHP1, s | (1u << WT_WALL), 0);
		unsigned want = (((s << 3) | (s >> 3)) & 63) | (1u << WT_WALL); /* all reversed */
		ck_assert_uint_eq(o, want);
	}
}
END_TEST

static struct wt_geometry g;

static uint64_t *rows_new(int n)
{
	return calloc((size_t)n * wt_row_words(&g), sizeof(uint64_t));
}

static uint64_t *row(uint64_t *rows, int y)
{
	return rows + (size_t)y * wt_row_words(&g);
}

static void set(uint64_t *rows, int x, int y, int d)
{
	row(rows, y)[(size_t)d * g.stride + x / 64] |= 1ull << (x % 64);
}

static int get(uint64_t *rows, int x, int y, int d)
{
	return (int)((row(rows, y)[(size_t)d * g.stride + x / 64] >> (x % 64)) & 1);
}

static void propagate_all(uint64_t *src, uint64_t *dst, struct wt_flow *fl)
{
	for (int y = 0; y < g.height; y++)
		wt_propagate_row(&g, y, y ? row(src, y - 1) : NULL, row(src, y),
				 y + 1 < g.height ? row(src, y + 1) : NULL, row(dst, y), fl);
}

/* One particle in each direction, from an even and an odd row, lands on the
 * neighbour the hexagonal geometry says. */
START_TEST(propagation_geometry)
{
	ck_assert_int_eq(wt_geometry_init(&g, 130, 8, WT_FHP1, 1), 0);
	/* (dx, dy) for a move from an even row, then from an odd row */
	static const int dx_even[6] = { 1, 0, -1, -1, -1, 0 }, dx_odd[6] = { 1, 1, 0, -1, 0, 1 };
	static const int dy[6] = { 0, -1, -1, 0, 1, 1 };
	for (int y = 2; y <= 3; y++)
		for (int d = 0; d < 6; d++)
			for (int x = 63; x <= 64; x++) { /* across a word boundary */
				uint64_t *a = rows_new(g.height), *b = rows_new(g.height);
				set(a, x, y, d);
				struct wt_flow fl = { 0 };
				propagate_all(a, b, &fl);
				int tx = x + (y % 2 ? dx_odd[d] : dx_even[d]), ty = y + dy[d];
				ck_assert_msg(get(b, tx, ty, d), "d %d from (%d,%d) to (%d,%d)", d, x, y, tx, ty);
				int64_t n = 0;
				for (int k = 0; k < g.height; k++)
					n += wt_row_particles(&g, row(b, k));
				ck_assert_int_eq(n, 1);
				ck_assert_int_eq(fl.out, 0);
				free(a);
				free(b);
			}
	/* through the ends: counted, not kept */
	uint64_t *a = rows_new(g.height), *b = rows_new(g.height);
	set(a, g.width - 1, 3, 0);
	set(a, 0, 3, 3);
	set(a, 0, 2, 2); /* north-west from an even row's first site */
	struct wt_flow fl = { 0 };
	propagate_all(a, b, &fl);
	ck_assert_int_eq(fl.out, 3);
	int64_t n = 0;
	for (int k = 0; k < g.height; k++)
		n += wt_row_particles(&g, row(b, k));
	ck_assert_int_eq(n, 0);
	free(a);
	free(b);
}
END_TEST

/* A particle that bounces off the plate gives it twice its momentum: the
 * drag the tunnel reports. */
START_TEST(plate_feels_the_drag)
{
	ck_assert_int_eq(wt_geometry_init(&g, 128, 30, WT_FHP1, 1), 0);
	uint64_t *r = rows_new(1);
	int y = g.height / 2, x = g.width / 4;
	wt_row_walls(&g, y, r);
	ck_assert_int_eq(get(r, x, 0, WT_WALL), 1);
	set(r, x, 0, 0);   /* moving east into it: +4 */
	set(r, x, 0, 2);   /* north-west: -2 */
	struct wt_flow fl = { 0 };
	wt_collide_row(&g, 0, y, r, &fl);
	ck_assert_int_eq(fl.drag, 2 * 2 + 2 * -1);
	ck_assert_int_eq(get(r, x, 0, 3), 1); /* and back they go */
	ck_assert_int_eq(get(r, x, 0, 5), 1);
	free(r);
}
END_TEST

/* Runs `steps` over the whole lattice, or over slices that see each other's
 * border rows only as copies, as the wind tunnel's threads do. */
static void run(uint64_t *lat, int steps, int slices, struct wt_flow *total)
{
	size_t rw = wt_row_words(&g);
	uint64_t *next = rows_new(g.height);
	for (int s = 0; s < steps; s++) {
		struct wt_flow fl = { 0 };
		for (int y = 0; y < g.height; y++)
			wt_collide_row(&g, (uint64_t)s, y, row(lat, y), &fl);
		for (int sl = 0; sl < slices; sl++) {
			int y0 = g.height * sl / slices, y1 = g.height * (sl + 1) / slices;
			uint64_t *halo_up = calloc(rw, 8), *halo_down = calloc(rw, 8);
			if (y0 > 0)
				memcpy(halo_up, row(lat, y0 - 1), rw * 8);
			if (y1 < g.height)
				memcpy(halo_down, row(lat, y1), rw * 8);
			for (int y = y0; y < y1; y++)
				wt_propagate_row(&g, y, y == 0 ? NULL : y == y0 ? halo_up : row(lat, y - 1),
						 row(lat, y),
						 y == g.height - 1 ? NULL : y == y1 - 1 ? halo_down : row(lat, y + 1),
						 row(next, y), &fl);
			free(halo_up);
			free(halo_down);
		}
		memcpy(lat, next, rw * 8 * (size_t)g.height);
		total->in += fl.in;
		total->out += fl.out;
		total->min_x += fl.min_x;
		total->mout_x += fl.mout_x;
		total->mout_y += fl.mout_y;
		total->mwall_x += fl.mwall_x;
		total->mwall_y += fl.mwall_y;
	}
	free(next);
}

static void fill(uint64_t *lat)
{
	uint64_t x = 12345;
	for (int y = 0; y < g.height; y++) {
		wt_row_walls(&g, y, row(lat, y));
		for (int d = 0; d < 6; d++)
			for (int k = 0; k < g.words; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				uint64_t *w = &row(lat, y)[(size_t)d * g.stride + k];
				*w = x & (x >> 3) & ~row(lat, y)[(size_t)WT_WALL * g.stride + k]; /* ~1/4 full */
				if (k == g.words - 1)
					*w &= (1ull << (g.width % 64)) - 1;
			}
	}
}

/* Particles are never made or lost but at the ends, where they are
 * counted; and however the rows are sliced, the lattice is the same. */
START_TEST(runs_conserve_and_slices_agree)
{
	for (int model = WT_FHP1; model <= WT_FHP2; model++) {
		ck_assert_int_eq(wt_geometry_init(&g, 200, 48, model, 7), 0);
		uint64_t *a = rows_new(g.height), *b = rows_new(g.height);
		fill(a);
		memcpy(b, a, wt_row_words(&g) * 8 * (size_t)g.height);
		int64_t n0 = 0, x0 = 0, y0 = 0;
		for (int y = 0; y < g.height; y++) {
			n0 += wt_row_particles(&g, row(a, y));
			wt_row_momentum(&g, row(a, y), &x0, &y0);
		}
		struct wt_flow fa = { 0 }, fb = { 0 };
		run(a, 60, 1, &fa);
		run(b, 60, 5, &fb);
		int64_t n1 = 0, x1 = 0, y1 = 0;
		for (int y = 0; y < g.height; y++) {
			n1 += wt_row_particles(&g, row(a, y));
			wt_row_momentum(&g, row(a, y), &x1, &y1);
		}
		ck_assert_int_eq(n1, n0 + fa.in - fa.out);
		/* and momentum balances exactly too */
		ck_assert_int_eq(x1, x0 + fa.min_x - fa.mout_x - fa.mwall_x);
		ck_assert_int_eq(y1, y0 - fa.mout_y - fa.mwall_y);
		ck_assert_int_ne(fa.mwall_x, 0);
		ck_assert_int_gt(fa.in, 0);
		ck_assert_int_gt(fa.out, 0);
		ck_assert_mem_eq(a, b, wt_row_words(&g) * 8 * (size_t)g.height);
		ck_assert_int_eq(fa.in, fb.in);
		free(a);
		free(b);
	}
	ck_assert_int_ne(wt_geometry_init(&g, 4, 48, WT_FHP1, 0), 0);
	ck_assert_int_ne(wt_geometry_init(&g, 100, 48, 3, 0), 0);
}
END_TEST

/* The wind tunnel's way (collision into a copy, propagation of moving
 * particles only, streaming stores or not) on each compilation of the
 * kernels this processor runs: the same lattice and flows as the plain
 * in-place steps on the portable one. */
static void run_fused(uint64_t *lat, int steps, bool stream, struct wt_flow *total)
{
	size_t rw = wt_row_words(&g);
	uint64_t *coll = rows_new(g.height), *next = rows_new(g.height);
	for (int y = 0; y < g.height; y++)
		wt_row_walls(&g, y, row(next, y));
	for (int s = 0; s < steps; s++) {
		for (int y = 0; y < g.height; y++)
			wt_collide_row_into(&g, (uint64_t)s, y, row(lat, y), row(coll, y), total);
		for (int y = 0; y < g.height; y++)
			wt_propagate_moving(&g, y, y ? row(coll, y - 1) : NULL, row(coll, y),
					    y + 1 < g.height ? row(coll, y + 1) : NULL, row(next, y), total,
					    stream && (s & 1));
		uint64_t *t = lat;
		memcpy(t, next, rw * 8 * (size_t)g.height);
	}
	free(coll);
	free(next);
}

START_TEST(vector_paths_agree)
{
	static const int widths[] = { 200, 256, 1920, 130 };
	ck_assert_int_eq(wt_vector_use("sse7"), -EINVAL);
	int ran = 0;
	for (int model = WT_FHP1; model <= WT_FHP2; model++)
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
			ck_assert_int_eq(wt_geometry_init(&g, widths[w], 45, model, 3), 0);
			size_t bytes = wt_row_words(&g) * 8 * (size_t)g.height;
			uint64_t *ref = rows_new(g.height), *lat = rows_new(g.height);
			fill(ref);
			if (model == WT_FHP2)
				for (int y = 1; y < g.height - 1; y++) /* some rest particles */
					row(ref, y)[(size_t)WT_REST * g.stride] = 0x0f0f0f0full * (uint64_t)y;
			memcpy(lat, ref, bytes);
			ck_assert_int_eq(wt_vector_use("portable"), 0);
			struct wt_flow fr = { 0 };
			run(ref, 30, 1, &fr);
			const char *paths[] = { "avx512", "avx2", "portable" };
			for (int p = 0; p < 3; p++) {
				int rc = wt_vector_use(paths[p]);
				if (rc == -EOPNOTSUPP)
					continue;
				ck_assert_int_eq(rc, 0);
				ck_assert_str_eq(wt_vector_path(), paths[p]);
				uint64_t *l = rows_new(g.height);
				memcpy(l, lat, bytes);
				struct wt_flow fl = { 0 };
				run_fused(l, 30, p != 2, &fl);
				ck_assert_msg(!memcmp(l, ref, bytes), "%s, model %d, width %d: another lattice",
					      paths[p], model, widths[w]);
				ck_assert_int_eq(fl.out, fr.out);
				ck_assert_int_eq(fl.mwall_x, fr.mwall_x);
				ck_assert_int_eq(fl.mout_y, fr.mout_y);
				ck_assert_int_eq(wt_row_particles(&g, row(l, 7)), wt_row_particles(&g, row(ref, 7)));
				free(l);
				ran++;
			}
			free(ref);
			free(lat);
		}
	ck_assert_int_ge(ran, 8); /* the portable path at least, every case */
	ck_assert_int_eq(wt_vector_use(NULL), 0);
}
END_TEST

Suite *windtunnel_suite(void)
{
	Suite *s = suite_create("windtunnel");
	TCase *tc = tcase_create("lga");
	tcase_add_test(tc, collisions_conserve);
	tcase_add_test(tc, walls_bounce_back);
	tcase_add_test(tc, propagation_geometry);
	tcase_add_test(tc, plate_feels_the_drag);
	tcase_add_test(tc, runs_conserve_and_slices_agree);
	tcase_add_test(tc, vector_paths_agree);
	suite_add_tcase(s, tc);
	return s;
}
