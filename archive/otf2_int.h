/* otf2_int.h - what otf2.c (the events) and otf2_defs.c (the definitions: strings, regions, locations, communicators) share. */
#ifndef ES_ARCHIVE_OTF2_INT_H
#define ES_ARCHIVE_OTF2_INT_H

#include <otf2/otf2.h>

#include "archive/convert.h"
#include "base/base.h"

#define AR_NO_ELEMENT 0xffffffffu /* a tuple's element when it has none (no peer, no root) */

enum { LOC_NONE, LOC_EVENTS, LOC_EMPTY }; /* what a thread is in OTF2 (otf2.c's locate) */

struct otf2_out {
	OTF2_Archive *ar;
	uint64_t *events;    /* by location: events written */
	uint8_t *located;    /* by thread: LOC_* */
	int template_t;      /* the first empty rank's thread, whose files the others copy; -1 */
	const ar_archive *a;
	char err[4600];
	uint32_t region_of[256]; /* by op code (below 256, flags cleared) + 1; 0: not yet defined */
	uint16_t *region_op;     /* by region: its op code (a phase's: ES_OP_MPI_PCONTROL) */
	const char **phase;      /* by region: a phase's name (the archive's), or NULL */
	uint32_t nregions, capregions;
	const char **files;      /* by I/O handle: its file's name (the archive's) */
	OTF2_CommRef *comm_ref;  /* by the archive's communicator number: OTF2's, dense (windows have none) */
	/* call sites: a SourceCodeLocation per (file, line), given as the
	 * attribute "callsite" of each call's Enter */
	struct { const char *file; int line; } *places;
	uint32_t nplaces, capplaces;
	struct base_tab place_ix; /* place_hash -> the first place of it */
	/* the thread being written's site's place + 1 (0: none), where
	 * place_thread holds that thread + 1: nothing cleared per thread */
	uint32_t place_of[ES_SITES_SLOTS], place_thread[ES_SITES_SLOTS];
	OTF2_AttributeList *attrs;
	uint32_t nfiles, capfiles;
	/* by op code, worked out once: what the names say */
	struct { bool known; int coll; } code[256];
	int nranks;
	/* messages as messages.c paired them: only ends whose other end is
	 * here are written, since OTF2's readers pair the k-th send on a
	 * channel with its k-th receive */
	struct ar_msgs msgs;
	uint64_t *alone_irecvs; /* the thread being written: starts of Irecvs whose receive is alone */
	size_t nalone;
	/* wait states, as metrics: each wait's end and pattern, by thread
	 * then time (waits[wfirst[t] .. wfirst[t + 1])); the patterns met */
	struct otf2_wait { uint64_t at, ns; uint32_t thread; uint8_t pattern; } *waits;
	size_t *wfirst;
	bool pattern_used[WS_NPATTERNS];
	uint8_t metric_of[WS_NPATTERNS]; /* a used pattern's metric: OTF2 numbers definitions densely */
};

/* otf2_defs.c: says what failed into o->err; -EIO */
int ar__otf2_fail(struct otf2_out *o, OTF2_ErrorCode rc, const char *what);
/* OTF2's collective operation for an op's name, or -1 */
int ar__otf2_coll_op(const char *name);
/* the role of the region an op's name makes */
OTF2_RegionRole ar__otf2_role_of(const char *name, unsigned code);
/* otf2_defs.c: every definition, once the events are written; 0 or as ar__otf2_fail */
int ar__otf2_defs(struct otf2_out *o, uint64_t t0, uint64_t t1);

#endif
