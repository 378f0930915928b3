/* sites.h - inside archive/: the call sites an archive keeps, by thread and number, and the file that holds them. */
#ifndef ES_ARCHIVE_SITES_H
#define ES_ARCHIVE_SITES_H

#include <stddef.h>
#include <stdio.h>

#include "archive/archive.h"

/*
 * The file `sites`, a line per frame (tab-separated):
 *   THREAD SITE FRAME MODULE OFFSET FUNCTION FILE LINE
 * frames of a site from 0 (where MPI was called) outwards, consecutive;
 * OFFSET the return address's in MODULE, in hex; FUNCTION and FILE - and
 * LINE 0 where the reader could not tell.  An archive without the file
 * knows no site.
 */
struct ar_sites;

struct ar_sites *ar_sites_create(void);
void ar_sites_destroy(struct ar_sites *s);
/* Copies frames (their strings too).  0, -EINVAL (site 0, no frames, or
 * the same site twice) or -ENOMEM. */
int ar_sites_add(struct ar_sites *s, int thread, int site, const struct ar_frame *frames, int n);
const struct ar_site *ar_sites_find(const struct ar_sites *s, int thread, int site);
int ar_sites_count(const struct ar_sites *s);
/* Prints the file's lines to f: 0, or -EINVAL when a site was given twice. */
int ar_sites_print(const struct ar_sites *s, FILE *f);
/* Reads it (a missing file is no site), its threads below nthreads;
 * errors say "PATH:LINE: expected ...". */
int ar_sites_read(struct ar_sites *s, const char *path, int nthreads, char *err, size_t errlen);

#endif
