/* test_archive.c - archives written and read back, refused when not whole or malformed; a thread's events as nested regions and points. */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/convert.h"
#include "tests/unit/suites.h"

static char dir[4096];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/esartest.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct es_trace tuple(uint64_t start, uint64_t end, unsigned op, uint32_t element, uint32_t arg)
{
	return (struct es_trace){ .start = start, .end = end, .op = (uint16_t)op, .element = element,
				  .size = 16, .arg = arg, .comm = 0 };
}

/* communicator n of the archive: one group (or two, for an intercommunicator) */
static void set_comm(ar_writer *w, int n, uint64_t id, unsigned flags, uint32_t s0, const int *m0, uint32_t s1,
		     const int *m1)
{
	const uint32_t size[2] = { s0, s1 };
	const int *const members[2] = { m0, m1 };
	ck_assert_int_eq(ar_set_comm(w, n, id, flags, size, members), 0);
}

/* an archive of two ranks: WORLD, and a communicator whose rank 1 nobody named */
static void write_two_ranks(const char *where)
{
	char err[512] = "";
	ar_writer *w;
	ck_assert_int_eq(ar_create(where, "job7", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "job7.r1", "rank1.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "job7.r0", "rank0.thread0"), 0);
	const int world[] = { 0, 1 }, half[] = { 1, -1 };
	set_comm(w, 1, 0x900abc, 0, 2, half, 0, NULL);
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	struct es_trace t = tuple(100, 200, ES_OP_MPI_SEND, 1, 5);
	ck_assert_int_eq(ar_write(w, &t, 0), 0);
	t = tuple(150, 250, ES_OP_MPI_RECV, 0, 5);
	t.seq = 3u << 16 | 1; /* site 3 */
	ck_assert_int_eq(ar_write(w, &t, 1), 0);
	ck_assert_uint_eq(ar_written(w), 2);
	/* thread 1's site 3: a frame of two with a tab-free odd name, one not known */
	const struct ar_frame fr[2] = { { "recv_it", "/src/a b.c", 12, "/bin/app", 0x1234 },
					{ NULL, NULL, 0, "/lib/libx.so", 0x99 } };
	ck_assert_int_eq(ar_set_site(w, 1, 3, fr, 2), 0);
	ck_assert_int_eq(ar_set_site(w, 1, 0, fr, 1), -EINVAL); /* 0 is "not known" */
	struct ar_rank rk = { .rank = 1, .pid = 77, .host = "h\tx", .cmd = "./app\targ", .wall_ns = 9, .ns = 3 };
	ck_assert_int_eq(ar_set_rank(w, &rk), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 3, .before = 4, .why = "the job ended" }, err, sizeof(err)), 0);
}

START_TEST(archive_round_trip)
{
	char err[512] = "", sub[4200];
	snprintf(sub, sizeof(sub), "%s/a", dir);
	write_two_ranks(sub);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(ar_job(a), "job7");
	ck_assert_uint_eq(ar_nevents(a), 2);
	ck_assert_uint_eq(ar_lost(a), 3);
	ck_assert_int_eq(ar_events(a)[1].thread, 1);
	ck_assert_uint_eq(ar_events(a)[1].t.op, ES_OP_MPI_RECV);
	ck_assert_uint_eq(ar_events(a)[0].t.end, 200);
	ck_assert_int_eq(ar_nthreads(a), 2);
	ck_assert_str_eq(ar_thread(a, 0)->name, "rank0.thread0");
	ck_assert_int_eq(ar_thread(a, 1)->rank, 1);
	/* by number: the world, then the one whose rank 1 nobody named */
	ck_assert_int_eq(ar_ncomms(a), 2);
	ck_assert_uint_eq(ar_comm(a, 0)->id, ES_COMM_WORLD_ID);
	ck_assert(ar_comm(a, 0)->flags & ES_COMMS_WORLD);
	ck_assert_int_eq(ar_comm(a, 0)->members[0][1], 1);
	const struct ar_comm *c = ar_comm(a, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->id, 0x900abc);
	ck_assert_int_eq(c->members[0][0], 1);
	ck_assert_int_eq(c->members[0][1], -1);
	ck_assert_int_eq(ar_comm_rank(c, 1), 0); /* world rank 1 is its rank 0 */
	ck_assert_int_eq(ar_comm_rank(c, 0), -1);
	ck_assert_ptr_null(ar_comm(a, 2));
	const struct ar_site *s = ar_site(a, ar_events(a)[1].thread, ES_TRACE_SITE(&ar_events(a)[1].t));
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->nframes, 2);
	ck_assert_str_eq(s->frames[0].function, "recv_it");
	ck_assert_str_eq(s->frames[0].file, "/src/a b.c");
	ck_assert_int_eq(s->frames[0].line, 12);
	ck_assert_uint_eq(s->frames[0].offset, 0x1234);
	ck_assert_str_eq(s->frames[1].function, "-");
	ck_assert_str_eq(s->frames[1].module, "/lib/libx.so");
	ck_assert_ptr_null(ar_site(a, 0, 3));
	ck_assert_ptr_null(ar_rank(a, 0));
	ck_assert_str_eq(ar_rank(a, 1)->host, "h x"); /* a tab would break its line */
	ck_assert_str_eq(ar_rank(a, 1)->cmd, "./app arg");
	ck_assert_uint_eq(ar_rank(a, 1)->wall_ns, 9);
	ar_close(a);
	/* a second archive in the same place is refused, the first untouched */
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "job8", &w, err, sizeof(err)), -EEXIST);
	ck_assert_str_eq(strstr(err, "already holds an archive") ? "yes" : err, "yes");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), 0);
	ar_close(a);
}
END_TEST

/* What an archive lacks of what its job said is said, not left to show
 * as "0 messages": a rank without its process, a communicator its events
 * name and it does not describe. */
