/* waits_rules.c - the rules a wait is judged by (waits.c's comment: R a receive, S a send, C and M a collective), against what the ranks' boards say, and the words that name what it waits for. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "waits_int.h"

/* --- words -------------------------------------------------------------------------------- */

void wr_comm_words(const struct es_mpi_comm *c, char *buf, size_t len)
{
	if (!c) {
		snprintf(buf, len, "a communicator not known");
		return;
	}
	if (c->flags & ES_COMMS_WORLD) {
		snprintf(buf, len, "MPI_COMM_WORLD");
		return;
	}
	uint32_t size = c->size[0] + c->size[1];
	size_t used = (size_t)snprintf(buf, len, "%s %06llx (rank%s", c->flags & ES_COMMS_WINDOW ? "window" :
				       c->flags & ES_COMMS_INTER ? "intercommunicator" : "communicator",
				       (unsigned long long)(c->id & 0xffffff), size == 1 ? "" : "s");
	for (uint32_t i = 0, k = 0; i < size && used < len; i++, k++) {
		int side = i < c->size[0] ? 0 : 1, r = side ? (int)(i - c->size[0]) : (int)i;
		if (k == 6 && size > 7) {
			used += (size_t)snprintf(buf + used, len - used, " ... %d",
						 c->members[c->size[1] ? 1 : 0][(c->size[1] ? c->size[1] : c->size[0]) - 1]);
			break;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s %d", i ? "," : "",
					 side && r == 0 ? " |" : "", c->members[side][r]);
	}
	if (used < len)
		snprintf(buf + used, len - used, ")");
}

/* " on COMM" unless it is MPI_COMM_WORLD */
void wr_on_comm(const struct es_mpi_comm *c, char *buf, size_t len)
{
	char w[200];
	if (c && (c->flags & ES_COMMS_WORLD)) {
		*buf = 0;
		return;
	}
	wr_comm_words(c, w, sizeof(w));
	snprintf(buf, len, " on %s", w);
}

/* A peer's world rank, and its rank in the communicator where that differs. */
void wr_peer_words(const struct es_mpi_comm *c, uint32_t world, char *buf, size_t len)
{
	if (world == ES_NONE) {
		snprintf(buf, len, "any source");
		return;
	}
	int there = -1;
	for (int side = 0; c && side < 2 && there < 0; side++)
		for (uint32_t i = 0; i < c->size[side] && there < 0; i++)
			if (c->members[side][i] == (int)world)
				there = (int)i;
	if (there >= 0 && there != (int)world && !(c->flags & ES_COMMS_WORLD))
		snprintf(buf, len, "%u (rank %d there)", world, there);
	else
		snprintf(buf, len, "%u", world);
}

void wr_tag_words(uint32_t tag, char *buf, size_t len)
{
	if (tag == ES_NONE)
		snprintf(buf, len, "any tag");
	else
		snprintf(buf, len, "tag %u", tag);
}

/* --- clauses --------------------------------------------------------------------------------- */

void wr_clauses_start(struct job *j)
{
	j->ncl = 0;
	j->ntg = 0;
	j->ncolls = 0;
}

struct clause *wr_clause_new(struct job *j, enum clause_kind kind, bool all)
{
	if (j->ncl == (int)(sizeof(j->cl) / sizeof(j->cl[0])))
		return NULL; /* past that many parts a wait is judged by its first ones */
	struct clause *c = &j->cl[j->ncl++];
	*c = (struct clause){ kind, all, j->ntg, 0 };
	return c;
}

int wr_target_add(struct job *j, struct clause *c, int unit, int gate)
{
	if (c->n >= MAX_TARGETS)
		return 0;
	if (j->ntg == j->captg) {
		int cap = j->captg ? j->captg * 2 : 64;
		struct target *t = realloc(j->tg, sizeof(*t) * (size_t)cap);
		if (!t)
			return PS_ENOMEM;
		j->tg = t;
		j->captg = cap;
	}
	j->tg[j->ntg++] = (struct target){ unit, gate };
	c->n++;
	return 0;
}

/* --- what the ranks say ------------------------------------------------------------------------ */

/* The communicator a thread's full serial names (a note's, a board's):
 * the one it was given to, freed since or not (rule F below). */
