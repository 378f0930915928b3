/* record.h - the recorder's loop, for the programs that record a live job (esrecord, esprofile). */
#ifndef ES_ARCHIVE_RECORD_H
#define ES_ARCHIVE_RECORD_H

#include <stdbool.h>

#include "archive/archive.h"

/* Attaches to JOB (waiting up to wait seconds), drains it into the archive
 * DIR until it ends or a signal, and says on stderr, as PROG, what it wrote
 * and lost (unless quiet and nothing was lost).  0, or an exit status. */
int ar_record_job(const char *prog, const char *job, const char *dir, double period, double wait,
		  bool quiet);

#endif
