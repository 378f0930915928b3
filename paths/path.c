/* path.c - stages and paths, and the built-in wrappers: element, pass, remote, handoff, fork. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- stages ---------------------------------------------------------------- */

static paths_stage *stage_new(const struct paths_wrapper_type *t)
{
	paths_stage *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (t->state_size && !(s->state = calloc(1, t->state_size))) {
		free(s);
		return NULL;
	}
	s->type = t;
	s->refs = 1;
	return s;
}

void paths_stage_retain(paths_stage *s)
{
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void paths_stage_release(paths_stage *s)
{
	while (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		paths_stage *next = s->next;
		if (s->type->fini)
			s->type->fini(s);
		for (int i = 0; i < s->nbranches; i++)
			paths_stage_release(s->branches[i]);
		free(s->branches);
		free(s->state);
		free(s);
		s = next; /* iterative: long chains need no deep recursion */
	}
}

int paths_stage_create(const char *type, const struct paths_params *params,
		       paths_stage *next, paths_stage **out)
{
	const struct paths_wrapper_type *t = paths_lookup(type);
	if (!t) {
		if (params)
			paths_params_fail(params, NULL, "unknown wrapper type '%s'",
					  type ? type : "(null)");
		return PS_ENOENT;
	}
	if (!out || !next || t == &paths__element_type || t == &paths__fork_type)
		return PS_EINVAL; /* those two have constructors of their own */
	paths_stage *s = stage_new(t);
	if (!s)
		return PS_ENOMEM;
	s->next = next;
	if (t->init) {
		int rc = t->init(s, params);
		if (rc) {
			free(s->state);
			free(s);
			return rc;
		}
	}
	paths_stage_retain(next);
	*out = s;
	return 0;
}

/* --- element: the terminal stage -------------------------------------------- */

/* The operation on an element: where every path ends. */
static int on_element(ps_elem *e, struct paths_op *op)
{
	if (op->size != ps_elem_tuple_size(e))
		return PS_ESIZE; /* the caller's buffer is not one tuple of e */
	switch (op->code) {
	case PATHS_WRITE:
		return ps_write(e, op->buf, op->timeout_ms, &op->idx);
	case PATHS_READ:
		return ps_read(e, op->idx, op->buf, op->timeout_ms, &op->oldest);
	case PATHS_READ_LATEST:
		return ps_read_latest(e, op->buf, &op->idx);
	case PATHS_TAKE:
		return ps_take(e, op->buf, op->timeout_ms, &op->idx);
	}
	return PS_EINVAL;
}

static int element_op(paths_stage *self, struct paths_op *op)
{
	return on_element(*(ps_elem **)self->state, op);
}

const struct paths_wrapper_type paths__element_type = {
	.name = "element", .state_size = sizeof(ps_elem *), .op = element_op,
};

int paths_stage_element(ps_elem *e, paths_stage **out)
{
	if (!e || !out)
		return PS_EINVAL;
	paths_stage *s = stage_new(&paths__element_type);
	if (!s)
		return PS_ENOMEM;
	*(ps_elem **)s->state = e;
	*out = s;
	return 0;
}

/* --- pass: forwards, and nothing else (the cost of a stage) ------------------ */

static int pass_init(paths_stage *self, const struct paths_params *p)
{
	(void)self;
	static const char *const known[] = { NULL };
	return paths_params_only(p, known);
}

static int pass_after(paths_stage *self, struct paths_op *op, int rc)
{
	(void)self;
	(void)op;
	return rc;
}

int paths_after_op(paths_stage *self, struct paths_op *op)
{
	return self->type->after(self, op, paths_forward(self, op));
}

static int pass_op(paths_stage *self, struct paths_op *op)
{
	return paths_forward(self, op);
}

const struct paths_wrapper_type paths__pass_type = {
	.name = "pass", .init = pass_init, .op = pass_op, .after = pass_after,
};

/* --- remote: the path ends at an element on a tuple server elsewhere ----------- */

/*
 * at = HOST:PORT/SEGMENT (and element = NAME, by default the path's own
 * element): operations go there instead of on to the next stage.  Jobs need
 * no such stage: an element the pathmap places on another host is opened
 * through that host's server and the path's element stage reaches it.  This
 * one points a single path anywhere, by hand.  It connects on its first
 * operation, so a pathmap that names it loads (and is checked) offline.
 */
struct remote {
	pthread_mutex_t lock;
	char at[256], element[PS_NAME_MAX + 1], secret[256];
	ps_server *srv;
	ps_elem *_Atomic e;
};

static int remote_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { "at", "element", "secret_file", NULL };
	struct remote *r = self->state;
	const char *at, *el, *sf;
	char host[256], seg[PS_NAME_MAX + 1];
	int port, rc = paths_params_only(p, known);
	if (rc)
		return rc;
	if (paths_param_str(p, "at", NULL, &at) || ps_locator_parse(at, host, sizeof(host), &port, seg) ||
	    !seg[0] || strlen(at) >= sizeof(r->at))
		return paths_params_fail(p, "at", "at: expected HOST:PORT/SEGMENT, got '%s'",
					 at ? at : "");
	const char *arrow = p->path ? strstr(p->path, "->") : NULL;
	paths_param_str(p, "element", arrow ? arrow + 2 : NULL, &el);
	if (!el || !*el || strlen(el) > PS_NAME_MAX)
		return paths_params_fail(p, "element", "element: expected the name of an element");
	paths_param_str(p, "secret_file", "", &sf);
	if (strlen(sf) >= sizeof(r->secret))
		return paths_params_fail(p, "secret_file", "secret_file: path too long");
	snprintf(r->at, sizeof(r->at), "%s", at);
	snprintf(r->element, sizeof(r->element), "%s", el);
	snprintf(r->secret, sizeof(r->secret), "%s", sf);
	pthread_mutex_init(&r->lock, NULL);
	return 0;
}

