/* otf2.c - an archive as OTF2 (Vampir, otf2-print, Score-P's tools), written through Debian's libotf2. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "archive/convert.h"
#include "otf2_int.h"

/*
 * What an event becomes:
 *   every event           Enter and Leave of a region named by its op
 *   MPI_Send, Bsend, Ssend, Rsend, Sendrecv
 *                         MpiSend after the Enter
 *   MPI_Isend..., a persistent send's Start
 *                         MpiIsend (with a request id) after the Enter, and
 *                         MpiIsendComplete where a wait or test completed it
 *   MPI_Recv, Mrecv       MpiRecv before the Leave
 *   MPI_Irecv, Imrecv, a persistent receive's Start
 *                         MpiIrecvRequest after the Enter, and MpiIrecv (the
 *                         source, tag and bytes that came) where it completed
 *   Sendrecv's receive    MpiRecv before the Leave
 *   a cancelled request   MpiRequestCancelled where it completed
 *   a collective          MpiCollectiveBegin after the Enter, MpiCollectiveEnd
 *                         (op, communicator, root, bytes) before the Leave
 *   a nonblocking one     NonBlockingCollectiveRequest at the call,
 *                         NonBlockingCollectiveComplete where it completed
 * Peers and roots are ranks of the call's communicator (an archive's
 * tuples hold world ranks: its comms file maps them), intercommunicators'
 * as OTF2 3's InterComm definitions.
 */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *cb, bool final)
{
	(void)user, (void)type, (void)loc, (void)cb, (void)final;
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
	(void)user, (void)type, (void)loc;
	return 0;
}

static const OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush,
						     .otf2_post_flush = post_flush };

static uint32_t new_region(struct otf2_out *o, unsigned code, const char *phase)
{
	if (o->nregions == o->capregions) {
		uint32_t cap = o->capregions ? o->capregions * 2 : 64;
		uint16_t *op = realloc(o->region_op, sizeof(*op) * cap);
		if (op)
			o->region_op = op;
		const char **ph = op ? realloc(o->phase, sizeof(*ph) * cap) : NULL;
		if (!ph)
			return UINT32_MAX;
		o->phase = ph;
		o->capregions = cap;
	}
	o->region_op[o->nregions] = (uint16_t)code;
	o->phase[o->nregions] = phase;
	return o->nregions++;
}

/* An I/O tuple's handle: one per file name, over all ranks (UINT32_MAX: no memory). */
static uint32_t io_handle(struct otf2_out *o, int thread, const struct es_trace *t)
{
	const char *name = ar_file_name(o->a, ar_thread(o->a, thread)->rank, t->element);
	name = name ? name : "(a file opened before recording)";
	for (uint32_t f = 0; f < o->nfiles; f++)
		if (!strcmp(o->files[f], name))
			return f;
	if (o->nfiles == o->capfiles) {
		uint32_t cap = o->capfiles ? o->capfiles * 2 : 16;
		const char **v = realloc(o->files, sizeof(*v) * cap);
		if (!v)
			return UINT32_MAX;
		o->files = v;
		o->capfiles = cap;
	}
	o->files[o->nfiles] = name;
	return o->nfiles++;
}

/* A read or write: IoOperationBegin at its enter, IoOperationComplete
 * before its leave (a split operation's at its begin call). */
static OTF2_ErrorCode io(struct otf2_out *o, OTF2_EvtWriter *w, int thread, const struct ar_item *it,
			 const struct es_trace *t)
{
	const struct es_op_info *i = es_op_info(t->op);
	const char *name = i ? i->name : "";
	bool rd = strstr(name, "read") != NULL, wr = strstr(name, "write") != NULL;
	if (!i || i->group != ES_GROUP_IO || (!rd && !wr) || strstr(name, "_end") ||
	    (it->kind != AR_ENTER && it->kind != AR_LEAVE))
		return OTF2_SUCCESS;
	uint32_t h = io_handle(o, thread, t);
	if (h == UINT32_MAX)
		return OTF2_ERROR_MEM_ALLOC_FAILED;
	if (it->kind == AR_LEAVE)
		return OTF2_EvtWriter_IoOperationComplete(w, NULL, it->time, h, t->size, it->event);
	bool coll = strstr(name, "_all") || strstr(name, "_ordered");
	return OTF2_EvtWriter_IoOperationBegin(w, NULL, it->time, h, rd ? OTF2_IO_OPERATION_MODE_READ
									   : OTF2_IO_OPERATION_MODE_WRITE,
					       coll ? OTF2_IO_OPERATION_FLAG_COLLECTIVE : OTF2_IO_OPERATION_FLAG_NONE,
					       t->size, it->event);
}

