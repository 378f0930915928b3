/* handler.c - a handler library (handlers/es_handler.h) run for a monitor or a scope node in a process of its own (eshandler, hhost.c): started, given events, asked, stopped. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "hwire.h"

/*
 * A handler runs in eshandler, a process of its own, which es_hlib starts
 * and talks to over a socket (hwire.h).  Why apart (MUSE runs them in the
 * monitor): a handler is code the monitor did not write; its SIGSEGV or
 * abort would end the monitor, a hung process() or query() would hold it
 * past Ctrl-C, a slow one would delay its end by seconds.  Apart, each
 * costs the monitor only itself: a crash stops that handler (said, with
 * its signal), a hang or slowness fills its socket and its events are
 * counted as not given, a query is waited for only until its deadline,
 * and the monitor kills its hosts when it ends.
 *
 * Invariants:
 *  - The socket is the host's only way in and out: sends never wait
 *    (MSG_DONTWAIT; what does not fit is counted, not given), receives
 *    are taken under lock by whoever comes (drain): pushes kept, a
 *    stop noted, an answer kept for the query that waits on its number.
 *  - Queries are numbered from 1; number 0 is the answer a host gives as
 *    its handler stops (before the stop, in the socket's order): from
 *    then on every query gets it, since the handler processes no more.
 *  - A name (an op's, a thread's) is sent before the first event that
 *    points to it; one that could not be sent is sent again, its events
 *    not given meanwhile.
 *  - dead: the host is gone (its socket closed); reaped once, its end
 *    said by es_hlib_why.  Nothing is given or asked after.
 */
struct es_hlib {
	int fd;
	pid_t pid;
	char spec[240];
	char name[32];
	_Atomic int refs; /* its holders: a monitor's set and a scope may share one */
	pthread_mutex_t lock;
	int stopped;      /* what process() returned (below 0), or -EPIPE: the host ended */
	bool dead;
	int status;       /* the host's wait status, once dead */
	void (*push)(void *ctx, const char *text);
	void *ctx;
	uint64_t npushed;
	char pushed[ES_HLIB_TEXT];
	uint32_t asked, answered; /* queries' numbers: the last asked, the last answered */
	int answer_rc;
	char answer[ES_HLIB_TEXT];
	bool final;           /* its answer as it stopped (number 0), the one it keeps giving */
	int final_rc;
	char final_text[ES_HLIB_TEXT];
	uint64_t given, processed; /* events sent; processed, as its last answer said */
	uint8_t op_sent[65536 / 8];
	uint8_t *thread_sent;
	size_t thread_cap; /* bits */
};

/* The host program: beside the monitor's own (bin/), or ES_HANDLER_HOST */
static int host_path(char *out, size_t len)
{
	const char *env = getenv("ES_HANDLER_HOST");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) ? -errno : 0;
	}
	char self[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	static const char *const where[] = { "%s/eshandler", "%s/../bin/eshandler" }; /* bin/, or tests/ beside it */
	for (int i = 0; i < 2; i++) {
		snprintf(out, len, where[i], self);
		if (!access(out, X_OK))
			return 0;
	}
	return -ENOENT;
}

static void utf8_fix(char *text)
{
	for (unsigned char *p = (unsigned char *)text; *p;) {
		int n = base_utf8_len(p);
		if (!n)
			*p = '?', n = 1; /* a handler's bytes shown as text: valid UTF-8 */
		p += n;
	}
}

/* The host gone: reaped (it closed its end as it ended, or is killed) */
static void reap(es_hlib *h)
{
	if (h->dead)
		return;
	h->dead = true;
	if (!h->stopped)
		h->stopped = -EPIPE;
	for (int i = 0; i < 20 && waitpid(h->pid, &h->status, WNOHANG) == 0; i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	if (waitpid(h->pid, &h->status, WNOHANG) == 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, &h->status, 0);
	}
}

