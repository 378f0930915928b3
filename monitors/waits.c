/* waits.c - what each thread of a running job waits for, from its collectors' notes, the ranks' mpi.comms and the paths to PastSet elements. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "waitfor.h"

#define UNIT_PATHS 0x40000000 /* a PATHS thread is a unit of its own: this + its index */
#define NUM_MASK 0xfffffu     /* a collective's number, below its communicator's id */

/* A communicator (or window) as the ranks listed it: who is member i. */
struct comm {
	uint32_t id, size;
	bool window;
	int *members; /* world rank of each member, -1 while no rank said */
};

/* A rank's handle for a communicator, as its latest record says. */
struct handle {
	int rank;
	uint64_t handle;
	uint32_t id;
	bool freed;
};

struct job {
	const es_scope *s;
	const struct wf_look *look;
	int n;                    /* threads */
	struct comm *comms;
	int ncomms;
	struct handle *handles;
	int nhandles;
	int64_t world;            /* MPI_COMM_WORLD's id (every rank's first record), or -1 */
	int *rank;                /* per thread: its MPI rank, or -1 */
	int *first_leaf;          /* per thread */
	const struct es_flight *fl; /* per thread: what it is inside */
	const bool *in;             /* ... if anything */
	int *nthreads_of_rank;    /* indexed by rank, up to maxrank */
	int *rank_first, *by_rank; /* rank r's threads: by_rank[rank_first[r] .. rank_first[r + 1]) */
	int maxrank;
	const char **ended;       /* per thread: why it has ended, or NULL */
};

static struct comm *comm_of(struct job *j, uint32_t id)
{
	for (int i = 0; i < j->ncomms; i++)
		if (j->comms[i].id == id)
			return &j->comms[i];
	return NULL;
}

static int comm_rec(void *arg, const char *segment, const struct es_comm_rec *rec)
{
	struct job *j = arg;
	int rank = mon_rank_of(segment);
	if (rank < 0)
		return 0;
	struct handle *h = NULL;
	for (int i = 0; i < j->nhandles && !h; i++)
		if (j->handles[i].rank == rank && j->handles[i].handle == rec->handle)
			h = &j->handles[i];
	if (!h) {
		if (!(h = realloc(j->handles, sizeof(*h) * (size_t)(j->nhandles + 1))))
			return PS_ENOMEM;
		j->handles = h;
		h = &h[j->nhandles++];
		h->rank = rank;
		h->handle = rec->handle;
	}
	h->id = rec->id;
	h->freed = (rec->k & ES_COMMS_FREED) != 0;
	if (h->freed)
		return 0;
	struct comm *c = comm_of(j, rec->id);
	if (!c) {
		if (!(c = realloc(j->comms, sizeof(*c) * (size_t)(j->ncomms + 1))))
			return PS_ENOMEM;
		j->comms = c;
		c = &c[j->ncomms++];
		c->id = rec->id;
		c->size = rec->size;
		c->window = (rec->k & ES_COMMS_WINDOW) != 0;
		if (!(c->members = malloc(sizeof(int) * (size_t)(rec->size + 1))))
			return PS_ENOMEM;
		for (uint32_t i = 0; i < rec->size; i++)
			c->members[i] = -1;
		if (j->world < 0 && rec->size > 0 && !(rec->k & ES_COMMS_WINDOW))
			j->world = rec->id; /* the first record a rank writes is MPI_COMM_WORLD */
	}
	if (rec->me < c->size)
		c->members[rec->me] = rank;
	return 0;
}