static uint64_t place_hash(const char *file, int line)
{
	return base_hash_fold(base_hash_str(BASE_HASH_SEED, file), (uint64_t)(uint32_t)line);
}

static bool place_is(const struct otf2_out *o, uint32_t i, const char *file, int line)
{
	return o->places[i].line == line && !strcmp(o->places[i].file, file);
}

/* The source code location of a call's site (its innermost frame), made if
 * new: UINT32_MAX when the site or its line is not known, or no memory.
 * The index finds the first place of a hash; another of the same hash is
 * looked for among all (never in practice: hashes are 64 bits). */
static uint32_t new_place(struct otf2_out *o, int thread, uint16_t site)
{
	const struct ar_site *s = ar_site(o->a, thread, site);
	if (!s || !s->frames[0].line)
		return UINT32_MAX;
	const struct ar_frame *f = &s->frames[0];
	uint64_t h = place_hash(f->file, f->line);
	uint32_t *x = base_tab_get(&o->place_ix, h);
	if (x && place_is(o, *x, f->file, f->line))
		return *x;
	for (uint32_t i = 0; x && i < o->nplaces; i++)
		if (place_is(o, i, f->file, f->line))
			return i;
	if (o->nplaces == o->capplaces) {
		uint32_t cap = o->capplaces ? o->capplaces * 2 : 64;
		void *v = realloc(o->places, sizeof(*o->places) * cap);
		if (!v)
			return UINT32_MAX;
		o->places = v;
		o->capplaces = cap;
	}
	if (!x && base_tab_set32(&o->place_ix, h, o->nplaces) < 0)
		return UINT32_MAX;
	o->places[o->nplaces].file = f->file;
	o->places[o->nplaces].line = f->line;
	return o->nplaces++;
}

/* ... looked up once per site of the thread being written */
static uint32_t place_of(struct otf2_out *o, int thread, const struct es_trace *t)
{
	uint16_t site = ES_TRACE_SITE(t);
	if (!site || site >= ES_SITES_SLOTS)
		return UINT32_MAX;
	if (o->place_thread[site] != (uint32_t)thread + 1) {
		uint32_t p = new_place(o, thread, site);
		o->place_of[site] = p == UINT32_MAX ? UINT32_MAX : p + 1;
		o->place_thread[site] = (uint32_t)thread + 1;
	}
	return o->place_of[site] == UINT32_MAX ? UINT32_MAX : o->place_of[site] - 1;
}

/* A call's region, one per op; a phase's, one per name. */
static uint32_t region(struct otf2_out *o, int thread, const struct es_trace *t)
{
	unsigned code = es_op_code(t->op);
	if (ar_is_phase(t)) {
		const char *name = ar_region_name(o->a, ar_thread(o->a, thread)->rank, t->arg);
		name = name ? name : "(unnamed phase)";
		for (uint32_t r = 0; r < o->nregions; r++) /* phases are few */
			if (o->phase[r] && !strcmp(o->phase[r], name))
				return r;
		return new_region(o, code, name);
	}
	if (!o->region_of[code]) {
		uint32_t r = new_region(o, code, NULL);
		if (r == UINT32_MAX)
			return r;
		o->region_of[code] = r + 1;
	}
	return o->region_of[code] - 1;
}

/* The OTF2 communicator of a tuple (its comm: the archive's number for it,
 * and OTF2's), or OTF2_UNDEFINED_COMM. */
