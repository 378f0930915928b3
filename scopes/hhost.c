/* hhost.c - eshandler: runs one handler library (handlers/es_handler.h) for a monitor, in a process of its own, so that its crash, its hang or its slowness cost the monitor nothing but it (hwire.h: what they say). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handlers/es_handler.h"
#include "hwire.h"

/*
 * Started by es_hlib_open (handler.c) with its socket as HW_FD, in a
 * process group of its own (a terminal's Ctrl-C is the monitor's to
 * handle: it asks for the last answers, then ends this), killed with
 * its monitor (PR_SET_PDEATHSIG).  One thread: process() and query() are
 * never entered at once, as es_handler.h promises.
 */

static const struct es_handler *h;
static void *self;
static char **names[3]; /* by HW_OP, HW_THREAD: id -> name */
static uint32_t nnames[3];
static char push_text[HW_TEXT];
static bool push_waiting;

static int say(uint32_t type, uint32_t a, uint64_t b, int64_t c, const char *text, int flags)
{
	unsigned char buf[sizeof(struct hw_hdr) + HW_TEXT];
	struct hw_hdr hd = { type, a, b, c };
	size_t n = text ? strnlen(text, HW_TEXT - 1) : 0;
	memcpy(buf, &hd, sizeof(hd));
	memcpy(buf + sizeof(hd), text ? text : "", n);
	buf[sizeof(hd) + n] = 0;
	return send(HW_FD, buf, sizeof(hd) + n + 1, MSG_NOSIGNAL | flags) < 0 ? -errno : 0;
}

/* A push: the latest kept until the monitor's end takes it (a monitor that
 * reads slowly never holds the handler) */
static void push(void *ctx, const char *text)
{
	(void)ctx;
	snprintf(push_text, sizeof(push_text), "%s", text ? text : "");
	push_waiting = say(HW_PUSH, 0, 0, 0, push_text, MSG_DONTWAIT) != 0;
}

static void put_name(uint32_t kind, uint32_t id, const char *text)
{
	if (kind != HW_OP && kind != HW_THREAD)
		return;
	if (id >= nnames[kind]) {
		uint32_t n = id + 64;
		char **v = realloc(names[kind], sizeof(*v) * n);
		if (!v)
			return;
		memset(v + nnames[kind], 0, sizeof(*v) * (n - nnames[kind]));
		names[kind] = v, nnames[kind] = n;
	}
	free(names[kind][id]);
	names[kind][id] = strdup(text);
}

static const char *name_of(uint32_t kind, uint32_t id)
{
	return id < nnames[kind] && names[kind][id] ? names[kind][id] : kind == HW_OP ? "?" : "";
}

static int hello(const char *p, size_t n)
{
	/* LIB\0ARGS\0MONITOR\0JOB\0, within what was received */
	const char *f[4];
	for (int i = 0; i < 4; i++) {
		const char *end = memchr(p, 0, n);
		if (!end)
			return say(HW_READY, (uint32_t)EINVAL, 0, 0, "a hello without its four words", 0), 1;
		f[i] = p, n -= (size_t)(end - p) + 1, p = end + 1;
	}
	static struct es_handler_host host; /* lives as long as the handler */
	host = (struct es_handler_host){ .push = push, .monitor = strdup(f[2]), .job = strdup(f[3]) };
	void *dl = dlopen(f[0], RTLD_NOW | RTLD_LOCAL);
	char why[HW_TEXT];
	const struct es_handler *(*fn)(void) = dl ? (const struct es_handler *(*)(void))dlsym(dl, "es_handler_entry")
						   : NULL;
	h = fn ? fn() : NULL;
	if (!dl)
		snprintf(why, sizeof(why), "%s", dlerror());
	else if (!h)
		snprintf(why, sizeof(why), "no es_handler_entry(): not a handler (es_handler.h)");
	else if (h->abi != ES_HANDLER_ABI || !h->name || !h->create || !h->process)
		snprintf(why, sizeof(why), "a handler of another ABI (%d, this one's is %d) or without create or process",
			 h->abi, ES_HANDLER_ABI);
	else if (!(self = h->create(f[1], &host, why, sizeof(why))) && !*why)
		snprintf(why, sizeof(why), "its create() failed");
	if (!self)
		return say(HW_READY, (uint32_t)(dl ? EINVAL : ENOENT), 0, 0, why, 0), 1;
	char said[HW_TEXT];
	int k = snprintf(said, sizeof(said), "%s", h->name);
	if (k + 1 < (int)sizeof(said)) /* name \0 help: said as one text with its 0 inside */
		snprintf(said + k + 1, sizeof(said) - (size_t)k - 1, "%s", h->help ? h->help() : "");
	unsigned char buf[sizeof(struct hw_hdr) + HW_TEXT];
	struct hw_hdr hd = { HW_READY, 0, h->query != NULL, 0 };
	size_t len = (size_t)k + 1 + strlen(said + k + 1) + 1;
	memcpy(buf, &hd, sizeof(hd));
	memcpy(buf + sizeof(hd), said, len);
	return send(HW_FD, buf, sizeof(hd) + len, MSG_NOSIGNAL) < 0;
}

