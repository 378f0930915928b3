/* test_view.c - the live view's data: a ring of the last events, said as JSON for the page within a window and a cap. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"
#include "monitors/view.h"
#include "tests/unit/suites.h"

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The window, the cap and the ring: only what ended within the window,
 * the newest when capped, the oldest dropped when full; each op once. */
START_TEST(window_cap_and_ring)
{
	lv *v;
	ck_assert_int_eq(lv_create(4, &v), 0);
	const struct lv_thread th[2] = { { "rank0.thread0", 0 }, { "rank1.thread0", 1 } };
	uint64_t ms = 1000000;
	for (uint32_t i = 1; i <= 6; i++) { /* ends at 1..6 ms; the ring keeps 3..6 */
		struct lv_event e = { (i - 1) * ms, i * ms, i % 2, i == 4 ? ES_NONE : 1,
				      (uint16_t)(i % 2 ? ES_OP_MPI_SEND : ES_OP_MPI_ALLREDUCE) };
		lv_add(v, &e);
	}
	ck_assert_uint_eq(lv_added(v), 6);
	char *j;
	size_t len;
	/* now 6 ms, a window of 2.5 ms (from 3.5 ms): those ending at 4, 5, 6 ms,
	 * a start before the window at its edge */
	ck_assert_int_eq(lv_json(v, "job1", th, 2, 6 * ms, 2500000, 100, &j, &len), 0);
	ck_assert_uint_eq(len, strlen(j));
	ck_assert_msg(strstr(j, "\"job\":\"job1\",\"window_ms\":2.500,\"added\":6,"), "%s", j);
	ck_assert_msg(strstr(j, "\"threads\":[{\"name\":\"rank0.thread0\",\"rank\":0},{\"name\":\"rank1.thread0\",\"rank\":1}]"),
		      "%s", j);
	ck_assert_msg(strstr(j, "\"events\":[[0,67,0.000,0.500,-1],[1,34,0.500,1.500,1],[0,67,1.500,2.500,1]]"), "%s", j);
	ck_assert_int_eq(count(j, "[\"MPI_Send\",\"point-to-point\"]"), 1);
	ck_assert_int_eq(count(j, "[\"MPI_Allreduce\",\"collectives\"]"), 1);
	free(j);
	/* capped at the newest two */
	ck_assert_int_eq(lv_json(v, "job1", th, 2, 6 * ms, 10 * ms, 2, &j, &len), 0);
	ck_assert_msg(strstr(j, "\"events\":[[1,34,4.000,5.000,1],[0,67,5.000,6.000,1]]"), "%s", j);
	free(j);
	/* a name with a quote cannot break the JSON */
	const struct lv_thread odd[1] = { { "a\"b\\c", -1 } };
	ck_assert_int_eq(lv_json(v, "j\"x", odd, 1, 6 * ms, 10 * ms, 10, &j, &len), 0);
	ck_assert_msg(strstr(j, "\"job\":\"j?x\"") && strstr(j, "\"name\":\"a?b?c\""), "%s", j);
	ck_assert_msg(!strstr(j, "[1,"), "an event of a thread the page does not know: %s", j);
	free(j);
	lv_destroy(v);
	ck_assert_int_eq(lv_create(0, &v), -ENOMEM);
}
END_TEST

Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, window_cap_and_ring);
	suite_add_tcase(s, tc);
	return s;
}
