/* mpiview.c - what an MPI job's ranks say of themselves, read once and then as it grows: their communicators, collectives begun, open requests, messages counted. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "scopes/scopes.h"

/*
 * The view reads each rank's mpi.comms from where it last stopped (the
 * live records come round again in the ring, so a reader that fell behind
 * starts from the oldest held and misses none in force), and the boards
 * (mpi.calls, mpi.reqsK, mpi.chansK) when asked, once per refresh.
 */

/* A rank's record of a serial: what it named from `at` on. */
struct naming {
	uint32_t serial;
	uint32_t flags;
	int comm;         /* index into the view's comms */
	uint64_t at;      /* ns: when it was made or met */
	uint64_t freed;   /* ns: when freed; UINT64_MAX while in force */
};

struct thread_boards {
	int thread;       /* the scope's */
	ps_elem *reqs, *chans, *sites;
	struct es_site_rec *site_cache;
	struct es_req_rec *req_cache;
	int nreq;
	struct es_chan_rec *chan_cache;
	int nchan;
	bool chan_full;
	uint64_t read_at; /* the view's epoch when the caches were read */
};

struct rank {
	int rank;
	char segment[ES_WHERE_MAX];
	es_space *sp;
	bool borrowed;    /* sp is the scope's (its leaf's), not ours to destroy */
	ps_elem *comms, *calls, *modules, *regions, *files;
	struct es_module_rec *module_cache;
	struct es_region_rec *region_cache;
	struct es_file_rec *file_cache;
	uint64_t cursor;  /* the next mpi.comms record to read */
	struct naming *names;
	int nnames, capnames;
	struct thread_boards *tb;
	int ntb;
};

struct comm {
	struct es_mpi_comm pub;
	int *members[2];
};

struct es_mpi {
	struct rank **by_rank; /* [rank], NULL where no space was found */
	int nranks;
	struct comm *comms;
	int ncomms, capcomms;
	struct base_tab comm_ix; /* id -> its index in comms */
	int nthreads;
	int *thread_rank, *thread_tb; /* per scope thread: its rank, its boards' index there */
	uint64_t epoch;
};

/* Rank rank's, or NULL where no space was found for it. */
static struct rank *rank_at(const es_mpi *m, int rank)
{
	return m && rank >= 0 && rank < m->nranks ? m->by_rank[rank] : NULL;
}

/* --- communicators ---------------------------------------------------------------- */

static int comm_find(const es_mpi *m, uint64_t id)
{
	const uint32_t *x = base_tab_get(&m->comm_ix, id);
	return x ? (int)*x : -1;
}

static int group_room(struct comm *c, int side, uint32_t size)
{
	if (c->pub.size[side] >= size && c->members[side])
		return 0;
	int *mm = realloc(c->members[side], sizeof(int) * (size_t)(size + 1));
	if (!mm)
		return PS_ENOMEM;
	for (uint32_t i = c->members[side] ? c->pub.size[side] : 0; i <= size; i++)
		mm[i] = -1;
	c->members[side] = mm;
	c->pub.size[side] = size;
	c->pub.members[side] = mm;
	return 0;
}

/* The communicator with this id, made if new. */
static int comm_get(es_mpi *m, uint64_t id, uint32_t flags)
{
	int c = comm_find(m, id);
	if (c >= 0)
		return c;
	if (m->ncomms == m->capcomms) {
		int cap = m->capcomms ? m->capcomms * 2 : 16;
		struct comm *cc = realloc(m->comms, sizeof(*cc) * (size_t)cap);
		if (!cc)
			return PS_ENOMEM;
		m->comms = cc;
		m->capcomms = cap;
		for (int i = 0; i < m->ncomms; i++) /* the members moved with them */
			for (int s = 0; s < 2; s++)
				cc[i].pub.members[s] = cc[i].members[s];
	}
	if (base_tab_set32(&m->comm_ix, id, (uint32_t)m->ncomms) < 0)
		return PS_ENOMEM;
	struct comm *n = &m->comms[m->ncomms];
	memset(n, 0, sizeof(*n));
	n->pub.id = id;
	n->pub.flags = flags & (ES_COMMS_WINDOW | ES_COMMS_INTER | ES_COMMS_WORLD);
	return m->ncomms++;
}

