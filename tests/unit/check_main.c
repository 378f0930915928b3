/* check_main.c - runs every Check unit suite; CK_RUN_SUITE=NAME picks one. */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/suites.h"

int main(void)
{
	SRunner *sr = srunner_create(pastset_suite());
	srunner_add_suite(sr, pastset_shm_suite());
	srunner_add_suite(sr, pastset_stress_suite());
	srunner_add_suite(sr, paths_suite());
	srunner_add_suite(sr, paths_tree_suite());
	srunner_add_suite(sr, pathmaps_suite());
	srunner_add_suite(sr, collectors_suite());
	srunner_add_suite(sr, scopes_suite());
	srunner_add_suite(sr, windtunnel_suite());
	srunner_add_suite(sr, wire_suite());
	srunner_add_suite(sr, tcp_server_suite());
	srunner_add_suite(sr, remote_suite());
	srunner_add_suite(sr, archive_suite());
	srunner_add_suite(sr, waitfor_suite());
	srunner_add_suite(sr, waits_suite());
	srunner_add_suite(sr, waitstates_suite());
	srunner_add_suite(sr, bench_suite());
	srunner_add_suite(sr, view_suite());
	srunner_add_suite(sr, door_suite());
	srunner_add_suite(sr, monitors_suite());
	srunner_add_suite(sr, steering_suite());
	srunner_add_suite(sr, handlers_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
