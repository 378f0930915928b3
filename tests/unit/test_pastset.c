/* test_pastset.c - element operations and errors, on both kinds of tuple server. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pastset/pastset.h"
#include "tests/unit/suites.h"

/* Each test runs twice: _i == 0 on an in-process server, 1 on shared memory. */
static ps_server *srv;
static char seg[64];

static void setup_kind(int kind)
{
	if (kind == 0) {
		ck_assert_int_eq(ps_server_create_local(&srv), 0);
	} else {
		TEST_SEG(seg, "ops");
		ps_shm_unlink(seg);
		ck_assert_int_eq(ps_server_create_shm(seg, NULL, &srv), 0);
	}
}

static void teardown_kind(int kind)
{
	ps_server_destroy(srv);
	srv = NULL;
	if (kind == 1)
		ck_assert_int_eq(ps_shm_unlink(seg), 0);
}

static ps_elem *mk(const char *name, uint32_t thr, enum ps_mode mode, unsigned flags)
{
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = thr,
				  .mode = mode, .flags = flags };
	ps_elem *e = NULL;
	ck_assert_int_eq(ps_elem_create(srv, name, &a, &e), 0);
	return e;
}

static void put(ps_elem *e, uint64_t want_idx)
{
	uint8_t t[TT_SIZE];
	uint64_t idx = ~0ull;
	tuple_make(t, want_idx, 1, (uint32_t)want_idx);
	ck_assert_int_eq(ps_write(e, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, want_idx);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

START_TEST(create_open_close)
{
	setup_kind(_i);
	ps_elem *e = mk("trace.0", 8, PS_DISCARD, 0), *o = NULL;
	ck_assert_str_eq(ps_elem_name(e), "trace.0");
	ck_assert_uint_eq(ps_elem_tuple_size(e), TT_SIZE);
	ck_assert_int_eq(ps_elem_open(srv, "trace.0", TT_SIZE, &o), 0);
	put(e, 0);
	uint8_t t[TT_SIZE];
	ck_assert_int_eq(ps_read(o, 0, t, 0, NULL), 0); /* same element, two handles */
	ck_assert(tuple_ok(t));
	ps_elem_close(o);
	ck_assert_int_eq(ps_elem_open(srv, "trace.0", 0, &o), 0); /* 0: any size */
	ck_assert_uint_eq(ps_elem_tuple_size(o), TT_SIZE);
	ps_elem_close(o);
	ck_assert_int_eq(ps_server_count(srv), 1);
	char name[PS_NAME_MAX + 1];
	ck_assert_int_eq(ps_server_elem_name(srv, 0, name), 0);
	ck_assert_str_eq(name, "trace.0");
	ck_assert_int_eq(ps_server_elem_name(srv, 1, name), PS_EINVAL);
	void *area = NULL;
	ck_assert_int_eq(ps_server_user_area(srv, &area), 0);
	ck_assert_ptr_nonnull(area);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(create_errors)
{
	setup_kind(_i);
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 4 };
	ps_elem *e = NULL, *x = NULL;
	ck_assert_int_eq(ps_elem_create(srv, "a", &a, &e), 0);
	ck_assert_int_eq(ps_elem_create(srv, "a", &a, &x), PS_EEXIST);
	ck_assert_int_eq(ps_elem_open(srv, "nope", 0, &x), PS_ENOENT);
	ck_assert_int_eq(ps_elem_open(srv, "a", TT_SIZE + 1, &x), PS_ESIZE);
	const char *bad[] = { "", "has/slash", "sp ace", "..", ".",
			      "0123456789012345678901234567890123456789012345678" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(ps_elem_create(srv, bad[i], &a, &x), PS_EBADNAME);
		ck_assert_int_eq(ps_elem_open(srv, bad[i], 0, &x), PS_EBADNAME);
	}
	ck_assert_int_eq(ps_elem_create(srv, NULL, &a, &x), PS_EBADNAME);
	ck_assert_int_eq(ps_elem_create(srv, "b", NULL, &x), PS_EINVAL);
	a.threshold = 0;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_ETHRESHOLD);
	a.threshold = PS_THRESHOLD_MAX + 1;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_ETHRESHOLD);
	a.threshold = 4;
	a.tuple_size = 0;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_ESIZE);
	a.tuple_size = PS_TUPLE_MAX + 1;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_ESIZE);
	a.tuple_size = 8;
	a.mode = 7;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_EINVAL);
	a.mode = PS_FLOW;
	a.flags = 0x80;
	ck_assert_int_eq(ps_elem_create(srv, "b", &a, &x), PS_EINVAL);
	ck_assert_int_eq(ps_server_count(srv), 1); /* nothing half-made is left */
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(write_read_in_order)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 16, PS_DISCARD, 0);
	uint8_t t[TT_SIZE];
	uint64_t idx;
	ck_assert_int_eq(ps_read_latest(e, t, &idx), PS_ENODATA);
	for (uint64_t i = 0; i < 10; i++)
		put(e, i);
	for (uint64_t i = 0; i < 10; i++) {
		ck_assert_int_eq(ps_read(e, i, t, 0, NULL), 0);
		ck_assert(tuple_ok(t));
		ck_assert_uint_eq(tuple_idx(t), i);
	}
	ck_assert_int_eq(ps_read_latest(e, t, &idx), 0);
	ck_assert_uint_eq(idx, 9);
	ck_assert_uint_eq(tuple_idx(t), 9);
	/* Reads observe without removing: the same tuple again. */
	ck_assert_int_eq(ps_read(e, 3, t, 0, NULL), 0);
	ck_assert_uint_eq(tuple_idx(t), 3);
	uint8_t buf[20 * TT_SIZE];
	ck_assert_int_eq(ps_read_range(e, 2, 5, buf, NULL), 5);
	for (int k = 0; k < 5; k++) {
		ck_assert(tuple_ok(buf + k * TT_SIZE));
		ck_assert_uint_eq(tuple_idx(buf + k * TT_SIZE), 2 + k);
	}
	ck_assert_int_eq(ps_read_range(e, 7, 20, buf, NULL), 3); /* up to head */
	ck_assert_int_eq(ps_read_range(e, 10, 5, buf, NULL), 0); /* not yet */
	ck_assert_int_eq(ps_read_range(e, 0, 0, buf, NULL), 0);
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(e, &st), 0);
	ck_assert_uint_eq(st.written, 10);
	ck_assert_uint_eq(st.discarded, 0);
	ck_assert_uint_eq(st.taken, 0);
	ck_assert_uint_eq(st.oldest, 0);
	ck_assert_uint_eq(st.threshold, 16);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(discard_threshold)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 5, PS_DISCARD, 0);
	for (uint64_t i = 0; i < 12; i++)
		put(e, i); /* never blocks, whatever the threshold */
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, 12);
	ck_assert_uint_eq(st.discarded, 7);
	ck_assert_uint_eq(st.oldest, 7);
	uint8_t t[TT_SIZE], buf[10 * TT_SIZE];
	uint64_t oldest = 0;
	ck_assert_int_eq(ps_read(e, 3, t, 100, &oldest), PS_EDISCARDED);
	ck_assert_uint_eq(oldest, 7);
	ck_assert_int_eq(ps_read(e, 6, t, 0, &oldest), PS_EDISCARDED);
	ck_assert_int_eq(ps_read(e, 7, t, 0, &oldest), 0);
	ck_assert_uint_eq(tuple_idx(t), 7);
	oldest = 0;
	ck_assert_int_eq(ps_read_range(e, 5, 10, buf, &oldest), PS_EDISCARDED);
	ck_assert_uint_eq(oldest, 7);
	ck_assert_int_eq(ps_read_range(e, 7, 10, buf, &oldest), 5);
	ck_assert_uint_eq(tuple_idx(buf + 4 * TT_SIZE), 11);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(tuple_sizes)
{
	setup_kind(_i);
	const size_t sizes[] = { 1, 7, 8, 9, 36, 100, 4096 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		char name[16];
		snprintf(name, sizeof(name), "s%zu", sizes[k]);
		struct ps_elem_attr a = { .tuple_size = sizes[k], .threshold = 3 };
		ps_elem *e;
		ck_assert_int_eq(ps_elem_create(srv, name, &a, &e), 0);
		unsigned char *in = malloc(sizes[k]), *out = malloc(sizes[k] + 1);
		for (int r = 0; r < 5; r++) {
			for (size_t b = 0; b < sizes[k]; b++)
				in[b] = (unsigned char)(b * 13 + r + k);
			out[sizes[k]] = 0xAB;
			ck_assert_int_eq(ps_write(e, in, 0, NULL), 0);
			ck_assert_int_eq(ps_read_latest(e, out, NULL), 0);
			ck_assert_mem_eq(in, out, sizes[k]);
			ck_assert_uint_eq(out[sizes[k]], 0xAB); /* no byte past the tuple */
		}
		free(in);
		free(out);
		ps_elem_close(e);
	}
	teardown_kind(_i);
}
END_TEST

