/* check_main.c - runs every Check unit suite; CK_RUN_SUITE=NAME picks one, ES_UNIT_PART=K/N the K-th of N parts (make check runs the parts at once). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/suites.h"

/* The suites, the slowest first (most of their time is waiting: a peer's
 * timeout, a thread's period), so that dealing them round-robin gives
 * parts of about one length. */
static Suite *(*const suites[])(void) = {
	tcp_server_suite, remote_suite,	    door_suite,	      pastset_stress_suite, archive_suite, pastset_shm_suite,
	pathmaps_suite,	  handlers_suite,   pastset_suite,    scopes_suite,	    steering_suite, collectors_suite,
	paths_tree_suite, waits_suite,	    waitstates_suite, monitors_suite,	    paths_suite,   view_suite,
	waitfor_suite,	  windtunnel_suite, wire_suite,	      bench_suite, base_suite,
};

int main(void)
{
	int k = 0, n = 1;
	const char *part = getenv("ES_UNIT_PART");
	if (part && (sscanf(part, "%d/%d", &k, &n) != 2 || n < 1 || k < 0 || k >= n)) {
		fprintf(stderr, "unit: ES_UNIT_PART=%s: expected K/N with 0 <= K < N\n", part);
		return EXIT_FAILURE;
	}
	SRunner *sr = NULL;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if ((int)(i % (size_t)n) != k)
			continue;
		if (sr)
			srunner_add_suite(sr, suites[i]());
		else
			sr = srunner_create(suites[i]());
	}
	if (!sr)
		return EXIT_SUCCESS;
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