static int remote_op(paths_stage *self, struct paths_op *op)
{
	struct remote *r = self->state;
	ps_elem *e = atomic_load_explicit(&r->e, memory_order_acquire);
	if (__builtin_expect(!e, 0)) {
		int rc = 0;
		pthread_mutex_lock(&r->lock);
		if (!r->srv) {
			struct ps_remote_attr ra = { .secret_file = r->secret[0] ? r->secret : NULL };
			rc = ps_server_open_at(r->at, PS_RDWR, &ra, &r->srv);
		}
		if (!rc && !(e = atomic_load_explicit(&r->e, memory_order_relaxed)) &&
		    !(rc = ps_elem_open(r->srv, r->element, op->size, &e)))
			atomic_store_explicit(&r->e, e, memory_order_release);
		pthread_mutex_unlock(&r->lock);
		if (rc)
			return rc;
	}
	return on_element(e, op);
}

static void remote_fini(paths_stage *self)
{
	struct remote *r = self->state;
	if (!r->at[0])
		return; /* init failed before it took anything */
	ps_elem_close(r->e);
	ps_server_destroy(r->srv);
	pthread_mutex_destroy(&r->lock);
}

const struct paths_wrapper_type paths__remote_type = {
	.name = "remote", .state_size = sizeof(struct remote), .init = remote_init,
	.op = remote_op, .fini = remote_fini,
};

/* --- handoff: the rest of the path runs in a thread of its own ---------------- */

struct handoff {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct paths__req *head, *tail;
	bool stop, started;
};

static void *handoff_main(void *arg)
{
	paths_stage *self = arg;
	struct handoff *h = self->state;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->head && !h->stop)
			pthread_cond_wait(&h->work, &h->lock);
		if (!h->head)
			break;
		struct paths__req *r = h->head;
		h->head = r->qnext;
		if (!h->head)
			h->tail = NULL;
		pthread_mutex_unlock(&h->lock);
		int rc = paths_forward(self, r->op);
		pthread_mutex_lock(&h->lock);
		r->rc = rc;
		r->done = true;
		pthread_cond_broadcast(&h->done);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static int handoff_init(paths_stage *self, const struct paths_params *p)
{
	static const char *const known[] = { NULL };
	int rc = paths_params_only(p, known);
	if (rc)
		return rc;
	struct handoff *h = self->state;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->work, NULL);
	pthread_cond_init(&h->done, NULL);
	if (pthread_create(&h->thread, NULL, handoff_main, self)) {
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->work);
		pthread_cond_destroy(&h->done);
		return PS_ENOMEM;
	}
	h->started = true;
	return 0;
}

static void handoff_fini(paths_stage *self)
{
	struct handoff *h = self->state;
	if (!h->started)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = true;
	pthread_cond_signal(&h->work);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->work);
	pthread_cond_destroy(&h->done);
}

void paths__submit(paths_stage *s, struct paths_op *op, struct paths__req *req)
{
	req->op = op;
	req->stage = s;
	req->done = false;
	req->qnext = NULL;
	if (s->type != &paths__handoff_type) {
		req->rc = s->type->op(s, op);
		req->done = true;
		return;
	}
	struct handoff *h = s->state;
	pthread_mutex_lock(&h->lock);
	if (h->tail)
		h->tail->qnext = req;
	else
		h->head = req;
	h->tail = req;
	pthread_cond_signal(&h->work);
	pthread_mutex_unlock(&h->lock);
}

