/* escollect.c - libescollect.so: collectors on an unmodified MPI program's calls, through PMPI; its set-up and threads. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/mpi/wrap.h"

/*
 * Loaded with `mpirun -x LD_PRELOAD=.../libescollect.so` (what esrun
 * does).  After MPI_Init every rank has a trace space, the shared segment
 * JOB.rRANK, and every thread that calls MPI gets its own trace element in
 * it the first time it does (so the common case takes no lock).  Each
 * recorded call becomes one trace tuple; calls.def says what each holds.
 * Programs in C and Fortran (mpif.h, use mpi, use mpi_f08) are recorded
 * alike: the Fortran entry points are in wrappers.c too.
 *
 * Environment:
 *   ES_PATHMAP     a pathmap whose `mpi: collect:` list says what to record
 *                  and whose `trace:` section sizes the trace elements;
 *                  without one, everything
 *   ES_TRACE_SIZE  bytes of tuples each thread's trace element holds
 *                  ("8M"; default the pathmap's, else 4M: 116,508 tuples)
 *   ES_JOB         the job name in the segment names (default: the pathmap's
 *                  name, else the program's name and rank 0's pid: lmp-4312)
 *   ES_VERBOSE     1: rank 0 says the job's name and how to watch it
 *   ES_SERVE       loopback or any: the first rank of each node serves the
 *                  node's trace spaces over TCP (read-only) for monitors on
 *                  other hosts; the ranks exchange where, and rank 0 prints
 *                  the list (and writes it to ES_SERVERS_OUT, if set).  The
 *                  pathmap's servers section does the same.  ES_PORT,
 *                  ES_SECRET_FILE: the port (default any) and the shared
 *                  secret (required for any).
 *
 * Nothing here may stop the program: a bad pathmap or a failure to make a
 * trace space gives one line on stderr (from rank 0) and the program runs
 * unmonitored.
 */

#define ES_TRACE_DEFAULT (4u << 20)

/* The first rank of each node serves the node's trace spaces; all ranks
 * learn where (every rank calls this, so the collectives match). */
static void serve_node(int any, int port, const char *secret)
{
	struct rec { int32_t port; char addr[60]; } mine = { 0 }, *all = NULL;
	if (es_node_rank() < 0) /* the hosts are not known: on every rank alike */
		return;
	if (es_node_rank() == 0) {
		char prefix[PS_NAME_MAX + 2];
		snprintf(prefix, sizeof(prefix), "%s.", es_g.job);
		struct ps_tcp_attr a = { .addr = any ? "0.0.0.0" : NULL, .port = port,
					 .secret_file = *secret ? secret : NULL, .shm_prefix = prefix };
		int rc = ps_tcp_start(&a, &es_g.tcp);
		if (rc)
			fprintf(stderr, "escollect: rank %d: serving the trace spaces: %s%s\n", es_g.rank,
				ps_strerror(rc), rc == PS_EACCES ? " (listening beyond loopback needs "
				"ES_SECRET_FILE, a file only you can read)" : "");
		else {
			mine.port = ps_tcp_port(es_g.tcp);
			snprintf(mine.addr, sizeof(mine.addr), "%s", ps_tcp_addr(es_g.tcp));
		}
	}
	/* rank 0 says whether it can take the list, so that no rank waits in
	 * a gather rank 0 skipped */
	int ok = es_g.rank != 0 || (all = calloc((size_t)es_g.size, sizeof(*all))) != NULL;
	PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!ok)
		return;
	PMPI_Gather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (es_g.rank != 0)
		return;
	char list[4096] = "";
	for (int r = 0; r < es_g.size; r++)
		if (all[r].port > 0 && strlen(list) + 80 < sizeof(list)) {
			all[r].addr[sizeof(all[r].addr) - 1] = 0;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s:%d",
				 *list ? "," : "", all[r].addr, all[r].port);
		}
	free(all);
	fprintf(stderr, "escollect: job %s served at %s (monitors: --servers %s)\n", es_g.job, list, list);
	const char *out = getenv("ES_SERVERS_OUT");
	FILE *f = out && *out ? base_fopen_out(out, 0644) : NULL;
	if (f) {
		fprintf(f, "%s\n", list);
		fclose(f);
	} else if (out && *out) {
		fprintf(stderr, "escollect: ES_SERVERS_OUT=%s: %s\n", out, strerror(errno));
	}
}

