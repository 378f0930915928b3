/* clocks.c - one clock line per host, and each host's offset to rank 0's measured by ping-pong over MPI, on the board mpi.clock (collectors.h, "Clocks across hosts"). */
#define _GNU_SOURCE /* gethostname */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

/*
 * Invariants:
 *  - node and lead are made at MPI_Init (every rank takes part, as in a
 *    collective over MPI_COMM_WORLD) and freed at MPI_Finalize; lead is
 *    MPI_COMM_NULL on a rank that is not its host's first, and its rank 0
 *    is world rank 0 (its group in world order, and world rank 0 is first
 *    on its host).  Neither is made by a collective of MPI_COMM_WORLD's
 *    (group_comm says why).
 *  - A point is measured only where every rank measures it: at MPI_Init,
 *    at MPI_Finalize, and after the barrier, all-reduce, -gather or
 *    -to-all over every rank (wrapgen.c's world_coll, es_clocks_coll)
 *    whose number rank 0 chose at the point before (next): every rank
 *    counts them alike, since MPI orders a communicator's collectives
 *    alike on every rank (and those of several such communicators too,
 *    one thread making them), and every rank leaves that one, since none
 *    leaves it before all entered.
 *  - A rank writes its points only to its own board, slot by slot, kind
 *    last: a reader sees a point whole or not at all.
 */
static struct {
	MPI_Comm node, lead;
	ps_elem *elem;
	struct es_sync_rec *board;
	uint64_t serial;
	uint32_t run_slot;     /* the next slot of the points in between */
	uint64_t colls;        /* blocking collectives on MPI_COMM_WORLD so far */
	uint64_t next;         /* the one after which the next point is measured (0: none) */
	uint64_t last_colls;   /* rank 0: colls and its clock at the point before */
	uint64_t last_ns;
	uint64_t every_ns;     /* rank 0: the time it wants between points */
	bool congruent;        /* communicators of every rank count too (not MPI_THREAD_MULTIPLE) */
	int local;             /* this rank's place among its host's (-1: not known) */
} ck = { .node = MPI_COMM_NULL, .lead = MPI_COMM_NULL, .run_slot = 2, .local = -1 };

#define SYNC_TAG 0x7e5c
#define NODE_TAG 0x7e5d /* MPI_Comm_create_group's, over MPI_COMM_WORLD */
#define LEAD_TAG 0x7e5e

static MPI_Fint world_f; /* MPI_COMM_WORLD from Fortran */

static uint64_t now_ns(void)
{
	return es_clock_ns(es_clock_init(), es_now());
}

/* This host's key: its name and this boot of it (a container may share
 * the name, never the boot), folded; never 0 (first_ranks' empty slot).
 * Two hosts meet only if their 64-bit keys collide, which a job of n
 * hosts risks at n^2 / 2^65. */
static uint64_t host_key(void)
{
	char name[256] = "", boot[64] = "";
	gethostname(name, sizeof(name) - 1);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(boot, sizeof(boot), f))
			*boot = 0;
		fclose(f);
	}
	uint64_t k = base_hash_str(base_hash_str(BASE_HASH_SEED, name), boot);
	return k ? k : 1;
}

/* Into in[]: the ranks no lower rank shares a host with, in world order
 * (seen: cap slots, a power of two above the ranks, zeroed). */
static int first_ranks(const uint64_t *keys, int size, uint64_t *seen, size_t cap, int *in)
{
	int n = 0;
	for (int r = 0; r < size; r++) {
		size_t i = base_hash_slot(keys[r], cap);
		while (seen[i] && seen[i] != keys[r])
			i = base_probe(i, cap);
		if (!seen[i]) {
			seen[i] = keys[r];
			in[n++] = r;
		}
	}
	return n;
}

/* A communicator of the world ranks in[0..n) (ascending), made by those
 * ranks alone.  Not MPI_Comm_split: Open MPI 4 agrees on a new
 * communicator's id by an MPI_Iallreduce over the parent, which registers
 * libnbc's progress routine for as long as the parent lives, and
 * MPI_COMM_WORLD lives to the end: every later poll of the program then
 * ran it too (hpcc's RandomAccess, a poll every 25 ns, lost 4.5% of its
 * speed to it).  MPI_Comm_create_group agrees by point-to-point messages
 * among the group, with the tag given; no program's receive is posted
 * while MPI_Init runs, so none can take them. */
static MPI_Comm group_comm(const int *in, int n, int tag)
{
	MPI_Group world, g;
	MPI_Comm c = MPI_COMM_NULL;
	if (PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS)
		return MPI_COMM_NULL;
	if (PMPI_Group_incl(world, n, in, &g) == MPI_SUCCESS) {
		if (PMPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c) != MPI_SUCCESS)
			c = MPI_COMM_NULL;
		PMPI_Group_free(&g);
	}
	PMPI_Group_free(&world);
	return c;
}

