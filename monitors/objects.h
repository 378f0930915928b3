/* objects.h - a job's objects mirrored rank by rank (steering/'s mirror on each rank's trace space, here or through its tuple servers): listed, set, called, and rules run here or handed to the application. */
#ifndef ES_MON_OBJECTS_H
#define ES_MON_OBJECTS_H

#include <stdio.h>

#include "monitors/monitors.h"
#include "steering/steering.h"

/* The ranks of a job that expose objects, in rank order (a PATHS
 * program's processes, rank -1, by their trace spaces' names) */
struct mon_objs_rank {
	int rank;
	char name[PS_NAME_MAX + 8]; /* "rank 3", or the space's name */
	char where[PS_NAME_MAX + 80];
	ps_server *ro, *rw; /* rw: to write asks (a control element, allowed read-only remotely) */
	st_mirror *m;
};
struct mon_objs {
	int n;
	struct mon_objs_rank *r;
	int ranks; /* the job's MPI ranks, with objects or not */
	int ended; /* ... of which have ended or died */
	struct ps_remote_attr ra;
};

/* Every MPI rank of the scope with objects; 0, or a negative code with why in err. */
int mon_objs_open(const es_scope *s, const struct ps_remote_attr *ra, struct mon_objs *o, char *err, size_t len);
void mon_objs_close(struct mon_objs *o);

/* Prints each rank's objects: fields with types, ranges, help and their
 * latest values, methods. */
void mon_objs_list(struct mon_objs *o, FILE *out);

/* What a record of obj.done says, without who asked ("sim.rate 1 -> 2.5",
 * "sim.w[0] 1 -> 2", "refused sim.rate = 7: ..."), another process's words
 * escaped (st_text) */
void mon_done_text(const struct st_done *d, char *out, size_t len);
/* Every change each rank applied (who asked, old and new values) and
 * every ask it refused, in its order, as far as its log still holds them;
 * then what the rules running did, counted. */
void mon_objs_changes(struct mon_objs *o, FILE *out);

/* "OBJ.FIELD=VALUE" or "OBJ.FIELD[I]=VALUE" into obj and one set; 0, or
 * ST_EBADASK with err saying what was expected. */
int mon_objs_parse_set(const char *text, char obj[ST_NAME_MAX + 1], struct st_set *set, char *err, size_t len);

/* The ask to every rank with its object (only rank `only` when >= 0):
 * checked against every rank's schema before any is written, then
 * written, then each rank's answers waited for up to wait seconds.
 * Says on out what each rank did, and "esctl: WHAT: applied by N of M
 * ranks".  0 when every rank applied it, 1 when
 * one refused it or did not answer, 2 when it was refused before being
 * written (why in err). */
int mon_objs_ask(struct mon_objs *o, int only, struct st_ask *ask, const char *what, double wait, FILE *out, char *err,
		 size_t len);

/* A rule run here: at each publication of its object on every rank (or
 * `only`), evaluated on what was published, its action asked of that
 * rank, one ask in flight per rank; until a signal, `seconds` (0:
 * none) or the job's end.  Says on out each action and its answer.  0, or 2 when it does
 * not compile against a rank's object (why in err). */
int mon_objs_rule(struct mon_objs *o, const char *job, int only, const char *text, double seconds, FILE *out,
		  char *err, size_t len);
/* The rules running in the job's ranks (in the application: each with
 * who began it and what its actions came to, counted) and in monitors of
 * it on this host (esctl rule: theirs, and what they asked); said on out. */
void mon_objs_rules(struct mon_objs *o, const char *job, FILE *out);
/* ... of those, the monitors' only: how many were said */
int mon_rules_running(const char *job, FILE *out);

#endif
