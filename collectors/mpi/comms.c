/* comms.c - communicators and windows as monitors see them: ids the same on every member, serials, world ranks, mpi.comms; and the sizes calls.def asks for. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/wrap.h"

/*
 * A communicator's id is made where it is made, from what every member
 * knows alike, with no message of ours: MPI_COMM_WORLD's is fixed; a child
 * of a collective call over a parent (dup, split, create, cart and graph
 * topologies, merge, windows) mixes the parent's id, how many the parent
 * had made before (every member counts alike: collectives on a
 * communicator come in the same order on all its members) and the world
 * rank of its own rank 0, which tells apart the children of one split.
 * MPI_Comm_create_group, collective over the group only, mixes the parent,
 * the members, the tag and how many such this process made; an
 * intercommunicator its two groups' first members, the tag and how many
 * such; one met without being seen made (MPI_COMM_SELF, or one a call we
 * do not wrap made) its members and how many with those members this
 * process met.  64 bits: two communicators of a job share an id with odds
 * of about n^2 / 2^65.
 */

struct es_comm es_world_comm;

/* mpi.comms holds every record for a while; a live communicator's is
 * written again once this many newer ones followed it, so a reader that
 * starts late finds every one in force within the ring. */
#define COMMS_AGAIN (ES_COMMS_HELD / 2)

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* World ranks of a group's members, in its order; NULL with *identity when
 * member i is world rank i (MPI_COMM_WORLD and its duplicates). */
static int *world_of(MPI_Group grp, int *n, bool *identity)
{
	MPI_Group world;
	*n = 0;
	*identity = false;
	PMPI_Group_size(grp, n);
	int *in = malloc(sizeof(int) * (size_t)(*n + 1)), *out = malloc(sizeof(int) * (size_t)(*n + 1));
	if (!in || !out || PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS) {
		free(in);
		free(out);
		return NULL;
	}
	for (int i = 0; i < *n; i++)
		in[i] = i;
	PMPI_Group_translate_ranks(grp, *n, in, world, out);
	PMPI_Group_free(&world);
	free(in);
	bool same = true;
	for (int i = 0; i < *n && same; i++)
		same = out[i] == i;
	if (same) {
		free(out);
		*identity = true;
		return NULL;
	}
	return out;
}

static uint64_t members_hash(const int *world, int n)
{
	uint64_t h = mix(0x6d656d62ull, (uint64_t)n);
	for (int i = 0; i < n; i++)
		h = mix(h, world ? (uint64_t)world[i] : (uint64_t)i);
	return h;
}

/* How many times this process asked with key before: 0, 1, ... */
static uint32_t occurrence(uint64_t key)
{
	static uint64_t *keys;
	static uint32_t *counts;
	static size_t n, cap;
	uint32_t got = 0;
	pthread_mutex_lock(&es_g.lock);
	size_t i = 0;
	while (i < n && keys[i] != key)
		i++;
	if (i < n) {
		got = counts[i]++;
	} else {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			uint64_t *k = realloc(keys, nc * sizeof(*k));
			if (k)
				keys = k;
			uint32_t *c = k ? realloc(counts, nc * sizeof(*c)) : NULL;
			if (c)
				counts = c;
			cap = k && c ? nc : cap;
		}
		if (n < cap) {
			keys[n] = key;
			counts[n++] = 1;
		}
	}
	pthread_mutex_unlock(&es_g.lock);
	return got;
}

/* --- records ------------------------------------------------------------------------- */

static void live_unlink(struct es_comm *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (es_g.live == c)
		es_g.live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else if (es_g.live_tail == c)
		es_g.live_tail = c->prev;
	c->prev = c->next = NULL;
}

static void live_append(struct es_comm *c)
{
	c->prev = es_g.live_tail;
	c->next = NULL;
	if (es_g.live_tail)
		es_g.live_tail->next = c;
	else
		es_g.live = c;
	es_g.live_tail = c;
}

static uint64_t put_rec(const struct es_comm *c, uint32_t flags)
{
	struct es_comm_rec r = { .id = c->id, .stamp = es_now(), .serial = c->serial, .size = c->size,
				 .me = c->me, .flags = c->flags | flags };
	uint64_t idx = 0;
	if (es_g.comms)
		ps_write(es_g.comms, &r, 0, &idx);
	return idx;
}

/* Under es_g.lock: c's record, and again those of live ones it would
 * otherwise leave behind. */
static void publish(struct es_comm *c, uint32_t flags)
{
	uint64_t idx = put_rec(c, flags);
	if (flags & ES_COMMS_FREED)
		return;
	c->last_written = idx;
	live_unlink(c);
	live_append(c);
	struct es_comm *old;
	while ((old = es_g.live) != c && idx - old->last_written > COMMS_AGAIN) {
		old->last_written = idx = put_rec(old, ES_COMMS_AGAIN);
		live_unlink(old);
		live_append(old);
	}
}

