/* plot.c - pictures of an archive through gnuplot: each rank's time computing and inside MPI by class of call, and who sent how much to whom. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "archive/convert.h"

/*
 * The timeline cuts the run into BINS slices of time; in each, a rank's
 * row is stacked by the share of that slice its outermost calls spent in
 * each class (computing is what is left).  The longest single waits are
 * labelled where they happened.  Data and gnuplot script stay in the
 * directory beside the PNG, for whoever wants to redraw them.
 */

enum { BINS = 400, NCLASS = 5, NLONG = 5 };
static const char *const class_name[NCLASS] = { "point-to-point", "waits and polls", "collectives",
						"one-sided", "other MPI" };
static const char *const class_colour[NCLASS] = { "#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd" };

static int class_of(unsigned op)
{
	const struct es_op_info *i = es_op_info(op);
	if (!i)
		return NCLASS - 1;
	if (i->kind == ES_KIND_WAIT || i->kind == ES_KIND_POLL)
		return 1;
	if (i->kind == ES_KIND_COLL || i->kind == ES_KIND_ICOLL)
		return i->group == ES_GROUP_ONE_SIDED ? 3 : 2;
	if (i->group == ES_GROUP_P2P)
		return 0;
	if (i->group == ES_GROUP_ONE_SIDED)
		return 3;
	return NCLASS - 1;
}

struct longest {
	uint64_t d, at;
	int row;
	unsigned op;
};

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

