/* handlers.c - handlers loaded into a monitor: dlopen'ed, each given its own thread and bounded queue of events, stopped when process() fails, their answers and pushes kept in the monitor's segment. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archive/archive.h"
#include "monitors/handlers.h"
#include "steering/steering.h"

enum { QUEUE = 1 << 16, BATCH = 4096, MAX_HANDLERS = 16 }; /* QUEUE a multiple of BATCH */

const char *mh_specs[16];
int mh_nspecs;

struct one {
	mh_set *set;
	int k; /* the load's number, 1.. */
	char spec[240];
	es_hlib *hl;
	bool scope;      /* a scope's (mh_adopt): fed by the scope, only asked here */
	uint64_t pushes; /* a scope's: the kept pushes written out */
	bool said_stop;
	char last[3824]; /* its latest answer, said at the end */
	bool have_last;
	pthread_t th;
	bool started;
	/* the queue: the feeder writes at head, the handler's thread reads at tail */
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct es_handler_event *q;
	uint64_t head, tail, dropped, dropped_said;
	bool stop;
	_Atomic bool running;
	double said_at;
	ps_elem *answer, *push;
};

struct mh_set {
	const char *prog;
	es_scope *own; /* mh_follow's */
	struct es_trace *ev;
	char job[PS_NAME_MAX + 1];
	char segment[PS_NAME_MAX + 16];
	ps_server *seg;
	int n;
	struct one *h[MAX_HANDLERS];
};

int mh_opt(const char *prog, const char *spec)
{
	if (mh_nspecs >= 16) {
		fprintf(stderr, "%s: --handler: at most 16\n", prog);
		return 2;
	}
	mh_specs[mh_nspecs++] = spec;
	return 0;
}

static double now_s(void)
{
	return (double)base_now_ns() / 1e9;
}

static void keep(struct one *o, ps_elem *e, uint32_t kind, const char *text)
{
	struct mh_answer a = { .kind = kind, .stamp = base_now_ns() };
	snprintf(a.spec, sizeof(a.spec), "%s", o->spec);
	snprintf(a.monitor, sizeof(a.monitor), "%s", o->set->prog);
	snprintf(a.text, sizeof(a.text), "%s", text);
	a.len = (uint32_t)strlen(a.text);
	if (e)
		ps_write(e, &a, 0, NULL);
}

static void push(void *ctx, const char *text)
{
	struct one *o = ctx;
	keep(o, o->push, 1, text ? text : "");
}

static void stopped(struct one *o, const char *goes_on)
{
	char why[200];
	es_hlib_why(o->hl, why, sizeof(why));
	fprintf(stderr, "%s: handler %s (%s) stopped: %s; %s goes on\n", o->set->prog, es_hlib_name(o->hl), o->spec, why,
		goes_on);
}

/* How long a monitor waits for a handler's answer: each second, and at its
 * end (a busy or hung one's answer is missed, never waited for longer) */
#define ANSWER_MS 250

static void answer(struct one *o)
{
	char text[3824];
	if (es_hlib_query(o->hl, "", text, sizeof(text), ANSWER_MS) >= 0) {
		keep(o, o->answer, 0, text);
		memcpy(o->last, text, sizeof(o->last));
		o->have_last = true;
	}
	if (!o->scope)
		return;
	uint64_t n = es_hlib_pushed(o->hl, text, sizeof(text));
	if (n != o->pushes) {
		keep(o, o->push, 1, text);
		o->pushes = n;
	}
	int rc = es_hlib_stopped(o->hl);
	if (rc && !o->said_stop) {
		stopped(o, "the scope");
		o->said_stop = true;
	}
}

/* What run() gives the handler's process of k events at q: how many it
 * took (its socket full: the rest stay queued, and this thread waits for
 * room a moment; at the end they are counted as not given, said) */
static size_t give_some(struct one *o, const struct es_handler_event *q, size_t k, bool ending)
{
	if (!o->running)
		return k;
	size_t lost = 0;
	int rc = es_hlib_process(o->hl, q, k, &lost);
	if (rc < 0) {
		o->running = false;
		char who[40];
		snprintf(who, sizeof(who), "the %s", o->set->prog);
		stopped(o, who);
		return k;
	}
	if (lost && ending) { /* the monitor ends: what its process cannot take now, it never will */
		pthread_mutex_lock(&o->lock);
		o->dropped += lost;
		pthread_mutex_unlock(&o->lock);
		return k;
	}
	if (lost)
		es_hlib_wait_room(o->hl, 20);
	return k - lost;
}