/* node: the ranks whose host key is mine; lead: the first rank of each
 * host, made by them alone.  Every rank learns every key, or none does:
 * what each needs is taken before they agree to go on. */
static void make_node_and_lead(void)
{
	size_t cap = 2;
	while (cap < 2 * (size_t)es_g.size)
		cap *= 2;
	uint64_t mine = host_key(), *keys = calloc((size_t)es_g.size, sizeof(*keys)), *seen = calloc(cap, sizeof(*seen));
	int *in = calloc((size_t)es_g.size, sizeof(*in)), ok = keys && seen && in, n = 0;
	PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (ok && PMPI_Allgather(&mine, 1, MPI_UINT64_T, keys, 1, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS) {
		for (int r = 0; r < es_g.size; r++)
			if (keys[r] == mine)
				in[n++] = r;
		ck.local = 0;
		while (in[ck.local] != es_g.rank)
			ck.local++;
		ck.node = group_comm(in, n, NODE_TAG);
		if (ck.local == 0)
			ck.lead = group_comm(in, first_ranks(keys, es_g.size, seen, cap, in), LEAD_TAG);
	}
	free(keys);
	free(seen);
	free(in);
}

/* The ranks of one node stamp with one TSC: they all take the line of the
 * node's first rank, so that a reader orders their stamps as the TSC did.
 * Each rank's own 20 ms calibration is off by its own few ppm, which put
 * LAMMPS's receives up to 3 us before their sends on a loaded machine.
 * Collective over MPI_COMM_WORLD, as MPI_Init is. */
void es_clocks_node(void)
{
	struct es_clock c = *es_clock_init();
	make_node_and_lead();
	if (ck.node == MPI_COMM_NULL)
		return;
	PMPI_Bcast(&c, sizeof(c), MPI_BYTE, 0, ck.node);
	es_clock_adopt(&c); /* a rank whose stamps are not TSC ticks keeps its own */
}

int es_node_rank(void)
{
	return ck.local;
}

/* Rank 0's part: each other host's first rank in turn, ES_SYNC_ROUNDS times. */
static void answer(int hosts)
{
	for (int i = 1; i < hosts; i++)
		for (int k = 0; k < ES_SYNC_ROUNDS; k++) {
			char b;
			if (PMPI_Recv(&b, 1, MPI_BYTE, i, SYNC_TAG, ck.lead, MPI_STATUS_IGNORE) != MPI_SUCCESS)
				return;
			uint64_t t = now_ns();
			PMPI_Send(&t, 1, MPI_UINT64_T, i, SYNC_TAG, ck.lead);
		}
}

/* A host's first rank: its clock against rank 0's, from the quickest trip. */
static void ask(struct es_sync_rec *s)
{
	const struct es_clock *c = es_clock_init();
	uint64_t best = UINT64_MAX;
	for (int k = 0; k < ES_SYNC_ROUNDS; k++) {
		char b = 0;
		uint64_t theirs = 0, a = es_now();
		if (PMPI_Send(&b, 1, MPI_BYTE, 0, SYNC_TAG, ck.lead) != MPI_SUCCESS ||
		    PMPI_Recv(&theirs, 1, MPI_UINT64_T, 0, SYNC_TAG, ck.lead, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return;
		uint64_t z = es_now(), a_ns = es_clock_ns(c, a), z_ns = es_clock_ns(c, z);
		if (z_ns - a_ns < best) {
			best = z_ns - a_ns;
			s->raw = a + (z - a) / 2;
			s->offset_ns = (int64_t)(es_clock_ns(c, s->raw) - theirs);
			s->rtt_ns = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
		}
	}
}

static void put(const struct es_sync_rec *s)
{
	if (!ck.board || !s->kind)
		return;
	uint32_t slot = s->kind == ES_SYNC_INIT ? 0 : s->kind == ES_SYNC_FINI ? 1 : ck.run_slot;
	if (s->kind == ES_SYNC_RUN)
		ck.run_slot = ck.run_slot + 1 < ES_SYNC_SLOTS ? ck.run_slot + 1 : 2;
	struct es_sync_rec *d = &ck.board[slot];
	__atomic_store_n(&d->kind, 0, __ATOMIC_RELEASE); /* a reader takes it whole or not at all */
	d->raw = s->raw;
	d->offset_ns = s->offset_ns;
	d->rtt_ns = s->rtt_ns;
	d->serial = ++ck.serial;
	__atomic_store_n(&d->kind, s->kind, __ATOMIC_RELEASE);
}

/* Rank 0: after which world collective the next point is measured, so
 * that points come ES_SYNC_EVERY_S apart at the rate the job makes them. */
static uint64_t choose_next(void)
{
	uint64_t now = now_ns(), made = ck.colls - ck.last_colls, took = now - ck.last_ns;
	uint64_t every = ck.every_ns, more = 1;
	if (ck.last_ns && made && took) {
		double want = (double)made * (double)every / (double)took;
		more = want < (double)(1ull << 40) ? (uint64_t)want : 1ull << 40;
	}
	ck.last_colls = ck.colls;
	ck.last_ns = now;
	return ck.colls + (more ? more : 1);
}

/* One point, on every rank (collective over MPI_COMM_WORLD). */
static void sync_point(uint32_t kind)
{
	if (ck.node == MPI_COMM_NULL)
		return;
	struct es_sync_rec s = { .kind = kind };
	struct { struct es_sync_rec s; uint64_t next; } m = { { 0 }, 0 };
	if (ck.lead != MPI_COMM_NULL) {
		int me = 0, hosts = 1;
		PMPI_Comm_rank(ck.lead, &me);
		PMPI_Comm_size(ck.lead, &hosts);
		if (me == 0) {
			answer(hosts);
			s.raw = es_now(); /* rank 0's host: its own clock, exactly */
			m.next = kind == ES_SYNC_FINI ? 0 : choose_next();
		} else {
			ask(&s);
		}
		m.s = s;
		/* rank 0's choice, to every host's first rank */
		PMPI_Bcast(&m.next, 1, MPI_UINT64_T, 0, ck.lead);
	}
	/* and from it to the host's ranks, with its point: every rank's of the
	 * host, as they stamp with one line */
	PMPI_Bcast(&m, sizeof(m), MPI_BYTE, 0, ck.node);
	m.s.kind = kind;
	put(&m.s);
	ck.next = m.next;
}

/* Rank 0's word decides: ES_SYNC_EVERY, seconds between points. */
static void read_every(void)
{
	const char *v = getenv("ES_SYNC_EVERY");
	char *end = NULL;
	double s = v && *v ? strtod(v, &end) : ES_SYNC_EVERY_S;
	if (v && *v && (*end || !(s > 0) || s > 1e6)) {
		fprintf(stderr, "escollect: ES_SYNC_EVERY=%s: expected the seconds between clock points, a number "
			"above 0; %d it is\n", v, ES_SYNC_EVERY_S);
		s = ES_SYNC_EVERY_S;
	}
	ck.every_ns = (uint64_t)(s * 1e9);
}

void es_clocks_setup(ps_server *srv, bool congruent)
{
	ck.congruent = congruent;
	if (es_g.rank == 0)
		read_every();
	world_f = PMPI_Comm_c2f(MPI_COMM_WORLD);
	ck.board = es_rank_board(srv, ES_CLOCK_ELEMENT, sizeof(struct es_sync_rec), ES_SYNC_SLOTS, ES_SYNC_LAYOUT,
				 &ck.elem);
	sync_point(ES_SYNC_INIT);
}

/* Counted: on MPI_COMM_WORLD always; on another intracommunicator of
 * every rank (a dup of it: libraries make their own) unless threads may
 * call collectives at once (MPI_THREAD_MULTIPLE, rank 0's word), for then
 * two threads' collectives on two such communicators may come in another
 * order on another rank, which would count them otherwise.  A single
 * thread's blocking all-collectives over all ranks come in one order on
 * every rank, or the program would hang in them. */
void es_clocks_coll(MPI_Comm comm)
{
	if (comm != MPI_COMM_WORLD) {
		const struct es_comm *c = ck.congruent ? es_comm_of(comm) : NULL;
		if (!c || c->size != (uint32_t)es_g.size || (c->flags & ES_COMMS_INTER))
			return;
	}
	if (++ck.colls == ck.next)
		sync_point(ES_SYNC_RUN);
}

void es_clocks_coll_f(MPI_Fint comm)
{
	es_clocks_coll(comm == world_f ? MPI_COMM_WORLD : PMPI_Comm_f2c(comm));
}

void es_clocks_finalize(void)
{
	sync_point(ES_SYNC_FINI);
	if (ck.lead != MPI_COMM_NULL)
		PMPI_Comm_free(&ck.lead);
	if (ck.node != MPI_COMM_NULL)
		PMPI_Comm_free(&ck.node);
	ck.next = 0;
	ps_elem_close(ck.elem);
	ck.elem = NULL;
	ck.board = NULL;
}
