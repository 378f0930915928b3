/* plot.c - pictures of an archive through gnuplot: each rank's time computing and inside MPI by class of call, and who sent how much to whom. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "archive/convert.h"

/*
 * The timeline cuts the run into BINS slices of time; in each, a rank's
 * row is stacked by the share of that slice its outermost calls spent in
 * each class (computing is what is left).  The longest calls of each class
 * are labelled where they happened.  Data and gnuplot script stay in the
 * directory beside the PNG, for whoever wants to redraw them.
 */

/* NLONG: the longest calls labelled, per class; classes and colours are
 * every picture's (es_op_class) */
enum { BINS = 400, NCLASS = ES_NCLASS, NLONG = 2 };

struct longest {
	uint64_t d, at;
	int row;
	unsigned op;
};

/* A phase that began on the first lane: marked across the picture. */
struct mark {
	uint64_t at;
	uint32_t event;
	int thread;
};
enum { NMARKS = 40 };

/* What the timeline draws: each row's share of each bin by class, the
 * longest calls of each class, and where the first lane's phases began. */
struct timeline {
	const ar_archive *a;
	bool mpi;
	int rows;
	uint64_t t0, t1;
	double width;
	double *share;   /* [row][bin][class] */
	int *threads;    /* per row: its threads that made calls */
	struct longest lg[NCLASS][NLONG];
	struct mark marks[NMARKS];
	int nmarks;
	bool empty;      /* no call between MPI_Init and MPI_Finalize: empty lanes, said in the title */
};

#define SHARE(tl, r, b, c) ((tl)->share[((size_t)(r) * BINS + (size_t)(b)) * NCLASS + (size_t)(c)])

/* s as a gnuplot string: single-quoted, where gnuplot substitutes
 * nothing (a backquote in a double-quoted string runs a command: an
 * archive's job or phase names are anyone's bytes), a quote doubled, a
 * control byte as '?' (a newline would end the command). */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("''", f);
		else
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	fputc('\'', f);
}

static int run_gnuplot(const char *script, char *err, size_t errlen)
{
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 2>&1", script);
	FILE *p = popen(cmd, "r");
	if (!p) {
		snprintf(err, errlen, "gnuplot: %s", strerror(errno));
		return -errno;
	}
	char line[512], first[512] = "";
	while (fgets(line, sizeof(line), p))
		if (!*first)
			snprintf(first, sizeof(first), "%s", line);
	int st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		first[strcspn(first, "\n")] = 0;
		snprintf(err, errlen, "gnuplot %s failed%s%s", script, *first ? ": " : " (is it installed?)",
			 first);
		return -EIO;
	}
	return 0;
}

/* The run: from the first call after MPI_Init to the last before MPI_Finalize. */
static int span(struct timeline *tl)
{
	const struct ar_event *ev = ar_events(tl->a);
	tl->t0 = UINT64_MAX;
	tl->t1 = 0;
	for (size_t i = 0; i < ar_nevents(tl->a); i++) {
		unsigned c = es_op_code(ev[i].t.op);
		if (c == ES_OP_MPI_INIT || c == ES_OP_MPI_FINALIZE)
			continue;
		tl->t0 = ev[i].t.start < tl->t0 ? ev[i].t.start : tl->t0;
		tl->t1 = ev[i].t.end > tl->t1 ? ev[i].t.end : tl->t1;
	}
	return tl->t0 < tl->t1 ? 0 : -ENODATA;
}

static void keep_longest(struct longest *lg, uint64_t d, uint64_t at, int row, unsigned op)
{
	int k = NLONG - 1;
	if (d <= lg[k].d)
		return;
	for (; k > 0 && d > lg[k - 1].d; k--)
		lg[k] = lg[k - 1];
	lg[k] = (struct longest){ d, at, row, op };
}

/* Where bin b begins: in whole ns, so that a bin's end is the next one's
 * start exactly (a double's rounding once put x at 10.99999 bins, and a
 * 1 s wait fell whole into the one bin it began in). */
