/* escollect.c - libescollect.so: collectors on an unmodified MPI program's calls, through PMPI. */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "pathmaps/pathmaps.h"

/*
 * Loaded with `mpirun -x LD_PRELOAD=.../libescollect.so`.  After MPI_Init
 * every rank has a trace space, the shared segment JOB.rRANK, and every
 * thread that calls MPI gets its own trace element in it the first time it
 * does (so the common case takes no lock).  Each recorded call becomes one
 * trace tuple:
 *
 *   point-to-point  element = peer rank, size = bytes, arg = tag
 *   waits, tests    element = source of a completed receive (for a send,
 *                   what the MPI library put in its status, or ~0),
 *                   size = bytes received, arg = tag; for the -all and -some forms arg = count
 *   collectives     element = root (~0 if none), size = bytes this rank
 *                   contributed, arg = the communicator's id << 20 | the
 *                   call's number on it (the same on every rank, so calls
 *                   can be matched up; see coll_arg)
 *
 * Environment:
 *   ES_PATHMAP  a pathmap whose `mpi: collect:` list says what to record
 *               and whose `trace: threshold:` sizes the trace elements;
 *               without one, everything, 200 tuples per thread
 *   ES_JOB      the job name in the segment names (default: the pathmap's
 *               name, else mpiPID with rank 0's pid)
 *   ES_VERBOSE  1: rank 0 says where the trace spaces are
 *   ES_SERVE    loopback or any: the first rank of each node serves the
 *               node's trace spaces over TCP (read-only) for monitors on
 *               other hosts; the ranks exchange where, and rank 0 prints
 *               the list (and writes it to ES_SERVERS_OUT, if set).  The
 *               pathmap's servers section does the same.  ES_PORT,
 *               ES_SECRET_FILE: the port (default any) and the shared
 *               secret (required for any).
 *
 * Nothing here may stop the program: a bad pathmap or a failure to make a
 * trace space gives one line on stderr (from rank 0) and the program runs
 * unmonitored.
 */

#define NOPS 128
#define NONE 0xffffffffu

static struct {
	int on;
	int rank, size;
	uint32_t threshold;
	unsigned char collect[NOPS]; /* by enum es_op */
	es_space *sp;
	char job[32];
	int keyval;
	pthread_mutex_t lock;
	int nthreads;
	ps_elem *elems[4096]; /* one per thread that ever called MPI */
	ps_elem *comms;       /* "mpi.comms": the communicators met, for monitors */
	uint32_t comm_hash[4096];
	int ncomms;
	int nelems;
	ps_tcp *tcp;          /* this node's tuple server, on its first rank */
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .keyval = MPI_KEYVAL_INVALID };

static __thread ps_elem *t_elem;
static __thread _Atomic uint64_t *t_notes;
static __thread uint16_t t_id;
static __thread uint32_t t_seq;
static __thread int t_tried;

/* This thread's trace element, made on its first recorded call. */
static ps_elem *my_elem(void)
{
	if (__builtin_expect(t_elem != NULL, 1))
		return t_elem;
	if (!g.on || t_tried)
		return NULL;
	t_tried = 1;
	pthread_mutex_lock(&g.lock);
	int k = g.nthreads++;
	struct es_meta m;
	memset(&m, 0, sizeof(m));
	m.element = (uint32_t)g.rank;
	snprintf(m.trace, sizeof(m.trace), "mpi.thread%d", k);
	snprintf(m.thread, sizeof(m.thread), "rank%d.thread%d", g.rank, k);
	snprintf(m.where, sizeof(m.where), "MPI rank %d of %d", g.rank, g.size);
	if (g.nelems < (int)(sizeof(g.elems) / sizeof(g.elems[0])) &&
	    es_space_add(g.sp, &m, g.threshold, false, &t_id, &t_elem) == 0) {
		g.elems[g.nelems++] = t_elem;
		t_notes = ps_elem_notes(t_elem);
	}
	pthread_mutex_unlock(&g.lock);
	return t_elem;
}

