/* record.h - the recorder's loop, for the programs that record a live job (esrecord, esprofile). */
#ifndef ES_ARCHIVE_RECORD_H
#define ES_ARCHIVE_RECORD_H

#include <stdbool.h>

#include "archive/archive.h"

struct ar_record_opts {
	const char *dir; /* the archive */
	double period;   /* longest time between pulls, s (at most 0.5 is used) */
	double wait;     /* for the job to appear, s */
	bool quiet;      /* say nothing at the end unless something was lost */
	bool remains;    /* one pull of what the elements hold, and the calls
			    every thread is inside, then finish: a dead or hung job's */
};
/* Attaches to JOB (waiting up to o->wait seconds), drains it into the
 * archive o->dir until it ends or a signal, checkpointing it every quarter
 * second, and says on stderr, as PROG, what it wrote and lost (unless
 * quiet and nothing was lost), and which ranks died.  0, or an exit status. */
int ar_record_job(const char *prog, const char *job, const struct ar_record_opts *o);

#endif