static const struct es_mpi_comm *comm_now(const struct job *j, int rank, uint32_t serial)
{
	return es_mpi_comm_ever(j->mpi, rank, serial, NULL);
}

static bool tag_fits(uint32_t want, uint32_t tag)
{
	return want == ES_NONE || tag == ES_NONE || want == tag;
}

bool wr_is_recv_op(unsigned op)
{
	unsigned c = es_op_code(op);
	return c == ES_OP_MPI_IRECV || c == ES_OP_MPI_RECV_INIT || c == ES_OP_MPI_IMRECV;
}

/* Open receive requests of rank r that a message from src with tag on c
 * could meet, every thread's, posted (or last started) no later than upto:
 * MPI matches a message with the receive posted first (rule R). */
int wr_open_receives(struct job *j, int r, uint32_t src, uint32_t tag, uint64_t id, uint64_t upto)
{
	int n = 0;
	for (int k = j->rank_first[r]; k < j->rank_first[r + 1]; k++) {
		const struct es_req_rec *q;
		int nq = es_mpi_requests(j->mpi, j->by_rank[k], &q);
		for (int i = 0; i < nq; i++) {
			if (!wr_is_recv_op(q[i].op) || !(q[i].state & ES_REQ_ACTIVE) || (q[i].state & ES_REQ_CANCELLED) ||
			    q[i].start > upto)
				continue;
			if ((q[i].peer != ES_NONE && src != ES_NONE && q[i].peer != src) || !tag_fits(q[i].arg, tag))
				continue;
			const struct es_mpi_comm *c = comm_now(j, r, q[i].serial);
			if (c && c->id == id)
				n++;
		}
	}
	return n;
}

/* Receives rank d posted that a message from s with tag on c would meet:
 * open requests, and its threads inside a blocking receive or probe. */
static int posted_receives(struct job *j, int d, uint32_t s, uint32_t tag, uint64_t id)
{
	int n = wr_open_receives(j, d, s, tag, id, UINT64_MAX);
	for (int k = j->rank_first[d]; k < j->rank_first[d + 1]; k++) {
		int t = j->by_rank[k];
		if (!j->in[t])
			continue;
		const struct es_flight *f = &j->fl[t];
		unsigned code = es_op_code(f->op);
		bool recv = code == ES_OP_MPI_RECV || code == ES_OP_MPI_PROBE || code == ES_OP_MPI_MPROBE ||
			    code == ES_OP_MPI_IPROBE || code == ES_OP_MPI_IMPROBE || code == ES_OP_MPI_SENDRECV ||
			    code == ES_OP_MPI_SENDRECV_REPLACE;
		if (!recv || (f->element != ES_NONE && f->element != s) || !tag_fits((uint32_t)f->arg, tag))
			continue;
		const struct es_mpi_comm *c = comm_now(j, d, (uint32_t)f->comm);
		if (c && c->id == id)
			n++;
	}
	return n;
}

/* Messages from s to r on c with tag not received yet; false: not known. */
static bool in_flight(struct job *j, int s, int r, uint64_t id, uint32_t tag, int64_t *n)
{
	uint64_t sent, recvd;
	bool known = es_mpi_messages(j->mpi, s, r, id, tag, &sent, &recvd);
	*n = (int64_t)sent - (int64_t)recvd;
	return known;
}

/* The world ranks a receive from any source on c could hear from. */
static int senders_of(const struct es_mpi_comm *c, int side, const int **out)
{
	int other = (c->flags & ES_COMMS_INTER) ? 1 - side : side;
	*out = c->members[other];
	return (int)c->size[other];
}

/* A receive (or probe) by rank r from src with tag on c: a message it
 * could match is on its way, or it waits for its sender(s). */
