/* mpi_expect.c - checks what libescollect recorded against what the program said it did, tuple by tuple, from outside. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"

/*
 * usage: mpi_expect JOB NRANKS DIR
 * DIR/expect.rN lists, in order, the calls rank N's main thread made that
 * must have been recorded, one a line:
 *
 *   NAME ELEMENT SIZE ARG [+]
 *
 * NAME as monitors print it (MPI_Send, MPI_Iallreduce/done, MPI_Start/recv,
 * MPI_Send/failed);
 * ELEMENT, SIZE and ARG a number, "-" for none (0xffffffff) or "*" for any;
 * for a collective ARG is its number on its communicator.  A trailing "+"
 * lets the line match one or more tuples in a row (a test that may complete
 * its requests one by one).  Lines starting with # are comments.
 * Prints how many calls were checked; exit 1 with every difference if any.
 */

#define ANY 0xfffffffeu
#define NONE 0xffffffffu

struct want {
	unsigned op;
	uint32_t element, size, arg;
	int more;
	int line;
};

static int bad;
#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); bad++; } while (0)

static uint32_t field(const char *s)
{
	if (!strcmp(s, "*"))
		return ANY;
	if (!strcmp(s, "-"))
		return NONE;
	return (uint32_t)strtoul(s, NULL, 0);
}

/* "MPI_Start/recv" -> code | flags */
static unsigned parse_op(const char *name)
{
	char base[64];
	snprintf(base, sizeof(base), "%s", name);
	unsigned flags = 0;
	char *slash;
	while ((slash = strrchr(base, '/'))) {
		if (!strcmp(slash, "/done"))
			flags |= ES_OP_DONE;
		else if (!strcmp(slash, "/recv"))
			flags |= ES_OP_RECV;
		else if (!strcmp(slash, "/failed"))
			flags |= ES_OP_FAILED;
		else
			return 0;
		*slash = 0;
	}
	unsigned op = es_op_from_name(base);
	return op ? op | flags : 0;
}

static int read_expect(const char *file, struct want **out)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		FAIL("%s: cannot open it", file);
		return 0;
	}
	int n = 0, cap = 0, lineno = 0;
	struct want *w = NULL;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char name[64], el[32], sz[32], arg[32], more[8] = "";
		if (line[0] == '#' || sscanf(line, "%63s %31s %31s %31s %7s", name, el, sz, arg, more) < 4)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			w = realloc(w, sizeof(*w) * (size_t)cap);
			if (!w)
				exit(2);
		}
		w[n] = (struct want){ parse_op(name), field(el), field(sz), field(arg), !strcmp(more, "+"),
				      lineno };
		if (!w[n].op)
			FAIL("%s:%d: '%s' is not an operation", file, lineno, name);
		n++;
	}
	fclose(f);
	*out = w;
	return n;
}

static int ok(uint32_t got, uint32_t want)
{
	return want == ANY || got == want;
}

static int matches(const struct es_trace *t, const struct want *w)
{
	return (t->op & ~ES_OP_NUMBERED) == w->op && ok(t->element, w->element) && ok(t->size, w->size) &&
	       ok(t->arg, w->arg);
}

/* Every tuple's communicator is one its rank listed in mpi.comms by then
 * (a collective's always has one). */
static void comms_named(const char *seg, es_space *sp, const struct es_trace *t, int n)
{
	ps_elem *e;
	struct ps_stats st;
	if (ps_elem_open(es_space_server(sp), ES_COMMS_ELEMENT, sizeof(struct es_comm_rec), &e)) {
		FAIL("%s: no %s", seg, ES_COMMS_ELEMENT);
		return;
	}
	ps_elem_stats(e, &st);
	struct es_comm_rec *c = calloc(st.written + 1, sizeof(*c));
	int nc = c ? ps_read_range(e, 0, st.written, c, NULL) : 0;
	ps_elem_close(e);
	for (int j = 0; j < n; j++) {
		char label[64];
		if (t[j].comm == ES_COMM_NONE) {
			if (es_op_matched(t[j].op))
				FAIL("%s: tuple %d (%s) is a collective on no communicator", seg, j,
				     es_op_label(t[j].op, label, sizeof(label)));
			continue;
		}
		bool named = false;
		for (int k = 0; k < nc && !named; k++)
			named = (c[k].serial & 0xffff) == t[j].comm && c[k].stamp <= t[j].start;
		if (!named)
			FAIL("%s: tuple %d (%s) on communicator %u, which mpi.comms does not list by then", seg, j,
			     es_op_label(t[j].op, label, sizeof(label)), t[j].comm);
	}
	free(c);
}

static void show(char *buf, size_t len, uint32_t v)
{
	if (v == ANY)
		snprintf(buf, len, "*");
	else if (v == NONE)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%u", v);
}

