/* space.c - trace spaces: where a process's trace elements live, with the clock calibration and es.meta. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors.h"

#define ES_SPACE_MAGIC 0x45535031u /* "ESP1" */
#define ES_META_MAX 4095u /* not a power of two: a ring of one has a slot to spare */

/* What the segment's user area holds.  Version 2 added whose it is. */
struct space_hdr {
	uint32_t magic, version;
	struct es_clock clock;
	int32_t rank, size; /* an MPI rank's space: its rank and the job's size; else -1, 0 */
};
_Static_assert(sizeof(struct space_hdr) <= PS_USER_AREA, "fits the segment's user area");

struct es_space {
	ps_server *srv;
	ps_elem *meta;
	struct es_clock clock;
	int rank, size;       /* whose it is (es_space_rank) */
	int clock_check;      /* es_clock_check's answer when opened here */
	int64_t clock_drift;
	bool writable;
	pthread_mutex_t lock; /* collectors are added from any thread */
	int refs;             /* registry references */
	struct es_space *next;
	char segment[ES_WHERE_MAX];
};

static int finish(es_space *sp, bool create)
{
	int rc;
	if (create) {
		struct ps_elem_attr a = { .tuple_size = sizeof(struct es_meta),
					  .threshold = ES_META_MAX, .flags = PS_MULTI_WRITER };
		rc = ps_elem_create(sp->srv, "es.meta", &a, &sp->meta);
	} else {
		rc = ps_elem_open(sp->srv, "es.meta", sizeof(struct es_meta), &sp->meta);
	}
	if (rc)
		return rc;
	pthread_mutex_init(&sp->lock, NULL);
	return 0;
}

int es_space_create(const char *segment, size_t data_bytes, es_space **out)
{
	return es_space_create_rank(segment, data_bytes, -1, 0, out);
}

