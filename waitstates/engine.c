/* engine.c - the wait-state engine: events in, each thread's completions matched with the call they came in, the rows the patterns add to. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * How an event travels.  A completion (op | ES_OP_DONE: an Irecv's, an
 * Isend's, a nonblocking collective's) is written by the wait or test
 * that completed it, just before that call's own tuple, and ends inside
 * it: it waits in its thread's `dones` for the next event of the thread,
 * which is the call it came in when that call is a wait or a poll
 * containing its end (else the call is not known: its ends are paired,
 * never judged).  MPI_Sendrecv's receive (MPI_Sendrecv/done) comes after
 * the call and spans it: the call it came in is itself.  Then p2p.c
 * queues the calls that complete messages and collectives.c matches the
 * members of collectives.
 */

static const struct {
	const char *key, *name;
	int parent;
} patterns[WS_NPATTERNS] = {
	[WS_LATE_SENDER] = { "late_sender", "Late Sender", -1 },
	[WS_LATE_SENDER_WO] = { "late_sender_wo", "Late Sender, Wrong Order", WS_LATE_SENDER },
	[WS_LSWO_DIFFERENT] = { "lswo_different", "Late Sender, Wrong Order (different source)", WS_LATE_SENDER_WO },
	[WS_LSWO_SAME] = { "lswo_same", "Late Sender, Wrong Order (same source)", WS_LATE_SENDER_WO },
	[WS_LATE_RECEIVER] = { "late_receiver", "Late Receiver", -1 },
	[WS_WAIT_BARRIER] = { "wait_barrier", "Wait at Barrier", -1 },
	[WS_BARRIER_COMPLETION] = { "barrier_completion", "Barrier Completion", -1 },
	[WS_WAIT_NXN] = { "wait_nxn", "Wait at NxN", -1 },
	[WS_NXN_COMPLETION] = { "nxn_completion", "NxN Completion", -1 },
	[WS_LATE_BROADCAST] = { "late_broadcast", "Late Broadcast", -1 },
	[WS_EARLY_REDUCE] = { "early_reduce", "Early Reduce", -1 },
	[WS_EARLY_SCAN] = { "early_scan", "Early Scan", -1 },
	[WS_WAIT_FENCE] = { "wait_fence", "Wait at Fence", -1 },
	[WS_LATE_POST] = { "late_post", "Late Post", -1 },
	[WS_EARLY_WAIT] = { "early_wait", "Early Wait", -1 },
};

const char *ws_pattern_key(enum ws_pattern p)
{
	return (unsigned)p < WS_NPATTERNS ? patterns[p].key : "unknown";
}

const char *ws_pattern_name(enum ws_pattern p)
{
	return (unsigned)p < WS_NPATTERNS ? patterns[p].name : "unknown";
}

int ws_pattern_parent(enum ws_pattern p)
{
	return (unsigned)p < WS_NPATTERNS ? patterns[p].parent : -1;
}

int ws_pattern_of(const char *key)
{
	for (int p = 0; key && p < WS_NPATTERNS; p++) {
		const char *a = patterns[p].key, *b = key;
		while (*a && (*a == *b || (*a == '_' && *b == '-')))
			a++, b++;
		if (!*a && !*b)
			return p;
	}
	return -1;
}

int ws_create(ws **out)
{
	ws *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->locs.size = sizeof(struct loc);
	w->msgs.size = sizeof(struct msg);
	w->colls.size = sizeof(struct coll);
	w->rows.size = sizeof(struct ws_row);
	w->mpi_ns.size = sizeof(uint64_t);
	w->hwaits.size = sizeof(struct ws_wait);
	w->hcolls.size = sizeof(struct hcoll);
	w->hmembers.size = sizeof(struct hmember);
	w->msg_free = w->coll_free = NIL;
	*out = w;
	return 0;
}

void ws_destroy(ws *w)
{
	if (!w)
		return;
	ws__p2p_free(w);
	ws__coll_free(w);
	ws__gats_free(w);
	for (size_t i = 0; i < w->locs.n; i++) {
		struct loc *l = BASE_AT(w->locs, struct loc, i);
		base_vec_free(&l->calls), base_vec_free(&l->items), base_vec_free(&l->dones);
		base_vec_free(&l->hcalls), base_vec_free(&l->hphases), base_vec_free(&l->tops);
		base_tab_free(&l->isends);
	}
	base_vec_free(&w->locs);
	base_vec_free(&w->rows);
	base_tab_free(&w->row_ix);
	base_vec_free(&w->mpi_ns);
	base_vec_free(&w->hwaits), base_vec_free(&w->hcolls), base_vec_free(&w->hmembers);
	free(w);
}

size_t ws_waits(const ws *w, const struct ws_wait **out)
{
	*out = w->hwaits.v;
	return w->hwaits.n;
}

void ws_keep_waits(ws *w)
{
	w->keep_waits = true;
}

void ws_waits_clear(ws *w)
{
	w->hwaits.n = 0;
}

void ws_keep(ws *w)
{
	w->keep = true;
}

/* A call inside MPI or a phase, kept for ws_analyse. */
static int keep(ws *w, struct loc *l, const struct es_event *e)
{
	if (es_op_code(e->op) == ES_OP_MPI_PCONTROL) {
		struct hphase *h = base_vec_push(&l->hphases);
		if (!h)
			return -ENOMEM;
		*h = (struct hphase){ e->start, e->end, e->site };
	} else if (es_in_mpi_call(e->op)) {
		struct hcall *h = base_vec_push(&l->hcalls);
		if (!h)
			return -ENOMEM;
		*h = (struct hcall){ e->start, e->end, e->site };
	}
	(void)w;
	return 0;
}

