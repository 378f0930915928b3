/* psdemo.c - a writer and a reader process sharing a trace element: the PastSet demonstration. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pastset.h"

/* The 36-byte shape of an EventSpace trace tuple (struct es_trace in collectors/collectors.h). */
struct trace {
	uint64_t start, end;
	uint32_t seq;
	uint16_t op, collector;
	uint32_t element, size, arg;
} __attribute__((packed));
_Static_assert(sizeof(struct trace) == 36, "trace tuple is 36 bytes");

static int fail(const char *what, int rc)
{
	fprintf(stderr, "psdemo: %s: %s\n", what, ps_strerror(rc));
	return 1;
}

/* Plays an application thread: a little work, then one traced operation. */
static int writer(const char *seg, double seconds)
{
	ps_server *s;
	ps_elem *e;
	int rc = ps_server_create_shm(seg, NULL, &s);
	if (rc)
		return fail(seg, rc);
	struct ps_elem_attr a = { .tuple_size = sizeof(struct trace), .threshold = 200 };
	if ((rc = ps_elem_create(s, "thread0.trace", &a, &e)))
		return fail("thread0.trace", rc);
	printf("writer: segment %s, element thread0.trace (threshold 200)\n", seg);
	fflush(stdout);
	uint64_t end = base_now_ns() + (uint64_t)(seconds * 1e9);
	volatile double x = 1.0;
	uint32_t seq = 0;
	while (base_now_ns() < end) {
		struct trace t = { .start = base_now_ns(), .op = 1, .collector = 0,
				   .element = 7, .size = 4096, .seq = seq };
		for (int i = 0; i < 2000; i++)
			x = x * 1.0000001 + 1e-9; /* the "communication" being traced */
		t.end = base_now_ns();
		t.arg = seq & 0xffff;
		ps_write(e, &t, 0, NULL);
		seq++;
	}
	struct ps_stats st;
	ps_elem_stats(e, &st);
	printf("writer: done, %llu tuples written; the element keeps the newest %u "
	       "(%llu have rotated out)\n", (unsigned long long)st.written, st.threshold,
	       (unsigned long long)st.discarded);
	ps_elem_close(e);
	ps_server_destroy(s);
	return 0;
}

/* Plays a monitor: follows every tuple it can, counts what it missed. */
static int reader(const char *seg, double seconds)
{
	ps_server *s = NULL;
	ps_elem *e = NULL;
	int rc = PS_ENOENT;
	for (int i = 0; i < 200 && rc; i++) { /* the writer may not be up yet */
		if ((rc = ps_server_open_shm(seg, PS_RDONLY, &s)) == 0 &&
		    (rc = ps_elem_open(s, "thread0.trace", sizeof(struct trace), &e))) {
			ps_server_destroy(s);
			s = NULL;
		}
		if (rc)
			usleep(10000);
	}
	if (rc)
		return fail(seg, rc);
	uint64_t end = base_now_ns() + (uint64_t)(seconds * 1e9), next_report = 0;
	uint64_t cur = 0, got = 0, missed = 0, lat_sum = 0;
	struct trace buf[64];
	for (;;) {
		uint64_t oldest;
		int n = ps_read_range(e, cur, 64, buf, &oldest);
		if (n == PS_EDISCARDED) {
			missed += oldest - cur;
			cur = oldest;
			continue;
		}
		for (int i = 0; i < n; i++)
			lat_sum += buf[i].end - buf[i].start;
		got += (uint64_t)(n > 0 ? n : 0);
		cur += (uint64_t)(n > 0 ? n : 0);
		uint64_t t = base_now_ns();
		if (t >= next_report) {
			struct ps_stats st;
			ps_elem_stats(e, &st);
			printf("reader: written %9llu  observed %9llu  missed %7llu  "
			       "mean op %6.0f ns\n", (unsigned long long)st.written,
			       (unsigned long long)got, (unsigned long long)missed,
			       got ? (double)lat_sum / got : 0.0);
			fflush(stdout);
			next_report = t + 500000000u;
		}
		if (t > end)
			break;
		if (n <= 0) {
			struct trace one;
			ps_read(e, cur, &one, 50, NULL); /* sleep until the next one */
		}
	}
	struct ps_stats st;
	ps_elem_stats(e, &st);
	printf("reader: observed %llu of %llu tuples; the other %llu were discarded "
	       "before it read them (counted exactly, never silent)\n",
	       (unsigned long long)got, (unsigned long long)cur,
	       (unsigned long long)missed);
	ps_elem_close(e);
	ps_server_destroy(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		puts("psdemo (EventSpace) " ES_VERSION);
		return 0;
	}
	if (argc != 4 || (strcmp(argv[1], "writer") && strcmp(argv[1], "reader"))) {
		fprintf(stderr, "usage: psdemo writer|reader SEGMENT SECONDS   (or --version)\n");
		return 2;
	}
	double secs = atof(argv[3]);
	if (secs <= 0) {
		fprintf(stderr, "psdemo: SECONDS must be a positive number, not '%s'\n", argv[3]);
		return 2;
	}
	return !strcmp(argv[1], "writer") ? writer(argv[2], secs) : reader(argv[2], secs);
}