/* What the host said since, taken without waiting (under lock) */
static void drain(es_hlib *h)
{
	static _Thread_local _Alignas(16) unsigned char buf[HW_MAX + 1];
	while (!h->dead) {
		ssize_t n = recv(h->fd, buf, HW_MAX, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < (ssize_t)sizeof(struct hw_hdr)) {
			reap(h);
			return;
		}
		buf[n] = 0;
		struct hw_hdr hd;
		memcpy(&hd, buf, sizeof(hd));
		char *text = (char *)buf + sizeof(hd);
		utf8_fix(text);
		if (hd.type == HW_PUSH && h->push) {
			h->push(h->ctx, text);
		} else if (hd.type == HW_PUSH) {
			snprintf(h->pushed, sizeof(h->pushed), "%.*s", (int)sizeof(h->pushed) - 1, text);
			h->npushed++;
		} else if (hd.type == HW_STOPPED) {
			h->stopped = hd.c < 0 && hd.c > INT_MIN ? (int)hd.c : -EINVAL;
		} else if (hd.type == HW_ANSWER && hd.a == 0) {
			h->final = true;
			h->processed = hd.b;
			h->final_rc = hd.c > INT_MIN && hd.c < INT_MAX ? (int)hd.c : -EINVAL;
			snprintf(h->final_text, sizeof(h->final_text), "%.*s", (int)sizeof(h->final_text) - 1, text);
		} else if (hd.type == HW_ANSWER) {
			h->answered = hd.a;
			h->processed = hd.b;
			h->answer_rc = hd.c > INT_MIN && hd.c < INT_MAX ? (int)hd.c : -EINVAL;
			snprintf(h->answer, sizeof(h->answer), "%.*s", (int)sizeof(h->answer) - 1, text);
		}
	}
}

static int tell(es_hlib *h, uint32_t type, uint32_t a, uint64_t b, const void *data, size_t n)
{
	unsigned char buf[HW_MAX];
	struct hw_hdr hd = { type, a, b, 0 };
	if (sizeof(hd) + n > sizeof(buf))
		return -EMSGSIZE;
	memcpy(buf, &hd, sizeof(hd));
	memcpy(buf + sizeof(hd), data, n);
	if (send(h->fd, buf, sizeof(hd) + n, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		return 0;
	int rc = -errno;
	if (rc == -EPIPE || rc == -ECONNRESET)
		reap(h);
	return rc;
}

/* The host started, and its hello answered within 5 s: 0 or why in err */
static int start(es_hlib *h, const char *lib, const char *args, const char *monitor, const char *job, char *err,
		 size_t len)
{
	char host[PATH_MAX], text[HW_MAX];
	int sv[2], rc = host_path(host, sizeof(host));
	if (rc) {
		snprintf(err, len, "%s: no eshandler (the program that runs handlers) beside this one", lib);
		return rc;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	int big = 1 << 20; /* room for batches while the handler is at one */
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)))
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], HW_FD);
	posix_spawnattr_init(&at);
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGINT);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setpgroup(&at, 0); /* a terminal's Ctrl-C is the monitor's */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	char *argv[] = { "eshandler", NULL };
	extern char **environ;
	rc = posix_spawn(&h->pid, host, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		snprintf(err, len, "%s: eshandler: %s", lib, strerror(rc));
		return -rc;
	}
	h->fd = sv[0];
	int n = snprintf(text, sizeof(text), "%s%c%s%c%s%c%s", lib, 0, args, 0, monitor ? monitor : "", 0,
			 job ? job : "");
	if ((rc = tell(h, HW_HELLO, 0, 0, text, (size_t)n + 1))) {
		snprintf(err, len, "%s: its process: %s", lib, strerror(-rc));
		return rc;
	}
	return 0;
}