/* A thread's calls come in the order it wrote them, each counted as a
 * profile's outermost regions are (archive/items.c): a completing poll's
 * tuple spans its streak, which begins no earlier than what the thread
 * did before it; a call that began before the latest counted one holds
 * the ones since its start, which it replaces; one that began inside the
 * latest is inside it. */
static void count_mpi(ws *w, struct loc *l, const struct es_event *e)
{
	if (!es_in_mpi_call(e->op) || e->rank < 0 || e->end < e->start)
		return;
	while (w->mpi_ns.n <= (size_t)e->rank)
		if (!base_vec_push(&w->mpi_ns))
			return;
	uint64_t *ns = BASE_AT(w->mpi_ns, uint64_t, e->rank), from = e->start;
	struct span *t = l->tops.v;
	size_t n = l->tops.n;
	const struct es_op_info *in = es_op_info(e->op);
	if (n && from < t[n - 1].e && in && in->kind == ES_KIND_POLL)
		from = t[n - 1].e;
	else if (n && from < t[n - 1].e && from >= t[n - 1].s)
		return;
	if (from >= e->end && from != e->start)
		return;
	while (n && t[n - 1].s >= from)
		*ns -= t[n - 1].e - t[n - 1].s, n--;
	w->st.mpi_nested_lost += !n && from < l->forgot; /* around calls no longer remembered */
	*ns += e->end - from;
	l->tops.n = n;
	if (n == TOPS_KEEP) { /* the older half forgotten */
		l->forgot = t[TOPS_KEEP / 2 - 1].e;
		memmove(t, t + TOPS_KEEP / 2, sizeof(*t) * (TOPS_KEEP / 2));
		l->tops.n = TOPS_KEEP / 2;
	}
	struct span *sp = base_vec_push(&l->tops);
	if (sp)
		*sp = (struct span){ from, e->end };
}

static bool completes(const struct es_op_info *in)
{
	return in && (in->kind == ES_KIND_WAIT || in->kind == ES_KIND_POLL);
}

/* The completions that came before e, given the call they came in (NULL:
 * not known). */
static int settle_dones(ws *w, struct loc *l, const struct es_event *call)
{
	int rc = 0;
	uint64_t last = 0; /* an unknown call's time: its completions' latest end, for the horizon */
	for (size_t i = 0; i < l->dones.n; i++) {
		const struct es_event *d = &BASE_AT(l->dones, struct done, i)->e;
		last = d->end > last ? d->end : last;
		const struct es_event *in = call && d->end >= call->start && d->end <= call->end ? call : NULL;
		int r = ws__is_coll(d->op) ? ws__coll_done(w, d, in) : ws__p2p_done(w, l, d, in);
		rc = rc ? rc : r;
	}
	w->st.unseen_calls += call ? 0 : l->dones.n;
	l->dones.n = 0;
	return rc ? rc : ws__p2p_call_end(w, l, call, last);
}

int ws_event(ws *w, const struct es_event *e)
{
	struct loc *l = ws__loc(w, e->loc);
	if (!l)
		return -ENOMEM;
	w->st.events++;
	l->rank = e->rank;
	count_mpi(w, l, e);
	if (w->keep && e->end >= e->start && keep(w, l, e) < 0)
		return -ENOMEM;
	unsigned code = es_op_code(e->op);
	if (es_is_group_mark(e->op))
		return ws__gats_member(w, e);
	if (es_is_mark(e->op) || code == ES_OP_MPI_PCONTROL)
		return 0;
	bool sendrecv = code == ES_OP_MPI_SENDRECV || code == ES_OP_MPI_SENDRECV_REPLACE;
	if ((e->op & ES_OP_DONE) && !sendrecv) {
		struct done *d = base_vec_push(&l->dones);
		if (!d)
			return -ENOMEM;
		d->e = *e;
		return 0;
	}
	int rc = 0;
	if (l->dones.n)
		rc = settle_dones(w, l, completes(es_op_info(e->op)) ? e : NULL);
	int r = ws__is_coll(e->op) ? ws__coll(w, e) : ws__p2p(w, l, e);
	if (!r && (code == ES_OP_MPI_WIN_POST || code == ES_OP_MPI_WIN_START) && !(e->op & ES_OP_FAILED))
		r = ws__gats_open(w, e);
	else if (!r && (code == ES_OP_MPI_WIN_COMPLETE || code == ES_OP_MPI_WIN_WAIT || code == ES_OP_MPI_WIN_TEST))
		r = ws__gats_end(w, e);
	return rc ? rc : r;
}

void ws_flush(ws *w, uint64_t before)
{
	if (before == UINT64_MAX)
		for (size_t i = 0; i < w->locs.n; i++) {
			struct loc *l = BASE_AT(w->locs, struct loc, i);
			if (l->dones.n)
				settle_dones(w, l, NULL);
		}
	ws__p2p_flush(w, before);
	ws__coll_flush(w, before);
	ws__gats_flush(w, before);
}

size_t ws_rows(const ws *w, const struct ws_row **out)
{
	*out = w->rows.v;
	return w->rows.n;
}

void ws_stats(const ws *w, struct ws_stats *out)
{
	*out = w->st;
}

uint64_t ws_mpi_ns(const ws *w, int rank)
{
	return rank >= 0 && (size_t)rank < w->mpi_ns.n ? *BASE_AT(w->mpi_ns, uint64_t, rank) : 0;
}

int ws_ranks(const ws *w)
{
	return (int)w->mpi_ns.n;
}
