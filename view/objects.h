/* objects.h - the job's objects in esview (objects.c): mirrored by the watch loop with each field's recent values, asked of by the page's POSTs. */
#ifndef ES_MONITORS_VIEW_OBJECTS_H
#define ES_MONITORS_VIEW_OBJECTS_H

#include <pthread.h>
#include <stdio.h>

#include "monitors/objects.h"

enum { VO_SERIES = 256, VO_HISTORY = 120 };

/* A numeric field's first value at its object's latest publications */
struct vo_series {
	int rank, obj, member; /* indices into the mirrors */
	uint64_t seq;          /* the publication last added */
	int n, at;             /* values held, the next place in the ring */
	double v[VO_HISTORY];
};

/* Shared by the watch loop (vo_pull, vo_json) and the page's requests
 * (vo_ask): everything under lock. */
struct vo_objects {
	pthread_mutex_t lock;
	struct mon_objs o;
	bool open;
	double next_open, next_pull;
	struct ps_remote_attr ra;
	struct vo_series s[VO_SERIES];
	int ns;
};

/* The objects as they are now: the job's spaces opened (again every 2 s
 * while none has objects), each object's latest publication read. */
void vo_pull(struct vo_objects *v, const es_scope *s);
/* ,"objects":[...],"changes":[...] for the page's data */
void vo_json(struct vo_objects *v, FILE *f);
/* An ask from the page to the space named where (as the page shows it):
 * 0, or an ST_E* or PastSet code with err saying why (nothing written). */
int vo_ask(struct vo_objects *v, const char *where, struct st_ask *k, char *err, size_t len);
void vo_close(struct vo_objects *v);

#endif
