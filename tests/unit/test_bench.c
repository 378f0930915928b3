/* test_bench.c - the benchmarks' statistics: the median ratio and its bootstrap interval. */
#include "tests/bench/interval.h"
#include "tests/unit/suites.h"

START_TEST(interval_brackets_the_median)
{
	double r[11], m, lo, hi;
	for (int i = 0; i < 11; i++)
		r[i] = 1.0 + 0.01 * (i - 5); /* 0.95 .. 1.05 */
	ck_assert_int_eq(bench_interval(r, 11, &m, &lo, &hi), 0);
	ck_assert_double_eq_tol(m, 1.0, 1e-12);
	ck_assert(lo <= m && m <= hi);
	ck_assert(lo >= 0.95 && hi <= 1.05); /* never outside the data */
	ck_assert(lo < 1.0 && hi > 1.0);      /* and not a point: the data are spread */
	/* an outlier moves the median's interval little, a mean's a lot */
	r[0] = 40.0;
	ck_assert_int_eq(bench_interval(r, 11, &m, &lo, &hi), 0);
	ck_assert(hi <= 1.05);
}
END_TEST

START_TEST(interval_of_agreeing_pairs_is_a_point)
{
	double r[10], m, lo, hi;
	for (int i = 0; i < 10; i++)
		r[i] = 1.02;
	ck_assert_int_eq(bench_interval(r, 10, &m, &lo, &hi), 0);
	ck_assert_double_eq(m, 1.02);
	ck_assert_double_eq(lo, 1.02);
	ck_assert_double_eq(hi, 1.02);
	/* even count: the median is the mean of the middle two */
	double e[4] = { 1.0, 4.0, 2.0, 3.0 };
	ck_assert_int_eq(bench_interval(e, 4, &m, &lo, &hi), 0);
	ck_assert_double_eq(m, 2.5);
	/* too few or too many pairs */
	ck_assert_int_eq(bench_interval(r, 0, &m, &lo, &hi), -1);
	ck_assert_int_eq(bench_interval(r, 5000, &m, &lo, &hi), -1);
}
END_TEST

/* Ten pairs from a machine whose noise is 3% cannot tell 1% from nothing:
 * the interval says so by holding 1.00. */
START_TEST(interval_is_honest_about_noise)
{
	double r[10] = { 1.03, 0.98, 1.01, 1.04, 0.97, 1.02, 0.99, 1.03, 1.00, 1.01 }, m, lo, hi;
	ck_assert_int_eq(bench_interval(r, 10, &m, &lo, &hi), 0);
	ck_assert(lo <= 1.0 && hi >= 1.01);
}
END_TEST

Suite *bench_suite(void)
{
	Suite *s = suite_create("bench");
	TCase *tc = tcase_create("interval");
	tcase_add_test(tc, interval_brackets_the_median);
	tcase_add_test(tc, interval_of_agreeing_pairs_is_a_point);
	tcase_add_test(tc, interval_is_honest_about_noise);
	suite_add_tcase(s, tc);
	return s;
}
