/* mpi_check.c - reads the trace spaces mpi_calls left behind and checks every recorded call. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"

#define ANY 0xfffffffeu /* a field the check does not look at */
#define NONE 0xffffffffu

/* some: this op may come as one tuple or two (1), whose args add up to
 * arg (2) */
struct want { unsigned op; uint32_t element, size, arg; int some; };

static int nw;
static struct want w[64];

static void add(unsigned op, uint32_t element, uint32_t size, uint32_t arg)
{
	w[nw++] = (struct want){ op, element, size, arg, 0 };
}

/* What rank r of n must have recorded in its main thread, in order. */
static void expected(int r, int n, int collectives_only)
{
	uint32_t left = (uint32_t)((r - 1 + n) % n), right = (uint32_t)((r + 1) % n);
	nw = 0;
	/* MPI_Comm_dup is a collective on WORLD: with it recorded, the
	 * collectives after it are numbered from 1 */
	uint32_t c0 = collectives_only ? 0 : 1;
	if (!collectives_only) {
		add(ES_OP_MPI_INIT, (uint32_t)r, 0, ANY);
		add(ES_OP_MPI_COMM_DUP, NONE, 0, 0);
	}
	add(ES_OP_MPI_BARRIER, NONE, 0, c0);
	if (!collectives_only) {
		if (r == 0)
			add(ES_OP_MPI_SEND, 1, 400, 7);
		if (r == 1)
			add(ES_OP_MPI_RECV, 0, 400, 7);
		/* each request's completion has its own tuple, checked apart
		 * (done_ok); here the waits and tests that completed them:
		 * a wait's element counts the requests it was given that nobody
		 * follows, its arg how many it was given; a test's arg counts
		 * the polls of its streak */
		add(ES_OP_MPI_IRECV, left, 400, 9);
		add(ES_OP_MPI_ISEND, right, 400, 9);
		add(ES_OP_MPI_WAIT, 0, 0, 1);
		add(ES_OP_MPI_WAIT, 0, 0, 1);
		add(ES_OP_MPI_IRECV, left, 400, 10);
		add(ES_OP_MPI_ISEND, right, 400, 10);
		add(ES_OP_MPI_WAITALL, 0, 0, 2);
		add(ES_OP_MPI_IRECV, left, 400, 11);
		add(ES_OP_MPI_ISEND, right, 400, 11);
		add(ES_OP_MPI_WAITANY, 0, 0, 2);
		add(ES_OP_MPI_WAITANY, 0, 0, 2);
		add(ES_OP_MPI_IRECV, left, 400, 12);
		add(ES_OP_MPI_ISEND, right, 400, 12);
		add(ES_OP_MPI_TESTALL, NONE, 0, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 16);
		add(ES_OP_MPI_ISEND, right, 400, 16);
		add(ES_OP_MPI_TEST, NONE, 0, ANY);
		add(ES_OP_MPI_TEST, NONE, 0, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 17);
		add(ES_OP_MPI_ISEND, right, 400, 17);
		add(ES_OP_MPI_TESTANY, NONE, 0, ANY);
		add(ES_OP_MPI_TESTANY, NONE, 0, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 18);
		add(ES_OP_MPI_ISEND, right, 400, 18);
		add(ES_OP_MPI_TESTSOME, NONE, 0, ANY); /* one call completing both, or two */
		w[nw - 1].some = 1;
		add(ES_OP_MPI_IRECV, left, 400, 19);
		add(ES_OP_MPI_ISEND, right, 400, 19);
		add(ES_OP_MPI_WAITSOME, 0, 0, 2); /* arg: how many it completed, 2 in all */
		w[nw - 1].some = 2;
		add(ES_OP_MPI_IRECV, left, 8, 20);
		add(ES_OP_MPI_IRECV, right, 8, 22);
		add(ES_OP_MPI_ISEND, right, 8, 20);
		add(ES_OP_MPI_ISEND, left, 8, 22);
		add(ES_OP_MPI_WAITALL, 0, 0, 4);
		/* the send, then the receive's completion */
		add(ES_OP_MPI_SENDRECV, right, 8, 13);
		add(ES_OP_MPI_SENDRECV | ES_OP_DONE, left, 8, 13);
		if (r == 0) {
			add(ES_OP_MPI_SEND, 1, 12, 14);
			add(ES_OP_MPI_SEND, 1, 12, 15);
		}
		if (r == 1) {
			add(ES_OP_MPI_PROBE, 0, 12, 14);
			add(ES_OP_MPI_RECV, 0, 12, 14);
			add(ES_OP_MPI_IPROBE, 0, 12, ANY); /* only the probe that found it */
			add(ES_OP_MPI_RECV, 0, 12, 15);
		}
	}
	uint32_t tri = (uint32_t)(n * (n + 1) / 2);
	add(ES_OP_MPI_BCAST, 0, 40, c0 + 1);
	add(ES_OP_MPI_REDUCE, (uint32_t)(n - 1), 32, c0 + 2);
	add(ES_OP_MPI_ALLREDUCE, NONE, 16, c0 + 3);
	add(ES_OP_MPI_GATHER, 0, 12, c0 + 4);
	add(ES_OP_MPI_GATHERV, 0, 4 * (uint32_t)(r + 1), c0 + 5);
	add(ES_OP_MPI_SCATTER, 0, r == 0 ? 8 * (uint32_t)n : 0, c0 + 6);
	add(ES_OP_MPI_SCATTERV, 0, r == 0 ? 4 * tri : 0, c0 + 7);
	add(ES_OP_MPI_ALLGATHER, NONE, 4, c0 + 8);
	add(ES_OP_MPI_ALLGATHERV, NONE, 4 * (uint32_t)(r + 1), c0 + 9);
	add(ES_OP_MPI_ALLTOALL, NONE, 4 * (uint32_t)n, c0 + 10);
	add(ES_OP_MPI_ALLTOALLV, NONE, 4 * (uint32_t)n, c0 + 11);
	add(ES_OP_MPI_REDUCE_SCATTER, NONE, 4 * (uint32_t)n, c0 + 12);
	add(ES_OP_MPI_ALLREDUCE, NONE, 16, c0 + 13);  /* in place */
	add(ES_OP_MPI_ALLGATHER, NONE, 4, c0 + 14);   /* in place: the receive side's share */
	if (!collectives_only) {
		add(ES_OP_MPI_COMM_FREE, NONE, 0, 0); /* the second thread's communicator */
		add(ES_OP_MPI_FINALIZE, (uint32_t)r, 0, ANY);
	}
}

