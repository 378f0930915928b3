/* profile.h - inside archive/: a profile's rows, counted in one pass over an archive (profile.c), for the page (page.c) and its JSON (profile_json.c). */
#ifndef ES_ARCHIVE_PROFILE_H
#define ES_ARCHIVE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "archive/convert.h"
#include "base/base.h"
#include "waitstates/waitstates.h"

#define NONE 0xffffffffu
#define ALL (-1) /* a row of every rank */

/* What a row counts: an op's calls (site 0) or a call site's (site > 0) on a rank. */
struct stat_row {
	unsigned op;
	uint32_t site; /* 0, or a call site's number on the page */
	int rank;      /* ALL: every rank */
	uint64_t count, total, min, max, bytes;
	uint64_t regions; /* tuples: a poll streak one (OTF2's regions, the JSON's slices), count its polls */
	uint64_t sent_n, sent_min, sent_max; /* messages sent from the site: bytes is their sum */
};

struct rank_run {
	uint64_t first, last, init_end, fin_start, mpi;
	bool init, fin;
};

struct coll {
	unsigned op;
	uint16_t comm;
	uint32_t arg;
	uint64_t first_in, last_in, last_out, time;
	int last_rank, n;
};

struct pair {
	int from, to;
	uint64_t bytes, count;
};

/* A call site on the page: its call and the frames of the first thread seen there. */
struct psite {
	unsigned op;
	const struct ar_site *where;
	uint64_t hash;
	uint32_t number; /* as printed, from 1, in the order of file and line */
};

/* What a phase's or a file's row is of: a name (the archive's) on a rank
 * (ALL: every rank); its rows' first member, so that one comparison sorts both. */
struct named {
	const char *name;
	int rank;
};

/* A phase on a rank (ALL: every rank): its time, and its calls' */
struct phase_row {
	struct named key;
	uint64_t count, time, mpi, calls;
};

/* MPI-IO on a file by a rank (ALL: every rank) */
struct io_row {
	struct named key; /* the file */
	uint64_t reads, read_bytes, writes, written, calls, time;
};

/* A communicator's totals: its collectives (calls, and every member's time
 * and bytes in them) and the messages sent on it. */
struct comm_tot {
	uint64_t colls, coll_time, coll_bytes, msgs, msg_bytes;
};

struct prof {
	const ar_archive *a;
	struct comm_tot *comms; /* by the archive's number */
	bool mpi;
	int groups; /* ranks, or threads when no MPI */
	struct rank_run *run;
	struct base_vec rows, colls, pairs, sites, phases, io;
	struct base_tab row_ix, coll_ix, pair_ix, phase_ix, io_ix; /* keys -> their rows' indices */
	struct base_tab site_of; /* (thread, its site, op) -> prof_site_key's answer */
	struct base_tab site_ix; /* a site's hash -> the first site of it on the page */
	bool oom;           /* a look-up found no memory: the profile fails so */
	uint64_t app_all, mpi_all;
	ws *waits; /* the wait states (waits.c), call sites keyed by their index + 1 in sites */
	struct ws_analysis why; /* their causes and the critical path */
	int32_t *caused_by;     /* by wait-state row: the rank that caused most of it, or -1 */
	char **phase_names;     /* the analysis' phase keys: name k - 1 (0: outside phases) */
	size_t nphase_names;
};


static inline double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static inline double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The profile of an archive, in three steps the callers take through
 * prof_make (waits.c): prof_build counts everything into *p, prof_waits
 * adds the wait states (their call sites among the profile's), prof_finish
 * numbers the sites, adds the * rows of phases and files and makes the
 * totals.  0 or -ENOMEM; prof_free either way. */
int prof_make(struct prof *p, const ar_archive *a);
int prof_build(struct prof *p, const ar_archive *a);
int prof_finish(struct prof *p);
void prof_free(struct prof *p);
/* prof_free, and the profile's outcome: rc, or -EIO if out could not be written (err says why). */
int prof_end(struct prof *p, int rc, FILE *out, char *err, size_t errlen);
uint64_t prof_app(const struct prof *p, int g); /* group g's run: from MPI_Init's end to MPI_Finalize's start */
const struct psite *prof_site(const struct prof *p, uint32_t number);
double prof_cov(const struct prof *p, const struct stat_row *all); /* across the ranks that called the site */
/* The index + 1 in sites of thread t's site s called with op (0: not known). */
uint32_t prof_site_key(struct prof *p, int t, uint16_t s, unsigned op);
/* The wait states of the archive (waits.c): p->waits.  0 or -ENOMEM. */
int prof_waits(struct prof *p);
/* The wait states said (waits_out.c): the page's section, --json's members. */
void prof_print_waits(const struct prof *p, FILE *out, int top);
void prof_json_waits(const struct prof *p, FILE *f);
/* The name of a phase key of the analysis. */
const char *prof_phase_name(const struct prof *p, uint32_t key);
/* The site a wait-state row names (its key), or NULL. */
const struct psite *prof_site_at(const struct prof *p, uint32_t key);

#endif
