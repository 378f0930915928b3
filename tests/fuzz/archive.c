/* archive.c - the archive fuzzer: real recordings mutated where their formats say something (records' fields, lines' numbers, files no recorder writes), read by every reader. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive/convert.h"
#include "tests/fuzz/fuzz.h"

/*
 * A case is a seed archive (tests/fuzz/seeds/NAME: esrecord's output of a
 * real MPI or PATHS job) with one to four mutations, written out as
 * OUTDIR/fuzz-case.archive and read as each program reads it: esprofile's
 * page and --json, esconvert's --otf2, --json and (every PLOT_EVERY-th
 * case, for gnuplot's time) --plot, then esrecord --repair and the
 * profile of what it made.  The wait-state engine runs inside the profile
 * and OTF2's metrics.  Mutations know the formats: a record's field set
 * to a boundary of what the files declare (a site past the thread's, a
 * communicator past the comms, a thread past the threads) or to another
 * record's value; a line's number or word replaced; lines duplicated,
 * dropped, swapped; a file gone, empty, a directory, a FIFO, a link to
 * /dev/zero; and blind byte flips.  INFO's count follows the records most
 * of the time, so that a case gets past the first check.
 */

#define PLOT_EVERY 32
#define NSEEDS 16
#define REC 40 /* AR_RECORD */

enum kind { ABSENT, REGULAR, DIRECTORY, FIFO, ZERO_LINK };
static const char *const names[] = { "INFO", "events", "threads", "comms", "sites",
				     "ranks", "regions", "files", "clocks" };
#define NFILES (sizeof(names) / sizeof(names[0]))
#define EVENTS 1

struct file {
	unsigned char *p;
	size_t n;
	enum kind kind;
};
struct archive {
	struct file f[NFILES];
};

static struct archive seeds[NSEEDS];
static int nseeds;

static void *xalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "fuzz: archives: out of memory\n");
		exit(1);
	}
	return p;
}

/* [at, at + cut) of f replaced by s[0 .. n) */
static void put_bytes(struct file *f, size_t at, size_t cut, const void *s, size_t n)
{
	at = at > f->n ? f->n : at;
	cut = at + cut > f->n ? f->n - at : cut;
	unsigned char *p = xalloc(f->n - cut + n);
	if (at)
		memcpy(p, f->p, at);
	if (n)
		memcpy(p + at, s, n);
	if (f->n - at - cut)
		memcpy(p + at + n, f->p + at + cut, f->n - at - cut);
	free(f->p);
	f->p = p;
	f->n = f->n - cut + n;
}

static int load_seed(const char *dir, struct archive *a)
{
	for (size_t i = 0; i < NFILES; i++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "rb");
		struct file *x = &a->f[i];
		*x = (struct file){ .kind = f ? REGULAR : ABSENT };
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		x->n = (size_t)ftell(f);
		rewind(f);
		x->p = xalloc(x->n);
		bool ok = fread(x->p, 1, x->n, f) == x->n;
		fclose(f);
		if (!ok)
			return -1;
	}
	return a->f[EVENTS].kind == REGULAR ? 0 : -1;
}

static void copy_archive(struct archive *to, const struct archive *from)
{
	for (size_t i = 0; i < NFILES; i++) {
		to->f[i] = from->f[i];
		to->f[i].p = xalloc(from->f[i].n);
		if (from->f[i].n)
			memcpy(to->f[i].p, from->f[i].p, from->f[i].n);
	}
}

static void free_archive(struct archive *a)
{
	for (size_t i = 0; i < NFILES; i++)
		free(a->f[i].p);
}

/* --- the events file: records' fields --------------------------------------- */

static const struct { unsigned off, width; } fields[] = {
	{ 0, 8 }, { 8, 8 }, { 16, 4 }, { 20, 2 }, { 22, 2 }, { 24, 4 }, { 28, 4 }, { 32, 4 }, { 36, 4 },
}; /* start end seq op comm element size arg | thread */

static uint64_t get(const unsigned char *p, unsigned w)
{
	uint64_t v = 0;
	memcpy(&v, p, w); /* little-endian, as the archive is */
	return v;
}

/* a value for a field of w bytes: a boundary of what the files declare,
 * another record's, near the old one, or anything */