static OTF2_CommRef comm_of(const struct otf2_out *o, uint16_t comm)
{
	return comm < ar_ncomms(o->a) ? o->comm_ref[comm] : OTF2_UNDEFINED_COMM;
}

/* OTF2's numbers for the communicators, in the archive's order without
 * its windows: a reader takes definitions numbered 0, 1, 2... */
static int number_comms(struct otf2_out *o)
{
	int n = ar_ncomms(o->a);
	if (!(o->comm_ref = malloc(sizeof(*o->comm_ref) * ((size_t)n + 1))))
		return -ENOMEM;
	OTF2_CommRef next = 0;
	for (int c = 0; c < n; c++)
		o->comm_ref[c] = ar_comm(o->a, c)->flags & ES_COMMS_WINDOW ? OTF2_UNDEFINED_COMM : next++;
	return 0;
}

/* A world rank as a rank of the tuple's communicator: the peer of a
 * message, the root of a collective. */
static uint32_t rank_in(const struct otf2_out *o, uint16_t comm, uint32_t world)
{
	int r = world == AR_NO_ELEMENT ? -1 : ar_comm_rank(ar_comm(o->a, comm), (int)world);
	return r < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)r;
}

/* Request ids by the request's start and direction, within one thread: a
 * request's completion has its call's start.  MPI_Startall starts several
 * at one stamp: each gets its own id, and each completion takes one of
 * those still open (which one matters not: the completion carries what
 * came). */
struct reqids {
	struct base_tab opened; /* reqid_key -> struct opened */
	struct base_tab ids;    /* (reqid_key, k) -> the k-th id opened with it (uint64_t) */
	uint64_t next;
};
struct opened {
	uint32_t n, done; /* ids opened with the key, and completed (the first done) */
};

static uint64_t reqid_key(uint64_t start, bool recv)
{
	return start << 1 | recv;
}

/* The k-th id's key: hashed, since (key ^ k) would make a send's second
 * id the receive's first (their keys differ in the low bit alone). */
static uint64_t reqid_nth(uint64_t key, uint32_t k)
{
	return base_hash_fold(base_hash_fold(BASE_HASH_SEED, key), k);
}

/* Room for n requests: then neither table grows, and no call fails. */
static int reqids_init(struct reqids *r, size_t n)
{
	*r = (struct reqids){ 0 };
	base_tab_init(&r->opened, sizeof(struct opened));
	base_tab_init(&r->ids, sizeof(uint64_t));
	return base_tab_reserve(&r->opened, n) < 0 || base_tab_reserve(&r->ids, n) < 0 ? -ENOMEM : 0;
}

static void reqids_free(struct reqids *r)
{
	base_tab_free(&r->opened), base_tab_free(&r->ids);
}

/* A new id for the request begun at start (0: no memory). */
static uint64_t reqid_new(struct reqids *r, uint64_t start, bool recv)
{
	uint64_t key = reqid_key(start, recv);
	struct opened *o = base_tab_put(&r->opened, key, NULL);
	uint64_t *id = o ? base_tab_put(&r->ids, reqid_nth(key, o->n), NULL) : NULL;
	if (!id)
		return 0;
	o->n++;
	return *id = ++r->next;
}

/* The id of a request begun at start and still open, which it no longer
 * is (0: none). */
