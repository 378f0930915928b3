/* test_pastset_shm.c - shared-memory segments: naming, modes, permissions, other processes, crashes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pastset/internal.h"
#include "pastset/pastset.h"
#include "tests/unit/suites.h"

static char seg[64];

static void fresh(const char *tag)
{
	TEST_SEG(seg, tag);
	ps_shm_unlink(seg);
}

static ps_elem *mk(ps_server *s, const char *name, uint32_t thr, enum ps_mode mode,
		   unsigned flags)
{
	struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = thr,
				  .mode = mode, .flags = flags };
	ps_elem *e = NULL;
	ck_assert_int_eq(ps_elem_create(s, name, &a, &e), 0);
	return e;
}

static int child_status(pid_t pid)
{
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(segment_lifecycle)
{
	fresh("life");
	ps_server *s, *x;
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &x), PS_ENOENT);
	mode_t old = umask(0277); /* a umask that would take the owner's write bit */
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	umask(old);
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &x), PS_EEXIST);

	char path[128];
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", seg);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600); /* owner-only */

	struct ps_shm_info info;
	ck_assert_int_eq(ps_shm_info(seg, &info), 0);
	ck_assert_int_eq(info.state, PS_SHM_LIVE);
	ck_assert_int_eq(info.creator_pid, getpid());

	ps_elem *e = mk(s, "t", 10, PS_DISCARD, 0), *b;
	uint8_t t[TT_SIZE];
	tuple_make(t, 0, 1, 0);
	ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	ps_elem_close(e);
	/* a board, rewritten in place: a reader of the segment sees its slots */
	struct ps_elem_attr ba = { .tuple_size = 8, .threshold = 3, .mode = PS_BOARD };
	ck_assert_int_eq(ps_elem_create(s, "b", &ba, &b), 0);
	uint64_t *slots = ps_board(b);
	slots[2] = 77;
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &x), 0);
	ps_elem *rb;
	uint64_t seen[3];
	ck_assert_int_eq(ps_elem_open(x, "b", 8, &rb), 0);
	ck_assert_ptr_null(ps_board(rb)); /* read-only */
	ck_assert_int_eq(ps_read_range(rb, 0, 3, seen, NULL), 3);
	ck_assert(seen[0] == 0 && seen[2] == 77);
	ps_elem_close(rb);
	ps_server_destroy(x);
	ps_elem_close(b);
	ps_server_destroy(s);

	/* The segment outlives its creator's server, marked closed. */
	ck_assert_int_eq(ps_shm_info(seg, &info), 0);
	ck_assert_int_eq(info.state, PS_SHM_CLOSED);
	ck_assert_uint_eq(info.elems, 2);
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), 0);
	ck_assert_int_eq(ps_elem_open(s, "t", TT_SIZE, &e), 0);
	ck_assert_int_eq(ps_read(e, 0, t, 0, NULL), 0);
	ck_assert(tuple_ok(t));
	ps_elem_close(e);
	ps_server_destroy(s);

	ck_assert_int_eq(ps_shm_unlink(seg), 0);
	ck_assert_int_eq(ps_shm_unlink(seg), PS_ENOENT);
	ck_assert_int_eq(ps_shm_info(seg, &info), PS_ENOENT);
}
END_TEST

START_TEST(segment_errors)
{
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm("", NULL, &s), PS_EBADNAME);
	ck_assert_int_eq(ps_server_create_shm("a/b", NULL, &s), PS_EBADNAME);
	ck_assert_int_eq(ps_server_open_shm("..", PS_RDONLY, &s), PS_EBADNAME);
	ck_assert_int_eq(ps_shm_unlink("x y"), PS_EBADNAME);
	fresh("err");
	ck_assert_int_eq(ps_server_open_shm(seg, 0x40, &s), PS_EINVAL);

	/* Full directory and full data area. */
	struct ps_shm_attr small = { .size = 4096, .max_elems = 2 };
	ck_assert_int_eq(ps_server_create_shm(seg, &small, &s), 0);
	ps_elem *a = mk(s, "a", 1, PS_DISCARD, 0), *b = NULL;
	struct ps_elem_attr big = { .tuple_size = 4096, .threshold = 4 };
	ck_assert_int_eq(ps_elem_create(s, "big", &big, &b), PS_ENOSPC);
	b = mk(s, "b", 1, PS_DISCARD, 0);
	struct ps_elem_attr one = { .tuple_size = 8, .threshold = 1 };
	ps_elem *c;
	ck_assert_int_eq(ps_elem_create(s, "c", &one, &c), PS_ENOSPC);
	ps_elem_close(a);
	ps_elem_close(b);
	ps_server_destroy(s);

	/* A read-only handle may look but not touch. */
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), 0);
	ck_assert_int_eq(ps_elem_open(s, "a", 0, &a), 0);
	uint8_t t[TT_SIZE] = { 0 };
	ck_assert_int_eq(ps_write(a, t, 0, NULL), PS_EROFS);
	ck_assert_ptr_null(ps_elem_notes(a)); /* observers cannot write notes either */
	ck_assert_int_eq(ps_take(a, t, 0, NULL), PS_EROFS);
	ck_assert_int_eq(ps_elem_create(s, "d", &one, &c), PS_EROFS);
	ps_elem_close(a);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);

	/* Something else under our prefix is not mistaken for a segment. */
	fresh("bogus");
	char obj[96];
	snprintf(obj, sizeof(obj), "/pastset.%s", seg);
	int fd = shm_open(obj, O_CREAT | O_RDWR, 0600);
	ck_assert_int_ge(fd, 0);
	char junk[8192];
	memset(junk, 0x5a, sizeof(junk));
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), PS_EBADSEG);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* Opens the segment as an unprivileged user (or, when not root, as us after
 * taking our own permissions away): must be refused. */