static uint64_t value_for(const struct file *ev, size_t rec, unsigned fi, int nthreads, int ncomms)
{
	unsigned w = fields[fi].width;
	uint64_t old = get(ev->p + 8 + rec * REC + fields[fi].off, w);
	uint64_t top = w == 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
	size_t nrec = (ev->n - 8) / REC;
	switch (below(8)) {
	case 0: {
		static const uint64_t edge[] = { 0, 1, 2, 255, 256, 4095, 4096, 4097, 65534, 65535, 65536,
						 INT32_MAX, 1ull << 31, UINT32_MAX, INT64_MAX };
		return edge[below(sizeof(edge) / sizeof(edge[0]))] & top;
	}
	case 1: return top - below(3);
	case 2: return get(ev->p + 8 + below(nrec) * REC + fields[fi].off, w);
	case 3: return (old + below(7) - 3) & top;
	case 4: /* around what the other files declare */
		return ((uint64_t)(fi == 8 || fi == 5 ? nthreads : ncomms) + below(3) - 1) & top;
	case 5: /* seq: a site number (its high 16 bits) past any thread's */
		return fi == 2 ? ((old & 0xffff) | (uint64_t)(4090 + below(70000)) << 16) & top : old ^ 1;
	case 6: /* op: its flags toggled */
		return fi == 3 ? old ^ (0x800u << below(5)) : old ^ (1ull << below(8 * w));
	default: return rnd() & top;
	}
}

static int count_lines(const struct file *f)
{
	int n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->p[i] == '\n';
	return n;
}

static void mutate_events(struct archive *a)
{
	struct file *ev = &a->f[EVENTS];
	size_t nrec = ev->n >= 8 ? (ev->n - 8) / REC : 0;
	if (!nrec || ev->kind != REGULAR)
		return;
	int nthreads = count_lines(&a->f[2]), ncomms = count_lines(&a->f[3]);
	switch (below(10)) {
	case 0: { /* a run of records again, elsewhere */
		size_t from = below(nrec), k = 1 + below(nrec - from), to = below(nrec + 1);
		unsigned char *copy = xalloc(k * REC);
		memcpy(copy, ev->p + 8 + from * REC, k * REC);
		put_bytes(ev, 8 + to * REC, 0, copy, k * REC);
		free(copy);
		return;
	}
	case 1: { /* records gone */
		size_t from = below(nrec);
		put_bytes(ev, 8 + from * REC, (1 + below(nrec - from)) * REC, "", 0);
		return;
	}
	case 2: /* cut anywhere, a torn record */
		ev->n = below(ev->n + 1);
		return;
	case 3: /* the header */
		ev->p[below(8)] = (unsigned char)rnd();
		return;
	default:
		for (int i = 0, k = 1 + (int)below(4); i < k; i++) {
			size_t rec = below(nrec);
			unsigned fi = (unsigned)below(sizeof(fields) / sizeof(fields[0]));
			uint64_t v = value_for(ev, rec, fi, nthreads, ncomms);
			memcpy(ev->p + 8 + rec * REC + fields[fi].off, &v, fields[fi].width);
		}
	}
}

/* INFO's events: line made to count the records the file now holds */
static void follow_events(struct archive *a)
{
	struct file *info = &a->f[0];
	size_t nrec = a->f[EVENTS].n >= 8 ? (a->f[EVENTS].n - 8) / REC : 0;
	unsigned char *at = info->p ? memmem(info->p, info->n, "events: ", 8) : NULL;
	if (!at)
		return;
	size_t from = (size_t)(at - info->p) + 8, to = from;
	while (to < info->n && info->p[to] != '\n')
		to++;
	char num[32];
	int len = snprintf(num, sizeof(num), "%zu", nrec);
	put_bytes(info, from, to - from, num, (size_t)len);
}

/* --- the text files: lines and words ----------------------------------------- */

static const char *const words[] = {
	"-1", "0", "1", "2", "3", "4095", "4096", "65535", "65536", "16777216", "16777217",
	"2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
	"18446744073709551615", "99999999999999999999999", "-9223372036854775808", "1e9", "0x10",
	"nan", "", "-", "|", "| 1 0", "world", "inter", "comm", "window", "no", "yes", "repaired",
	"\t", "\t\t", " ", "%s%n%x", "`touch fuzz-pwned`", "x'`touch fuzz-pwned`'", "\"'\\", "\xff\xfe", "\x1b[2J", "a\nb",
};

/* start of the line k (0: the first), or f->n */
static size_t line_start(const struct file *f, size_t k)
{
	size_t i = 0;
	while (k && i < f->n)
		k -= f->p[i++] == '\n';
	return i;
}

