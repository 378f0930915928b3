/* steer.c - steering against MOSS's tables: a sensor's cost for 12 bytes and 10 KB, the round trip from a publication to the action applied at the next safe point (a rule in a monitor here, or through a tuple server elsewhere), a rule migrated into the application, a handler's cost per event. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "monitors/handlers.h"
#include "steering/steering.h"

static double now_ns(void)
{
	return (double)base_now_ns();
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The application: an object with x (read-only, what it publishes) and y
 * (writable, what a rule sets), and a payload of `bytes` */
struct app {
	char segment[64];
	ps_server *srv;
	st_app *a;
	st_obj *o;
	double x, y;
	double *payload;
};

static void app_up(struct app *p, const char *tag, size_t bytes)
{
	snprintf(p->segment, sizeof(p->segment), "bsteer%d.%s", (int)getpid(), tag);
	struct ps_shm_attr at = { .size = 8u << 20, .flags = PS_SHM_REPLACE_DEAD };
	size_t n = bytes > 12 ? bytes / sizeof(double) : 0;
	p->payload = calloc(n + 1, sizeof(double));
	if (ps_server_create_shm(p->segment, &at, &p->srv) || st_app_create(&p->a) || st_app_attach(p->a, p->srv) ||
	    st_obj_create(p->a, "o", "a benchmark's", &p->o) ||
	    st_obj_field(p->o, "x", ST_DOUBLE, &p->x, 1, 0, 0, 0, "published") ||
	    (bytes > 12 ? st_obj_field(p->o, "payload", ST_DOUBLE, p->payload, (uint32_t)n, 0, 0, 0, "")
			: st_obj_field(p->o, "k", ST_INT, p->payload, 1, 0, 0, 0, "")) ||
	    st_obj_field(p->o, "y", ST_DOUBLE, &p->y, 1, ST_WRITABLE, -1e18, 1e18, "set by a rule")) {
		fprintf(stderr, "steer: no object\n");
		exit(1);
	}
	st_app_sync(p->a); /* sealed */
}

static void app_down(struct app *p)
{
	st_app_destroy(p->a);
	ps_server_destroy(p->srv);
	ps_shm_unlink(p->segment);
	free(p->payload);
}

/* ns a publication of the object costs (its size: x, and 4 bytes or bytes) */
static double sensor(size_t bytes)
{
	struct app p;
	app_up(&p, bytes > 12 ? "big" : "small", bytes);
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (int i = 0; i < 200000; i++) {
			p.x = i;
			st_obj_publish(p.o);
		}
		double per = (now_ns() - t0) / 200000;
		best = per < best ? per : best;
	}
	app_down(&p);
	return best;
}

/* The monitor's rule, by hand: at each publication, y = x (one ask in
 * flight), until killed */
static void monitor(ps_server *ro, ps_server *rw)
{
	st_mirror *m;
	if (st_mirror_open(ro, rw, &m) || st_mirror_objects(m) < 1) {
		fprintf(stderr, "steer: the monitor sees no object\n");
		exit(1);
	}
	const struct st_member *ms;
	st_mirror_object(m, 0, &ms);
	uint64_t seq = UINT64_MAX;
	struct st_pub h;
	if (!st_mirror_latest(m, 0, &h))
		seq = h.seq - 1; /* the latest is judged at once */
	for (;;) {
		if (st_mirror_wait(m, 0, seq, 1000))
			continue;
		st_mirror_latest(m, 0, &h);
		seq = h.seq;
		double x = st_mirror_value(m, 0, &ms[0], 0), y = st_mirror_value(m, 0, &ms[2], 0);
		if (x == y)
			continue;
		struct st_ask k = { .kind = ST_ASK_SET, .n = 1, .obj = "o", .who = "bench" };
		snprintf(k.u.set[0].field, sizeof(k.u.set[0].field), "y");
		k.u.set[0].value = x;
		st_mirror_ask(m, &k, NULL, NULL, 0);
	}
}

/* The application's side of round trips: publish x = i, run safe points
 * until y == i; the median us over rounds */
