/* otf2_defs.c - an archive's OTF2 definitions: strings, regions (calls and phases), locations (ranks' threads, by rank then name), communicators and their groups, intercommunicators. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "otf2_int.h"

/* The collective operation OTF2 has for an MPI call, or -1. */
int ar__otf2_coll_op(const char *name)
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

int ar__otf2_fail(struct otf2_out *o, OTF2_ErrorCode rc, const char *what)
{
	snprintf(o->err, sizeof(o->err), "%s: %s", what, OTF2_Error_GetDescription(rc));
	return -EIO;
}

OTF2_RegionRole ar__otf2_role_of(const char *name, unsigned code)
{
	const struct es_op_info *i = es_op_info(code);
	if (!i || i->group == ES_GROUP_PASTSET)
		return OTF2_REGION_ROLE_FUNCTION;
	if (!strcmp(name, "MPI_Barrier") || !strcmp(name, "MPI_Ibarrier"))
		return OTF2_REGION_ROLE_BARRIER;
	int c = ar__otf2_coll_op(name);
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

/* A communicator's group (side s) as OTF2 group g of MPI ranks. */
static OTF2_ErrorCode comm_group(OTF2_GlobalDefWriter *d, const struct ar_comm *cm, int s, OTF2_GroupRef g,
				 uint32_t name)
{
	uint64_t *m = malloc(sizeof(uint64_t) * (cm->size[s] + 1));
	if (!m)
		return OTF2_ERROR_MEM_ALLOC_FAILED;
	uint32_t k = 0;
	for (uint32_t r = 0; r < cm->size[s]; r++)
		if (cm->members[s][r] >= 0)
			m[k++] = (uint64_t)cm->members[s][r];
	OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteGroup(d, g, name, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
							   OTF2_GROUP_FLAG_NONE, k, m);
	free(m);
	return e;
}

/* Threads in rank order, then by process and name (qsort_r's, over archive arg). */
static int by_rank_then_name(const void *x, const void *y, void *arg)
{
	const struct ar_thread *a = ar_thread(arg, *(const int *)x), *b = ar_thread(arg, *(const int *)y);
	unsigned ra = (unsigned)a->rank, rb = (unsigned)b->rank; /* -1 last */
	if (ra != rb)
		return ra < rb ? -1 : 1;
	int c = strcmp(a->process, b->process);
	return c ? c : strcmp(a->name, b->name);
}

/* The global definitions being written: strings numbered as they come,
 * and the first error, after which nothing more is written. */
struct defs {
	OTF2_GlobalDefWriter *d;
	OTF2_ErrorCode e;
	uint32_t next, empty;
};

static uint32_t def_string(struct defs *df, const char *text)
{
	if (df->e == OTF2_SUCCESS)
		df->e = OTF2_GlobalDefWriter_WriteString(df->d, df->next, text);
	return df->next++;
}

/* A region per call and phase; the call-site attribute and each place;
 * MPI-IO's paradigm, and a file and handle per file name. */
static void def_regions(const struct otf2_out *o, struct defs *df)
{
	for (uint32_t r = 0; r < o->nregions && df->e == OTF2_SUCCESS; r++) {
		const char *name = o->phase[r] ? o->phase[r] : es_op_name(o->region_op[r]);
		const struct es_op_info *i = es_op_info(o->region_op[r]);
		uint32_t str = def_string(df, name);
		bool mpi = !o->phase[r] && i && i->group != ES_GROUP_PASTSET;
		if (df->e == OTF2_SUCCESS) /* a phase is the user's: a code region */
			df->e = OTF2_GlobalDefWriter_WriteRegion(df->d, r, str, str, df->empty,
								 o->phase[r] ? OTF2_REGION_ROLE_CODE
									     : ar__otf2_role_of(name, o->region_op[r]),
								 mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER,
								 OTF2_REGION_FLAG_NONE, df->empty, 0, 0);
	}
	if (o->nplaces && df->e == OTF2_SUCCESS) {
		uint32_t an = def_string(df, "callsite");
		uint32_t ad = def_string(df, "where the program made the call (its innermost frame)");
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteAttribute(df->d, 0, an, ad, OTF2_TYPE_SOURCE_CODE_LOCATION);
	}
	for (uint32_t i = 0; i < o->nplaces && df->e == OTF2_SUCCESS; i++) {
		uint32_t file = def_string(df, o->places[i].file);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteSourceCodeLocation(df->d, i, file, (uint32_t)o->places[i].line);
	}
	if (o->nfiles && df->e == OTF2_SUCCESS) {
		uint32_t mpiio = def_string(df, "MPI-IO");
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteIoParadigm(df->d, 0, mpiio, mpiio,
								     OTF2_IO_PARADIGM_CLASS_PARALLEL,
								     OTF2_IO_PARADIGM_FLAG_NONE, 0, NULL, NULL, NULL);
	}
	for (uint32_t f = 0; f < o->nfiles && df->e == OTF2_SUCCESS; f++) {
		uint32_t str = def_string(df, o->files[f]);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteIoRegularFile(df->d, f, str, 0);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteIoHandle(df->d, f, str, f, 0, OTF2_IO_HANDLE_FLAG_NONE,
								   OTF2_UNDEFINED_COMM, OTF2_UNDEFINED_IO_HANDLE);
	}
}

/* A location group per process (trace space), a location per thread,
 * defined in rank order (then by process and name): the recorder numbers
 * threads as it meets them, a viewer lists them as defined.  An archive
 * cut off before it named a thread gets one that says so, with no event:
 * OTF2's readers want a location. */
static int def_locations(const struct otf2_out *o, struct defs *df)
{
	const ar_archive *a = o->a;
	int nt = ar_nthreads(a);
	int *group = malloc(sizeof(int) * (size_t)(nt + 1)), *order = malloc(sizeof(int) * (size_t)(nt + 1));
	if (!group || !order) {
		free(group), free(order);
		return -ENOMEM;
	}
	for (int t = 0; t < nt; t++)
		order[t] = t;
	qsort_r(order, (size_t)nt, sizeof(*order), by_rank_then_name, (void *)a);
	int ngroups = 0;
	int last = -1; /* the last located thread in order */
	for (int k = 0; k < nt && df->e == OTF2_SUCCESS; k++) {
		int t = order[k];
		if (o->located[t] == LOC_NONE)
			continue;
		/* sorted by rank, then process: a process's threads are together
		 * (a process is one rank), so the one before says (linear in threads) */
		if (last >= 0 && !strcmp(ar_thread(a, last)->process, ar_thread(a, t)->process)) {
			group[t] = group[last];
			continue;
		}
		last = t;
		group[t] = ngroups++;
		char label[PS_NAME_MAX + 32];
		if (ar_thread(a, t)->rank >= 0)
			snprintf(label, sizeof(label), "MPI Rank %d", ar_thread(a, t)->rank);
		else
			snprintf(label, sizeof(label), "%s", ar_thread(a, t)->process);
		uint32_t str = def_string(df, label);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteLocationGroup(df->d, (OTF2_LocationGroupRef)group[t], str,
									OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
									OTF2_UNDEFINED_LOCATION_GROUP);
	}
	for (int k = 0; k < nt && df->e == OTF2_SUCCESS; k++) {
		int t = order[k];
		if (o->located[t] == LOC_NONE)
			continue;
		uint32_t str = def_string(df, ar_thread(a, t)->name);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteLocation(df->d, (OTF2_LocationRef)t, str,
								   OTF2_LOCATION_TYPE_CPU_THREAD, o->events[t],
								   (OTF2_LocationGroupRef)group[t]);
	}
	free(order);
	free(group);
	if (!nt && df->e == OTF2_SUCCESS)
		df->e = OTF2_GlobalDefWriter_WriteLocationGroup(df->d, 0, def_string(df, "no thread recorded"),
								OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
								OTF2_UNDEFINED_LOCATION_GROUP);
	if (!nt && df->e == OTF2_SUCCESS)
		df->e = OTF2_GlobalDefWriter_WriteLocation(df->d, 0, def_string(df, "no thread recorded"),
							   OTF2_LOCATION_TYPE_CPU_THREAD, 0, 0);
	return 0;
}

/* Communicator number c as OTF2's comm_ref[c]: a group of its ranks (two
 * for an intercommunicator), numbered as they come, for readers want
 * them in order. */
static void def_comm(const struct otf2_out *o, struct defs *df, int c, OTF2_GroupRef *next_group)
{
	const struct ar_comm *cm = ar_comm(o->a, c);
	if (cm->flags & ES_COMMS_WINDOW)
		return; /* one-sided calls are regions only */
	char label[96];
	if (cm->flags & ES_COMMS_WORLD)
		snprintf(label, sizeof(label), "MPI_COMM_WORLD");
	else
		snprintf(label, sizeof(label), "%scommunicator %llx (%u ranks)", cm->flags & ES_COMMS_INTER ? "inter" : "",
			 (unsigned long long)cm->id, cm->size[0] + cm->size[1]);
	uint32_t name = def_string(df, label);
	OTF2_GroupRef ga = (*next_group)++;
	OTF2_GroupRef gb = cm->flags & ES_COMMS_INTER ? (*next_group)++ : OTF2_UNDEFINED_GROUP;
	if (df->e == OTF2_SUCCESS)
		df->e = comm_group(df->d, cm, 0, ga, name);
	if (df->e == OTF2_SUCCESS && (cm->flags & ES_COMMS_INTER))
		df->e = comm_group(df->d, cm, 1, gb, name);
	if (df->e == OTF2_SUCCESS && (cm->flags & ES_COMMS_INTER))
		df->e = OTF2_GlobalDefWriter_WriteInterComm(df->d, o->comm_ref[c], name, ga, gb, OTF2_UNDEFINED_COMM,
							    OTF2_COMM_FLAG_NONE);
	else if (df->e == OTF2_SUCCESS)
		df->e = OTF2_GlobalDefWriter_WriteComm(df->d, o->comm_ref[c], name, ga, OTF2_UNDEFINED_COMM,
						       OTF2_COMM_FLAG_NONE);
}

/* MPI: the ranks' locations (each rank's first thread), and each communicator. */
static int def_mpi(const struct otf2_out *o, struct defs *df)
{
	const ar_archive *a = o->a;
	int nt = ar_nthreads(a);
	if (o->nranks <= 0 || df->e != OTF2_SUCCESS)
		return 0;
	uint64_t *members = malloc(sizeof(uint64_t) * (size_t)o->nranks);
	if (!members)
		return -ENOMEM;
	for (int r = 0; r < o->nranks; r++)
		members[r] = UINT64_MAX;
	for (int t = 0; t < nt; t++) { /* each rank's first thread: one pass */
		int r = ar_thread(a, t)->rank;
		if (r >= 0 && members[r] == UINT64_MAX)
			members[r] = (uint64_t)t;
	}
	for (int r = 0; r < o->nranks; r++)
		members[r] = members[r] == UINT64_MAX ? 0 : members[r];
	uint32_t str = def_string(df, "MPI_COMM_WORLD's ranks");
	if (df->e == OTF2_SUCCESS)
		df->e = OTF2_GlobalDefWriter_WriteGroup(df->d, 0, str, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
							OTF2_GROUP_FLAG_NONE, (uint32_t)o->nranks, members);
	free(members);
	OTF2_GroupRef next_group = 1;
	for (int c = 0; c < ar_ncomms(a) && df->e == OTF2_SUCCESS; c++)
		def_comm(o, df, c, &next_group);
	return 0;
}

/* A metric per wait-state pattern met (otf2.c writes their events): its
 * class's and its member's number are metric_of's. */
static void def_metrics(const struct otf2_out *o, struct defs *df)
{
	uint32_t unit = def_string(df, "s");
	for (int p = 0; p < WS_NPATTERNS && df->e == OTF2_SUCCESS; p++) {
		if (!o->pattern_used[p])
			continue;
		char desc[160];
		snprintf(desc, sizeof(desc), "seconds of %s (Scalasca's wait-state pattern) so far", ws_pattern_name(p));
		uint32_t name = def_string(df, ws_pattern_name(p)), d = def_string(df, desc);
		OTF2_MetricMemberRef m = o->metric_of[p];
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteMetricMember(df->d, m, name, d, OTF2_METRIC_TYPE_OTHER,
								       OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_DOUBLE,
								       OTF2_BASE_DECIMAL, 0, unit);
		if (df->e == OTF2_SUCCESS)
			df->e = OTF2_GlobalDefWriter_WriteMetricClass(df->d, (OTF2_MetricRef)m, 1, &m,
								      OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
	}
}

int ar__otf2_defs(struct otf2_out *o, uint64_t t0, uint64_t t1)
{
	struct defs df = { .d = OTF2_Archive_GetGlobalDefWriter(o->ar) };
	if (!df.d)
		return ar__otf2_fail(o, OTF2_ERROR_INVALID, "the definitions writer");
	df.e = OTF2_GlobalDefWriter_WriteClockProperties(df.d, 1000000000u, t0, t1 - t0, OTF2_UNDEFINED_TIMESTAMP);
	df.empty = def_string(&df, "");
	uint32_t host = def_string(&df, "this host"), node = def_string(&df, "node");
	if (df.e == OTF2_SUCCESS)
		df.e = OTF2_GlobalDefWriter_WriteSystemTreeNode(df.d, 0, host, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	def_regions(o, &df);
	def_metrics(o, &df);
	if (def_locations(o, &df) || def_mpi(o, &df))
		return -ENOMEM;
	return df.e == OTF2_SUCCESS ? 0 : ar__otf2_fail(o, df.e, "writing definitions");
}