/* The trace elements' size: ES_TRACE_SIZE, else the pathmap's, else 4 MiB. */
static int trace_threshold(const pm_map *m, uint32_t *out, char *err, size_t len)
{
	const char *env = getenv("ES_TRACE_SIZE");
	uint64_t b;
	if (env && *env) {
		if (pm_parse_bytes(env, &b) || b < sizeof(struct es_trace) ||
		    b / sizeof(struct es_trace) > PS_THRESHOLD_MAX) {
			snprintf(err, len, "ES_TRACE_SIZE=%s: expected bytes per thread, from 36 to %llu, as "
				 "a number with K, M or G if you like (8M)", env,
				 (unsigned long long)PS_THRESHOLD_MAX * sizeof(struct es_trace));
			return PS_EINVAL;
		}
		*out = (uint32_t)(b / sizeof(struct es_trace));
	} else if (m && pm_model(m)->trace.given) {
		*out = pm_model(m)->trace.threshold;
	} else {
		*out = ES_TRACE_DEFAULT / sizeof(struct es_trace);
	}
	return 0;
}

/* A job name every monitor can watch: refused, never cut. */
static int job_name_ok(const char *job, char *err, size_t len)
{
	if (!es_job_ok(job)) {
		snprintf(err, len, "job name '%s': expected %s", job, ES_JOB_RULE);
		return PS_EINVAL;
	}
	return 0;
}

/* The program's name and rank 0's process id, "lmp-4312": what users
 * recognise in psadm list, and unique on the host while it runs. */
static void default_job(char *name, size_t len)
{
	char prog[ES_JOB_MAX - 7]; /* and '-' and a pid of at most 7 digits */
	size_t k = 0;
	for (const char *p = program_invocation_short_name; *p && k + 1 < sizeof(prog); p++)
		prog[k++] = ps_name_check((char[]){ *p, 0 }) ? '_' : *p;
	prog[k] = 0;
	snprintf(name, len, "%s-%d", k && es_job_ok((char[]){ prog[0], 0 }) ? prog : "mpi", (int)getpid());
}

/* Whether every rank made its trace space.  A job watched on some ranks
 * only would mislead the monitors (a rank missing looks like one that
 * ended), so if any rank could not, none keeps its space and the lowest
 * of them says why, once.  Every rank calls this, so the collective matches. */
static bool all_ranks_ok(int rc, const char *seg, const char *why)
{
	int *rcs = calloc((size_t)es_g.size, sizeof(*rcs));
	int mine = rcs ? rc : PS_ENOMEM, failed = 0, first = -1;
	int got = rcs ? PMPI_Allgather(&mine, 1, MPI_INT, rcs, 1, MPI_INT, MPI_COMM_WORLD) :
			MPI_ERR_NO_MEM;
	for (int r = 0; got == MPI_SUCCESS && r < es_g.size; r++)
		if (rcs[r] && failed++ == 0)
			first = r;
	free(rcs);
	if (got == MPI_SUCCESS && failed == 0)
		return true;
	if (es_g.sp) {
		es_space_destroy(es_g.sp);
		es_g.sp = NULL;
		ps_shm_unlink(seg);
	}
	if (es_g.rank == first) {
		uid_t owner;
		bool taken = mine == PS_EEXIST && !ps_shm_owner(seg, &owner) && owner != geteuid();
		char others[48] = "";
		if (failed > 1)
			snprintf(others, sizeof(others), " (and %d other%s)", failed - 1, failed > 2 ? "s" : "");
		if (*why)
			fprintf(stderr, "escollect: rank %d%s: %s; the job runs unmonitored\n", es_g.rank,
				others, why);
		else if (taken)
			fprintf(stderr, "escollect: rank %d%s: trace space %s: the name is taken by a "
				"file of user %ld in /dev/shm, not ours; the job runs unmonitored (ES_JOB "
				"gives it another name)\n", es_g.rank, others, seg, (long)owner);
		else if (mine == PS_EEXIST)
			fprintf(stderr, "escollect: rank %d%s: trace space %s: a job named %s is running "
				"already; this one runs unmonitored (ES_JOB gives it another name)\n",
				es_g.rank, others, seg, es_g.job);
		else
			fprintf(stderr, "escollect: rank %d%s: trace space %s: %s; the job runs unmonitored\n",
				es_g.rank, others, seg, ps_strerror(mine));
	}
	return false;
}

