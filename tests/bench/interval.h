/* interval.h - the median of paired ratios and its 95% bootstrap confidence interval, so a slowdown says whether it is inside the noise. */
#ifndef BENCH_INTERVAL_H
#define BENCH_INTERVAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_BOOT 10000 /* resamples: the interval's ends move by well under 0.001 between seeds */

static inline int bench_interval_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) without changing v (n <= 4096). */
static inline double bench_interval_median(const double *v, int n)
{
	double s[4096];
	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), bench_interval_cmp);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * r[i] = with[i] / without[i] of interleaved pair i: pairs share whatever
 * the machine was doing at the time, so their ratio cancels the drift of a
 * shared machine.  The interval is the percentile bootstrap of the median
 * (resample the pairs with replacement, take the 2.5th and 97.5th
 * percentiles of the resamples' medians), which assumes nothing about the
 * shape of the noise.  A fixed seed makes a run's figures reproducible from
 * its data.  Returns 0, or -1 if n is not 1 to 4096.
 */
static inline int bench_interval(const double *r, int n, double *median, double *lo, double *hi)
{
	if (n < 1 || n > 4096)
		return -1;
	*median = bench_interval_median(r, n);
	double *meds = malloc(sizeof(double) * BENCH_BOOT), s[4096];
	if (!meds)
		return -1;
	uint64_t x = 0x2545f4914f6cdd1dull;
	for (int b = 0; b < BENCH_BOOT; b++) {
		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
			s[i] = r[(x >> 11) % (uint64_t)n];
		}
		meds[b] = bench_interval_median(s, n);
	}
	qsort(meds, BENCH_BOOT, sizeof(double), bench_interval_cmp);
	*lo = meds[(int)(0.025 * BENCH_BOOT)];
	*hi = meds[(int)(0.975 * BENCH_BOOT) - 1];
	free(meds);
	return 0;
}

#endif
