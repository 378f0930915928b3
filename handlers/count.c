/* count.c - a handler (es_handler.h): MUSE's event counter, events counted by call, only those its filter names; its answer the counts as JSON. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/es_handler.h"

/*
 * Arguments: nothing (every call), or "filter=NAME,NAME..." (only calls
 * whose name is one of these, or begins with one ending in '*':
 * filter=MPI_Send,MPI_Isend,MPI_Wait*).  A call's number decides, once
 * seen, whether it passes: counting is a table look-up per event.
 */
enum { CODES = 65536 };

struct count {
	char *filter;        /* the names, comma-separated; NULL: all */
	unsigned char *seen; /* per code: 0 unseen, 1 counted, 2 filtered out */
	uint64_t *n;
	const char **name;
	uint64_t events, kept;
};

static bool passes(const struct count *c, const char *name)
{
	if (!c->filter)
		return true;
	size_t len = strlen(name);
	for (const char *p = c->filter; *p;) {
		size_t k = strcspn(p, ",");
		if (k && p[k - 1] == '*' ? !strncmp(p, name, k - 1) : k == len && !strncmp(p, name, k))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

static void *create(const char *args, const struct es_handler_host *host, char *err, size_t len)
{
	(void)host;
	if (*args && strncmp(args, "filter=", 7)) {
		snprintf(err, len, "expected nothing or filter=NAME,NAME... (got '%s')", args);
		return NULL;
	}
	struct count *c = calloc(1, sizeof(*c));
	if (!c || !(c->seen = calloc(CODES, 1)) || !(c->n = calloc(CODES, sizeof(*c->n))) ||
	    !(c->name = calloc(CODES, sizeof(*c->name))) || (*args && !(c->filter = strdup(args + 7)))) {
		if (c)
			free(c->seen), free(c->n), free(c->name);
		free(c);
		snprintf(err, len, "no memory");
		return NULL;
	}
	return c;
}

static void destroy(void *self)
{
	struct count *c = self;
	free(c->filter), free(c->seen), free(c->n), free(c->name), free(c);
}

static int process(void *self, const struct es_handler_event *ev, size_t n)
{
	struct count *c = self;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = ev[i].code & (CODES - 1);
		if (__builtin_expect(!c->seen[k], 0)) {
			c->seen[k] = passes(c, ev[i].op) ? 1 : 2;
			c->name[k] = ev[i].op;
		}
		if (c->seen[k] == 1) {
			c->n[k]++;
			c->kept++;
		}
	}
	c->events += n;
	return 0;
}

static int query(void *self, const char *question, char *out, size_t len)
{
	(void)question;
	const struct count *c = self;
	int at = snprintf(out, len, "{\"events\":%llu,\"counted\":%llu,\"by_call\":{", (unsigned long long)c->events,
			  (unsigned long long)c->kept);
	bool first = true;
	for (uint32_t k = 0; k < CODES && at < (int)len; k++)
		if (c->n[k]) {
			at += snprintf(out + at, len - (size_t)at, "%s\"%s\":%llu", first ? "" : ",", c->name[k],
				       (unsigned long long)c->n[k]);
			first = false;
		}
	if (at < (int)len)
		at += snprintf(out + at, len - (size_t)at, "}}");
	return at < (int)len ? at : (int)len - 1;
}

static const char *help(void)
{
	return "count[:filter=NAME,PREFIX*...]: events counted by call, only those the filter names";
}

static const struct es_handler entry = { ES_HANDLER_ABI, "count", create, destroy, process, query, help };

const struct es_handler *es_handler_entry(void)
{
	return &entry;
}