/* The handler's thread: batches from the queue to its process, its answer
 * each second, until stopped and the queue is drained. */
static void *run(void *arg)
{
	struct one *o = arg;
	double next = now_s() + 1;
	for (;;) {
		pthread_mutex_lock(&o->lock);
		while (o->head == o->tail && !o->stop && now_s() < next) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000)
				ts.tv_sec++, ts.tv_nsec -= 1000000000;
			pthread_cond_timedwait(&o->more, &o->lock, &ts);
		}
		/* processed where they lie: the feeder writes only past head and
		 * never over what tail has not passed */
		uint64_t from = o->tail;
		size_t k = (size_t)(o->head - from), at = (size_t)(from % QUEUE);
		k = k < BATCH ? k : BATCH;
		k = k < QUEUE - at ? k : QUEUE - at;
		bool ending = o->stop;
		pthread_mutex_unlock(&o->lock);
		size_t took = k ? give_some(o, &o->q[at], k, ending) : 0;
		pthread_mutex_lock(&o->lock);
		o->tail = from + took;
		bool last = ending && o->tail == o->head;
		pthread_mutex_unlock(&o->lock);
		if (now_s() >= next || last) {
			answer(o);
			next = now_s() + 1;
		}
		if (last)
			break;
	}
	return NULL;
}

static int dead_one(const char *segment, void *arg)
{
	const char *prefix = arg;
	struct ps_shm_info info;
	uid_t uid;
	if (!strncmp(segment, prefix, strlen(prefix)) && !ps_shm_owner(segment, &uid) && uid == geteuid() &&
	    !ps_shm_info(segment, &info) && info.state != PS_SHM_LIVE)
		ps_shm_unlink(segment);
	return 0;
}

static int open_segment(mh_set *m, char *err, size_t len)
{
	if (m->seg)
		return 0;
	char prefix[PS_NAME_MAX + 1], why[300];
	snprintf(prefix, sizeof(prefix), MH_SEGMENT_PREFIX, m->job);
	size_t n = strlen(prefix);
	prefix[n] = '-', prefix[n + 1] = 0;
	ps_shm_list(dead_one, prefix);
	prefix[n] = 0;
	/* a name no other user can take first (their squatting the next pids'
	 * names once kept every monitor with a handler out); removed by psadm
	 * clean if the monitor dies */
	struct ps_shm_attr a = { .size = 2u << 20, .max_elems = 4 * MAX_HANDLERS, .keep = PS_KEEP_NEVER };
	int rc = ps_server_create_private(prefix, &a, &m->seg, m->segment, why, sizeof(why));
	if (rc)
		snprintf(err, len, "no segment for its answers: %s", why);
	return rc;
}

static int elems(mh_set *m, struct one *o)
{
	char name[PS_NAME_MAX + 1];
	struct ps_elem_attr a = { .tuple_size = sizeof(struct mh_answer), .threshold = 2, .mode = PS_DISCARD };
	snprintf(name, sizeof(name), "a.%.30s.%d", es_hlib_name(o->hl), o->k);
	int rc = ps_elem_create(m->seg, name, &a, &o->answer);
	snprintf(name, sizeof(name), "p.%.30s.%d", es_hlib_name(o->hl), o->k);
	if (!rc)
		rc = ps_elem_create(m->seg, name, &a, &o->push);
	return rc;
}

static void drop(struct one *o)
{
	es_hlib_close(o->hl); /* a scope's: its reference only */
	ps_elem_close(o->answer);
	ps_elem_close(o->push);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->more);
	free(o->q);
	free(o);
}

/* One more handler in m: loaded (spec) or a scope's (hl), its answers'
 * elements made and its thread started; 0 or why in err */
static int add(mh_set *m, const char *spec, es_hlib *hl, char *err, size_t len)
{
	if (m->n >= MAX_HANDLERS) {
		snprintf(err, len, "--handler: at most %d", MAX_HANDLERS);
		return -E2BIG;
	}
	struct one *o = calloc(1, sizeof(*o));
	if (!o || (!hl && !(o->q = malloc(QUEUE * sizeof(*o->q))))) {
		free(o);
		snprintf(err, len, "--handler %s: no memory for its queue", spec);
		return -ENOMEM;
	}
	o->set = m;
	o->k = m->n + 1;
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->more, NULL);
	snprintf(o->spec, sizeof(o->spec), "%s", spec);
	o->scope = hl != NULL;
	int rc = hl ? es_hlib_ref(o->hl = hl) : es_hlib_open(spec, m->prog, m->job, push, o, &o->hl, err, len);
	char why[400];
	if (!rc && (rc = open_segment(m, why, sizeof(why)) ? -EIO : 0))
		snprintf(err, len, "%s: %s", spec, why);
	if (!rc && elems(m, o)) {
		snprintf(err, len, "%s: no room for its answers", spec);
		rc = -ENOSPC;
	}
	o->running = !rc && !hl;
	if (!rc && pthread_create(&o->th, NULL, run, o)) {
		snprintf(err, len, "%s: no thread for it", spec);
		rc = -EAGAIN;
	}
	if (rc) {
		drop(o);
		return rc;
	}
	o->started = true;
	m->h[m->n++] = o;
	return 0;
}