static int take_record(es_mpi *m, struct rank *r, const struct es_comm_rec *rec)
{
	uint64_t at = es_clock_ns(es_space_clock(r->sp), rec->stamp);
	if (rec->flags & ES_COMMS_FREED) {
		for (int i = r->nnames; i-- > 0;)
			if (r->names[i].serial == rec->serial && r->names[i].freed == UINT64_MAX) {
				r->names[i].freed = at;
				break;
			}
		return 0;
	}
	if (rec->flags & ES_COMMS_AGAIN) /* known already, unless the first record rotated out */
		for (int i = r->nnames; i-- > 0;)
			if (r->names[i].serial == rec->serial && r->names[i].freed == UINT64_MAX)
				return 0;
	int c = comm_get(m, rec->id, rec->flags);
	if (c < 0)
		return c;
	int side = (rec->flags & ES_COMMS_SIDE1) ? 1 : 0;
	struct comm *cm = &m->comms[c];
	cm->pub.flags |= rec->flags & (ES_COMMS_INTER | ES_COMMS_WINDOW | ES_COMMS_WORLD);
	if (rec->size > (1u << 24) || group_room(cm, side, rec->size))
		return PS_ENOMEM;
	if (rec->me < rec->size)
		cm->members[side][rec->me] = r->rank;
	if (r->nnames == r->capnames) {
		int cap = r->capnames ? r->capnames * 2 : 16;
		struct naming *nn = realloc(r->names, sizeof(*nn) * (size_t)cap);
		if (!nn)
			return PS_ENOMEM;
		r->names = nn;
		r->capnames = cap;
	}
	r->names[r->nnames++] = (struct naming){ rec->serial, rec->flags, c, at, UINT64_MAX };
	return 0;
}

/* The rank's records written since the last read. */
static int read_comms(es_mpi *m, struct rank *r)
{
	if (!r->comms)
		return 0;
	struct es_comm_rec buf[64];
	for (;;) {
		uint64_t oldest = 0;
		int k = ps_read_range(r->comms, r->cursor, 64, buf, &oldest);
		if (k == PS_EDISCARDED) {
			r->cursor = oldest; /* behind the ring: what is in force comes round again */
			continue;
		}
		if (k <= 0)
			return 0; /* all read; or a lost server: next time */
		for (int i = 0; i < k; i++) {
			int rc = take_record(m, r, &buf[i]);
			if (rc)
				return rc;
		}
		r->cursor += (uint64_t)k;
	}
}

/* --- opening ---------------------------------------------------------------------- */

static int open_boards(struct rank *r, const es_scope *s, int thread_of_leaf, const char *trace)
{
	char name[PS_NAME_MAX + 1];
	struct thread_boards *tb = realloc(r->tb, sizeof(*tb) * (size_t)(r->ntb + 1));
	if (!tb)
		return PS_ENOMEM;
	r->tb = tb;
	tb = &tb[r->ntb++];
	memset(tb, 0, sizeof(*tb));
	tb->thread = thread_of_leaf;
	tb->read_at = UINT64_MAX;
	ps_server *srv = es_space_server(r->sp);
	es_mpi_board_name(name, sizeof(name), trace, ES_REQS_ELEMENT);
	if (*name && !ps_elem_open(srv, name, sizeof(struct es_req_rec), &tb->reqs))
		ps_elem_set_layout(tb->reqs, ES_REQS_LAYOUT);
	es_mpi_board_name(name, sizeof(name), trace, ES_CHANS_ELEMENT);
	if (*name && !ps_elem_open(srv, name, sizeof(struct es_chan_rec), &tb->chans))
		ps_elem_set_layout(tb->chans, ES_CHANS_LAYOUT);
	es_mpi_board_name(name, sizeof(name), trace, ES_SITES_ELEMENT);
	if (*name && !ps_elem_open(srv, name, sizeof(struct es_site_rec), &tb->sites))
		ps_elem_set_layout(tb->sites, ES_SITES_LAYOUT);
	(void)s;
	return 0;
}