int wr_recv_clause(struct job *j, int r, uint32_t src, uint32_t tag, const struct es_mpi_comm *c, int side,
		       int need)
{
	if (!c)
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	const int *who = NULL;
	int nwho = 1;
	int one = (int)src;
	if (src == ES_NONE)
		nwho = senders_of(c, side, &who);
	else
		who = &one;
	int64_t avail = 0;
	bool known = true;
	for (int i = 0; i < nwho; i++) {
		int64_t n;
		if (who[i] < 0 || who[i] > j->maxrank) {
			/* rule U: a member not seen yet (it has not listed the
			 * communicator, or started) may be the one that sends */
			known = false;
			continue;
		}
		known &= in_flight(j, who[i], r, c->id, tag, &n);
		avail += n > 0 ? n : 0;
	}
	if (avail >= need)
		return wr_clause_new(j, CL_SAT, false) ? 0 : 0;
	if (!known)
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	struct clause *cl = wr_clause_new(j, CL_WAIT, false);
	/* from any source: not from itself, when its only thread is the one
	 * that waits (it cannot send meanwhile) */
	bool alone = j->rank_first[r + 1] - j->rank_first[r] == 1;
	for (int i = 0; cl && i < nwho; i++)
		if (who[i] >= 0 && !(src == ES_NONE && who[i] == r && alone) && wr_target_add(j, cl, who[i], -1))
			return PS_ENOMEM;
	return 0;
}

/* A send by rank r to d with tag on c that has not completed: its receiver
 * posted a receive that takes it, or it waits for the receiver. */
int wr_send_clause(struct job *j, int r, uint32_t d, uint32_t tag, const struct es_mpi_comm *c)
{
	if (!c || d == ES_NONE || (int)d > j->maxrank)
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	int64_t unreceived = 0;
	if (!in_flight(j, r, (int)d, c->id, tag, &unreceived))
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	/* rule S: this send is counted from its start, so with none of the
	 * channel's messages unreceived it has been received itself; else the
	 * unreceived ahead of it are taken first by the receives posted */
	if (unreceived <= 0 || posted_receives(j, (int)d, (uint32_t)r, tag, c->id) > unreceived - 1)
		return wr_clause_new(j, CL_SAT, false) ? 0 : 0;
	struct clause *cl = wr_clause_new(j, CL_WAIT, false);
	return cl ? wr_target_add(j, cl, (int)d, -1) : 0;
}

/* How a collective's member waits for the others not there yet.  Only
 * what every implementation must do is assumed: a scan's rank may wait for
 * higher ranks too (MPICH's and Open MPI's recursive doubling exchange
 * with both sides; a linear one's send to the next rank waits for it when
 * the message goes by rendezvous), so a scan waits as most do, for all. */
enum coll_wait { CW_ALL = 1, CW_ANY, CW_ROOT };

static enum coll_wait coll_wait_of(unsigned code, bool is_root)
{
	switch (code) {
	case ES_OP_MPI_BCAST: case ES_OP_MPI_IBCAST: case ES_OP_MPI_SCATTER: case ES_OP_MPI_ISCATTER:
	case ES_OP_MPI_SCATTERV: case ES_OP_MPI_ISCATTERV:
		return is_root ? CW_ANY : CW_ROOT;
	case ES_OP_MPI_REDUCE: case ES_OP_MPI_IREDUCE: case ES_OP_MPI_GATHER: case ES_OP_MPI_IGATHER:
	case ES_OP_MPI_GATHERV: case ES_OP_MPI_IGATHERV:
		return is_root ? CW_ALL : CW_ANY;
	case ES_OP_MPI_NEIGHBOR_ALLGATHER: case ES_OP_MPI_NEIGHBOR_ALLGATHERV: case ES_OP_MPI_NEIGHBOR_ALLTOALL:
	case ES_OP_MPI_NEIGHBOR_ALLTOALLV: case ES_OP_MPI_NEIGHBOR_ALLTOALLW: case ES_OP_MPI_INEIGHBOR_ALLGATHER:
	case ES_OP_MPI_INEIGHBOR_ALLGATHERV: case ES_OP_MPI_INEIGHBOR_ALLTOALL: case ES_OP_MPI_INEIGHBOR_ALLTOALLV:
	case ES_OP_MPI_INEIGHBOR_ALLTOALLW: case ES_OP_MPI_COMM_FREE: case ES_OP_MPI_WIN_FREE:
		return CW_ANY; /* its neighbours only; freeing need not meet anyone */
	default:
		return CW_ALL;
	}
}


/* Whether rank m is inside collective number num of communicator id now,
 * and which operation, with which root: a blocking one its notes say, or a
 * nonblocking one open on its boards. */