/* Group marks (collectors.h) follow their MPI_Win_post or MPI_Win_start,
 * one per member of its group, each naming that call and the group's size
 * (mpi_every's groups: the other rank); checked, then taken out, so that
 * the calls are matched as the program made them.  The tuples left. */
static int group_marks(const char *seg, struct es_trace *t, int n)
{
	int k = 0, call = -1, seen = 0;
	for (int i = 0; i < n; i++) {
		if (!es_is_group_mark(t[i].op)) {
			if (call >= 0 && seen != 1)
				FAIL("%s: tuple %d (%s) has %d group marks, expected 1", seg, call, es_op_name(t[call].op), seen);
			unsigned code = es_op_code(t[i].op);
			call = code == ES_OP_MPI_WIN_POST || code == ES_OP_MPI_WIN_START ? k : -1;
			seen = 0;
			t[k++] = t[i];
			continue;
		}
		if (call < 0 || t[i].arg != es_op_code(t[call].op) || t[i].size != 1 || t[i].comm != t[call].comm ||
		    t[i].element > 1)
			FAIL("%s: tuple %d: a group mark (member %u of %u, for op %u) not after its MPI_Win_post or "
			     "MPI_Win_start", seg, i, t[i].element, t[i].size, t[i].arg);
		seen++;
	}
	if (call >= 0 && seen != 1)
		FAIL("%s: the last tuple (%s) has %d group marks, expected 1", seg, es_op_name(t[call].op), seen);
	return k;
}

static int check_rank(const char *job, int r, const char *dir)
{
	char seg[64], file[4096];
	snprintf(seg, sizeof(seg), "%s.r%d", job, r);
	snprintf(file, sizeof(file), "%s/expect.r%d", dir, r);
	struct want *w = NULL;
	int nw = read_expect(file, &w);
	es_space *sp;
	int rc = es_space_open(seg, &sp);
	if (rc) {
		FAIL("%s: %s", seg, ps_strerror(rc));
		free(w);
		return 0;
	}
	ps_elem *e;
	if ((rc = ps_elem_open(es_space_server(sp), "mpi.thread0", sizeof(struct es_trace), &e))) {
		FAIL("%s: mpi.thread0: %s", seg, ps_strerror(rc));
		es_space_destroy(sp);
		free(w);
		return 0;
	}
	struct ps_stats st;
	ps_elem_stats(e, &st);
	if (st.discarded)
		FAIL("%s: %llu tuples discarded", seg, (unsigned long long)st.discarded);
	struct es_trace *t = calloc(st.written + 1, sizeof(*t));
	int n = t ? ps_read_range(e, 0, st.written, t, NULL) : 0;
	n = group_marks(seg, t, n);
	int i = 0, k = 0;
	for (; i < n && k < nw; k++) {
		char a[16], b[16], c[16], label[64], label2[64];
		if (!matches(&t[i], &w[k])) {
			show(a, sizeof(a), w[k].element);
			show(b, sizeof(b), w[k].size);
			show(c, sizeof(c), w[k].arg);
			FAIL("%s:%d: expected %s %s %s %s; tuple %d is %s %u %u %u", file, w[k].line,
			     es_op_label(w[k].op, label, sizeof(label)), a, b, c, i,
			     es_op_label(t[i].op, label2, sizeof(label2)), t[i].element, t[i].size, t[i].arg);
			break;
		}
		i++;
		while (w[k].more && i < n && matches(&t[i], &w[k]))
			i++;
	}
	comms_named(seg, sp, t, n);
	/* the thread's count of its calls, in the tuples that are not message
	 * ends (whose low bits are their numbers: mpi_check checks them) */
	for (int j = 1, last = -1; j < n; j++) {
		if (t[j].op & ES_OP_NUMBERED || es_is_mark(t[j].op))
			continue;
		if (last >= 0 && (uint16_t)(t[j].seq - t[last].seq) != 1)
			FAIL("%s: tuple %d has seq %u after %u", seg, j, t[j].seq, t[last].seq);
		last = j;
	}
	for (int j = 0; j < n; j++)
		if (t[j].start > t[j].end)
			FAIL("%s: tuple %d ends before it starts", seg, j);
	if (!bad && (i != n || k != nw))
		FAIL("%s: %d tuples for %d expected calls (%d tuples, %d calls matched)", seg, n, nw, i, k);
	free(t);
	free(w);
	ps_elem_close(e);
	es_space_destroy(sp);
	return k;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: mpi_expect JOB NRANKS DIR\n");
		return 2;
	}
	int n = atoi(argv[2]), calls = 0;
	for (int r = 0; r < n; r++)
		calls += check_rank(argv[1], r, argv[3]);
	printf("mpi_expect: %d calls checked on %d ranks\n", calls, n);
	if (bad)
		fprintf(stderr, "mpi_expect: %d problems\n", bad);
	return bad ? 1 : 0;
}
