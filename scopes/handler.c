/* handler.c - a handler library (handlers/es_handler.h) loaded, created, given events and asked, for a monitor or a scope node alike. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * Invariants:
 *  - process() and query() are called under lock, so a handler is never
 *    entered from two threads at once, whoever feeds it and whoever asks.
 *  - Once process() returned below 0 (stopped != 0) it is given nothing
 *    more; query() still answers with what it had.
 *  - A push from a handler opened without a push function is kept whole
 *    (pushed[], numbered by npushed) until the next replaces it.
 */
struct es_hlib {
	void *dl;
	const struct es_handler *h;
	void *self;
	char spec[240];
	_Atomic int refs; /* its holders: a monitor's set and a scope may share one */
	pthread_mutex_t lock;
	int stopped;
	void (*push)(void *ctx, const char *text);
	void *ctx;
	uint64_t npushed;
	char pushed[ES_HLIB_TEXT];
};

static void keep_push(void *ctx, const char *text)
{
	es_hlib *h = ctx;
	if (h->push) {
		h->push(h->ctx, text);
		return;
	}
	snprintf(h->pushed, sizeof(h->pushed), "%s", text ? text : "");
	h->npushed++; /* under lock: pushes come from process() */
}

/* The library's entry points, checked: 0, or why in err */
static int entry(es_hlib *h, const char *lib, char *err, size_t len)
{
	/* only its user's or root's code (ps_open_trusted): every directory to
	 * it is theirs and nobody else's to write, so that the file loaded by
	 * its path is the file checked (a descriptor's /proc name would not
	 * do: the loader knows libraries by name, and a number closed and used
	 * again would give another library's handle) */
	char why[600], real[PATH_MAX];
	int fd = ps_open_trusted(lib, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, len, "%s%s", why,
			 fd == -EACCES ? ": not loaded (a monitor runs only its own user's or root's code)" : "");
		return fd;
	}
	close(fd);
	if (!realpath(lib, real)) {
		snprintf(err, len, "%s: %s", lib, strerror(errno));
		return -errno;
	}
	if (!(h->dl = dlopen(real, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, len, "%s: %s", lib, dlerror());
		return -ENOENT;
	}
	const struct es_handler *(*fn)(void) = (const struct es_handler *(*)(void))dlsym(h->dl, "es_handler_entry");
	h->h = fn ? fn() : NULL;
	if (!h->h) {
		snprintf(err, len, "%s: no es_handler_entry(): not a handler (es_handler.h)", lib);
		return -EINVAL;
	}
	if (h->h->abi != ES_HANDLER_ABI || !h->h->name || !h->h->create || !h->h->process) {
		snprintf(err, len, "%s: a handler of another ABI (%d, this one's is %d) or without create or process",
			 lib, h->h->abi, ES_HANDLER_ABI);
		return -EINVAL;
	}
	return 0;
}