START_TEST(permission_denied)
{
	fresh("perm");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0) {
			struct passwd *pw = getpwnam("nobody");
			uid_t uid = pw ? pw->pw_uid : 65534;
			if (setgid(uid) || setuid(uid))
				_exit(3);
		} else {
			char obj[96];
			snprintf(obj, sizeof(obj), "/pastset.%s", seg);
			int fd = shm_open(obj, O_RDONLY, 0);
			if (fd < 0 || fchmod(fd, 0))
				_exit(4);
			close(fd);
		}
		ps_server *x;
		_exit(ps_server_open_shm(seg, PS_RDONLY, &x) == PS_EACCES &&
		      ps_server_open_shm(seg, PS_RDWR, &x) == PS_EACCES ? 0 : 1);
	}
	ck_assert_int_eq(child_status(pid), 0);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* Another process observes, read-only, while this one writes. */
START_TEST(reader_in_other_process)
{
	fresh("xproc");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "trace", 4096, PS_DISCARD, 0);
	const int n = 2000;
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *r;
		ps_elem *re;
		if (ps_server_open_shm(seg, PS_RDONLY, &r) || ps_elem_open(r, "trace", TT_SIZE, &re))
			_exit(2);
		uint8_t t[TT_SIZE];
		for (int i = 0; i < n; i++)
			if (ps_read(re, (uint64_t)i, t, 10000, NULL) || !tuple_ok(t) ||
			    tuple_idx(t) != (uint64_t)i)
				_exit(1);
		_exit(0);
	}
	for (int i = 0; i < n; i++) {
		uint8_t t[TT_SIZE];
		tuple_make(t, (uint64_t)i, 1, (uint32_t)i);
		ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
		if (i % 100 == 0)
			usleep(1000); /* let the reader catch up and block */
	}
	ck_assert_int_eq(child_status(pid), 0);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* A writer killed with SIGKILL leaves a segment that is still whole. */
START_TEST(killed_writer_segment_readable)
{
	fresh("killed");
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	const int n = 1000;
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *s;
		ps_elem *e;
		if (ps_server_create_shm(seg, NULL, &s))
			_exit(2);
		struct ps_elem_attr a = { .tuple_size = TT_SIZE, .threshold = 2 * n };
		if (ps_elem_create(s, "trace", &a, &e))
			_exit(2);
		uint8_t t[TT_SIZE];
		for (int i = 0; i < n; i++) {
			tuple_make(t, (uint64_t)i, 7, (uint32_t)i);
			ps_write(e, t, 0, NULL);
		}
		if (write(pfd[1], "k", 1) != 1)
			_exit(2);
		for (;;)
			pause(); /* killed here, never closing anything */
	}
	char c;
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	kill(pid, SIGKILL);
	/* killed and not reaped yet: a zombie is dead too (its parent may never wait) */
	struct ps_shm_info zi = { 0 };
	for (int tries = 0; tries < 500; tries++) {
		ck_assert_int_eq(ps_shm_info(seg, &zi), 0);
		if (zi.state == PS_SHM_STALE)
			break;
		usleep(10000);
	}
	ck_assert_int_eq(zi.state, PS_SHM_STALE);
	ck_assert_int_eq(child_status(pid), 128 + SIGKILL);
	close(pfd[0]);
	close(pfd[1]);

	struct ps_shm_info info;
	ck_assert_int_eq(ps_shm_info(seg, &info), 0);
	ck_assert_int_eq(info.state, PS_SHM_STALE);
	ps_server *s;
	ps_elem *e;
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), 0);
	ck_assert_int_eq(ps_elem_open(s, "trace", TT_SIZE, &e), 0);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, n);
	uint8_t *buf = malloc((size_t)n * TT_SIZE);
	ck_assert_int_eq(ps_read_range(e, 0, (size_t)n, buf, NULL), n);
	for (int i = 0; i < n; i++) {
		ck_assert(tuple_ok(buf + (size_t)i * TT_SIZE));
		ck_assert_uint_eq(tuple_writer(buf + (size_t)i * TT_SIZE), 7);
	}
	free(buf);
	ps_elem_close(e);
	ps_server_destroy(s);
	/* A writer that takes over goes on from the next index: none repeats. */
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDWR, &s), 0);
	ck_assert_int_eq(ps_elem_open(s, "trace", TT_SIZE, &e), 0);
	uint8_t t[TT_SIZE];
	uint64_t idx;
	tuple_make(t, n, 8, 0);
	ck_assert_int_eq(ps_write(e, t, 0, &idx), 0);
	ck_assert_uint_eq(idx, n);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* An observer that may only read the segment (mode 0400, so it cannot even
 * raise a wake-up flag) still gets blocking reads, by polling. */
/* A writer that died between claiming a slot and publishing leaves that
 * slot half written (wseq one past head).  Whatever the threshold, power
 * of two or not, every tuple held stays readable, the latest too, and a
 * writer that takes over goes on; stats say one write is unfinished. */
