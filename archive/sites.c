/* sites.c - the call sites an archive keeps (sites.h): held sorted by thread and number, written and read as text. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/sites.h"
#include "base/base.h"

/*
 * Invariants: sites[] is sorted by (thread, site) once `sorted`; adding
 * clears it, finding sorts first (the recorder adds a thread's sites in
 * order, so sorting is mostly a pass).  Every string a frame points to is
 * owned here: one allocation per site holds its frames and their strings.
 */
struct ar_sites {
	struct ar_site *sites;
	int n, cap;
	bool sorted;
};

struct ar_sites *ar_sites_create(void)
{
	struct ar_sites *s = calloc(1, sizeof(*s));
	if (s)
		s->sorted = true;
	return s;
}

void ar_sites_destroy(struct ar_sites *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		free(s->sites[i].frames);
	free(s->sites);
	free(s);
}

static size_t text_len(const char *t)
{
	return strlen(t && *t ? t : "-") + 1;
}

/* t into the block at *p (past the frames), "-" for none or empty. */
static const char *put(char **p, const char *t)
{
	const char *v = t && *t ? t : "-";
	size_t n = strlen(v) + 1;
	memcpy(*p, v, n);
	char *at = *p;
	*p += n;
	return at;
}

int ar_sites_add(struct ar_sites *s, int thread, int site, const struct ar_frame *frames, int n)
{
	if (!s || thread < 0 || site <= 0 || n <= 0 || n > 64)
		return -EINVAL;
	size_t len = sizeof(struct ar_frame) * (size_t)n;
	for (int i = 0; i < n; i++)
		len += text_len(frames[i].function) + text_len(frames[i].file) + text_len(frames[i].module);
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct ar_site *v = realloc(s->sites, sizeof(*v) * (size_t)cap);
		if (!v)
			return -ENOMEM;
		s->sites = v;
		s->cap = cap;
	}
	struct ar_frame *f = malloc(len);
	if (!f)
		return -ENOMEM;
	char *p = (char *)(f + n);
	for (int i = 0; i < n; i++) {
		f[i] = frames[i];
		f[i].function = put(&p, frames[i].function);
		f[i].file = put(&p, frames[i].file);
		f[i].module = put(&p, frames[i].module);
	}
	if (s->n && (s->sites[s->n - 1].thread > thread ||
		     (s->sites[s->n - 1].thread == thread && s->sites[s->n - 1].site >= site)))
		s->sorted = false;
	s->sites[s->n++] = (struct ar_site){ .thread = thread, .site = site, .nframes = n, .frames = f };
	return 0;
}

static int by_key(const void *x, const void *y)
{
	const struct ar_site *a = x, *b = y;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Sorted, and no key twice: -EINVAL if one is. */
static int settle(struct ar_sites *s)
{
	if (!s->sorted) {
		qsort(s->sites, (size_t)s->n, sizeof(*s->sites), by_key);
		s->sorted = true;
	}
	for (int i = 1; i < s->n; i++)
		if (!by_key(&s->sites[i - 1], &s->sites[i]))
			return -EINVAL;
	return 0;
}

const struct ar_site *ar_sites_find(const struct ar_sites *s, int thread, int site)
{
	if (!s || !s->n)
		return NULL;
	if (!s->sorted) /* only a writer's list: settled before it is written */
		settle((struct ar_sites *)s);
	struct ar_site key = { .thread = thread, .site = site };
	return bsearch(&key, s->sites, (size_t)s->n, sizeof(key), by_key);
}

int ar_sites_count(const struct ar_sites *s)
{
	return s ? s->n : 0;
}

int ar_sites_print(const struct ar_sites *s, FILE *f)
{
	int rc = settle((struct ar_sites *)s);
	if (rc)
		return rc;
	for (int i = 0; i < s->n; i++) {
		const struct ar_site *t = &s->sites[i];
		for (int k = 0; k < t->nframes; k++) {
			const struct ar_frame *fr = &t->frames[k];
			fprintf(f, "%d\t%d\t%d\t%s\t%" PRIx64 "\t%s\t%s\t%d\n", t->thread, t->site, k, fr->module,
				fr->offset, fr->function, fr->file, fr->line);
		}
	}
	return 0;
}

/* Splits line at tabs into up to max fields; how many. */
static int fields(char *line, char **f, int max)
{
	int n = 0;
	line[strcspn(line, "\n")] = 0;
	for (char *p = line; n < max; n++) {
		f[n] = p;
		char *t = strchr(p, '\t');
		if (!t)
			return n + 1;
		*t = 0;
		p = t + 1;
	}
	return max + 1; /* too many */
}

static bool number(const char *s, int base, unsigned long long max, unsigned long long *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, base);
	return *s && *s != '-' && !*end && !errno && *v <= max;
}