static double round_trips(struct app *p, int rounds)
{
	double *rt = calloc((size_t)rounds, sizeof(double));
	int n = 0;
	for (int i = 1; i <= rounds + 20; i++) {
		p->x = i;
		double t0 = now_ns(), give_up = t0 + 5e9;
		st_obj_publish(p->o);
		while (p->y != i && now_ns() < give_up)
			st_app_sync(p->a);
		if (p->y != i) {
			fprintf(stderr, "steer: round %d never came back\n", i);
			break;
		}
		if (i > 20) /* the first rounds warm up */
			rt[n++] = (now_ns() - t0) / 1e3;
	}
	double med = n ? median(rt, n) : -1;
	free(rt);
	return med;
}

static double local_round_trip(void)
{
	struct app p;
	app_up(&p, "rt", 12);
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *ro, *rw;
		int rc = ps_server_open_shm(p.segment, PS_RDONLY, &ro);
		if (!rc)
			rc = ps_server_open_shm(p.segment, PS_RDWR, &rw);
		if (rc) {
			fprintf(stderr, "steer: the monitor cannot open %s: %s\n", p.segment, ps_strerror(rc));
			_exit(1);
		}
		monitor(ro, rw);
		_exit(0);
	}
	double med = round_trips(&p, 2000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	app_down(&p);
	return med;
}

/* us a safe point costs with a rule in the application that acts, beyond
 * one with nothing to do */
static double migrated(void)
{
	struct app p;
	app_up(&p, "mig", 12);
	st_mirror *m;
	struct st_ask k = { .kind = ST_ASK_RULE, .obj = "o", .who = "bench" };
	double idle = 1e30, acting = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (int i = 0; i < 100000; i++)
			st_app_sync(p.a);
		double per = (now_ns() - t0) / 100000;
		idle = per < idle ? per : idle;
	}
	snprintf(k.u.rule, sizeof(k.u.rule), "when o.x != o.y set o.y = o.x");
	if (st_mirror_open(p.srv, p.srv, &m) || st_mirror_ask(m, &k, NULL, NULL, 0) || st_app_sync(p.a) < 1) {
		fprintf(stderr, "steer: the rule was not taken\n");
		exit(1);
	}
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (int i = 0; i < 100000; i++) {
			p.x = rep * 100000 + i + 1; /* the rule acts at every safe point */
			st_app_sync(p.a);
		}
		double per = (now_ns() - t0) / 100000;
		acting = per < acting ? per : acting;
	}
	if (p.y != p.x) {
		fprintf(stderr, "steer: the migrated rule did not act\n");
		exit(1);
	}
	st_mirror_close(m);
	app_down(&p);
	printf("steer: a safe point with nothing to do %.1f ns; with a rule here that acts %.1f ns\n", idle, acting);
	return (acting - idle) / 1e3;
}

/*
 * Sixteen rules in the application, "when o.x != o.yK set o.yK = o.x":
 * the safe point's ns with none, with sixteen that never fire and with
 * sixteen that fire at every safe point (each action counted, none written
 * by itself); then the same with another thread flooding the program with
 * asks (a person's sets, as fast as it can write them), its safe points'
 * median and slowest.
 */
struct sixteen {
	struct app p;
	double y[16];
	volatile int stop;
};

static double per_sync(struct sixteen *s, int change)
{
	double best = 1e30;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (int i = 0; i < 100000; i++) {
			if (change)
				s->p.x = rep * 100000 + i + 1;
			st_app_sync(s->p.a);
		}
		double per = (now_ns() - t0) / 100000;
		best = per < best ? per : best;
	}
	return best;
}

static void *flood(void *arg)
{
	struct sixteen *s = arg;
	ps_elem *ask;
	if (ps_elem_open(s->p.srv, ST_ASK_ELEMENT, sizeof(struct st_ask), &ask))
		return NULL;
	for (uint64_t i = 0; !s->stop; i++) {
		struct st_ask k = { .id = i, .kind = ST_ASK_SET, .n = 1, .obj = "o" };
		snprintf(k.u.set[0].field, sizeof(k.u.set[0].field), "y");
		k.u.set[0].value = (double)(i % 2);
		ps_write(ask, &k, 0, NULL);
	}
	ps_elem_close(ask);
	return NULL;
}