/* mpi.proc: who this rank is, for a profile's header. */
static void describe_process(ps_server *srv)
{
	ps_elem *e;
	struct es_proc_rec *r = es_rank_board(srv, ES_PROC_ELEMENT, sizeof(*r), 1, ES_PROC_LAYOUT, &e);
	if (!r)
		return;
	r->pid = (int32_t)getpid();
	r->rank = es_g.rank;
	r->size = es_g.size;
	gethostname(r->host, sizeof(r->host) - 1);
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(r->cmd, 1, sizeof(r->cmd) - 1, f) : 0;
	if (f)
		fclose(f);
	for (size_t i = 0; i + 1 < n; i++)
		if (!r->cmd[i])
			r->cmd[i] = ' ';
	r->cmd[n] = 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->raw = es_now();
	__atomic_store_n(&r->wall_ns, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, __ATOMIC_RELEASE);
	es_ending_setup(&r->fatal);
	if (es_g.nelems < (int)(sizeof(es_g.elems) / sizeof(es_g.elems[0])))
		es_g.elems[es_g.nelems++] = e; /* closed with the others at MPI_Finalize */
	else
		ps_elem_close(e);
}

/* The pathmap's collect: list as written, for esctl status ([all] without one). */
static void collect_words(const pm_map *m, char *list, size_t len)
{
	const struct pm_mpi *pmm = m ? &pm_model(m)->mpi : NULL;
	for (int k = 0, n = 0; pmm && pmm->given && k < pmm->ncalls && n < (int)len; k++)
		n += snprintf(list + n, len - (size_t)n, "%s%s%s", k ? ", " : "[", pmm->calls[k],
			      k + 1 == pmm->ncalls ? "]" : "");
}

/* Rank 0's word decides the job's name and whether it is watched, so
 * that all ranks agree even if their environments differ. */
struct decision {
	int ok, serve, any, port, keep;
	int multiple;  /* MPI_THREAD_MULTIPLE given */
	char job[PS_NAME_MAX + 1];
	char err[512];
	char secret[256];
};

/* Whether and where each node's first rank serves its trace spaces:
 * ES_SERVE, ES_PORT and ES_SECRET_FILE over the pathmap's servers:. */
static void serving(struct decision *d, pm_map *m)
{
	const char *serve = getenv("ES_SERVE"), *sf = getenv("ES_SECRET_FILE"), *port = getenv("ES_PORT");
	const struct pm_servers *sv = m ? &pm_model(m)->servers : NULL;
	if (serve && *serve) {
		d->serve = 1;
		d->any = !strcmp(serve, "any");
	} else if (sv && sv->given) {
		d->serve = 1;
		d->any = sv->listen != PM_LISTEN_LOOPBACK;
		d->port = sv->port;
	}
	if (port && *port)
		d->port = atoi(port);
	snprintf(d->secret, sizeof(d->secret), "%s", sf && *sf ? sf : sv && sv->secret_file ?
		 sv->secret_file : "");
}

/* This rank's word (rank 0's is taken): the pathmap read, the job named.
 * Whether this rank's own pathmap holds (its keep: too). */
static int decide(struct decision *d, pm_map *m, int ok, int provided, char *err, size_t errlen)
{
	const char *job = getenv("ES_JOB");
	enum ps_keep keep = PS_KEEP_FAILED;
	memset(d, 0, sizeof(*d));
	d->multiple = provided >= MPI_THREAD_MULTIPLE;
	if (ok && pm_keep(m, &keep, err, errlen))
		ok = 0;
	d->ok = ok;
	d->keep = (int)keep;
	serving(d, m);
	char name[256];
	if (job && *job)
		snprintf(name, sizeof(name), "%s", job);
	else if (m)
		snprintf(name, sizeof(name), "%s", pm_model(m)->name);
	else
		default_job(name, sizeof(name));
	if (d->ok && job_name_ok(name, err, errlen))
		d->ok = 0;
	snprintf(d->job, sizeof(d->job), "%.*s", PS_NAME_MAX, name); /* whole when d->ok */
	snprintf(d->err, sizeof(d->err), "%s", err);
	return ok;
}

/* A rank's trace space: room for every thread's elements and boards, and the rank's. */
static size_t space_bytes(void)
{
	size_t per_thread = ps_elem_footprint(sizeof(struct es_trace), es_g.threshold) +
			    ps_elem_footprint(sizeof(struct es_req_rec), ES_REQS_SLOTS) +
			    ps_elem_footprint(sizeof(struct es_chan_rec), ES_CHANS_SLOTS) +
			    ps_elem_footprint(sizeof(struct es_site_rec), ES_SITES_SLOTS);
	size_t per_rank = ps_elem_footprint(sizeof(struct es_comm_rec), ES_COMMS_HELD) +
			  ps_elem_footprint(sizeof(struct es_calls_rec), ES_CALLS_SLOTS) +
			  ps_elem_footprint(sizeof(struct es_module_rec), ES_MODULES_SLOTS) + es_objects_bytes() + (1u << 20);
	return per_thread * ES_MAX_THREADS + per_rank;
}