static uint64_t reqid_done(struct reqids *r, uint64_t start, bool recv)
{
	uint64_t key = reqid_key(start, recv);
	struct opened *o = base_tab_get(&r->opened, key);
	const uint64_t *id = o && o->done < o->n ? base_tab_get(&r->ids, reqid_nth(key, o->done)) : NULL;
	if (!id)
		return 0;
	uint64_t was = *id;
	base_tab_del(&r->ids, reqid_nth(key, o->done));
	if (++o->done == o->n)
		base_tab_del(&r->opened, key);
	return was;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The thread's Irecvs (and started persistent receives) whose receive is
 * alone, by their start: neither their request nor their receive is
 * written. */
static int find_alone_irecvs(struct otf2_out *o, const struct ar_item *items, size_t n)
{
	const struct ar_event *ev = ar_events(o->a);
	o->nalone = 0;
	free(o->alone_irecvs);
	if (!(o->alone_irecvs = malloc(sizeof(uint64_t) * (n + 1))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (items[i].kind == AR_COMPLETE && es_msg_kind(ev[items[i].event].t.op) == ES_MSG_IRECV &&
		    o->msgs.other[items[i].event] == AR_MSG_ALONE)
			o->alone_irecvs[o->nalone++] = ev[items[i].event].t.start;
	qsort(o->alone_irecvs, o->nalone, sizeof(uint64_t), by_u64);
	return 0;
}

static bool alone_irecv(const struct otf2_out *o, uint64_t start)
{
	return o->nalone && bsearch(&start, o->alone_irecvs, o->nalone, sizeof(uint64_t), by_u64);
}

/* One point-to-point item of a message, or of its request. */
static OTF2_ErrorCode message(struct otf2_out *o, OTF2_EvtWriter *w, const struct ar_item *it,
			      const struct es_trace *tr, struct reqids *ids, struct ar_out_stats *st)
{
	enum es_msg m = es_msg_kind(tr->op);
	OTF2_CommRef comm = comm_of(o, tr->comm);
	uint32_t peer = rank_in(o, tr->comm, tr->element);
	bool ok = comm != OTF2_UNDEFINED_COMM && peer != OTF2_UNDEFINED_UINT32 && !(tr->op & ES_OP_FAILED) &&
		  o->msgs.other[it->event] < AR_MSG_ALONE;
	uint64_t t = it->time;
	switch (it->kind) {
	case AR_ENTER:
		if (m == ES_MSG_SEND && ok)
			return st->messages++, OTF2_EvtWriter_MpiSend(w, NULL, t, peer, comm, tr->arg, tr->size);
		if (m == ES_MSG_ISEND && ok)
			return st->messages++, OTF2_EvtWriter_MpiIsend(w, NULL, t, peer, comm, tr->arg, tr->size,
								       reqid_new(ids, tr->start, false));
		if (m == ES_MSG_IRECV_REQ && !alone_irecv(o, tr->start))
			return OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, reqid_new(ids, tr->start, true));
		return OTF2_SUCCESS;
	case AR_LEAVE:
		if (m == ES_MSG_RECV && !(tr->op & ES_OP_DONE) && ok)
			return st->messages++, OTF2_EvtWriter_MpiRecv(w, NULL, t, peer, comm, tr->arg, tr->size);
		return OTF2_SUCCESS;
	case AR_COMPLETE: {
		if (m == ES_MSG_RECV && ok) /* Sendrecv's receive, inside it */
			return st->messages++, OTF2_EvtWriter_MpiRecv(w, NULL, t, peer, comm, tr->arg, tr->size);
		uint64_t id = m == ES_MSG_ISEND_DONE || m == ES_MSG_IRECV
			      ? reqid_done(ids, tr->start, m == ES_MSG_IRECV) : 0;
		if ((m == ES_MSG_ISEND_DONE || m == ES_MSG_IRECV) && id && (tr->op & ES_OP_FAILED))
			return OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t, id);
		if (m == ES_MSG_ISEND_DONE && id)
			return st->completes++, OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, id);
		if (m == ES_MSG_IRECV && id && ok)
			return st->messages++, OTF2_EvtWriter_MpiIrecv(w, NULL, t, peer, comm, tr->arg, tr->size, id);
		return OTF2_SUCCESS;
	}
	default:
		return OTF2_SUCCESS;
	}
}