static void rules16(double *none, double *idle, double *firing, double *flood_med, double *flood_max)
{
	struct sixteen *s = calloc(1, sizeof(*s));
	app_up(&s->p, "r16", 12);
	/* the fields the rules set: declared before the object is sealed,
	 * so a second object */
	st_obj *o2;
	char name[8];
	st_mirror *m;
	if (st_obj_create(s->p.a, "t", "sixteen targets", &o2)) {
		fprintf(stderr, "steer: no second object\n");
		exit(1);
	}
	for (int k = 0; k < 16; k++) {
		snprintf(name, sizeof(name), "y%d", k);
		st_obj_field(o2, name, ST_DOUBLE, &s->y[k], 1, ST_WRITABLE, -1e18, 1e18, "");
	}
	st_obj_field(o2, "x", ST_DOUBLE, &s->p.x, 1, 0, 0, 0, "");
	st_app_sync(s->p.a);
	*none = per_sync(s, 0);
	if (st_mirror_open(s->p.srv, s->p.srv, &m)) {
		fprintf(stderr, "steer: no mirror\n");
		exit(1);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < 16; k++) {
			struct st_ask r = { .kind = pass ? ST_ASK_UNRULE : ST_ASK_RULE, .n = (uint32_t)k + 1, .obj = "t" };
			snprintf(r.u.rule, sizeof(r.u.rule), "when t.x < -1 set t.y%d = 0", k);
			if (st_mirror_ask(m, &r, NULL, NULL, 0)) {
				fprintf(stderr, "steer: a rule was not taken\n");
				exit(1);
			}
			st_app_sync(s->p.a);
		}
		if (!pass)
			*idle = per_sync(s, 1);
	}
	for (int k = 0; k < 16; k++) {
		struct st_ask r = { .kind = ST_ASK_RULE, .obj = "t" };
		snprintf(r.u.rule, sizeof(r.u.rule), "when t.x != t.y%d set t.y%d = t.x", k, k);
		st_mirror_ask(m, &r, NULL, NULL, 0);
		st_app_sync(s->p.a);
	}
	*firing = per_sync(s, 1);
	if (s->y[15] != s->p.x) {
		fprintf(stderr, "steer: the sixteen rules did not act\n");
		exit(1);
	}
	pthread_t th;
	pthread_create(&th, NULL, flood, s);
	enum { N = 200000 };
	double *v = malloc(sizeof(double) * N), most = 0;
	for (int i = 0; i < N; i++) {
		s->p.x = i + 1e6;
		double t0 = now_ns();
		st_app_sync(s->p.a);
		v[i] = now_ns() - t0;
		most = v[i] > most ? v[i] : most;
	}
	s->stop = 1;
	pthread_join(th, NULL);
	*flood_med = median(v, N);
	*flood_max = most;
	free(v);
	st_mirror_close(m);
	app_down(&s->p);
	free(s);
}

/* ns per event a counting handler costs a monitor: fed and counted */
static double handler(const char *lib)
{
	mh_nspecs = 1;
	mh_specs[0] = lib;
	mh_set *m;
	char err[400];
	if (mh_start("steer", "bsteer", &m, err, sizeof(err))) {
		fprintf(stderr, "steer: %s\n", err);
		exit(1);
	}
	static struct es_handler_event ev[4096];
	for (int i = 0; i < 4096; i++)
		ev[i] = (struct es_handler_event){ .op = i % 3 ? "MPI_Send" : "MPI_Recv", .code = 10 + i % 3 / 2,
						   .bytes = 8, .thread_name = "t" };
	/* given, and processed by the handler's process, whole: what the two
	 * cores spend on each event end to end */
	double best = 1e30;
	uint64_t lost = 0;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now_ns();
		for (int r = 0; r < 100; r++) {
			for (int c = 0; c < 15; c++) /* 61,440: within the queue */
				mh_give(m, ev, 4096);
			lost = mh_settle(m, 10000);
		}
		double per = (now_ns() - t0) / (100.0 * 15 * 4096);
		best = per < best ? per : best;
	}
	if (lost)
		printf("steer: the counting handler fell behind: %llu events not given to it\n", (unsigned long long)lost);
	FILE *null = fopen("/dev/null", "w");
	mh_stop(m, null ? null : stderr);
	if (null)
		fclose(null);
	return best;
}