static uint64_t bin_edge(const struct timeline *tl, size_t b)
{
	return tl->t0 + (uint64_t)((unsigned __int128)(tl->t1 - tl->t0) * b / BINS);
}

/* One outermost call of row from s to f, spread over the bins it covers. */
static void add_span(struct timeline *tl, int row, int cls, uint64_t s, uint64_t f)
{
	size_t b = (size_t)((unsigned __int128)(s - tl->t0) * BINS / (tl->t1 - tl->t0));
	for (uint64_t x = s; x < f; b++) {
		while (b + 1 < BINS && bin_edge(tl, b + 1) <= x)
			b++;
		b = b >= BINS ? BINS - 1 : b;
		uint64_t edge = b + 1 < BINS ? bin_edge(tl, b + 1) : tl->t1;
		uint64_t y = edge < f && edge > x ? edge : f;
		SHARE(tl, row, b, cls) += (double)(y - x) / tl->width;
		x = y;
	}
}

static int gather_thread(struct timeline *tl, int t, int row)
{
	const struct ar_event *ev = ar_events(tl->a);
	struct ar_item *items;
	size_t n;
	int rc = ar_thread_items(tl->a, t, &items, &n, NULL);
	if (rc)
		return rc;
	uint64_t enter = 0;
	size_t depth = 0, calls = 0;
	for (size_t i = 0; i < n; i++) {
		if (ar_is_phase(&ev[items[i].event].t)) {
			if (items[i].kind == AR_ENTER && row == 0 && tl->nmarks < NMARKS)
				tl->marks[tl->nmarks++] = (struct mark){ items[i].time, items[i].event, t };
			continue; /* phases are marked, not drawn as calls */
		}
		if (items[i].kind == AR_ENTER && depth++ == 0)
			enter = items[i].time;
		if (items[i].kind != AR_LEAVE || !depth || --depth)
			continue; /* the outermost calls only */
		const struct es_trace *e = &ev[items[i].event].t;
		unsigned code = es_op_code(e->op);
		if (code == ES_OP_MPI_INIT || code == ES_OP_MPI_FINALIZE)
			continue;
		uint64_t s = enter < tl->t0 ? tl->t0 : enter, f = items[i].time > tl->t1 ? tl->t1 : items[i].time;
		int cls = (int)es_op_class(e->op);
		add_span(tl, row, cls, s, f);
		calls++;
		keep_longest(tl->lg[cls], f > s ? f - s : 0, s + (f > s ? f - s : 0) / 2, row, code);
	}
	tl->threads[row] += calls > 0;
	free(items);
	return 0;
}

/*
 * A rank of several threads has several threads' time in each bin: its
 * lane shows the share of its threads' time (what it spent in each class
 * over its threads), so that a stack never passes the lane's top.
 */
static int gather(struct timeline *tl)
{
	int nt = ar_nthreads(tl->a);
	tl->width = (double)(tl->t1 - tl->t0) / BINS;
	tl->share = calloc((size_t)tl->rows * BINS * NCLASS, sizeof(double));
	tl->threads = calloc((size_t)tl->rows, sizeof(int));
	if (!tl->share || !tl->threads)
		return -ENOMEM;
	int rc = 0;
	for (int t = 0; t < nt && !rc && !tl->empty; t++) {
		int row = tl->mpi ? ar_thread(tl->a, t)->rank : t;
		if (row >= 0)
			rc = gather_thread(tl, t, row);
	}
	for (int r = 0; r < tl->rows; r++)
		for (int b = 0; b < BINS && tl->threads[r] > 1; b++)
			for (int c = 0; c < NCLASS; c++)
				SHARE(tl, r, b, c) /= tl->threads[r];
	return rc;
}

/*
 * A block per class, x y xlow xhigh ylow yhigh (boxxyerror), each opened
 * by a box outside the plot: gnuplot's `index` counts blocks, and a class
 * with no box would leave an empty block that shifts every later class's
 * index (and drops it from the key).
 */