int mh_load(mh_set *m, const char *spec, char *err, size_t len)
{
	return add(m, spec, NULL, err, len);
}

int mh_adopt(mh_set **mp, const char *prog, const char *job, es_scope *s, char *err, size_t len)
{
	for (int i = 0; i < es_scope_handlers(s); i++) {
		es_hlib *hl = es_scope_handler(s, i, NULL);
		if (!hl)
			continue; /* mon_attach refused the scope */
		if (!*mp && !(*mp = calloc(1, sizeof(**mp))))
			return -ENOMEM;
		(*mp)->prog = prog;
		snprintf((*mp)->job, sizeof((*mp)->job), "%s", job);
		int rc = add(*mp, es_hlib_spec(hl), hl, err, len);
		if (rc)
			return rc;
	}
	return 0;
}

int mh_start(const char *prog, const char *job, mh_set **out, char *err, size_t len)
{
	*out = NULL;
	if (!mh_nspecs)
		return 0;
	mh_set *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->prog = prog;
	snprintf(m->job, sizeof(m->job), "%s", job);
	for (int i = 0; i < mh_nspecs; i++) {
		int rc = mh_load(m, mh_specs[i], err, len);
		if (rc) {
			mh_stop(m, stderr);
			return rc;
		}
	}
	*out = m;
	return 0;
}

void mh_give(mh_set *m, const struct es_handler_event *ev, size_t n)
{
	if (!m)
		return;
	double now = now_s();
	for (int k = 0; k < m->n; k++) {
		struct one *o = m->h[k];
		if (!o->running || o->scope)
			continue;
		pthread_mutex_lock(&o->lock);
		size_t room = QUEUE - (size_t)(o->head - o->tail), take = n < room ? n : room;
		for (size_t i = 0; i < take; i++)
			o->q[o->head++ % QUEUE] = ev[i];
		o->dropped += n - take;
		uint64_t lost = o->dropped - o->dropped_said;
		pthread_cond_signal(&o->more);
		pthread_mutex_unlock(&o->lock);
		if (lost && now >= o->said_at + 1) {
			fprintf(stderr, "%s: handler %s (%s) falls behind: %llu events not given to it since it was last "
				"said (the application is not slowed)\n", m->prog, es_hlib_name(o->hl), o->spec,
				(unsigned long long)lost);
			o->dropped_said += lost;
			o->said_at = now;
		}
	}
}

void mh_idle(mh_set *m)
{
	for (int k = 0; m && k < m->n; k++)
		for (;;) {
			pthread_mutex_lock(&m->h[k]->lock);
			bool empty = m->h[k]->head == m->h[k]->tail;
			pthread_mutex_unlock(&m->h[k]->lock);
			if (empty || !m->h[k]->running)
				break;
			sched_yield();
		}
}

uint64_t mh_settle(mh_set *m, int timeout_ms)
{
	mh_idle(m);
	uint64_t lost = 0;
	double until = now_s() + timeout_ms / 1e3;
	for (int k = 0; m && k < m->n; k++) {
		struct one *o = m->h[k];
		char text[3824];
		uint64_t done = 0;
		while (!o->scope && es_hlib_given(o->hl, &done) > done && !es_hlib_stopped(o->hl) && now_s() < until)
			es_hlib_query(o->hl, "", text, sizeof(text), 100); /* its answer says what it processed */
		pthread_mutex_lock(&o->lock);
		lost += o->dropped;
		pthread_mutex_unlock(&o->lock);
	}
	return lost;
}

void mh_feed(mh_set *m, const es_scope *s, const struct es_trace *ev, int n)
{
	if (!m)
		return;
	struct es_handler_event chunk[256];
	for (int i = 0; i < n; i += 256) {
		int k = n - i < 256 ? n - i : 256;
		for (int j = 0; j < k; j++)
			es_hlib_event(s, &ev[i + j], es_scope_consumed_leaf(s, (size_t)(i + j)), &chunk[j]);
		mh_give(m, chunk, (size_t)k);
	}
}

