/* control.c - live control: a rank applies esctl's orders (what to record, pause, resume), noticed with one load on the path every MPI call takes. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

/*
 * State, and who may change it:
 *  - es.ctl is written by esctl (other processes; PS_MULTI_WRITER);
 *    es_route.ctl points at its count of tuples written, or at ctl_seen
 *    while there is no es.ctl (before MPI_Init, after MPI_Finalize), so
 *    that the hot path's comparison is always false then.
 *  - Under lock only: ctl_seen (stored last, after collect[]), collect[],
 *    cur, applied_at and es.ctl.now.  A thread that finds the counts
 *    differ takes the lock and looks again; another thread may record a
 *    call or two by the old collect[] meanwhile, as it would had the order
 *    come a moment later.
 *  - cur is the order in force (its gen the last applied) with the count
 *    of orders refused; es.ctl.now always says cur.  An order is applied
 *    only if es_ctl_check finds it one, numbered after cur.gen and no
 *    further than the orders written between cur and it: whoever may
 *    write es.ctl may steer the rank, never wrap its numbers or feed it
 *    bytes.  applied_at <= looked_at <= the count written.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ps_elem *ctl, *now;
static struct es_ctl_rec cur;
static uint64_t applied_at; /* es.ctl's orders up to and with cur (its index + 1) */
static uint64_t looked_at;  /* ... and up to and with the last looked at */

/* What the rank records now, for esctl status. */
static void say_now(const struct es_ctl_rec *c)
{
	if (now)
		ps_write(now, c, 0, NULL);
}

void es_control_setup(ps_server *srv, const unsigned char collect[256], const char *list)
{
	struct ps_elem_attr a = { .tuple_size = sizeof(struct es_ctl_rec), .threshold = 1,
				  .mode = PS_DISCARD, .flags = PS_MULTI_WRITER | PS_CONTROL };
	struct ps_elem_attr b = { .tuple_size = sizeof(struct es_ctl_rec), .threshold = 1,
				  .mode = PS_DISCARD, .flags = PS_MULTI_WRITER };
	if (ps_elem_create(srv, ES_CTL_ELEMENT, &a, &ctl)) {
		ctl = NULL;
		return; /* not steerable; recorded as MPI_Init decided */
	}
	ps_elem_set_layout(ctl, ES_CTL_LAYOUT);
	if (!ps_elem_create(srv, ES_CTL_NOW_ELEMENT, &b, &now))
		ps_elem_set_layout(now, ES_CTL_LAYOUT);
	else
		now = NULL;
	pthread_mutex_lock(&lock);
	cur = (struct es_ctl_rec){ .gen = 0 };
	memcpy(cur.collect, collect, sizeof(cur.collect));
	snprintf(cur.list, sizeof(cur.list), "%s", list);
	say_now(&cur);
	const uint64_t *w = ps_elem_watch_word(ctl);
	applied_at = looked_at = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	__atomic_store_n(&es_route.ctl_seen, applied_at, __ATOMIC_RELAXED);
	__atomic_store_n(&es_route.ctl, w, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

void es__ctl_apply(void)
{
	pthread_mutex_lock(&lock);
	const uint64_t *w = es_route.ctl;
	uint64_t n = __atomic_load_n(w, __ATOMIC_ACQUIRE), idx;
	struct es_ctl_rec c;
	/* The order read may be newer than the count read before it: what it
	 * is judged by is its own index (the orders written up to it), and an
	 * order looked at once is not looked at again. */
	if (ctl && n != es_route.ctl_seen && ps_read_latest(ctl, &c, &idx) == 0 && idx >= looked_at) {
		looked_at = idx + 1;
		if (!es_ctl_check(&c, cur.gen, idx + 1 - applied_at)) {
			for (int op = 0; op < 256; op++)
				es_route.collect[op] = c.paused ? 0 : c.collect[op];
			c.refused = cur.refused;
			cur = c;
			applied_at = idx + 1;
		} else {
			cur.refused++;
		}
		say_now(&cur);
	}
	__atomic_store_n(&es_route.ctl_seen, n > looked_at ? n : looked_at, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

void es_control_finalize(void)
{
	pthread_mutex_lock(&lock);
	/* no pointer into the segment outlives it */
	__atomic_store_n(&es_route.ctl, &es_route.ctl_seen, __ATOMIC_RELEASE);
	ps_elem_close(ctl);
	ps_elem_close(now);
	ctl = now = NULL;
	pthread_mutex_unlock(&lock);
}