static void record(unsigned op, uint64_t t0, uint64_t t1, uint32_t element, uint64_t bytes,
		   uint32_t arg, int rc)
{
	ps_elem *e = my_elem();
	if (!e)
		return;
	struct es_trace t = { .start = t0, .end = t1, .seq = t_seq++,
			      .op = (uint16_t)(op | (rc != MPI_SUCCESS ? ES_OP_FAILED : 0)),
			      .collector = t_id, .element = element,
			      .size = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes, .arg = arg };
	ps_write(e, &t, 0, NULL);
}

static inline int want(unsigned op)
{
	return g.on && g.collect[op];
}

static uint64_t bytes_of(int count, MPI_Datatype type)
{
	int sz = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &sz) != MPI_SUCCESS)
		return 0;
	return (uint64_t)count * (uint64_t)sz;
}

static uint64_t got_bytes(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return (uint64_t)n;
}

static uint32_t peer(int r)
{
	return r < 0 ? NONE : (uint32_t)r;
}

/*
 * A collective's tuple says which communicator and which call on it:
 * arg = id << 20 | number.  The id (12 bits) hashes the communicator's
 * members, as world ranks, and how many communicators with those members
 * this process had met before: every member computes the same.  The
 * number counts the collectives on that communicator (it wraps at 2^20).
 * Each rank's element "mpi.comms" lists the ids with their sizes, so a
 * monitor knows how many ranks take part in each.
 */
struct comm_info {
	uint32_t seq, id;
};

static uint32_t member_hash(MPI_Comm comm, int *size)
{
	MPI_Group grp, world;
	int n = 0;
	uint32_t h = 2166136261u;
	if (PMPI_Comm_group(comm, &grp) != MPI_SUCCESS)
		return 0;
	PMPI_Comm_group(MPI_COMM_WORLD, &world);
	PMPI_Group_size(grp, &n);
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
	PMPI_Group_free(&grp);
	PMPI_Group_free(&world);
	*size = n;
	return h;
}

static uint32_t coll_arg(MPI_Comm comm)
{
	if (g.keyval == MPI_KEYVAL_INVALID)
		return 0;
	struct comm_info *ci;
	int flag = 0;
	if (PMPI_Comm_get_attr(comm, g.keyval, &ci, &flag) != MPI_SUCCESS)
		return 0;
	if (!flag) {
		int size = 0, me = 0;
		uint32_t h = member_hash(comm, &size);
		PMPI_Comm_rank(comm, &me);
		pthread_mutex_lock(&g.lock);
		/* the k-th communicator this process met with these members */
		uint32_t k = 0;
		for (int i = 0; i < g.ncomms; i++)
			k += g.comm_hash[i] == h;
		if (g.ncomms < (int)(sizeof(g.comm_hash) / sizeof(g.comm_hash[0])))
			g.comm_hash[g.ncomms++] = h;
		pthread_mutex_unlock(&g.lock);
		ci = calloc(1, sizeof(*ci));
		if (!ci || PMPI_Comm_set_attr(comm, g.keyval, ci) != MPI_SUCCESS) {
			free(ci);
			return 0;
		}
		ci->id = ((h ^ (k * 0x9e3779b9u)) * 2654435761u) >> 20; /* 12 bits */
		uint32_t rec[4] = { ci->id, (uint32_t)size, (uint32_t)me, k };
		if (g.comms)
			ps_write(g.comms, rec, 0, NULL);
	}
	return ci->id << 20 | (ci->seq++ & 0xfffff);
}

static int free_counter(MPI_Comm comm, int keyval, void *value, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)extra;
	free(value);
	return MPI_SUCCESS;
}

/* --- set-up ------------------------------------------------------------------ */