/* Bin b of row r, class c: the share of the lane below it, and its own
 * (0: nothing drawn; cut to the lane's top, where rounding put it past). */
static void box_at(const struct timeline *tl, int r, int b, int c, double *below, double *h)
{
	*below = 0;
	for (int k = 0; k < c; k++)
		*below += SHARE(tl, r, b, k);
	*h = SHARE(tl, r, b, c);
	if (*h <= 0 || *below >= 1)
		*h = 0;
	else if (*below + *h > 1)
		*h = 1 - *below;
}

static int write_timeline_data(const struct timeline *tl, const char *path)
{
	FILE *f = base_fopen_out(path, 0600);
	if (!f)
		return -errno;
	for (int c = 0; c < NCLASS; c++) {
		fprintf(f, "# %s\n-1 -10 -1 -1 -10 -10\n", es_class_name((enum es_class)c));
		for (int r = 0; r < tl->rows; r++)
			for (int b = 0, run; b < BINS; b += run) {
				double below, h;
				box_at(tl, r, b, c, &below, &h);
				/* bins alike drawn as one box: no seams inside a long call */
				double nb, nh;
				for (run = 1; b + run < BINS; run++) {
					box_at(tl, r, b + run, c, &nb, &nh);
					if (fabs(nb - below) > 1e-4 || fabs(nh - h) > 1e-4)
						break;
				}
				if (h <= 0)
					continue;
				double x0 = (double)b * tl->width / 1e9, x1 = (double)(b + run) * tl->width / 1e9;
				double y0 = r - 0.4 + 0.8 * below, y1 = y0 + 0.8 * h;
				fprintf(f, "%.9f %.4f %.9f %.9f %.4f %.4f\n", (x0 + x1) / 2, (y0 + y1) / 2, x0, x1, y0, y1);
			}
		fputs("\n\n", f);
	}
	return fclose(f) ? -errno : 0;
}

/*
 * The longest calls' labels, the longest first, each where its call was:
 * inside the frame (moved in from an edge), in one of three heights of its
 * lane, never over another; one that finds no room is left out.  Sizes
 * are the terminal's: a plot some 1,150 px wide, 8 pt text about 6.5 px a
 * character and a third of a 40 px lane high.
 */
enum { LSLOTS = 3 };
static int place_labels(const struct timeline *tl, FILE *f)
{
	struct placed { int row, slot; double x0, x1; } done[NCLASS * NLONG];
	const struct longest *all[NCLASS * NLONG];
	int n = 0, nd = 0, label = 1;
	for (int c = 0; c < NCLASS; c++)
		for (int k = 0; k < NLONG && tl->lg[c][k].d; k++)
			all[n++] = &tl->lg[c][k];
	for (int i = 1; i < n; i++) /* the longest first: they choose first */
		for (int j = i; j > 0 && all[j]->d > all[j - 1]->d; j--) {
			const struct longest *t = all[j];
			all[j] = all[j - 1], all[j - 1] = t;
		}
	double span = (double)(tl->t1 - tl->t0) / 1e9;
	for (int i = 0; i < n; i++) {
		const struct longest *l = all[i];
		char text[96];
		double d = (double)l->d;
		snprintf(text, sizeof(text), "%s %.3g %s", es_op_name(l->op), d >= 1e9 ? d / 1e9 : d >= 1e6 ? d / 1e6 : d / 1e3,
			 d >= 1e9 ? "s" : d >= 1e6 ? "ms" : "us");
		double w = (double)strlen(text) * 6.5 / 1150 * span, x = (double)(l->at - tl->t0) / 1e9;
		if (w >= span)
			continue;
		x = x - w / 2 < 0 ? w / 2 : x + w / 2 > span ? span - w / 2 : x;
		int slot = -1;
		for (int s = 0; s < LSLOTS && slot < 0; s++) {
			slot = s;
			for (int k = 0; k < nd; k++)
				if (done[k].row == l->row && done[k].slot == s && x - w / 2 < done[k].x1 && done[k].x0 < x + w / 2)
					slot = -1;
		}
		if (slot < 0)
			continue;
		done[nd++] = (struct placed){ l->row, slot, x - w / 2, x + w / 2 };
		fprintf(f, "set label %d ", label++);
		gp_string(f, text);
		fprintf(f, " at %.9f,%.2f center front noenhanced font ',8'\n", x, l->row - 0.27 + 0.27 * slot);
	}
	return label;
}