static int bad;
#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); bad++; } while (0)

/* The kind of call op is (0: not one libescollect knows). */
static unsigned kind_of(unsigned op)
{
	const struct es_op_info *i = es_op_info(es_op_code(op));
	return i ? (unsigned)i->kind : 0;
}

static int field_ok(uint32_t got, uint32_t want)
{
	return want == ANY || got == want;
}

/* A thread's channels, as its tuples number their messages (collectors.h). */
static struct chan {
	uint32_t recv, peer, tag;
	uint16_t comm;
	bool marked, seen;
	uint64_t base, last;
} chans[512];
static int nchans;

/* Each channel's numbers rise, each read whole or from a mark before it. */
static void numbers_ok(const char *trace, const struct es_trace *t, int i)
{
	bool mark = es_is_mark(t[i].op);
	uint32_t recv = mark ? (t[i].op & ES_OP_RECV) != 0 : es_message(t[i].op) < 0;
	int k = 0;
	while (k < nchans && !(chans[k].recv == recv && chans[k].peer == t[i].element && chans[k].tag == t[i].arg &&
			       chans[k].comm == t[i].comm))
		k++;
	if (k == nchans && nchans < 512)
		chans[nchans++] = (struct chan){ recv, t[i].element, t[i].arg, t[i].comm, false, false, 0, 0 };
	if (k == 512)
		return;
	struct chan *c = &chans[k];
	if (mark) {
		if (es_mark_count(&t[i]) < ES_NUM_WHOLE || (c->seen && es_mark_count(&t[i]) <= c->last))
			FAIL("%s: tuple %d marks count %llu", trace, i, (unsigned long long)es_mark_count(&t[i]));
		c->marked = true;
		c->base = es_mark_count(&t[i]);
		return;
	}
	uint64_t num;
	if (!es_num_of((uint16_t)t[i].seq, c->marked, c->base, &num))
		FAIL("%s: tuple %d numbered from a mark not written", trace, i);
	else if (c->seen && num <= c->last)
		FAIL("%s: tuple %d's message numbered %llu after %llu on its channel", trace, i, (unsigned long long)num,
		     (unsigned long long)c->last);
	c->seen = true;
	c->last = num;
}