static const struct { const char *name; unsigned op; } calls[] = {
	{ "MPI_Init", ES_OP_MPI_INIT }, { "MPI_Finalize", ES_OP_MPI_FINALIZE },
	{ "MPI_Send", ES_OP_MPI_SEND }, { "MPI_Recv", ES_OP_MPI_RECV },
	{ "MPI_Isend", ES_OP_MPI_ISEND }, { "MPI_Irecv", ES_OP_MPI_IRECV },
	{ "MPI_Wait", ES_OP_MPI_WAIT }, { "MPI_Test", ES_OP_MPI_TEST },
	{ "MPI_Sendrecv", ES_OP_MPI_SENDRECV }, { "MPI_Probe", ES_OP_MPI_PROBE },
	{ "MPI_Iprobe", ES_OP_MPI_IPROBE }, { "MPI_Waitall", ES_OP_MPI_WAITALL },
	{ "MPI_Waitany", ES_OP_MPI_WAITANY }, { "MPI_Waitsome", ES_OP_MPI_WAITSOME },
	{ "MPI_Testall", ES_OP_MPI_TESTALL }, { "MPI_Testany", ES_OP_MPI_TESTANY },
	{ "MPI_Testsome", ES_OP_MPI_TESTSOME },
	{ "MPI_Barrier", ES_OP_MPI_BARRIER }, { "MPI_Bcast", ES_OP_MPI_BCAST },
	{ "MPI_Reduce", ES_OP_MPI_REDUCE }, { "MPI_Allreduce", ES_OP_MPI_ALLREDUCE },
	{ "MPI_Gather", ES_OP_MPI_GATHER }, { "MPI_Gatherv", ES_OP_MPI_GATHERV },
	{ "MPI_Scatter", ES_OP_MPI_SCATTER }, { "MPI_Scatterv", ES_OP_MPI_SCATTERV },
	{ "MPI_Allgather", ES_OP_MPI_ALLGATHER }, { "MPI_Allgatherv", ES_OP_MPI_ALLGATHERV },
	{ "MPI_Alltoall", ES_OP_MPI_ALLTOALL }, { "MPI_Alltoallv", ES_OP_MPI_ALLTOALLV },
	{ "MPI_Reduce_scatter", ES_OP_MPI_REDUCE_SCATTER },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static void select_calls(const struct pm_mpi *mpi)
{
	for (size_t i = 0; i < NCALLS; i++)
		g.collect[calls[i].op] = !mpi || !mpi->given || mpi->ncalls == 0;
	for (int k = 0; mpi && k < mpi->ncalls; k++) {
		const char *w = mpi->calls[k];
		for (size_t i = 0; i < NCALLS; i++) {
			unsigned op = calls[i].op;
			bool p2p = op >= ES_OP_MPI_SEND && op < ES_OP_MPI_BARRIER;
			if (!strcmp(w, "all") || !strcmp(w, calls[i].name) ||
			    (!strcmp(w, "point-to-point") && p2p) ||
			    (!strcmp(w, "collectives") && op >= ES_OP_MPI_BARRIER))
				g.collect[op] = 1;
		}
	}
}

/* The first rank of each node serves the node's trace spaces; all ranks
 * learn where (every rank calls this, so the collectives match). */
static void serve_node(int any, int port, const char *secret)
{
	MPI_Comm node;
	int local = 0;
	struct rec { int32_t port; char addr[60]; } mine = { 0 }, *all = NULL;
	if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node))
		return;
	PMPI_Comm_rank(node, &local);
	PMPI_Comm_free(&node);
	if (local == 0) {
		char prefix[40];
		snprintf(prefix, sizeof(prefix), "%s.", g.job);
		struct ps_tcp_attr a = { .addr = any ? "0.0.0.0" : NULL, .port = port,
					 .secret_file = *secret ? secret : NULL, .shm_prefix = prefix };
		int rc = ps_tcp_start(&a, &g.tcp);
		if (rc)
			fprintf(stderr, "escollect: rank %d: serving the trace spaces: %s%s\n", g.rank,
				ps_strerror(rc), rc == PS_EACCES ? " (listening beyond loopback needs "
				"ES_SECRET_FILE, a file only you can read)" : "");
		else {
			mine.port = ps_tcp_port(g.tcp);
			snprintf(mine.addr, sizeof(mine.addr), "%s", ps_tcp_addr(g.tcp));
		}
	}
	/* rank 0 says whether it can take the list, so that no rank waits in
	 * a gather rank 0 skipped */
	int ok = g.rank != 0 || (all = calloc((size_t)g.size, sizeof(*all))) != NULL;
	PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!ok)
		return;
	PMPI_Gather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (g.rank != 0)
		return;
	char list[4096] = "";
	for (int r = 0; r < g.size; r++)
		if (all[r].port > 0 && strlen(list) + 80 < sizeof(list)) {
			all[r].addr[sizeof(all[r].addr) - 1] = 0;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s:%d",
				 *list ? "," : "", all[r].addr, all[r].port);
		}
	free(all);
	fprintf(stderr, "escollect: job %s served at %s (monitors: --servers %s)\n", g.job, list, list);
	const char *out = getenv("ES_SERVERS_OUT");
	FILE *f = out && *out ? fopen(out, "w") : NULL;
	if (f) {
		fprintf(f, "%s\n", list);
		fclose(f);
	}
}