int mh_follow(mh_set *m, const struct es_scope_spec *spec, double wait, char *err, size_t len)
{
	struct es_scope_spec sp = *spec;
	sp.reduce = ES_REDUCE_NONE;
	sp.by_leaf = false;
	sp.nhandlers = 0; /* the monitor's scope has them: not loaded twice */
	if (!(m->ev = malloc(BATCH * 16 * sizeof(*m->ev))))
		return -ENOMEM;
	return mon_attach(m->prog, &sp, wait, &m->own, err, len);
}

void mh_pump(mh_set *m)
{
	if (!m || !m->own)
		return;
	es_scope_refresh(m->own);
	int n;
	do {
		uint64_t lost;
		n = es_scope_consume(m->own, m->ev, BATCH * 16, &lost);
		if (n > 0)
			mh_feed(m, m->own, m->ev, n);
	} while (n == BATCH * 16 && !mon_stop);
}

/* What a monitor says of a handler at its end: its last answer, escaped
 * (a handler's bytes are anyone's: a newline or a terminal's escape in
 * them is shown as such), what it lost and what it never processed */
static void say_last(const mh_set *m, struct one *o, FILE *says)
{
	char text[4 * 3824 + 1], why[200];
	if (o->have_last) {
		st_text(o->last, text, sizeof(text));
		fprintf(says, "%s: %shandler %s (%s)%s: %s\n", m->prog, o->scope ? "the scope's " : "", es_hlib_name(o->hl),
			o->spec, es_hlib_stopped(o->hl) ? " (stopped)" : "", text);
	} else {
		es_hlib_why(o->hl, why, sizeof(why));
		fprintf(says, "%s: %shandler %s (%s): no last answer (%s)\n", m->prog, o->scope ? "the scope's " : "",
			es_hlib_name(o->hl), o->spec, es_hlib_stopped(o->hl) ? why : "busy or hung: not waited for");
	}
	if (o->dropped)
		fprintf(says, "%s: handler %s (%s): %llu events not given to it (it fell behind)\n", m->prog,
			es_hlib_name(o->hl), o->spec, (unsigned long long)o->dropped);
	uint64_t done, given = es_hlib_given(o->hl, &done);
	if (!o->scope && done < given && !es_hlib_stopped(o->hl)) /* the queue it had left */
		fprintf(says, "%s: handler %s (%s): %llu events given to it, %llu of them processed by its last "
			"answer: the rest were not when the monitor ended\n", m->prog, es_hlib_name(o->hl), o->spec,
			(unsigned long long)given, (unsigned long long)done);
}

void mh_stop(mh_set *m, FILE *says)
{
	if (!m)
		return;
	mh_pump(m);
	if (m->own)
		es_scope_destroy(m->own);
	free(m->ev);
	/* every thread told at once: their queues go to their processes
	 * without waiting, and their last answers are waited for together,
	 * ANSWER_MS at most however many hang */
	for (int k = 0; k < m->n; k++) {
		struct one *o = m->h[k];
		pthread_mutex_lock(&o->lock);
		o->stop = true;
		pthread_cond_signal(&o->more);
		pthread_mutex_unlock(&o->lock);
	}
	for (int k = 0; k < m->n; k++)
		pthread_join(m->h[k]->th, NULL);
	for (int k = 0; k < m->n; k++) {
		say_last(m, m->h[k], says);
		drop(m->h[k]);
	}
	if (m->seg) {
		ps_server_destroy(m->seg);
		ps_shm_unlink(m->segment);
	}
	free(m);
}

/* --- reading what monitors keep (esctl JOB query NAME) -------------------------------------- */

struct finding {
	const char *job, *name;
	FILE *out;
	int found;
};

static void say_record(FILE *out, const struct mh_answer *a, const char *what)
{
	char raw[sizeof(a->text)], text[4 * sizeof(a->text) + 1];
	snprintf(raw, sizeof(raw), "%.*s", (int)(a->len < sizeof(a->text) ? a->len : sizeof(a->text) - 1), a->text);
	st_text(raw, text, sizeof(text)); /* a handler's bytes: no line of their own, no terminal's order */
	double ago = (double)(base_now_ns() - a->stamp) / 1e9;
	fprintf(out, "  %s %.1f s ago: %s\n", what, ago > 0 ? ago : 0, text);
}

