/* bench.h - what every benchmark needs: clocks and medians. */
#ifndef BENCH_H
#define BENCH_H

#include <stdlib.h>
#include <time.h>

/* CPU time of the calling thread, in ns: a thread pushed off its core by
 * others is not billed for the wait. */
static inline double bench_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline double bench_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of n figures (sorts them). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	return v[n / 2];
}

#endif
