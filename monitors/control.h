/* control.h - live control of a running MPI job: what each rank records (its es.ctl and es.ctl.now), an order written to every rank and waited for, what each applied. */
#ifndef ES_MONITORS_CONTROL_H
#define ES_MONITORS_CONTROL_H

#include <stdio.h>

#include "monitors/monitors.h"

/*
 * A rank's control is two elements of its trace space (trace.h): es.ctl,
 * which whoever may steer the job writes, and es.ctl.now, the rank's own
 * word of what it applied, which is only read.  An order builds on the
 * rank's word, never on an order written and not applied yet (another
 * esctl's, or anyone's who may steer the job, which the rank may refuse).
 */
typedef struct mon_ctl mon_ctl;

/* The control of every MPI rank of job's scope s (one per trace space, in
 * rank order), through ra when the job is served.  0, or 1 with why said on
 * stderr (no rank, one that ended, a job recorded without live control). */
int mon_ctl_open(const es_scope *s, const char *job, const struct ps_remote_attr *ra, mon_ctl **out);
void mon_ctl_close(mon_ctl *c);
/* cmd "collect" (list: the calls, as a pathmap's mpi: collect: takes them),
 * "pause" or "resume", written to every rank, then waited for up to wait
 * seconds until each applied or refused it; what came of it said on out.
 * The exit status: 0 all applied, 1 not all (or a rank's word unreadable),
 * 2 a list that is none (said why). */
int mon_ctl_order(mon_ctl *c, const char *cmd, const char *list, double wait, FILE *out);
/* What each rank records now, and an order it has not applied (why). */
void mon_ctl_status(const mon_ctl *c, FILE *out);

#endif
