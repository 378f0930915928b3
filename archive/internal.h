/* internal.h - what the archive's format files (files.c, writer.c, reader.c, repair.c) share; private to archive/. */
#ifndef ES_ARCHIVE_INTERNAL_H
#define ES_ARCHIVE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "archive/archive.h"

/* A phase's name, by rank and number; sorted so when read. */
struct region {
	int rank;
	uint32_t id;
	char name[256];
};

/* A checkpoint writes again only the files whose contents changed. */
enum part_bit { P_THREADS = 1, P_COMMS = 2, P_SITES = 4, P_RANKS = 8, P_REGIONS = 16, P_FILES = 32, P_CLOCKS = 64 };

/* A file of the archive is written whole beside it (NAME.tmp) and renamed
 * over it: a reader, at any moment, finds the last whole one. */
struct ar__part {
	FILE *f;
	char tmp[4210], path[4200];
};

struct ar_archive {
	char job[PS_NAME_MAX + 1];
	uint64_t lost, declared;
	void *map;
	size_t maplen, nevents;
	struct ar_thread *threads;
	int nthreads;
	struct ar_comm *comms;
	int ncomms;
	struct ar_sites *sites;
	int version;
	struct ar_rank *ranks;
	int nranks;
	struct region *regions, *files;
	int nregions, nfiles;
	bool partial;         /* INFO said "whole: no": a checkpoint's, its recorder stopped */
	bool no_info;         /* no INFO: cut off before ar_create wrote it (partial too) */
	bool repaired;        /* whole by ar_repair: what it lacks its recorder may not have written yet */
	unsigned absent;      /* the files it lacks that every archive now has (enum part_bit) */
	int rank_bound;       /* every rank it names is below (check_ranks) */
	uint64_t first_ns;    /* the earliest start (UINT64_MAX: no event), found at open */
	uint64_t until_ns;
	struct ar_death *died;
	int ndied;
	uint32_t *by_thread;  /* event indices, each thread's together, in the file's order */
	size_t *first;        /* thread t's are by_thread[first[t] .. first[t + 1]) */
	struct ar_clocks *clocks; /* the clocks file, or NULL */
	int moved;            /* ranks whose stamps the reader moved (clocks.c) */
	int64_t most_moved;   /* by at most (ns, either way) */
	int points;           /* clock points of the ranks moved */
};

/* err gets the message (and, for a system call's failure, the system's
 * words for rc); they return rc. */
int ar__sys_fail(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ar__fail(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ar__path(char *buf, size_t len, const char *dir, const char *name);
int ar__add_region(struct region **v, int *n, int rank, uint32_t id, const char *name);
int ar__by_rank_id(const void *x, const void *y);
int ar__write_all(int fd, const unsigned char *p, size_t n, uint64_t off);
int ar__close_file(FILE *f, bool sync);
int ar__part_open(const char *dir, const char *name, struct ar__part *pt, char *err, size_t errlen);
int ar__part_close(struct ar__part *pt, bool sync, char *err, size_t errlen);
void ar__free_comms(struct ar_comm *c, int n);
/* ranks grown to hold r, new ones marked unsaid: 0, -EINVAL or -ENOMEM */
int ar__hold_rank(struct ar_rank **ranks, int *n, int r);
FILE *ar__open_in(const char *p, char *err, size_t errlen, int *rc);
FILE *ar__open_optional(const char *p, char *err, size_t errlen, int *rc);
bool ar__salvageable(const ar_archive *a, const unsigned char *r);
double ar__into(const ar_archive *a, uint64_t ns);

#endif