static int open_rank(es_mpi *m, const es_scope *s, const struct es_leaf *l, const struct ps_remote_attr *ra)
{
	if (l->rank >= m->nranks) {
		struct rank **br = realloc(m->by_rank, sizeof(*br) * (size_t)(l->rank + 1));
		if (!br)
			return PS_ENOMEM;
		for (int i = m->nranks; i <= l->rank; i++)
			br[i] = NULL;
		m->by_rank = br;
		m->nranks = l->rank + 1;
	}
	if (m->by_rank[l->rank])
		return 0;
	struct rank *r = calloc(1, sizeof(*r));
	if (!r)
		return PS_ENOMEM;
	r->rank = l->rank;
	snprintf(r->segment, sizeof(r->segment), "%s", l->segment);
	/* the scope's own mapping: what it attached to, kept however soon the
	 * job ends and removes its segments (a short job's ranks and
	 * communicators were lost to a recorder that looked again by name) */
	int rc = 0;
	if (l->space)
		r->sp = l->space, r->borrowed = true;
	else
		rc = es_space_open_at(l->segment, ra, &r->sp);
	if (rc) {
		free(r);
		return rc == PS_ENOMEM ? rc : 0; /* gone: the rank is known by its leaves only */
	}
	ps_server *srv = es_space_server(r->sp);
	if (!ps_elem_open(srv, ES_COMMS_ELEMENT, sizeof(struct es_comm_rec), &r->comms))
		ps_elem_set_layout(r->comms, ES_COMMS_LAYOUT);
	if (!ps_elem_open(srv, ES_CALLS_ELEMENT, sizeof(struct es_calls_rec), &r->calls))
		ps_elem_set_layout(r->calls, ES_CALLS_LAYOUT);
	if (!ps_elem_open(srv, ES_MODULES_ELEMENT, sizeof(struct es_module_rec), &r->modules))
		ps_elem_set_layout(r->modules, ES_MODULES_LAYOUT);
	m->by_rank[l->rank] = r;
	(void)s;
	return 0;
}