/* the span of one word (a run without blanks) of [s, e), or false */
static bool pick_word(const struct file *f, size_t s, size_t e, size_t *wa, size_t *wb)
{
	size_t starts[256], n = 0;
	for (size_t i = s; i < e && n < 256; i++)
		if (f->p[i] != ' ' && f->p[i] != '\t' && f->p[i] != '\n' &&
		    (i == s || f->p[i - 1] == ' ' || f->p[i - 1] == '\t'))
			starts[n++] = i;
	if (!n)
		return false;
	*wa = starts[below(n)];
	for (*wb = *wa; *wb < e && f->p[*wb] != ' ' && f->p[*wb] != '\t' && f->p[*wb] != '\n'; ++*wb)
		;
	return true;
}

static void mutate_text(struct file *f)
{
	if (f->kind != REGULAR)
		return;
	size_t nl = (size_t)count_lines(f) + 1, k = below(nl);
	size_t s = line_start(f, k), e = line_start(f, k + 1);
	size_t wa, wb;
	switch (below(10)) {
	case 0: /* the line again, or another's */
		{
			size_t o = below(nl), os = line_start(f, o), oe = line_start(f, o + 1);
			unsigned char *copy = xalloc(oe - os);
			memcpy(copy, f->p + os, oe - os);
			put_bytes(f, s, 0, copy, oe - os);
			free(copy);
		}
		return;
	case 1: put_bytes(f, s, e - s, "", 0); return;
	case 2: { /* a long line */
		size_t n = 300 + below(9000);
		char *p = xalloc(n);
		memset(p, below(2) ? '9' : 'x', n);
		put_bytes(f, s, 0, p, n);
		free(p);
		return;
	}
	case 3: /* bytes anywhere in it */
		for (int i = 0, m = 1 + (int)below(4); i < m && f->n; i++)
			f->p[below(f->n)] = below(2) ? (unsigned char)rnd() : "\0\n\t -|"[below(6)];
		return;
	default:
		if (pick_word(f, s, e, &wa, &wb)) {
			const char *w = words[below(sizeof(words) / sizeof(words[0]))];
			char num[32];
			if (below(3) == 0)
				snprintf(num, sizeof(num), "%llu", (unsigned long long)(below(4) ? below(70000) : rnd())),
					w = num;
			put_bytes(f, wa, below(8) ? wb - wa : 0, w, strlen(w));
		}
	}
}

static void mutate(struct archive *a)
{
	for (int i = 0, n = 1 + (int)below(4); i < n; i++) {
		unsigned r = (unsigned)below(20);
		if (r < 8) {
			mutate_events(a);
			if (below(4))
				follow_events(a);
		} else if (r < 18) {
			size_t fi = below(NFILES - 1);
			mutate_text(&a->f[fi ? fi + 1 : 0]);
		} else if (r == 18) { /* a file no recorder leaves */
			static const enum kind odd[] = { ABSENT, DIRECTORY, FIFO, ZERO_LINK, REGULAR };
			struct file *f = &a->f[below(NFILES)];
			f->kind = odd[below(5)];
			f->n = f->kind == REGULAR ? 0 : f->n;
		} else { /* a checkpoint's INFO: partial, esrecord --repair's business */
			const char *w = "whole: no\nuntil: 1\n";
			put_bytes(&a->f[0], a->f[0].n, 0, w, strlen(w));
		}
	}
}

/* --- writing a case, reading it as every reader does ------------------------------ */

static int rm_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(p);
}