int ar_plot(const ar_archive *a, const char *dir, int *pictures, char *err, size_t errlen)
{
	*pictures = 0;
	if (strpbrk(dir, "'\"\n")) {
		snprintf(err, errlen, "%s: a directory for pictures cannot have quotes in its name (gnuplot's "
			 "scripts name it)", dir);
		return -EINVAL;
	}
	int made = ps_mkdir_out(dir, 0755); /* gnuplot writes into it: nobody else may */
	if (made) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-made));
		return made;
	}
	const struct ar_event *ev = ar_events(a);
	size_t ne = ar_nevents(a);
	int nt = ar_nthreads(a), nranks = 0;
	for (int t = 0; t < nt; t++)
		nranks = ar_thread(a, t)->rank + 1 > nranks ? ar_thread(a, t)->rank + 1 : nranks;
	bool mpi = nranks > 0;
	int rows = mpi ? nranks : nt;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < ne; i++) {
		unsigned c = es_op_code(ev[i].t.op);
		if (c == ES_OP_MPI_INIT || c == ES_OP_MPI_FINALIZE)
			continue; /* the run is between them */
		t0 = ev[i].t.start < t0 ? ev[i].t.start : t0;
		t1 = ev[i].t.end > t1 ? ev[i].t.end : t1;
	}
	if (t0 >= t1) {
		snprintf(err, errlen, "%s: nothing to draw: no events between MPI_Init and MPI_Finalize", dir);
		return -ENODATA;
	}
	double *share = calloc((size_t)rows * BINS * NCLASS, sizeof(double));
	struct longest lg[NLONG] = { 0 };
	if (!share)
		return -ENOMEM;
	double width = (double)(t1 - t0) / BINS;
	int rc = 0;
	for (int t = 0; t < nt && !rc; t++) {
		int row = mpi ? ar_thread(a, t)->rank : t;
		if (row < 0)
			continue;
		struct ar_item *items;
		size_t n;
		if ((rc = ar_thread_items(a, t, &items, &n, NULL)))
			break;
		uint64_t enter = 0;
		size_t depth = 0;
		for (size_t i = 0; i < n; i++) {
			if (items[i].kind == AR_ENTER && depth++ == 0)
				enter = items[i].time;
			if (items[i].kind != AR_LEAVE || !depth || --depth)
				continue; /* the outermost calls only */
			const struct es_trace *e = &ev[items[i].event].t;
			unsigned code = es_op_code(e->op);
			if (code == ES_OP_MPI_INIT || code == ES_OP_MPI_FINALIZE)
				continue;
			uint64_t s = enter < t0 ? t0 : enter, f = items[i].time > t1 ? t1 : items[i].time;
			int cls = mpi ? class_of(e->op) : NCLASS - 1;
			for (uint64_t x = s; x < f;) {
				size_t b = (size_t)((double)(x - t0) / width);
				b = b >= BINS ? BINS - 1 : b;
				uint64_t edge = t0 + (uint64_t)((double)(b + 1) * width);
				uint64_t y = edge < f && edge > x ? edge : f;
				share[((size_t)row * BINS + b) * NCLASS + (size_t)cls] += (double)(y - x) / width;
				x = y;
			}
			uint64_t d = f > s ? f - s : 0;
			int k = NLONG - 1;
			if (cls == 1 && d > lg[k].d) {
				for (; k > 0 && d > lg[k - 1].d; k--)
					lg[k] = lg[k - 1];
				lg[k] = (struct longest){ d, s + d / 2, row, code };
			}
		}
		free(items);
	}
	char p[4400];
	snprintf(p, sizeof(p), "%s/timeline.dat", dir);
	FILE *f = rc ? NULL : ps_fopen_out(p, 0644);
	if (!rc && !f)
		rc = -errno;
	if (f) {
		/* per class a block: x y xlow xhigh ylow yhigh (boxxyerror) */
		for (int c = 0; c < NCLASS; c++) {
			fprintf(f, "# %s\n", class_name[c]);
			for (int r = 0; r < rows; r++)
				for (int b = 0; b < BINS; b++) {
					double below = 0;
					for (int k = 0; k < c; k++)
						below += share[((size_t)r * BINS + (size_t)b) * NCLASS + (size_t)k];
					double h = share[((size_t)r * BINS + (size_t)b) * NCLASS + (size_t)c];
					if (h <= 0)
						continue;
					double x0 = (double)b * width / 1e9, x1 = (double)(b + 1) * width / 1e9;
					double y0 = r - 0.4 + 0.8 * below, y1 = y0 + 0.8 * (h > 1 ? 1 : h);
					fprintf(f, "%.9f %.4f %.9f %.9f %.4f %.4f\n", (x0 + x1) / 2, (y0 + y1) / 2, x0, x1, y0, y1);
				}
			fputs("\n\n", f);
		}
		if (fclose(f))
			rc = -errno;
	}
	snprintf(p, sizeof(p), "%s/timeline.gp", dir);
	f = rc ? NULL : ps_fopen_out(p, 0644);
	if (!rc && !f)
		rc = -errno;
	if (f) {
		fprintf(f, "# timeline.gp - %s: each %s's time inside %s, by class; white is computing\n"
			"set terminal pngcairo size 1400,%d font ',10'\nset output '%s/timeline.png'\n"
			"set title \"%s: time inside %s per %s (white: computing)\" noenhanced\n"
			"set xlabel 'seconds since the first call after MPI_Init' noenhanced\nset ylabel '%s'\n"
			"set yrange [-0.6:%d.6]\nset ytics 1\nset xrange [0:%.9f]\nset key outside right\n"
			"set style fill solid noborder\n", ar_job(a), mpi ? "rank" : "thread", mpi ? "MPI" : "operations",
			200 + 40 * rows, dir, ar_job(a), mpi ? "MPI" : "operations", mpi ? "rank" : "thread",
			mpi ? "rank" : "thread", rows - 1, (double)(t1 - t0) / 1e9);
		for (int k = 0; k < NLONG && lg[k].d; k++)
			fprintf(f, "set label %d \"%s %.3g ms\" at %.9f,%.2f center front noenhanced font ',8'\n", k + 1,
				es_op_name(lg[k].op), (double)lg[k].d / 1e6, (double)(lg[k].at - t0) / 1e9,
				lg[k].row + 0.5);
		fputs("plot ", f);
		for (int c = 0; c < NCLASS; c++)
			fprintf(f, "%s'%s/timeline.dat' index %d using 1:2:3:4:5:6 with boxxyerror lc rgb '%s' title '%s'",
				c ? ", \\\n     " : "", dir, c, class_colour[c], class_name[c]);
		fputc('\n', f);
		if (fclose(f))
			rc = -errno;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", p, strerror(-rc));
		free(share);
		return rc;
	}
	if ((rc = run_gnuplot(p, err, errlen))) {
		free(share);
		return rc;
	}
	++*pictures;
	free(share);
	if (!mpi)
		return 0;
	/* who sent how much to whom */
	double *bytes = calloc((size_t)nranks * (size_t)nranks, sizeof(double));
	if (!bytes)
		return -ENOMEM;
	for (size_t i = 0; i < ne; i++) {
		const struct es_trace *e = &ev[i].t;
		int from = ar_thread(a, (int)ev[i].thread)->rank;
		bool send = ar_message(e->op) > 0;
		if (send && from >= 0 && e->element < (uint32_t)nranks && !(e->op & ES_OP_FAILED))
			bytes[(size_t)from * (size_t)nranks + e->element] += e->size;
	}
	snprintf(p, sizeof(p), "%s/matrix.dat", dir);
	f = ps_fopen_out(p, 0644);
	if (!f)
		rc = -errno;
	for (int r = 0; f && r < nranks; r++)
		for (int c = 0; c < nranks; c++)
			fprintf(f, "%.0f%c", bytes[(size_t)r * (size_t)nranks + (size_t)c], c + 1 < nranks ? ' ' : '\n');
	if (f && fclose(f))
		rc = -errno;
	free(bytes);
	snprintf(p, sizeof(p), "%s/matrix.gp", dir);
	f = rc ? NULL : ps_fopen_out(p, 0644);
	if (!rc && !f)
		rc = -errno;
	if (f) {
		fprintf(f, "# matrix.gp - %s: bytes sent point to point, from the row's rank to the column's\n"
			"set terminal pngcairo size 800,700 font ',10'\nset output '%s/matrix.png'\n"
			"set title \"%s: bytes sent point to point\" noenhanced\nset xlabel 'to rank'\n"
			"set ylabel 'from rank'\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5] reverse\n"
			"set xtics 1\nset ytics 1\nset palette defined (0 'white', 1 '#fdd49e', 2 '#d7301f')\n"
			"set cblabel 'bytes'\nplot '%s/matrix.dat' matrix with image notitle\n", ar_job(a), dir,
			ar_job(a), nranks - 1, nranks - 1, dir);
		if (fclose(f))
			rc = -errno;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", p, strerror(-rc));
		return rc;
	}
	if ((rc = run_gnuplot(p, err, errlen)))
		return rc;
	++*pictures;
	return 0;
}
