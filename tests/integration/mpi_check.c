/* mpi_check.c - reads the trace spaces mpi_calls left behind and checks every recorded call. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"

#define ANY 0xfffffffeu /* a field the check does not look at */
#define NONE 0xffffffffu

/* some: this op may come as several tuples whose args (counts) add up to
 * arg (1), or as one or two tuples, whatever their args (2) */
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
		add(ES_OP_MPI_IRECV, left, 400, 9);
		add(ES_OP_MPI_ISEND, right, 400, 9);
		add(ES_OP_MPI_WAIT, left, 400, 9);
		add(ES_OP_MPI_WAIT, ANY, ANY, ANY); /* a send: whatever the library put in its status */
		add(ES_OP_MPI_IRECV, left, 400, 10);
		add(ES_OP_MPI_ISEND, right, 400, 10);
		add(ES_OP_MPI_WAITALL, NONE, 0, 2);
		add(ES_OP_MPI_IRECV, left, 400, 11);
		add(ES_OP_MPI_ISEND, right, 400, 11);
		add(ES_OP_MPI_WAITANY, ANY, ANY, ANY);
		add(ES_OP_MPI_WAITANY, ANY, ANY, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 12);
		add(ES_OP_MPI_ISEND, right, 400, 12);
		/* polls: only the one that completed, arg = polls in its streak */
		add(ES_OP_MPI_TESTALL, NONE, 0, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 16);
		add(ES_OP_MPI_ISEND, right, 400, 16);
		add(ES_OP_MPI_TEST, left, 400, ANY);
		add(ES_OP_MPI_TEST, ANY, ANY, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 17);
		add(ES_OP_MPI_ISEND, right, 400, 17);
		add(ES_OP_MPI_TESTANY, ANY, ANY, ANY);
		add(ES_OP_MPI_TESTANY, ANY, ANY, ANY);
		add(ES_OP_MPI_IRECV, left, 400, 18);
		add(ES_OP_MPI_ISEND, right, 400, 18);
		add(ES_OP_MPI_TESTSOME, NONE, 0, ANY); /* one or two that completed */
		w[nw - 1].some = 2;
		add(ES_OP_MPI_IRECV, left, 400, 19);
		add(ES_OP_MPI_ISEND, right, 400, 19);
		add(ES_OP_MPI_WAITSOME, NONE, 0, 2);
		w[nw - 1].some = 1;
		add(ES_OP_MPI_SENDRECV, right, 16, left);
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

static int field_ok(uint32_t got, uint32_t want)
{
	return want == ANY || got == want;
}

/* All tuples of one trace element, checked for order and accounting. */
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
	for (int i = 0; i < n; i++) {
		if (t[i].seq != (uint32_t)i)
			FAIL("%s: tuple %d has seq %u", trace, i, t[i].seq);
		if (t[i].start > t[i].end)
			FAIL("%s: tuple %d ends before it starts", trace, i);
		if (i && t[i - 1].end > t[i].start)
			FAIL("%s: tuple %d starts before %d ended", trace, i, i - 1);
		if (t[i].op & ES_OP_FAILED)
			FAIL("%s: tuple %d records a failed %s", trace, i, es_op_name(t[i].op));
	}
	return n;
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
	int threads = !strcmp(argv[3], "all") || nopolls ? 2 : 1; /* single: MPI_Init, one thread */
	uint64_t barrier_last_start = 0, barrier_first_end = UINT64_MAX;
	uint32_t world_id = 0; /* every rank's WORLD collectives carry one id */
	for (int r = 0; r < n; r++) {
		char seg[64];
		snprintf(seg, sizeof(seg), "%s.r%d", job, r);
		es_space *sp;
		int rc = es_space_open(seg, &sp);
		if (rc) {
			FAIL("%s: %s", seg, ps_strerror(rc));
			continue;
		}
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
			if (c == 1) { /* the second thread: one sendrecv on its own communicator */
				if (got != 1 || t[0].op != ES_OP_MPI_SENDRECV ||
				    t[0].element != (uint32_t)((r + 1) % n) || t[0].size != 16)
					FAIL("%s: second thread recorded %d tuples, first %s", seg, got,
					     got ? es_op_name(t[0].op) : "-");
				continue;
			}
			expected(r, n, coll);
			for (int j = 0, o = nw; nopolls && j < o; j++) {
				if (j == 0)
					nw = 0;
				if (es_op_info(w[j].op)->kind != ES_KIND_POLL)
					w[nw++] = w[j];
			}
			int i = 0, k = 0;
			for (; i < got && k < nw; i++, k++) {
				if (w[k].some == 2 && t[i].op == w[k].op) {
					if (i + 1 < got && t[i + 1].op == w[k].op)
						i++;
					continue;
				}
				if (w[k].some && t[i].op == w[k].op) {
					/* completions may come one at a time or together */
					uint32_t sum = t[i].arg;
					while (sum < w[k].arg && i + 1 < got && t[i + 1].op == w[k].op)
						sum += t[++i].arg;
					if (sum != w[k].arg)
						FAIL("%s: %s completed %u of %u", seg, es_op_name(w[k].op), sum,
						     w[k].arg);
					continue;
				}
				/* a collective's arg: its communicator's id << 20 | its number */
				bool matched = es_op_matched(t[i].op);
				uint32_t arg = matched ? t[i].arg & 0xfffff : t[i].arg;
				if (matched && t[i].op != ES_OP_MPI_COMM_FREE) {
					if (!world_id)
						world_id = t[i].arg >> 20 | 0x1000;
					else if ((t[i].arg >> 20 | 0x1000) != world_id)
						FAIL("%s: tuple %d: a collective on WORLD with another id", seg, i);
				}
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