/* The rank's own elements and boards in its new trace space, and what follows them. */
static void fill_space(ps_server *srv, const struct decision *d)
{
	struct ps_elem_attr ca = { .tuple_size = sizeof(struct es_comm_rec), .threshold = ES_COMMS_HELD,
				   .flags = PS_MULTI_WRITER };
	if (!ps_elem_create(srv, ES_COMMS_ELEMENT, &ca, &es_g.comms))
		ps_elem_set_layout(es_g.comms, ES_COMMS_LAYOUT); /* for readers of the other byte order */
	es_g.calls = es_rank_board(srv, ES_CALLS_ELEMENT, sizeof(struct es_calls_rec), ES_CALLS_SLOTS, ES_CALLS_LAYOUT,
				   &es_g.calls_elem);
	es_sites_setup(srv);
	es_phases_setup(srv);
	es_objects_setup(srv);
	es_files_setup(srv);
	describe_process(srv);
	es_clocks_setup(srv, !d->multiple);
	es_comms_setup();
	es_types_setup();
	es_requests_setup();
}

/* Where the monitors are, as a prefix to name them by ("" when not
 * beside this library, as installed: then on PATH, one hopes): this
 * library's directory's ../bin, where the build and the install put them. */
static void tools_dir(char *buf, size_t len)
{
	Dl_info di;
	char lib[PATH_MAX], *slash;
	buf[0] = 0;
	if (!dladdr((void *)tools_dir, &di) || !di.dli_fname || !realpath(di.dli_fname, lib) ||
	    !(slash = strrchr(lib, '/')))
		return;
	*slash = 0;
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof(probe), "%s/../bin/heartbeat", lib);
	char real[PATH_MAX];
	if (realpath(probe, real) && !access(real, X_OK) && (slash = strrchr(real, '/'))) {
		slash[1] = 0;
		snprintf(buf, len, "%s", real);
	}
}

/* Decides, on every rank alike, whether and where to record. */
static void setup(int provided)
{
	PMPI_Comm_rank(MPI_COMM_WORLD, &es_g.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &es_g.size);
	const char *file = getenv("ES_PATHMAP");
	char err[512] = "";
	pm_map *m = NULL;
	unsigned char collect[256];
	char list[240] = "[all]"; /* what esctl status shows before any order */
	int ok = !(file && *file && pm_load(file, &m, err, sizeof(err))) &&
		 !es_mpi_select(m ? &pm_model(m)->mpi : NULL, file, collect, err, sizeof(err)) &&
		 !trace_threshold(m, &es_g.threshold, err, sizeof(err));
	struct decision d;
	ok = decide(&d, m, ok, provided, err, sizeof(err));
	PMPI_Bcast(&d, sizeof(d), MPI_BYTE, 0, MPI_COMM_WORLD);
	collect_words(m, list, sizeof(list));
	pm_destroy(m);
	if (!d.ok) {
		if (es_g.rank == 0)
			fprintf(stderr, "escollect: %s; running unmonitored\n", d.err);
		return;
	}
	snprintf(es_g.job, sizeof(es_g.job), "%s", d.job);
	char seg[PS_NAME_MAX + 1]; /* job_name_ok made sure it fits */
	es_space_name(seg, sizeof(seg), es_g.job, ES_SPACE_RANK, es_g.rank);
	es_clocks_node();
	/* a trace an earlier run of this name left is replaced: said once */
	struct ps_shm_info old;
	if (ok && es_g.rank == 0 && !ps_shm_info(seg, &old) && old.state != PS_SHM_LIVE)
		fprintf(stderr, "escollect: job %s: replacing the trace an earlier run of it left "
			"(ES_JOB gives a run another name)\n", es_g.job);
	/* a rank that alone could not read the pathmap has said so */
	int rc = ok ? es_space_create_rank(seg, space_bytes(), es_g.rank, es_g.size, &es_g.sp) : PS_EINVAL;
	if (!all_ranks_ok(rc, seg, ok ? "" : err))
		return;
	ps_shm_set_keep(seg, (enum ps_keep)d.keep); /* rank 0's word, as for the name */
	ps_server *srv = es_space_server(es_g.sp);
	fill_space(srv, &d);
	memcpy(es_route.collect, collect, sizeof(collect));
	es_route.tracing = 1;
	/* the thread that called MPI_Init is thread 0, whatever it records:
	 * its messages are counted from the first (collectors.h) */
	es_elem();
	es_control_setup(srv, collect, list);
	if (es_g.rank == 0 && getenv("ES_VERBOSE") && !strcmp(getenv("ES_VERBOSE"), "1")) {
		char bin[PATH_MAX];
		tools_dir(bin, sizeof(bin));
		fprintf(stderr, "escollect: job %s: %d ranks traced (segments %s.r0..r%d); watch it with "
			"%sheartbeat %s, %sgeteventmon %s or %scolopmon %s\n", es_g.job, es_g.size, es_g.job,
			es_g.size - 1, bin, es_g.job, bin, es_g.job, bin, es_g.job);
	}
	if (d.serve)
		serve_node(d.any, d.port, d.secret);
}

