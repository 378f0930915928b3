/* otf2.c - an archive as OTF2 (Vampir, otf2-print, Score-P's tools), written through Debian's libotf2. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <otf2/otf2.h>

#include "archive/convert.h"

/*
 * What an event becomes:
 *   every event           Enter and Leave of a region named by its op
 *   MPI_Send, Bsend, Ssend, Rsend, Isend..., a persistent send's Start
 *                         MpiSend after the Enter
 *   MPI_Recv, Irecv, Mrecv, a persistent receive's Start (a known source)
 *                         MpiRecv before the Leave (a nonblocking receive's
 *                         data arrives later: its tuple does not say when)
 *   a collective on a communicator libescollect listed
 *                         MpiCollectiveBegin after the Enter, MpiCollectiveEnd
 *                         (op, communicator, root, bytes) before the Leave
 *   op | ES_OP_DONE       NonBlockingCollectiveRequest at the call,
 *                         NonBlockingCollectiveComplete where it completed
 * A tuple does not say which communicator a point-to-point call used: its
 * peer is a rank of MPI_COMM_WORLD, as almost every program's is.
 */

#define AR_NO_ELEMENT 0xffffffffu /* a tuple's element when it has none (no peer, no root) */

struct otf2_out {
	OTF2_Archive *ar;
	uint64_t *events;    /* by location: events written */
	const ar_archive *a;
	char err[512];
	uint32_t region_of[256]; /* by op code (below 256, flags cleared) + 1; 0: not yet defined */
	uint16_t region_op[256]; /* by region: its op code */
	uint32_t nregions;
	uint32_t world;      /* the comm id of MPI_COMM_WORLD, or UINT32_MAX */
	/* by op code, worked out once: what the names say */
	struct { bool known; int coll; } code[256];
	int nranks;
};

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

static int otf2_fail(struct otf2_out *o, OTF2_ErrorCode rc, const char *what)
{
	snprintf(o->err, sizeof(o->err), "%s: %s", what, OTF2_Error_GetDescription(rc));
	return -EIO;
}