/* The script: a key entry per class, the longest calls labelled
 * (place_labels), the first lane's phases marked. */
static int write_timeline_script(const struct timeline *tl, const char *dir, const char *path)
{
	FILE *f = base_fopen_out(path, 0600);
	if (!f)
		return -errno;
	const char *job = ar_job(tl->a), *what = tl->mpi ? "MPI" : "operations", *row = tl->mpi ? "rank" : "thread";
	fprintf(f, "# timeline.gp - each %s's time inside %s, by class; white is computing\n"
		"set terminal pngcairo size 1400,%d font ',10'\nset output '%s/timeline.png'\n"
		"set xlabel 'seconds since the first call after MPI_Init' noenhanced\nset ylabel '%s'\n"
		"set yrange [-0.6:%d.6]\nset ytics 1\nset xrange [0:%.9f]\nset key outside right\n"
		"set style fill solid noborder\n", row, what, 200 + 40 * tl->rows, dir, row,
		tl->rows - 1, (double)(tl->t1 - tl->t0) / 1e9);
	char title[PS_NAME_MAX + 128];
	snprintf(title, sizeof(title), "%s: time inside %s per %s (white: computing)%s", job, what, row,
		 tl->empty ? ": no call recorded" : "");
	fputs("set title ", f);
	gp_string(f, title);
	fputs(" noenhanced\n", f);
	int label = place_labels(tl, f);
	for (int k = 0; k < tl->nmarks; k++) {
		const struct mark *m = &tl->marks[k];
		char buf[32];
		double x = (double)(m->at > tl->t0 ? m->at - tl->t0 : 0) / 1e9;
		fprintf(f, "set arrow from %.9f,graph 0 to %.9f,graph 1 nohead dt 2 lc rgb '#808080' back\n"
			"set label %d ", x, x, label++);
		gp_string(f, ar_phase_name(tl->a, m->thread, &ar_events(tl->a)[m->event].t, buf, sizeof(buf)));
		fprintf(f, " at %.9f,graph 1.01 left rotate by 20 noenhanced font ',8'\n", x);
	}
	fputs("plot ", f);
	/* the key: an MPI job's classes, or a PATHS job's one */
	for (int c = 0, first = 1; c < NCLASS; c++) {
		if ((c == ES_CLASS_PATHS) == tl->mpi)
			continue;
		fprintf(f, "%s'%s/timeline.dat' index %d using 1:2:3:4:5:6 with boxxyerror lc rgb '%s' title '%s'",
			first ? "" : ", \\\n     ", dir, c, ar_class_colour((enum es_class)c),
			es_class_name((enum es_class)c));
		first = 0;
	}
	fputc('\n', f);
	return fclose(f) ? -errno : 0;
}

static int timeline(const ar_archive *a, const char *dir, char *err, size_t errlen)
{
	struct timeline tl = { .a = a };
	int nt = ar_nthreads(a), nranks = 0;
	for (int t = 0; t < nt; t++)
		nranks = ar_thread(a, t)->rank + 1 > nranks ? ar_thread(a, t)->rank + 1 : nranks;
	tl.mpi = nranks > 0;
	tl.rows = tl.mpi ? nranks : nt;
	if (span(&tl)) { /* an archive cut off before it recorded a call: its lanes, empty, over a second */
		tl.empty = true;
		tl.t0 = 0;
		tl.t1 = 1000000000;
		tl.rows = tl.rows > 0 ? tl.rows : 1;
	}
	char p[4400];
	int rc = gather(&tl);
	snprintf(p, sizeof(p), "%s/timeline.dat", dir);
	if (!rc)
		rc = write_timeline_data(&tl, p);
	if (!rc) {
		snprintf(p, sizeof(p), "%s/timeline.gp", dir);
		rc = write_timeline_script(&tl, dir, p);
	}
	free(tl.share), free(tl.threads);
	if (rc) {
		snprintf(err, errlen, "%s: %s", p, strerror(-rc));
		return rc;
	}
	return run_gnuplot(p, err, errlen);
}