START_TEST(dead_writer_mid_write)
{
	static const uint32_t thresholds[] = { 1, 2, 3, 256, 1000, 1024 };
	for (size_t k = 0; k < sizeof(thresholds) / sizeof(thresholds[0]); k++) {
		uint32_t thr = thresholds[k];
		fresh("midw");
		ps_server *s;
		ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
		ps_elem *e = mk(s, "t", thr, PS_DISCARD, 0);
		uint64_t n = 2 * (uint64_t)thr + 3;
		uint8_t t[TT_SIZE], got[TT_SIZE];
		for (uint64_t i = 0; i < n; i++) {
			tuple_make(t, (uint32_t)i, 1, 0);
			ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
		}
		/* what a writer killed inside publish() leaves */
		struct ps_ehdr *h = e->h;
		atomic_store(&h->wseq, n + 1);
		memset(e->slots + (size_t)(n & e->mask) * e->stride, 0xee, e->stride);

		struct ps_stats st;
		ck_assert_int_eq(ps_elem_stats(e, &st), 0);
		ck_assert_uint_eq(st.written, n);
		ck_assert_uint_eq(st.unfinished, 1);
		ck_assert_uint_eq(st.oldest, n - thr);
		uint64_t idx;
		ck_assert_int_eq(ps_read_latest(e, got, &idx), 0);
		ck_assert_uint_eq(idx, n - 1);
		ck_assert(tuple_ok(got));
		uint8_t *buf = malloc((size_t)thr * TT_SIZE);
		ck_assert_int_eq(ps_read_range(e, n - thr, thr, buf, NULL), (int)thr);
		for (uint32_t i = 0; i < thr; i++)
			ck_assert(tuple_ok(buf + (size_t)i * TT_SIZE));
		free(buf);
		/* a new writer goes on from the index the dead one never published */
		tuple_make(t, (uint32_t)n, 2, 0);
		ck_assert_int_eq(ps_write(e, t, 0, &idx), 0);
		ck_assert_uint_eq(idx, n);
		ck_assert_int_eq(ps_read_latest(e, got, &idx), 0);
		ck_assert_uint_eq(idx, n);
		ck_assert(tuple_ok(got));
		ck_assert_int_eq(ps_elem_stats(e, &st), 0);
		ck_assert_uint_eq(st.unfinished, 0);
		ps_elem_close(e);
		ps_server_destroy(s);
		ps_shm_unlink(seg);
	}
}
END_TEST

/* Segment files with no header yet (empty, cut short, a page of zeros):
 * PS_EPARTIAL, at once for PS_NOWAIT, else after at most the second a
 * creator mid-setup could still need; never a crash, never a long wait. */
START_TEST(half_made_segments)
{
	static const size_t sizes[] = { 0, 100, 4096 };
	for (size_t k = 0; k < 3; k++) {
		fresh("half");
		char path[128];
		snprintf(path, sizeof(path), "/dev/shm/pastset.%s", seg);
		int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, (off_t)sizes[k]), 0);
		close(fd);
		ps_server *s;
		ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY | PS_NOWAIT, &s), PS_EPARTIAL);
		ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), PS_EPARTIAL);
		struct ps_shm_info info;
		ck_assert_int_eq(ps_shm_info(seg, &info), PS_EPARTIAL);
		/* whose it is: ours here; a stranger's name is said by its uid */
		uid_t owner = 12345;
		ck_assert_int_eq(ps_shm_owner(seg, &owner), 0);
		ck_assert_uint_eq(owner, geteuid());
		if (geteuid() == 0) {
			ck_assert_int_eq(chown(path, 65534, 65534), 0);
			ck_assert_int_eq(ps_shm_owner(seg, &owner), 0);
			ck_assert_uint_eq(owner, 65534);
			ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &s), PS_EACCES);
		}
		ps_shm_unlink(seg);
		ck_assert_int_eq(ps_shm_owner(seg, &owner), PS_ENOENT);
	}
	ps_server *s;
	ck_assert_int_eq(ps_server_open_shm("x", 1u << 7, &s), PS_EINVAL);
}
END_TEST

/* Issue 27, 9: what EventSpace reads (a pathmap, an archive's files) is
 * read only from a regular file: a FIFO with no writer is refused at once,
 * where fopen would wait for one forever. */