int paths__wait(struct paths__req *req)
{
	if (req->stage->type != &paths__handoff_type)
		return req->rc;
	struct handoff *h = req->stage->state;
	pthread_mutex_lock(&h->lock);
	while (!req->done)
		pthread_cond_wait(&h->done, &h->lock);
	pthread_mutex_unlock(&h->lock);
	return req->rc;
}

static int handoff_op(paths_stage *self, struct paths_op *op)
{
	struct paths__req req;
	paths__submit(self, op, &req);
	return paths__wait(&req);
}

const struct paths_wrapper_type paths__handoff_type = {
	.name = "handoff", .state_size = sizeof(struct handoff),
	.init = handoff_init, .op = handoff_op, .fini = handoff_fini,
};

/* --- fork: one operation, every branch -------------------------------------- */

/*
 * A sweep: the newest tuples of every element under a fork whose branches
 * are forks, or chains of wrappers with an after (paths.h) ending in an
 * element.  Walking such a tree costs a call per stage per element and a
 * cache miss after another; the sweep reads the elements in one pass with
 * their lines fetched ahead (ps_read_latest_since), runs the afters only
 * where a tuple is new, and keeps its answers for the next read.
 */
struct sweep {
	int n;
	size_t size;            /* bytes of a whole read */
	ps_elem **e;
	uint32_t *tsize;        /* per element: its tuple size */
	int *chain;             /* element i's afters: stages[chain[i]..chain[i+1]), outermost first */
	paths_stage **stages;
	uint64_t *idx;          /* per element: the index of what out holds, or PS_NONE */
	int *status;
	unsigned char *out;     /* the answers after the afters */
	uint64_t epoch;
	int cap, scap;
};

struct fork {
	size_t *shares;          /* NULL: equal shares */
	struct sweep *sweep;
	_Atomic int swept;       /* 0: not tried yet; 1: sweep; -1: the tree has to be walked */
	_Atomic int busy;        /* the sweep is someone's: others walk the tree */
};

static _Atomic uint64_t epoch = 1;

void paths_stage_changed(paths_stage *s)
{
	(void)s;
	atomic_fetch_add_explicit(&epoch, 1, memory_order_release);
}

static void sweep_free(struct sweep *w)
{
	if (!w)
		return;
	free(w->e);
	free(w->tsize);
	free(w->chain);
	free(w->stages);
	free(w->idx);
	free(w->status);
	free(w->out);
	free(w);
}

/* Adds what lies under s, which reads `share` bytes, to the sweep: 0, 1 if
 * the tree under s cannot be swept, or PS_ENOMEM. */
static int sweep_add(struct sweep *w, paths_stage *s, size_t share)
{
	if (s->type == &paths__fork_type) {
		const struct fork *f = s->state;
		size_t total = 0;
		for (int i = 0; f->shares && i < s->nbranches; i++)
			total += f->shares[i];
		if (f->shares ? total != share : share % (size_t)s->nbranches)
			return 1; /* walking the tree says PS_ESIZE */
		for (int i = 0; i < s->nbranches; i++) {
			int rc = sweep_add(w, s->branches[i],
					   f->shares ? f->shares[i] : share / (size_t)s->nbranches);
			if (rc)
				return rc;
		}
		return 0;
	}
	int first = w->n ? w->chain[w->n] : 0, k = first;
	for (; s->type->after && s->next && !s->nbranches; s = s->next) {
		if (k == w->scap) {
			int c = w->scap ? 2 * w->scap : 64;
			paths_stage **s2 = realloc(w->stages, sizeof(*s2) * (size_t)c);
			if (!s2)
				return PS_ENOMEM;
			w->stages = s2;
			w->scap = c;
		}
		w->stages[k++] = s;
	}
	if (s->type != &paths__element_type)
		return 1;
	ps_elem *e = *(ps_elem **)s->state;
	if (ps_elem_tuple_size(e) != share)
		return 1;
	if (w->n + 1 > w->cap) {
		int c = w->cap ? 2 * w->cap : 64;
		ps_elem **e2 = realloc(w->e, sizeof(*e2) * (size_t)c);
		if (e2)
			w->e = e2;
		uint32_t *t2 = e2 ? realloc(w->tsize, sizeof(*t2) * (size_t)c) : NULL;
		if (t2)
			w->tsize = t2;
		int *c2 = t2 ? realloc(w->chain, sizeof(*c2) * ((size_t)c + 1)) : NULL;
		if (!c2)
			return PS_ENOMEM;
		w->chain = c2;
		w->cap = c;
	}
	w->chain[w->n] = first;
	w->chain[w->n + 1] = k;
	w->e[w->n] = e;
	w->tsize[w->n] = (uint32_t)share;
	w->n++;
	w->size += share;
	return 0;
}