/* A collective's items: begin and end, or a nonblocking one's request and completion. */
static OTF2_ErrorCode collective(struct otf2_out *o, OTF2_EvtWriter *w, const struct ar_item *it,
				 const struct es_trace *tr, int cop, struct ar_out_stats *st)
{
	const struct es_op_info *oi = es_op_info(tr->op);
	bool icall = oi && oi->kind == ES_KIND_ICOLL; /* its completion ends it, elsewhere */
	OTF2_CommRef comm = comm_of(o, tr->comm);
	uint32_t root = rank_in(o, tr->comm, tr->element);
	if (cop < 0 || comm == OTF2_UNDEFINED_COMM)
		return OTF2_SUCCESS;
	switch (it->kind) {
	case AR_ENTER:
		return icall ? OTF2_SUCCESS : OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, it->time);
	case AR_LEAVE:
		if (icall)
			return OTF2_SUCCESS;
		st->colls++;
		return OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, it->time, (OTF2_CollectiveOp)cop, comm, root,
						       tr->size, tr->size);
	case AR_REQUEST:
		return OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, it->time, it->event);
	case AR_COMPLETE:
		st->completes++;
		return OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, it->time, (OTF2_CollectiveOp)cop, comm,
								    root, tr->size, tr->size, it->event);
	}
	return OTF2_SUCCESS;
}

/*
 * Wait states as OTF2 metrics, where Vampir's counter timelines show
 * them: one metric per pattern met (seconds, accumulated from the start,
 * recorded asynchronously), a Metric event on the waiting thread at each
 * wait's end with that thread's total of the pattern so far.  Scalasca
 * reads no metric from a trace (its own analysis makes them); Cube's
 * users get the same numbers from esprofile --json.
 */
static int by_thread_time(const void *a, const void *b)
{
	const struct otf2_wait *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int find_waits(struct otf2_out *o)
{
	ws *w;
	int rc = ws_create(&w);
	if (rc)
		return rc;
	ws_keep(w);
	rc = ar_waits_feed(o->a, &o->msgs, w, NULL); /* the messages paired once, for both */
	const struct ws_wait *k;
	const struct ws_row *rows;
	size_t n = ws_waits(w, &k), nt = (size_t)ar_nthreads(o->a);
	ws_rows(w, &rows);
	o->waits = malloc(sizeof(*o->waits) * (n + 1));
	o->wfirst = calloc(nt + 2, sizeof(size_t));
	if (!rc && (!o->waits || !o->wfirst))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		o->waits[i] = (struct otf2_wait){ k[i].from + k[i].ns, k[i].ns, k[i].waiter, rows[k[i].row].pattern };
		o->pattern_used[o->waits[i].pattern] = true;
		o->wfirst[k[i].waiter + 1]++;
	}
	if (!rc)
		qsort(o->waits, n, sizeof(*o->waits), by_thread_time);
	for (int p = 0, m = 0; p < WS_NPATTERNS; p++)
		o->metric_of[p] = (uint8_t)(o->pattern_used[p] ? m++ : 0);
	for (size_t t = 1; !rc && t <= nt; t++)
		o->wfirst[t] += o->wfirst[t - 1];
	ws_destroy(w);
	return rc;
}

/* Thread t's waits that ended by `by`, from *next on: their metrics. */
static OTF2_ErrorCode metrics(struct otf2_out *o, OTF2_EvtWriter *w, int t, size_t *next, uint64_t by, double *sum)
{
	OTF2_ErrorCode e = OTF2_SUCCESS;
	for (; e == OTF2_SUCCESS && *next < o->wfirst[t + 1] && o->waits[*next].at <= by; ++*next) {
		const struct otf2_wait *k = &o->waits[*next];
		sum[k->pattern] += (double)k->ns / 1e9;
		OTF2_Type type = OTF2_TYPE_DOUBLE;
		OTF2_MetricValue v = { .floating_point = sum[k->pattern] };
		e = OTF2_EvtWriter_Metric(w, NULL, k->at, o->metric_of[k->pattern], 1, &type, &v);
	}
	return e;
}

