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

static int pass_op(paths_stage *self, struct paths_op *op)
{
	return paths_forward(self, op);
}

const struct paths_wrapper_type paths__pass_type = {
	.name = "pass", .init = pass_init, .op = pass_op,
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

static int fork_op(paths_stage *self, struct paths_op *op)
{
	int n = self->nbranches;
	const size_t *shares = self->state; /* NULL: equal shares */
	size_t total = 0;
	for (int i = 0; shares && i < n; i++)
		total += shares[i];
	if (op->code != PATHS_WRITE && (shares ? op->size != total : op->size % (size_t)n))
		return PS_ESIZE;
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

const struct paths_wrapper_type paths__fork_type = {
	.name = "fork", .op = fork_op,
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
	s->branches = malloc(sizeof(*s->branches) * (size_t)n);
	if (shares && (s->state = malloc(sizeof(size_t) * (size_t)n)))
		memcpy(s->state, shares, sizeof(size_t) * (size_t)n);
	if (!s->branches || (shares && !s->state)) {
		free(s->branches);
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