static void comm_words(const struct job *j, const struct comm *c, char *buf, size_t len)
{
	if ((int64_t)c->id == j->world && !c->window) {
		snprintf(buf, len, "MPI_COMM_WORLD");
		return;
	}
	size_t used = (size_t)snprintf(buf, len, "%s %03x (rank%s", c->window ? "window" : "communicator",
				       c->id, c->size == 1 ? "" : "s");
	for (uint32_t i = 0; i < c->size && used < len; i++) {
		if (i == 6 && c->size > 7) {
			used += (size_t)snprintf(buf + used, len - used, " ... %d", c->members[c->size - 1]);
			break;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s %d", i ? "," : "", c->members[i]);
	}
	if (used < len)
		snprintf(buf + used, len - used, ")");
}

/* Whether rank m has reached collective (code, arg), or gone past it. */
static bool reached(const struct job *j, int m, unsigned code, uint32_t arg)
{
	if (m > j->maxrank)
		return false;
	for (int k = j->rank_first[m]; k < j->rank_first[m + 1]; k++) {
		int t = j->by_rank[k];
		if (j->in[t] && es_op_code(j->fl[t].op) == code && j->fl[t].arg == arg)
			return true;
		const struct es_trace *b = &j->look->beat[t];
		if (!es_trace_empty(b) && es_op_matched(b->op) && (b->arg >> 20) == (arg >> 20) &&
		    !(j->in[t] && es_op_matched(j->fl[t].op) && (j->fl[t].arg >> 20) == (arg >> 20)) &&
		    ((b->arg - arg) & NUM_MASK) < (NUM_MASK + 1) / 2)
			return true;
	}
	return false;
}

static const char *direction(unsigned code)
{
	switch (code) {
	case ES_OP_MPI_SEND: case ES_OP_MPI_BSEND: case ES_OP_MPI_SSEND: case ES_OP_MPI_RSEND:
		return "to";
	case ES_OP_MPI_RECV: case ES_OP_MPI_PROBE: case ES_OP_MPI_MPROBE: case ES_OP_MPI_SENDRECV:
	case ES_OP_MPI_SENDRECV_REPLACE: case ES_OP_MPI_IPROBE: case ES_OP_MPI_IMPROBE:
		return "from";
	default:
		return NULL; /* one-sided: on the target */
	}
}

/* An MPI thread inside a call: whom it waits for. */
static int mpi_waits(struct job *j, int t, struct wf_thread *w, int *on, int *non)
{
	const struct es_flight *f = &j->fl[t];
	unsigned code = es_op_code(f->op);
	static char what[300], cname[200];
	char ctext[240] = "";
	/* a streak of fruitless polls waits as a blocking call would */
	const struct es_op_info *info = es_op_info(code);
	const char *in = info && info->kind == ES_KIND_POLL ? "polling" : "in";
	w->what = what;
	w->state = WF_BLIND;
	if (es_op_matched(code)) {
		uint32_t id = f->arg >> 20;
		struct comm *c = comm_of(j, id);
		w->coll = id;
		w->coll_op = code;
		w->coll_num = f->arg & NUM_MASK;
		if (!c) {
			snprintf(what, sizeof(what), "%s %s #%u (its communicator's members are not known)",
				 in, es_op_name(code), w->coll_num);
			return 0;
		}
		comm_words(j, c, cname, sizeof(cname));
		w->coll_name = cname;
		snprintf(what, sizeof(what), "%s %s #%u on %s", in, es_op_name(code), w->coll_num, cname);
		w->all = true;
		for (uint32_t i = 0; i < c->size; i++) {
			int m = c->members[i];
			if (m >= 0 && m != j->rank[t] && !reached(j, m, code, f->arg))
				on[(*non)++] = m;
		}
		if (*non == 0)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 " (every member is inside it)");
		else
			w->state = WF_WAIT;
		return 0;
	}
	const char *dir = direction(code);
	bool tagged = dir != NULL;
	if (!dir)
		dir = "on";
	char tag[32] = "";
	if (tagged)
		snprintf(tag, sizeof(tag), f->arg == 0xffffffffu ? " any tag" : " tag %u", f->arg);
	if (!f->comm) {
		snprintf(what, sizeof(what), "%s %s (whom it waits for is not recorded)", in, es_op_name(code));
		return 0;
	}
	struct comm *c = NULL;
	for (int i = 0; i < j->nhandles; i++)
		if (j->handles[i].rank == j->rank[t] && j->handles[i].handle == f->comm && !j->handles[i].freed)
			c = comm_of(j, j->handles[i].id);
	if (c && !((int64_t)c->id == j->world && !c->window)) {
		char cw[200];
		comm_words(j, c, cw, sizeof(cw));
		snprintf(ctext, sizeof(ctext), " on %s", cw);
	}
	if (f->element == ES_NONE) {
		if (!tagged || !strcmp(dir, "to")) {
			snprintf(what, sizeof(what), "%s %s (whom it waits for is not recorded)", in, es_op_name(code));
			return 0;
		}
		snprintf(what, sizeof(what), "%s %s from any source%s%s", in, es_op_name(code), tag, ctext);
		if (!c)
			return 0;
		for (uint32_t i = 0; i < c->size; i++)
			if (c->members[i] >= 0 && c->members[i] != j->rank[t])
				on[(*non)++] = c->members[i];
		w->state = WF_WAIT;
		w->all = false;
		return 0;
	}
	int peer = c && f->element < c->size ? c->members[f->element] : -1;
	if (peer < 0) {
		snprintf(what, sizeof(what), "%s %s %s %u%s (on a communicator not known)", in,
			 es_op_name(code), dir, f->element, tag);
		return 0;
	}
	if (ctext[0])
		snprintf(what, sizeof(what), "%s %s %s %d (%u%s)%s", in, es_op_name(code), dir, peer,
			 f->element, ctext, tag);
	else
		snprintf(what, sizeof(what), "%s %s %s %d%s", in, es_op_name(code), dir, peer, tag);
	on[(*non)++] = peer;
	w->state = WF_WAIT;
	return 0;
}