START_TEST(read_timeout)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 4, PS_DISCARD, 0);
	uint8_t t[TT_SIZE];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(ps_read(e, 0, t, 0, NULL), PS_ETIMEDOUT);
	ck_assert_int_eq(ps_read(e, 0, t, 60, NULL), PS_ETIMEDOUT);
	ck_assert_int_ge(ms_since(&t0), 60); /* it did wait */
	ck_assert_int_eq(ps_take(e, t, 30, NULL), PS_ETIMEDOUT);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

struct later { ps_elem *e; int delay_ms; int n; };

static void *write_later(void *arg)
{
	struct later *l = arg;
	for (int i = 0; i < l->n; i++) {
		usleep(l->delay_ms * 1000);
		uint8_t t[TT_SIZE];
		tuple_make(t, (uint64_t)i, 2, (uint32_t)i);
		ck_assert_int_eq(ps_write(l->e, t, PS_FOREVER, NULL), 0);
	}
	return NULL;
}

START_TEST(blocking_read_wakes)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 4, PS_DISCARD, 0);
	struct later l = { e, 20, 3 };
	pthread_t th;
	pthread_create(&th, NULL, write_later, &l);
	uint8_t t[TT_SIZE];
	for (uint64_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ps_read(e, i, t, PS_FOREVER, NULL), 0);
		ck_assert_uint_eq(tuple_idx(t), i);
	}
	pthread_join(th, NULL);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(take_fifo)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 8, PS_DISCARD, 0);
	for (uint64_t i = 0; i < 5; i++)
		put(e, i);
	uint8_t t[TT_SIZE];
	uint64_t idx, oldest;
	for (uint64_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ps_take(e, t, 0, &idx), 0);
		ck_assert_uint_eq(idx, i);
		ck_assert_uint_eq(tuple_idx(t), i);
	}
	ck_assert_int_eq(ps_read(e, 1, t, 0, &oldest), PS_EDISCARDED); /* taken */
	ck_assert_uint_eq(oldest, 3);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.taken, 3);
	ck_assert_uint_eq(st.discarded, 0);
	ck_assert_uint_eq(st.written, 5);
	ck_assert_int_eq(ps_take(e, t, 0, &idx), 0);
	ck_assert_int_eq(ps_take(e, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, 4);
	ck_assert_int_eq(ps_take(e, t, 0, &idx), PS_ETIMEDOUT);
	ck_assert_int_eq(ps_read_latest(e, t, &idx), PS_ENODATA); /* all taken */
	put(e, 5); /* indices go on, never reused */
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(take_after_discard)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 3, PS_DISCARD, 0);
	for (uint64_t i = 0; i < 5; i++)
		put(e, i);
	uint8_t t[TT_SIZE];
	uint64_t idx;
	ck_assert_int_eq(ps_take(e, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, 2); /* the oldest still held */
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.discarded, 2);
	ck_assert_uint_eq(st.taken, 1);
	for (uint64_t i = 5; i < 9; i++)
		put(e, i);
	ps_elem_stats(e, &st);
	/* 0,1 discarded; 2 taken; 3,4,5 discarded by the threshold; 6,7,8 held */
	ck_assert_uint_eq(st.discarded, 5);
	ck_assert_uint_eq(st.oldest, 6);
	ck_assert_uint_eq(st.written - st.discarded - st.taken, 3);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(flow_control_waits)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 2, PS_FLOW, 0);
	put(e, 0);
	put(e, 1);
	uint8_t t[TT_SIZE];
	tuple_make(t, 2, 1, 2);
	ck_assert_int_eq(ps_write(e, t, 0, NULL), PS_ETIMEDOUT);
	ck_assert_int_eq(ps_write(e, t, 40, NULL), PS_ETIMEDOUT);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, 2); /* the timed-out writes left no trace */
	uint64_t idx;
	ck_assert_int_eq(ps_take(e, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, 0);
	put(e, 2);
	ck_assert_int_eq(ps_read(e, 1, t, 0, NULL), 0);
	ck_assert_uint_eq(tuple_idx(t), 1);
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.discarded, 0);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