START_TEST(input_files_only_regular)
{
	char dir[] = "/tmp/es-in-XXXXXX", name[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(name, sizeof(name), "%s/map", dir);
	ck_assert_int_eq(mkfifo(name, 0600), 0);
	errno = 0;
	ck_assert_ptr_null(base_fopen_in(name));
	ck_assert_int_eq(errno, EINVAL);
	unlink(name);
	errno = 0;
	ck_assert_ptr_null(base_fopen_in(dir));
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_ptr_null(base_fopen_in("/dev/zero"));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(base_fopen_in("/no/such/file"));
	ck_assert_int_eq(errno, ENOENT);
	FILE *w = fopen(name, "w");
	fputs("data\n", w);
	fclose(w);
	FILE *f = base_fopen_in(name);
	ck_assert_ptr_nonnull(f);
	char buf[16] = "";
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	ck_assert_str_eq(buf, "data\n");
	fclose(f);
	unlink(name);
	rmdir(dir);
}
END_TEST

/* Issue 15, 8: files EventSpace writes are never opened through a link
 * another user placed, nor into their file. */
START_TEST(output_files_refuse_links)
{
	char dir[] = "/tmp/es-out-XXXXXX", victim[64], name[64], path[96];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(name, sizeof(name), "%s/port", dir);
	FILE *v = fopen(victim, "w");
	fputs("precious\n", v);
	fclose(v);
	/* a symbolic link at the name: refused, the file it points to unchanged */
	ck_assert_int_eq(symlink(victim, name), 0);
	errno = 0;
	ck_assert_ptr_null(base_fopen_out(name, 0644));
	ck_assert_int_eq(errno, ELOOP);
	/* a hard link to a file of ours: refused too */
	unlink(name);
	ck_assert_int_eq(link(victim, name), 0);
	ck_assert_ptr_null(base_fopen_out(name, 0644));
	ck_assert_int_eq(errno, EPERM);
	char buf[32] = "";
	v = fopen(victim, "r");
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), v));
	fclose(v);
	ck_assert_str_eq(buf, "precious\n");
	unlink(name);
	/* a FIFO nobody reads: refused at once, no hang */
	ck_assert_int_eq(mkfifo(name, 0600), 0);
	ck_assert_ptr_null(base_fopen_out(name, 0644));
	ck_assert_int_eq(errno, ENXIO);
	/* ... and one a reader waits on: written, its mode left alone */
	int rd = open(name, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	FILE *pf = base_fopen_out(name, 0644);
	ck_assert_ptr_nonnull(pf);
	fputs("piped\n", pf);
	fclose(pf);
	char got[16] = "";
	ck_assert_int_eq(read(rd, got, sizeof(got) - 1), 6);
	ck_assert_str_eq(got, "piped\n");
	close(rd);
	struct stat fs;
	ck_assert_int_eq(stat(name, &fs), 0);
	ck_assert_int_eq(fs.st_mode & 0777, 0600);
	unlink(name);
	/* /dev/null: written, and its mode (0666, every user's) never changed */
	struct stat nb, na;
	ck_assert_int_eq(stat("/dev/null", &nb), 0);
	FILE *nf = base_fopen_out("/dev/null", 0600);
	ck_assert_ptr_nonnull(nf);
	fputs("nothing\n", nf);
	ck_assert_int_eq(fclose(nf), 0);
	ck_assert_int_eq(stat("/dev/null", &na), 0);
	ck_assert_int_eq(na.st_mode, nb.st_mode);
	/* a file of ours, open to all: cut and closed up */
	v = fopen(name, "w");
	fputs("old contents\n", v);
	fclose(v);
	chmod(name, 0666);
	FILE *f = base_fopen_out(name, 0600);
	ck_assert_ptr_nonnull(f);
	fputs("new\n", f);
	fclose(f);
	struct stat st;
	ck_assert_int_eq(stat(name, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, 4);
	/* another user's file (root only: to make one) */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(name, 65534, 65534), 0);
		ck_assert_ptr_null(base_fopen_out(name, 0600));
		ck_assert_int_eq(errno, EACCES);
	}
	unlink(name);
	/* directories: made, ours taken, a link or one others may write refused */
	snprintf(path, sizeof(path), "%s/d", dir);
	ck_assert_int_eq(base_mkdir_out(path, 0700), 0);
	ck_assert_int_eq(base_mkdir_out(path, 0700), 0);
	chmod(path, 0777);
	ck_assert_int_eq(base_mkdir_out(path, 0700), -EACCES);
	rmdir(path);
	ck_assert_int_eq(symlink(dir, path), 0);
	ck_assert_int_eq(base_mkdir_out(path, 0700), -ELOOP);
	unlink(path);
	ck_assert_int_eq(base_mkdir_out(victim, 0700), -ENOTDIR);
	unlink(victim);
	rmdir(dir);
}
END_TEST

/* Segments a process makes for itself: names nobody can take first, each
 * its own; and who writes a PS_STAMP_WHO element's tuples, as the writing
 * side says it, never as the tuple claims */
START_TEST(private_names_and_stamped_writers)
{
	char a[PS_NAME_MAX + 1], b[PS_NAME_MAX + 1], why[300], prefix[40];
	snprintf(prefix, sizeof(prefix), "tpriv%d", (int)getpid());
	ps_server *sa, *sb;
	ck_assert_int_eq(ps_server_create_private(prefix, NULL, &sa, a, why, sizeof(why)), 0);
	ck_assert_int_eq(ps_server_create_private(prefix, NULL, &sb, b, why, sizeof(why)), 0);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(strncmp(a, prefix, strlen(prefix)), 0);
	ck_assert_int_eq((int)strlen(a), (int)strlen(prefix) + 13); /* PREFIX-R, R twelve hex digits */
	char longp[PS_NAME_MAX];
	memset(longp, 'x', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	ps_server *sc;
	ck_assert_int_eq(ps_server_create_private(longp, NULL, &sc, b, why, sizeof(why)), PS_EINVAL);
	/* an element that stamps its writers: who at offset 8 */
	struct ps_elem_attr at = { .tuple_size = 64, .threshold = 8, .mode = PS_DISCARD,
				   .flags = PS_MULTI_WRITER | PS_WHO_AT(8) };
	ps_elem *e;
	ck_assert_int_eq(ps_elem_create(sa, "w", &at, &e), 0);
	unsigned char t[64], r[64];
	memset(t, 'A', sizeof(t));
	memcpy(t + 8, "forged by someone else", 23);
	ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	ck_assert_int_eq(ps_write_as(e, t, "tcp from 10.1.2.3", 0, NULL), 0);
	ck_assert_int_eq(ps_read(e, 0, r, 0, NULL), 0);
	char me[PS_WHO_LEN];
	snprintf(me, sizeof(me), "pid %d uid %u ", (int)getpid(), (unsigned)geteuid());
	ck_assert_msg(!strncmp((char *)r + 8, me, strlen(me)), "%s", (char *)r + 8);
	ck_assert(r[0] == 'A' && r[8 + PS_WHO_LEN] == 'A'); /* the rest as written */
	ck_assert_int_eq(ps_read(e, 1, r, 0, NULL), 0);
	ck_assert_str_eq((char *)r + 8, "tcp from 10.1.2.3");
	ps_elem_close(e);
	/* who's place must lie inside the tuple; offset bits without the flag are refused */
	at.flags = PS_MULTI_WRITER | PS_WHO_AT(40);
	ck_assert_int_eq(ps_elem_create(sa, "x", &at, &e), PS_EINVAL);
	at.flags = PS_MULTI_WRITER | 8u << 16;
	ck_assert_int_eq(ps_elem_create(sa, "y", &at, &e), PS_EINVAL);
	ps_server_destroy(sa);
	ps_server_destroy(sb);
	ps_shm_unlink(a);
	ck_assert_int_eq(ps_shm_unlink(b), 0);
}
END_TEST

START_TEST(read_only_observer_blocks)
{
	fresh("ro");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "trace", 64, PS_DISCARD, 0);
	char obj[96];
	snprintf(obj, sizeof(obj), "/dev/shm/pastset.%s", seg);
	struct passwd *pw = getpwnam("nobody");
	uid_t nobody = pw ? pw->pw_uid : 65534;
	if (geteuid() == 0)
		ck_assert_int_eq(chown(obj, nobody, nobody), 0);
	ck_assert_int_eq(chmod(obj, 0400), 0);
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(nobody) || setuid(nobody)))
			_exit(3);
		ps_server *r;
		ps_elem *re;
		if (ps_server_open_shm(seg, PS_RDWR, &r) != PS_EACCES ||
		    ps_server_open_shm(seg, PS_RDONLY, &r) || ps_elem_open(r, "trace", TT_SIZE, &re))
			_exit(2);
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		uint8_t t[TT_SIZE];
		for (int i = 0; i < 5; i++)
			if (ps_read(re, (uint64_t)i, t, 10000, NULL) || tuple_idx(t) != (uint64_t)i)
				_exit(1);
		/* and its timeouts still hold */
		_exit(ps_read(re, 5, t, 30, NULL) == PS_ETIMEDOUT ? 0 : 4);
	}
	char c;
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	for (int i = 0; i < 5; i++) {
		usleep(10000); /* the reader is asleep by now */
		uint8_t t[TT_SIZE];
		tuple_make(t, (uint64_t)i, 1, (uint32_t)i);
		ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	}
	ck_assert_int_eq(child_status(pid), 0);
	close(pfd[0]);
	close(pfd[1]);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* A segment someone else owns, or that is open to others, is refused:
 * its owner could read what we write or feed us what we read. */