static void json_record(FILE *out, const char *key, const struct mh_answer *a)
{
	char text[sizeof(a->text)];
	snprintf(text, sizeof(text), "%.*s", (int)(a->len < sizeof(a->text) ? a->len : sizeof(a->text) - 1), a->text);
	fprintf(out, ",\"%s\":", key);
	ar_json_string(out, text);
}

/* One handler's latest answer and push, as the page shows them */
static void json_one(struct finding *f, ps_server *srv, const char *name, const char *pid)
{
	ps_elem *a, *p = NULL;
	struct mh_answer rec;
	if (ps_elem_open(srv, name, sizeof(rec), &a))
		return;
	char pname[PS_NAME_MAX + 1];
	snprintf(pname, sizeof(pname), "p%s", name + 1);
	ps_elem_open(srv, pname, sizeof(rec), &p);
	if (ps_read_latest(a, &rec, NULL) == 0) {
		rec.spec[sizeof(rec.spec) - 1] = rec.monitor[sizeof(rec.monitor) - 1] = 0;
		fprintf(f->out, "%s{\"monitor\":", f->found ? "," : "");
		ar_json_string(f->out, rec.monitor);
		fprintf(f->out, ",\"pid\":%d,\"name\":", atoi(pid));
		char hname[PS_NAME_MAX + 1];
		snprintf(hname, sizeof(hname), "%s", name + 2);
		*strrchr(hname, '.') = 0;
		ar_json_string(f->out, hname);
		fputs(",\"spec\":", f->out);
		ar_json_string(f->out, rec.spec);
		json_record(f->out, "answer", &rec);
		if (p && ps_read_latest(p, &rec, NULL) == 0)
			json_record(f->out, "pushed", &rec);
		fputc('}', f->out);
		f->found++;
	}
	ps_elem_close(a);
	ps_elem_close(p);
}

static int one_segment(const char *segment, void *arg)
{
	struct finding *f = arg;
	char prefix[PS_NAME_MAX + 16];
	int len = snprintf(prefix, sizeof(prefix), MH_SEGMENT_PREFIX "-", f->job);
	ps_server *srv;
	struct ps_shm_info info;
	/* a live monitor's only (a killed one's answers are no one's now),
	 * and our own (ps_server_open_shm refuses another user's) */
	if (strncmp(segment, prefix, (size_t)len) || ps_shm_info(segment, &info) || info.state != PS_SHM_LIVE ||
	    ps_server_open_shm(segment, PS_RDONLY | PS_NOWAIT, &srv))
		return 0;
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)info.creator_pid);
	for (int i = 0; i < ps_server_count(srv); i++) {
		char name[PS_NAME_MAX + 1];
		if (!f->name) { /* every one, as JSON */
			if (!ps_server_elem_name(srv, i, name) && !strncmp(name, "a.", 2) && strrchr(name, '.') > name + 1)
				json_one(f, srv, name, pid);
			continue;
		}
		size_t n = strlen(f->name);
		if (ps_server_elem_name(srv, i, name) || strncmp(name, "a.", 2) || strncmp(name + 2, f->name, n) ||
		    name[2 + n] != '.')
			continue;
		ps_elem *a, *p = NULL;
		struct mh_answer rec;
		if (ps_elem_open(srv, name, sizeof(rec), &a))
			continue;
		name[0] = 'p';
		ps_elem_open(srv, name, sizeof(rec), &p);
		bool have = ps_read_latest(a, &rec, NULL) == 0;
		rec.spec[sizeof(rec.spec) - 1] = rec.monitor[sizeof(rec.monitor) - 1] = 0;
		char mon[4 * sizeof(rec.monitor) + 1], spec[4 * sizeof(rec.spec) + 1];
		st_text(have ? rec.monitor : "a monitor", mon, sizeof(mon));
		st_text(have ? rec.spec : "no answer yet", spec, sizeof(spec));
		fprintf(f->out, "%s pid %s: %s (%s)\n", mon, pid, f->name, spec);
		if (have)
			say_record(f->out, &rec, "answered");
		if (p && ps_read_latest(p, &rec, NULL) == 0)
			say_record(f->out, &rec, "pushed");
		ps_elem_close(a);
		ps_elem_close(p);
		f->found++;
	}
	ps_server_destroy(srv);
	return 0;
}

int mh_query(const char *job, const char *name, FILE *out)
{
	struct finding f = { job, name, out, 0 };
	ps_shm_list(one_segment, &f);
	return f.found;
}

void mh_json(const char *job, FILE *out)
{
	struct finding f = { job, NULL, out, 0 };
	fputs(",\"handlers\":[", out);
	ps_shm_list(one_segment, &f);
	fputc(']', out);
}