/* --- across hosts: the application serves its segment, a monitor elsewhere steers it --- */

static int serve(const char *addr, const char *secret, const char *portfile, int rounds)
{
	struct app p;
	app_up(&p, "far", 12);
	struct ps_tcp_attr ta = { .addr = addr, .secret_file = secret };
	ps_tcp *t;
	if (ps_tcp_start(&ta, &t) || ps_tcp_add(t, p.segment, p.srv)) {
		fprintf(stderr, "steer: no tuple server on %s\n", addr);
		return 1;
	}
	FILE *f = fopen(portfile, "w");
	fprintf(f, "%d %s\n", ps_tcp_port(t), p.segment);
	fclose(f);
	/* the monitor says it is there by setting y = -1 */
	double give_up = now_ns() + 60e9;
	while (p.y != -1 && now_ns() < give_up) {
		p.x = -1;
		st_obj_publish(p.o);
		for (int i = 0; i < 1000; i++)
			st_app_sync(p.a);
		usleep(1000);
	}
	double med = p.y == -1 ? round_trips(&p, rounds) : -1;
	printf("steer: roundtrip_remote_us=%.1f\n", med);
	ps_tcp_stop(t);
	app_down(&p);
	return med < 0;
}

static int far_monitor(const char *where, const char *secret)
{
	struct ps_remote_attr ra = { .secret_file = secret };
	ps_server *srv;
	int rc = ps_server_open_at(where, PS_RDWR, &ra, &srv);
	if (rc) {
		fprintf(stderr, "steer: %s: %s\n", where, ps_strerror(rc));
		return 1;
	}
	monitor(srv, srv);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], argv[3], argv[4], argc > 5 ? atoi(argv[5]) : 500);
	if (argc == 4 && !strcmp(argv[1], "monitor"))
		return far_monitor(argv[2], argv[3]);
	if (argc != 3 || strcmp(argv[1], "local")) {
		fprintf(stderr, "usage: steer local HANDLER.so | serve ADDR SECRET PORTFILE [ROUNDS] | monitor WHERE SECRET\n");
		return 2;
	}
	double s12 = sensor(12), s10k = sensor(10240);
	printf("steer: a sensor of 12 bytes %.1f ns, of 10 KB %.1f ns\n", s12, s10k);
	double rt = local_round_trip();
	printf("steer: round trip, a publication to its action applied, by a monitor's rule on this host: %.1f us\n", rt);
	double mig = migrated();
	double none, idle, firing, fmed, fmax;
	rules16(&none, &idle, &firing, &fmed, &fmax);
	printf("steer: a safe point with no rule %.1f ns, with 16 rules that never fire %.1f ns, with 16 that fire at "
	       "every safe point %.1f ns (each action counted, none written by itself)\n", none, idle, firing);
	printf("steer: ... the 16 firing while another thread floods the program with asks: median safe point %.1f ns, "
	       "slowest %.1f us\n", fmed, fmax / 1e3);
	double h = handler(argv[2]);
	printf("steer: a counting handler in a monitor: %.2f ns an event\n", h);
	printf("steer-local: sensor_ns_12B=%.1f sensor_ns_10KB=%.1f roundtrip_us=%.1f migrated_us=%.3f handler_ns_per_event=%.2f "
	       "rules16_firing_ns=%.1f rules16_idle_ns=%.1f flood_slowest_us=%.1f\n", s12, s10k, rt, mig, h, firing, idle,
	       fmax / 1e3);
	return 0;
}