/* A new attribute for a communicator or window of these groups. */
static struct es_comm *make(uint64_t id, MPI_Group grp, MPI_Group remote, uint32_t flags, uint64_t handle)
{
	struct es_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	int n = 0, me = 0, rn = 0;
	bool ident = false, rident = false;
	c->world = world_of(grp, &n, &ident);
	PMPI_Group_rank(grp, &me);
	if (remote != MPI_GROUP_NULL) {
		c->rworld = world_of(remote, &rn, &rident);
		if (!c->rworld && rident && rn > 0 && (c->rworld = malloc(sizeof(int) * (size_t)rn)))
			for (int i = 0; i < rn; i++)
				c->rworld[i] = i;
		flags |= ES_COMMS_INTER;
	}
	if ((!c->world && !ident && n > 0) || (remote != MPI_GROUP_NULL && !c->rworld && rn > 0)) {
		free(c->world);
		free(c->rworld);
		free(c);
		return NULL;
	}
	atomic_init(&c->refs, 1);
	c->id = id;
	c->size = (uint32_t)n;
	c->me = (uint32_t)me;
	c->rsize = (uint32_t)rn;
	c->flags = flags;
	c->handle = handle;
	pthread_mutex_lock(&es_g.lock);
	c->serial = ++es_g.next_serial; /* 0 is MPI_COMM_WORLD's */
	c->calls = es_g.calls ? &es_g.calls[c->serial % ES_CALLS_SLOTS] : NULL;
	if (c->calls)
		__atomic_store_n(&c->calls->begun, 0, __ATOMIC_RELAXED);
	publish(c, 0);
	pthread_mutex_unlock(&es_g.lock);
	return c;
}

void es_comm_hold(struct es_comm *c)
{
	if (c && c != &es_world_comm)
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void es_comm_release(struct es_comm *c)
{
	if (c && c != &es_world_comm && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
		free(c->world);
		free(c->rworld);
		free(c);
	}
}

static void drop(struct es_comm *c)
{
	pthread_mutex_lock(&es_g.lock);
	/* caches drop their pointers before the memory goes */
	atomic_fetch_add_explicit(&es_g.comm_gen, 1, memory_order_acq_rel);
	publish(c, ES_COMMS_FREED);
	live_unlink(c);
	pthread_mutex_unlock(&es_g.lock);
	es_comm_release(c);
}

static int free_comm_info(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	drop(value);
	return MPI_SUCCESS;
}

static int free_win_info(MPI_Win win, int keyval, void *value, void *extra)
{
	(void)win, (void)keyval, (void)extra;
	drop(value);
	return MPI_SUCCESS;
}

/* --- communicators ----------------------------------------------------------------------- */

static struct es_comm *attach(MPI_Comm comm, uint64_t id)
{
	MPI_Group grp, remote = MPI_GROUP_NULL;
	int inter = 0;
	if (PMPI_Comm_group(comm, &grp) != MPI_SUCCESS)
		return NULL;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter && PMPI_Comm_remote_group(comm, &remote) != MPI_SUCCESS)
		remote = MPI_GROUP_NULL;
	struct es_comm *c = make(id, grp, remote, 0, es_handle_of(comm));
	PMPI_Group_free(&grp);
	if (remote != MPI_GROUP_NULL)
		PMPI_Group_free(&remote);
	if (c && PMPI_Comm_set_attr(comm, es_g.keyval, c) != MPI_SUCCESS) {
		drop(c);
		return NULL;
	}
	return c;
}

/* Which of an intercommunicator's groups this rank's is: the first has the
 * lower world rank at its rank 0. */
static void side_of(struct es_comm *c)
{
	if (!(c->flags & ES_COMMS_INTER) || !c->rworld || !c->rsize)
		return;
	uint32_t mine = c->world ? (uint32_t)c->world[0] : 0, theirs = (uint32_t)c->rworld[0];
	if (mine > theirs)
		c->flags |= ES_COMMS_SIDE1;
}

/* The id of a communicator met, not seen made: from its members. */
static uint64_t met_id(MPI_Comm comm)
{
	MPI_Group grp, remote = MPI_GROUP_NULL;
	int n = 0, rn = 0, inter = 0;
	bool ident;
	if (PMPI_Comm_group(comm, &grp) != MPI_SUCCESS)
		return 0;
	int *w = world_of(grp, &n, &ident);
	uint64_t h = members_hash(w, n);
	free(w);
	PMPI_Group_free(&grp);
	PMPI_Comm_test_inter(comm, &inter);
	if (inter && PMPI_Comm_remote_group(comm, &remote) == MPI_SUCCESS) {
		int *r = world_of(remote, &rn, &ident);
		uint64_t rh = members_hash(r, rn);
		free(r);
		PMPI_Group_free(&remote);
		h = h < rh ? mix(h, rh) : mix(rh, h); /* the same from either side */
	}
	uint64_t key = mix(0x6d6574ull, h);
	return mix(key, occurrence(key));
}