START_TEST(foreign_segments_refused)
{
	fresh("foreign");
	ps_server *s, *x;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	char path[128];
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", seg);
	ck_assert_int_eq(chmod(path, 0666), 0);
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &x), PS_EACCES);
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDWR, &x), PS_EACCES);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &x), 0);
	ps_server_destroy(x);
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");
		ck_assert_int_eq(chown(path, pw ? pw->pw_uid : 65534, pw ? pw->pw_gid : 65534), 0);
		ck_assert_int_eq(ps_server_open_shm(seg, PS_RDONLY, &x), PS_EACCES);
	}
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* Damaged segments (a crash mid-write, a hostile peer) must give errors,
 * never a crash, a hang or a read outside the mapping: flip bytes all over
 * the header, directory and element headers and open everything. */
START_TEST(corrupt_segments_never_crash)
{
	fresh("fuzz");
	ps_server *s;
	struct ps_shm_attr a = { .size = 1 << 16, .max_elems = 4 };
	ck_assert_int_eq(ps_server_create_shm(seg, &a, &s), 0);
	ps_elem *e = mk(s, "one", 4, PS_DISCARD, 0), *f = mk(s, "two", 3, PS_FLOW, PS_MULTI_WRITER);
	uint8_t t[TT_SIZE];
	for (int i = 0; i < 6; i++) {
		tuple_make(t, (uint64_t)i, 1, 0);
		ps_write(e, t, 0, NULL);
	}
	ps_elem_close(e);
	ps_elem_close(f);
	ps_server_destroy(s);
	char path[128];
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", seg);
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	fstat(fd, &st);
	unsigned char *good = malloc((size_t)st.st_size);
	ck_assert_int_eq(pread(fd, good, (size_t)st.st_size, 0), st.st_size);
	/* where the interesting bytes are: header page, directory, element headers */
	const size_t spans[][2] = { { 0, 512 }, { 8192, 8192 + 4 * 72 },
				    { (size_t)st.st_size - (1 << 16), (size_t)st.st_size - (1 << 16) + 1024 } };
	uint64_t rnd = 88172645463325252ull;
	int opened = 0;
	for (int round = 0; round < 3000; round++) {
		ck_assert_int_eq(pwrite(fd, good, (size_t)st.st_size, 0), st.st_size);
		for (int k = 0; k < 1 + round % 4; k++) {
			rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
			const size_t *sp = spans[rnd % 3];
			size_t off = sp[0] + (rnd >> 8) % (sp[1] - sp[0]);
			unsigned char v = (unsigned char)(rnd >> 40);
			if (round % 5 == 0)
				v = 0xff; /* huge values */
			ck_assert_int_eq(pwrite(fd, &v, 1, (off_t)off), 1);
		}
		ps_server *r;
		if (ps_server_open_shm(seg, PS_RDONLY, &r))
			continue;
		opened++;
		int n = ps_server_count(r);
		for (int i = 0; i < n; i++) {
			char name[PS_NAME_MAX + 1];
			ps_elem *h;
			if (ps_server_elem_name(r, i, name) || ps_elem_open(r, name, 0, &h))
				continue;
			uint8_t buf[8 * 64];
			struct ps_stats stt;
			if (ps_elem_tuple_size(h) <= 64) {
				ps_read_latest(h, buf, NULL);
				ps_read(h, 2, buf, 0, NULL);
				ps_read_range(h, 0, 8, buf, NULL);
			}
			ps_elem_stats(h, &stt);
			ps_elem_close(h);
		}
		ps_server_destroy(r);
	}
	ck_assert_int_gt(opened, 0); /* some damage is harmless, and was read */
	free(good);
	close(fd);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* A writer and a taker killed while holding their locks, mid-take: the
 * next ones go on, and the counts stay exact. */
/* A full /dev/shm: making a segment or an element fails with PS_ENOSPC,
 * never a SIGBUS at a later write.  Needs root, for a private tmpfs. */
START_TEST(full_shm_refuses_not_crashes)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", "/dev/shm", "tmpfs", 0, "size=2m")) {
		fprintf(stderr, "full_shm_refuses_not_crashes: skipped (needs root for a private /dev/shm)\n");
		return;
	}
	fresh("full");
	/* much larger than the tmpfs: only its header and directory are reserved */
	struct ps_shm_attr big = { .size = 64u << 20, .max_elems = 16 };
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, &big, &s), 0);
	struct ps_elem_attr a = { .tuple_size = 1024, .threshold = 256 };
	ps_elem *e[16];
	int made = 0, rc;
	uint8_t t[1024];
	memset(t, 0x5a, sizeof(t));
	for (;;) {
		char name[16];
		snprintf(name, sizeof(name), "e%d", made);
		if ((rc = ps_elem_create(s, name, &a, &e[made])))
			break;
		for (int i = 0; i < 256; i++) /* every page of it, as a writer would */
			ck_assert_int_eq(ps_write(e[made], t, 0, NULL), 0);
		made++;
		ck_assert_int_lt(made, 16);
	}
	ck_assert_int_eq(rc, PS_ENOSPC);
	ck_assert_int_ge(made, 1);
	ck_assert_int_eq(ps_server_count(s), made); /* the one refused is not listed */
	for (int k = 0; k < made; k++) { /* the rest work on */
		ck_assert_int_eq(ps_write(e[k], t, 0, NULL), 0);
		ck_assert_int_eq(ps_read_latest(e[k], t, NULL), 0);
		ps_elem_close(e[k]);
	}
	/* a segment whose directory alone does not fit is refused, and not left behind */
	char seg2[80];
	snprintf(seg2, sizeof(seg2), "%s.2", seg);
	struct ps_shm_attr many = { .size = 1u << 20, .max_elems = 8192 };
	ps_server *s2;
	ck_assert_int_eq(ps_server_create_shm(seg2, &many, &s2), PS_ENOSPC);
	struct ps_shm_info info;
	ck_assert_int_eq(ps_shm_info(seg2, &info), PS_ENOENT);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}
