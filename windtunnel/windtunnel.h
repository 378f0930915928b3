/* windtunnel.h - the FHP lattice gas the wind tunnel runs: bit-packed rows, collision, propagation, boundaries. */
#ifndef WINDTUNNEL_H
#define WINDTUNNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The hexagonal lattice is stored row by row; odd rows sit half a site to
 * the right.  A site holds up to six moving particles, one per direction
 * (0 east, 1 north-east, 2 north-west, 3 west, 4 south-west, 5 south-east;
 * north is row - 1), and in FHP-II one at rest.  Each direction is a bit
 * plane: bit x of a row's plane d says whether site x has a particle
 * moving in direction d, so one 64-bit word updates 64 sites at once.
 *
 * A step is: inflow and outflow at the ends of each row, collision (or
 * bounce-back on wall sites) row by row, then propagation, which reads a
 * row and its two neighbours.  A slice of rows therefore needs its
 * neighbours' border rows after their collision: that is what the wind
 * tunnel's threads exchange.  Everything random (chirality, inflow) comes
 * from a hash of (seed, step, row, word), so the lattice after n steps is
 * the same however the rows are shared out.
 */

#define WT_DIRS 6
#define WT_PLANES 8   /* 6 moving, 1 rest (FHP-II), 1 wall */
#define WT_REST 6
#define WT_WALL 7

enum wt_model { WT_FHP1 = 1, WT_FHP2 = 2 };

struct wt_geometry {
	int width, height;        /* sites per row, rows */
	int words;                /* 64-bit words of sites per row plane */
	int stride;               /* words from one plane to the next: words rounded up to
				     whole vectors, the rest always empty */
	enum wt_model model;
	uint64_t seed;
	uint32_t inflow_density;  /* probability in 1/65536 that an inflow site gets an eastward particle */
	int plate_x;              /* the plate's column: a quarter of the width at first */
};

/* The words of one row: plane d at row + d * stride. */
static inline size_t wt_row_words(const struct wt_geometry *g)
{
	return (size_t)WT_PLANES * (size_t)g->stride;
}

int wt_geometry_init(struct wt_geometry *g, int width, int height, enum wt_model model,
		     uint64_t seed);

/* Marks the tunnel's walls in a row: the top and bottom rows, and the
 * plate (a vertical line at column plate_x, over the middle third of the
 * height). */
void wt_row_walls(const struct wt_geometry *g, int y, uint64_t *row);

/* What crossed the tunnel's ends in one row and step. */
struct wt_flow {
	int64_t in, out; /* particles injected at x = 0, lost at either end */
	/* momentum (units of wt_row_momentum) brought in, carried out, and
	 * given to the walls: with these, momentum balances exactly */
	int64_t min_x, mout_x, mout_y, mwall_x, mwall_y;
	int64_t drag;    /* momentum along the tunnel given to the plate, in the units of
			    wt_row_momentum: each particle bouncing off it gives twice its own */
};

/* Collision in place on one row (bounce-back on its wall sites), after
 * inflow on its first site.  `step` and `y` select the random bits.  The
 * walls must be wt_row_walls' own: rows that have none there are not read
 * for them. */
void wt_collide_row(const struct wt_geometry *g, uint64_t step, int y, uint64_t *row,
		    struct wt_flow *flow);
/* The same from `in` into `out`: the moving planes (and in FHP-II the
 * rest plane) of out are written, its wall plane is left alone. */
void wt_collide_row_into(const struct wt_geometry *g, uint64_t step, int y, const uint64_t *in,
			 uint64_t *out, struct wt_flow *flow);

/* Propagation into row y from the rows above (y - 1), at (y) and below
 * (y + 1) as they were after collision; above/below may be NULL at the
 * lattice's edge (nothing comes from there).  Counts what leaves through
 * the ends. */
void wt_propagate_row(const struct wt_geometry *g, int y, const uint64_t *above,
		      const uint64_t *at, const uint64_t *below, uint64_t *out,
		      struct wt_flow *flow);

/* The same, but out's wall plane (and in FHP-I its rest plane) are left as
 * they are: a row that already holds its walls needs only its moving
 * particles written.  stream: out will have left the cache before it is
 * read again, so write around the cache. */
void wt_propagate_moving(const struct wt_geometry *g, int y, const uint64_t *above,
			 const uint64_t *at, const uint64_t *below, uint64_t *out,
			 struct wt_flow *flow, bool stream);

/* Particles in a row, and their momentum in units of (1/2, sqrt(3)/2):
 * east is (2, 0), north-east (1, 1), north-west (-1, 1)... */
int64_t wt_row_particles(const struct wt_geometry *g, const uint64_t *row);
void wt_row_momentum(const struct wt_geometry *g, const uint64_t *row, int64_t *px, int64_t *py);

/* Which compilation of the kernels runs: "avx512", "avx2" or "portable",
 * the best the processor has unless wt_vector_use named another (NULL: the
 * best again).  All give the same lattice; -EOPNOTSUPP if this processor
 * lacks the instructions, -EINVAL for a name not known. */
const char *wt_vector_path(void);
int wt_vector_use(const char *name);

/* The per-site collision rule, for tests: the 8-bit state (bit d = a
 * particle in direction d, bit 6 at rest, bit 7 a wall) after collision
 * with chirality bit r. */
unsigned wt_collide_site(enum wt_model model, unsigned state, unsigned r);

#ifdef __cplusplus
}
#endif
#endif