/* All tuples of one trace element, checked for order and accounting.  A
 * completion (| ES_OP_DONE) starts when its request did: only its end
 * keeps order. */
static int read_all(es_space *sp, const char *trace, struct es_trace *t, int max)
{
	ps_elem *e;
	struct ps_stats st;
	int rc = ps_elem_open(es_space_server(sp), trace, sizeof(struct es_trace), &e);
	if (rc) {
		FAIL("%s: %s", trace, ps_strerror(rc));
		return 0;
	}
	ps_elem_stats(e, &st);
	if (st.discarded)
		FAIL("%s: %llu tuples discarded", trace, (unsigned long long)st.discarded);
	int n = ps_read_range(e, 0, (size_t)max, t, NULL);
	ps_elem_close(e);
	uint64_t last_end = 0; /* of the last call, completions aside */
	uint16_t calls = 0;
	nchans = 0;
	for (int i = 0; i < n; i++) {
		if (es_is_group_mark(t[i].op))
			continue; /* a window epoch's member: no call, no channel */
		if (es_is_mark(t[i].op) || (t[i].op & ES_OP_NUMBERED)) {
			numbers_ok(trace, t, i);
			if (es_is_mark(t[i].op))
				continue;
		} else if ((uint16_t)t[i].seq != calls++) {
			FAIL("%s: tuple %d has seq %u", trace, i, t[i].seq);
		}
		if (t[i].start > t[i].end)
			FAIL("%s: tuple %d ends before it starts", trace, i);
		if (last_end > (t[i].op & ES_OP_DONE ? t[i].end : t[i].start))
			FAIL("%s: tuple %d starts before the call before it ended", trace, i);
		if (!(t[i].op & ES_OP_DONE))
			last_end = t[i].end;
		else if (i + 1 < n && t[i].end > t[i + 1].end)
			FAIL("%s: completion %d ends after the call after it", trace, i);
		if (t[i].op & ES_OP_FAILED)
			FAIL("%s: tuple %d records a failed %s", trace, i, es_op_name(t[i].op));
	}
	/* the calls, as the checks below know them: numbers read, marks gone */
	int k = 0;
	for (int i = 0; i < n; i++)
		if (!es_is_mark(t[i].op)) {
			t[k] = t[i];
			t[k++].op &= (uint16_t)~ES_OP_NUMBERED;
		}
	return k;
}

/* The communicators rank r recorded: every tuple's comm must name one. */
static int ncomms;
static struct es_comm_rec comms[64];

static void read_comms(es_space *sp, const char *seg)
{
	ps_elem *e;
	ncomms = 0;
	int rc = ps_elem_open(es_space_server(sp), ES_COMMS_ELEMENT, sizeof(struct es_comm_rec), &e);
	if (rc) {
		FAIL("%s: %s: %s", seg, ES_COMMS_ELEMENT, ps_strerror(rc));
		return;
	}
	int n = ps_read_range(e, 0, 64, comms, NULL);
	ps_elem_close(e);
	ncomms = n > 0 ? n : 0;
}

static const struct es_comm_rec *comm_named(uint16_t comm)
{
	for (int i = 0; i < ncomms; i++)
		if ((comms[i].serial & 0xffff) == comm && !(comms[i].flags & ES_COMMS_FREED))
			return &comms[i];
	return NULL;
}

/* Every tuple on a communicator names one of its rank's, of the right
 * size and with this rank where it is: WORLD for the main thread (but the
 * free), the communicator it duplicated for the second thread. */