struct taker { ps_elem *e; int n; int delay_ms; uint64_t next; int bad; };

static void *take_slowly(void *arg)
{
	struct taker *k = arg;
	uint8_t t[TT_SIZE];
	for (int i = 0; i < k->n; i++) {
		if (k->delay_ms)
			usleep(k->delay_ms * 1000);
		uint64_t idx;
		if (ps_take(k->e, t, 5000, &idx) || idx != k->next ||
		    !tuple_ok(t) || tuple_idx(t) != idx)
			k->bad++;
		k->next++;
	}
	return NULL;
}

START_TEST(flow_writer_blocks_until_taken)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 2, PS_FLOW, 0);
	struct taker k = { e, 6, 10, 0, 0 };
	pthread_t th;
	pthread_create(&th, NULL, take_slowly, &k);
	for (uint64_t i = 0; i < 6; i++) {
		uint8_t t[TT_SIZE];
		tuple_make(t, i, 1, (uint32_t)i);
		ck_assert_int_eq(ps_write(e, t, PS_FOREVER, NULL), 0);
	}
	pthread_join(th, NULL);
	ck_assert_int_eq(k.bad, 0);
	ck_assert_uint_eq(k.next, 6);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

START_TEST(out_of_memory)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_local(&s), 0);
	/* 2^26 slots of 64 KiB: 4 TiB, more than any machine here has. */
	struct ps_elem_attr a = { .tuple_size = PS_TUPLE_MAX, .threshold = PS_THRESHOLD_MAX };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(s, "huge", &a, &e), PS_ENOMEM);
	ck_assert_int_eq(ps_server_count(s), 0);
	a.threshold = 4;
	ck_assert_int_eq(ps_elem_create(s, "huge", &a, &e), 0); /* the name is free */
	ps_elem_close(e);
	ps_server_destroy(s);
}
END_TEST