END_TEST

START_TEST(dead_lock_holders)
{
	fresh("dead");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "data", 8, PS_FLOW, PS_MULTI_WRITER);
	uint8_t t[TT_SIZE];
	for (int i = 0; i < 3; i++) {
		tuple_make(t, (uint64_t)i, 1, 0);
		ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	}
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *c;
		ps_elem *ce;
		if (ps_server_open_shm(seg, PS_RDWR, &c) || ps_elem_open(c, "data", TT_SIZE, &ce))
			_exit(2);
		struct ps_ehdr *h = ce->h;
		pthread_mutex_lock(&h->wlock);
		pthread_mutex_lock(&h->tlock);
		/* die between moving tail and counting the take of index 0 */
		h->j_tail = 1;
		h->j_taken = 1;
		atomic_store(&h->j_active, 1);
		atomic_store(&h->tail, 1);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	tuple_make(t, 3, 1, 0);
	ck_assert_int_eq(ps_write(e, t, 1000, NULL), 0); /* wlock recovered */
	uint64_t idx;
	ck_assert_int_eq(ps_take(e, t, 1000, &idx), 0); /* tlock recovered */
	ck_assert_uint_eq(idx, 1);
	struct ps_stats ss;
	ps_elem_stats(e, &ss);
	ck_assert_uint_eq(ss.written, 4);
	ck_assert_uint_eq(ss.taken, 2);     /* the dead taker's, and ours */
	ck_assert_uint_eq(ss.discarded, 0);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

static int count_ours(const char *name, void *arg)
{
	if (!strcmp(name, seg))
		++*(int *)arg;
	return 0;
}

