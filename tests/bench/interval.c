/* interval.c - for the benchmark scripts: reads pairs "without with" (one run each, interleaved), prints the median ratio with its 95% interval. */
#include <stdio.h>

#include "tests/bench/interval.h"

/*
 * interval < PAIRS
 *   each line: the figure without and the figure with (seconds, say)
 * Prints "median lo hi n": the median of with/without and the 95%
 * bootstrap interval of that median, over n pairs.
 */
int main(void)
{
	static double r[4096];
	double a, b;
	int n = 0;
	char line[256];
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%lf %lf", &a, &b) != 2 || !(a > 0) || !(b > 0)) {
			fprintf(stderr, "interval: line %d: expected two positive figures, without and "
				"with, got '%.40s'\n", n + 1, line);
			return 1;
		}
		if (n == 4096) {
			fprintf(stderr, "interval: more than 4096 pairs\n");
			return 1;
		}
		r[n++] = b / a;
	}
	double m, lo, hi;
	if (bench_interval(r, n, &m, &lo, &hi)) {
		fprintf(stderr, "interval: no pairs\n");
		return 1;
	}
	printf("%.4f %.4f %.4f %d\n", m, lo, hi, n);
	return 0;
}
