/* handler_test.c - a handler for the tests (es_handler.h): counts events, and on its arguments fails after N of them (fail=N), takes S ms over each batch (slow=S), or stalls until a file exists (wait=FILE). */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handlers/es_handler.h"

struct t {
	long fail, slow_ms;
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
	t->fail = -1;
	if (!strncmp(args, "fail=", 5))
		t->fail = atol(args + 5);
	else if (!strncmp(args, "slow=", 5))
		t->slow_ms = atol(args + 5);
	else if (!strncmp(args, "wait=", 5))
		snprintf(t->wait, sizeof(t->wait), "%s", args + 5);
	else if (!strncmp(args, "tag=", 4))
		snprintf(t->tag, sizeof(t->tag), "%s", args + 4);
	else if (*args) {
		snprintf(err, len, "expected fail=N, slow=MS, wait=FILE or tag=WORD, got '%s'", args);
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
	return snprintf(out, len, "{\"events\":%llu,\"tag\":\"%s\"}", t->events, t->tag);
}

static const char *help(void)
{
	return "test[:fail=N|slow=MS|wait=FILE|tag=WORD]";
}

static const struct es_handler entry = { ES_HANDLER_ABI, "test", create, destroy, process, query, help };

const struct es_handler *es_handler_entry(void)
{
	return &entry;
}