static void comms_ok(const char *seg, const struct es_trace *t, int got, int r, int n, int thread)
{
	for (int i = 0; i < got; i++) {
		unsigned op = t[i].op & (unsigned)~ES_OP_FLAGS;
		if (op == ES_OP_MPI_INIT || op == ES_OP_MPI_FINALIZE)
			continue;
		unsigned kind = kind_of(t[i].op);
		if ((kind == ES_KIND_WAIT || kind == ES_KIND_POLL) && t[i].comm == ES_COMM_NONE)
			continue; /* a wait has no communicator: its requests do */
		const struct es_comm_rec *c = comm_named(t[i].comm);
		bool world = thread == 0 && op != ES_OP_MPI_COMM_FREE;
		if (!c)
			FAIL("%s: tuple %d (%s) names communicator %u, not among mpi.comms", seg, i,
			     es_op_name(t[i].op), t[i].comm);
		else if (c->size != (uint32_t)n || c->me != (uint32_t)r ||
			 world != (c->id == ES_COMM_WORLD_ID))
			FAIL("%s: tuple %d (%s) on communicator id %llx size %u me %u", seg, i,
			     es_op_name(t[i].op), (unsigned long long)c->id, c->size, c->me);
	}
}

/* Each request's completion follows the call that made it (the same op,
 * peer, bytes and tag, from its very start), once, and comes just before
 * the wait or test that completed it (or another completion; the tests
 * themselves may be left out, their completions never are), or just after
 * its own call, when MPI completed it there (Open MPI's shared completed
 * request: a send done within MPI_Isend).  Returns the tuples without them. */
