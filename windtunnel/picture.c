/* picture.c - the flow around the plate as a picture: coarse-grained velocities, written as a PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "picture.h"

/* --- a small PNG writer: stored (uncompressed) deflate blocks ---------------- */

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

static uint32_t crc(uint32_t c, const unsigned char *p, size_t n)
{
	c = ~c;
	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static void be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static int chunk(FILE *f, const char *type, const unsigned char *data, size_t n)
{
	unsigned char len[4], c[4];
	be32(len, (uint32_t)n);
	uint32_t k = crc(0, (const unsigned char *)type, 4);
	k = crc(k, data, n);
	be32(c, k);
	return fwrite(len, 1, 4, f) == 4 && fwrite(type, 1, 4, f) == 4 &&
	       (n == 0 || fwrite(data, 1, n, f) == n) && fwrite(c, 1, 4, f) == 4 ? 0 : -1;
}

int wt_png_write(const char *path, int w, int h, const unsigned char *rgb)
{
	crc_init();
	size_t raw = (size_t)h * (1 + 3 * (size_t)w); /* a filter byte per row */
	size_t blocks = raw / 65535 + 1;
	size_t zlen = 2 + raw + 5 * blocks + 4;
	unsigned char *z = malloc(zlen), *line = malloc(raw);
	if (!z || !line) {
		free(z);
		free(line);
		return -1;
	}
	for (int y = 0; y < h; y++) {
		line[(size_t)y * (1 + 3 * (size_t)w)] = 0;
		memcpy(line + (size_t)y * (1 + 3 * (size_t)w) + 1, rgb + (size_t)y * 3 * (size_t)w, 3 * (size_t)w);
	}
	size_t o = 0;
	z[o++] = 0x78, z[o++] = 0x01; /* zlib header: deflate, no dictionary */
	uint32_t a = 1, b = 0;
	for (size_t done = 0; done < raw || (raw == 0 && done == 0);) {
		size_t n = raw - done > 65535 ? 65535 : raw - done;
		z[o++] = done + n == raw; /* last block? */
		z[o++] = (unsigned char)n, z[o++] = (unsigned char)(n >> 8);
		z[o++] = (unsigned char)~n, z[o++] = (unsigned char)(~n >> 8);
		memcpy(z + o, line + done, n);
		for (size_t i = 0; i < n; i++) {
			a = (a + line[done + i]) % 65521;
			b = (b + a) % 65521;
		}
		o += n;
		done += n;
		if (raw == 0)
			break;
	}
	be32(z + o, b << 16 | a);
	o += 4;
	FILE *f = base_fopen_out(path, 0644);
	int rc = -1;
	if (f) {
		unsigned char ihdr[13];
		be32(ihdr, (uint32_t)w);
		be32(ihdr + 4, (uint32_t)h);
		ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = ihdr[11] = ihdr[12] = 0; /* 8-bit RGB */
		rc = fwrite("\x89PNG\r\n\x1a\n", 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) &&
		     !chunk(f, "IDAT", z, o) && !chunk(f, "IEND", NULL, 0) ? 0 : -1;
		if (fclose(f))
			rc = -1;
	}
	free(z);
	free(line);
	return rc;
}

/* --- coarse graining ------------------------------------------------------------ */

void wt_picture_size(const struct wt_geometry *g, int *cell, int *cw, int *ch)
{
	int c = g->width / 120; /* about 120 cells along: enough sites each to average out the noise */
	*cell = c < 2 ? 2 : c;
	*cw = (g->width + *cell - 1) / *cell;
	*ch = (g->height + *cell - 1) / *cell;
}

void wt_picture_add_row(const struct wt_geometry *g, int y, const uint64_t *row, int64_t *acc)
{
	static const int vx[6] = { 2, 1, -1, -2, -1, 1 }, vy[6] = { 0, 1, 1, 0, -1, -1 };
	int cell, cw, ch;
	wt_picture_size(g, &cell, &cw, &ch);
	int64_t *a = acc + (size_t)(y / cell) * (size_t)cw * 4;
	for (int x = 0; x < g->width; x++) {
		int k = x / 64;
		uint64_t bit = 1ull << (x % 64);
		int64_t *c = a + (size_t)(x / cell) * 4;
		if (row[(size_t)WT_WALL * g->stride + k] & bit) {
			c[3]++;
			continue;
		}
		for (int d = 0; d < WT_DIRS; d++)
			if (row[(size_t)d * g->stride + k] & bit) {
				c[0] += vx[d];
				c[1] += vy[d];
				c[2]++;
			}
		c[2] += (row[(size_t)WT_REST * g->stride + k] & bit) != 0;
	}
}

int wt_picture_write(const char *path, const struct wt_geometry *g, const int64_t *acc)
{
	int cell, cw, ch;
	wt_picture_size(g, &cell, &cw, &ch);
	unsigned char *rgb = calloc((size_t)cw * (size_t)ch, 3);
	if (!rgb)
		return -1;
	/* velocity along the tunnel, from against the flow (blue) through
	 * still (white) to with it (red); walls black */
	double umax = 1e-9;
	for (int i = 0; i < cw * ch; i++) {
		const int64_t *c = acc + (size_t)i * 4;
		if (c[2] && !c[3])
			umax = fmax(umax, fabs((double)c[0] / (double)c[2]));
	}
	for (int i = 0; i < cw * ch; i++) {
		const int64_t *c = acc + (size_t)i * 4;
		unsigned char *p = rgb + (size_t)i * 3;
		if (c[3]) {
			p[0] = p[1] = p[2] = 0;
			continue;
		}
		double u = c[2] ? (double)c[0] / (double)c[2] / umax : 0;
		u = u > 1 ? 1 : u < -1 ? -1 : u;
		p[0] = (unsigned char)(255 * (u < 0 ? 1 + u : 1));
		p[1] = (unsigned char)(255 * (1 - fabs(u)));
		p[2] = (unsigned char)(255 * (u > 0 ? 1 - u : 1));
	}
	int rc = wt_png_write(path, cw, ch, rgb);
	free(rgb);
	return rc;
}