int es_mpi_open(const es_scope *s, es_mpi **out)
{
	if (!s || !out)
		return PS_EINVAL;
	struct ps_remote_attr attr = { .secret_file = es_scope_secret_file(s) }, *ra = &attr;
	es_mpi *m = calloc(1, sizeof(*m));
	if (!m)
		return PS_ENOMEM;
	m->nthreads = es_scope_threads(s);
	m->thread_rank = malloc(sizeof(int) * (size_t)(m->nthreads + 1));
	m->thread_tb = malloc(sizeof(int) * (size_t)(m->nthreads + 1));
	int rc = m->thread_rank && m->thread_tb ? 0 : PS_ENOMEM;
	for (int t = 0; t < m->nthreads && !rc; t++)
		m->thread_rank[t] = m->thread_tb[t] = -1;
	for (int i = 0; i < es_scope_leaves(s) && !rc; i++) {
		const struct es_leaf *l = es_scope_leaf(s, i);
		if (l->rank < 0 || m->thread_rank[l->thread] >= 0)
			continue;
		if ((rc = open_rank(m, s, l, ra)) || !m->by_rank[l->rank])
			continue;
		struct rank *r = m->by_rank[l->rank];
		m->thread_rank[l->thread] = l->rank;
		m->thread_tb[l->thread] = r->ntb;
		rc = open_boards(r, s, l->thread, l->meta.trace);
	}
	if (!rc)
		rc = es_mpi_refresh(m);
	if (rc) {
		es_mpi_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

void es_mpi_close(es_mpi *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nranks; i++) {
		struct rank *r = m->by_rank[i];
		if (!r)
			continue;
		for (int k = 0; k < r->ntb; k++) {
			ps_elem_close(r->tb[k].reqs);
			ps_elem_close(r->tb[k].chans);
			ps_elem_close(r->tb[k].sites);
			free(r->tb[k].site_cache);
			free(r->tb[k].req_cache);
			free(r->tb[k].chan_cache);
		}
		free(r->tb);
		free(r->names);
		ps_elem_close(r->comms);
		ps_elem_close(r->calls);
		ps_elem_close(r->modules);
		free(r->module_cache);
		ps_elem_close(r->regions);
		free(r->region_cache);
		ps_elem_close(r->files);
		free(r->file_cache);
		if (!r->borrowed)
			es_space_destroy(r->sp);
		free(r);
	}
	for (int c = 0; c < m->ncomms; c++)
		free(m->comms[c].members[0]), free(m->comms[c].members[1]);
	free(m->comms);
	base_tab_free(&m->comm_ix);
	free(m->by_rank);
	free(m->thread_rank);
	free(m->thread_tb);
	free(m);
}

int es_mpi_refresh(es_mpi *m)
{
	if (!m)
		return PS_EINVAL;
	m->epoch++;
	for (int i = 0; i < m->nranks; i++) {
		int rc = m->by_rank[i] ? read_comms(m, m->by_rank[i]) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* --- asking ------------------------------------------------------------------------ */

int es_mpi_ranks(const es_mpi *m)
{
	return m ? m->nranks : 0;
}

int es_mpi_rank_of(const es_mpi *m, int thread)
{
	return m && thread >= 0 && thread < m->nthreads ? m->thread_rank[thread] : -1;
}

int es_mpi_ncomms(const es_mpi *m)
{
	return m ? m->ncomms : 0;
}

const struct es_mpi_comm *es_mpi_comm_at(const es_mpi *m, int i)
{
	return m && i >= 0 && i < m->ncomms ? &m->comms[i].pub : NULL;
}

const struct es_mpi_comm *es_mpi_comm(const es_mpi *m, uint64_t id)
{
	int c = m ? comm_find(m, id) : -1;
	return c >= 0 ? &m->comms[c].pub : NULL;
}

const struct es_mpi_comm *es_mpi_comm_of(const es_mpi *m, int rank, uint32_t serial, uint32_t mask,
					 uint64_t at_ns, int *side)
{
	struct rank *r = rank_at(m, rank);
	if (!r || serial == ES_NONE)
		return NULL;
	/* the latest naming of those bits made no later than at_ns; failing
	 * that the first made after it (met by the very call: a poll's
	 * communicator is looked up once it completes) */
	const struct naming *after = NULL;
	for (int i = r->nnames; i-- > 0;) {
		const struct naming *n = &r->names[i];
		if ((n->serial & mask) != (serial & mask))
			continue;
		if (at_ns != UINT64_MAX && n->at > at_ns) {
			after = n;
			continue;
		}
		if (at_ns == UINT64_MAX && n->freed != UINT64_MAX)
			return NULL; /* freed: names nothing now */
		after = n;
		break;
	}
	if (!after)
		return NULL;
	if (side)
		*side = (after->flags & ES_COMMS_SIDE1) ? 1 : 0;
	return &m->comms[after->comm].pub;
}

const struct es_mpi_comm *es_mpi_comm_ever(const es_mpi *m, int rank, uint32_t serial, int *side)
{
	struct rank *r = rank_at(m, rank);
	if (!r || serial == ES_NONE)
		return NULL;
	for (int i = r->nnames; i-- > 0;)
		if (r->names[i].serial == serial) {
			if (side)
				*side = (r->names[i].flags & ES_COMMS_SIDE1) ? 1 : 0;
			return &m->comms[r->names[i].comm].pub;
		}
	return NULL;
}

/* Rank's record of communicator id's collectives on mpi.calls (of its
 * latest serial for it, in force or freed); false if none. */
static bool calls_rec(es_mpi *m, int rank, uint64_t id, struct es_calls_rec *out)
{
	struct rank *r = rank_at(m, rank);
	if (!r || !r->calls)
		return false;
	for (int i = r->nnames; i-- > 0;) {
		const struct naming *n = &r->names[i];
		if (m->comms[n->comm].pub.id != id)
			continue;
		/* freed, its slot says what it had begun until another took it */
		for (int k = i + 1; n->freed != UINT64_MAX && k < r->nnames; k++)
			if (r->names[k].serial % ES_CALLS_SLOTS == n->serial % ES_CALLS_SLOTS)
				return false;
		return ps_read_range(r->calls, n->serial % ES_CALLS_SLOTS, 1, out, NULL) == 1;
	}
	return false;
}

int64_t es_mpi_calls(es_mpi *m, int rank, uint64_t id)
{
	struct es_calls_rec c;
	return calls_rec(m, rank, id, &c) ? (int64_t)c.begun : -1;
}

bool es_mpi_coll_at(es_mpi *m, int rank, uint64_t id, uint32_t num, unsigned *op, uint32_t *root)
{
	struct es_calls_rec a, b;
	/* its rank writes the entry, then the count: an entry is whole when
	 * the count read after it is still short of overwriting it */
	if (!calls_rec(m, rank, id, &a) || num >= a.begun || !calls_rec(m, rank, id, &b) ||
	    b.begun > (uint64_t)num + ES_CALLS_HISTORY)
		return false;
	uint32_t e = a.last[num % ES_CALLS_HISTORY];
	if (!e)
		return false; /* not written: a rank from before the history was kept */
	*op = ES_CALLS_OP(e);
	*root = ES_CALLS_ROOT(e);
	return true;
}

static struct thread_boards *boards_of(es_mpi *m, int thread)
{
	int rank = es_mpi_rank_of(m, thread);
	if (rank < 0 || !m->by_rank[rank] || m->thread_tb[thread] < 0)
		return NULL;
	return &m->by_rank[rank]->tb[m->thread_tb[thread]];
}

/* Up to slots records of a board, read whole into *cache (made at the
 * first read); how many. */
static int read_board(ps_elem *e, void **cache, size_t rec, uint32_t slots)
{
	if (!e)
		return 0;
	if (!*cache && !(*cache = malloc(rec * slots)))
		return PS_ENOMEM;
	int got = 0;
	while (got < (int)slots) {
		int k = ps_read_range(e, (uint64_t)got, slots - (size_t)got, (char *)*cache + rec * (size_t)got, NULL);
		if (k <= 0)
			break;
		got += k;
	}
	return got;
}

/* A request board's open requests, whole, into out[ES_REQS_SLOTS]; how many. */
static int reqs_into(ps_elem *e, struct es_req_rec *out)
{
	struct es_req_rec *raw = malloc(sizeof(*raw) * ES_REQS_SLOTS);
	if (!raw)
		return PS_ENOMEM;
	int got = 0, n = 0;
	while (got < (int)ES_REQS_SLOTS) {
		int k = ps_read_range(e, (uint64_t)got, ES_REQS_SLOTS - (size_t)got, raw + got, NULL);
		if (k <= 0)
			break;
		got += k;
	}
	for (int i = 0; i < got; i++)
		/* a slot its owner was rewriting as we copied it is left out: the
		 * request was being made, started or completed just then */
		if (raw[i].handle && !(raw[i].ver & 1) && !es_req_done_by_other(raw[i].done, raw[i].ver))
			out[n++] = raw[i];
	free(raw);
	return n;
}

/* A board's slots whole, read once per refresh. */
static int read_reqs(struct thread_boards *tb)
{
	if (!tb->reqs)
		return 0;
	if (!tb->req_cache && !(tb->req_cache = malloc(sizeof(struct es_req_rec) * ES_REQS_SLOTS)))
		return PS_ENOMEM;
	int n = reqs_into(tb->reqs, tb->req_cache);
	if (n < 0)
		return n;
	tb->nreq = n;
	return 0;
}

static int read_chans(struct thread_boards *tb)
{
	if (!tb->chans)
		return 0;
	int got = read_board(tb->chans, (void **)&tb->chan_cache, sizeof(struct es_chan_rec), ES_CHANS_SLOTS);
	if (got < 0)
		return got;
	tb->chan_full = got == 0 || (tb->chan_cache[0].flags & ES_CHAN_FULL) || got < (int)ES_CHANS_SLOTS;
	tb->nchan = got;
	return 0;
}

static int refresh_boards(es_mpi *m, struct thread_boards *tb)
{
	if (tb->read_at == m->epoch)
		return 0;
	int rc = read_reqs(tb);
	if (!rc)
		rc = read_chans(tb);
	tb->read_at = m->epoch;
	return rc;
}

int es_mpi_requests(es_mpi *m, int thread, const struct es_req_rec **out)
{
	struct thread_boards *tb = m ? boards_of(m, thread) : NULL;
	*out = NULL;
	if (!tb)
		return 0;
	int rc = refresh_boards(m, tb);
	if (rc)
		return rc;
	*out = tb->req_cache;
	return tb->nreq;
}


int es_mpi_boards_same(es_mpi *m, int thread)
{
	struct thread_boards *tb = m ? boards_of(m, thread) : NULL;
	if (!tb || tb->read_at != m->epoch)
		return 1; /* not read this refresh: nothing was judged on them */
	int same = 1;
	if (tb->reqs) {
		struct es_req_rec *now = malloc(sizeof(*now) * ES_REQS_SLOTS);
		if (!now)
			return PS_ENOMEM;
		int n = reqs_into(tb->reqs, now);
		same = n == tb->nreq && (n <= 0 || !memcmp(now, tb->req_cache, sizeof(*now) * (size_t)n));
		free(now);
		if (n < 0)
			return n;
	}
	if (same && tb->chans) {
		struct es_chan_rec *now = NULL;
		int n = read_board(tb->chans, (void **)&now, sizeof(*now), ES_CHANS_SLOTS);
		same = n == tb->nchan && (n <= 0 || !memcmp(now, tb->chan_cache, sizeof(*now) * (size_t)n));
		free(now);
		if (n < 0)
			return n;
	}
	return same;
}

int es_mpi_sites(es_mpi *m, int thread, const struct es_site_rec **out)
{
	struct thread_boards *tb = m ? boards_of(m, thread) : NULL;
	*out = NULL;
	if (!tb)
		return 0;
	int n = read_board(tb->sites, (void **)&tb->site_cache, sizeof(struct es_site_rec), ES_SITES_SLOTS);
	if (n > 0)
		*out = tb->site_cache;
	return n;
}

int es_mpi_process(es_mpi *m, int rank, struct es_proc_rec *out, uint64_t *at_ns)
{
	struct rank *r = rank_at(m, rank);
	if (!r)
		return PS_ENOENT;
	ps_elem *e;
	int rc = ps_elem_open(es_space_server(r->sp), ES_PROC_ELEMENT, sizeof(*out), &e);
	if (rc)
		return rc;
	ps_elem_set_layout(e, ES_PROC_LAYOUT);
	rc = ps_read_range(e, 0, 1, out, NULL) == 1 && out->wall_ns ? 0 : PS_ENOENT;
	ps_elem_close(e);
	if (!rc) {
		out->host[sizeof(out->host) - 1] = out->cmd[sizeof(out->cmd) - 1] = 0;
		*at_ns = es_clock_ns(es_space_clock(r->sp), out->raw);
	}
	return rc;
}

int es_mpi_clock(es_mpi *m, int rank, struct es_mpi_sync *out, int64_t *shift_ns)
{
	struct rank *r = rank_at(m, rank);
	if (!r)
		return PS_ENOENT;
	*shift_ns = ps_server_clock_offset(es_space_server(r->sp));
	ps_elem *e;
	int rc = ps_elem_open(es_space_server(r->sp), ES_CLOCK_ELEMENT, sizeof(struct es_sync_rec), &e);
	if (rc)
		return rc == PS_ENOENT ? 0 : rc; /* a collector before clock points */
	ps_elem_set_layout(e, ES_SYNC_LAYOUT);
	/* read twice: a slot the rank was writing meanwhile differs, and is left */
	struct es_sync_rec *a = calloc(2 * ES_SYNC_SLOTS, sizeof(*a)), *b = a + ES_SYNC_SLOTS;
	void *pa = a, *pb = b;
	int n = 0, got = a ? read_board(e, &pa, sizeof(*a), ES_SYNC_SLOTS) : PS_ENOMEM;
	if (got > 0 && read_board(e, &pb, sizeof(*b), ES_SYNC_SLOTS) == got)
		for (int i = 0; i < got; i++)
			if (a[i].kind && !memcmp(&a[i], &b[i], sizeof(a[i]))) {
				out[n].r = a[i];
				out[n++].at_ns = es_clock_ns(es_space_clock(r->sp), a[i].raw);
			}
	ps_elem_close(e);
	free(a);
	return got < 0 ? got : n;
}

/* A rank's board of names (mpi.regions, mpi.files: a used word, then the
 * name to the record's end), opened at the first look and read whole; each
 * name is cut to end within its record, whatever the writer left there. */
static int read_names(struct rank *r, ps_elem **e, const char *elem, const char *layout, void **cache,
		      size_t rec, uint32_t slots)
{
	if (!*e && !ps_elem_open(es_space_server(r->sp), elem, rec, e))
		ps_elem_set_layout(*e, layout);
	int n = read_board(*e, cache, rec, slots);
	for (int i = 0; i < n; i++)
		((char *)*cache)[(size_t)i * rec + rec - 1] = 0;
	return n;
}

int es_mpi_regions(es_mpi *m, int rank, struct es_region_rec **out)
{
	struct rank *r = rank_at(m, rank);
	int n = r ? read_names(r, &r->regions, ES_REGIONS_ELEMENT, ES_REGIONS_LAYOUT, (void **)&r->region_cache,
			       sizeof(struct es_region_rec), ES_REGIONS_SLOTS) : 0;
	*out = n > 0 ? r->region_cache : NULL;
	return n;
}

int es_mpi_files(es_mpi *m, int rank, struct es_file_rec **out)
{
	struct rank *r = rank_at(m, rank);
	int n = r ? read_names(r, &r->files, ES_FILES_ELEMENT, ES_FILES_LAYOUT, (void **)&r->file_cache,
			       sizeof(struct es_file_rec), ES_FILES_SLOTS) : 0;
	*out = n > 0 ? r->file_cache : NULL;
	return n;
}

int es_mpi_modules(es_mpi *m, int rank, const struct es_module_rec **out)
{
	struct rank *r = rank_at(m, rank);
	*out = NULL;
	if (!r)
		return 0;
	int n = read_board(r->modules, (void **)&r->module_cache, sizeof(struct es_module_rec), ES_MODULES_SLOTS);
	int k = 0;
	while (k < n && r->module_cache[k].end) /* slots are taken in order */
		k++;
	if (k > 0)
		*out = r->module_cache;
	return n < 0 ? n : k;
}

int es_mpi_rank_threads(const es_mpi *m, int rank, int *threads, int max)
{
	struct rank *r = rank_at(m, rank);
	int n = 0;
	for (int k = 0; r && k < r->ntb; k++)
		if (n < max)
			threads[n++] = r->tb[k].thread;
	return n;
}

/* A rank's messages on a channel (its threads' counts added), with the
 * other end `peer`, on communicator id, tag (ES_NONE: any); dir sent or
 * ES_CHAN_RECVD.  False when some board was full and had no such key, or
 * some key of that peer and direction names a communicator not known:
 * its messages might be on this channel. */
static bool count(es_mpi *m, int rank, int peer, uint64_t id, uint32_t tag, uint32_t dir, uint64_t *n)
{
	struct rank *r = m->by_rank[rank];
	bool known = true;
	*n = 0;
	for (int k = 0; r && k < r->ntb; k++) {
		struct thread_boards *tb = &r->tb[k];
		bool found = false;
		if (refresh_boards(m, tb) || !tb->chans)
			continue;
		for (int i = 1; i < tb->nchan; i++) {
			const struct es_chan_rec *c = &tb->chan_cache[i];
			uint32_t f = c->flags;
			if (!(f & ES_CHAN_USED) || (f & ES_CHAN_RECVD) != dir || c->peer != (uint32_t)peer ||
			    (tag != ES_NONE && c->tag != tag))
				continue;
			/* freed since or not: a rank that sent on a duplicate and
			 * freed it has still sent those messages */
			const struct es_mpi_comm *cm = es_mpi_comm_ever(m, rank, c->serial, NULL);
			if (!cm)
				known = false;
			if (!cm || cm->id != id)
				continue;
			*n += c->count;
			found = true;
		}
		if (tb->chan_full && !found)
			known = false;
	}
	return known;
}

bool es_mpi_messages(es_mpi *m, int from, int to, uint64_t id, uint32_t tag, uint64_t *sent,
		     uint64_t *recvd)
{
	*sent = *recvd = 0;
	if (!m || from < 0 || to < 0 || from >= m->nranks || to >= m->nranks || !m->by_rank[from] ||
	    !m->by_rank[to])
		return false;
	bool a = count(m, from, to, id, tag, 0, sent), b = count(m, to, from, id, tag, ES_CHAN_RECVD, recvd);
	return a && b;
}
