/* handler_test.c - a handler for the tests (es_handler.h): counts events, and on its arguments fails after N of them (fail=N), takes S ms over each batch (slow=S), stalls until a file exists (wait=FILE), crashes (crash=N: SIGSEGV, abort=N), hangs in process() or query() (hang, hangq), or answers with bytes no terminal should take (bytes). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handlers/es_handler.h"

struct t {
	long fail, slow_ms, crash, abort_at;
	bool hang, hangq, bytes;
	char wait[240]; /* wait=FILE: its first process() returns once FILE exists */
	unsigned long long events;
	char tag[32];
};

static void *create(const char *args, const struct es_handler_host *host, char *err, size_t len)
{
	(void)host;
	struct t *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->fail = t->crash = t->abort_at = -1;
	if (!strncmp(args, "crash=", 6))
		t->crash = atol(args + 6);
	else if (!strncmp(args, "abort=", 6))
		t->abort_at = atol(args + 6);
	else if (!strcmp(args, "hang"))
		t->hang = true;
	else if (!strcmp(args, "hangq"))
		t->hangq = true;
	else if (!strcmp(args, "bytes"))
		t->bytes = true;
	else if (!strncmp(args, "fail=", 5))
		t->fail = atol(args + 5);
	else if (!strncmp(args, "slow=", 5))
		t->slow_ms = atol(args + 5);
	else if (!strncmp(args, "wait=", 5))
		snprintf(t->wait, sizeof(t->wait), "%s", args + 5);
	else if (!strncmp(args, "tag=", 4))
		snprintf(t->tag, sizeof(t->tag), "%s", args + 4);
	else if (*args) {
		snprintf(err, len, "expected fail=N, slow=MS, wait=FILE, tag=WORD, crash=N, abort=N, hang, hangq or bytes, "
			 "got '%s'", args);
		free(t);
		return NULL;
	}
	return t;
}

static void destroy(void *self)
{
	free(self);
}

static int process(void *self, const struct es_handler_event *ev, size_t n)
{
	struct t *t = self;
	(void)ev;
	t->events += n;
	if (t->crash >= 0 && t->events > (unsigned long long)t->crash)
		raise(SIGSEGV); /* as a wild pointer would */
	if (t->abort_at >= 0 && t->events > (unsigned long long)t->abort_at)
		abort();
	while (t->hang) /* for ever */
		pause();
	while (*t->wait && access(t->wait, F_OK)) /* stalled: its queue fills, whatever the machine's speed */
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (t->slow_ms)
		nanosleep(&(struct timespec){ t->slow_ms / 1000, (t->slow_ms % 1000) * 1000000 }, NULL);
	return t->fail >= 0 && t->events > (unsigned long long)t->fail ? -5 : 0;
}

static int query(void *self, const char *question, char *out, size_t len)
{
	(void)question;
	const struct t *t = self;
	while (t->hangq)
		pause();
	if (t->bytes) /* a line of its own, a terminal's order, bytes that are no UTF-8 */
		return snprintf(out, len, "events %llu\nrank 0: forged\x1b[2J\xff\xfe end", t->events);
	return snprintf(out, len, "{\"events\":%llu,\"tag\":\"%s\"}", t->events, t->tag);
}

static const char *help(void)
{
	return "test[:fail=N|slow=MS|wait=FILE|tag=WORD|crash=N|abort=N|hang|hangq|bytes]";
}

static const struct es_handler entry = { ES_HANDLER_ABI, "test", create, destroy, process, query, help };

const struct es_handler *es_handler_entry(void)
{
	return &entry;
}