static bool inside_coll(struct job *j, int m, uint64_t id, uint32_t num, unsigned *op, uint32_t *root)
{
	for (int k = j->rank_first[m]; k < j->rank_first[m + 1]; k++) {
		int t = j->by_rank[k];
		const struct es_flight *f = &j->fl[t];
		const struct es_mpi_comm *c;
		if (j->in[t] && wr_is_coll_code(es_op_code(f->op)) && (uint32_t)f->arg == num &&
		    (c = comm_now(j, m, (uint32_t)f->comm)) && c->id == id) {
			*op = es_op_code(f->op), *root = f->element;
			return true;
		}
		const struct es_req_rec *q;
		int nq = es_mpi_requests(j->mpi, t, &q);
		for (int i = 0; i < nq; i++)
			if ((q[i].state & ES_REQ_ACTIVE) && wr_is_coll_code(q[i].op) && q[i].arg == num &&
			    (c = comm_now(j, m, q[i].serial)) && c->id == id) {
				*op = es_op_code(q[i].op), *root = q[i].peer;
				return true;
			}
	}
	return false;
}

/* Member m went past collective num on c having called op there. */
static void went_past(struct job *j, int m, const struct es_mpi_comm *c, uint32_t num, unsigned op, uint32_t root)
{
	for (int i = 0; i < j->npast; i++)
		if (j->past[i].rank == m && j->past[i].comm == (int64_t)(c->id & INT64_MAX) && j->past[i].num == num)
			return;
	if (j->npast == j->cappast) {
		int cap = j->cappast ? j->cappast * 2 : 8;
		struct past *p = realloc(j->past, sizeof(*p) * (size_t)cap);
		if (!p)
			return; /* then only the wait is known, not why */
		j->past = p;
		j->cappast = cap;
	}
	struct past *p = &j->past[j->npast++];
	*p = (struct past){ m, (int64_t)(c->id & INT64_MAX), op, num, root, "" };
	wr_comm_words(c, p->name, sizeof(p->name));
}

/* Whether member m is not in this collective (number num on c, op code,
 * root) for this rank's purpose: it has not begun it, or made something
 * else as that number (a mismatch: it never comes), inside it still or
 * gone past it. */
static bool not_there(struct job *j, int m, const struct es_mpi_comm *c, uint32_t num, unsigned code, uint32_t root)
{
	int64_t begun = es_mpi_calls(j->mpi, m, c->id);
	if (begun < 0)
		return false; /* not known: taken to be there */
	if (begun <= (int64_t)num)
		return true;
	unsigned op;
	uint32_t r;
	bool inside = inside_coll(j, m, c->id, num, &op, &r);
	if (!inside && !es_mpi_coll_at(j->mpi, m, c->id, num, &op, &r))
		return false;
	bool roots = !(c->flags & ES_COMMS_INTER) && root != ES_NONE && r != ES_NONE;
	bool other = op != code || (roots && r != root);
	if (other && !inside)
		went_past(j, m, c, num, op, roots ? r : ES_NONE);
	return other;
}

/* The members gone past, as one of their ranks' threads (one inside MPI
 * if any), now that every thread is in the graph. */