static int done_ok(const char *seg, struct es_trace *t, int got, bool polls)
{
	bool used[128] = { 0 };
	struct es_trace kept_t[128];
	int kept = 0;
	for (int i = 0; i < got; i++) {
		unsigned base = t[i].op & (unsigned)~ES_OP_FLAGS;
		if (!(t[i].op & ES_OP_DONE) || base == ES_OP_MPI_SENDRECV) {
			kept_t[kept++] = t[i];
			continue;
		}
		int j = i - 1;
		while (j >= 0 && (used[j] || t[j].op != base || t[j].start != t[i].start))
			j--;
		if (j < 0)
			FAIL("%s: tuple %d (%s) completes no request made before it", seg, i,
			     es_op_name(t[i].op));
		else if (t[j].element != t[i].element || t[j].size != t[i].size || t[j].arg != t[i].arg)
			FAIL("%s: tuple %d (%s) peer %u bytes %u tag %u; its request's %u %u %u", seg, i,
			     es_op_name(t[i].op), t[i].element, t[i].size, t[i].arg, t[j].element,
			     t[j].size, t[j].arg);
		else
			used[j] = true;
		int k = i + 1;
		while (k < got && t[k].op & ES_OP_DONE)
			k++;
		unsigned kind = k < got ? kind_of(t[k].op) : 0;
		if (polls && kind != ES_KIND_WAIT && kind != ES_KIND_POLL && j != i - 1)
			FAIL("%s: tuple %d (%s) is followed by no wait or test", seg, i, es_op_name(t[i].op));
	}
	for (int j = 0; j < got; j++)
		if ((t[j].op == ES_OP_MPI_IRECV || t[j].op == ES_OP_MPI_ISEND) && !used[j])
			FAIL("%s: tuple %d (%s tag %u) never completed", seg, j, es_op_name(t[j].op), t[j].arg);
	memcpy(t, kept_t, sizeof(*t) * (size_t)kept);
	return kept;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mpi_check JOB NRANKS all|nopolls|collectives|single\n");
		return 2;
	}
	const char *job = argv[1];
	int n = atoi(argv[2]), coll = !strcmp(argv[3], "collectives");
	int nopolls = !strcmp(argv[3], "nopolls"); /* all but the polls: [all, -polls] */
	/* single: MPI_Init, one thread; the second thread's messages are
	 * counted while the job is traced, recorded or not, so it has its
	 * element under a collectives-only pathmap too */
	int threads = !strcmp(argv[3], "single") ? 1 : 2;
	uint64_t barrier_last_start = 0, barrier_first_end = UINT64_MAX;
	for (int r = 0; r < n; r++) {
		char seg[64];
		snprintf(seg, sizeof(seg), "%s.r%d", job, r);
		es_space *sp;
		int rc = es_space_open(seg, &sp);
		if (rc) {
			FAIL("%s: %s", seg, ps_strerror(rc));
			continue;
		}
		read_comms(sp, seg);
		int nc = es_space_collectors(sp);
		if (nc != threads)
			FAIL("%s: %d collectors, expected %d", seg, nc, threads);
		for (int c = 0; c < nc; c++) {
			struct es_meta m;
			struct es_trace t[128];
			es_space_meta(sp, c, &m);
			int got = read_all(sp, m.trace, t, 128);
			char want_thread[64];
			snprintf(want_thread, sizeof(want_thread), "rank%d.thread%d", r, c);
			if (strcmp(m.thread, want_thread))
				FAIL("%s: collector %d is thread '%s'", seg, c, m.thread);
			comms_ok(seg, t, got, r, n, c);
			if (c == 1 && coll) { /* counted its messages, recorded none */
				if (got)
					FAIL("%s: second thread recorded %d tuples under a collectives-only pathmap", seg, got);
				continue;
			} else if (c == 1) { /* the second thread: one sendrecv on its own communicator */
				uint32_t right = (uint32_t)((r + 1) % n), left = (uint32_t)((r - 1 + n) % n);
				if (got != 2 || t[0].op != ES_OP_MPI_SENDRECV || t[0].element != right ||
				    t[0].size != 8 || t[0].arg != 21 ||
				    t[1].op != (ES_OP_MPI_SENDRECV | ES_OP_DONE) || t[1].element != left ||
				    t[1].size != 8 || t[1].arg != 21 || t[1].end != t[0].end)
					FAIL("%s: second thread recorded %d tuples, first %s", seg, got,
					     got ? es_op_name(t[0].op) : "-");
				continue;
			}
			got = done_ok(seg, t, got, !nopolls);
			expected(r, n, coll);
			for (int j = 0, o = nw; nopolls && j < o; j++) {
				if (j == 0)
					nw = 0;
				if (kind_of(w[j].op) != ES_KIND_POLL)
					w[nw++] = w[j];
			}
			int i = 0, k = 0;
			for (; i < got && k < nw; i++, k++) {
				uint32_t arg = t[i].arg;
				if (w[k].some && t[i].op == w[k].op && i + 1 < got && t[i + 1].op == w[k].op)
					arg += t[++i].arg; /* both completed by one call, or by two */
				if (w[k].some == 1)
					arg = w[k].arg;
				if (t[i].op != w[k].op || !field_ok(t[i].element, w[k].element) ||
				    !field_ok(t[i].size, w[k].size) || !field_ok(arg, w[k].arg))
					FAIL("%s: tuple %d is %s element %u size %u arg %u; expected %s "
					     "element %u size %u arg %u", seg, i, es_op_name(t[i].op),
					     t[i].element, t[i].size, t[i].arg, es_op_name(w[k].op),
					     w[k].element, w[k].size, w[k].arg);
				if (t[i].op == ES_OP_MPI_INIT &&
				    es_clock_ns(es_space_clock(sp), t[i].end) -
				    es_clock_ns(es_space_clock(sp), t[i].start) > 60000000000ull)
					FAIL("%s: MPI_Init took over a minute: stamps from two clocks?", seg);
				if (t[i].op == ES_OP_MPI_BARRIER) {
					const struct es_clock *ck = es_space_clock(sp);
					uint64_t s = es_clock_ns(ck, t[i].start), e = es_clock_ns(ck, t[i].end);
					barrier_last_start = s > barrier_last_start ? s : barrier_last_start;
					barrier_first_end = e < barrier_first_end ? e : barrier_first_end;
				}
			}
			if (i != got || k != nw)
				FAIL("%s: %d tuples, expected %d calls (matched %d tuples, %d calls)", seg,
				     got, nw, i, k);
			printf("%s: %d tuples from %s checked\n", seg, got, m.thread);
		}
		es_space_destroy(sp);
	}
	/* Clocks agree across the ranks of a host: nobody leaves the barrier
	 * before the last one entered it (give or take calibration error). */
	if (barrier_first_end + 200000 < barrier_last_start)
		FAIL("a rank left the barrier %llu ns before the last one entered",
		     (unsigned long long)(barrier_last_start - barrier_first_end));
	if (bad)
		fprintf(stderr, "mpi_check: %d problems\n", bad);
	return bad ? 1 : 0;
}
