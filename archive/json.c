/* json.c - an archive as trace-event JSON (Perfetto, chrome://tracing): a track per thread, a slice per operation, messages and collectives as flow arrows. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/convert.h"

/*
 * Slices are complete events ("ph":"X") cut to nest as ar_thread_items
 * says, stamps in microseconds with nanosecond digits since the first
 * event.  A message is a flow from its send's slice (a send, Isend or
 * Sendrecv) to the slice its receive completed in (a receive, Sendrecv, or
 * the wait or test that completed an Irecv), paired by the numbers both
 * ends carry (messages.c): an end whose other end is not here is no
 * arrow, and said.  A
 * collective is flows from the rank that came last to each of the others:
 * what they waited for.  A window (from, to in ns since the first event)
 * keeps long runs small enough to open: what overlaps it, nothing else.
 */

#define NONE 0xffffffffu

struct slice {
	uint64_t start, end; /* ns since the first event, cut to nest */
	uint32_t event;
	int thread;
};

/* One end of a message: its event, and where its arrow ends (ns since
 * the first event, on its thread's track). */
struct msg {
	uint32_t event;
	uint64_t time;
	int thread;
};


/* A slice's arguments, named as its call's fields mean them (collectors.h):
 * a message's peer (world rank), tag, communicator; a collective's number
 * and root; a poll streak's polls; bytes; and where the program called it. */
static void slice_args(FILE *f, const ar_archive *a, int thread, const struct es_trace *e)
{
	const struct es_op_info *o = es_op_info(e->op);
	unsigned op = e->op & ~ES_OP_UNFINISHED; /* an unfinished call's peer and tag, as its notes said */
	int dir = es_message(op);
	bool mpi = ar_thread(a, thread)->rank >= 0 && es_op_code(e->op) >= ES_OP_MPI_INIT;
	if (ar_is_phase(e)) {
		fprintf(f, ",\"args\":{\"within\":%u}}", e->element);
		return;
	}
	/* inside it when the archive was made: its notes say its peer and tag,
	 * not its bytes (unknown, not 0) */
	if (e->op & ES_OP_UNFINISHED)
		fputs(",\"args\":{\"bytes\":null,\"unfinished\":true", f);
	else
		fprintf(f, ",\"args\":{\"bytes\":%u", e->size);
	if (!mpi) {
		if (e->element != NONE)
			fprintf(f, ",\"element\":%u", e->element);
		fprintf(f, ",\"arg\":%u}}", e->arg);
		return;
	}
	if (dir || es_msg_kind(op) != ES_MSG_NONE) {
		const char *peer = dir > 0 || es_msg_kind(op) == ES_MSG_ISEND ? "to" : "from";
		if (e->element != NONE)
			fprintf(f, ",\"%s\":%u", peer, e->element);
		else
			fprintf(f, ",\"%s\":\"any\"", peer);
		if (e->arg != NONE)
			fprintf(f, ",\"tag\":%u", e->arg);
	} else if (es_op_matched(e->op)) {
		fprintf(f, ",\"number\":%u", e->arg);
		if (e->element != NONE)
			fprintf(f, ",\"root\":%u", e->element);
	} else if (o && o->kind == ES_KIND_POLL) {
		fprintf(f, ",\"polls\":%u", e->arg);
	} else if (o && o->group == ES_GROUP_IO) {
		const char *file = e->element != NONE ? ar_file_name(a, ar_thread(a, thread)->rank, e->element) : NULL;
		if (file) {
			fputs(",\"file\":", f);
			ar_json_string(f, file);
		}
	}
	const struct ar_comm *c = e->comm != ES_COMM_NONE ? ar_comm(a, e->comm) : NULL;
	if (c && (c->flags & ES_COMMS_WORLD))
		fputs(",\"comm\":\"MPI_COMM_WORLD\"", f);
	else if (c)
		fprintf(f, ",\"comm\":\"%s %u (id %llx)\"", c->flags & ES_COMMS_WINDOW ? "window" : "comm", e->comm,
			(unsigned long long)c->id);
	const struct ar_site *site = ar_site(a, thread, ES_TRACE_SITE(e));
	if (site && site->frames[0].line) {
		char where[600];
		snprintf(where, sizeof(where), "%s:%d", site->frames[0].file, site->frames[0].line);
		fputs(",\"site\":", f);
		ar_json_string(f, where);
		fputs(",\"function\":", f);
		ar_json_string(f, site->frames[0].function);
	}
	fputs("}}", f);
}

