/* core.c - the state every part of libescollect shares (es_g, the process's; es_t, each thread's), each thread's trace element and boards, and the rank's boards: what the wrappers and every other file here use, calling none of them. */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/mpi/record.h"

/*
 * The core of libescollect.  Data flows one way: escollect.c sets the
 * process up at MPI_Init and calls each part's set-up and finalizer
 * (comms, requests, sites, phases, io, clocks, control, ending); the parts
 * and the generated wrappers use this file's state and boards, and no part
 * calls back into escollect.c.
 */

struct es_proc es_g = { .lock = PTHREAD_MUTEX_INITIALIZER, .keyval = MPI_KEYVAL_INVALID,
			.win_keyval = MPI_KEYVAL_INVALID };
__thread struct es_thread es_t __attribute__((tls_model("initial-exec")));

/* A board of the thread's (mpi.reqsK, mpi.chansK): its slots, or NULL. */
static void *board(const char *trace, const char *what, size_t slot, uint32_t slots, const char *layout)
{
	char name[PS_NAME_MAX + 1];
	struct ps_elem_attr a = { .tuple_size = slot, .threshold = slots, .mode = PS_BOARD };
	ps_elem *b;
	es_mpi_board_name(name, sizeof(name), trace, what);
	if (es_g.nelems >= (int)(sizeof(es_g.elems) / sizeof(es_g.elems[0])) ||
	    ps_elem_create(es_space_server(es_g.sp), name, &a, &b))
		return NULL;
	ps_elem_set_layout(b, layout);
	es_g.elems[es_g.nelems++] = b;
	return ps_board(b);
}

/* The collector with its invariants checked stops each thread the moment
 * it is seen, until the file ES_DEBUG_SEEN_UNTIL names exists (at most
 * 60 s): t_waitreq's monitor attaches then and must find what the order
 * of making (collectors.h) promises. */
static void seen_pause(void)
{
#ifdef ES_DEBUG
	const char *f = getenv("ES_DEBUG_SEEN_UNTIL");
	for (int i = 0; f && *f && i < 1200 && access(f, F_OK); i++)
		usleep(50000);
#endif
}

ps_elem *es_thread_elem(void)
{
	if (es_t.tried || !es_g.sp)
		return NULL;
	es_t.tried = true;
	pthread_mutex_lock(&es_g.lock);
	int k = es_g.nthreads;
	struct es_meta m;
	memset(&m, 0, sizeof(m));
	m.element = (uint32_t)es_g.rank;
	snprintf(m.trace, sizeof(m.trace), "mpi.thread%d", k);
	snprintf(m.thread, sizeof(m.thread), "rank%d.thread%d", es_g.rank, k);
	snprintf(m.where, sizeof(m.where), "MPI rank %d of %d", es_g.rank, es_g.size);
	int rc = PS_ENOSPC;
	if (es_g.sp && k < ES_MAX_THREADS &&
	    es_g.nelems + 4 <= (int)(sizeof(es_g.elems) / sizeof(es_g.elems[0]))) {
		/* The boards first: a monitor that sees the thread's trace element
		 * reads its boards then, and once (a Wait whose request board was
		 * made a moment after the thread appeared was, to heartbeat, a Wait
		 * on nothing: a deadlock went unnamed under load).  Without its
		 * boards a thread is still traced: its requests are then followed
		 * privately, its channels not counted. */
		void *reqs = board(m.trace, ES_REQS_ELEMENT, sizeof(struct es_req_rec), ES_REQS_SLOTS,
				   ES_REQS_LAYOUT);
		void *chans = board(m.trace, ES_CHANS_ELEMENT, sizeof(struct es_chan_rec), ES_CHANS_SLOTS,
				    ES_CHANS_LAYOUT);
		void *sites = board(m.trace, ES_SITES_ELEMENT, sizeof(struct es_site_rec), ES_SITES_SLOTS,
				    ES_SITES_LAYOUT);
		if ((rc = es_space_add(es_g.sp, &m, es_g.threshold, false, &es_t.id, &es_t.elem)) == 0) {
			seen_pause();
			es_g.elems[es_g.nelems++] = es_t.elem;
			es_t.notes = ps_elem_notes(es_t.elem);
			if (ps_writer_init(es_t.elem, sizeof(struct es_trace), &es_t.w))
				es_t.w.head = NULL;
			es_t.k = k;
			es_t.reqs = reqs;
			es_t.chans = chans;
			es_t.site_board = sites;
			atomic_store_explicit(&es_g.boards[k], es_t.reqs, memory_order_release);
			__atomic_store_n(&es_g.nthreads, k + 1, __ATOMIC_RELEASE);
		}
	}
	static bool said; /* once per process: a full /dev/shm fails every later thread too */
	bool say = rc && !said;
	if (say)
		said = true;
	pthread_mutex_unlock(&es_g.lock);
	if (say)
		fprintf(stderr, "escollect: rank %d: thread %d's calls are not recorded (nor those of any "
			"later thread that does not fit): %s\n", es_g.rank, k, ps_strerror(rc));
	return es_t.elem;
}

void es__write_slow(const struct es_trace *t)
{
	ps_write(es_t.elem, t, 0, NULL);
}


/* A board of the rank's (mpi.modules, mpi.clock, mpi.files, mpi.regions): its slots, or NULL. */
void *es_rank_board(ps_server *srv, const char *name, size_t rec, uint32_t slots, const char *layout, ps_elem **out)
{
	struct ps_elem_attr a = { .tuple_size = rec, .threshold = slots, .mode = PS_BOARD };
	if (ps_elem_create(srv, name, &a, out)) {
		*out = NULL;
		return NULL;
	}
	ps_elem_set_layout(*out, layout); /* for readers of the other byte order */
	return ps_board(*out);
}