/* The host's answer to its hello: 0 and its name, or why not in err */
static int ready(es_hlib *h, const char *spec, char *err, size_t len)
{
	static _Thread_local _Alignas(16) unsigned char buf[HW_MAX + 1];
	struct pollfd p = { h->fd, POLLIN, 0 };
	int w = poll(&p, 1, 5000);
	ssize_t n = w > 0 ? recv(h->fd, buf, HW_MAX, 0) : -1;
	struct hw_hdr hd = { 0 };
	if (n >= (ssize_t)sizeof(hd))
		memcpy(&hd, buf, sizeof(hd));
	if (n < (ssize_t)sizeof(hd) || hd.type != HW_READY) {
		reap(h);
		snprintf(err, len, "%s: %s", spec, w == 0 ? "its create() did not return within 5 s"
			 : WIFSIGNALED(h->status) ? "its process died as it was created" : "its process ended as it was created");
		return w == 0 ? -ETIMEDOUT : -EINVAL;
	}
	buf[n] = 0;
	char *text = (char *)buf + sizeof(hd);
	utf8_fix(text);
	if (hd.a) {
		snprintf(err, len, "%s: %s", hd.a == ENOENT ? spec : spec, text);
		return -(int)(hd.a < 4096 ? hd.a : EINVAL);
	}
	snprintf(h->name, sizeof(h->name), "%.*s", (int)sizeof(h->name) - 1, text);
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
	h->fd = -1;
	h->push = push;
	h->ctx = ctx;
	snprintf(h->spec, sizeof(h->spec), "%s", spec);
	char lib[240], why[600], real[PATH_MAX];
	snprintf(lib, sizeof(lib), "%s", spec);
	char *colon = strchr(lib, ':');
	if (colon)
		*colon = 0;
	/* only its user's or root's code (base_open_trusted): every directory to
	 * it is theirs and nobody else's to write, so that the file the host
	 * loads by its path is the file checked */
	int rc = base_open_trusted(lib, why, sizeof(why));
	if (rc < 0)
		snprintf(err, len, "%s%s", why,
			 rc == -EACCES ? ": not loaded (a monitor runs only its own user's or root's code)" : "");
	else if (close(rc), !realpath(lib, real))
		rc = -errno, snprintf(err, len, "%s: %s", lib, strerror(errno));
	else if (!(rc = start(h, real, colon ? colon + 1 : "", monitor, job, err, len)))
		rc = ready(h, spec, err, len);
	if (rc) {
		es_hlib_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

/* A name sent once, before the events that point to it: 0, or why not */
static int name_once(es_hlib *h, uint32_t kind, uint32_t id, const char *text)
{
	uint8_t *bits = kind == HW_OP ? h->op_sent : h->thread_sent;
	size_t cap = kind == HW_OP ? 65536 : h->thread_cap;
	if (kind == HW_THREAD && id >= cap) {
		size_t n = ((size_t)id + 1024) & ~(size_t)7;
		uint8_t *b = realloc(h->thread_sent, n / 8);
		if (!b)
			return -ENOMEM;
		memset(b + cap / 8, 0, (n - cap) / 8);
		h->thread_sent = bits = b, h->thread_cap = cap = n;
	}
	if (id >= cap || (bits[id / 8] & 1u << (id % 8)))
		return id >= cap ? -EINVAL : 0;
	int rc = tell(h, HW_NAME, id, kind, text ? text : "", strlen(text ? text : "") + 1);
	if (!rc)
		bits[id / 8] |= (uint8_t)(1u << (id % 8));
	return rc;
}

int es_hlib_process(es_hlib *h, const struct es_handler_event *ev, size_t n, size_t *lost)
{
	pthread_mutex_lock(&h->lock);
	drain(h);
	size_t given = 0;
	int rc = h->stopped;
	struct hw_event w[HW_EVENTS_MAX];
	for (size_t i = 0; !rc && i < n;) {
		size_t k = 0;
		for (; k < HW_EVENTS_MAX && i + k < n; k++) {
			const struct es_handler_event *e = &ev[i + k];
			uint32_t tname = e->thread >= 0 ? (uint32_t)e->thread + 1 : 0;
			if (name_once(h, HW_OP, e->code & 0xffff, e->op) ||
			    (tname && name_once(h, HW_THREAD, tname, e->thread_name)))
				break; /* its names not yet known: given from the next batch on */
			w[k] = (struct hw_event){ e->start_ns, e->end_ns, e->bytes, e->code, e->flags, e->rank, e->thread,
						  e->peer, e->tag, e->comm, e->code & 0xffff, tname, 0 };
		}
		if (!k || tell(h, HW_EVENTS, (uint32_t)k, 0, w, k * sizeof(*w)))
			break; /* its socket full: the handler falls behind, the rest counted */
		given += k, i += k;
		h->given += k;
	}
	if (lost)
		*lost = n - given;
	rc = h->stopped;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void es_hlib_wait_room(es_hlib *h, int timeout_ms)
{
	struct pollfd p = { h->fd, POLLOUT, 0 };
	if (!h->dead)
		poll(&p, 1, timeout_ms);
}

/* Stopped (process() failed): the answer it gave then, which it keeps
 * giving (under lock, drained); false while it runs */
static bool final_answer(es_hlib *h, char *out, size_t len, int *rc)
{
	if (!h->final || !h->stopped || h->stopped == -EPIPE)
		return false;
	*rc = h->final_rc;
	snprintf(out, len, "%s", h->final_text);
	return true;
}

int es_hlib_query(es_hlib *h, const char *question, char *out, size_t len, int timeout_ms)
{
	if (!len)
		return -EINVAL;
	const char *q = question ? question : "";
	uint64_t until = base_deadline_ns(timeout_ms);
	uint32_t seq = 0; /* asked as this number; 0: not yet (its socket full of events) */
	/* waited for without the lock, which events given meanwhile take: an
	 * answer whoever drains first keeps for us, by its number */
	for (;;) {
		int rc = 0;
		pthread_mutex_lock(&h->lock);
		drain(h);
		if ((!seq || h->answered != seq) && final_answer(h, out, len, &rc)) {
			pthread_mutex_unlock(&h->lock); /* not asked, or needs no answer: stopped */
			return rc;
		}
		if (seq && h->answered == seq) {
			rc = h->answer_rc;
			snprintf(out, len, "%s", h->answer);
		} else if (h->dead) {
			rc = -EPIPE;
		} else if (!seq) {
			uint32_t next = h->asked + 1 ? h->asked + 1 : 1; /* 0 is the stop's */
			rc = tell(h, HW_QUERY, next, 0, q, strnlen(q, HW_TEXT - 1) + 1);
			if (!rc)
				seq = h->asked = next;
			else if (rc == -EAGAIN)
				rc = 0; /* asked once there is room */
		}
		bool answered = seq && h->answered == seq;
		pthread_mutex_unlock(&h->lock);
		if (rc || answered)
			return rc;
		int left = base_ms_left(until);
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { h->fd, (short)(seq ? POLLIN : POLLIN | POLLOUT), 0 };
		poll(&p, 1, left < 20 ? left : 20);
	}
}

uint64_t es_hlib_pushed(es_hlib *h, char *out, size_t len)
{
	pthread_mutex_lock(&h->lock);
	drain(h);
	uint64_t n = h->npushed;
	if (n && len)
		snprintf(out, len, "%s", h->pushed);
	pthread_mutex_unlock(&h->lock);
	return n;
}

const char *es_hlib_name(const es_hlib *h) { return h->name; }
const char *es_hlib_spec(const es_hlib *h) { return h->spec; }

int es_hlib_stopped(es_hlib *h)
{
	pthread_mutex_lock(&h->lock);
	drain(h);
	int rc = h->stopped;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void es_hlib_why(es_hlib *h, char *out, size_t len)
{
	pthread_mutex_lock(&h->lock);
	drain(h);
	if (h->dead && WIFSIGNALED(h->status))
		snprintf(out, len, "its process died of signal %d (SIG%s)", WTERMSIG(h->status),
			 sigabbrev_np(WTERMSIG(h->status)) ? sigabbrev_np(WTERMSIG(h->status)) : "?");
	else if (h->dead && h->stopped == -EPIPE)
		snprintf(out, len, "its process ended (exit status %d)", WIFEXITED(h->status) ? WEXITSTATUS(h->status) : -1);
	else if (h->stopped)
		snprintf(out, len, "its process returned %d (%s)", h->stopped,
			 strerror(h->stopped > -4096 ? -h->stopped : EINVAL));
	else
		snprintf(out, len, "it runs");
	pthread_mutex_unlock(&h->lock);
}

uint64_t es_hlib_given(es_hlib *h, uint64_t *processed)
{
	pthread_mutex_lock(&h->lock);
	uint64_t n = h->given;
	*processed = h->processed;
	pthread_mutex_unlock(&h->lock);
	return n;
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
	if (h->fd >= 0 && !h->dead) {
		/* destroy(), and its end, for a moment; then killed */
		tell(h, HW_QUIT, 0, 0, "", 0);
		shutdown(h->fd, SHUT_WR);
		for (int i = 0; i < 40 && !h->dead && waitpid(h->pid, &h->status, WNOHANG) == 0; i++)
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
		h->dead = h->dead || waitpid(h->pid, &h->status, WNOHANG) != 0;
		if (!h->dead) {
			kill(h->pid, SIGKILL);
			waitpid(h->pid, &h->status, 0);
		}
	}
	if (h->fd >= 0)
		close(h->fd);
	pthread_mutex_destroy(&h->lock);
	free(h->thread_sent);
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
			es_hlib_process(hs->h[i], hs->ev, n, NULL); /* never waits; a failure stops that one */
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