int wr_add_past(struct job *j)
{
	for (int i = 0; i < j->npast; i++) {
		const struct past *p = &j->past[i];
		if (p->rank < 0 || p->rank > j->maxrank)
			continue;
		int first = j->rank_first[p->rank], t = -1;
		for (int k = first; k < j->rank_first[p->rank + 1] && t < 0; k++)
			if (j->in[j->by_rank[k]])
				t = j->by_rank[k];
		if (t < 0 && first < j->rank_first[p->rank + 1])
			t = j->by_rank[first];
		int rc = t >= 0 ? wf_coll_past(j->g, t, p->comm, p->op, p->num, p->root, p->name) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* The gate of collective number num on c: every member not there yet. */
static int hub_of(struct job *j, const struct es_mpi_comm *c, uint32_t num, unsigned code, int *gate)
{
	for (int i = 0; i < j->nhubs; i++)
		if (j->hubs[i].id == c->id && j->hubs[i].num == num) {
			*gate = j->hubs[i].gate;
			return 0;
		}
	char label[200], cw[160];
	wr_comm_words(c, cw, sizeof(cw));
	snprintf(label, sizeof(label), "%s #%u on %s: those not there yet", es_op_name(code), num, cw);
	int k = wf_gate(j->g, true, label);
	if (k < 0)
		return k;
	for (int side = 0; side < 2; side++)
		for (uint32_t i = 0; i < c->size[side]; i++) {
			int m = c->members[side][i];
			if (m >= 0 && not_there(j, m, c, num, code, ES_NONE)) {
				int rc = wf_gate_wait(j->g, k, m);
				if (rc)
					return rc;
			}
		}
	if (j->nhubs == j->caphubs) {
		int cap = j->caphubs ? j->caphubs * 2 : 16;
		struct hub *h = realloc(j->hubs, sizeof(*h) * (size_t)cap);
		if (!h)
			return PS_ENOMEM;
		j->hubs = h;
		j->caphubs = cap;
	}
	j->hubs[j->nhubs++] = (struct hub){ c->id, num, k };
	*gate = k;
	return 0;
}

/* A member (rank r, thread t) inside collective num on c: it waits for
 * those not there yet, as the operation needs them. */
int wr_coll_clause(struct job *j, int t, int r, unsigned code, const struct es_mpi_comm *c, uint32_t num,
		       uint32_t root, uint32_t bytes)
{
	if (!c)
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	if (j->ncolls < (int)(sizeof(j->colls) / sizeof(j->colls[0]))) {
		j->colls[j->ncolls].comm = (int64_t)(c->id & INT64_MAX);
		j->colls[j->ncolls].op = code;
		j->colls[j->ncolls].num = num;
		j->colls[j->ncolls].root = (c->flags & ES_COMMS_INTER) ? ES_NONE : root;
		j->colls[j->ncolls].bytes = (c->flags & ES_COMMS_INTER) ? ES_NONE : bytes;
		wr_comm_words(c, j->colls[j->ncolls].name, sizeof(j->colls[j->ncolls].name));
		j->ncolls++;
	}
	int rc;
	(void)t;
	enum coll_wait how = coll_wait_of(code, root == (uint32_t)r);
	int late[8], nlate = 0, total = 0;
	bool unseen = false;
	for (int side = 0; side < 2; side++)
		for (uint32_t i = 0; i < c->size[side]; i++) {
			int m = c->members[side][i];
			/* rule U: a member not seen yet, or whose count is not known */
			unseen |= how == CW_ANY && (m < 0 || (m != r && es_mpi_calls(j->mpi, m, c->id) < 0));
			if (m < 0 || m == r || !not_there(j, m, c, num, code, root))
				continue;
			if (how == CW_ROOT && (uint32_t)m != root)
				continue;
			total++;
			if (nlate < 8)
				late[nlate++] = m;
		}
	if (!total)
		return wr_clause_new(j, CL_SAT, false) ? 0 : 0;
	if (how == CW_ANY && unseen) /* any one will do: it may be the one not seen */
		return wr_clause_new(j, CL_UNKNOWN, false) ? 0 : 0;
	struct clause *cl = wr_clause_new(j, CL_WAIT, how != CW_ANY);
	if (!cl)
		return 0;
	/* one gate shared by every member inside it, when all wait alike: a
	 * rooted one's root alone waits for all, and for those that gave
	 * another root too, which a shared gate would not see */
	if (how == CW_ALL && total > 1 && root == ES_NONE) {
		int gate;
		if ((rc = hub_of(j, c, num, code, &gate)))
			return rc;
		return wr_target_add(j, cl, -1, gate);
	}
	if (total <= nlate) {
		for (int i = 0; i < nlate; i++)
			if ((rc = wr_target_add(j, cl, late[i], -1)))
				return rc;
		return 0;
	}
	for (int side = 0; side < 2; side++)
		for (uint32_t i = 0; i < c->size[side]; i++) {
			int m = c->members[side][i];
			if (m >= 0 && m != r && not_there(j, m, c, num, code, root) && (rc = wr_target_add(j, cl, m, -1)))
				return rc;
		}
	return 0;
}

bool wr_is_coll_code(unsigned code)
{
	const struct es_op_info *i = es_op_info(code);
	return i && (i->kind == ES_KIND_COLL || i->kind == ES_KIND_ICOLL);
}