static void answer(uint32_t seq, const char *question, uint64_t done)
{
	char out[HW_TEXT] = "";
	int rc = h->query ? h->query(self, question, out, sizeof(out)) : -ENOTSUP;
	out[sizeof(out) - 1] = 0;
	say(HW_ANSWER, seq, done, rc, out, 0);
}

static void events(const struct hw_event *w, uint32_t n, int *stopped, uint64_t *done)
{
	static struct es_handler_event ev[HW_EVENTS_MAX];
	if (*stopped)
		return;
	for (uint32_t i = 0; i < n; i++)
		ev[i] = (struct es_handler_event){ .start_ns = w[i].start_ns, .end_ns = w[i].end_ns,
						   .op = name_of(HW_OP, w[i].op), .code = w[i].code, .flags = w[i].flags,
						   .rank = w[i].rank, .thread = w[i].thread,
						   .thread_name = name_of(HW_THREAD, w[i].tname), .peer = w[i].peer,
						   .tag = w[i].tag, .bytes = w[i].bytes, .comm = w[i].comm };
	int rc = h->process(self, ev, n);
	*done += n;
	if (rc < 0) {
		*stopped = rc;
		/* what it says now it will say to the end, as it processes no
		 * more: its last answer, given before the stop so that whoever
		 * knows it stopped has it, however slow this process is then */
		answer(0, "", *done);
		say(HW_STOPPED, 0, 0, rc, NULL, 0);
	}
}

/* Built with a sanitizer (make check SAN=1, TSAN=1), a handler's SIGSEGV
 * ends this process as it does built plain, and its monitor says the
 * signal: not the sanitizer's report and an exit status */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0:handle_sigbus=0";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "handle_segv=0:handle_sigbus=0";
}

int main(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1; /* its monitor is gone already */
	static _Alignas(16) unsigned char buf[HW_MAX + 1];
	int stopped = 0;
	uint64_t done = 0;
	for (;;) {
		if (push_waiting)
			push_waiting = say(HW_PUSH, 0, 0, 0, push_text, MSG_DONTWAIT) != 0;
		ssize_t n = recv(HW_FD, buf, HW_MAX, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(struct hw_hdr))
			break; /* its monitor closed it (or sent what no monitor sends) */
		buf[n] = 0; /* a text's end, whatever was sent */
		struct hw_hdr hd;
		memcpy(&hd, buf, sizeof(hd));
		const char *text = (const char *)buf + sizeof(hd);
		size_t tn = (size_t)n - sizeof(hd);
		if (hd.type == HW_HELLO && !h) {
			if (hello(text, tn))
				return 1;
		} else if (!self) {
			return 1; /* nothing before its hello */
		} else if (hd.type == HW_NAME) {
			put_name((uint32_t)hd.b, hd.a, text);
		} else if (hd.type == HW_EVENTS && hd.a <= HW_EVENTS_MAX && tn >= hd.a * sizeof(struct hw_event)) {
			events((const struct hw_event *)(buf + sizeof(hd)), hd.a, &stopped, &done);
		} else if (hd.type == HW_QUERY) {
			answer(hd.a, text, done);
		} else if (hd.type == HW_QUIT) {
			break;
		}
	}
	if (self && h->destroy)
		h->destroy(self);
	return 0;
}