/* One line's frame, into frames[] of the site being read. */
static int read_line(char *line, int *thread, int *site, int *k, struct ar_frame *fr)
{
	char *f[8];
	unsigned long long v[5];
	if (fields(line, f, 8) != 8 || !number(f[0], 10, INT32_MAX, &v[0]) ||
	    !number(f[1], 10, UINT16_MAX, &v[1]) || v[1] == 0 || !number(f[2], 10, 63, &v[2]) ||
	    !number(f[4], 16, UINT64_MAX, &v[3]) || !number(f[7], 10, INT32_MAX, &v[4]))
		return -EINVAL;
	*thread = (int)v[0];
	*site = (int)v[1];
	*k = (int)v[2];
	*fr = (struct ar_frame){ .module = f[3], .offset = v[3], .function = f[5], .file = f[6],
				 .line = (int)v[4] };
	return 0;
}

int ar_sites_read(struct ar_sites *s, const char *path, int nthreads, char *err, size_t errlen)
{
	FILE *f = base_fopen_in(path);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		return rc;
	}
	/* a site's frames are gathered, with copies of their lines, then added */
	char line[8192], *held[64] = { 0 };
	struct ar_frame frames[64];
	int n = 0, thread = -1, site = -1, lineno = 0, rc = 0;
	bool more = true;
	while (!rc && more) {
		more = fgets(line, sizeof(line), f) != NULL;
		lineno += more;
		int t = -1, st = -1, k = -1;
		struct ar_frame fr;
		if (more && read_line(line, &t, &st, &k, &fr)) {
			snprintf(err, errlen, "%s:%d: expected THREAD SITE FRAME MODULE OFFSET FUNCTION FILE LINE, "
				 "tab-separated (SITE from 1, OFFSET in hex)", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (more && (unsigned)st >= ES_SITES_SLOTS) { /* a tuple's site indexes readers' tables */
			snprintf(err, errlen, "%s:%d: site %d, but a thread names its sites from 1 to %u", path,
				 lineno, st, ES_SITES_SLOTS - 1);
			rc = -EINVAL;
			break;
		}
		if (more && t >= nthreads) {
			snprintf(err, errlen, "%s:%d: thread %d, but the archive holds %d threads", path, lineno, t,
				 nthreads);
			rc = -EINVAL;
			break;
		}
		if (n && (!more || t != thread || st != site)) { /* the site before is whole */
			rc = ar_sites_add(s, thread, site, frames, n);
			for (int i = 0; i < n; i++)
				free(held[i]);
			n = 0;
			if (rc == -EINVAL)
				snprintf(err, errlen, "%s:%d: site %d of thread %d again", path, lineno, site, thread);
		}
		if (!more || rc)
			break;
		if (k != n) {
			snprintf(err, errlen, "%s:%d: expected frame %d of site %d of thread %d, got frame %d", path,
				 lineno, n, st, t, k);
			rc = -EINVAL;
			break;
		}
		/* its strings point into line: keep a copy until the site is added */
		size_t used = text_len(fr.module) + text_len(fr.function) + text_len(fr.file);
		char *copy = malloc(used);
		if (!copy) {
			rc = -ENOMEM;
			break;
		}
		char *p = copy;
		fr.module = put(&p, fr.module);
		fr.function = put(&p, fr.function);
		fr.file = put(&p, fr.file);
		held[n] = copy;
		frames[n++] = fr;
		thread = t;
		site = st;
	}
	for (int i = 0; i < n; i++)
		free(held[i]);
	fclose(f);
	if (!rc && (rc = settle(s)))
		snprintf(err, errlen, "%s: a site is given twice", path);
	return rc;
}
