/* comms.c - communicators and windows as monitors see them (ids, sizes, call numbers), and the sizes calls.def asks for. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/record.h"

/* Our attribute on a communicator or window. */
struct info {
	uint32_t seq, id;
	uint32_t size, me, kind; /* for the record saying it was freed */
	uint64_t handle;
};

/* FNV-1a over the members' world ranks: the same on every member. */
static uint32_t member_hash(MPI_Group grp, int *size, int *me)
{
	MPI_Group world;
	int n = 0;
	uint32_t h = 2166136261u;
	PMPI_Comm_group(MPI_COMM_WORLD, &world);
	PMPI_Group_size(grp, &n);
	PMPI_Group_rank(grp, me);
	int *in = malloc(sizeof(int) * (size_t)(n + 1)), *out = malloc(sizeof(int) * (size_t)(n + 1));
	if (in && out) {
		for (int i = 0; i < n; i++)
			in[i] = i;
		PMPI_Group_translate_ranks(grp, n, in, world, out);
		for (int i = 0; i < n; i++)
			h = (h ^ (uint32_t)out[i]) * 16777619u;
	}
	h = (h ^ (uint32_t)n) * 16777619u;
	free(in);
	free(out);
	PMPI_Group_free(&world);
	*size = n;
	return h;
}

/* A new id for a group met now, written to mpi.comms with its handle. */
static struct info *new_info(MPI_Group grp, uint32_t salt, uint32_t kind, uint64_t handle)
{
	int size = 0, me = 0;
	uint32_t h = member_hash(grp, &size, &me) ^ salt;
	pthread_mutex_lock(&es_g.lock);
	/* the k-th group of these members this process met */
	uint32_t k = 0;
	for (int i = 0; i < es_g.ncomms; i++)
		k += es_g.comm_hash[i] == h;
	if (es_g.ncomms < (int)(sizeof(es_g.comm_hash) / sizeof(es_g.comm_hash[0])))
		es_g.comm_hash[es_g.ncomms++] = h;
	pthread_mutex_unlock(&es_g.lock);
	struct info *ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->id = ((h ^ (k * 0x9e3779b9u)) * 2654435761u) >> 20; /* 12 bits */
	ci->size = (uint32_t)size;
	ci->me = (uint32_t)me;
	ci->kind = kind;
	ci->handle = handle;
	struct es_comm_rec rec = { ci->id, (uint32_t)size, (uint32_t)me, k | kind, handle };
	if (es_g.comms)
		ps_write(es_g.comms, &rec, 0, NULL);
	return ci;
}

static struct info *comm_info(MPI_Comm comm)
{
	struct info *ci;
	int flag = 0;
	if (es_g.keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
	    PMPI_Comm_get_attr(comm, es_g.keyval, &ci, &flag) != MPI_SUCCESS)
		return NULL;
	if (flag)
		return ci;
	MPI_Group grp;
	if (PMPI_Comm_group(comm, &grp) != MPI_SUCCESS)
		return NULL;
	ci = new_info(grp, 0, 0, es_handle(comm));
	PMPI_Group_free(&grp);
	if (ci && PMPI_Comm_set_attr(comm, es_g.keyval, ci) != MPI_SUCCESS) {
		free(ci);
		return NULL;
	}
	return ci;
}

#define WIN_SALT 0x57494e00u   /* "WIN": a window and its communicator get different ids */

static struct info *win_info(MPI_Win win)
{
	struct info *ci;
	int flag = 0;
	if (es_g.win_keyval == MPI_KEYVAL_INVALID || win == MPI_WIN_NULL ||
	    PMPI_Win_get_attr(win, es_g.win_keyval, &ci, &flag) != MPI_SUCCESS)
		return NULL;
	if (flag)
		return ci;
	MPI_Group grp;
	if (PMPI_Win_get_group(win, &grp) != MPI_SUCCESS)
		return NULL;
	ci = new_info(grp, WIN_SALT, ES_COMMS_WINDOW, es_handle(win));
	PMPI_Group_free(&grp);
	if (ci && PMPI_Win_set_attr(win, es_g.win_keyval, ci) != MPI_SUCCESS) {
		free(ci);
		return NULL;
	}
	return ci;
}