/* The sweep of the tree under fork s, or NULL if it has none. */
static struct sweep *sweep_make(paths_stage *s, size_t size)
{
	struct sweep *w = calloc(1, sizeof(*w));
	if (!w || sweep_add(w, s, size) || !w->n ||
	    !(w->idx = malloc(sizeof(*w->idx) * (size_t)w->n)) ||
	    !(w->status = malloc(sizeof(*w->status) * (size_t)w->n)) ||
	    !(w->out = calloc(1, w->size))) {
		sweep_free(w);
		return NULL;
	}
	w->epoch = 0; /* differs from any epoch: the first read reads all */
	return w;
}

static int sweep_run(struct sweep *w, struct paths_op *op)
{
	uint64_t now = atomic_load_explicit(&epoch, memory_order_acquire);
	if (now != w->epoch) {
		for (int i = 0; i < w->n; i++)
			w->idx[i] = PS_NONE;
		w->epoch = now;
	}
	int rc = ps_read_latest_since(w->e, w->n, w->out, w->idx, w->status);
	if (rc < 0)
		return rc;
	rc = 0;
	uint64_t last = op->idx;
	unsigned char *o = w->out;
	for (int i = 0; i < w->n; o += w->tsize[i], i++) {
		if (w->status[i] == PS_SAME) {
			last = w->idx[i];
			continue;
		}
		struct paths_op sub = *op;
		sub.buf = o;
		sub.size = w->tsize[i];
		int r = w->status[i];
		if (!r)
			sub.idx = w->idx[i];
		for (int j = w->chain[i + 1] - 1; j >= w->chain[i]; j--)
			r = w->stages[j]->type->after(w->stages[j], &sub, r);
		if (r) {
			w->idx[i] = PS_NONE; /* asked again next time, and fails again or not */
			if (!rc) {
				rc = r;
				op->oldest = sub.oldest;
			}
		}
		last = sub.idx;
	}
	memcpy(op->buf, w->out, w->size);
	op->idx = last;
	return rc;
}

static int fork_op(paths_stage *self, struct paths_op *op)
{
	int n = self->nbranches;
	struct fork *f = self->state;
	const size_t *shares = f->shares;
	size_t total = 0;
	for (int i = 0; shares && i < n; i++)
		total += shares[i];
	if (op->code != PATHS_WRITE && (shares ? op->size != total : op->size % (size_t)n))
		return PS_ESIZE;
	if (op->code == PATHS_READ_LATEST &&
	    atomic_load_explicit(&f->swept, memory_order_relaxed) >= 0 &&
	    !atomic_exchange_explicit(&f->busy, 1, memory_order_acquire)) {
		/* One caller at a time has the sweep (it keeps answers);
		 * another at the same time walks the tree. */
		if (!atomic_load_explicit(&f->swept, memory_order_relaxed)) {
			f->sweep = sweep_make(self, op->size);
			atomic_store_explicit(&f->swept, f->sweep ? 1 : -1, memory_order_relaxed);
		}
		int rc = 1;
		if (f->sweep && f->sweep->size == op->size)
			rc = sweep_run(f->sweep, op);
		atomic_store_explicit(&f->busy, 0, memory_order_release);
		if (rc <= 0)
			return rc;
	}
	struct paths_op sub[n];
	struct paths__req req[n];
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		sub[i] = *op;
		if (op->code != PATHS_WRITE) {
			sub[i].size = shares ? shares[i] : op->size / (size_t)n;
			sub[i].buf = (char *)op->buf + off;
			off += sub[i].size;
		}
		paths__submit(self->branches[i], &sub[i], &req[i]);
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		int r = paths__wait(&req[i]);
		if (r && !rc) {
			rc = r;
			op->oldest = sub[i].oldest;
		}
	}
	op->idx = sub[n - 1].idx;
	return rc;
}

static void fork_fini(paths_stage *self)
{
	struct fork *f = self->state;
	sweep_free(f->sweep);
	free(f->shares);
}

const struct paths_wrapper_type paths__fork_type = {
	.name = "fork", .state_size = sizeof(struct fork), .op = fork_op, .fini = fork_fini,
};

