/* main.c - the windtunnel program: launched by mpirun, one process per rank, several threads each. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "steering/steering.h"
#include "picture.h"
#include "tunnel.h"

static const char *usage =
	"usage: mpirun -np P windtunnel [options]\n"
	"A lattice-gas wind tunnel (FHP): flow from the left, out on the right, walls\n"
	"above and below and a plate in the way, on several 2N x N matrices cut into\n"
	"slices, one thread each, that exchange border rows through PastSet elements.\n"
	"  -s, --size SIZE      small (N=960), medium (3840), large (7680; default small)\n"
	"  -N, --n N            any N (at least 16)\n"
	"  -t, --steps S        time steps (default 200)\n"
	"  -m, --matrices M     matrices (default 8)\n"
	"  -l, --slices L       slices per matrix, a thread each (default 4)\n"
	"      --model fhp1|fhp2   FHP-I, or FHP-II with rest particles (default fhp1)\n"
	"      --vector V       the kernels' instructions: avx512, avx2 or portable\n"
	"                       (default: the best this processor has; the same lattice)\n"
	"  -c, --collectors     a collector on every path and tree edge, in each process's\n"
	"                       trace space, where the tunnel's object lives too: without\n"
	"                       -c, monitors see no trace spaces and esctl cannot steer it\n"
	"      --nested         three collectors on each path, to time the middle one\n"
	"      --transport T    pastset (default: rows through PastSet elements) or mpi\n"
	"                       (plain MPI messages: watch it with libescollect.so)\n"
	"  -j, --job NAME       the job name monitors attach to (default wt<pid>)\n"
	"      --stats-every K  allreduce the totals every K steps (default 20)\n"
	"      --pathmap-out F  write the generated pathmap to F and go on\n"
	"      --pathmap F      run from this pathmap (one --pathmap-out wrote, edited:\n"
	"                       which process runs which slices, hosts, stages); the\n"
	"                       same -N -m -l, one process pP per rank\n"
	"      --hosts H        spread the processes over H hosts (the ranks' own\n"
	"                       hosts, in rank order): rows and totals between them go\n"
	"                       through tuple servers, found by the ranks at start-up\n"
	"      --serve          tuple servers even on one host, for monitors elsewhere\n"
	"      --listen WHERE   where they listen: loopback (default) or any\n"
	"      --port P         on this port (default: any free one)\n"
	"      --secret-file F  the shared secret, needed with --listen any\n"
	"      --servers-out F  write the servers' ADDR:PORT list to F (monitors' --servers)\n"
	"      --picture F.png  at the end, the flow around the plate in matrix 0\n"
	"      --no-object      do not expose the tunnel as an object (steering/)\n"
	"  -q, --quiet          no progress lines\n"
	"  -h, --help\n"
	"      --version\n";

/* --- --transport mpi: border rows and totals as plain MPI messages ---------- */

struct mpi_ctx {
	int slices, threads, processes, local;
	pthread_barrier_t bar;
	pthread_mutex_t lock;
	int64_t sum[16];
	int arrived;
};

static int owner(const struct mpi_ctx *x, int t)
{
	for (int p = 0; p < x->processes; p++)
		if (t < x->threads * (p + 1) / x->processes)
			return p;
	return x->processes - 1;
}

