/* suites.h - the unit suites check_main.c runs, and helpers they share. */
#ifndef TESTS_SUITES_H
#define TESTS_SUITES_H

#include <check.h>

Suite *base_suite(void);
Suite *pastset_suite(void);
Suite *pastset_shm_suite(void);
Suite *pastset_stress_suite(void);
Suite *paths_suite(void);
Suite *paths_tree_suite(void);
Suite *pathmaps_suite(void);
Suite *collectors_suite(void);
Suite *scopes_suite(void);
Suite *windtunnel_suite(void);
Suite *wire_suite(void);
Suite *remote_suite(void);
Suite *tcp_server_suite(void);
Suite *archive_suite(void);
Suite *waitfor_suite(void);
Suite *waits_suite(void);
Suite *waitstates_suite(void);
Suite *bench_suite(void);
Suite *view_suite(void);
Suite *door_suite(void);
Suite *monitors_suite(void);
Suite *steering_suite(void);
Suite *handlers_suite(void);

/* A segment name unique to this test process, so parallel runs never meet. */
#define TEST_SEG(buf, tag) snprintf((buf), sizeof(buf), "t%d-%s", (int)getpid(), (tag))



#include <stdint.h>
#include <string.h>

/* A 36-byte test tuple that proves itself: index, writer, sequence, filler
 * derived from them, and an FNV-1a checksum of the rest in the last 4 bytes.
 * A torn or mixed-up tuple fails tuple_ok(). */
#define TT_SIZE 36
static inline uint32_t tt_fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}
static inline void tuple_make(uint8_t t[TT_SIZE], uint64_t idx, uint32_t writer, uint32_t seq)
{
	memcpy(t, &idx, 8);
	memcpy(t + 8, &writer, 4);
	memcpy(t + 12, &seq, 4);
	for (int i = 16; i < 32; i++)
		t[i] = (uint8_t)(idx * 31 + seq * 7 + writer + (uint64_t)i);
	uint32_t s = tt_fnv(t, 32);
	memcpy(t + 32, &s, 4);
}
static inline int tuple_ok(const uint8_t t[TT_SIZE])
{
	uint32_t s;
	memcpy(&s, t + 32, 4);
	return s == tt_fnv(t, 32);
}
static inline uint64_t tuple_idx(const uint8_t t[TT_SIZE]) { uint64_t v; memcpy(&v, t, 8); return v; }
static inline uint32_t tuple_writer(const uint8_t t[TT_SIZE]) { uint32_t v; memcpy(&v, t + 8, 4); return v; }
static inline uint32_t tuple_seq(const uint8_t t[TT_SIZE]) { uint32_t v; memcpy(&v, t + 12, 4); return v; }
#endif