/* Decides, on every rank alike, whether and where to record. */
static void setup(void)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &g.size);
	const char *file = getenv("ES_PATHMAP"), *job = getenv("ES_JOB");
	char err[512] = "";
	pm_map *m = NULL;
	int ok = 1;
	if (file && *file && pm_load(file, &m, err, sizeof(err)))
		ok = 0;
	g.threshold = m ? pm_model(m)->trace.threshold : 200;
	select_calls(m ? &pm_model(m)->mpi : NULL);
	/* Rank 0's word decides the job's name and whether it is watched, so
	 * that all ranks agree even if their environments differ. */
	struct { int ok, serve, any, port; char job[32]; char err[512]; char secret[256]; } d;
	memset(&d, 0, sizeof(d));
	d.ok = ok;
	const char *serve = getenv("ES_SERVE"), *sf = getenv("ES_SECRET_FILE"), *port = getenv("ES_PORT");
	const struct pm_servers *sv = m ? &pm_model(m)->servers : NULL;
	if (serve && *serve) {
		d.serve = 1;
		d.any = !strcmp(serve, "any");
	} else if (sv && sv->given) {
		d.serve = 1;
		d.any = sv->listen != PM_LISTEN_LOOPBACK;
		d.port = sv->port;
	}
	if (port && *port)
		d.port = atoi(port);
	snprintf(d.secret, sizeof(d.secret), "%s", sf && *sf ? sf : sv && sv->secret_file ?
		 sv->secret_file : "");
	if (job && *job)
		snprintf(d.job, sizeof(d.job), "%.24s", job);
	else if (m)
		snprintf(d.job, sizeof(d.job), "%.24s", pm_model(m)->name);
	else
		snprintf(d.job, sizeof(d.job), "mpi%d", (int)getpid());
	snprintf(d.err, sizeof(d.err), "%s", err);
	PMPI_Bcast(&d, sizeof(d), MPI_BYTE, 0, MPI_COMM_WORLD);
	pm_destroy(m);
	if (!d.ok) {
		if (g.rank == 0)
			fprintf(stderr, "escollect: %s; running unmonitored\n", d.err);
		return;
	}
	if (!ok)
		return; /* this rank alone could not read the pathmap */
	snprintf(g.job, sizeof(g.job), "%s", d.job);
	char seg[64];
	snprintf(seg, sizeof(seg), "%s.r%d", g.job, g.rank);
	es_clock_init();
	int rc = es_space_create(seg, &g.sp);
	if (rc) {
		fprintf(stderr, "escollect: rank %d: trace space %s: %s; running unmonitored\n",
			g.rank, seg, ps_strerror(rc));
		return;
	}
	struct ps_elem_attr ca = { .tuple_size = 16, .threshold = 4096, .flags = PS_MULTI_WRITER };
	ps_elem_create(es_space_server(g.sp), "mpi.comms", &ca, &g.comms);
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_counter, &g.keyval, NULL);
	g.on = 1;
	if (g.rank == 0 && getenv("ES_VERBOSE") && !strcmp(getenv("ES_VERBOSE"), "1"))
		fprintf(stderr, "escollect: tracing %d ranks into /dev/shm/pastset.%s.r0..r%d\n",
			g.size, g.job, g.size - 1);
	if (d.serve)
		serve_node(d.any, d.port, d.secret);
}