START_TEST(archive_says_what_it_lacks)
{
	char err[512] = "", sub[4200], note[512];
	snprintf(sub, sizeof(sub), "%s/a", dir);
	write_two_ranks(sub); /* rank 0's process is not said */
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(ar_missing_note(a, note, sizeof(note)), 0);
	ck_assert_str_eq(note, "the archive lacks what its job said of 1 of its 2 ranks and of 0 communicators its "
			       "events name (its recorder could not read them): their calls are here, their "
			       "processes, messages and collectives are not");
	ar_close(a);
	snprintf(sub, sizeof(sub), "%s/b", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	for (int r = 0; r < 2; r++) {
		char proc[16], name[32];
		snprintf(proc, sizeof(proc), "j.r%d", r);
		snprintf(name, sizeof(name), "rank%d.thread0", r);
		ck_assert_int_eq(ar_set_thread(w, r, proc, name), 0);
		struct ar_rank rk = { .rank = r, .pid = 7 + r, .host = "h", .cmd = "./app" };
		ck_assert_int_eq(ar_set_rank(w, &rk), 0);
		struct es_trace t = tuple(100, 200, ES_OP_MPI_SEND, (uint32_t)(1 - r), 5); /* on communicator 0 */
		ck_assert_int_eq(ar_write(w, &t, (uint32_t)r), 0);
	}
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(ar_missing_note(a, note, sizeof(note)), 0);
	ck_assert_msg(strstr(note, "of 0 of its 2 ranks and of 1 communicator its events name"), "%s", note);
	ar_close(a);
	snprintf(sub, sizeof(sub), "%s/c", dir); /* everything said: nothing to say */
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "j.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_rank(w, &(struct ar_rank){ .rank = 0, .pid = 7, .host = "h", .cmd = "./a" }), 0);
	const int world[] = { 0 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 1, world, 0, NULL);
	struct es_trace t = tuple(100, 200, ES_OP_MPI_BARRIER, ES_NONE, 5);
	ck_assert_int_eq(ar_write(w, &t, 0), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(ar_missing_note(a, note, sizeof(note)), 0);
	ck_assert_str_eq(note, "");
	ar_close(a);
}
END_TEST

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(archive_refused_when_not_whole)
{
	char err[512] = "", sub[4200], p[4300];
	snprintf(sub, sizeof(sub), "%s/b", dir);
	/* abandoned before a checkpoint: the archive ar_create made, empty, and
	 * says so; the event given was never on disk */
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	struct es_trace t = tuple(1, 2, ES_OP_MPI_SEND, 1, 5);
	ck_assert_int_eq(ar_set_thread(w, 0, "j.r0", "rank0.thread0"), 0); /* named first (writer.c, invariant 5) */
	ck_assert_int_eq(ar_write(w, &t, 0), 0);
	ar_abandon(w);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert(ar_partial(a, NULL));
	ck_assert_uint_eq(ar_nevents(a), 0);
	ar_close(a);
	/* nothing there: no archive, said so */
	snprintf(sub, sizeof(sub), "%s/nothing", dir);
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/nothing: No such file or directory"), "%s", err);
	ck_assert_ptr_null(a);
	/* whole, then damaged in each file */
	snprintf(sub, sizeof(sub), "%s/c", dir);
	write_two_ranks(sub);
	snprintf(p, sizeof(p), "%s/INFO", sub);
	put(p, "archive: 3\njob: job7\nevents: 2\nthis line\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/INFO:4: expected KEY: VALUE"), "%s", err);
	put(p, "archive: 4\njob: job7\nevents: 2\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/INFO:1: expected archive: 3, got version 4"), "%s", err);
	put(p, "archive: 2\njob: job7\nevents: 2\n"); /* INFO and events of two versions */
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/events: expected ESAR version 2, as INFO says"), "%s", err);
	put(p, "archive: 1\njob: job7\nevents: 2\n"); /* before communicators were numbered */
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/INFO:1: archive: 1, from EventSpace before 0.14"), "%s", err);
	put(p, "archive: 3\njob: job7\nevents: 3\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/events: 2 events, INFO says 3"), "%s", err);
	put(p, "archive: 3\njob: job7\nevents: 2\n");
	snprintf(p, sizeof(p), "%s/threads", sub);
	put(p, "0\tjob7.r0\trank0.thread0\n2\tjob7.r1\trank1.thread0\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/threads:2: expected 1 TAB PROCESS TAB NAME"), "%s", err);
	put(p, "0\tjob7.r0\trank0.thread0\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/sites:1: thread 1, but the archive holds 1 threads"), "%s", err);
	/* a rank beyond the threads and MPI_COMM_WORLD: refused before anything is sized by it */
	put(p, "0\tjob7.r0\trank0.thread0\n1\tjob7.r2147483647\trank1.thread0\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/threads:2: rank ") && strstr(err, " (job7.r2147483647), but the archive "
			     "holds 2 threads and MPI_COMM_WORLD 2 ranks: expected a rank below 2"), "%s", err);
	put(p, "0\tjob7.r0\trank0.thread0\n1\tjob7.r1\trank1.thread0\n");
	snprintf(p, sizeof(p), "%s/comms", sub);
	put(p, "0 1 world 2 0 1\n1 abc comm 2 x\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/comms:2: expected NUMBER ID world|comm|window|inter"), "%s", err);
	put(p, "0 1 world 2 0 1\n2 abc comm 1 0\n"); /* numbers in order */
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	put(p, "0 1 world 2 0 1\n1 abc inter 1 0\n"); /* an intercommunicator has two groups */
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	put(p, "0 1 world 2 0 1\n1 abc inter 1 0 | 1 -\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), 0);
	ck_assert_uint_eq(ar_comm(a, 1)->size[1], 1);
	ck_assert_int_eq(ar_comm(a, 1)->members[1][0], -1);
	ar_close(a);
	/* call sites: each line whole, frames in order, no site twice */
	snprintf(p, sizeof(p), "%s/sites", sub);
	static const struct { const char *text, *says; } bad_sites[] = {
		{ "0\t1\t0\tm\t1f\tf\tx.c\n", "/sites:1: expected THREAD SITE FRAME MODULE OFFSET" },
		{ "0\t0\t0\tm\t1f\tf\tx.c\t3\n", "/sites:1: expected THREAD SITE FRAME" }, /* site 0 */
		{ "0\t1\t0\tm\tzz\tf\tx.c\t3\n", "/sites:1: expected THREAD SITE FRAME" }, /* no hex */
		{ "0\t1\t1\tm\t1f\tf\tx.c\t3\n", "/sites:1: expected frame 0 of site 1 of thread 0, got frame 1" },
		{ "0\t1\t0\tm\t1f\tf\tx.c\t3\n0\t2\t0\tm\t2f\tg\tx.c\t4\n0\t1\t0\tm\t1f\tf\tx.c\t3\n",
		  "/sites: a site is given twice" },
	};
	for (size_t i = 0; i < sizeof(bad_sites) / sizeof(bad_sites[0]); i++) {
		put(p, bad_sites[i].text);
		ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad_sites[i].says), "%zu: %s", i, err);
	}
	put(p, "0\t1\t0\t/bin/app\t1f\tf\tx.c\t3\n0\t1\t1\t/bin/app\t4a\tmain\tx.c\t9\n"
	       "1\t1\t0\t/bin/app\t2f\t-\t-\t0\n");
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(ar_nsites(a), 2);
	const struct ar_site *site = ar_site(a, 0, 1);
	ck_assert_ptr_nonnull(site);
	ck_assert_int_eq(site->nframes, 2);
	ck_assert_str_eq(site->frames[1].function, "main");
	ck_assert_int_eq(site->frames[1].line, 9);
	ck_assert_uint_eq(site->frames[1].offset, 0x4a);
	ck_assert_str_eq(ar_site(a, 1, 1)->frames[0].file, "-");
	ck_assert_ptr_null(ar_site(a, 1, 2));
	ck_assert_ptr_null(ar_site(a, 0, 0));
	ar_close(a);
	unlink(p);
	/* ranks: each line whole */
	snprintf(p, sizeof(p), "%s/ranks", sub);
	put(p, "0\thost\t12\t1700000000000000000\t5\t./app -x\n1\thost\tpid\t1\t2\tapp\n");
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/ranks:2: expected RANK HOST PID WALL_NS NS COMMAND"), "%s", err);
	put(p, "1\th1\t12\t1700000000000000000\t5\t./app -x\n");
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_null(ar_rank(a, 0));
	ck_assert_str_eq(ar_rank(a, 1)->cmd, "./app -x");
	ck_assert_int_eq(ar_rank(a, 1)->pid, 12);
	ck_assert_uint_eq(ar_rank(a, 1)->ns, 5);
	ar_close(a);
	unlink(p);
	/* an op no collector writes */
	snprintf(sub, sizeof(sub), "%s/d", dir);
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "j.r0", "rank0.thread0"), 0);
	t = tuple(1, 2, 0x1fff, 1, 5);
	ck_assert_int_eq(ar_write(w, &t, 0), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/events: event 0 has op 8191, which no collector writes"), "%s", err);
	ck_assert_int_eq(es_message(0x1fff), 0);
	/* what tuples say of messages (collectors.h) */
	ck_assert_int_eq(es_message(ES_OP_MPI_SENDRECV), 1);
	ck_assert_int_eq(es_message(ES_OP_MPI_SENDRECV | ES_OP_DONE), -1);
	ck_assert_int_eq(es_message(ES_OP_MPI_IRECV), 0); /* posted, not received */
	ck_assert_int_eq(es_message(ES_OP_MPI_IRECV | ES_OP_DONE), -1);
	ck_assert_int_eq(es_message(ES_OP_MPI_IRECV | ES_OP_DONE | ES_OP_FAILED), 0); /* cancelled */
	ck_assert_int_eq(es_message(ES_OP_MPI_ISEND), 1);
	ck_assert_int_eq(es_message(ES_OP_MPI_ISEND | ES_OP_DONE), 0);
	ck_assert_int_eq(es_msg_kind(ES_OP_MPI_ISEND | ES_OP_DONE), ES_MSG_ISEND_DONE);
	ck_assert_int_eq(es_message(ES_OP_MPI_START | ES_OP_RECV), 0);
	ck_assert_int_eq(es_msg_kind(ES_OP_MPI_START | ES_OP_RECV), ES_MSG_IRECV_REQ);
	ck_assert_int_eq(es_message(ES_OP_MPI_RECV_INIT | ES_OP_DONE), -1);
	/* no directory can be made */
	ck_assert_int_eq(ar_create("/proc/no/such", "j", &w, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/proc/no/such: No such file or directory");
}
END_TEST

/* thread 0's items of the events given, as text: E3 L3 R5 C5 ... */
static void items_of(const struct es_trace *t, int n, char *out, size_t len, struct ar_out_stats *st)
{
	char err[512] = "", sub[4200];
	static int k;
	snprintf(sub, sizeof(sub), "%s/i%d", dir, k++);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "j.r0", "rank0.thread0"), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ar_write(w, &t[i], 0), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	struct ar_item *items;
	size_t ni;
	ck_assert_int_eq(ar_thread_items(a, 0, &items, &ni, st), 0);
	size_t used = 0;
	out[0] = 0;
	for (size_t i = 0; i < ni; i++)
		used += (size_t)snprintf(out + used, len - used, "%s%c%u@%llu", i ? " " : "",
					 "ELRC"[items[i].kind], items[i].event, (unsigned long long)items[i].time);
	free(items);
	ar_close(a);
}

START_TEST(items_nest_and_clip)
{
	char got[512];
	struct ar_out_stats st = { 0 };
	/* nested, overlapping, and one after the other ending as the next starts */
	struct es_trace t[] = {
		tuple(10, 100, ES_OP_WRITE, 0, 0), tuple(20, 30, ES_OP_READ, 0, 0),
		tuple(90, 120, ES_OP_TAKE, 0, 0), tuple(120, 130, ES_OP_READ, 0, 0),
	};
	items_of(t, 4, got, sizeof(got), &st);
	ck_assert_str_eq(got, "E0@10 E1@20 L1@30 E2@90 L2@100 L0@100 E3@120 L3@130");
	ck_assert_uint_eq(st.clipped, 1);
	/* a poll streak from before the send between its polls starts after it;
	 * a nonblocking collective's completion: its request at the call, its
	 * completion inside the wait */
	struct es_trace m[] = {
		tuple(10, 20, ES_OP_MPI_IALLREDUCE, 0xffffffffu, 1),
		tuple(25, 30, ES_OP_MPI_SEND, 1, 5),
		tuple(15, 50, ES_OP_MPI_TESTANY, 1, 40),
		tuple(60, 80, ES_OP_MPI_WAIT, 0xffffffffu, 0),
		tuple(10, 75, ES_OP_MPI_IALLREDUCE | ES_OP_DONE, 0xffffffffu, 1),
	};
	memset(&st, 0, sizeof(st));
	items_of(m, 5, got, sizeof(got), &st);
	ck_assert_str_eq(got, "E0@10 R4@10 L0@20 E1@25 L1@30 E2@30 L2@50 E3@60 C4@75 L3@80");
	ck_assert_uint_eq(st.clipped, 0);
}
END_TEST

/* under the sanitizers too: each converter reads every event and writes its format */
static void put_ev(ar_writer *w, struct es_trace t, int thread)
{
	ck_assert_int_eq(ar_write(w, &t, thread), 0);
}

/* A numbered message end as the collector writes it, numbered n (tag 5, WORLD) */
static struct es_trace numbered(uint64_t t, unsigned op, uint32_t peer, uint64_t n)
{
	struct es_trace e = tuple(t, t + 10, op | ES_OP_NUMBERED, peer, 5);
	/* a site above; the number whole below 2^15, else from its channel's mark */
	e.seq = 7u << 16 | (n < ES_NUM_WHOLE ? ES_NUM_WHOLE | (uint32_t)n : (uint32_t)(n & (ES_NUM_WHOLE - 1)));
	return e;
}

static struct es_trace chan_mark(uint64_t t, uint32_t peer, bool recv, uint64_t count)
{
	struct es_trace e = tuple(t, t, ES_OP_MPI_CHANNEL | (recv ? ES_OP_RECV : 0), peer, 5);
	e.size = (uint32_t)count;
	e.seq = (uint32_t)(count >> 32);
	return e;
}

/* Messages pair by number: sends 1 to 3 not recorded leave receives 1 to
 * 3 alone, never joined to sends 4 and 5; numbers past 2^15 through
 * marks, not before one; an end without a number, and a channel two
 * threads of a rank send on, alone and said; a number twice, the earlier
 * end paired, in a channel's slots as in the table of keys (a channel
 * whose numbers spread wide); an archive without numbers pairs by order. */
START_TEST(messages_pair_by_number)
{
	char err[512] = "", sub[4200];
	snprintf(sub, sizeof(sub), "%s/m", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "jm", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "jm.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "jm.r1", "rank1.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 2, "jm.r1", "rank1.thread1"), 0);
	const int world[] = { 0, 1 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	/* rank 0 -> 1: sends 0, 4, 5 recorded (events 0-2), receives 0..5 (3-8) */
	uint64_t sends[] = { 0, 4, 5 };
	for (int i = 0; i < 3; i++)
		put_ev(w, numbered(100 + 100 * sends[i], ES_OP_MPI_SEND, 1, sends[i]), 0);
	for (uint64_t n = 0; n < 6; n++)
		put_ev(w, numbered(150 + 100 * n, ES_OP_MPI_RECV, 0, n), 1);
	/* 70,000 on (events 9-12): marks, then a send and its receive */
	put_ev(w, chan_mark(5000, 1, false, 70000), 0);
	put_ev(w, chan_mark(5000, 0, true, 70000), 1);
	put_ev(w, numbered(5100, ES_OP_MPI_SEND, 1, 70002), 0);
	put_ev(w, numbered(5200, ES_OP_MPI_RECV, 0, 70002), 1);
	/* a receive without a number (13); one whose mark is not here (6100) */
	put_ev(w, tuple(6000, 6010, ES_OP_MPI_RECV, 0, 5), 1);
	struct es_trace nomark = numbered(6100, ES_OP_MPI_RECV, 0, 40000);
	nomark.arg = 6;
	put_ev(w, nomark, 1);
	/* rank 1's two threads both send to 0 (14, 15); 0 receives both (16, 17) */
	put_ev(w, numbered(7000, ES_OP_MPI_SEND, 0, 0), 1);
	put_ev(w, numbered(7001, ES_OP_MPI_SEND, 0, 0), 2);
	put_ev(w, numbered(7100, ES_OP_MPI_RECV, 1, 0), 0);
	put_ev(w, numbered(7200, ES_OP_MPI_RECV, 1, 1), 0);
	/* tag 9, 0 -> 1, numbers close together (a channel's slots, not the
	 * table of keys, pair them): sends 0, 1, 3 (7300-7320), receives 0, 2,
	 * 3, 3 again (a number twice: bytes nobody should trust; the earlier
	 * end is the message's, the later alone) and 1 (7400-7440) */
	uint64_t s9[] = { 0, 1, 3 }, r9[] = { 0, 2, 3, 3, 1 };
	for (int i = 0; i < 3; i++) {
		struct es_trace e = numbered(7300 + 10 * (uint64_t)i, ES_OP_MPI_SEND, 1, s9[i]);
		e.arg = 9;
		put_ev(w, e, 0);
	}
	for (int i = 0; i < 5; i++) {
		struct es_trace e = numbered(7400 + 10 * (uint64_t)i, ES_OP_MPI_RECV, 0, r9[i]);
		e.arg = 9;
		put_ev(w, e, 1);
	}
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	struct ar_msgs m;
	ck_assert_int_eq(ar_msgs_match(a, &m), 0);
	ck_assert(m.numbered);
	/* the archive keeps each thread's events in order: find them by stamp */
	uint32_t at[8000] = { 0 };
	for (size_t i = 0; i < ar_nevents(a); i++)
		at[ar_events(a)[i].t.start] = (uint32_t)i;
	ck_assert_uint_eq(m.other[at[100]], at[150]);   /* 0 with 0 */
	ck_assert_uint_eq(m.other[at[150]], at[100]);
	ck_assert_uint_eq(m.other[at[500]], at[550]);   /* 4 with 4, never with 1 */
	ck_assert_uint_eq(m.other[at[600]], at[650]);
	for (int n = 1; n <= 3; n++)
		ck_assert_uint_eq(m.other[at[150 + 100 * n]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[5100]], at[5200]);  /* past 2^16 */
	ck_assert_uint_eq(m.other[at[5000]], AR_MSG_NOT); /* a mark is no end */
	ck_assert_uint_eq(m.other[at[6000]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[6100]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[7000]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[7200]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[7300]], at[7400]); /* tag 9: 0 with 0 */
	ck_assert_uint_eq(m.other[at[7310]], at[7440]); /* 1 with 1, received last */
	ck_assert_uint_eq(m.other[at[7320]], at[7420]); /* 3 with the earlier 3 */
	ck_assert_uint_eq(m.other[at[7430]], AR_MSG_ALONE);
	ck_assert_uint_eq(m.other[at[7410]], AR_MSG_ALONE); /* 2: its send not recorded */
	ck_assert_uint_eq(m.pairs, 7);
	ck_assert_uint_eq(m.sends_alone, 2);
	ck_assert_uint_eq(m.recvs_alone, 9);
	ck_assert_uint_eq(m.unnumbered, 2);
	ck_assert_uint_eq(m.shared, 2);
	char said[600];
	ck_assert_uint_gt(ar_msgs_said(&m, said, sizeof(said)), 0);
	ck_assert_msg(strstr(said, "2 sends and 9 receives without their other end") && strstr(said, "2 of them had no number") &&
		      strstr(said, "2 on channels two threads of a rank used"), "%s", said);
	ar_msgs_free(&m);
	ar_close(a);
	/* without numbers (an older archive): the k-th send with the k-th receive */
	snprintf(sub, sizeof(sub), "%s/o", dir);
	ck_assert_int_eq(ar_create(sub, "jo", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "jo.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "jo.r1", "rank1.thread0"), 0);
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	put_ev(w, tuple(10, 20, ES_OP_MPI_SEND, 1, 5), 0);
	put_ev(w, tuple(30, 40, ES_OP_MPI_SEND, 1, 5), 0);
	put_ev(w, tuple(35, 45, ES_OP_MPI_RECV, 0, 5), 1);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(ar_msgs_match(a, &m), 0);
	ck_assert(!m.numbered);
	ck_assert_uint_eq(m.pairs, 1);
	ck_assert_uint_eq(m.sends_alone, 1);
	ar_msgs_free(&m);
	ar_close(a);
}
END_TEST

/* A collective's arrows go the way its data goes: from a Bcast's root to
 * the others, from the others to a Reduce's root, from the last in to the
 * others of a Barrier; one that would end before it began is not drawn,
 * and counted. */
START_TEST(json_collective_arrows)
{
	char err[512] = "", sub[4200], out[4300];
	snprintf(sub, sizeof(sub), "%s/c", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "jc", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "jc.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "jc.r1", "rank1.thread0"), 0);
	const int world[] = { 0, 1 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	/* Bcast from rank 1, which came last: rank 0 waited for it, the arrow
	 * from it; Reduce to rank 0: rank 1 left at once, its arrow to the
	 * root; a Barrier rank 0 left before rank 1 came, by these clocks */
	put_ev(w, tuple(50, 150, ES_OP_MPI_BCAST, 1, 0), 0);
	put_ev(w, tuple(100, 200, ES_OP_MPI_BCAST, 1, 0), 1);
	put_ev(w, tuple(300, 400, ES_OP_MPI_REDUCE, 0, 1), 0);
	put_ev(w, tuple(250, 260, ES_OP_MPI_REDUCE, 0, 1), 1);
	put_ev(w, tuple(500, 600, ES_OP_MPI_BARRIER, ES_NONE, 2), 0);
	put_ev(w, tuple(650, 700, ES_OP_MPI_BARRIER, ES_NONE, 2), 1);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	struct ar_out_stats st;
	snprintf(out, sizeof(out), "%s/c.json", dir);
	ck_assert_msg(ar_to_json(a, out, 0, UINT64_MAX, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.colls, 2);
	ck_assert_uint_eq(st.colls_backwards, 1);
	/* the Bcast's arrow leaves rank 1 (tid 1) at its start, 50 ns after the first event */
	FILE *f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	int from_root = 0;
	while (fgets(line, sizeof(line), f))
		from_root += strstr(line, "\"ph\":\"s\",\"id\":") && strstr(line, "\"cat\":\"collective\"") &&
			     strstr(line, "\"tid\":1,\"ts\":0.050") != NULL;
	fclose(f);
	ck_assert_int_eq(from_root, 1);
	ar_close(a);
}
END_TEST

START_TEST(converters_write_an_archive)
{
	char err[512] = "", sub[4200], out[4300];
	snprintf(sub, sizeof(sub), "%s/k", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "job9", &w, err, sizeof(err)), 0);
	for (int r = 0; r < 2; r++) {
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "job9.r%d", r);
		snprintf(name, sizeof(name), "rank%d.thread0", r);
		ck_assert_int_eq(ar_set_thread(w, r, proc, name), 0);
	}
	const int world[] = { 0, 1 }, reversed[] = { 1, 0 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	set_comm(w, 1, 0x5e7, 0, 2, reversed, 0, NULL);
	/* a send and receive on the world; a Sendrecv each way on the split
	 * with reversed ranks; an Isend to an Irecv completed in a wait; two
	 * collectives */
	struct es_trace t[] = {
		tuple(100, 200, ES_OP_MPI_SEND, 1, 7), tuple(120, 260, ES_OP_MPI_RECV, 0, 7),
		tuple(300, 400, ES_OP_MPI_ALLREDUCE, 0xffffffffu, 1),
		tuple(310, 400, ES_OP_MPI_ALLREDUCE, 0xffffffffu, 1),
		tuple(500, 510, ES_OP_MPI_IBCAST, 0, 2), tuple(520, 600, ES_OP_MPI_WAIT, 0xffffffffu, 0),
		tuple(500, 590, ES_OP_MPI_IBCAST | ES_OP_DONE, 0, 2),
		tuple(700, 800, ES_OP_MPI_SENDRECV, 1, 3), tuple(700, 800, ES_OP_MPI_SENDRECV | ES_OP_DONE, 1, 3),
		tuple(705, 790, ES_OP_MPI_SENDRECV, 0, 3), tuple(705, 790, ES_OP_MPI_SENDRECV | ES_OP_DONE, 0, 3),
		tuple(900, 910, ES_OP_MPI_ISEND, 1, 4), tuple(920, 950, ES_OP_MPI_WAIT, 0xffffffffu, 1),
		tuple(900, 940, ES_OP_MPI_ISEND | ES_OP_DONE, 1, 4),
		tuple(880, 890, ES_OP_MPI_IRECV, 0xffffffffu, 0xffffffffu), tuple(930, 990, ES_OP_MPI_WAITALL, 0, 1),
		tuple(880, 980, ES_OP_MPI_IRECV | ES_OP_DONE, 0, 4),
	};
	uint32_t thread[] = { 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1 };
	for (size_t i = 7; i < 11; i++)
		t[i].comm = 1;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_int_eq(ar_write(w, &t[i], thread[i]), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	struct ar_out_stats st;
	snprintf(out, sizeof(out), "%s/otf2", dir);
	ck_assert_msg(ar_to_otf2(a, out, "traces", &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.regions, 12);
	ck_assert_uint_eq(st.messages, 8); /* every send and every receive, once */
	ck_assert_uint_eq(st.colls, 2);
	ck_assert_uint_eq(st.completes, 2); /* the Ibcast's, the Isend's */
	ck_assert_int_eq(ar_to_otf2(a, out, "traces", &st, err, sizeof(err)), -EEXIST);
	snprintf(out, sizeof(out), "%s/t.json", dir);
	ck_assert_msg(ar_to_json(a, out, 0, UINT64_MAX, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.regions, 12);
	ck_assert_uint_eq(st.messages, 4); /* the world's, two on the split, the Isend's */
	ck_assert_uint_eq(st.backwards, 0);
	ck_assert_uint_eq(st.colls, 1);
	ck_assert_int_eq(ar_to_json(a, out, 0, UINT64_MAX, &st, err, sizeof(err)), -EEXIST);
	snprintf(out, sizeof(out), "%s/profile.txt", dir);
	FILE *f = fopen(out, "w+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ar_profile(a, f, 5, err, sizeof(err)), 0);
	rewind(f);
	char line[256];
	bool send = false, last_in = false, both_ways = false;
	while (fgets(line, sizeof(line), f)) {
		send |= !strncmp(line, "MPI_Send ", 9) && strstr(line, " 1 ") != NULL; /* count 1 */
		last_in |= !strncmp(line, "MPI_Allreduce ", 14) && strstr(line, "WORLD") && strstr(line, " 1 ");
		/* traffic: the Send, a Sendrecv and the Isend from 0 to 1, a Sendrecv from 1 to 0 */
		both_ways |= !strcmp(line, "     0      1          3             48\n");
	}
	fclose(f);
	ck_assert(send);
	ck_assert(last_in);
	ck_assert(both_ways);
	ar_close(a);
}
END_TEST

/* The timeline of a rank whose two threads are both in a collective the
 * whole run, and which calls nothing of the other classes: no box leaves
 * its lane, every class keeps its block (and key entry), and the longest
 * call of each class present is labelled. */
START_TEST(plot_lanes_and_key)
{
	char err[512] = "", sub[4200], p[4400];
	snprintf(sub, sizeof(sub), "%s/plot", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "plot", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "plot.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "plot.r0", "rank0.thread1"), 0);
	ck_assert_int_eq(ar_set_thread(w, 2, "plot.r1", "rank1.thread0"), 0);
	const int world[] = { 0, 1 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	for (uint32_t th = 0; th < 3; th++) {
		struct es_trace t = tuple(1000, 9000000, ES_OP_MPI_ALLREDUCE, ES_NONE, th);
		ck_assert_int_eq(ar_write(w, &t, th), 0);
	}
	struct es_trace t = tuple(9000000, 9500000, ES_OP_MPI_SEND, 1, 3);
	ck_assert_int_eq(ar_write(w, &t, 2), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	int pics = 0;
	snprintf(p, sizeof(p), "%s/pics", dir);
	ck_assert_msg(ar_plot(a, p, &pics, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(pics, 2);
	ar_close(a);
	snprintf(p, sizeof(p), "%s/pics/timeline.dat", dir);
	FILE *f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	char line[256];
	int blocks = 0, boxes = 0, blank = 0;
	while (fgets(line, sizeof(line), f)) {
		double x, y, x0, x1, y0, y1;
		if (line[0] == '#') {
			blocks++;
			ck_assert_int_eq(blank, blocks > 1 ? 2 : 0); /* blocks apart by two blank lines, never more */
			blank = 0;
			continue;
		}
		if (line[0] == '\n') {
			blank++;
			continue;
		}
		ck_assert_int_eq(sscanf(line, "%lf %lf %lf %lf %lf %lf", &x, &y, &x0, &x1, &y0, &y1), 6);
		if (x < 0)
			continue; /* each block's box outside the picture */
		boxes++;
		int lane = (int)(y + 0.5);
		ck_assert_msg(y0 >= lane - 0.4001 && y1 <= lane + 0.4001, "a box of lane %d from %g to %g", lane, y0, y1);
	}
	fclose(f);
	ck_assert_int_eq(blocks, ES_NCLASS); /* every class a block, its index */
	ck_assert_int_gt(boxes, 0);
	snprintf(p, sizeof(p), "%s/pics/timeline.gp", dir);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	bool coll_label = false, send_label = false;
	int titles = 0;
	while (fgets(line, sizeof(line), f)) {
		coll_label |= !strncmp(line, "set label", 9) && strstr(line, "MPI_Allreduce 9 ms") != NULL;
		send_label |= !strncmp(line, "set label", 9) && strstr(line, "MPI_Send 500 us") != NULL;
		for (char *q = line; strncmp(line, "set title", 9) && (q = strstr(q, " title '")); q++)
			titles++; /* the key's entries */
	}
	fclose(f);
	ck_assert(coll_label);
	ck_assert(send_label);
	ck_assert_int_eq(titles, ES_NCLASS - 1); /* an MPI job's: not the PATHS class */
}
END_TEST

/* Every reader on an archive of 1,024 threads (ranks), each with its own
 * events interleaved in the file as a recorder of many leaves writes them:
 * each thread's found whole, every reader's counts right. */
START_TEST(readers_on_1024_threads)
{
	enum { T = 1024, PER = 6 };
	char err[512] = "", sub[4200], p[4400];
	snprintf(sub, sizeof(sub), "%s/many", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "many", &w, err, sizeof(err)), 0);
	int *world = malloc(sizeof(int) * T);
	ck_assert_ptr_nonnull(world);
	for (int t = 0; t < T; t++) {
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "many.r%d", t);
		snprintf(name, sizeof(name), "rank%d.thread0", t);
		ck_assert_int_eq(ar_set_thread(w, t, proc, name), 0);
		world[t] = t;
	}
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, T, world, 0, NULL);
	for (int k = 0; k < PER; k++) /* round robin: thread t's k-th event, for every t */
		for (int t = 0; t < T; t++) {
			uint64_t at = 1000 + (uint64_t)k * 1000;
			struct es_trace e = k % 2 ? tuple(at, at + 100, ES_OP_MPI_RECV, (uint32_t)((t + T - 1) % T), 7)
						  : tuple(at, at + 100, ES_OP_MPI_SEND, (uint32_t)((t + 1) % T), 7);
			ck_assert_int_eq(ar_write(w, &e, (uint32_t)t), 0);
		}
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	for (int t = 0; t < T; t++) {
		const uint32_t *idx;
		ck_assert_uint_eq(ar_thread_events(a, t, &idx), PER);
		for (int k = 0; k < PER; k++)
			ck_assert_uint_eq(ar_events(a)[idx[k]].thread, (uint32_t)t);
	}
	struct ar_out_stats st;
	snprintf(p, sizeof(p), "%s/many-otf2", dir);
	ck_assert_msg(ar_to_otf2(a, p, "traces", &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.regions, T * PER);
	ck_assert_uint_eq(st.messages, T * PER); /* each send and receive once */
	snprintf(p, sizeof(p), "%s/many.json", dir);
	ck_assert_msg(ar_to_json(a, p, 0, UINT64_MAX, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.regions, T * PER);
	ck_assert_uint_eq(st.messages, T * PER / 2); /* an arrow per message */
	snprintf(p, sizeof(p), "%s/many.prof", dir);
	FILE *f = fopen(p, "w+");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ar_profile(a, f, 5, err, sizeof(err)), 0);
	rewind(f);
	char line[256];
	int ranks = 0, on = 0;
	bool sends = false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "@---", 4))
			on = strstr(line, "the run, and in MPI") != NULL;
		else if (on && line[0] >= '0' && line[0] <= '9')
			ranks++;
		sends |= !strncmp(line, "MPI_Send ", 9) && strstr(line, " 3072 ") != NULL; /* 3 x 1,024 */
	}
	fclose(f);
	ck_assert_int_eq(ranks, T);
	ck_assert(sends);
	ar_close(a);
	free(world);
}
END_TEST

/* Events enough for several of the writer's blocks, written one by one and
 * in runs: read back whole and in order (the file written in whole blocks
 * where the file system takes O_DIRECT, its end cut back). */
START_TEST(many_events_round_trip)
{
	enum { N = 20011 }; /* 800 KB: several flushes, and an odd tail */
	char err[512] = "", sub[4200];
	snprintf(sub, sizeof(sub), "%s/big", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "big", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "big.t0", "t0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "big.t1", "t1"), 0);
	struct es_trace run[7];
	for (uint32_t i = 0; i < N;) {
		if (i % 3 == 0 && i + 7 <= N) { /* a run of thread 1's */
			for (int k = 0; k < 7; k++)
				run[k] = tuple(i + k, i + k + 1, ES_OP_WRITE, i + (uint32_t)k, 0);
			ck_assert_int_eq(ar_write_run(w, run, 7, 1), 0);
			i += 7;
		} else {
			struct es_trace t = tuple(i, i + 1, ES_OP_READ, i, 0);
			ck_assert_int_eq(ar_write(w, &t, 0), 0);
			i++;
		}
	}
	ck_assert_uint_eq(ar_written(w), N);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .lost = 0, .before = 0, .why = "-" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(ar_nevents(a), N);
	for (uint32_t i = 0; i < N; i++) {
		const struct ar_event *e = &ar_events(a)[i];
		ck_assert_uint_eq(e->t.element, i);
		ck_assert_uint_eq(e->t.start, i);
		ck_assert_uint_eq(e->thread, e->t.op == ES_OP_WRITE ? 1u : 0u);
	}
	ar_close(a);
}
END_TEST

/* A recorder killed after a checkpoint: the archive opens as the
 * checkpoint left it, says so, and --repair keeps the whole records written
 * after it too; deaths are read back; a bad died line is refused. */
START_TEST(checkpoint_kill_and_repair)
{
	char err[512] = "", sub[4200], p[4300];
	snprintf(sub, sizeof(sub), "%s/k", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "jk", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "jk.r0", "rank0.thread0"), 0);
	const int world[] = { 0 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 1, world, 0, NULL);
	for (uint64_t i = 1; i <= 10; i++) {
		struct es_trace t = tuple(i * 10, i * 10 + 5, ES_OP_MPI_SEND, 0, (uint32_t)i);
		ck_assert_int_eq(ar_write(w, &t, 0), 0);
	}
	struct ar_death d = { .rank = 0, .pid = 42, .signal = 11, .last_ns = 105, .seen_ns = 200 };
	ck_assert_int_eq(ar_set_died(w, &d), 0);
	ck_assert_int_eq(ar_set_died(w, &d), 0); /* once */
	ck_assert_int_eq(ar_checkpoint(w, &(struct ar_end){ .until_ns = 150 }, err, sizeof(err)), 0);
	/* then 20,000 more, of which the whole blocks reach the file: a kill */
	for (uint64_t i = 11; i <= 20010; i++) {
		struct es_trace t = tuple(i * 10, i * 10 + 5, ES_OP_MPI_SEND, 0, (uint32_t)i);
		ck_assert_int_eq(ar_write(w, &t, 0), 0);
	}
	ar_abandon(w);
	ar_archive *a;
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), 0);
	uint64_t until;
	ck_assert(ar_partial(a, &until));
	ck_assert_uint_eq(until, 150);
	ck_assert_uint_eq(ar_nevents(a), 10);
	ck_assert_uint_eq(ar_events(a)[9].t.arg, 10);
	ck_assert_int_eq(ar_ndied(a), 1);
	ck_assert_int_eq(ar_died(a, 0)->signal, 11);
	ck_assert_uint_eq(ar_died(a, 0)->last_ns, 105);
	char note[600];
	ck_assert_uint_gt(ar_partial_note(a, sub, note, sizeof(note)), 0);
	ck_assert_msg(strstr(note, "is incomplete") && strstr(note, "10 events to 0.0 s"), "%s", note);
	ck_assert_uint_gt(ar_deaths_note(a, note, sizeof(note)), 0);
	ck_assert_msg(strstr(note, "rank 0 (pid 42) died of signal 11 (SIGSEGV)"), "%s", note);
	ar_close(a);
	uint64_t kept, after;
	ck_assert_int_eq(ar_repair(sub, &kept, &after, err, sizeof(err)), 0);
	ck_assert_uint_gt(after, 10000); /* the blocks written: all but the last buffer's */
	ck_assert_uint_lt(after, 20000);
	ck_assert_uint_eq(kept, 10 + after);
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), 0);
	ck_assert(!ar_partial(a, NULL));
	ck_assert_uint_eq(ar_nevents(a), kept);
	for (size_t i = 0; i < kept; i++) /* in order, none torn */
		ck_assert_uint_eq(ar_events(a)[i].t.arg, i + 1);
	ck_assert_int_eq(ar_ndied(a), 1);
	ar_close(a);
	ck_assert_int_eq(ar_repair(sub, &kept, &after, err, sizeof(err)), -EALREADY);
	snprintf(p, sizeof(p), "%s/INFO", sub);
	FILE *f = fopen(p, "a");
	fputs("died: 1 2 x\n", f);
	fclose(f);
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/INFO:") && strstr(err, "expected died: RANK PID LAST_NS SEEN_NS"), "%s", err);
	/* killed before its first checkpoint: the skeleton ar_create made, empty */
	snprintf(sub, sizeof(sub), "%s/k0", dir);
	ck_assert_int_eq(ar_create(sub, "jk", &w, err, sizeof(err)), 0);
	ar_abandon(w);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(ar_nevents(a), 0);
	ar_close(a);
}
END_TEST

/* --- archives cut at every stage of their making ------------------------------------ */

/* name's file in archive sub, with text */
static void put_in(const char *sub, const char *name, const char *text)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", sub, name);
	put(p, text);
}

/* sub/events: the header, n records of one MPI_Send each on thread i % 2
 * (communicator 0, arg i + 1), then torn bytes of a record a kill cut */
static void put_events(const char *sub, size_t n, size_t torn)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/events", sub);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	uint32_t v = AR_VERSION;
	fwrite("ESAR", 1, 4, f);
	fwrite(&v, 4, 1, f);
	for (size_t i = 0; i < n; i++) {
		struct ar_event e = { .t = tuple(100 * (i + 1), 100 * (i + 1) + 50, ES_OP_MPI_SEND, (uint32_t)(1 - i % 2),
						 (uint32_t)i + 1), .thread = (uint32_t)(i % 2) };
		fwrite(&e, sizeof(e), 1, f);
	}
	static const unsigned char part[AR_RECORD] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }; /* start only: op 0 */
	fwrite(part, 1, torn, f);
	fclose(f);
}

static const char two_threads[] = "0\tcut.r0\trank0.thread0\n1\tcut.r1\trank1.thread0\n";
static const char two_ranks[] = "0\th\t10\t1700000000000000000\t5\t./app\n1\th\t11\t1700000000000000000\t5\t./app\n";

/* Every reader on archive sub: the first line they all say (into first),
 * then OTF2, JSON, pictures, the profile and its JSON, each written. */
static void read_with_every_reader(const char *sub, char *first, size_t len, size_t *nevents)
{
	static int k;
	char err[512] = "", out[4300];
	ar_archive *a;
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s: %s", sub, err);
	*nevents = ar_nevents(a);
	char *said = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&said, &n);
	ck_assert_ptr_nonnull(f);
	ar_print_state(a, "r", sub, f);
	fclose(f);
	snprintf(first, len, "%.*s", (int)strcspn(said, "\n"), said);
	free(said);
	struct ar_out_stats st;
	snprintf(out, sizeof(out), "%s/otf2.%d", dir, k);
	ck_assert_msg(ar_to_otf2(a, out, "traces", &st, err, sizeof(err)) == 0, "%s: %s", sub, err);
	snprintf(out, sizeof(out), "%s/json.%d", dir, k);
	ck_assert_msg(ar_to_json(a, out, 0, UINT64_MAX, &st, err, sizeof(err)) == 0, "%s: %s", sub, err);
	int pics;
	snprintf(out, sizeof(out), "%s/pics.%d", dir, k);
	ck_assert_msg(ar_plot(a, out, &pics, err, sizeof(err)) == 0, "%s: %s", sub, err);
	snprintf(out, sizeof(out), "%s/prof.%d", dir, k++);
	f = fopen(out, "w+");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(ar_profile(a, f, 5, err, sizeof(err)) == 0, "%s: %s", sub, err);
	ck_assert_msg(ar_profile_json(a, f, err, sizeof(err)) == 0, "%s: %s", sub, err);
	fclose(f);
	ar_close(a);
}

/* sub read by every reader, whose first line has says; then repaired,
 * keeping at least every event read (want: how many it keeps), and read
 * again, whole. */
static void cut_case(const char *sub, const char *says, size_t read, size_t want)
{
	char first[1024], err[512] = "";
	size_t n;
	read_with_every_reader(sub, first, sizeof(first), &n);
	ck_assert_msg(strstr(first, says), "%s: first line '%s', expected '%s'", sub, first, says);
	ck_assert_uint_eq(n, read);
	uint64_t kept, after;
	ck_assert_msg(ar_repair(sub, &kept, &after, err, sizeof(err)) == 0, "%s: %s", sub, err);
	ck_assert_uint_eq(kept, want);
	read_with_every_reader(sub, first, sizeof(first), &n);
	ck_assert_uint_eq(n, want);
	ar_archive *a;
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), 0);
	ck_assert(!ar_partial(a, NULL));
	for (size_t i = 0; i < n; i++) /* in order, none lost in the middle */
		ck_assert_uint_eq(ar_events(a)[i].t.arg, i + 1);
	ar_close(a);
	ck_assert_int_eq(ar_repair(sub, &kept, &after, err, sizeof(err)), -EALREADY);
}