int es_space_create_rank(const char *segment, size_t data_bytes, int rank, int size, es_space **out)
{
	if (!out || rank < -1 || (rank >= 0 && rank >= size))
		return PS_EINVAL;
	es_space *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return PS_ENOMEM;
	int rc;
	if (segment && *segment) {
		struct ps_shm_attr a = { .size = data_bytes ? data_bytes : 16u << 20,
					 .max_elems = ES_META_MAX + 1,
					 .flags = PS_SHM_REPLACE_DEAD };
		rc = ps_server_create_shm(segment, &a, &sp->srv);
	} else {
		rc = ps_server_create_local(&sp->srv);
	}
	if (rc) {
		free(sp);
		return rc;
	}
	snprintf(sp->segment, sizeof(sp->segment), "%s", segment ? segment : "");
	sp->clock = *es_clock_init();
	sp->writable = true;
	void *area;
	ps_server_user_area(sp->srv, &area);
	sp->rank = rank;
	sp->size = size;
	struct space_hdr h = { .magic = ES_SPACE_MAGIC, .version = 2, .clock = sp->clock,
			       .rank = rank, .size = size };
	memcpy(area, &h, sizeof(h));
	if ((rc = finish(sp, true))) {
		ps_server_destroy(sp->srv);
		if (segment && *segment)
			ps_shm_unlink(segment);
		free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}

int es_space_open(const char *segment, es_space **out)
{
	return es_space_open_at(segment, NULL, out);
}

int es_space_open_at(const char *where, const struct ps_remote_attr *ra, es_space **out)
{
	if (!where || !*where || !out)
		return PS_EINVAL;
	es_space *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return PS_ENOMEM;
	int rc = ps_server_open_at(where, PS_RDONLY, ra, &sp->srv);
	if (rc) {
		free(sp);
		return rc;
	}
	void *area;
	struct space_hdr h;
	ps_server_user_area(sp->srv, &area);
	memcpy(&h, area, sizeof(h));
	if (h.magic != ES_SPACE_MAGIC || h.version < 1 || h.version > 2) {
		rc = PS_EBADSEG; /* a PastSet segment, but not a trace space */
	} else {
		sp->clock = h.clock;
		sp->rank = h.version >= 2 ? h.rank : -1;
		sp->size = h.version >= 2 ? h.size : 0;
		/* A monitor attaching checks the writer's TSC calibration against
		 * this host's CLOCK_MONOTONIC (the same TSC, on the same host), and
		 * converts with the rate the TSC really kept if it drifted.  Local
		 * means what ps_server_open_at takes for local: no HOST:PORT. */
		if (!strchr(where, ':'))
			sp->clock_check = es_clock_check(&sp->clock, &sp->clock_drift);
		/* another host's stamps, onto this host's clock */
		es_clock_shift(&sp->clock, -ps_server_clock_offset(sp->srv));
		snprintf(sp->segment, sizeof(sp->segment), "%s", where);
		rc = finish(sp, false);
		if (!rc)
			ps_elem_set_layout(sp->meta, ES_META_LAYOUT);
	}
	if (rc) {
		ps_server_destroy(sp->srv);
		free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}

void es_space_destroy(es_space *sp)
{
	if (!sp)
		return;
	ps_elem_close(sp->meta);
	ps_server_destroy(sp->srv);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}

ps_server *es_space_server(es_space *sp)
{
	return sp->srv;
}

int es_space_rank(const es_space *sp, int *size)
{
	if (size)
		*size = sp->rank >= 0 ? sp->size : 0;
	return sp->rank;
}

const struct es_clock *es_space_clock(const es_space *sp)
{
	return &sp->clock;
}

int es_space_clock_checked(const es_space *sp, int64_t *drift_ns)
{
	if (drift_ns)
		*drift_ns = sp->clock_drift;
	return sp->clock_check;
}

int es_space_add(es_space *sp, const struct es_meta *meta, uint32_t threshold,
		 bool multi_writer, uint16_t *id, ps_elem **out)
{
	if (!sp || !meta || !id || !out)
		return PS_EINVAL;
	if (!sp->writable)
		return PS_EROFS;
	pthread_mutex_lock(&sp->lock);
	struct ps_stats st;
	ps_elem_stats(sp->meta, &st);
	int rc = PS_ENOSPC;
	if (st.written < ES_META_MAX) {
		struct es_meta m = *meta;
		m.collector = (uint16_t)st.written;
		if (!m.trace[0])
			snprintf(m.trace, sizeof(m.trace), "c%u", m.collector);
		struct ps_elem_attr a = { .tuple_size = sizeof(struct es_trace),
					  .threshold = threshold, .mode = PS_DISCARD,
					  .flags = multi_writer ? PS_MULTI_WRITER : 0 };
		rc = ps_elem_create(sp->srv, m.trace, &a, out);
		if (!rc && (rc = ps_write(sp->meta, &m, 0, NULL))) {
			ps_elem_close(*out);
			*out = NULL;
		}
		if (!rc)
			*id = m.collector;
	}
	pthread_mutex_unlock(&sp->lock);
	return rc;
}

int es_space_collectors(es_space *sp)
{
	struct ps_stats st;
	int rc = ps_elem_stats(sp->meta, &st);
	return rc ? rc : (int)st.written;
}

int es_space_meta(es_space *sp, int i, struct es_meta *out)
{
	if (!sp || !out || i < 0)
		return PS_EINVAL;
	return ps_read(sp->meta, (uint64_t)i, out, 0, NULL);
}

/* --- the process's spaces, by segment name ------------------------------------ */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static es_space *reg;

int es_space_get(const char *segment, es_space **out)
{
	if (!out)
		return PS_EINVAL;
	if (!segment)
		segment = "";
	int rc = 0;
	pthread_mutex_lock(&reg_lock);
	es_space *sp = reg;
	while (sp && strcmp(sp->segment, segment))
		sp = sp->next;
	if (!sp && !(rc = es_space_create(segment, 0, &sp))) {
		sp->next = reg;
		reg = sp;
	}
	if (sp)
		sp->refs++;
	pthread_mutex_unlock(&reg_lock);
	*out = sp;
	return rc;
}

void es_space_put(es_space *sp)
{
	if (!sp)
		return;
	pthread_mutex_lock(&reg_lock);
	if (--sp->refs == 0) {
		for (es_space **p = &reg; *p; p = &(*p)->next)
			if (*p == sp) {
				*p = sp->next;
				break;
			}
		es_space_destroy(sp);
	}
	pthread_mutex_unlock(&reg_lock);
}