static int write_thread(struct otf2_out *o, int t, struct ar_out_stats *st)
{
	struct ar_item *items;
	size_t n;
	int rc = ar_thread_items(o->a, t, &items, &n, st);
	if (rc) {
		snprintf(o->err, sizeof(o->err), "thread %d: %s", t, strerror(-rc));
		return rc;
	}
	struct reqids ids;
	OTF2_EvtWriter *w = !reqids_init(&ids, n) && !find_alone_irecvs(o, items, n)
			    ? OTF2_Archive_GetEvtWriter(o->ar, (OTF2_LocationRef)t) : NULL;
	if (!w) {
		free(items), reqids_free(&ids);
		snprintf(o->err, sizeof(o->err), "no event writer for thread %d", t);
		return -EIO;
	}
	const struct ar_event *ev = ar_events(o->a);
	OTF2_ErrorCode e = OTF2_SUCCESS;
	size_t next = o->wfirst[t];
	double sum[WS_NPATTERNS] = { 0 };
	for (size_t i = 0; i < n && e == OTF2_SUCCESS; i++) {
		const struct es_trace *tr = &ev[items[i].event].t;
		if ((e = metrics(o, w, t, &next, items[i].time, sum)) != OTF2_SUCCESS)
			break;
		unsigned code = es_op_code(tr->op); /* below 256: ar_open saw to it */
		if (!o->code[code].known) {
			const char *nm = es_op_name(code);
			o->code[code].known = true;
			o->code[code].coll = es_op_matched(code) ? ar__otf2_coll_op(nm) : -1;
		}
		uint32_t reg = region(o, t, tr);
		if (reg == UINT32_MAX) {
			e = OTF2_ERROR_MEM_ALLOC_FAILED;
			break;
		}
		int cop = o->code[code].coll;
		if (items[i].kind == AR_ENTER) {
			uint32_t place = ar_is_phase(tr) ? UINT32_MAX : place_of(o, t, tr);
			OTF2_AttributeList *at = NULL;
			if (place != UINT32_MAX && o->attrs &&
			    OTF2_AttributeList_AddSourceCodeLocationRef(o->attrs, 0, place) == OTF2_SUCCESS)
				at = o->attrs; /* Enter takes the attributes and empties the list */
			e = OTF2_EvtWriter_Enter(w, at, items[i].time, reg);
			st->regions++;
		}
		if (e == OTF2_SUCCESS)
			e = cop >= 0 ? collective(o, w, &items[i], tr, cop, st) : message(o, w, &items[i], tr, &ids, st);
		if (e == OTF2_SUCCESS)
			e = io(o, w, t, &items[i], tr);
		if (e == OTF2_SUCCESS && items[i].kind == AR_LEAVE)
			e = OTF2_EvtWriter_Leave(w, NULL, items[i].time, reg);
	}
	if (e == OTF2_SUCCESS)
		e = metrics(o, w, t, &next, UINT64_MAX, sum);
	free(items), reqids_free(&ids);
	if (e != OTF2_SUCCESS)
		return ar__otf2_fail(o, e, "writing events");
	OTF2_EvtWriter_GetNumberOfEvents(w, &o->events[t]);
	e = OTF2_Archive_CloseEvtWriter(o->ar, w);
	return e == OTF2_SUCCESS ? 0 : ar__otf2_fail(o, e, "closing an event writer");
}

/*
 * Which threads are OTF2 locations: each that recorded an event, and each
 * rank's first thread (MPI_COMM_WORLD's ranks are locations by position,
 * OTF2_GROUP_TYPE_COMM_LOCATIONS).  A thread that recorded nothing
 * otherwise is left out and counted (st->unlocated): libotf2 makes two
 * files, clears two chunks and searches its list of locations for each
 * location it writes, so a listed thread would cost more than all the
 * events of the archive.  A rank that recorded nothing gets the files
 * libotf2 wrote for the first such rank, copied (locate_empty).
 */
