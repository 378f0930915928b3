/* waitfor.c - how heartbeat's judgement of one period grows with the job: synthetic wait-for graphs of 1,000 to 100,000 threads, built, analysed and reported. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "waitfor/waitfor.h"
#include "pastset/pastset.h"

/*
 * What heartbeat does each period once something stalls: wf_add and
 * wf_wait for every thread (as waits.c does from the notes and boards),
 * wf_analyze (reachability, cycles, mismatches, roots) and wf_report.
 * Four shapes, each a rank per thread:
 *   ring      every rank receives from the next: one cycle of all
 *   tree      a binary tree of waits on one rank that computes: a stall
 *             whose root has everyone behind it, at every depth
 *   knot      every rank receives from any of its next eight: no cycle
 *             of single waits, a deadlock all the same
 *   alltoall  every rank in one collective but the last, which is late:
 *             one gate, n edges
 * Each size is timed as the best of a few runs (what noise adds is not the
 * code's), and the growth from one size to the next is printed beside.
 */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

enum shape { RING, TREE, KNOT, ALLTOALL, NSHAPES };
static const char *const shape_name[NSHAPES] = { "ring", "tree", "knot", "alltoall" };

static int add(wf_graph *g, int r, enum wf_state st, bool all, const char *what, int64_t coll)
{
	char name[32], label[24];
	snprintf(name, sizeof(name), "rank%d.thread0", r);
	snprintf(label, sizeof(label), "rank%d", r);
	struct wf_thread t = { .name = name, .label = label, .unit = r, .state = st, .secs = 2, .what = what,
			       .all = all, .coll = coll, .coll_op = 0, .coll_num = 0, .coll_root = 0,
			       .coll_name = "MPI_COMM_WORLD" };
	return wf_add(g, &t);
}

/* One period's judgement of n threads in this shape; its deadlocks, or < 0. */
static int judge(wf_graph *g, enum shape s, int n, FILE *out)
{
	wf_clear(g);
	int rc = 0, gate = -1;
	if (s == ALLTOALL && (gate = wf_gate(g, true, "MPI_Allreduce #0: those not there yet")) >= 0)
		rc = wf_gate_wait(g, gate, n - 1);
	for (int r = 0; r < n && !rc; r++) {
		int t;
		switch (s) {
		case RING:
			t = add(g, r, WF_WAIT, true, "in MPI_Recv from the next", -1);
			rc = t < 0 ? t : wf_wait(g, t, (r + 1) % n);
			break;
		case TREE:
			t = add(g, r, r ? WF_WAIT : WF_COMPUTE, true, r ? "in MPI_Recv from its parent" : "computes", -1);
			rc = t < 0 ? t : r ? wf_wait(g, t, (r - 1) / 2) : 0;
			break;
		case KNOT:
			t = add(g, r, WF_WAIT, false, "in MPI_Recv from any source", -1);
			for (int k = 1; k <= 8 && t >= 0 && !rc; k++)
				rc = wf_wait(g, t, (r + k) % n);
			rc = t < 0 ? t : rc;
			break;
		default:
			if (r == n - 1) {
				t = add(g, r, WF_COMPUTE, true, "computes", -1);
			} else {
				t = add(g, r, WF_WAIT, true, "in MPI_Allreduce #0", 1);
				rc = t < 0 ? t : wf_wait_gate(g, t, gate);
			}
			break;
		}
	}
	if (!rc)
		rc = wf_analyze(g);
	if (!rc)
		rc = wf_report(g, out, "  ");
	return rc ? rc : wf_deadlocks(g);
}

int main(int argc, char **argv)
{
	int max = argc > 1 ? atoi(argv[1]) : 100000;
	static const int sizes[] = { 1000, 10000, 100000, 1000000 };
	wf_graph *g;
	FILE *sink = fopen("/dev/null", "w");
	if (wf_create(&g) || !sink)
		return 1;
	printf("waitfor: one period's judgement (build, analyse, report), best of 5, by threads\n");
	printf("  %-9s %9s %10s %9s\n", "shape", "threads", "ms", "growth");
	double at_max[NSHAPES] = { 0 };
	for (int s = 0; s < NSHAPES; s++) {
		double prev = 0;
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]) && sizes[k] <= max; k++) {
			double best = 1e9;
			int dl = 0;
			for (int run = 0; run < 5; run++) {
				double t0 = now_s();
				dl = judge(g, (enum shape)s, sizes[k], sink);
				double t = now_s() - t0;
				best = t < best ? t : best;
			}
			if (dl < 0) {
				fprintf(stderr, "waitfor: %s of %d: %s\n", shape_name[s], sizes[k], ps_strerror(dl));
				return 1;
			}
			bool want = s == RING || s == KNOT; /* the shapes that are deadlocks */
			if ((dl > 0) != want) {
				fprintf(stderr, "waitfor: %s of %d: %d deadlocks, expected %s\n", shape_name[s],
					sizes[k], dl, want ? "one" : "none");
				return 1;
			}
			char growth[32] = "";
			if (prev > 0)
				snprintf(growth, sizeof(growth), "x%.1f", best / prev);
			printf("  %-9s %9d %10.2f %9s\n", shape_name[s], sizes[k], best * 1e3, growth);
			prev = best;
			if (sizes[k] == max)
				at_max[s] = best;
		}
	}
	wf_destroy(g);
	fclose(sink);
	printf("waitfor: threads=%d ring_ms=%.1f tree_ms=%.1f knot_ms=%.1f alltoall_ms=%.1f\n", max,
	       at_max[RING] * 1e3, at_max[TREE] * 1e3, at_max[KNOT] * 1e3, at_max[ALLTOALL] * 1e3);
	return 0;
}
