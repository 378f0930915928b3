/* msgsize.c - a handler (es_handler.h): a histogram of the sizes of the messages each communicator carries, by powers of two, answered and pushed as JSON. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handlers/es_handler.h"

/*
 * A message is counted at its send (a send call: MPI_Send, MPI_Isend,
 * MPI_Ssend, MPI_Bsend, MPI_Rsend, their persistent starts excluded, and
 * MPI_Sendrecv's send), once, whatever completes it.  A communicator is
 * (rank, its serial on that rank): ranks number communicators each their
 * own way.  Buckets: 0 bytes, then up to 2^k bytes for k = 0..40.  The
 * histogram is pushed once a second while messages come.
 */
enum { CODES = 65536, BUCKETS = 42, COMMS = 4096 };

struct comm {
	int32_t rank;
	uint32_t comm;
	uint64_t b[BUCKETS];
};

struct hist {
	const struct es_handler_host *host;
	struct es_handler_host h;
	unsigned char *kind; /* per code: 0 unseen, 1 a send, 2 not */
	struct comm *c;
	int n;
	uint64_t messages, lost; /* lost: on a communicator past the table's room */
	time_t pushed;
};

static bool is_send(const char *op)
{
	static const char *const sends[] = { "MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Bsend",
					     "MPI_Ibsend", "MPI_Rsend", "MPI_Irsend", "MPI_Sendrecv" };
	for (size_t i = 0; i < sizeof(sends) / sizeof(sends[0]); i++)
		if (!strcmp(op, sends[i]))
			return true;
	return false;
}

static void *create(const char *args, const struct es_handler_host *host, char *err, size_t len)
{
	if (*args) {
		snprintf(err, len, "takes no arguments (got '%s')", args);
		return NULL;
	}
	struct hist *h = calloc(1, sizeof(*h));
	if (!h || !(h->kind = calloc(CODES, 1)) || !(h->c = calloc(COMMS, sizeof(*h->c)))) {
		if (h)
			free(h->kind);
		free(h);
		snprintf(err, len, "no memory");
		return NULL;
	}
	h->h = *host;
	return h;
}

static void destroy(void *self)
{
	struct hist *h = self;
	free(h->kind), free(h->c), free(h);
}

static struct comm *comm_of(struct hist *h, int32_t rank, uint32_t comm)
{
	for (int i = 0; i < h->n; i++) /* few: a program has a handful of communicators a rank */
		if (h->c[i].rank == rank && h->c[i].comm == comm)
			return &h->c[i];
	if (h->n >= COMMS)
		return NULL;
	h->c[h->n] = (struct comm){ .rank = rank, .comm = comm };
	return &h->c[h->n++];
}

/* 0 for 0 bytes; else 1 + the power of two at or above bytes (2^(b-1) >= bytes) */
static int bucket(uint64_t bytes)
{
	if (!bytes)
		return 0;
	int b = 1 + (bytes == 1 ? 0 : 64 - __builtin_clzll(bytes - 1));
	return b < BUCKETS ? b : BUCKETS - 1;
}

static int query(void *self, const char *question, char *out, size_t len);

static int process(void *self, const struct es_handler_event *ev, size_t n)
{
	struct hist *h = self;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = ev[i].code & (CODES - 1);
		if (!h->kind[k])
			h->kind[k] = is_send(ev[i].op) ? 1 : 2;
		if (h->kind[k] != 1 || (ev[i].flags & ES_HANDLER_DONE))
			continue;
		struct comm *c = comm_of(h, ev[i].rank, ev[i].comm);
		if (!c) {
			h->lost++;
			continue;
		}
		c->b[bucket(ev[i].bytes)]++;
		h->messages++;
	}
	time_t now = time(NULL);
	if (h->messages && now != h->pushed && h->h.push) {
		char text[3800];
		h->pushed = now;
		if (query(h, "", text, sizeof(text)) >= 0)
			h->h.push(h->h.ctx, text);
	}
	return 0;
}

static int query(void *self, const char *question, char *out, size_t len)
{
	(void)question;
	const struct hist *h = self;
	int at = snprintf(out, len, "{\"messages\":%llu,\"uncounted\":%llu,\"comms\":[", (unsigned long long)h->messages,
			  (unsigned long long)h->lost);
	for (int i = 0; i < h->n && at < (int)len; i++) {
		at += snprintf(out + at, len - (size_t)at, "%s{\"rank\":%d,\"comm\":%u,\"bytes_up_to\":{", i ? "," : "",
			       h->c[i].rank, h->c[i].comm);
		bool first = true;
		for (int b = 0; b < BUCKETS && at < (int)len; b++)
			if (h->c[i].b[b]) {
				at += snprintf(out + at, len - (size_t)at, "%s\"%llu\":%llu", first ? "" : ",",
					       b ? 1ull << (b - 1) : 0ull, (unsigned long long)h->c[i].b[b]);
				first = false;
			}
		if (at < (int)len)
			at += snprintf(out + at, len - (size_t)at, "}}");
	}
	if (at < (int)len)
		at += snprintf(out + at, len - (size_t)at, "]}");
	return at < (int)len ? at : (int)len - 1;
}

static const char *help(void)
{
	return "msgsize: each communicator's message sizes, by powers of two (counted at the send)";
}

static const struct es_handler entry = { ES_HANDLER_ABI, "msgsize", create, destroy, process, query, help };

const struct es_handler *es_handler_entry(void)
{
	return &entry;
}