static void rm_rf(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_case(const struct archive *a, const char *dir)
{
	rm_rf(dir);
	if (mkdir(dir, 0700))
		return -1;
	for (size_t i = 0; i < NFILES; i++) {
		char path[4400];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		const struct file *f = &a->f[i];
		int rc = 0;
		if (f->kind == DIRECTORY)
			rc = mkdir(path, 0700);
		else if (f->kind == FIFO)
			rc = mkfifo(path, 0600);
		else if (f->kind == ZERO_LINK)
			rc = symlink("/dev/zero", path);
		else if (f->kind == REGULAR) {
			FILE *o = fopen(path, "wb");
			rc = !o || fwrite(f->p, 1, f->n, o) != f->n;
			rc |= o && fclose(o);
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* what esprofile (page, --json) and esconvert (--otf2, --json, --plot) do */
static long opened, refused, repaired;

static void read_case(const char *dir, const char *work, bool plot)
{
	char err[4400], path[4200];
	ar_archive *a;
	if (ar_open(dir, &a, err, sizeof(err))) {
		refused++;
		if (getenv("FUZZ_SAY"))
			printf("refused: %s\n", err);
		return;
	}
	opened++;
	FILE *null = fopen("/dev/null", "w");
	ar_print_state(a, "fuzz", dir, null);
	ar_profile(a, null, 20, err, sizeof(err));
	ar_profile_json(a, null, err, sizeof(err));
	fclose(null);
	struct ar_out_stats st;
	snprintf(path, sizeof(path), "%s/json", work);
	unlink(path);
	ar_to_json(a, path, 0, UINT64_MAX, &st, err, sizeof(err));
	snprintf(path, sizeof(path), "%s/otf2", work);
	rm_rf(path);
	ar_to_otf2(a, path, "traces", &st, err, sizeof(err));
	if (plot) {
		snprintf(path, sizeof(path), "%s/plot", work);
		rm_rf(path);
		int n;
		ar_plot(a, path, &n, err, sizeof(err));
	}
	ar_close(a);
}

static void run_case(const char *dir, const char *work, bool plot)
{
	alarm(HANG_S * 4); /* five readers, and gnuplot */
	read_case(dir, work, plot);
	if (plot && !access("fuzz-pwned", F_OK)) { /* gnuplot ran a command an archive's bytes gave */
		fprintf(stderr, "fuzz: archives: a crafted archive ran a command through --plot (the case is in %s)\n",
			dir);
		exit(1);
	}
	uint64_t kept, after;
	char err[4400];
	if (!ar_repair(dir, &kept, &after, err, sizeof(err))) {
		repaired++;
		read_case(dir, work, false);
	}
	alarm(0);
}

static int load_seeds(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	char names_seen[NSEEDS][256];
	while ((e = readdir(d)) && nseeds < NSEEDS) {
		char path[4200];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(names_seen[nseeds], sizeof(names_seen[0]), "%s", e->d_name);
		if (!load_seed(path, &seeds[nseeds]))
			nseeds++;
	}
	closedir(d);
	/* readdir's order is the file system's: sort, so that a seed replays */
	for (int i = 1; i < nseeds; i++)
		for (int j = i; j > 0 && strcmp(names_seen[j - 1], names_seen[j]) > 0; j--) {
			struct archive t = seeds[j];
			char n[256];
			memcpy(n, names_seen[j], sizeof(n));
			seeds[j] = seeds[j - 1], memcpy(names_seen[j], names_seen[j - 1], sizeof(n));
			seeds[j - 1] = t, memcpy(names_seen[j - 1], n, sizeof(n));
		}
	return nseeds ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int fuzz_archives(const char *seed_dir, long count, double seconds)
{
	if (load_seeds(seed_dir)) {
		fprintf(stderr, "fuzz: archives: no seed archive in %s\n", seed_dir);
		return 1;
	}
	char dir[4200], work[4200];
	snprintf(dir, sizeof(dir), "%s/fuzz-case.archive", outdir);
	snprintf(work, sizeof(work), "%s/fuzz-out", outdir);
	rm_rf(work);
	if (mkdir(work, 0700)) {
		fprintf(stderr, "fuzz: archives: cannot make %s: %s\n", work, strerror(errno));
		return 1;
	}
	double t0 = now_s();
	long c = 0;
	for (; c < count && (seconds <= 0 || now_s() - t0 < seconds); c++) {
		struct archive a;
		copy_archive(&a, &seeds[below((size_t)nseeds)]);
		mutate(&a);
		int rc = write_case(&a, dir);
		free_archive(&a);
		if (rc) {
			fprintf(stderr, "fuzz: archives: cannot write %s: %s\n", dir, strerror(errno));
			return 1;
		}
		run_case(dir, work, c % PLOT_EVERY == 0);
	}
	rm_rf(work);
	rm_rf(dir);
	printf("fuzz: archives: %ld mutations of %d recorded archives (%ld opened, %ld refused, %ld "
	       "repaired) read by esprofile (page, --json), esconvert (--otf2, --json, --plot every %d) "
	       "and esrecord --repair in %.0f s, 0 crashes, 0 hangs\n", c, nseeds, opened, refused, repaired,
	       PLOT_EVERY, now_s() - t0);
	return 0;
}