START_TEST(list_segments)
{
	fresh("list");
	ps_server *s;
	int found = 0;
	ck_assert_int_eq(ps_shm_list(count_ours, &found), 0);
	ck_assert_int_eq(found, 0);
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ck_assert_int_eq(ps_shm_list(count_ours, &found), 0);
	ck_assert_int_eq(found, 1);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* Several processes write one multi-writer flow element; this one takes:
 * every tuple arrives exactly once and each writer's in its order. */
/* The keep policy: stored in the segment, set after, read back; a job's
 * group released by its last process to end cleanly, kept while one runs
 * or when one died, and never when kept always. */
START_TEST(keep_policy_and_release)
{
	char a[64], b[64];
	TEST_SEG(a, "keepa");
	TEST_SEG(b, "keepb");
	ps_shm_unlink(a);
	ps_shm_unlink(b);
	const char *group[3] = { a, b, "no-such-segment-here" };
	struct ps_shm_attr at = { .keep = PS_KEEP_ALWAYS };
	ps_server *sa, *sb;
	ck_assert_int_eq(ps_server_create_shm(a, &at, &sa), 0);
	ck_assert_int_eq(ps_server_create_shm(b, NULL, &sb), 0);
	struct ps_shm_info in;
	ck_assert_int_eq(ps_shm_info(a, &in), 0);
	ck_assert_int_eq(in.keep, PS_KEEP_ALWAYS);
	ck_assert_uint_gt(in.used, 0);
	ck_assert_uint_le(in.used, in.size);
	ck_assert_int_eq(ps_shm_set_keep(a, PS_KEEP_FAILED), 0);
	ck_assert_int_eq(ps_shm_info(a, &in), 0);
	ck_assert_int_eq(in.keep, PS_KEEP_FAILED);
	ck_assert_int_eq(ps_shm_set_keep(a, (enum ps_keep)7), PS_EINVAL);
	ck_assert_int_eq(ps_shm_set_keep("no-such-segment-here", PS_KEEP_NEVER), PS_ENOENT);
	/* one still live: nothing goes */
	ps_server_destroy(sa);
	ck_assert_int_eq(ps_shm_release(group, 3), 0);
	ck_assert_int_eq(ps_shm_info(a, &in), 0);
	/* the last one ends: both go */
	ps_server_destroy(sb);
	ck_assert_int_eq(ps_shm_release(group, 3), 2);
	ck_assert_int_eq(ps_shm_info(a, &in), PS_ENOENT);
	ck_assert_int_eq(ps_shm_info(b, &in), PS_ENOENT);
	/* kept always: stays; one that died (a child killed): nothing goes */
	ck_assert_int_eq(ps_server_create_shm(a, &at, &sa), 0);
	ps_server_destroy(sa);
	ck_assert_int_eq(ps_shm_release(group, 1), 0);
	ck_assert_int_eq(ps_shm_info(a, &in), 0);
	ck_assert_int_eq(ps_shm_unlink(a), 0);
	pid_t pid = fork();
	if (pid == 0) {
		ps_server *x;
		_exit(ps_server_create_shm(b, NULL, &x) ? 1 : (raise(SIGKILL), 0));
	}
	ck_assert_int_eq(child_status(pid), 128 + SIGKILL);
	ck_assert_int_eq(ps_server_create_shm(a, NULL, &sa), 0);
	ps_server_destroy(sa);
	ck_assert_int_eq(ps_shm_release(group, 2), 0);
	ck_assert_int_eq(ps_shm_info(b, &in), 0);
	ck_assert_int_eq(in.state, PS_SHM_STALE);
	ps_shm_unlink(a);
	ps_shm_unlink(b);
	enum ps_keep k;
	ck_assert_int_eq(ps_keep_parse("never", &k), 0);
	ck_assert_int_eq(k, PS_KEEP_NEVER);
	ck_assert_int_eq(ps_keep_parse("sometimes", &k), PS_EINVAL);
	ck_assert_str_eq(ps_keep_name(PS_KEEP_FAILED), "failed");
}
END_TEST

/* A reader that waits (ps_shm_expect) keeps a cleanly ended group for
 * itself, and only for as long as it lives; it releases the group after
 * taking its note away.  A note of a process that is gone, or of a
 * prefix not the group's, keeps nothing; bad prefixes are refused. */
START_TEST(waiting_reader_keeps_the_group)
{
	char a[64], b[64], prefix[64];
	TEST_SEG(a, "expw.r0");
	TEST_SEG(b, "expw.r1");
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(strrchr(a, '.') - a + 1), a); /* "...expw." */
	ps_shm_unlink(a);
	ps_shm_unlink(b);
	const char *group[2] = { a, b };
	ps_expect *e, *other;
	ck_assert_int_eq(ps_shm_expect("", &e), PS_EINVAL);
	ck_assert_int_eq(ps_shm_expect("a/b.", &e), PS_EINVAL);
	ck_assert_int_eq(ps_shm_expect("no-such-group.", &other), 0);
	ck_assert(!ps_shm_expected(a));
	ck_assert_int_eq(ps_shm_expect(prefix, &e), 0);
	ck_assert(ps_shm_expected(a));
	ps_server *sa, *sb;
	ck_assert_int_eq(ps_server_create_shm(a, NULL, &sa), 0);
	ck_assert_int_eq(ps_server_create_shm(b, NULL, &sb), 0);
	ps_server_destroy(sa);
	ps_server_destroy(sb);
	/* the job's last process: the reader has not read it, it stays */
	ck_assert_int_eq(ps_shm_release(group, 2), 0);
	struct ps_shm_info in;
	ck_assert_int_eq(ps_shm_info(a, &in), 0);
	/* the reader, done: its note first, then the group goes */
	ps_shm_expect_end(e);
	ck_assert(!ps_shm_expected(a));
	ck_assert_int_eq(ps_shm_release(group, 2), 2);
	ck_assert_int_eq(ps_shm_info(b, &in), PS_ENOENT);
	/* a reader that died keeps nothing, and its note goes at the next look */
	pid_t pid = fork();
	if (pid == 0) {
		ps_expect *x;
		_exit(ps_shm_expect(prefix, &x) ? 1 : (raise(SIGKILL), 0));
	}
	ck_assert_int_eq(child_status(pid), 128 + SIGKILL);
	char note[128];
	snprintf(note, sizeof(note), "/dev/shm/pastset-expect.%s.%d", prefix, (int)pid);
	ck_assert_int_eq(access(note, F_OK), 0);
	ck_assert(!ps_shm_expected(a));
	ck_assert_int_eq(access(note, F_OK), -1);
	ck_assert_int_eq(ps_server_create_shm(a, NULL, &sa), 0);
	ps_server_destroy(sa);
	ck_assert_int_eq(ps_shm_release(group, 2), 1);
	ps_shm_expect_end(other);
	ps_shm_expect_end(NULL);
}
END_TEST

/* The watch word moves with every write, and only then. */
#ifdef ES_DEBUG
/* A broken invariant is caught where it breaks (BASE_INVARIANT, the debug
 * builds): counters that say more were taken than the tail passed abort
 * the next take, naming the invariant. */
START_TEST(broken_invariant_aborts)
{
	fresh("inv");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "q", 8, PS_FLOW, 0);
	uint8_t t[TT_SIZE], got[TT_SIZE];
	tuple_make(t, 0, 1, 0);
	ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	atomic_store(&e->h->taken, 5);
	ps_shm_unlink(seg); /* the child dies below: its segment goes first */
	ps_take(e, got, 0, NULL);
}
END_TEST
#endif