/* A PATHS thread inside a PastSet operation: the other threads with a
 * path to the element that may write it (a take or read waits for them),
 * or read it (a write to a full flow element waits for them). */
static int paths_waits(struct job *j, int t, struct wf_thread *w, int *on, int *non)
{
	const struct es_flight *f = &j->fl[t];
	unsigned code = es_op_code(f->op);
	static char what[200], nobody[160];
	const struct es_leaf *me = es_scope_leaf(j->s, f->leaf);
	bool for_writers = code != ES_OP_WRITE;
	snprintf(what, sizeof(what), "in %s on %s", es_op_name(code),
		 me->meta.where[0] ? me->meta.where : "its element");
	snprintf(nobody, sizeof(nobody), "which no other thread %s", for_writers ? "writes" : "reads");
	w->what = what;
	w->nobody = nobody;
	w->state = WF_WAIT;
	w->all = false;
	for (int i = 0; i < es_scope_leaves(j->s); i++) {
		const struct es_leaf *l = es_scope_leaf(j->s, i);
		if (l->thread == t || l->meta.element != me->meta.element || mon_rank_of(l->segment) >= 0)
			continue;
		struct es_trace last;
		unsigned lc = ps_read_latest(l->elem, &last, NULL) == 0 ? es_op_code(last.op) : 0;
		/* never used yet: it may do either */
		bool writes = lc == 0 || lc == ES_OP_WRITE;
		bool reads = lc == 0 || lc == ES_OP_READ || lc == ES_OP_READ_LATEST || lc == ES_OP_TAKE;
		if (for_writers ? writes : reads) {
			bool dup = false;
			for (int k = 0; k < *non && !dup; k++)
				dup = on[k] == UNIT_PATHS + l->thread;
			if (!dup)
				on[(*non)++] = UNIT_PATHS + l->thread;
		}
	}
	return 0;
}

static int by_rank_cmp(const void *a, const void *b, void *rank)
{
	const int *r = rank, x = *(const int *)a, y = *(const int *)b;
	return r[x] != r[y] ? r[x] - r[y] : x - y;
}

static void free_job(struct job *j)
{
	for (int i = 0; i < j->ncomms; i++)
		free(j->comms[i].members);
	free(j->comms);
	free(j->handles);
	free(j->rank);
	free(j->first_leaf);
	free(j->nthreads_of_rank);
	free(j->rank_first);
	free(j->by_rank);
	free(j->ended);
}

/* Which threads have ended: a rank's all, when one of them is inside or
 * past MPI_Finalize; any thread whose process has gone (its segment has
 * no live writer). */
static void find_ended(struct job *j)
{
	const char *prev = NULL;
	int prev_state = 0;
	struct ps_remote_attr ra = { .secret_file = mon_secret_file };
	for (int t = 0; t < j->n; t++) {
		if (j->first_leaf[t] < 0 || j->look->lost[t])
			continue;
		const char *seg = es_scope_leaf(j->s, j->first_leaf[t])->segment;
		if (!prev || strcmp(prev, seg)) {
			prev = seg;
			prev_state = ps_state_at(seg, &ra);
		}
		if (j->in[t] && es_op_code(j->fl[t].op) == ES_OP_MPI_FINALIZE)
			j->ended[t] = "has ended (inside MPI_Finalize)";
		else if (!es_trace_empty(&j->look->beat[t]) &&
			 es_op_code(j->look->beat[t].op) == ES_OP_MPI_FINALIZE)
			j->ended[t] = "has ended (past MPI_Finalize)";
		else if (prev_state == PS_SHM_CLOSED)
			j->ended[t] = "has ended (its process exited)";
		else if (prev_state == PS_SHM_STALE)
			j->ended[t] = "has died (its process ended without closing its trace space)";
	}
	/* after MPI_Finalize no thread of the rank may call MPI */
	for (int r = 0; r <= j->maxrank; r++) {
		const char *why = NULL;
		for (int k = j->rank_first[r]; k < j->rank_first[r + 1] && !why; k++)
			why = j->ended[j->by_rank[k]];
		for (int k = j->rank_first[r]; k < j->rank_first[r + 1] && why; k++)
			j->ended[j->by_rank[k]] = why;
	}
}