int MPI_Init(int *argc, char ***argv)
{
	es_clock_init(); /* before the first stamp, so both stamps share a clock */
	uint64_t t0 = es_now();
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS) {
		setup();
		if (want(ES_OP_MPI_INIT))
			record(ES_OP_MPI_INIT, t0, es_now(), (uint32_t)g.rank, 0, 0, rc);
	}
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	es_clock_init();
	uint64_t t0 = es_now();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS) {
		setup();
		if (want(ES_OP_MPI_INIT))
			record(ES_OP_MPI_INIT, t0, es_now(), (uint32_t)g.rank, 0, (uint32_t)*provided, rc);
	}
	return rc;
}

int MPI_Finalize(void)
{
	uint64_t t0 = es_now();
	if (g.keyval != MPI_KEYVAL_INVALID)
		PMPI_Comm_free_keyval(&g.keyval);
	/* the server goes before MPI does: it is a thread of ours */
	ps_tcp_stop(g.tcp);
	g.tcp = NULL;
	int rc = PMPI_Finalize();
	if (want(ES_OP_MPI_FINALIZE))
		record(ES_OP_MPI_FINALIZE, t0, es_now(), (uint32_t)g.rank, 0, 0, rc);
	if (g.on) {
		/* No MPI call may follow, in any thread: close everything.  The
		 * segment stays, for monitors that read after the job. */
		g.on = 0;
		pthread_mutex_lock(&g.lock);
		for (int i = 0; i < g.nelems; i++)
			ps_elem_close(g.elems[i]);
		g.nelems = 0;
		ps_elem_close(g.comms);
		g.comms = NULL;
		es_space_destroy(g.sp);
		g.sp = NULL;
		pthread_mutex_unlock(&g.lock);
		t_elem = NULL;
	}
	return rc;
}

/* --- point-to-point ------------------------------------------------------------ */

/* Records the call's interval; while it runs, the thread's notes say what
 * it is inside (peer: who it waits for, if known). */
#define TIMED_PEER(op, peer_, call)                          \
	if (!want(op))                                       \
		return call;                                 \
	uint64_t t0 = es_now();                              \
	if (my_elem())                                       \
		es_note_begin(t_notes, t0, op, (peer_));     \
	int rc = call;                                       \
	uint64_t t1 = es_now()
#define TIMED(op, call) TIMED_PEER(op, NONE, call)
/* Calls that poll and return at once: nothing to note while they run, and
 * a note left behind would say the thread is inside one. */
#define TIMED_POLL(op, call)                                 \
	if (!want(op))                                       \
		return call;                                 \
	uint64_t t0 = es_now();                              \
	int rc = call;                                       \
	uint64_t t1 = es_now()

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
	TIMED_PEER(ES_OP_MPI_SEND, peer(dest), PMPI_Send(buf, count, type, dest, tag, comm));
	record(ES_OP_MPI_SEND, t0, t1, peer(dest), bytes_of(count, type), (uint32_t)tag, rc);
	return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	MPI_Status mine;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_PEER(ES_OP_MPI_RECV, peer(source), PMPI_Recv(buf, count, type, source, tag, comm, st));
	record(ES_OP_MPI_RECV, t0, t1, rc == MPI_SUCCESS ? peer(st->MPI_SOURCE) : peer(source),
	       rc == MPI_SUCCESS ? got_bytes(st) : 0, (uint32_t)(rc == MPI_SUCCESS ? st->MPI_TAG : tag), rc);
	return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	TIMED(ES_OP_MPI_ISEND, PMPI_Isend(buf, count, type, dest, tag, comm, req));
	record(ES_OP_MPI_ISEND, t0, t1, peer(dest), bytes_of(count, type), (uint32_t)tag, rc);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
	      MPI_Request *req)
{
	TIMED(ES_OP_MPI_IRECV, PMPI_Irecv(buf, count, type, source, tag, comm, req));
	record(ES_OP_MPI_IRECV, t0, t1, peer(source), bytes_of(count, type), (uint32_t)tag, rc);
	return rc;
}