/* The collective operation OTF2 has for an MPI call, or -1. */
static int coll_op(const char *name)
{
	static const struct {
		const char *name;
		OTF2_CollectiveOp op;
	} map[] = {
		{ "Barrier", OTF2_COLLECTIVE_OP_BARRIER }, { "Bcast", OTF2_COLLECTIVE_OP_BCAST },
		{ "Gather", OTF2_COLLECTIVE_OP_GATHER }, { "Gatherv", OTF2_COLLECTIVE_OP_GATHERV },
		{ "Scatter", OTF2_COLLECTIVE_OP_SCATTER }, { "Scatterv", OTF2_COLLECTIVE_OP_SCATTERV },
		{ "Allgather", OTF2_COLLECTIVE_OP_ALLGATHER }, { "Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV },
		{ "Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL }, { "Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV },
		{ "Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW }, { "Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE },
		{ "Reduce", OTF2_COLLECTIVE_OP_REDUCE }, { "Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER },
		{ "Scan", OTF2_COLLECTIVE_OP_SCAN }, { "Exscan", OTF2_COLLECTIVE_OP_EXSCAN },
		{ "Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK },
		/* the neighbourhood ones have none of their own: the pattern that matches */
		{ "Neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER },
		{ "Neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV },
		{ "Neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL },
		{ "Neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV },
		{ "Neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW },
	};
	if (strncmp(name, "MPI_", 4))
		return -1;
	name += 4;
	if (!strncmp(name, "Comm_", 5) || !strncmp(name, "Cart_", 5) || !strncmp(name, "Graph_", 6) ||
	    !strncmp(name, "Dist_graph_", 11) || !strncmp(name, "Intercomm_", 10))
		return strstr(name, "free") ? OTF2_COLLECTIVE_OP_DESTROY_HANDLE : OTF2_COLLECTIVE_OP_CREATE_HANDLE;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (!strcasecmp(name, map[i].name)) /* MPI_Iallreduce: "allreduce" */
				return (int)map[i].op;
		if (name[0] != 'I')
			break;
		name++; /* MPI_Iallreduce: as MPI_Allreduce */
	}
	return -1;
}

static OTF2_RegionRole role_of(const char *name, unsigned code)
{
	const struct es_op_info *i = es_op_info(code);
	if (!i || i->group == ES_GROUP_PASTSET)
		return OTF2_REGION_ROLE_FUNCTION;
	if (!strcmp(name, "MPI_Barrier") || !strcmp(name, "MPI_Ibarrier"))
		return OTF2_REGION_ROLE_BARRIER;
	int c = coll_op(name);
	switch (c) {
	case OTF2_COLLECTIVE_OP_BCAST: case OTF2_COLLECTIVE_OP_SCATTER: case OTF2_COLLECTIVE_OP_SCATTERV:
		return OTF2_REGION_ROLE_COLL_ONE2ALL;
	case OTF2_COLLECTIVE_OP_GATHER: case OTF2_COLLECTIVE_OP_GATHERV: case OTF2_COLLECTIVE_OP_REDUCE:
		return OTF2_REGION_ROLE_COLL_ALL2ONE;
	case -1:
		break;
	default:
		return OTF2_REGION_ROLE_COLL_ALL2ALL;
	}
	return i->group == ES_GROUP_P2P ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION;
}

static uint32_t region(struct otf2_out *o, unsigned op)
{
	unsigned code = es_op_code(op);
	if (!o->region_of[code]) {
		o->region_op[o->nregions] = (uint16_t)code;
		o->region_of[code] = ++o->nregions;
	}
	return o->region_of[code] - 1;
}

/* The OTF2 communicator of a collective's tuple (its arg's high bits), or OTF2_UNDEFINED_COMM. */
static OTF2_CommRef comm_of(const struct otf2_out *o, uint32_t arg)
{
	uint32_t id = arg >> 20;
	for (int i = 0; i < ar_ncomms(o->a); i++)
		if (ar_comm(o->a, i)->id == id)
			return (OTF2_CommRef)i;
	return OTF2_UNDEFINED_COMM;
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
	OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(o->ar, (OTF2_LocationRef)t);
	if (!w) {
		free(items);
		snprintf(o->err, sizeof(o->err), "no event writer for thread %d", t);
		return -EIO;
	}
	const struct ar_event *ev = ar_events(o->a);
	OTF2_ErrorCode e = OTF2_SUCCESS;
	OTF2_CommRef world = o->world == UINT32_MAX ? OTF2_UNDEFINED_COMM : comm_of(o, o->world << 20);
	for (size_t i = 0; i < n && e == OTF2_SUCCESS; i++) {
		const struct es_trace *tr = &ev[items[i].event].t;
		unsigned code = es_op_code(tr->op); /* below 256: ar_open saw to it */
		if (!o->code[code].known) {
			const char *nm = es_op_name(code);
			o->code[code].known = true;
			o->code[code].coll = es_op_matched(code) ? coll_op(nm) : -1;
		}
		bool send = ar_message(tr->op) > 0, recv = ar_message(tr->op) < 0;
		const struct es_op_info *oi = es_op_info(code);
		bool icall = oi && oi->kind == ES_KIND_ICOLL; /* its completion ends it, elsewhere */
		uint64_t time = items[i].time;
		uint32_t reg = region(o, tr->op);
		int cop = o->code[code].coll;
		OTF2_CommRef comm = cop >= 0 ? comm_of(o, tr->arg) : OTF2_UNDEFINED_COMM;
		uint32_t root = tr->element == AR_NO_ELEMENT ? OTF2_UNDEFINED_UINT32 : tr->element;
		bool p2p_ok = world != OTF2_UNDEFINED_COMM && tr->element != AR_NO_ELEMENT &&
			      !(tr->op & ES_OP_FAILED);
		switch (items[i].kind) {
		case AR_ENTER:
			e = OTF2_EvtWriter_Enter(w, NULL, time, reg);
			st->regions++;
			if (e == OTF2_SUCCESS && send && p2p_ok) {
				e = OTF2_EvtWriter_MpiSend(w, NULL, time, tr->element, world, tr->arg, tr->size);
				st->messages++;
			} else if (e == OTF2_SUCCESS && comm != OTF2_UNDEFINED_COMM && !icall) {
				e = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, time);
			}
			break;
		case AR_LEAVE:
			if (recv && p2p_ok) {
				e = OTF2_EvtWriter_MpiRecv(w, NULL, time, tr->element, world, tr->arg, tr->size);
				st->messages++;
			} else if (comm != OTF2_UNDEFINED_COMM && !icall) {
				e = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, time, (OTF2_CollectiveOp)cop, comm, root,
								    tr->size, tr->size);
				st->colls++;
			}
			if (e == OTF2_SUCCESS)
				e = OTF2_EvtWriter_Leave(w, NULL, time, reg);
			break;
		case AR_NBC_REQUEST:
			if (comm != OTF2_UNDEFINED_COMM)
				e = OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, time, items[i].event);
			break;
		case AR_NBC_COMPLETE:
			if (comm != OTF2_UNDEFINED_COMM) {
				e = OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, time, (OTF2_CollectiveOp)cop,
										 comm, root, tr->size, tr->size,
										 items[i].event);
				st->completes++;
			}
			break;
		}
	}
	free(items);
	if (e != OTF2_SUCCESS)
		return otf2_fail(o, e, "writing events");
	OTF2_EvtWriter_GetNumberOfEvents(w, &o->events[t]);
	e = OTF2_Archive_CloseEvtWriter(o->ar, w);
	return e == OTF2_SUCCESS ? 0 : otf2_fail(o, e, "closing an event writer");
}

/* MPI_COMM_WORLD: the first communicator of every rank, in order. */
static uint32_t find_world(const ar_archive *a, int nranks)
{
	for (int i = 0; nranks > 0 && i < ar_ncomms(a); i++) {
		const struct ar_comm *c = ar_comm(a, i);
		bool world = c->size == (uint32_t)nranks;
		for (uint32_t r = 0; world && r < c->size; r++)
			world = c->members[r] == (int32_t)r;
		if (world)
			return c->id;
	}
	return UINT32_MAX;
}

static int write_defs(struct otf2_out *o, uint64_t t0, uint64_t t1)
{
	OTF2_GlobalDefWriter *d = OTF2_Archive_GetGlobalDefWriter(o->ar);
	if (!d)
		return otf2_fail(o, OTF2_ERROR_INVALID, "the definitions writer");
	const ar_archive *a = o->a;
	OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteClockProperties(d, 1000000000u, t0, t1 - t0,
								      OTF2_UNDEFINED_TIMESTAMP);
	uint32_t s = 0; /* strings, numbered as they are written */
#define STRING(text) (e == OTF2_SUCCESS ? (e = OTF2_GlobalDefWriter_WriteString(d, s, (text)), s++) : s)
	uint32_t empty = STRING("");
	uint32_t host = STRING("this host"), node = STRING("node");
	if (e == OTF2_SUCCESS)
		e = OTF2_GlobalDefWriter_WriteSystemTreeNode(d, 0, host, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	for (uint32_t r = 0; r < o->nregions && e == OTF2_SUCCESS; r++) {
		const char *name = es_op_name(o->region_op[r]);
		const struct es_op_info *i = es_op_info(o->region_op[r]);
		uint32_t str = STRING(name);
		if (e == OTF2_SUCCESS)
			e = OTF2_GlobalDefWriter_WriteRegion(d, r, str, str, empty, role_of(name, o->region_op[r]),
							     i && i->group != ES_GROUP_PASTSET ? OTF2_PARADIGM_MPI
											       : OTF2_PARADIGM_USER,
							     OTF2_REGION_FLAG_NONE, empty, 0, 0);
	}
	/* a location group per process (trace space), a location per thread */
	int nt = ar_nthreads(a);
	int *group = malloc(sizeof(int) * (size_t)(nt + 1));
	if (!group)
		return -ENOMEM;
	int ngroups = 0;
	for (int t = 0; t < nt && e == OTF2_SUCCESS; t++) {
		group[t] = -1;
		for (int u = 0; u < t && group[t] < 0; u++)
			if (!strcmp(ar_thread(a, u)->process, ar_thread(a, t)->process))
				group[t] = group[u];
		if (group[t] >= 0)
			continue;
		group[t] = ngroups++;
		char label[PS_NAME_MAX + 32];
		if (ar_thread(a, t)->rank >= 0)
			snprintf(label, sizeof(label), "MPI Rank %d", ar_thread(a, t)->rank);
		else
			snprintf(label, sizeof(label), "%s", ar_thread(a, t)->process);
		uint32_t str = STRING(label);
		if (e == OTF2_SUCCESS)
			e = OTF2_GlobalDefWriter_WriteLocationGroup(d, (OTF2_LocationGroupRef)group[t], str,
								    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
								    OTF2_UNDEFINED_LOCATION_GROUP);
	}
	for (int t = 0; t < nt && e == OTF2_SUCCESS; t++) {
		uint32_t str = STRING(ar_thread(a, t)->name);
		if (e == OTF2_SUCCESS)
			e = OTF2_GlobalDefWriter_WriteLocation(d, (OTF2_LocationRef)t, str,
							       OTF2_LOCATION_TYPE_CPU_THREAD, o->events[t],
							       (OTF2_LocationGroupRef)group[t]);
	}
	/* MPI: the ranks' locations, and each communicator as a group of ranks */
	if (o->nranks > 0 && e == OTF2_SUCCESS) {
		uint64_t *members = malloc(sizeof(uint64_t) * (size_t)o->nranks);
		if (!members) {
			free(group);
			return -ENOMEM;
		}
		for (int r = 0; r < o->nranks; r++) {
			members[r] = 0;
			for (int t = nt - 1; t >= 0; t--) /* the rank's first thread */
				if (ar_thread(a, t)->rank == r)
					members[r] = (uint64_t)t;
		}
		uint32_t str = STRING("MPI_COMM_WORLD's ranks");
		if (e == OTF2_SUCCESS)
			e = OTF2_GlobalDefWriter_WriteGroup(d, 0, str, OTF2_GROUP_TYPE_COMM_LOCATIONS,
							    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
							    (uint32_t)o->nranks, members);
		free(members);
		for (int c = 0; c < ar_ncomms(a) && e == OTF2_SUCCESS; c++) {
			const struct ar_comm *cm = ar_comm(a, c);
			uint64_t *m = malloc(sizeof(uint64_t) * cm->size);
			if (!m) {
				free(group);
				return -ENOMEM;
			}
			uint32_t k = 0;
			for (uint32_t r = 0; r < cm->size; r++)
				if (cm->members[r] >= 0)
					m[k++] = (uint64_t)cm->members[r];
			char label[64];
			if (cm->id == o->world)
				snprintf(label, sizeof(label), "MPI_COMM_WORLD");
			else
				snprintf(label, sizeof(label), "communicator %u (%u ranks)", cm->id, cm->size);
			uint32_t name = STRING(label);
			if (e == OTF2_SUCCESS)
				e = OTF2_GlobalDefWriter_WriteGroup(d, (OTF2_GroupRef)(c + 1), name,
								    OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
								    OTF2_GROUP_FLAG_NONE, k, m);
			if (e == OTF2_SUCCESS)
				e = OTF2_GlobalDefWriter_WriteComm(d, (OTF2_CommRef)c, name, (OTF2_GroupRef)(c + 1),
								   OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
			free(m);
		}
	}
#undef STRING
	free(group);
	return e == OTF2_SUCCESS ? 0 : otf2_fail(o, e, "writing definitions");
}

int ar_to_otf2(const ar_archive *a, const char *dir, const char *name, struct ar_out_stats *st,
	       char *err, size_t errlen)
{
	struct otf2_out o = { .a = a, .world = UINT32_MAX };
	struct stat sb;
	memset(st, 0, sizeof(*st));
	if (stat(dir, &sb) == 0) {
		snprintf(err, errlen, "%s: exists; OTF2 wants a new directory", dir);
		return -EEXIST;
	}
	for (int t = 0; t < ar_nthreads(a); t++)
		if (ar_thread(a, t)->rank >= o.nranks)
			o.nranks = ar_thread(a, t)->rank + 1;
	o.world = find_world(a, o.nranks);
	o.events = calloc((size_t)ar_nthreads(a) + 1, sizeof(*o.events));
	if (!o.events)
		return -ENOMEM;
	int rc = 0;
	OTF2_ErrorCode e;
	o.ar = OTF2_Archive_Open(dir, name, OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
				 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o.ar) {
		snprintf(err, errlen, "%s: OTF2 cannot make an archive there", dir);
		free(o.events);
		return -EIO;
	}
	if ((e = OTF2_Archive_SetFlushCallbacks(o.ar, &flush_callbacks, NULL)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_SetSerialCollectiveCallbacks(o.ar)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_SetCreator(o.ar, "EventSpace esconvert " ES_VERSION)) != OTF2_SUCCESS ||
	    (e = OTF2_Archive_OpenEvtFiles(o.ar)) != OTF2_SUCCESS)
		rc = otf2_fail(&o, e, "opening the archive");
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < ar_nevents(a); i++) {
		const struct es_trace *t = &ar_events(a)[i].t;
		t0 = t->start < t0 ? t->start : t0;
		t1 = t->end > t1 ? t->end : t1;
	}
	if (t0 > t1)
		t0 = t1 = 0;
	for (int t = 0; !rc && t < ar_nthreads(a); t++)
		rc = write_thread(&o, t, st);
	if (!rc && (e = OTF2_Archive_CloseEvtFiles(o.ar)) != OTF2_SUCCESS)
		rc = otf2_fail(&o, e, "closing the event files");
	/* every location has its (empty) local definitions */
	if (!rc && (e = OTF2_Archive_OpenDefFiles(o.ar)) != OTF2_SUCCESS)
		rc = otf2_fail(&o, e, "opening the definition files");
	for (int t = 0; !rc && t < ar_nthreads(a); t++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o.ar, (OTF2_LocationRef)t);
		if (!dw || (e = OTF2_Archive_CloseDefWriter(o.ar, dw)) != OTF2_SUCCESS)
			rc = otf2_fail(&o, dw ? e : OTF2_ERROR_INVALID, "a location's definitions");
	}
	if (!rc && (e = OTF2_Archive_CloseDefFiles(o.ar)) != OTF2_SUCCESS)
		rc = otf2_fail(&o, e, "closing the definition files");
	if (!rc)
		rc = write_defs(&o, t0, t1);
	e = OTF2_Archive_Close(o.ar);
	if (!rc && e != OTF2_SUCCESS)
		rc = otf2_fail(&o, e, "closing the archive");
	if (rc)
		snprintf(err, errlen, "%s: %s", dir, o.err[0] ? o.err : strerror(-rc));
	free(o.events);
	return rc;
}