/* who sent how much to whom */
static int matrix(const ar_archive *a, int nranks, const char *dir, char *err, size_t errlen)
{
	const struct ar_event *ev = ar_events(a);
	double *bytes = calloc((size_t)nranks * (size_t)nranks, sizeof(double));
	if (!bytes)
		return -ENOMEM;
	for (size_t i = 0; i < ar_nevents(a); i++) {
		const struct es_trace *e = &ev[i].t;
		int from = ar_thread(a, (int)ev[i].thread)->rank;
		bool send = es_message(e->op) > 0;
		if (send && from >= 0 && e->element < (uint32_t)nranks && !(e->op & ES_OP_FAILED))
			bytes[(size_t)from * (size_t)nranks + e->element] += e->size;
	}
	char p[4400];
	int rc = 0;
	snprintf(p, sizeof(p), "%s/matrix.dat", dir);
	FILE *f = base_fopen_out(p, 0600);
	if (!f)
		rc = -errno;
	for (int r = 0; f && r < nranks; r++)
		for (int c = 0; c < nranks; c++)
			fprintf(f, "%.0f%c", bytes[(size_t)r * (size_t)nranks + (size_t)c], c + 1 < nranks ? ' ' : '\n');
	if (f && fclose(f))
		rc = -errno;
	free(bytes);
	snprintf(p, sizeof(p), "%s/matrix.gp", dir);
	f = rc ? NULL : base_fopen_out(p, 0600);
	if (!rc && !f)
		rc = -errno;
	if (f) {
		fprintf(f, "# matrix.gp - bytes sent point to point, from the row's rank to the column's\n"
			"set terminal pngcairo size 800,700 font ',10'\nset output '%s/matrix.png'\n"
			"set xlabel 'to rank'\n"
			"set ylabel 'from rank'\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5] reverse\n"
			"set xtics 1\nset ytics 1\nset palette defined (0 'white', 1 '#fdd49e', 2 '#d7301f')\n"
			"set cblabel 'bytes'\nset title ", dir, nranks - 1, nranks - 1);
		char title[PS_NAME_MAX + 64];
		snprintf(title, sizeof(title), "%s: bytes sent point to point", ar_job(a));
		gp_string(f, title);
		fprintf(f, " noenhanced\nplot '%s/matrix.dat' matrix with image notitle\n", dir);
		if (fclose(f))
			rc = -errno;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", p, strerror(-rc));
		return rc;
	}
	return run_gnuplot(p, err, errlen);
}

int ar_plot(const ar_archive *a, const char *dir, int *pictures, char *err, size_t errlen)
{
	*pictures = 0;
	if (strpbrk(dir, "'\"\n")) {
		snprintf(err, errlen, "%s: a directory for pictures cannot have quotes in its name (gnuplot's "
			 "scripts name it)", dir);
		return -EINVAL;
	}
	int made = base_mkdir_out(dir, 0700); /* a trace's pictures are its owner's, as the archive is */
	if (made) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-made));
		return made;
	}
	int rc = timeline(a, dir, err, errlen);
	if (rc)
		return rc;
	++*pictures;
	int nranks = 0;
	for (int t = 0; t < ar_nthreads(a); t++)
		nranks = ar_thread(a, t)->rank + 1 > nranks ? ar_thread(a, t)->rank + 1 : nranks;
	if (!nranks)
		return 0;
	if ((rc = matrix(a, nranks, dir, err, errlen)))
		return rc;
	++*pictures;
	return 0;
}