/* MPI_Init and MPI_Init_thread, from C or Fortran, once the library's own has returned. */
static void inited(uint64_t t0, int rc, int provided)
{
	if (rc != MPI_SUCCESS)
		return;
	setup(provided);
	if (es_want(ES_OP_MPI_INIT))
		es_write(ES_OP_MPI_INIT, t0, es_now(), (uint32_t)es_g.rank, 0, (uint32_t)provided, ES_COMM_NONE, rc);
}

/* MPI_Finalize, from C or Fortran: no MPI call may follow, in any thread. */
static uint64_t finalizing(void)
{
	uint64_t t0 = es_now();
	/* a rank that finalizes before its peers may wait here for them (Open
	 * MPI's fence): monitors must see it has ended, not that it waits */
	if (es_t.notes)
		es_note_call(es_t.notes, t0, ES_OP_MPI_FINALIZE, (uint32_t)es_g.rank, 0, ES_NONE);
	if (es_g.sp)
		es_clocks_finalize();
	es_phases_finalize();
	es_objects_finalize();
	es_files_finalize();
	es_comms_finalize();
	/* the server goes before MPI does: it is a thread of ours */
	ps_tcp_stop(es_g.tcp);
	es_g.tcp = NULL;
	return t0;
}

/* A clean end: the last rank on this host to end removes the job's
 * segments here, as their keep policy says (pastset.h: ps_shm_release). */
static void release_job(void)
{
	char (*names)[PS_NAME_MAX + 1] = calloc((size_t)es_g.size, sizeof(*names));
	const char **v = calloc((size_t)es_g.size, sizeof(*v));
	for (int r = 0; names && v && r < es_g.size; r++) {
		es_space_name(names[r], sizeof(names[r]), es_g.job, ES_SPACE_RANK, r);
		v[r] = names[r];
	}
	if (names && v)
		ps_shm_release(v, es_g.size);
	free(names);
	free(v);
}

static void finalized(uint64_t t0, int rc)
{
	if (es_want(ES_OP_MPI_FINALIZE))
		es_write(ES_OP_MPI_FINALIZE, t0, es_now(), (uint32_t)es_g.rank, 0, 0, ES_COMM_NONE, rc);
	if (!es_g.sp)
		return;
	/* Close everything; then the segments go or stay as the keep policy says
	 * (release_job: the last rank here to end removes them). */
	es_control_finalize();
	es_ending_finalize();
	memset(es_route.collect, 0, sizeof(es_route.collect));
	es_route.tracing = 0;
	es_requests_reset();
	pthread_mutex_lock(&es_g.lock);
	for (int i = 0; i < es_g.nelems; i++)
		ps_elem_close(es_g.elems[i]);
	es_g.nelems = 0;
	for (int k = 0; k < ES_MAX_THREADS; k++)
		atomic_store_explicit(&es_g.boards[k], NULL, memory_order_relaxed);
	es_t.reqs = NULL;
	es_t.chans = NULL;
	es_chans_free();
	ps_elem_close(es_g.comms);
	es_g.comms = NULL;
	ps_elem_close(es_g.calls_elem);
	es_g.calls_elem = NULL;
	es_g.calls = NULL;
	es_sites_finalize();
	es_space_destroy(es_g.sp);
	es_g.sp = NULL;
	pthread_mutex_unlock(&es_g.lock);
	es_t.elem = NULL;
	es_t.w.head = NULL;
	release_job();
}