static void record_status(unsigned op, uint64_t t0, uint64_t t1, const MPI_Status *st, int rc)
{
	/* A completed send leaves source and tag undefined: say "none". */
	int src = st->MPI_SOURCE, tag = st->MPI_TAG;
	record(op, t0, t1, peer(src), src >= 0 ? got_bytes(st) : 0, tag >= 0 ? (uint32_t)tag : NONE, rc);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED(ES_OP_MPI_WAIT, PMPI_Wait(req, st));
	record_status(ES_OP_MPI_WAIT, t0, t1, st, rc);
	return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_POLL(ES_OP_MPI_TEST, PMPI_Test(req, flag, st));
	if (*flag || rc != MPI_SUCCESS) /* only the test that completes it */
		record_status(ES_OP_MPI_TEST, t0, t1, st, rc);
	return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	TIMED(ES_OP_MPI_WAITALL, PMPI_Waitall(count, reqs, statuses));
	record(ES_OP_MPI_WAITALL, t0, t1, NONE, 0, (uint32_t)count, rc);
	return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED(ES_OP_MPI_WAITANY, PMPI_Waitany(count, reqs, index, st));
	int src = st->MPI_SOURCE;
	record(ES_OP_MPI_WAITANY, t0, t1, peer(src), src >= 0 ? got_bytes(st) : 0,
	       (uint32_t)*index, rc);
	return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	TIMED(ES_OP_MPI_WAITSOME, PMPI_Waitsome(incount, reqs, outcount, indices, statuses));
	record(ES_OP_MPI_WAITSOME, t0, t1, NONE, 0, (uint32_t)*outcount, rc);
	return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	TIMED_POLL(ES_OP_MPI_TESTALL, PMPI_Testall(count, reqs, flag, statuses));
	if (*flag || rc != MPI_SUCCESS)
		record(ES_OP_MPI_TESTALL, t0, t1, NONE, 0, (uint32_t)count, rc);
	return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_POLL(ES_OP_MPI_TESTANY, PMPI_Testany(count, reqs, index, flag, st));
	if ((*flag && *index != MPI_UNDEFINED) || rc != MPI_SUCCESS) {
		int src = st->MPI_SOURCE;
		record(ES_OP_MPI_TESTANY, t0, t1, peer(src), src >= 0 ? got_bytes(st) : 0,
		       (uint32_t)*index, rc);
	}
	return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	TIMED_POLL(ES_OP_MPI_TESTSOME, PMPI_Testsome(incount, reqs, outcount, indices, statuses));
	if ((*outcount > 0 && *outcount != MPI_UNDEFINED) || rc != MPI_SUCCESS)
		record(ES_OP_MPI_TESTSOME, t0, t1, NONE, 0, (uint32_t)*outcount, rc);
	return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
		 void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
		 MPI_Status *status)
{
	MPI_Status mine;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_PEER(ES_OP_MPI_SENDRECV, peer(source), PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount,
						rtype, source, rtag, comm, st));
	/* element: where it sent; arg: where the reply came from */
	record(ES_OP_MPI_SENDRECV, t0, t1, peer(dest),
	       bytes_of(scount, stype) + (rc == MPI_SUCCESS ? got_bytes(st) : 0),
	       rc == MPI_SUCCESS ? peer(st->MPI_SOURCE) : peer(source), rc);
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_PEER(ES_OP_MPI_PROBE, peer(source), PMPI_Probe(source, tag, comm, st));
	record(ES_OP_MPI_PROBE, t0, t1, peer(st->MPI_SOURCE), rc == MPI_SUCCESS ? got_bytes(st) : 0,
	       (uint32_t)st->MPI_TAG, rc);
	return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	MPI_Status mine = { .MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG };
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &mine : status;
	TIMED_POLL(ES_OP_MPI_IPROBE, PMPI_Iprobe(source, tag, comm, flag, st));
	if (*flag || rc != MPI_SUCCESS)
		record(ES_OP_MPI_IPROBE, t0, t1, peer(st->MPI_SOURCE),
		       rc == MPI_SUCCESS ? got_bytes(st) : 0, (uint32_t)st->MPI_TAG, rc);
	return rc;
}