static void us(FILE *f, uint64_t ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

/* a flow's two ends: "s" on from's slice at its start, "f" inside to's slice near its end */
static void flow(FILE *f, uint64_t id, const char *cat, const struct slice *from, const struct slice *to,
		 const int *pid)
{
	uint64_t end = to->end > to->start ? to->end - 1 : to->start;
	fprintf(f, ",\n{\"ph\":\"s\",\"id\":%llu,\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":",
		(unsigned long long)id, cat, cat, pid[from->thread], from->thread);
	us(f, from->start);
	fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,"
		"\"tid\":%d,\"ts\":", (unsigned long long)id, cat, cat, pid[to->thread], to->thread);
	us(f, end);
	fputc('}', f);
}

/* a message's flow: "s" where it was sent, "f" where its receive completed */
static void msg_flow(FILE *f, uint64_t id, const struct msg *s, const struct msg *r, const int *pid)
{
	fprintf(f, ",\n{\"ph\":\"s\",\"id\":%llu,\"cat\":\"message\",\"name\":\"message\",\"pid\":%d,\"tid\":%d,\"ts\":",
		(unsigned long long)id, pid[s->thread], s->thread);
	us(f, s->time);
	fprintf(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"cat\":\"message\",\"name\":\"message\",\"pid\":%d,"
		"\"tid\":%d,\"ts\":", (unsigned long long)id, pid[r->thread], r->thread);
	us(f, r->time);
	fputc('}', f);
}