int paths_stage_fork_sized(paths_stage *const *branches, int n, const size_t *shares,
			   paths_stage **out)
{
	if (!branches || n < 1 || n > 1024 || !out)
		return PS_EINVAL;
	for (int i = 0; i < n; i++)
		if (!branches[i] || (shares && !shares[i]))
			return PS_EINVAL;
	paths_stage *s = stage_new(&paths__fork_type);
	if (!s)
		return PS_ENOMEM;
	struct fork *f = s->state;
	s->branches = malloc(sizeof(*s->branches) * (size_t)n);
	if (shares && (f->shares = malloc(sizeof(size_t) * (size_t)n)))
		memcpy(f->shares, shares, sizeof(size_t) * (size_t)n);
	if (!s->branches || (shares && !f->shares)) {
		free(s->branches);
		free(f->shares);
		free(s->state);
		free(s);
		return PS_ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		s->branches[i] = branches[i];
		paths_stage_retain(branches[i]);
	}
	s->nbranches = n;
	*out = s;
	return 0;
}

int paths_stage_fork(paths_stage *const *branches, int n, paths_stage **out)
{
	return paths_stage_fork_sized(branches, n, NULL, out);
}

/* --- paths -------------------------------------------------------------------- */

#ifdef ES_DEBUG
/* S1-S4 (internal.h) for s and every stage after it, depth-first:
 * forks' branches are few and their depth a path's length */
static void check_from(const paths_stage *s, int depth)
{
	for (; s; s = s->next, depth++) {
		BASE_INVARIANT("S4: a walk of a path ends (no cycle)", depth < 1 << 20);
		BASE_INVARIANT("S3: a stage a path leads to is held", s->refs >= 1);
		bool fork = s->type == &paths__fork_type, terminal = fork || s->type == &paths__element_type;
		BASE_INVARIANT("S1: next is NULL exactly for an element's and a fork's stage", terminal == !s->next);
		BASE_INVARIANT("S2: a fork has branches, no other stage any",
			       fork ? s->nbranches >= 1 && s->branches : s->nbranches == 0 && !s->branches);
		for (int i = 0; fork && i < s->nbranches; i++) {
			BASE_INVARIANT("S2: a fork's branches are stages", s->branches[i] != NULL);
			check_from(s->branches[i], depth + 1);
		}
	}
}
#endif

void paths__check_stage(const paths_stage *s)
{
#ifdef ES_DEBUG
	check_from(s, 0);
#else
	(void)s;
#endif
}

struct paths_path {
	paths_stage *first;
	size_t tuple_size;
	char name[64];
};

int paths_path_create(const char *name, paths_stage *first, size_t tuple_size,
		      paths_path **out)
{
	if (!first || !out || !tuple_size)
		return PS_EINVAL;
	paths_path *p = calloc(1, sizeof(*p));
	if (!p)
		return PS_ENOMEM;
	paths__check_stage(first);
	p->first = first;
	p->tuple_size = tuple_size;
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	paths_stage_retain(first);
	*out = p;
	return 0;
}

void paths_path_destroy(paths_path *p)
{
	if (!p)
		return;
	paths_stage_release(p->first);
	free(p);
}

const char *paths_path_name(const paths_path *p)
{
	return p->name;
}

paths_stage *paths_path_first(const paths_path *p)
{
	return p->first;
}

int paths_run(paths_path *p, struct paths_op *op)
{
	return p->first->type->op(p->first, op);
}

int paths_write(paths_path *p, const void *tuple, int timeout_ms, uint64_t *idx)
{
	struct paths_op op = { .code = PATHS_WRITE, .buf = (void *)tuple,
			       .size = p->tuple_size, .timeout_ms = timeout_ms };
	int rc = p->first->type->op(p->first, &op);
	if (idx)
		*idx = op.idx;
	return rc;
}

int paths_read(paths_path *p, uint64_t idx, void *out, int timeout_ms, uint64_t *oldest)
{
	struct paths_op op = { .code = PATHS_READ, .buf = out, .size = p->tuple_size,
			       .idx = idx, .timeout_ms = timeout_ms };
	int rc = p->first->type->op(p->first, &op);
	if (rc == PS_EDISCARDED && oldest)
		*oldest = op.oldest;
	return rc;
}

int paths_read_latest(paths_path *p, void *out, uint64_t *idx)
{
	struct paths_op op = { .code = PATHS_READ_LATEST, .buf = out, .size = p->tuple_size };
	int rc = p->first->type->op(p->first, &op);
	if (idx)
		*idx = op.idx;
	return rc;
}

int paths_take(paths_path *p, void *out, int timeout_ms, uint64_t *idx)
{
	struct paths_op op = { .code = PATHS_TAKE, .buf = out, .size = p->tuple_size,
			       .timeout_ms = timeout_ms };
	int rc = p->first->type->op(p->first, &op);
	if (idx)
		*idx = op.idx;
	return rc;
}