/* --- collectives --------------------------------------------------------------- */

#define COLL(op, root, bytes, comm, call)                     \
	if (!want(op))                                        \
		return call;                                  \
	uint32_t n_ = coll_arg(comm);                         \
	uint64_t t0 = es_now();                               \
	if (my_elem())                                        \
		es_note_begin(t_notes, t0, op, (root));       \
	int rc = call;                                        \
	record(op, t0, es_now(), (root), (bytes), n_, rc);    \
	return rc

static int comm_size(MPI_Comm comm)
{
	int n = 0;
	PMPI_Comm_size(comm, &n);
	return n;
}

static int comm_rank(MPI_Comm comm)
{
	int r = -1;
	PMPI_Comm_rank(comm, &r);
	return r;
}

static uint64_t sum_bytes(const int counts[], int n, MPI_Datatype type)
{
	uint64_t b = 0;
	for (int i = 0; counts && i < n; i++)
		b += bytes_of(counts[i], type);
	return b;
}

int MPI_Barrier(MPI_Comm comm)
{
	COLL(ES_OP_MPI_BARRIER, NONE, 0, comm, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	COLL(ES_OP_MPI_BCAST, peer(root), bytes_of(count, type), comm,
	     PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
	       MPI_Comm comm)
{
	COLL(ES_OP_MPI_REDUCE, peer(root), bytes_of(count, type), comm,
	     PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
		  MPI_Comm comm)
{
	COLL(ES_OP_MPI_ALLREDUCE, NONE, bytes_of(count, type), comm,
	     PMPI_Allreduce(sbuf, rbuf, count, type, op, comm));
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
	       MPI_Datatype rtype, int root, MPI_Comm comm)
{
	/* MPI_IN_PLACE: the send arguments are ignored, and may be anything */
	COLL(ES_OP_MPI_GATHER, peer(root),
	     sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype), comm,
	     PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		const int rcounts[], const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
	COLL(ES_OP_MPI_GATHERV, peer(root), sbuf == MPI_IN_PLACE ? 0 : bytes_of(scount, stype), comm,
	     PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		MPI_Datatype rtype, int root, MPI_Comm comm)
{
	/* the root contributes everyone's share; the others nothing */
	COLL(ES_OP_MPI_SCATTER, peer(root),
	     comm_rank(comm) == root ? bytes_of(scount, stype) * (uint64_t)comm_size(comm) : 0, comm,
	     PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
		 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	COLL(ES_OP_MPI_SCATTERV, peer(root),
	     comm_rank(comm) == root ? sum_bytes(scounts, comm_size(comm), stype) : 0, comm,
	     PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		  MPI_Datatype rtype, MPI_Comm comm)
{
	COLL(ES_OP_MPI_ALLGATHER, NONE,
	     sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype), comm,
	     PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
	COLL(ES_OP_MPI_ALLGATHERV, NONE, sbuf == MPI_IN_PLACE ? 0 : bytes_of(scount, stype), comm,
	     PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		 MPI_Datatype rtype, MPI_Comm comm)
{
	COLL(ES_OP_MPI_ALLTOALL, NONE,
	     (sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype)) *
	     (uint64_t)comm_size(comm), comm,
	     PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
		  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
		  MPI_Comm comm)
{
	COLL(ES_OP_MPI_ALLTOALLV, NONE,
	     sbuf == MPI_IN_PLACE ? sum_bytes(rcounts, comm_size(comm), rtype)
				  : sum_bytes(scounts, comm_size(comm), stype), comm,
	     PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
		       MPI_Op op, MPI_Comm comm)
{
	COLL(ES_OP_MPI_REDUCE_SCATTER, NONE, sum_bytes(rcounts, comm_size(comm), type), comm,
	     PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm));
}