/* A recorder is killed at any moment: whatever stage it reached, every
 * reader opens what it left, says first what it lacks or that it holds
 * nothing, and --repair keeps every whole record written. */
START_TEST(readers_on_cut_archives)
{
	char err[512] = "", sub[4200];
	/* as ar_create leaves it, before attaching: every file, empty */
	snprintf(sub, sizeof(sub), "%s/skeleton", dir);
	ar_writer *w;
	ck_assert_int_eq(ar_create(sub, "cut", &w, err, sizeof(err)), 0);
	ar_abandon(w);
	static const char *const files[] = { "events", "threads", "comms", "sites", "ranks", "regions", "files", "INFO" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char p[4300];
		snprintf(p, sizeof(p), "%s/%s", sub, files[i]);
		ck_assert_msg(access(p, R_OK) == 0, "ar_create made no %s", p);
	}
	cut_case(sub, " was cut off before it recorded anything: its recorder stopped (killed, or its disk filled) "
		 "before it attached to its job", 0, 0);
	/* a skeleton made in place (DIR there already, with other files),
	 * cut after events: only the marker, no INFO */
	snprintf(sub, sizeof(sub), "%s/marker", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 0, 0);
	cut_case(sub, " was cut off before it recorded anything: its recorder stopped (killed, or its disk filled) "
		 "before it wrote its INFO", 0, 0);
	/* ... cut between making events and writing its header */
	snprintf(sub, sizeof(sub), "%s/noheader", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_in(sub, "events", "");
	cut_case(sub, " was cut off before it recorded anything", 0, 0);
	/* an older recorder's first checkpoint, before it named a
	 * communicator: no comms (the attack round's "comms: No such file"),
	 * 2 events counted, 3 written after, a record torn */
	snprintf(sub, sizeof(sub), "%s/nocomms", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 5, 17);
	put_in(sub, "threads", two_threads);
	put_in(sub, "ranks", two_ranks);
	put_in(sub, "INFO", "archive: 3\njob: cut\nevents: 2\nlost: 0\nwhole: no\nuntil: 250\n");
	cut_case(sub, ": the archive lacks what its job said of 0 of its 2 ranks and of 1 communicator its events name "
		 "(its recorder stopped before it wrote them, or could not read them)", 2, 5);
	/* records on a thread no file names (the files tampered with: the
	 * recorder names a thread before it writes its records): repair keeps
	 * those before, and what it cuts in events.cut */
	snprintf(sub, sizeof(sub), "%s/strays", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 5, 0);
	put_in(sub, "threads", "0\tcut.r0\trank0.thread0\n"); /* events 1 and 3 are on thread 1 */
	put_in(sub, "comms", "0 1 world 1 0\n");
	put_in(sub, "ranks", "0\th\t10\t1700000000000000000\t5\t./app\n");
	put_in(sub, "INFO", "archive: 3\njob: cut\nevents: 1\nlost: 0\nwhole: no\nuntil: 250\n");
	cut_case(sub, "/strays is incomplete", 1, 1);
	char p[4300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/events.cut", sub);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 4 * AR_RECORD);
	snprintf(p, sizeof(p), "%s/nocomms/events.cut", dir); /* a torn last record is not kept */
	ck_assert_int_eq(stat(p, &st), -1);
	/* its ranks missing: said first */
	snprintf(sub, sizeof(sub), "%s/noranks", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 4, 0);
	put_in(sub, "threads", two_threads);
	put_in(sub, "comms", "0 1 world 2 0 1\n");
	put_in(sub, "INFO", "archive: 3\njob: cut\nevents: 4\nlost: 0\nwhole: no\nuntil: 250\n");
	cut_case(sub, ": the archive lacks what its job said of 2 of its 2 ranks and of 0 communicators", 4, 4);
	/* INFO and events only, none counted: an older recorder's first checkpoint of no thread */
	snprintf(sub, sizeof(sub), "%s/nothreads", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 0, 0);
	put_in(sub, "INFO", "archive: 3\njob: cut\nevents: 0\nlost: 0\nwhole: no\nuntil: 250\n");
	cut_case(sub, " was cut off before it recorded anything: its recorder stopped (killed, or its disk filled) "
		 "before a checkpoint counted an event", 0, 0);
	/* no INFO, but records: read as the whole ones on known threads */
	snprintf(sub, sizeof(sub), "%s/noinfo", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_events(sub, 3, 39);
	put_in(sub, "threads", two_threads);
	put_in(sub, "comms", "0 1 world 2 0 1\n");
	put_in(sub, "ranks", two_ranks);
	cut_case(sub, "/noinfo has no INFO: its recorder stopped (killed) before it wrote it; read as the 3 whole events",
		 3, 3);
	/* no archive at all: an empty directory, said so */
	snprintf(sub, sizeof(sub), "%s/empty", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ar_archive *a;
	ck_assert_int_eq(ar_open(sub, &a, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/empty: no archive: neither INFO nor events"), "%s", err);
	uint64_t kept, after;
	ck_assert_int_eq(ar_repair(sub, &kept, &after, err, sizeof(err)), -ENOENT);
}
END_TEST

/* ar_create makes DIR whole at once, over an empty directory too, or in a
 * directory that holds other files; ar_discard takes back what it made. */
START_TEST(create_aside_or_in_place)
{
	char err[512] = "", sub[4200], p[4300];
	ar_writer *w;
	ar_archive *a;
	snprintf(sub, sizeof(sub), "%s/was-empty", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ar_abandon(w);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ar_close(a);
	snprintf(sub, sizeof(sub), "%s/holds", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put_in(sub, "notes", "mine\n");
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ar_discard(w); /* takes its files, not the directory nor what else it holds */
	snprintf(p, sizeof(p), "%s/notes", sub);
	ck_assert_int_eq(access(p, R_OK), 0);
	snprintf(p, sizeof(p), "%s/INFO", sub);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .why = "-" }, err, sizeof(err)), 0);
	ck_assert_msg(ar_open(sub, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!ar_partial(a, NULL));
	ar_close(a);
	snprintf(sub, sizeof(sub), "%s/new", dir);
	ck_assert_int_eq(ar_create(sub, "j", &w, err, sizeof(err)), 0);
	ar_discard(w);
	ck_assert_int_eq(access(sub, F_OK), -1);
	/* nothing left beside it: the directory it was made in is gone */
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "ls -A %s | grep -q making", dir);
	ck_assert_int_ne(system(cmd), 0);
}
END_TEST

/* Two ranks, rank 1 on another host: its stamps go onto rank 0's clock by
 * the line through its points; the file stays as recorded. */
START_TEST(clocks_move_a_rank_onto_rank_0)
{
	char err[512] = "";
	ar_writer *w;
	ck_assert_int_eq(ar_create(dir, "clk", &w, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_set_thread(w, 0, "clk.r0", "rank0.thread0"), 0);
	ck_assert_int_eq(ar_set_thread(w, 1, "clk.r1", "rank1.thread0"), 0);
	const int world[] = { 0, 1 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 2, world, 0, NULL);
	/* rank 1's host 1000 ns ahead at 1e6, 3000 ns at 2e6: it gains 2 ns a us */
	struct ar_sync a = { 1, ES_SYNC_INIT, 1, 1000000, 1000, 40 }, b = { 1, ES_SYNC_RUN, 2, 2000000, 3000, 40 };
	struct ar_sync z0 = { 0, ES_SYNC_INIT, 1, 1000000, 0, 0 };
	ck_assert_int_eq(ar_add_sync(w, &b), 0); /* in any order, each once */
	ck_assert_int_eq(ar_add_sync(w, &a), 0);
	ck_assert_int_eq(ar_add_sync(w, &a), 0);
	ck_assert_int_eq(ar_add_sync(w, &z0), 0);
	/* the recorder took rank 1's host as 500 ns ahead of its own */
	ck_assert_int_eq(ar_set_clock_shift(w, 1, 500), 0);
	ck_assert_int_eq(ar_set_clock_shift(w, 0, 0), 0);
	uint64_t at[] = { 500000, 1000000, 1500000, 2000000, 2500000 };
	for (int i = 0; i < 5; i++) {
		struct es_trace t = tuple(at[i], at[i] + 100, ES_OP_MPI_SEND, 0, 1);
		ck_assert_int_eq(ar_write(w, &t, 1), 0);
		ck_assert_int_eq(ar_write(w, &t, 0), 0);
	}
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .why = "test" }, err, sizeof(err)), 0);
	ar_archive *r;
	ck_assert_msg(ar_open(dir, &r, err, sizeof(err)) == 0, "%s", err);
	/* moved by shift(1) - shift(0) - offset(t): before the first point its
	 * value, between them the line, after the last the drift goes on (2000
	 * ns of it is well beyond the points' 40 ns round trips) */
	int64_t want[] = { 500 - 1000, 500 - 1000, 500 - 2000, 500 - 3000, 500 - 4000 };
	const uint32_t *idx;
	size_t n = ar_thread_events(r, 1, &idx);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++) {
		const struct ar_event *e = &ar_events(r)[idx[i]];
		ck_assert_int_eq((int64_t)e->t.start, (int64_t)at[i] + want[i]);
	}
	n = ar_thread_events(r, 0, &idx); /* rank 0: the reference, as recorded */
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(ar_events(r)[idx[i]].t.start, at[i]);
	char note[256];
	ck_assert_uint_gt(ar_clocks_note(r, note, sizeof(note)), 0);
	ck_assert_msg(strstr(note, "1 rank moved onto rank 0's host's clock by up to 0.004 ms, from 2 points"),
		      "%s", note);
	const struct ar_sync *pts;
	ck_assert_int_eq(ar_sync_points(r, 1, &pts), 2);
	ck_assert_uint_eq(pts[0].at_ns, 1000000); /* as recorded, in time order */
	ar_close(r);
	/* a drift inside the points' error is not taken beyond the last: 40 ns
	 * round trips, offsets 10 ns apart */
	char p[4200];
	snprintf(p, sizeof(p), "%s/clocks", dir);
	FILE *f = fopen(p, "w");
	fprintf(f, "shift 1 0\nsync 1 1 1 1000000 1000 40\nsync 1 2 3 2000000 1010 40\n");
	fclose(f);
	ck_assert_int_eq(ar_open(dir, &r, err, sizeof(err)), 0);
	n = ar_thread_events(r, 1, &idx);
	ck_assert_int_eq((int64_t)ar_events(r)[idx[4]].t.start, 2500000 - 1010);
	ck_assert_int_eq((int64_t)ar_events(r)[idx[2]].t.start, 1500000 - 1005);
	ar_close(r);
	/* a rank whose points are all 0 (rank 0's host) is not moved, nor said */
	f = fopen(p, "w");
	fprintf(f, "shift 0 0\nshift 1 0\nsync 1 1 1 1000000 0 0\nsync 0 1 1 1000000 0 0\n");
	fclose(f);
	ck_assert_int_eq(ar_open(dir, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(ar_clocks_note(r, note, sizeof(note)), 0);
	ck_assert_uint_eq(ar_events(r)[0].t.start, at[0]);
	ar_close(r);
	/* a line it cannot read: the file, the line, what was expected */
	f = fopen(p, "w");
	fprintf(f, "shift 1 0\nsync 1 one 1 1000000 0 0\n");
	fclose(f);
	ck_assert_int_eq(ar_open(dir, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/clocks:2: expected \"shift RANK NS\" or \"sync RANK SERIAL KIND AT OFFSET RTT\", "
			      "RANK below 2"), "%s", err);
}
END_TEST

/* What a crafted archive may hold, read by every reader: a site past any
 * thread's board (esprofile once indexed a 4,096-slot cache by it), a
 * communicator of sparse, huge world ranks, clocks past what hosts can be
 * apart and points in any order. */
START_TEST(readers_on_crafted_fields)
{
	char err[4400] = "", p[4300];
	write_two_ranks(dir);
	/* rank 1's receive at site 4096 and 65535: no site known, no crash */
	snprintf(p, sizeof(p), "%s/events", dir);
	FILE *f = fopen(p, "r+b");
	ck_assert_ptr_nonnull(f);
	uint32_t seq = 65535u << 16 | 1;
	ck_assert_int_eq(fseek(f, 8 + AR_RECORD + 16, SEEK_SET), 0); /* the second record's seq */
	ck_assert_int_eq(fwrite(&seq, 4, 1, f), 1);
	fclose(f);
	ar_archive *a;
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	FILE *null = fopen("/dev/null", "w");
	ck_assert_int_eq(ar_profile(a, null, 20, err, sizeof(err)), 0);
	ck_assert_int_eq(ar_profile_json(a, null, err, sizeof(err)), 0);
	struct ar_out_stats st;
	snprintf(p, sizeof(p), "%s/o", dir);
	ck_assert_msg(ar_to_otf2(a, p, "traces", &st, err, sizeof(err)) == 0, "%s", err);
	ar_close(a);
	/* ... and a sites line that names it: refused, with its line */
	snprintf(p, sizeof(p), "%s/sites", dir);
	put(p, "1\t4096\t0\t/bin/app\t10\tf\ta.c\t3\n");
	ck_assert_int_eq(ar_open(dir, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "/sites:1: site 4096, but a thread names its sites from 1 to 4095"), "%s", err);
	unlink(p);
	/* a communicator of world ranks far apart: each found, the first
	 * group's first where a rank repeats; nothing sized by the largest */
	snprintf(p, sizeof(p), "%s/comms", dir);
	put(p, "0 1 world 2 0 1\n1 abc inter 3 2147483647 1 2147483647 | 2 0 1000000000\n");
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	const struct ar_comm *c = ar_comm(a, 1);
	ck_assert_int_eq(ar_comm_rank(c, 2147483647), 0);
	ck_assert_int_eq(ar_comm_rank(c, 1), 1);
	ck_assert_int_eq(ar_comm_rank(c, 1000000000), 1);
	ck_assert_int_eq(ar_comm_rank(c, 0), 0);
	ck_assert_int_eq(ar_comm_rank(c, 5), -1);
	ck_assert_int_eq(ar_comm_rank(c, -1), -1);
	ck_assert_int_eq(ar_profile(a, null, 20, err, sizeof(err)), 0);
	ar_close(a);
	/* clocks: points in reverse read as in order; a shift or offset past
	 * AR_CLOCK_SPAN, or a rank past the archive's, refused with its line */
	snprintf(p, sizeof(p), "%s/clocks", dir);
	put(p, "sync 1 3 3 300 30 0\nsync 1 2 3 200 20 0\nsync 1 1 1 100 10 0\nsync 1 2 3 250 99 0\n");
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	const struct ar_sync *pts;
	ck_assert_int_eq(ar_sync_points(a, 1, &pts), 3);
	ck_assert_uint_eq(pts[0].at_ns, 100);
	ck_assert_int_eq(pts[1].offset_ns, 20); /* serial 2's first line, as ar_clocks_add keeps */
	ck_assert_uint_eq(pts[2].at_ns, 300);
	ar_close(a);
	const char *bad[] = { "shift 1 4611686018427387905\n", "sync 1 1 1 5 -4611686018427387905 0\n",
			      "sync 2 1 1 5 0 0\n", "shift 16777216 0\n", "sync 1 0 1 5 0 0\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(p, bad[i]);
		ck_assert_int_eq(ar_open(dir, &a, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, "/clocks:1: expected"), "%s: %s", bad[i], err);
	}
	/* a job's and a phase's names are anyone's bytes: gnuplot never runs them */
	unlink(p);
	snprintf(p, sizeof(p), "%s/regions", dir);
	put(p, "1\t1\tx`touch pwned`'`touch pwned`'\"`touch pwned`\"\n");
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	snprintf(p, sizeof(p), "%s/pics", dir);
	int pics;
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	int prc = ar_plot(a, p, &pics, err, sizeof(err));
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_msg(prc == 0, "%s", err);
	snprintf(p, sizeof(p), "%s/pwned", dir);
	ck_assert_msg(access(p, F_OK) != 0, "a phase's name ran a command through gnuplot");
	ar_close(a);
	snprintf(p, sizeof(p), "%s/clocks", dir);
	/* at the span itself: read, every stamp moved without overflow */
	put(p, "shift 0 -4611686018427387904\nshift 1 4611686018427387904\nsync 1 1 1 5 -4611686018427387904 0\n");
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(ar_profile(a, null, 20, err, sizeof(err)), 0);
	ar_close(a);
	fclose(null);
}
END_TEST

/* Threads that recorded nothing: no OTF2 location unless a rank's first
 * (MPI_COMM_WORLD's ranks are locations by position), said; an empty
 * rank's files are libotf2's own for such a location. */
START_TEST(otf2_locations_of_listed_threads)
{
	char err[4400] = "", p[4300];
	ar_writer *w;
	ck_assert_int_eq(ar_create(dir, "lt", &w, err, sizeof(err)), 0);
	/* ranks 0 to 3, threads 4 to 11 more of theirs; only 0 and 1 record */
	for (int t = 0; t < 12; t++) {
		char proc[32], name[32];
		snprintf(proc, sizeof(proc), "lt.r%d", t % 4);
		snprintf(name, sizeof(name), "rank%d.thread%d", t % 4, t / 4);
		ck_assert_int_eq(ar_set_thread(w, t, proc, name), 0);
	}
	const int world[] = { 0, 1, 2, 3 };
	set_comm(w, 0, ES_COMM_WORLD_ID, ES_COMMS_WORLD, 4, world, 0, NULL);
	struct es_trace t = tuple(100, 200, ES_OP_MPI_SEND, 1, 5);
	ck_assert_int_eq(ar_write(w, &t, 0), 0);
	t = tuple(150, 250, ES_OP_MPI_RECV, 0, 5);
	ck_assert_int_eq(ar_write(w, &t, 1), 0);
	ck_assert_int_eq(ar_finish(w, &(struct ar_end){ .why = "test" }, err, sizeof(err)), 0);
	ar_archive *a;
	ck_assert_msg(ar_open(dir, &a, err, sizeof(err)) == 0, "%s", err);
	struct ar_out_stats st;
	snprintf(p, sizeof(p), "%s/o", dir);
	ck_assert_msg(ar_to_otf2(a, p, "traces", &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(st.unlocated, 8);
	ar_close(a);
	struct stat sb;
	for (int loc = 0; loc < 12; loc++) {
		snprintf(p, sizeof(p), "%s/o/traces/%d.evt", dir, loc);
		ck_assert_msg((stat(p, &sb) == 0) == (loc < 4), "%s", p);
	}
	char cmd[17000];
	snprintf(cmd, sizeof(cmd), "cd %s/o/traces && cmp -s 2.evt 3.evt && cmp -s 2.def 3.def", dir);
	ck_assert_int_eq(system(cmd), 0);
	/* otf2-print, an independent reader, reads every location */
	snprintf(cmd, sizeof(cmd), "otf2-print %s/o/traces.otf2 >%s/print 2>&1", dir, dir);
	ck_assert_msg(system(cmd) == 0, "otf2-print failed on %s/o", dir);
}
END_TEST

/* A function of this file the symbol reader names from DWARF: its
 * address in the test program, as a module's offset (one past a byte of
 * its code, as return addresses are written). */
__attribute__((noinline)) static int symbol_probe(int x)
{
	return x * 3 + 1;
}

START_TEST(symbols_name_a_static_function)
{
	Dl_info di;
	int (*volatile fn)(int) = symbol_probe;
	ck_assert_int_eq(fn(1), 4);
	ck_assert(dladdr((void *)symbol_probe, &di) && di.dli_fbase);
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert(n > 0);
	exe[n] = 0;
	ar_symbols *s;
	ck_assert_int_eq(ar_symbols_create(&s), 0);
	struct ar_symbol y;
	uint64_t off = (uint64_t)((uintptr_t)symbol_probe - (uintptr_t)di.dli_fbase) + 2;
	ck_assert_int_eq(ar_symbols_lookup(s, exe, off, &y), 0);
	ck_assert_str_eq(y.function, "symbol_probe");
	ck_assert(y.file && strstr(y.file, "test_archive.c") && y.line > 0);
	/* a module that is not there: said, not named by guess */
	ck_assert_int_ne(ar_symbols_lookup(s, "/nonexistent/lib.so", 100, &y), 0);
	ck_assert(!y.function);
	ar_symbols_destroy(s);
}
END_TEST

Suite *archive_suite(void)
{
	Suite *s = suite_create("archive");
	TCase *tc = tcase_create("core");
	/* Check's 4 s would be a bound on the disk: the archives finish with
	 * fsync, which a machine writing for two make checks beside takes
	 * seconds over (readers_on_cut_archives was cut off there) */
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, archive_round_trip);
	tcase_add_test(tc, archive_says_what_it_lacks);
	tcase_add_test(tc, archive_refused_when_not_whole);
	tcase_add_test(tc, items_nest_and_clip);
	tcase_add_test(tc, messages_pair_by_number);
	tcase_add_test(tc, json_collective_arrows);
	tcase_add_test(tc, clocks_move_a_rank_onto_rank_0);
	tcase_add_test(tc, converters_write_an_archive);
	tcase_add_test(tc, plot_lanes_and_key);
	tcase_add_test(tc, readers_on_1024_threads);
	tcase_add_test(tc, many_events_round_trip);
	tcase_add_test(tc, checkpoint_kill_and_repair);
	tcase_add_test(tc, readers_on_cut_archives);
	tcase_add_test(tc, create_aside_or_in_place);
	tcase_add_test(tc, readers_on_crafted_fields);
	tcase_add_test(tc, otf2_locations_of_listed_threads);
	tcase_add_test(tc, symbols_name_a_static_function);
	suite_add_tcase(s, tc);
	return s;
}
