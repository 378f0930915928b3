/* test_base.c - the bottom layer: the one hash table against a plain array, its values of any size, the vector, the clock's deadlines, UTF-8 lengths, a broken invariant. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "tests/unit/suites.h"

#define NONE UINT32_MAX

/* Inserts and deletes against a plain array, keys spread and keys that all
 * fall in few slots (runs that wrap past the table's end and shift back
 * across it), the table's invariants checked as it goes. */
static void against_array(uint64_t mul, uint64_t add)
{
	struct base_tab t = { 0 };
	enum { N = 3000 };
	static uint32_t ref[N];
	srand(7);
	for (int i = 0; i < N; i++)
		ref[i] = NONE;
	for (int step = 0; step < 60000; step++) {
		int k = rand() % N;
		uint64_t key = (uint64_t)k * mul + add;
		if (rand() % 3) {
			ck_assert_int_eq(base_tab_set32(&t, key, (uint32_t)step), 0);
			ref[k] = (uint32_t)step;
		} else {
			base_tab_del(&t, key);
			ref[k] = NONE;
		}
		if (step % 4999 == 0) {
			base_tab_check(&t);
			size_t n = 0;
			for (int j = 0; j < N; j++) {
				uint32_t *v = base_tab_get(&t, (uint64_t)j * mul + add);
				ck_assert_uint_eq(v ? *v : NONE, ref[j]);
				n += ref[j] != NONE;
			}
			ck_assert_uint_eq(t.n, n);
		}
	}
	base_tab_free(&t);
	ck_assert_ptr_null(base_tab_get(&t, add));
}

START_TEST(table_as_an_array)
{
	against_array(0x1000193, 0); /* key 0 among them */
	/* multiples of 2^52: the Fibonacci hash's top bits still differ, but
	 * a weak hash (low bits) would put them all in one slot */
	against_array(1ull << 52, 5);
}
END_TEST

/* Values of another size live in the table; fresh says new; the walk sees
 * each entry once; clear empties and keeps the size. */
START_TEST(table_values_and_walk)
{
	struct val {
		uint64_t a;
		char name[13];
	};
	struct base_tab t;
	base_tab_init(&t, sizeof(struct val));
	bool fresh;
	for (uint64_t k = 0; k < 1000; k++) {
		struct val *v = base_tab_put(&t, k * 7, &fresh);
		ck_assert_ptr_nonnull(v);
		ck_assert(fresh);
		ck_assert_uint_eq(v->a, 0); /* zeroed */
		v->a = k;
		snprintf(v->name, sizeof(v->name), "k%llu", (unsigned long long)k);
	}
	struct val *v = base_tab_put(&t, 7 * 500, &fresh);
	ck_assert(!fresh);
	ck_assert_uint_eq(v->a, 500);
	ck_assert_str_eq(v->name, "k500");
	static bool seen[1000];
	size_t at = 0, n = 0;
	uint64_t key;
	while ((v = base_tab_next(&t, &at, &key))) {
		ck_assert_uint_eq(key, v->a * 7);
		ck_assert(!seen[v->a]);
		seen[v->a] = true, n++;
	}
	ck_assert_uint_eq(n, 1000);
	size_t cap = t.cap;
	ck_assert_int_eq(base_tab_reserve(&t, 1000), 0);
	ck_assert_uint_eq(t.cap, cap); /* room already */
	ck_assert_int_eq(base_tab_reserve(&t, 5000), 0);
	ck_assert_uint_ge(t.cap, 10000);
	ck_assert_uint_eq(((struct val *)base_tab_get(&t, 7 * 999))->a, 999); /* kept through the growth */
	ck_assert_int_eq(base_tab_reserve(&t, SIZE_MAX / 2), -ENOMEM);
	base_tab_clear(&t);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_ptr_null(base_tab_get(&t, 7));
	v = base_tab_put(&t, 7, &fresh);
	ck_assert(fresh && v->a == 0);
	base_tab_check(&t);
	base_tab_free(&t);
	ck_assert_uint_eq(t.size, sizeof(struct val));
}
END_TEST

START_TEST(vector_grows_zeroed)
{
	struct base_vec v = { .size = sizeof(uint64_t) * 3 };
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t *e = base_vec_push(&v);
		ck_assert_ptr_nonnull(e);
		ck_assert(e[0] == 0 && e[1] == 0 && e[2] == 0);
		e[0] = i, e[2] = ~i;
	}
	ck_assert_uint_eq(v.n, 10000);
	for (uint64_t i = 0; i < 10000; i += 997)
		ck_assert_uint_eq(BASE_AT(v, uint64_t, 3 * i)[2], ~i);
	ck_assert_int_eq(base_vec_reserve(&v, 100000), 0);
	ck_assert_uint_ge(v.cap, 100000);
	ck_assert_int_eq(base_vec_reserve(&v, SIZE_MAX / 8), -ENOMEM); /* too large, refused */
	ck_assert_uint_eq(v.n, 10000);
	base_vec_free(&v);
	ck_assert(v.n == 0 && v.v == NULL && v.size == sizeof(uint64_t) * 3);
	struct base_vec unsized = { 0 };
	ck_assert_ptr_null(base_vec_push(&unsized)); /* no size set: refused, not a zero-size element */
}
END_TEST

START_TEST(hashes_and_deadlines)
{
	/* the end of a string counts: "ab" + "c" is not "a" + "bc" */
	ck_assert_uint_ne(base_hash_str(base_hash_str(BASE_HASH_SEED, "ab"), "c"),
			  base_hash_str(base_hash_str(BASE_HASH_SEED, "a"), "bc"));
	for (size_t cap = 2; cap <= (1u << 20); cap *= 2)
		ck_assert_uint_lt(base_hash_slot(UINT64_MAX, cap), cap);
	ck_assert_uint_eq(base_probe(7, 8), 0);
	ck_assert_uint_eq(base_deadline_ns(-1), UINT64_MAX);
	ck_assert_int_eq(base_ms_left(UINT64_MAX), -1);
	ck_assert_int_eq(base_ms_left(base_now_ns() - 1), 0);
	int left = base_ms_left(base_deadline_ns(60000));
	ck_assert(left > 0 && left <= 60000);
}
END_TEST

START_TEST(utf8_lengths)
{
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"a"), 1);
	ck_assert_int_eq(base_utf8_len((const unsigned char *)""), 0);
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xc3\xa9"), 2);
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xe2\x82\xac"), 3);
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xc0\xaf"), 0);     /* overlong */
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xed\xa0\x80"), 0); /* a surrogate */
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xf4\x90\x80\x80"), 0); /* past U+10FFFF */
	ck_assert_int_eq(base_utf8_len((const unsigned char *)"\xe2\x82"), 0);     /* cut */
}
END_TEST

#ifdef ES_DEBUG
/* A table whose count was broken by hand: the check says so and aborts. */
START_TEST(table_invariant_aborts)
{
	struct base_tab t = { 0 };
	base_tab_set32(&t, 1, 1);
	t.n = 2;
	base_tab_check(&t);
}
END_TEST
#endif

Suite *base_suite(void)
{
	Suite *s = suite_create("base");
	TCase *tc = tcase_create("base");
	tcase_add_test(tc, table_as_an_array);
	tcase_add_test(tc, table_values_and_walk);
	tcase_add_test(tc, vector_grows_zeroed);
	tcase_add_test(tc, hashes_and_deadlines);
	tcase_add_test(tc, utf8_lengths);
#ifdef ES_DEBUG
	tcase_add_test_raise_signal(tc, table_invariant_aborts, SIGABRT);
#endif
	suite_add_tcase(s, tc);
	return s;
}