START_TEST(null_arguments)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 4, PS_DISCARD, 0);
	uint8_t t[TT_SIZE] = { 0 };
	ck_assert_int_eq(ps_write(NULL, t, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_write(e, NULL, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_read(NULL, 0, t, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_read(e, 0, NULL, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest(e, NULL, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_read_range(e, 0, 1, NULL, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_take(e, NULL, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_take(NULL, t, 0, NULL), PS_EINVAL);
	ck_assert_int_eq(ps_elem_stats(NULL, NULL), PS_EINVAL);
	ck_assert_uint_eq(ps_elem_tuple_size(NULL), 0);
	ck_assert_str_eq(ps_elem_name(NULL), "");
	ck_assert_int_eq(ps_elem_create(NULL, "x", &(struct ps_elem_attr){ 8, 1, 0, 0 }, &e), PS_EINVAL);
	ps_elem_close(e);
	ps_elem_close(NULL);
	teardown_kind(_i);
}
END_TEST

START_TEST(notes)
{
	setup_kind(_i);
	ps_elem *e = mk("e", 4, PS_DISCARD, 0), *o;
	ck_assert_int_eq(ps_elem_open(srv, "e", 0, &o), 0);
	_Atomic uint64_t *n = ps_elem_notes(e);
	ck_assert_ptr_nonnull(n);
	n[0] = 42;
	n[PS_NOTE_WORDS - 1] = 7;
	ck_assert_uint_eq(ps_note_get(o, 0), 42); /* seen through another handle */
	ck_assert_uint_eq(ps_note_get(o, PS_NOTE_WORDS - 1), 7);
	ck_assert_uint_eq(ps_note_get(o, PS_NOTE_WORDS), 0); /* out of range */
	ck_assert_uint_eq(ps_note_get(NULL, 0), 0);
	ps_elem_close(o);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

/* What a program takes code or orders from: its user's or root's file,
 * in directories nobody else may put files in.  Another user is played
 * by chown (as root, as CI runs). */
START_TEST(files_trusted_as_ssh_takes_keys)
{
	char d[] = "/tmp/es-trust-XXXXXX", f[128], sub[128], link[160], why[512];
	ck_assert_ptr_nonnull(mkdtemp(d));
	snprintf(f, sizeof(f), "%s/map.yaml", d);
	int fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = base_open_trusted(f, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	close(fd);
	ck_assert_int_eq(chmod(f, 0664), 0); /* its group may write it */
	ck_assert_int_eq(base_open_trusted(f, why, sizeof(why)), -EACCES);
	ck_assert_msg(strstr(why, "map.yaml is writable by its group (mode 0664)"), "%s", why);
	ck_assert_int_eq(chmod(f, 0644), 0);
	ck_assert_int_eq(chmod(d, 0777), 0); /* anyone may put a file beside it */
	ck_assert_int_eq(base_open_trusted(f, why, sizeof(why)), -EACCES);
	ck_assert_msg(strstr(why, "is writable by anyone (mode 0777)"), "%s", why);
	ck_assert_int_eq(chmod(d, 01777), 0); /* sticky, as /tmp: only an entry's owner may replace it */
	fd = base_open_trusted(f, why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	close(fd);
	ck_assert_int_eq(chmod(d, 0700), 0);
	ck_assert_int_eq(base_open_trusted(d, why, sizeof(why)), -EINVAL); /* not a regular file */
	snprintf(sub, sizeof(sub), "%s/none", d);
	ck_assert_int_eq(base_open_trusted(sub, why, sizeof(why)), -ENOENT);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(f, 65534, 65534), 0); /* another user's */
		ck_assert_int_eq(base_open_trusted(f, why, sizeof(why)), -EACCES);
		ck_assert_msg(strstr(why, "map.yaml is owned by uid 65534, not by you (uid 0) or root"), "%s", why);
		/* a link of ours to it is no way round */
		snprintf(link, sizeof(link), "%s/mine.yaml", d);
		ck_assert_int_eq(symlink(f, link), 0);
		ck_assert_int_eq(base_open_trusted(link, why, sizeof(why)), -EACCES);
		ck_assert_int_eq(chown(f, 0, 0), 0);
		ck_assert_int_eq(chown(d, 65534, 65534), 0); /* ours, in their directory */
		ck_assert_int_eq(base_open_trusted(f, why, sizeof(why)), -EACCES);
		ck_assert_msg(strstr(why, "its directory /tmp/es-trust-"), "%s", why);
		unlink(link);
	}
	unlink(f);
	rmdir(d);
}
END_TEST

START_TEST(strerror_messages)
{
	const int codes[] = { PS_EINVAL, PS_ENOMEM, PS_EEXIST, PS_ENOENT, PS_EACCES,
			      PS_ETIMEDOUT, PS_EROFS, PS_ENOSPC, PS_ENODATA, PS_EAGAIN,
			      PS_EBADNAME, PS_ESIZE, PS_ETHRESHOLD, PS_EDISCARDED,
			      PS_EBADSEG };
	const size_t n = sizeof(codes) / sizeof(codes[0]);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_ne(ps_strerror(codes[i]), "unknown error");
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(ps_strerror(codes[i]), ps_strerror(codes[j]));
	}
	ck_assert_str_eq(ps_strerror(0), "success");
	ck_assert_str_eq(ps_strerror(-999999), "unknown error");
	ck_assert_str_eq(ps_strerror(12), "unknown error");
}
END_TEST

/* The clock and deadlines every layer waits by. */
START_TEST(clock_and_deadlines)
{
	uint64_t a = base_now_ns(), b = base_now_ns();
	ck_assert(a > 0 && b >= a);
	ck_assert(base_deadline_ns(PS_FOREVER) == UINT64_MAX);
	ck_assert(base_deadline_ns(-7) == UINT64_MAX);
	ck_assert_int_eq(base_ms_left(UINT64_MAX), PS_FOREVER);
	ck_assert_int_eq(base_ms_left(base_deadline_ns(0)), 0);
	ck_assert_int_eq(base_ms_left(a), 0); /* passed */
	ck_assert_int_eq(base_ms_left(0), 0);
	uint64_t d = base_deadline_ns(60000);
	ck_assert(d >= b + 60000ull * 1000000 && d != UINT64_MAX);
	int left = base_ms_left(d);
	ck_assert(left > 0 && left <= 60000);
	/* a deadline further than INT_MAX ms is capped, not wrapped */
	ck_assert_int_eq(base_ms_left(base_now_ns() + 3000000000ull * 1000000), 0x7fffffff);
}
END_TEST

/* A sweep that keeps what it read copies only what is new, and is exact:
 * an element emptied by a taker since is empty, not its old tuple. */
START_TEST(read_latest_since)
{
	setup_kind(_i);
	enum { N = 300 }; /* more than the sweep fetches ahead */
	ps_elem *e[N];
	char name[16];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		e[i] = mk(name, 4, PS_DISCARD, 0);
		if (i % 7) /* every seventh stays empty */
			put(e[i], 0);
	}
	static uint8_t out[N * TT_SIZE];
	uint64_t idx[N];
	int st[N];
	for (int i = 0; i < N; i++)
		idx[i] = PS_NONE;
	ck_assert_int_eq(ps_read_latest_since(e, N, out, idx, st), N - (N + 6) / 7);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(st[i], i % 7 ? 0 : PS_ENODATA);
		ck_assert_uint_eq(idx[i], i % 7 ? 0 : PS_NONE);
		if (i % 7)
			ck_assert(tuple_ok(out + i * TT_SIZE) && tuple_idx(out + i * TT_SIZE) == 0);
	}
	/* nothing new: nothing copied (out poisoned to show it is not touched) */
	memset(out, 0xa5, sizeof(out));
	ck_assert_int_eq(ps_read_latest_since(e, N, out, idx, st), N - (N + 6) / 7);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(st[i], i % 7 ? PS_SAME : PS_ENODATA);
		ck_assert_uint_eq(out[i * TT_SIZE], 0xa5);
	}
	/* new tuples in a few, the first tuple in an empty one */
	put(e[1], 1);
	put(e[1], 2);
	put(e[250], 1);
	put(e[7], 0);
	ck_assert_int_eq(ps_read_latest_since(e, N, out, idx, st), N - (N + 6) / 7 + 1);
	ck_assert_int_eq(st[1], 0);
	ck_assert_uint_eq(idx[1], 2);
	ck_assert_uint_eq(tuple_idx(out + 1 * TT_SIZE), 2);
	ck_assert_int_eq(st[250], 0);
	ck_assert_uint_eq(tuple_idx(out + 250 * TT_SIZE), 1);
	ck_assert_int_eq(st[7], 0);
	ck_assert_int_eq(st[2], PS_SAME);
	/* a taker empties e[3]: the sweep says so, not what it kept */
	uint8_t t[TT_SIZE];
	ck_assert_int_eq(ps_take(e[3], t, 0, NULL), 0);
	ck_assert_int_eq(ps_read_latest_since(e, N, out, idx, st), N - (N + 6) / 7);
	ck_assert_int_eq(st[3], PS_ENODATA);
	ck_assert_uint_eq(idx[3], PS_NONE);
	/* an index the caller does not hold is read again */
	idx[4] = 17;
	ck_assert_int_eq(ps_read_latest_since(e, 5, out, idx, st), 3);
	ck_assert_int_eq(st[4], 0);
	ck_assert_uint_eq(idx[4], 0);
	/* errors */
	ck_assert_int_eq(ps_read_latest_since(NULL, 1, out, idx, st), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest_since(e, -1, out, idx, st), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest_since(e, 1, NULL, idx, st), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest_since(e, 1, out, NULL, st), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest_since(e, 1, out, idx, NULL), PS_EINVAL);
	ps_elem *holes[2] = { e[0], NULL };
	ck_assert_int_eq(ps_read_latest_since(holes, 2, out, idx, st), PS_EINVAL);
	ck_assert_int_eq(ps_read_latest_since(e, 0, NULL, idx, st), 0);
	for (int i = 0; i < N; i++)
		ps_elem_close(e[i]);
	teardown_kind(_i);
}
END_TEST

/* The writer's own path stores what ps_write would: readers see the same
 * tuples, in order, past the threshold, and a sleeping reader is woken. */
static void *late_put(void *arg)
{
	struct ps_writer *w = arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	uint64_t i;
	_Atomic uint64_t *s = ps_put_begin(w, &i);
	for (int k = 0; k < 5; k++)
		atomic_store_explicit(&s[k], 1000 + i, memory_order_relaxed);
	ps_put_end(w, i);
	return NULL;
}

START_TEST(writer_path)
{
	setup_kind(_i);
	struct ps_elem_attr a = { .tuple_size = 36, .threshold = 4, .mode = PS_DISCARD };
	ps_elem *e = NULL;
	ck_assert_int_eq(ps_elem_create(srv, "w", &a, &e), 0);
	struct ps_writer w;
	ck_assert_int_eq(ps_writer_init(e, 32, &w), PS_EINVAL); /* another size */
	ck_assert_int_eq(ps_writer_init(NULL, 36, &w), PS_EINVAL);
	ck_assert_int_eq(ps_writer_init(e, 36, &w), 0);
	for (uint64_t n = 0; n < 6; n++) {
		uint64_t i;
		_Atomic uint64_t *s = ps_put_begin(&w, &i);
		ck_assert_uint_eq(i, n);
		for (int k = 0; k < 4; k++)
			atomic_store_explicit(&s[k], n * 10 + (uint64_t)k, memory_order_relaxed);
		atomic_store_explicit(&s[4], 0xabcd0000u + n, memory_order_relaxed); /* the last 4 bytes */
		ps_put_end(&w, i);
	}
	uint8_t t[36];
	uint64_t oldest = 0;
	ck_assert_int_eq(ps_read(e, 1, t, 0, &oldest), PS_EDISCARDED);
	ck_assert_uint_eq(oldest, 2);
	for (uint64_t n = 2; n < 6; n++) {
		uint64_t v[4];
		uint32_t last;
		ck_assert_int_eq(ps_read(e, n, t, 0, NULL), 0);
		memcpy(v, t, 32);
		memcpy(&last, t + 32, 4);
		for (int k = 0; k < 4; k++)
			ck_assert_uint_eq(v[k], n * 10 + (uint64_t)k);
		ck_assert_uint_eq(last, 0xabcd0000u + n);
	}
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, late_put, &w), 0);
	ck_assert_int_eq(ps_read(e, 6, t, 5000, NULL), 0); /* asleep until the put */
	uint64_t v0;
	memcpy(&v0, t, 8);
	ck_assert_uint_eq(v0, 1006);
	pthread_join(th, NULL);
	ps_elem_close(e);
	/* a flow element, or one of many writers, goes through ps_write */
	a.mode = PS_FLOW;
	ck_assert_int_eq(ps_elem_create(srv, "f", &a, &e), 0);
	ck_assert_int_eq(ps_writer_init(e, 36, &w), PS_EINVAL);
	ps_elem_close(e);
	a.mode = PS_DISCARD;
	a.flags = PS_MULTI_WRITER;
	ck_assert_int_eq(ps_elem_create(srv, "m", &a, &e), 0);
	ck_assert_int_eq(ps_writer_init(e, 36, &w), PS_EINVAL);
	ps_elem_close(e);
	teardown_kind(_i);
}
END_TEST

/* The one hash of the tables: every slot in range, keys that differ only
 * in their low bits (pointers, counters) or high bits spread over the
 * table, strings and word sequences told apart by where they split. */
START_TEST(one_hash_for_the_tables)
{
	for (size_t cap = 2; cap <= (1u << 16); cap <<= 1)
		for (uint64_t k = 0; k < 1000; k++) {
			ck_assert_uint_lt(base_hash_slot(k, cap), cap);
			ck_assert_uint_lt(base_hash_slot(k << 40, cap), cap);
			ck_assert_uint_lt(base_probe(base_hash_slot(k, cap), cap), cap);
		}
	ck_assert_uint_eq(base_probe(7, 8), 0);
	/* 1024 keys 16 apart (aligned pointers) and 1024 apart in the high
	 * word: in a table of 2048, at least 3 in 4 slots of their own */
	enum { N = 1024, CAP = 2048 };
	static unsigned char used[CAP];
	for (int pass = 0; pass < 2; pass++) {
		memset(used, 0, sizeof(used));
		int alone = 0;
		for (uint64_t k = 0; k < N; k++) {
			size_t s = base_hash_slot(pass ? k << 32 : 0x7f0000001000ull + 16 * k, CAP);
			alone += !used[s]++;
		}
		ck_assert_int_ge(alone, N * 3 / 4);
	}
	ck_assert_uint_ne(base_hash_str(base_hash_str(BASE_HASH_SEED, "ab"), "c"),
			  base_hash_str(base_hash_str(BASE_HASH_SEED, "a"), "bc"));
	ck_assert_uint_ne(base_hash_fold(base_hash_fold(BASE_HASH_SEED, 1), 2), base_hash_fold(base_hash_fold(BASE_HASH_SEED, 2), 1));
	ck_assert_uint_eq(base_hash_str(BASE_HASH_SEED, "x"), base_hash_str(BASE_HASH_SEED, "x"));
}
END_TEST

Suite *pastset_suite(void)
{
	Suite *s = suite_create("pastset");
	TCase *tc = tcase_create("ops");
	tcase_add_test(tc, one_hash_for_the_tables);
	tcase_add_loop_test(tc, create_open_close, 0, 2);
	tcase_add_loop_test(tc, create_errors, 0, 2);
	tcase_add_loop_test(tc, write_read_in_order, 0, 2);
	tcase_add_loop_test(tc, discard_threshold, 0, 2);
	tcase_add_loop_test(tc, tuple_sizes, 0, 2);
	tcase_add_loop_test(tc, read_timeout, 0, 2);
	tcase_add_loop_test(tc, blocking_read_wakes, 0, 2);
	tcase_add_loop_test(tc, take_fifo, 0, 2);
	tcase_add_loop_test(tc, take_after_discard, 0, 2);
	tcase_add_loop_test(tc, flow_control_waits, 0, 2);
	tcase_add_loop_test(tc, flow_writer_blocks_until_taken, 0, 2);
	tcase_add_loop_test(tc, null_arguments, 0, 2);
	tcase_add_loop_test(tc, notes, 0, 2);
	tcase_add_loop_test(tc, read_latest_since, 0, 2);
	tcase_add_loop_test(tc, writer_path, 0, 2);
	tcase_add_test(tc, out_of_memory);
	tcase_add_test(tc, strerror_messages);
	tcase_add_test(tc, files_trusted_as_ssh_takes_keys);
	tcase_add_test(tc, clock_and_deadlines);
	suite_add_tcase(s, tc);
	return s;
}