static int by_coll(const void *a, const void *b, void *arg)
{
	const struct slice *x = a, *y = b;
	const struct ar_event *ev = arg;
	const struct es_trace *s = &ev[x->event].t, *t = &ev[y->event].t;
	if (s->comm != t->comm)
		return s->comm < t->comm ? -1 : 1;
	if (s->arg != t->arg)
		return s->arg < t->arg ? -1 : 1;
	if (es_op_code(s->op) != es_op_code(t->op))
		return es_op_code(s->op) < es_op_code(t->op) ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* What ar_to_json carries from one part to the next. */
struct jout {
	FILE *f;
	const ar_archive *a;
	const struct ar_event *ev;
	uint64_t t0, from, to, id;
	int *pid;                 /* by thread: its process's */
	struct slice *sl;
	size_t ns, nsend, nrecv;
	struct msg *sends, *recvs;
	struct ar_out_stats *st;
};

/* A rank's threads are one process (its pid the rank); others by name. */
static int by_process(const void *x, const void *y, void *arg)
{
	int t = *(const int *)x, u = *(const int *)y;
	const struct ar_thread *a = ar_thread(arg, t), *b = ar_thread(arg, u);
	unsigned ra = (unsigned)a->rank, rb = (unsigned)b->rank; /* no rank (-1) last */
	int c = ra != rb ? (ra > rb) - (ra < rb) : a->rank < 0 ? strcmp(a->process, b->process) : 0;
	return c ? c : (t > u) - (t < u);
}

/* Each thread's pid: its rank's number, or for a process of no rank from
 * 1000 on, past every rank's; threads of one process found together by sorting
 * (linear in threads but for the sort).  -ENOMEM. */
static int number_processes(struct jout *j, bool *first)
{
	const ar_archive *a = j->a;
	int nt = ar_nthreads(a), top = 0, others = 0;
	int *order = malloc(sizeof(int) * ((size_t)nt + 1));
	if (!order)
		return -ENOMEM;
	for (int t = 0; t < nt; t++) {
		order[t] = t;
		top = ar_thread(a, t)->rank >= top ? ar_thread(a, t)->rank + 1 : top;
	}
	top = top > 1000 ? top : 1000;
	qsort_r(order, (size_t)nt, sizeof(*order), by_process, (void *)a);
	bool unnamed = false; /* the process of order[k] has no label yet */
	const uint32_t *idx;
	for (int k = 0; k < nt; k++) {
		int t = order[k];
		const struct ar_thread *before = k ? ar_thread(a, order[k - 1]) : NULL, *me = ar_thread(a, t);
		bool same = before && before->rank == me->rank && (me->rank >= 0 || !strcmp(before->process, me->process));
		unnamed |= !same;
		/* sorted by index within a process: its lowest with an event says its name */
		first[t] = unnamed && ar_thread_events(a, t, &idx);
		unnamed &= !first[t];
		j->pid[t] = same ? j->pid[order[k - 1]] : ar_thread(a, t)->rank >= 0 ? ar_thread(a, t)->rank
											 : top + others++;
	}
	free(order);
	return 0;
}

/* A process per trace space (an MPI rank), a track per thread that
 * recorded something (an empty one: counted in st->unlocated, as OTF2's) */
static int tracks(struct jout *j)
{
	const ar_archive *a = j->a;
	bool *first = malloc((size_t)ar_nthreads(a) + 1);
	if (!first || number_processes(j, first)) {
		free(first);
		return -ENOMEM;
	}
	const uint32_t *idx;
	for (int t = 0; t < ar_nthreads(a); t++) {
		if (!ar_thread_events(a, t, &idx)) { /* a track with nothing on it: none, counted */
			j->st->unlocated++;
			continue;
		}
		if (first[t]) {
			char label[PS_NAME_MAX + 16];
			if (ar_thread(a, t)->rank >= 0)
				snprintf(label, sizeof(label), "MPI rank %d", ar_thread(a, t)->rank);
			else
				snprintf(label, sizeof(label), "%s", ar_thread(a, t)->process);
			fprintf(j->f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":", j->pid[t]);
			ar_json_string(j->f, label);
			fputs("}}", j->f);
		}
		fprintf(j->f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
			j->pid[t], t);
		ar_json_string(j->f, ar_thread(a, t)->name);
		fputs("}}", j->f);
	}
	free(first);
	return 0;
}

/* Thread t's slices, nested, and its messages' ends. */
static int thread_slices(struct jout *j, int t)
{
	struct ar_item *items;
	size_t n;
	int rc = ar_thread_items(j->a, t, &items, &n, j->st);
	if (rc || !n)
		return rc;
	struct slice *stack = malloc(sizeof(*stack) * (n + 1));
	size_t depth = 0;
	if (!stack) {
		free(items);
		return -ENOMEM;
	}
	int rank = ar_thread(j->a, t)->rank;
	for (size_t i = 0; i < n; i++) {
		const struct es_trace *e = &j->ev[items[i].event].t;
		uint64_t at = items[i].time - j->t0;
		int dir = rank >= 0 && e->element != NONE ? es_message(e->op) : 0;
		if (items[i].kind == AR_ENTER) {
			stack[depth++] = (struct slice){ at, 0, items[i].event, t };
			if (dir > 0)
				j->sends[j->nsend++] = (struct msg){ items[i].event, at, t };
		}
		/* a receive completes inside its slice: a blocking one before it
		 * ends, a request's where its wait or test has it */
		if (dir < 0 && ((items[i].kind == AR_LEAVE && !(e->op & ES_OP_DONE)) || items[i].kind == AR_COMPLETE))
			j->recvs[j->nrecv++] = (struct msg){ items[i].event, at > 0 ? at - 1 : at, t };
		if (items[i].kind != AR_LEAVE || !depth)
			continue;
		struct slice sl = stack[--depth];
		sl.end = at;
		j->sl[j->ns++] = sl;
	}
	free(stack);
	free(items);
	return 0;
}

/* The slices within the window. */
static void slices(struct jout *j)
{
	size_t shown = 0;
	for (size_t i = 0; i < j->ns; i++) {
		const struct slice *s = &j->sl[i];
		const struct es_trace *e = &j->ev[s->event].t;
		char label[64];
		if (s->end < j->from || s->start > j->to)
			continue;
		shown++;
		fputs(",\n{\"ph\":\"X\",\"name\":", j->f);
		bool phase = ar_is_phase(e);
		ar_json_string(j->f, phase ? ar_phase_name(j->a, s->thread, e, label, sizeof(label))
				      : es_op_label(e->op, label, sizeof(label)));
		/* a call's category is its class in every picture (es_op_class) */
		fprintf(j->f, ",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":",
			phase ? "phase" : es_class_name(es_op_class(e->op)), j->pid[s->thread], s->thread);
		us(j->f, s->start);
		fputs(",\"dur\":", j->f);
		us(j->f, s->end - s->start);
		slice_args(j->f, j->a, s->thread, e);
	}
	j->st->regions = shown;
}

/* Messages: each receive's send, as messages.c paired them. */
static int messages(struct jout *j)
{
	struct ar_msgs m;
	size_t ne = ar_nevents(j->a);
	uint32_t *sent = malloc(sizeof(*sent) * (ne + 1));
	int rc = sent ? ar_msgs_match(j->a, &m) : -ENOMEM;
	if (rc) {
		free(sent);
		return rc;
	}
	for (size_t i = 0; i < ne; i++)
		sent[i] = UINT32_MAX;
	for (size_t i = 0; i < j->nsend; i++)
		sent[j->sends[i].event] = (uint32_t)i;
	for (size_t k = 0; k < j->nrecv; k++) {
		const struct msg *r = &j->recvs[k];
		uint32_t o = m.other[r->event];
		if (o >= AR_MSG_ALONE || sent[o] == UINT32_MAX)
			continue;
		const struct msg *s = &j->sends[sent[o]];
		if (r->time < s->time) /* hosts' clocks apart: never an arrow back in time */
			j->st->backwards++;
		else if (s->time <= j->to && r->time >= j->from) {
			msg_flow(j->f, j->id++, s, r, j->pid);
			j->st->messages++;
		}
	}
	ar_msgs_free(&m);
	j->st->pairing = m;
	free(sent);
	return 0;
}

/* Which way a collective's arrows go: from its root to the others (1 to
 * N: the data comes from it), from the others to its root (N to 1), or
 * from the last in to the others (all wait for all). */
enum way { FROM_LAST, FROM_ROOT, TO_ROOT };
static enum way way_of(unsigned op)
{
	switch (es_op_code(op)) {
	case ES_OP_MPI_BCAST: case ES_OP_MPI_SCATTER: case ES_OP_MPI_SCATTERV:
		return FROM_ROOT;
	case ES_OP_MPI_REDUCE: case ES_OP_MPI_GATHER: case ES_OP_MPI_GATHERV:
		return TO_ROOT;
	default:
		return FROM_LAST;
	}
}

/* An arrow from's start to to's end, unless it would go back in time (the
 * hosts' clocks, or a collective that let a member go before another
 * came): never drawn, and counted. */
static bool coll_flow(struct jout *j, const struct slice *from, const struct slice *to)
{
	if (to->end <= from->start) {
		j->st->colls_backwards++;
		return false;
	}
	flow(j->f, j->id++, "collective", from, to, j->pid);
	return true;
}

/* One collective's members' slices, sorted by start: its arrows. */
static void coll_arrows(struct jout *j, const struct slice *m, size_t n)
{
	const struct es_trace *t = &j->ev[m[0].event].t;
	enum way w = way_of(t->op);
	size_t root = n;
	for (size_t i = 0; i < n && w != FROM_LAST; i++)
		if (t->element != NONE && ar_thread(j->a, m[i].thread)->rank == (int)t->element)
			root = i;
	if (w != FROM_LAST && root == n)
		return; /* its root not recorded: which way is not known */
	bool drawn = false;
	for (size_t i = 0; i < n; i++) {
		if (w == FROM_ROOT && i != root)
			drawn |= coll_flow(j, &m[root], &m[i]);
		else if (w == TO_ROOT && i != root)
			drawn |= coll_flow(j, &m[i], &m[root]);
		else if (w == FROM_LAST && i != n - 1)
			drawn |= coll_flow(j, &m[n - 1], &m[i]);
	}
	j->st->colls += drawn;
}

/* Collectives: a group of slices per call (reorders the slices). */
static void collectives(struct jout *j)
{
	const struct ar_event *ev = j->ev;
	struct slice *sl = j->sl;
	size_t nc = 0;
	for (size_t i = 0; i < j->ns; i++)
		if (es_op_matched(ev[sl[i].event].t.op) && !(ev[sl[i].event].t.op & (ES_OP_DONE | ES_OP_UNFINISHED)))
			sl[nc++] = sl[i];
	qsort_r(sl, nc, sizeof(*sl), by_coll, (void *)ev);
	for (size_t i = 0; i < nc;) {
		size_t k = i + 1;
		while (k < nc && ev[sl[k].event].t.arg == ev[sl[i].event].t.arg &&
		       es_op_code(ev[sl[k].event].t.op) == es_op_code(ev[sl[i].event].t.op))
			k++;
		if (k - i > 1 && sl[k - 1].start <= j->to && sl[i].end >= j->from)
			coll_arrows(j, &sl[i], k - i);
		i = k;
	}
}

int ar_to_json(const ar_archive *a, const char *path, uint64_t from, uint64_t to,
	       struct ar_out_stats *st, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	/* the trace's owner's, as the archive is; never over another file */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f && fd >= 0)
		close(fd);
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	size_t ne = ar_nevents(a);
	struct jout j = { .f = f, .a = a, .ev = ar_events(a), .t0 = UINT64_MAX, .from = from, .to = to, .id = 1,
			  .st = st };
	for (size_t i = 0; i < ne; i++)
		j.t0 = j.ev[i].t.start < j.t0 ? j.ev[i].t.start : j.t0;
	j.pid = calloc((size_t)ar_nthreads(a) + 1, sizeof(int));
	j.sl = malloc(sizeof(*j.sl) * (ne + 1));
	j.sends = malloc(sizeof(*j.sends) * (ne + 1));
	j.recvs = malloc(sizeof(*j.recvs) * (ne + 1));
	int rc = j.pid && j.sl && j.sends && j.recvs ? 0 : -ENOMEM;
	if (!rc) {
		fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"job\":", f);
		ar_json_string(f, ar_job(a));
		fputs("},\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,"
		      "\"args\":{\"sort_index\":0}}", f);
		rc = tracks(&j);
	}
	for (int t = 0; t < ar_nthreads(a) && !rc; t++)
		rc = thread_slices(&j, t);
	if (!rc) {
		slices(&j);
		rc = messages(&j);
	}
	if (!rc) {
		collectives(&j);
		fputs("\n]}\n", f);
	}
	if (!rc && (ferror(f) || fflush(f)))
		rc = errno ? -errno : -EIO;
	if (fclose(f) && !rc)
		rc = errno ? -errno : -EIO;
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		unlink(path);
	}
	free(j.pid), free(j.sl), free(j.sends), free(j.recvs);
	return rc;
}