struct es_comm *es__comm_info(MPI_Comm comm)
{
	struct es_comm *c;
	int flag = 0;
	if (es_g.keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
	    PMPI_Comm_get_attr(comm, es_g.keyval, &c, &flag) != MPI_SUCCESS)
		return NULL;
	if (flag)
		return c;
	c = attach(comm, met_id(comm));
	if (c)
		side_of(c);
	return c;
}

uint32_t es_comm_seed(struct es_comm *parent)
{
	return parent ? parent->made++ : 0;
}

/* The world rank of a communicator's rank 0, and of its remote group's. */
static void leaders(MPI_Comm comm, uint64_t *local, uint64_t *remote)
{
	MPI_Group g, wg;
	int zero = 0, w = MPI_UNDEFINED, inter = 0;
	*local = *remote = UINT64_MAX;
	if (PMPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS)
		return;
	if (PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
		PMPI_Group_translate_ranks(g, 1, &zero, wg, &w);
		*local = (uint64_t)(uint32_t)w;
		PMPI_Group_free(&g);
	}
	PMPI_Comm_test_inter(comm, &inter);
	if (inter && PMPI_Comm_remote_group(comm, &g) == MPI_SUCCESS) {
		PMPI_Group_translate_ranks(g, 1, &zero, wg, &w);
		*remote = (uint64_t)(uint32_t)w;
		PMPI_Group_free(&g);
	}
	PMPI_Group_free(&wg);
}

void es_comm_made(struct es_comm *parent, uint32_t seed, MPI_Comm newcomm, enum es_made how, int tag)
{
	if (newcomm == MPI_COMM_NULL || es_g.keyval == MPI_KEYVAL_INVALID)
		return;
	uint64_t a, b, id;
	leaders(newcomm, &a, &b);
	switch (how) {
	case ES_MADE_GROUP: {
		MPI_Group grp;
		int n = 0;
		bool ident;
		uint64_t h = 0;
		if (PMPI_Comm_group(newcomm, &grp) == MPI_SUCCESS) {
			int *w = world_of(grp, &n, &ident);
			h = members_hash(w, n);
			free(w);
			PMPI_Group_free(&grp);
		}
		uint64_t key = mix(mix(parent ? parent->id : 0, h), (uint64_t)(uint32_t)tag);
		id = mix(key, occurrence(key));
		break;
	}
	case ES_MADE_INTER: {
		uint64_t key = mix(mix(0x696e746572ull, a < b ? a : b), mix(a < b ? b : a, (uint64_t)(uint32_t)tag));
		id = mix(key, occurrence(key));
		break;
	}
	default:
		id = mix(mix(parent ? parent->id : 0, seed), a);
		break;
	}
	int flag = 0;
	struct es_comm *old;
	if (PMPI_Comm_get_attr(newcomm, es_g.keyval, &old, &flag) == MPI_SUCCESS && flag)
		return; /* already met (a communicator given back twice) */
	struct es_comm *c = attach(newcomm, id ? id : 2);
	if (c)
		side_of(c);
}

/* --- windows ------------------------------------------------------------------------------ */

static struct es_comm *win_attach(MPI_Win win, uint64_t id)
{
	MPI_Group grp;
	if (PMPI_Win_get_group(win, &grp) != MPI_SUCCESS)
		return NULL;
	struct es_comm *c = make(id, grp, MPI_GROUP_NULL, ES_COMMS_WINDOW, es_handle_of(win));
	PMPI_Group_free(&grp);
	if (c && PMPI_Win_set_attr(win, es_g.win_keyval, c) != MPI_SUCCESS) {
		drop(c);
		return NULL;
	}
	return c;
}

void es_win_made(struct es_comm *parent, uint32_t seed, MPI_Win win)
{
	if (win == MPI_WIN_NULL || es_g.win_keyval == MPI_KEYVAL_INVALID)
		return;
	win_attach(win, mix(mix(parent ? parent->id : 0, seed), 0x77696eull));
}

struct es_comm *es_win_of(MPI_Win win)
{
	struct es_comm *c;
	int flag = 0;
	if (es_g.win_keyval == MPI_KEYVAL_INVALID || win == MPI_WIN_NULL ||
	    PMPI_Win_get_attr(win, es_g.win_keyval, &c, &flag) != MPI_SUCCESS)
		return NULL;
	if (flag)
		return c;
	MPI_Group grp;
	int n = 0;
	bool ident;
	uint64_t h = 0;
	if (PMPI_Win_get_group(win, &grp) == MPI_SUCCESS) {
		int *w = world_of(grp, &n, &ident);
		h = members_hash(w, n);
		free(w);
		PMPI_Group_free(&grp);
	}
	uint64_t key = mix(0x6d657477ull, h);
	return win_attach(win, mix(key, occurrence(key)));
}