/* The work of MPI_Init, MPI_Init_thread and MPI_Finalize, for the C entry
 * points and MPICH's mpi_f08 ones alike; each caller sets es_t.ra first. */
static int init(int *argc, char ***argv, int required, int *provided)
{
	es_clock_init(); /* before the first stamp, so both stamps share a clock */
	uint64_t t0 = es_now();
	int rc = provided ? PMPI_Init_thread(argc, argv, required, provided) : PMPI_Init(argc, argv);
	inited(t0, rc, rc == MPI_SUCCESS && provided ? *provided : 0);
	return rc;
}

static int finalize(void)
{
	uint64_t t0 = finalizing();
	int rc = PMPI_Finalize();
	finalized(t0, rc);
	return rc;
}

int MPI_Init(int *argc, char ***argv)
{
	es_t.ra = __builtin_return_address(0);
	return init(argc, argv, 0, NULL);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	es_t.ra = __builtin_return_address(0);
	return init(argc, argv, required, provided);
}

int MPI_Finalize(void)
{
	es_t.ra = __builtin_return_address(0);
	return finalize();
}

/* --- the same from Fortran: the MPI library's Fortran entry points call
 * PMPI_Init and PMPI_Finalize, never ours ---------------------------------------- */

typedef void f_init_t(MPI_Fint *ierr);
typedef void f_init_thread_t(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
static void *f_init_real, *f_init_thread_real, *f_finalize_real;

static void f_init(MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	f_init_t *real = (f_init_t *)es_f_real(&f_init_real, "init");
	if (!real) {
		*ierr = MPI_ERR_INTERN;
		return;
	}
	es_clock_init();
	uint64_t t0 = es_now();
	real(ierr);
	inited(t0, (int)*ierr, 0);
}

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	f_init_thread_t *real = (f_init_thread_t *)es_f_real(&f_init_thread_real, "init_thread");
	if (!real) {
		*ierr = MPI_ERR_INTERN;
		return;
	}
	es_clock_init();
	uint64_t t0 = es_now();
	real(required, provided, ierr);
	inited(t0, (int)*ierr, (int)*provided);
}

static void f_finalize(MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	f_init_t *real = (f_init_t *)es_f_real(&f_finalize_real, "finalize");
	if (!real) {
		*ierr = MPI_ERR_INTERN;
		return;
	}
	uint64_t t0 = finalizing();
	real(ierr);
	finalized(t0, (int)*ierr);
}

#define F_NAMES(fn, lower, upper, ...)                                    \
	void mpi_##lower##_(__VA_ARGS__) ES_F_MPI_ALIAS(fn);                  \
	void mpi_##lower##__(__VA_ARGS__) ES_F_MPI_ALIAS(fn);                 \
	void mpi_##lower(__VA_ARGS__) ES_F_MPI_ALIAS(fn);                     \
	void MPI_##upper(__VA_ARGS__) ES_F_MPI_ALIAS(fn);                     \
	void ompi_##lower##_f(__VA_ARGS__) ES_F_MPI_ALIAS(fn);
F_NAMES(f_init, init, INIT, MPI_Fint *)
F_NAMES(f_init_thread, init_thread, INIT_THREAD, MPI_Fint *, MPI_Fint *, MPI_Fint *)
F_NAMES(f_finalize, finalize, FINALIZE, MPI_Fint *)

#if defined(MPICH_VERSION)
/* MPICH's mpi_f08 MPI_Init, MPI_Init_thread and MPI_Finalize call PMPI_
 * (fortran.c): ours do what the C ones do; ierror is OPTIONAL there */
static void f08_init(MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	int rc = init(NULL, NULL, 0, NULL);
	if (ierr)
		*ierr = rc;
}

static void f08_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	int got = 0, rc = init(NULL, NULL, (int)*required, &got);
	*provided = got;
	if (ierr)
		*ierr = rc;
}

static void f08_finalize(MPI_Fint *ierr)
{
	es_t.ra = __builtin_return_address(0);
	int rc = finalize();
	if (ierr)
		*ierr = rc;
}
void mpi_init_f08_(MPI_Fint *) ES_F_ALIAS(f08_init);
void mpi_init_thread_f08_(MPI_Fint *, MPI_Fint *, MPI_Fint *) ES_F_ALIAS(f08_init_thread);
void mpi_finalize_f08_(MPI_Fint *) ES_F_ALIAS(f08_finalize);
#endif