int es_hlib_open(const char *spec, const char *monitor, const char *job, void (*push)(void *ctx, const char *text),
		 void *ctx, es_hlib **out, char *err, size_t len)
{
	*out = NULL;
	if (!spec || !*spec || *spec == ':' || strlen(spec) >= sizeof(((es_hlib *)0)->spec)) {
		snprintf(err, len, "'%s': expected LIB.so[:ARGS], at most 239 characters", spec ? spec : "");
		return -EINVAL;
	}
	es_hlib *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, len, "%s: no memory", spec);
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->refs = 1;
	h->push = push;
	h->ctx = ctx;
	snprintf(h->spec, sizeof(h->spec), "%s", spec);
	char lib[240];
	snprintf(lib, sizeof(lib), "%s", spec);
	char *colon = strchr(lib, ':');
	if (colon)
		*colon = 0;
	int rc = entry(h, lib, err, len);
	struct es_handler_host host = { .ctx = h, .push = keep_push, .monitor = monitor, .job = job };
	char why[300] = "";
	if (!rc && !(h->self = h->h->create(colon ? colon + 1 : "", &host, why, sizeof(why)))) {
		snprintf(err, len, "%s: %s", spec, *why ? why : "its create() failed");
		rc = -EINVAL;
	}
	if (rc) {
		es_hlib_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

int es_hlib_process(es_hlib *h, const struct es_handler_event *ev, size_t n)
{
	pthread_mutex_lock(&h->lock);
	int rc = h->stopped;
	if (!rc && n) {
		rc = h->h->process(h->self, ev, n);
		if (rc < 0)
			h->stopped = rc;
		else
			rc = 0;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

int es_hlib_query(es_hlib *h, const char *question, char *out, size_t len)
{
	if (!h->h->query || !len)
		return -ENOTSUP;
	pthread_mutex_lock(&h->lock);
	int rc = h->h->query(h->self, question ? question : "", out, len);
	pthread_mutex_unlock(&h->lock);
	out[len - 1] = 0;
	return rc;
}

uint64_t es_hlib_pushed(es_hlib *h, char *out, size_t len)
{
	pthread_mutex_lock(&h->lock);
	uint64_t n = h->npushed;
	if (n && len)
		snprintf(out, len, "%s", h->pushed);
	pthread_mutex_unlock(&h->lock);
	return n;
}

const char *es_hlib_name(const es_hlib *h) { return h->h->name; }
const char *es_hlib_spec(const es_hlib *h) { return h->spec; }

int es_hlib_stopped(es_hlib *h)
{
	pthread_mutex_lock(&h->lock);
	int rc = h->stopped;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

int es_hlib_ref(es_hlib *h)
{
	h->refs++;
	return 0;
}

void es_hlib_close(es_hlib *h)
{
	if (!h || --h->refs > 0)
		return;
	if (h->self && h->h->destroy)
		h->h->destroy(h->self);
	if (h->dl)
		dlclose(h->dl);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

void es_hlib_event(const es_scope *s, const struct es_trace *t, int leaf, struct es_handler_event *e)
{
	/* the scope's fields, not its functions: handler.c is called by
	 * scope.c and read.c, and calls neither (data flows one way) */
	const struct es_leaf *l = leaf >= 0 && leaf < s->nleaves ? &s->leaves[leaf] : NULL;
	unsigned code = es_op_code(t->op);
	*e = (struct es_handler_event){ .start_ns = t->start, .end_ns = t->end, .op = es_op_name(code), .code = code,
					.flags = (t->op & ES_OP_FAILED ? ES_HANDLER_FAILED : 0) |
						 (t->op & ES_OP_DONE ? ES_HANDLER_DONE : 0),
					.rank = l ? l->rank : -1, .thread = l ? l->thread : -1,
					.thread_name = l ? s->threads[l->thread] : "",
					.peer = t->element, .tag = t->arg, .bytes = t->size, .comm = t->comm };
}

/* --- a scope's own handlers ---------------------------------------------------------------- */

int es__hset_open(es_scope *s)
{
	if (!s->spec.nhandlers)
		return 0;
	struct es_hset *hs = calloc(1, sizeof(*hs));
	if (!hs)
		return PS_ENOMEM;
	hs->n = s->spec.nhandlers;
	for (int i = 0; i < hs->n; i++)
		es_hlib_open(s->spec.handlers[i], "scope", s->job, NULL, NULL, &hs->h[i], hs->why[i],
			     sizeof(hs->why[i]));
	s->hs = hs;
	return 0;
}

void es__hset_close(struct es_hset *hs)
{
	if (!hs)
		return;
	for (int i = 0; i < hs->n; i++)
		es_hlib_close(hs->h[i]);
	free(hs->prev);
	free(hs->ev);
	free(hs);
}

static int room(struct es_hset *hs, size_t n)
{
	if (n <= hs->cap)
		return 0;
	void *e = realloc(hs->ev, n * sizeof(*hs->ev));
	if (!e)
		return PS_ENOMEM;
	hs->ev = e;
	hs->cap = n;
	return 0;
}

static void give(struct es_hset *hs, size_t n)
{
	for (int i = 0; n && i < hs->n; i++)
		if (hs->h[i])
			es_hlib_process(hs->h[i], hs->ev, n); /* a failure stops that one: es_hlib_stopped */
}

void es__hset_pulled(const es_scope *s, const struct es_trace *t, size_t width)
{
	struct es_hset *hs = s->hs;
	if (!hs || room(hs, width))
		return;
	if (hs->nprev != width) { /* the first pull, or threads came: all is new */
		free(hs->prev);
		hs->prev = calloc(width ? width : 1, sizeof(*t));
		hs->nprev = hs->prev ? width : 0;
		if (!hs->prev)
			return;
	}
	/* A slot is a leaf, or (reduced per thread) a thread, named by its
	 * first leaf: the leaves are in gather order, thread by thread, so
	 * one cursor walks them beside the slots. */
	bool per_leaf = width == (size_t)s->nleaves;
	size_t n = 0;
	int l = 0;
	for (size_t i = 0; i < width; i++) {
		while (!per_leaf && l < s->nleaves && s->leaves[l].thread < (int)i)
			l++;
		if (es_trace_empty(&t[i]) || !memcmp(&t[i], &hs->prev[i], sizeof(*t)))
			continue;
		hs->prev[i] = t[i];
		es_hlib_event(s, &t[i], per_leaf ? (int)i : l, &hs->ev[n++]);
	}
	give(hs, n);
}

void es__hset_consumed(const es_scope *s, const struct es_trace *t, size_t n)
{
	struct es_hset *hs = s->hs;
	if (!hs || room(hs, n < 4096 ? n : 4096))
		return;
	for (size_t i = 0; i < n; i += 4096) {
		size_t k = n - i < 4096 ? n - i : 4096;
		for (size_t j = 0; j < k; j++)
			es_hlib_event(s, &t[i + j], s->got_leaf[i + j], &hs->ev[j]);
		give(hs, k);
	}
}

int es_scope_handlers(const es_scope *s)
{
	return s && s->hs ? s->hs->n : 0;
}

es_hlib *es_scope_handler(const es_scope *s, int i, const char **why)
{
	if (!s || !s->hs || i < 0 || i >= s->hs->n)
		return NULL;
	if (why)
		*why = s->hs->why[i];
	return s->hs->h[i];
}