static int mpi_exchange(void *ctx, int m, int s, const uint64_t *top, const uint64_t *bottom,
			uint64_t *halo_up, uint64_t *halo_dn, size_t bytes)
{
	struct mpi_ctx *x = ctx;
	int t = m * x->slices + s, n = 0;
	MPI_Request rq[4];
	/* tag: the receiving slice's thread, times 2, + 1 if the row comes from below */
	if (halo_up)
		MPI_Irecv(halo_up, (int)bytes, MPI_BYTE, owner(x, t - 1), 2 * t, MPI_COMM_WORLD, &rq[n++]);
	if (halo_dn)
		MPI_Irecv(halo_dn, (int)bytes, MPI_BYTE, owner(x, t + 1), 2 * t + 1, MPI_COMM_WORLD, &rq[n++]);
	if (top)
		MPI_Isend(top, (int)bytes, MPI_BYTE, owner(x, t - 1), 2 * (t - 1) + 1, MPI_COMM_WORLD, &rq[n++]);
	if (bottom)
		MPI_Isend(bottom, (int)bytes, MPI_BYTE, owner(x, t + 1), 2 * (t + 1), MPI_COMM_WORLD, &rq[n++]);
	return MPI_Waitall(n, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS ? 0 : PS_EINVAL;
}

static int mpi_allreduce(void *ctx, int64_t *v, int n)
{
	/* this process's threads add up here; the last to arrive talks to
	 * the other processes; everyone leaves with the total */
	struct mpi_ctx *x = ctx;
	pthread_mutex_lock(&x->lock);
	for (int i = 0; i < n; i++)
		x->sum[i] += v[i];
	bool last = ++x->arrived == x->local;
	pthread_mutex_unlock(&x->lock);
	if (last) {
		MPI_Allreduce(MPI_IN_PLACE, x->sum, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	}
	pthread_barrier_wait(&x->bar);
	memcpy(v, x->sum, sizeof(int64_t) * (size_t)n);
	if (pthread_barrier_wait(&x->bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
		memset(x->sum, 0, sizeof(x->sum));
		x->arrived = 0;
	}
	pthread_barrier_wait(&x->bar);
	return 0;
}

/*
 * The tunnel as an object monitors see and steer (steering/, in this
 * process's trace space, which -c makes): its inflow and the plate's
 * column, writable; the mass flow out of the far end and the drag on the
 * plate, per step and matrix, over the last totals.  Published and synced
 * by the thread that keeps the totals, after each allreduce of them; what
 * was set there goes round with the next (struct wt_config's steer).
 */
struct tunnel {
	bool quiet, tried; /* tried: true from the start with --no-object */
	const char *job;
	int process, matrices, width;
	ps_server *srv;
	st_app *app;
	st_obj *obj;
	double inflow, mass_flow, drag;
	int plate, step;
	int64_t last_out, last_drag;
	uint64_t last_step;
};

static void tunnel_open(struct tunnel *t, const struct wt_totals *tot)
{
	char space[PS_NAME_MAX + 1];
	t->tried = true;
	t->inflow = tot->inflow_density / 65536.0;
	t->plate = tot->plate_x;
	struct ps_shm_info in;
	/* this run's own (its collectors made it): an earlier run's of the
	 * same name, ended, is no place for this one's object */
	if (es_space_name(space, sizeof(space), t->job, ES_SPACE_PROCESS, t->process) || ps_shm_info(space, &in) ||
	    in.state != PS_SHM_LIVE || ps_server_open_shm(space, PS_RDWR, &t->srv))
		return; /* no trace space (no -c): nothing to steer */
	int rc = st_app_create(&t->app);
	if (!rc)
		rc = st_obj_create(t->app, "tunnel", "the wind tunnel", &t->obj);
	if (!rc)
		rc = st_obj_field(t->obj, "inflow", ST_DOUBLE, &t->inflow, 1, ST_WRITABLE, 0, 1,
				  "chance of a particle at an inflow site each step");
	if (!rc)
		rc = st_obj_field(t->obj, "plate", ST_INT, &t->plate, 1, ST_WRITABLE, 1, t->width - 2,
				  "the plate's column (0 is the inflow)");
	if (!rc)
		rc = st_obj_field(t->obj, "mass_flow", ST_DOUBLE, &t->mass_flow, 1, 0, 0, 0,
				  "particles out per step and matrix, over the last totals");
	if (!rc)
		rc = st_obj_field(t->obj, "drag", ST_DOUBLE, &t->drag, 1, 0, 0, 0,
				  "momentum given to the plate per step and matrix");
	if (!rc)
		rc = st_obj_field(t->obj, "step", ST_INT, &t->step, 1, 0, 0, 0, "the step the totals are of");
	if (!rc)
		rc = st_app_attach(t->app, t->srv);
	if (rc)
		fprintf(stderr, "windtunnel: the tunnel's object: %s\n", st_strerror(rc));
}

static void tunnel_close(struct tunnel *t)
{
	st_app_destroy(t->app);
	ps_server_destroy(t->srv);
}

static void progress(const struct wt_totals *tot, double seconds, void *arg)
{
	struct tunnel *t = arg;
	if (!t->tried)
		tunnel_open(t, tot);
	if (t->app && tot->step > t->last_step) {
		double steps = (double)(tot->step - t->last_step) * t->matrices;
		t->mass_flow = (double)(tot->out - t->last_out) / steps;
		t->drag = (double)(tot->drag - t->last_drag) / steps;
		t->step = (int)tot->step;
		t->last_step = tot->step, t->last_out = tot->out, t->last_drag = tot->drag;
		st_obj_publish(t->obj);
		st_app_sync(t->app);
	}
	if (t->quiet)
		return;
	printf("windtunnel: step %6llu  %8.2f s  particles %11lld  momentum (%lld, %lld)  drag %lld\n",
	       (unsigned long long)tot->step, seconds, (long long)tot->particles, (long long)tot->px,
	       (long long)tot->py, (long long)tot->drag);
	fflush(stdout);
}

static void steer(void *arg, uint32_t *inflow_density, int *plate_x)
{
	const struct tunnel *t = arg;
	if (!t->app)
		return;
	*inflow_density = (uint32_t)(t->inflow * 65536.0 + 0.5);
	*plate_x = t->plate;
}

/* How the ranks tell each other where their tuple servers listen. */
static int mpi_allgather(const void *mine, void *all, size_t len, void *arg)
{
	(void)arg;
	return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, MPI_COMM_WORLD) ==
	       MPI_SUCCESS ? 0 : PS_EINVAL;
}

/* What the command line asks for, besides the run's own configuration. */
struct args {
	const char *pm_out, *pm_in, *picture, *servers_out;
	bool quiet, bad, use_mpi, help, no_object;
};

static void parse_args(int argc, char **argv, int rank, struct wt_config *c, char *job, size_t joblen,
		       struct args *a)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' }, { "n", required_argument, NULL, 'N' },
		{ "steps", required_argument, NULL, 't' }, { "matrices", required_argument, NULL, 'm' },
		{ "slices", required_argument, NULL, 'l' }, { "model", required_argument, NULL, 'M' },
		{ "collectors", no_argument, NULL, 'c' }, { "job", required_argument, NULL, 'j' },
		{ "stats-every", required_argument, NULL, 'k' },
		{ "pathmap-out", required_argument, NULL, 'o' }, { "pathmap", required_argument, NULL, 'I' }, { "quiet", no_argument, NULL, 'q' }, { "no-object", no_argument, NULL, 'J' },
		{ "transport", required_argument, NULL, 'T' }, { "nested", no_argument, NULL, 'Z' }, { "picture", required_argument, NULL, 'P' },
		{ "hosts", required_argument, NULL, 'H' }, { "serve", no_argument, NULL, 'S' },
		{ "listen", required_argument, NULL, 'L' }, { "port", required_argument, NULL, 'p' },
		{ "secret-file", required_argument, NULL, 'K' },
		{ "servers-out", required_argument, NULL, 'O' },
		{ "vector", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	int o;
	while ((o = getopt_long(argc, argv, "s:N:t:m:l:cj:qh", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			if (!strcmp(optarg, "small")) c->n = 960;
			else if (!strcmp(optarg, "medium")) c->n = 3840;
			else if (!strcmp(optarg, "large")) c->n = 7680;
			else {
				if (!rank)
					fprintf(stderr, "windtunnel: --size: expected small, medium or large, "
						"not '%s'\n", optarg);
				a->bad = true;
			}
			break;
		case 'N': c->n = atoi(optarg); a->bad |= c->n < 16; break;
		case 't': c->steps = atoi(optarg); a->bad |= c->steps < 1; break;
		case 'm': c->matrices = atoi(optarg); a->bad |= c->matrices < 1; break;
		case 'l': c->slices = atoi(optarg); a->bad |= c->slices < 1; break;
		case 'M':
			c->model = !strcmp(optarg, "fhp2") ? WT_FHP2 : WT_FHP1;
			a->bad |= strcmp(optarg, "fhp1") && strcmp(optarg, "fhp2");
			break;
		case 'c': c->collectors = true; break;
		case 'j':
			/* refused, never cut: two long names cut alike would be one job */
			if (!es_job_ok(optarg)) {
				if (!rank)
					fprintf(stderr, "windtunnel: --job '%s': expected %s\n", optarg,
						ES_JOB_RULE);
				a->bad = true;
			} else {
				snprintf(job, joblen, "%s", optarg);
			}
			break;
		case 'k': c->stats_every = atoi(optarg); a->bad |= c->stats_every < 1; break;
		case 'o': a->pm_out = optarg; break;
		case 'I': a->pm_in = optarg; break;
		case 'P': a->picture = optarg; break;
		case 'Z': c->nested = true; break;
		case 'T':
			a->use_mpi = !strcmp(optarg, "mpi");
			a->bad |= !a->use_mpi && strcmp(optarg, "pastset");
			break;
		case 'H': c->hosts = atoi(optarg); a->bad |= c->hosts < 1; break;
		case 'S': c->serve = true; break;
		case 'L':
			c->listen = optarg;
			a->bad |= strcmp(optarg, "loopback") && strcmp(optarg, "any");
			break;
		case 'p': c->port = atoi(optarg); a->bad |= c->port < 0 || c->port > 65535; break;
		case 'K': c->secret_file = optarg; break;
		case 'O': a->servers_out = optarg; break;
		case 'q': a->quiet = true; break;
		case 'J': a->no_object = true; break;
		case 'V': {
			int vrc = wt_vector_use(optarg);
			if (vrc && !rank)
				fprintf(stderr, "windtunnel: --vector %s: %s\n", optarg, vrc == -EINVAL ?
					"expected avx512, avx2 or portable" : "this processor lacks it");
			a->bad |= vrc != 0;
			break;
		}
		case 'h': a->help = true; return;
		default: a->bad = true;
		}
	}
}

/* What is wrong with the arguments, in the user's terms (the generated
 * pathmap's positions would mean nothing to them); "" if nothing. */
static void wrong_args(const struct wt_config *c, const struct args *a, int argc, char **argv,
		       int size, char *why, size_t len)
{
	char secret[128];
	*why = 0;
	if (a->bad)
		snprintf(why, len, "bad arguments");
	else if (optind != argc)
		snprintf(why, len, "unexpected argument '%s'", argv[optind]);
	else if (c->n / c->slices < 2)
		snprintf(why, len, "-l %d: each slice needs at least 2 of the %d rows", c->slices, c->n);
	else if (c->matrices * c->slices < size)
		snprintf(why, len, "%d processes, but %d matrices x %d slices make only %d "
			 "threads: each process needs one", size, c->matrices, c->slices,
			 c->matrices * c->slices);
	else if (c->hosts > size)
		snprintf(why, len, "--hosts %d: only %d processes, and each host needs one", c->hosts, size);
	else if (c->listen && !strcmp(c->listen, "any") && !c->secret_file)
		snprintf(why, len, "--listen any: needs --secret-file (a file only you can read)");
	else if (a->pm_in && a->use_mpi)
		snprintf(why, len, "--pathmap: with --transport mpi the rows do not take paths");
	else if (c->secret_file && ps_secret_check(c->secret_file, secret, sizeof(secret)))
		snprintf(why, len, "--secret-file %s: %s", c->secret_file, secret);
}

/* This process's share of the run, from the generated pathmap or the one
 * given; the job's name from the pathmap if it names one.  Aborts the job
 * on failure: the other ranks would wait for this one. */
static struct wt_run *start(const struct wt_config *c, const struct args *a, int rank, char *job,
			    size_t joblen, char **text, pm_map **m)
{
	char err[512] = "";
	*text = malloc(1 << 20);
	int len = *text ? wt_pathmap_text(c, *text, 1 << 20) : -1;
	struct wt_run *r = NULL;
	int rc = a->pm_in ? pm_load(a->pm_in, m, err, sizeof(err))
	       : len < 0 ? PS_ENOMEM : pm_load_string("windtunnel", *text, (size_t)len, m, err, sizeof(err));
	if (!rc && a->pm_in)
		snprintf(job, joblen, "%s", pm_model(*m)->name); /* the pathmap names the job */
	if (!rc && a->pm_out && !rank) {
		FILE *f = base_fopen_out(a->pm_out, 0644);
		if (f) {
			fwrite(*text, 1, (size_t)len, f);
			fclose(f);
		}
	}
	if (!rc)
		rc = wt_run_create(c, *m, rank, &r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "windtunnel: rank %d: %s\n", rank, *err ? err : ps_strerror(rc));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!rank && *wt_run_servers(r)) {
		printf("windtunnel: tuple servers %s (for monitors: --servers %s)\n", wt_run_servers(r),
		       wt_run_servers(r));
		FILE *f = a->servers_out ? base_fopen_out(a->servers_out, 0644) : NULL;
		if (f) {
			fprintf(f, "%s\n", wt_run_servers(r));
			fclose(f);
		} else if (a->servers_out) {
			perror(a->servers_out);
		}
	}
	return r;
}

/* The flow field, summed over the processes, as a picture rank 0 writes. */
static void write_picture(struct wt_run *r, const char *picture, int rank)
{
	int cell, cw, ch;
	wt_picture_size(wt_run_geometry(r), &cell, &cw, &ch);
	size_t n = (size_t)cw * (size_t)ch * 4;
	int64_t *acc = calloc(n, sizeof(int64_t)), *summed = calloc(n, sizeof(int64_t));
	if (acc && summed) {
		wt_run_picture(r, 0, acc);
		MPI_Reduce(acc, summed, (int)n, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
		if (!rank && wt_picture_write(picture, wt_run_geometry(r), summed))
			fprintf(stderr, "windtunnel: cannot write %s\n", picture);
		else if (!rank)
			printf("windtunnel: the flow field (%d x %d cells of %d x %d sites) is in %s\n", cw,
			       ch, cell, cell, picture);
	}
	free(acc);
	free(summed);
}

/* Rank 0's account of the run: speed, and the conservation laws checked
 * exactly.  0 if every law held and every matrix ended alike. */
static int report(const struct wt_config *c, const struct wt_geometry *g, const struct wt_totals *t,
		  const uint64_t *digest, double slowest)
{
	double sites = (double)g->width * g->height * c->matrices * c->steps;
	bool conserved = t->particles == t->initial + t->in - t->out;
	/* collisions keep momentum; inflow brings, the ends carry off and
	 * the walls take what bounces: the balance is exact */
	bool momentum = t->px == t->px0 + t->min_x - t->mout_x - t->mwall_x &&
			t->py == t->py0 - t->mout_y - t->mwall_y;
	bool same = true;
	for (int k = 1; k < c->matrices; k++)
		same &= digest[k] == digest[0]; /* every matrix starts alike and sees the same flow */
	printf("windtunnel: %.3g site updates in %.2f s: %.3g per second, %.3g per core\n", sites,
	       slowest, sites / slowest, sites / slowest / (double)sysconf(_SC_NPROCESSORS_ONLN));
	printf("windtunnel: exchange period %.3f ms (one step)\n", slowest / c->steps * 1e3);
	/* what the application's own threads used, whoever else ran: a cost
	 * that waiting for a busy core does not blur */
	printf("windtunnel: the slice threads used %.3f CPU s\n", t->cpu_seconds);
	printf("windtunnel: particles %lld at the start + %lld in - %lld out = %lld at the end: %s\n",
	       (long long)t->initial, (long long)t->in, (long long)t->out, (long long)t->particles,
	       conserved ? "conserved" : "NOT CONSERVED");
	printf("windtunnel: momentum (%lld, %lld) at the start + %lld in - (%lld, %lld) out - "
	       "(%lld, %lld) to the walls = (%lld, %lld) at the end: %s\n", (long long)t->px0,
	       (long long)t->py0, (long long)t->min_x, (long long)t->mout_x, (long long)t->mout_y,
	       (long long)t->mwall_x, (long long)t->mwall_y, (long long)t->px, (long long)t->py,
	       momentum ? "balanced" : "NOT BALANCED");
	printf("windtunnel: drag on the plate %.3f per step per matrix (momentum units)\n",
	       (double)t->drag / c->steps / c->matrices);
	printf("windtunnel: lattice digest %016llx%s\n", (unsigned long long)digest[0],
	       same ? " (every matrix alike)" : " (MATRICES DIFFER)");
	return conserved && momentum && same ? 0 : 1;
}

/* The lattice as digests that add up across processes, the time, and the
 * totals (kept by the process that runs the stats tree's first
 * participant, the others hold zeros: summed, rank 0 has them), reported
 * by rank 0: its exit status, 0 elsewhere. */
static int gather_and_report(const struct wt_config *c, struct wt_run *r, const struct wt_totals *t, int rank)
{
	uint64_t *mine = calloc((size_t)c->matrices, sizeof(uint64_t)), *all = calloc((size_t)c->matrices, sizeof(uint64_t));
	if (!mine || !all) {
		fprintf(stderr, "windtunnel: rank %d: out of memory for the digests\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int k = 0; k < c->matrices; k++)
		mine[k] = wt_run_digest(r, k);
	MPI_Reduce(mine, all, c->matrices, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	double slowest, cpu;
	MPI_Reduce(&t->seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t->cpu_seconds, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	struct wt_totals sum;
	enum { NTOT = offsetof(struct wt_totals, seconds) / sizeof(int64_t) };
	_Static_assert(offsetof(struct wt_totals, seconds) % sizeof(int64_t) == 0, "int64 fields first");
	MPI_Reduce((void *)t, &sum, NTOT, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	sum.seconds = t->seconds;
	sum.cpu_seconds = cpu;
	int status = !rank ? report(c, wt_run_geometry(r), &sum, all, slowest) : 0;
	free(mine);
	free(all);
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("windtunnel (EventSpace) " ES_VERSION);
		return 0;
	}
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	static char job[ES_JOB_MAX + 1];
	snprintf(job, sizeof(job), "wt%d", (int)getpid());
	struct wt_config c = { .job = job, .n = 960, .matrices = 8, .slices = 4, .processes = size,
			       .steps = 200, .stats_every = 20, .model = WT_FHP1, .seed = 1 };
	struct args a = { 0 };
	parse_args(argc, argv, rank, &c, job, sizeof(job), &a);
	if (a.help) {
		if (!rank)
			fputs(usage, stdout);
		MPI_Finalize();
		return 0;
	}
	/* every rank sees the same arguments: they agree on the job name */
	MPI_Bcast(job, sizeof(job), MPI_CHAR, 0, MPI_COMM_WORLD);
	char why[256];
	wrong_args(&c, &a, argc, argv, size, why, sizeof(why));
	if (*why) {
		if (!rank)
			fprintf(stderr, "windtunnel: %s\n%s", why, a.bad ? usage : "");
		MPI_Finalize();
		return 2;
	}
	/* called by the thread that keeps the totals, on whichever rank */
	struct tunnel tun = { .quiet = a.quiet, .tried = a.no_object, .job = job, .process = rank, .matrices = c.matrices, .width = 2 * c.n };
	c.progress = progress;
	c.progress_arg = &tun;
	c.steer = steer;
	struct mpi_ctx mctx = { .slices = c.slices, .threads = c.matrices * c.slices, .processes = size };
	struct wt_transport mpi_tr = { mpi_exchange, mpi_allreduce, &mctx };
	if (a.use_mpi) {
		if (provided < MPI_THREAD_MULTIPLE) {
			if (!rank)
				fprintf(stderr, "windtunnel: --transport mpi needs MPI_THREAD_MULTIPLE\n");
			MPI_Finalize();
			return 2;
		}
		mctx.local = mctx.threads * (rank + 1) / size - mctx.threads * rank / size;
		pthread_barrier_init(&mctx.bar, NULL, (unsigned)mctx.local);
		pthread_mutex_init(&mctx.lock, NULL);
		c.transport = &mpi_tr;
	}
	struct pm_job_attr ja = { mpi_allgather, NULL };
	c.job_attr = &ja;
	es_collectors_register();
	char *text;
	pm_map *m = NULL;
	struct wt_run *r = start(&c, &a, rank, job, sizeof(job), &text, &m);
	if (!rank)
		printf("windtunnel: %d matrices of %d x %d (%s, %s), %d slices each, %d processes, %d "
		       "steps, job %s, rows over %s%s\n", c.matrices, 2 * c.n, c.n,
		       c.model == WT_FHP2 ? "FHP-II" : "FHP-I", wt_vector_path(), c.slices, size, c.steps, job,
		       a.use_mpi ? "MPI messages" : "PastSet paths",
		       c.collectors ? ", collectors on every path" : "");
	MPI_Barrier(MPI_COMM_WORLD);
	struct wt_totals t;
	int rc = wt_run_go(r, &t);
	if (rc) {
		fprintf(stderr, "windtunnel: rank %d: %s\n", rank,
			*wt_run_error(r) ? wt_run_error(r) : ps_strerror(rc));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (a.picture)
		write_picture(r, a.picture, rank);
	int status = gather_and_report(&c, r, &t, rank);
	tunnel_close(&tun);
	/* nobody stops its tuple server while another host may still ask it */
	MPI_Barrier(MPI_COMM_WORLD);
	wt_run_destroy(r);
	/* the border rows' segments go; trace spaces stay for the monitors */
	MPI_Barrier(MPI_COMM_WORLD);
	char pname[16];
	snprintf(pname, sizeof(pname), "p%d", rank);
	pm_job_unlink(m, pname); /* each host's: a second try on one host finds it gone */
	pm_destroy(m);
	free(text);
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return status;
}
