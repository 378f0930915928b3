/* repair.c - finishes an archive whose recorder was killed or whose disk filled (ar_repair): its events to the last whole record, INFO rewritten whole. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/internal.h"

/* An events file of no record, for one a kill left without its header. */
static int write_header(const char *p, int version, char *err, size_t errlen)
{
	unsigned char h[8] = "ESAR";
	uint32_t v = (uint32_t)version;
	memcpy(h + 4, &v, 4);
	int fd = open(p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? -errno : ar__write_all(fd, h, sizeof(h), 0);
	if (fd >= 0 && !rc && (ftruncate(fd, sizeof(h)) || fsync(fd)))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc ? ar__sys_fail(err, errlen, rc, "%s", p) : 0;
}

/* The bytes of events from off on, before they are cut: kept in
 * events.cut when any past the first record's worth is not zero (records
 * repair could not place, on a thread no file names), so that a repair
 * destroys nothing written; a record torn at the end (the rest of it was
 * never written) and a block's padding are not kept.  *saved: how many. */
static int keep_cut(const char *dir, const char *events, off_t off, uint64_t *saved, char *err, size_t errlen)
{
	char p[4200];
	unsigned char buf[65536];
	*saved = 0;
	int fd = open(events, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ar__sys_fail(err, errlen, -errno, "%s", events);
	bool data = false;
	ssize_t k;
	for (off_t at = off + AR_RECORD; !data && (k = pread(fd, buf, sizeof(buf), at)) > 0; at += k)
		for (ssize_t i = 0; i < k && !data; i++)
			data = buf[i] != 0;
	FILE *f = NULL;
	ar__path(p, sizeof(p), dir, "events.cut");
	if (data && !(f = base_fopen_out(p, 0600))) {
		int rc = -errno;
		close(fd);
		return ar__sys_fail(err, errlen, rc, "%s", p);
	}
	for (off_t at = off; f && (k = pread(fd, buf, sizeof(buf), at)) > 0; at += k)
		*saved += fwrite(buf, 1, (size_t)k, f);
	close(fd);
	int rc = f ? ar__close_file(f, true) : 0;
	return rc ? ar__sys_fail(err, errlen, rc, "%s", p) : 0;
}

/* The records after the checkpoint's that can be kept. */
static int count_after(const ar_archive *a, const char *p, uint64_t *after)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char r[AR_RECORD];
	off_t off = 8 + (off_t)a->nevents * AR_RECORD;
	*after = 0;
	while (pread(fd, r, AR_RECORD, off) == AR_RECORD && ar__salvageable(a, r)) {
		(*after)++;
		off += AR_RECORD;
	}
	close(fd);
	return 0;
}

/* INFO again, whole: its lines but events, whole and until, then ended;
 * without one (a), what the archive's files say, the counts not known. */
static int rewrite_info(const char *dir, const ar_archive *a, uint64_t events, const char *ended, char *err,
			size_t errlen)
{
	char p[4200], line[512];
	ar__path(p, sizeof(p), dir, "INFO");
	int rc = 0;
	FILE *in = a->no_info ? NULL : ar__open_in(p, err, errlen, &rc);
	if (!in && !a->no_info)
		return rc;
	struct ar__part pt;
	if ((rc = ar__part_open(dir, "INFO", &pt, err, errlen))) {
		if (in)
			fclose(in);
		return rc;
	}
	while (in && fgets(line, sizeof(line), in))
		if (strncmp(line, "events:", 7) && strncmp(line, "whole:", 6) &&
		    strncmp(line, "until:", 6) && strncmp(line, "ended:", 6))
			fputs(line, pt.f);
	if (in)
		fclose(in);
	else
		fprintf(pt.f, "archive: %d\njob: %s\nlost: not known\nbefore_attach: not known\nthreads: %d\n"
			"clock: ns, CLOCK_MONOTONIC\n", a->version, a->job, a->nthreads);
	fprintf(pt.f, "events: %llu\nwhole: repaired\nended: %s\n", (unsigned long long)events, ended);
	return ar__part_close(&pt, true, err, errlen);
}

int ar_repair(const char *dir, uint64_t *kept, uint64_t *after, char *err, size_t errlen)
{
	ar_archive *a;
	int rc = ar_open(dir, &a, err, errlen);
	if (rc)
		return rc;
	if (!a->partial) {
		ar_close(a);
		return ar__fail(err, errlen, -EALREADY, "%s: whole already: nothing to repair", dir);
	}
	char p[4200], ended[512];
	ar__path(p, sizeof(p), dir, "events");
	if ((rc = count_after(a, p, after))) {
		ar_close(a);
		return ar__sys_fail(err, errlen, rc, "%s", p);
	}
	*kept = a->nevents + *after;
	if (a->no_info)
		snprintf(ended, sizeof(ended), "its recorder stopped before it wrote INFO; repaired: the %llu "
			 "whole events its files held", (unsigned long long)*kept);
	else
		snprintf(ended, sizeof(ended), "its recorder stopped without finishing it (killed, or its "
			 "disk filled); repaired: %zu events to its last checkpoint, %.1f s into the run, and "
			 "%llu written after it", a->nevents, ar__into(a, a->until_ns), (unsigned long long)*after);
	/* cut to the records kept (the mapping above is not read again), what
	 * is cut kept aside unless it is padding */
	struct stat st;
	off_t want = 8 + (off_t)*kept * AR_RECORD;
	uint64_t saved = 0;
	if (stat(p, &st))
		rc = ar__sys_fail(err, errlen, -errno, "%s", p);
	else if (st.st_size < 8) /* a kill left it without its header: it holds none */
		rc = write_header(p, a->version, err, errlen);
	else if (!(rc = keep_cut(dir, p, want, &saved, err, errlen)) && truncate(p, want))
		rc = ar__sys_fail(err, errlen, -errno, "%s", p);
	if (saved) {
		size_t n = strlen(ended);
		snprintf(ended + n, sizeof(ended) - n, "; %llu bytes after them that are no whole record on a "
			 "known thread kept in events.cut", (unsigned long long)saved);
	}
	if (!rc)
		rc = rewrite_info(dir, a, *kept, ended, err, errlen);
	ar_close(a);
	return rc;
}