START_TEST(watch_word_moves_with_writes)
{
	fresh("watch");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "ctl", 1, PS_DISCARD, PS_MULTI_WRITER | PS_CONTROL);
	const uint64_t *w = ps_elem_watch_word(e);
	ck_assert_ptr_nonnull(w);
	uint64_t seen = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	uint8_t t[TT_SIZE];
	tuple_make(t, 0, 1, 0);
	ck_assert_uint_eq(__atomic_load_n(w, __ATOMIC_ACQUIRE), seen);
	ck_assert_int_eq(ps_write(e, t, 0, NULL), 0);
	ck_assert_uint_eq(__atomic_load_n(w, __ATOMIC_ACQUIRE), seen + 1);
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(e, &st), 0);
	ck_assert_uint_eq(st.flags & PS_CONTROL, PS_CONTROL);
	ck_assert_ptr_null(ps_elem_watch_word(NULL));
	ps_elem_close(e);
	ps_server_destroy(s);
	ps_shm_unlink(seg);
}
END_TEST

START_TEST(multi_writer_processes)
{
	fresh("mw");
	ps_server *s;
	ck_assert_int_eq(ps_server_create_shm(seg, NULL, &s), 0);
	ps_elem *e = mk(s, "data", 8, PS_FLOW, PS_MULTI_WRITER);
	enum { W = 3, N = 3000 };
	pid_t pids[W];
	for (int w = 0; w < W; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			ps_server *c;
			ps_elem *ce;
			if (ps_server_open_shm(seg, PS_RDWR, &c) || ps_elem_open(c, "data", TT_SIZE, &ce))
				_exit(2);
			uint8_t t[TT_SIZE];
			for (uint32_t i = 0; i < N; i++) {
				tuple_make(t, i, (uint32_t)w, i);
				if (ps_write(ce, t, 20000, NULL))
					_exit(1);
			}
			_exit(0);
		}
	}
	uint32_t next[W] = { 0 };
	uint8_t t[TT_SIZE];
	for (int i = 0; i < W * N; i++) {
		ck_assert_int_eq(ps_take(e, t, 20000, NULL), 0);
		ck_assert(tuple_ok(t));
		uint32_t w = tuple_writer(t);
		ck_assert_uint_lt(w, W);
		ck_assert_uint_eq(tuple_seq(t), next[w]);
		next[w]++;
	}
	for (int w = 0; w < W; w++)
		ck_assert_int_eq(child_status(pids[w]), 0);
	struct ps_stats st;
	ps_elem_stats(e, &st);
	ck_assert_uint_eq(st.written, W * N);
	ck_assert_uint_eq(st.taken, W * N);
	ck_assert_uint_eq(st.discarded, 0);
	ps_elem_close(e);
	ps_server_destroy(s);
	ck_assert_int_eq(ps_shm_unlink(seg), 0);
}
END_TEST

/* A note whose reader is gone is swept; a live reader's stays. */
START_TEST(dead_readers_notes_swept)
{
	char pfx[64], dead[128];
	snprintf(pfx, sizeof(pfx), "sweep%d.", (int)getpid());
	ps_expect *e;
	ck_assert_int_eq(ps_shm_expect(pfx, &e), 0);
	/* one of a process that is gone: a child's, after it exited */
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(c, NULL, 0), c);
	snprintf(dead, sizeof(dead), "/dev/shm/pastset-expect.%s.%d", pfx, (int)c);
	FILE *f = fopen(dead, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d 12345\n", (int)c);
	fclose(f);
	ck_assert_int_ge(ps_shm_expect_sweep(), 1);
	ck_assert_int_ne(access(dead, F_OK), 0);
	char name[80];
	snprintf(name, sizeof(name), "%sr0", pfx);
	ck_assert(ps_shm_expected(name)); /* the live one stays */
	ps_shm_expect_end(e);
	ck_assert(!ps_shm_expected(name));
}
END_TEST

Suite *pastset_shm_suite(void)
{
	Suite *s = suite_create("pastset_shm");
	TCase *tc = tcase_create("shm");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, segment_lifecycle);
	tcase_add_test(tc, segment_errors);
	tcase_add_test(tc, permission_denied);
	tcase_add_test(tc, reader_in_other_process);
	tcase_add_test(tc, killed_writer_segment_readable);
	tcase_add_test(tc, dead_writer_mid_write);
	tcase_add_test(tc, half_made_segments);
	tcase_add_test(tc, output_files_refuse_links);
	tcase_add_test(tc, input_files_only_regular);
	tcase_add_test(tc, full_shm_refuses_not_crashes);
	tcase_add_test(tc, read_only_observer_blocks);
	tcase_add_test(tc, private_names_and_stamped_writers);
	tcase_add_test(tc, list_segments);
	tcase_add_test(tc, foreign_segments_refused);
	tcase_add_test(tc, corrupt_segments_never_crash);
#ifdef __SANITIZE_THREAD__
	(void)dead_lock_holders; /* TSan cannot follow a lock a dead process took */
#else
	tcase_add_test(tc, dead_lock_holders);
#endif
	tcase_add_test(tc, multi_writer_processes);
	tcase_add_test(tc, keep_policy_and_release);
	tcase_add_test(tc, waiting_reader_keeps_the_group);
	tcase_add_test(tc, dead_readers_notes_swept);
	tcase_add_test(tc, watch_word_moves_with_writes);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, broken_invariant_aborts, SIGABRT);
#endif
	suite_add_tcase(s, tc);
	return s;
}