/* A general active target epoch's group (MPI_Win_post's origins,
 * MPI_Win_start's targets): one group mark per member, after the call's
 * tuple (collectors.h), when the call is recorded.  Once per epoch, not
 * per message: its cost is the group's translation. */
void es_win_group(unsigned op, MPI_Group group, const struct es_comm *w)
{
	if (!es_collects(op) || !w || group == MPI_GROUP_NULL || !es_elem())
		return;
	int n;
	bool ident;
	int *world = world_of(group, &n, &ident);
	if (!world && !ident)
		return;
	uint64_t now = es_now();
	for (int i = 0; i < n; i++)
		es_put((uint16_t)(ES_OP_MPI_CHANNEL | ES_OP_DONE), now, now, 0, es_serial16(w),
		       (uint32_t)(world ? world[i] : i), (uint32_t)n, op);
	free(world);
}

/* --- matched probes ------------------------------------------------------------------------ */

void es_msg_probed(MPI_Message m, const struct es_comm *c)
{
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC || !c)
		return;
	unsigned k = es_t.msg_next++ % ES_MSG_HELD;
	es_t.msg[k] = es_handle_of(m);
	es_t.msg_serial[k] = (uint64_t)(uintptr_t)c;
}

struct es_comm *es_msg_comm(MPI_Message m)
{
	/* a pointer kept for as long as the message: a communicator is not
	 * freed while a message on it is unreceived */
	/* newest first, and taken: a message is received once, and MPI gives
	 * its handle to a later one, perhaps on another communicator */
	for (unsigned i = 1; i <= ES_MSG_HELD; i++) {
		unsigned k = (es_t.msg_next - i) % ES_MSG_HELD;
		if (es_t.msg[k] == es_handle_of(m) && es_t.msg_serial[k]) {
			es_t.msg[k] = 0;
			return (struct es_comm *)(uintptr_t)es_t.msg_serial[k];
		}
	}
	return NULL;
}

/* --- set-up ------------------------------------------------------------------------------ */

void es_comms_setup(void)
{
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_comm_info, &es_g.keyval, NULL);
	PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, free_win_info, &es_g.win_keyval, NULL);
	struct es_comm *w = &es_world_comm;
	memset(w, 0, sizeof(*w));
	w->id = ES_COMM_WORLD_ID;
	w->serial = 0;
	w->size = (uint32_t)es_g.size;
	w->me = (uint32_t)es_g.rank;
	w->flags = ES_COMMS_WORLD;
	w->handle = es_handle_of(MPI_COMM_WORLD);
	w->calls = es_g.calls;
	pthread_mutex_lock(&es_g.lock);
	es_g.next_serial = 0;
	publish(w, 0);
	pthread_mutex_unlock(&es_g.lock);
}

void es_comms_finalize(void)
{
	if (es_g.keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_free_keyval(&es_g.keyval);
	if (es_g.win_keyval != MPI_KEYVAL_INVALID)
		PMPI_Win_free_keyval(&es_g.win_keyval);
	pthread_mutex_lock(&es_g.lock);
	live_unlink(&es_world_comm);
	es_g.live = es_g.live_tail = NULL; /* their attributes go with MPI */
	pthread_mutex_unlock(&es_g.lock);
}

/* --- sizes --------------------------------------------------------------------------- */

struct es_types es_types;

void es_types_setup(void)
{
	/* those a program names most; any other asks MPI, no worse than before */
	const MPI_Datatype t[] = {
		MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT,
		MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
		MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_C_BOOL, MPI_INT8_T, MPI_INT16_T,
		MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T,
		MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_AINT, MPI_OFFSET, MPI_COUNT,
		MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_PACKED,
		MPI_CHARACTER, MPI_LOGICAL, MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_COMPLEX,
		MPI_DOUBLE_COMPLEX, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION,
	};
	memset(&es_types, 0, sizeof(es_types));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t k = es_handle_of(t[i]);
		int sz;
		if (!k || t[i] == MPI_DATATYPE_NULL || PMPI_Type_size(t[i], &sz) != MPI_SUCCESS || sz < 0)
			continue;
		for (uint32_t h = es_type_hash(k), n = 0; n < ES_TYPES_HASH; n++, h = (uint32_t)base_probe(h, ES_TYPES_HASH)) {
			if (es_types.key[h] == k)
				break;
			if (!es_types.key[h]) {
				es_types.size[h] = (uint32_t)sz;
				es_types.key[h] = k;
				break;
			}
		}
	}
}

uint64_t es__bytes(int count, MPI_Datatype type)
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