static int locate(struct otf2_out *o, struct ar_out_stats *st)
{
	const ar_archive *a = o->a;
	int nt = ar_nthreads(a);
	int *first = malloc(sizeof(int) * ((size_t)o->nranks + 1));
	o->located = calloc((size_t)nt + 1, 1);
	if (!first || !o->located) {
		free(first);
		return -ENOMEM;
	}
	for (int r = 0; r < o->nranks; r++)
		first[r] = -1;
	for (int t = 0; t < nt; t++) {
		int r = ar_thread(a, t)->rank;
		if (r >= 0 && first[r] < 0)
			first[r] = t;
	}
	const uint32_t *idx;
	bool any = false;
	o->template_t = -1;
	for (int t = 0; t < nt; t++) {
		int r = ar_thread(a, t)->rank;
		bool events = ar_thread_events(a, t, &idx) > 0;
		o->located[t] = events ? LOC_EVENTS : r >= 0 && first[r] == t ? LOC_EMPTY : LOC_NONE;
		st->unlocated += o->located[t] == LOC_NONE;
		if (o->located[t] == LOC_EMPTY && o->template_t < 0)
			o->template_t = t;
		any |= o->located[t] != LOC_NONE;
	}
	if (nt && !any) { /* OTF2's readers want a location: the first thread is one, empty */
		o->located[0] = LOC_EMPTY;
		o->template_t = 0;
		st->unlocated--;
	}
	free(first);
	return 0;
}

/* Each location's events: libotf2's writer for those with events and the
 * template, then (phase 2) their local definitions, empty. */
static int write_locations(struct otf2_out *o, struct ar_out_stats *st)
{
	const ar_archive *a = o->a;
	int nt = ar_nthreads(a), rc = 0;
	OTF2_ErrorCode e;
	for (int t = 0; !rc && t < nt; t++)
		if (o->located[t] == LOC_EVENTS)
			rc = write_thread(o, t, st);
	/* the template, or ar__otf2_defs' placeholder when there is no thread */
	int empty = nt ? o->template_t : 0;
	if (!rc && empty >= 0) {
		OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(o->ar, (OTF2_LocationRef)empty);
		if (!w || (e = OTF2_Archive_CloseEvtWriter(o->ar, w)) != OTF2_SUCCESS)
			rc = ar__otf2_fail(o, w ? e : OTF2_ERROR_INVALID, "an empty location's events");
	}
	if (!rc && (e = OTF2_Archive_CloseEvtFiles(o->ar)) != OTF2_SUCCESS)
		rc = ar__otf2_fail(o, e, "closing the event files");
	if (!rc && (e = OTF2_Archive_OpenDefFiles(o->ar)) != OTF2_SUCCESS)
		rc = ar__otf2_fail(o, e, "opening the definition files");
	for (int t = 0; !rc && t < (nt ? nt : 1); t++) {
		if (nt && o->located[t] != LOC_EVENTS && t != empty)
			continue;
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar, (OTF2_LocationRef)t);
		if (!dw || (e = OTF2_Archive_CloseDefWriter(o->ar, dw)) != OTF2_SUCCESS)
			rc = ar__otf2_fail(o, dw ? e : OTF2_ERROR_INVALID, "a location's definitions");
	}
	if (!rc && (e = OTF2_Archive_CloseDefFiles(o->ar)) != OTF2_SUCCESS)
		rc = ar__otf2_fail(o, e, "closing the definition files");
	return rc;
}

/* The template's two files (what libotf2 wrote for a location with no
 * event and no local definition) as every other empty rank's. */
static int locate_empty(struct otf2_out *o, const char *dir, const char *name)
{
	static const char *const kinds[] = { "evt", "def" };
	int rc = 0;
	for (int k = 0; k < 2 && !rc && o->template_t >= 0; k++) {
		char path[4300];
		snprintf(path, sizeof(path), "%s/%s/%d.%s", dir, name, o->template_t, kinds[k]);
		unsigned char bytes[4096];
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, bytes, sizeof(bytes)) : -1;
		if (fd >= 0)
			close(fd);
		if (n < 0 || n == (ssize_t)sizeof(bytes)) {
			snprintf(o->err, sizeof(o->err), "%s: not the small file of an empty location", path);
			return -EIO;
		}
		for (int t = o->template_t + 1; t < ar_nthreads(o->a) && !rc; t++) {
			if (o->located[t] != LOC_EMPTY)
				continue;
			snprintf(path, sizeof(path), "%s/%s/%d.%s", dir, name, t, kinds[k]);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd < 0 || write(fd, bytes, (size_t)n) != n)
				rc = -errno ? -errno : -EIO;
			if (fd >= 0 && close(fd) && !rc)
				rc = -errno;
			if (rc)
				snprintf(o->err, sizeof(o->err), "%s: %s", path, strerror(-rc));
		}
	}
	return rc;
}

