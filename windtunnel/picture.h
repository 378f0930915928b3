/* picture.h - the coarse-grained flow field as a PNG image. */
#ifndef WT_PICTURE_H
#define WT_PICTURE_H

#include "windtunnel.h"

/* Cells of cell x cell sites, cw x ch of them; each cell accumulates four
 * int64: momentum x, momentum y, particles, wall sites. */
void wt_picture_size(const struct wt_geometry *g, int *cell, int *cw, int *ch);
void wt_picture_add_row(const struct wt_geometry *g, int y, const uint64_t *row, int64_t *acc);
/* Colours each cell by its mean velocity along the tunnel; 0 or -1. */
int wt_picture_write(const char *path, const struct wt_geometry *g, const int64_t *acc);
/* An 8-bit RGB image, uncompressed, as a valid PNG file. */
int wt_png_write(const char *path, int w, int h, const unsigned char *rgb);

#endif