uint32_t es_coll(MPI_Comm comm)
{
	struct info *ci = comm_info(comm);
	return ci ? ci->id << 20 | (ci->seq++ & 0xfffff) : 0;
}

uint32_t es_win_coll(MPI_Win win)
{
	struct info *ci = win_info(win);
	return ci ? ci->id << 20 | (ci->seq++ & 0xfffff) : 0;
}

void es_comm_met(MPI_Comm comm)
{
	comm_info(comm);
}

void es_win_met(MPI_Win win)
{
	win_info(win);
}

uint32_t es_win_id(MPI_Win win)
{
	struct info *ci = win_info(win);
	return ci ? ci->id : ES_NONE;
}

/* The handle may come back for another communicator: monitors must not
 * take its peers' ranks for this one's. */
static void freed(struct info *ci)
{
	struct es_comm_rec rec = { ci->id, ci->size, ci->me, ci->kind | ES_COMMS_FREED, ci->handle };
	if (es_g.comms)
		ps_write(es_g.comms, &rec, 0, NULL);
	free(ci);
}

static int free_comm_info(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	freed(value);
	return MPI_SUCCESS;
}

static int free_win_info(MPI_Win win, int keyval, void *value, void *extra)
{
	(void)win;
	(void)keyval;
	(void)extra;
	freed(value);
	return MPI_SUCCESS;
}

void es_comms_setup(void)
{
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_comm_info, &es_g.keyval, NULL);
	PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, free_win_info, &es_g.win_keyval, NULL);
	es_comm_met(MPI_COMM_WORLD);
}

void es_comms_finalize(void)
{
	if (es_g.keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_free_keyval(&es_g.keyval);
	if (es_g.win_keyval != MPI_KEYVAL_INVALID)
		PMPI_Win_free_keyval(&es_g.win_keyval);
}

/* --- sizes --------------------------------------------------------------------------- */

uint64_t es_bytes(int count, MPI_Datatype type)
{
	int sz = 0;
	/* a Fortran handle that converts to nothing must not reach MPI: its
	 * error handler would end the program */
	if (count <= 0 || !type || type == MPI_DATATYPE_NULL ||
	    PMPI_Type_size(type, &sz) != MPI_SUCCESS)
		return 0;
	return (uint64_t)count * (uint64_t)sz;
}

uint64_t es_sum(const int counts[], int n, MPI_Datatype type)
{
	uint64_t b = 0;
	for (int i = 0; counts && i < n; i++)
		b += es_bytes(counts[i], type);
	return b;
}

uint64_t es_sumw(const int counts[], const MPI_Datatype *ct, const MPI_Fint *ft, int n)
{
	uint64_t b = 0;
	for (int i = 0; counts && (ct || ft) && i < n; i++)
		b += es_bytes(counts[i], ct ? ct[i] : PMPI_Type_f2c(ft[i]));
	return b;
}

uint64_t es_got(const MPI_Status *st, int rc)
{
	int n = 0;
	if (rc != MPI_SUCCESS || st->MPI_SOURCE < 0 ||
	    PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return (uint64_t)n;
}

int es_comm_size(MPI_Comm comm)
{
	int n = 0;
	if (comm && comm != MPI_COMM_NULL)
		PMPI_Comm_size(comm, &n);
	return n;
}

uint64_t es_root_share(int root, MPI_Comm comm, uint64_t bytes)
{
	int me = -1, inter = 0;
	if (!comm || comm == MPI_COMM_NULL)
		return 0;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter) /* the root says MPI_ROOT on an intercommunicator */
		return root == MPI_ROOT ? bytes : 0;
	PMPI_Comm_rank(comm, &me);
	return me == root ? bytes : 0;
}

int es_outdeg(MPI_Comm comm)
{
	int topo = MPI_UNDEFINED, n = 0, me = 0, in = 0, out = 0, weighted = 0;
	if (!comm || comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
		return 0;
	switch (topo) {
	case MPI_CART:
		PMPI_Cartdim_get(comm, &n);
		return 2 * n;
	case MPI_GRAPH:
		PMPI_Comm_rank(comm, &me);
		PMPI_Graph_neighbors_count(comm, me, &n);
		return n;
	case MPI_DIST_GRAPH:
		PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
		return out;
	default:
		return 0;
	}
}