static void free_out(struct otf2_out *o)
{
	free(o->events), free(o->region_op), free(o->phase), free(o->files), free(o->comm_ref), free(o->places);
	free(o->alone_irecvs), free(o->waits), free(o->wfirst), free(o->located);
	base_tab_free(&o->place_ix);
	if (o->attrs)
		OTF2_AttributeList_Delete(o->attrs);
	ar_msgs_free(&o->msgs);
}

int ar_to_otf2(const ar_archive *a, const char *dir, const char *name, struct ar_out_stats *st,
	       char *err, size_t errlen)
{
	struct otf2_out o = { .a = a };
	struct stat sb;
	memset(st, 0, sizeof(*st));
	if (stat(dir, &sb) == 0) {
		snprintf(err, errlen, "%s: exists; OTF2 wants a new directory", dir);
		return -EEXIST;
	}
	for (int t = 0; t < ar_nthreads(a); t++)
		if (ar_thread(a, t)->rank >= o.nranks)
			o.nranks = ar_thread(a, t)->rank + 1;
	o.events = calloc((size_t)ar_nthreads(a) + 1, sizeof(*o.events));
	o.attrs = OTF2_AttributeList_New();
	if (!o.events || !o.attrs || number_comms(&o) || ar_msgs_match(a, &o.msgs) || find_waits(&o) ||
	    locate(&o, st)) {
		free_out(&o);
		return -ENOMEM;
	}
	int rc = 0;
	OTF2_ErrorCode e;
	/* a buffer chunk per location, for its events and for its local
	 * definitions (which OTF2 clears whole when it closes them): 1 MB
	 * each, less when there are many (1,024 locations spent most of
	 * their time clearing 4 MB definition chunks); OTF2's least is 256 KB */
	uint64_t chunk = ar_nthreads(a) > 64 ? (64u << 20) / (uint64_t)ar_nthreads(a) : 1u << 20;
	chunk = chunk < (256u << 10) ? 256u << 10 : chunk;
	o.ar = OTF2_Archive_Open(dir, name, OTF2_FILEMODE_WRITE, chunk, chunk, OTF2_SUBSTRATE_POSIX,
				 OTF2_COMPRESSION_NONE);
	if (!o.ar) {
		snprintf(err, errlen, "%s: OTF2 cannot make an archive there", dir);
		free_out(&o);
		return -EIO;
	}
	if ((e = OTF2_Archive_SetFlushCallbacks(o.ar, &flush_callbacks, NULL)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_SetSerialCollectiveCallbacks(o.ar)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_SetCreator(o.ar, "EventSpace esconvert " ES_VERSION)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_OpenEvtFiles(o.ar)) != OTF2_SUCCESS)
		rc = ar__otf2_fail(&o, e, "opening the archive");
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < ar_nevents(a); i++) {
		const struct es_trace *t = &ar_events(a)[i].t;
		t0 = t->start < t0 ? t->start : t0;
		t1 = t->end > t1 ? t->end : t1;
	}
	if (t0 > t1)
		t0 = t1 = 0;
	if (!rc)
		rc = write_locations(&o, st);
	if (!rc)
		rc = ar__otf2_defs(&o, t0, t1);
	e = OTF2_Archive_Close(o.ar);
	if (!rc && e != OTF2_SUCCESS)
		rc = ar__otf2_fail(&o, e, "closing the archive");
	if (!rc)
		rc = locate_empty(&o, dir, name);
	if (rc)
		snprintf(err, errlen, "%s: %s", dir, o.err[0] ? o.err : strerror(-rc));
	free_out(&o);
	st->pairing = o.msgs; /* its counts: free_out freed its pairs */
	return rc;
}