int wf_from_scope(wf_graph *g, const es_scope *s, const struct wf_look *look)
{
	if (!g || !s || !look)
		return PS_EINVAL;
	struct job j = { .s = s, .look = look, .n = es_scope_threads(s), .world = -1, .fl = look->fl,
			 .in = look->in };
	int rc = PS_ENOMEM;
	j.rank = calloc((size_t)j.n + 1, sizeof(int));
	j.first_leaf = calloc((size_t)j.n + 1, sizeof(int));
	int *on = NULL;
	if (!j.rank || !j.first_leaf)
		goto out;
	for (int t = 0; t < j.n; t++)
		j.first_leaf[t] = -1;
	for (int i = 0; i < es_scope_leaves(s); i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		if (j.first_leaf[l->thread] < 0) {
			j.first_leaf[l->thread] = i;
			j.rank[l->thread] = mon_rank_of(l->segment);
			if (j.rank[l->thread] > j.maxrank)
				j.maxrank = j.rank[l->thread];
		}
	}
	j.nthreads_of_rank = calloc((size_t)j.maxrank + 2, sizeof(int));
	j.ended = calloc((size_t)j.n + 1, sizeof(char *));
	j.rank_first = calloc((size_t)j.maxrank + 3, sizeof(int));
	j.by_rank = calloc((size_t)j.n + 1, sizeof(int));
	if (!j.nthreads_of_rank || !j.ended || !j.rank_first || !j.by_rank)
		goto out;
	for (int t = 0; t < j.n; t++)
		if (j.rank[t] >= 0)
			j.nthreads_of_rank[j.rank[t]]++;
	/* each rank's threads together, for the collectives' look at every member */
	for (int r = 0; r <= j.maxrank; r++)
		j.rank_first[r + 1] = j.rank_first[r] + j.nthreads_of_rank[r];
	for (int t = 0, k = 0; t < j.n; t++)
		if (j.rank[t] >= 0)
			j.by_rank[k++] = t;
	qsort_r(j.by_rank, (size_t)(j.rank_first[j.maxrank + 1]), sizeof(int), by_rank_cmp, j.rank);
	if ((rc = mon_comms(s, comm_rec, &j)))
		goto out;
	size_t most = (size_t)j.n + (size_t)j.maxrank + 2; /* units one thread may wait for */
	for (int i = 0; i < j.ncomms; i++)
		most += j.comms[i].size;
	rc = PS_ENOMEM;
	if (!(on = malloc(sizeof(int) * most)))
		goto out;
	rc = 0;
	find_ended(&j);
	/* every thread, in the scope's order: graph index = scope thread */
	for (int t = 0; t < j.n && !rc; t++) {
		int r = j.rank[t], non = 0;
		char label[PS_NAME_MAX + 16];
		if (r >= 0 && j.nthreads_of_rank[r] == 1)
			snprintf(label, sizeof(label), "rank%d", r);
		else
			snprintf(label, sizeof(label), "%s", es_scope_thread(s, t));
		struct wf_thread w = { .name = es_scope_thread(s, t), .label = label,
				       .unit = r >= 0 ? r : UNIT_PATHS + t, .coll = -1 };
		const char *ended = j.ended[t];
		const struct es_trace *b = &look->beat[t];
		if (look->lost[t] || j.first_leaf[t] < 0) {
			w.state = WF_UNSEEN;
			w.what = "(its tuple server did not answer)";
		} else if (ended) {
			w.state = WF_ENDED;
			w.what = ended;
			w.secs = j.in[t] ? j.fl[t].since_ns / 1e9 : look->idle_s[t];
		} else if (look->progressed[t]) {
			w.state = WF_PROGRESS;
			w.what = "progresses";
		} else if (j.in[t]) {
			w.secs = j.fl[t].since_ns / 1e9;
			if (es_op_code(j.fl[t].op) >= ES_OP_MPI_INIT)
				rc = mpi_waits(&j, t, &w, on, &non);
			else
				rc = paths_waits(&j, t, &w, on, &non);
		} else if (es_trace_empty(b)) {
			w.state = WF_UNSEEN;
			w.what = "(no event yet)";
		} else {
			w.state = WF_COMPUTE;
			w.what = r >= 0 ? "computes (not in MPI)" : "computes (between operations)";
			w.secs = look->idle_s[t];
		}
		if (rc)
			break;
		int k = wf_add(g, &w);
		if (k < 0) {
			rc = k;
			break;
		}
		for (int i = 0; i < non && !rc && w.state == WF_WAIT; i++)
			rc = wf_wait(g, k, on[i]);
	}
out:
	free(on);
	free_job(&j);
	return rc;
}
