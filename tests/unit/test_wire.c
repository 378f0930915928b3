/* test_wire.c - the wire protocol's frames: round trips, every way a stream can be cut, and malformed input. */
#include <stdlib.h>
#include <string.h>

#include "pastset/wire.h"
#include "tests/unit/suites.h"

static size_t frame(unsigned char *buf, uint16_t op, uint32_t tag, const char *payload)
{
	struct psw_hdr h = { op, PSW_NATIVE, (uint32_t)strlen(payload), tag };
	psw_put_hdr(buf, &h);
	memcpy(buf + PSW_HDR, payload, strlen(payload));
	return PSW_HDR + strlen(payload);
}

START_TEST(header_round_trip)
{
	unsigned char b[PSW_HDR];
	struct psw_hdr h = { PSW_READ_RANGE | PSW_REPLY, PSW_NATIVE, 12345, 0xdeadbeef }, g;
	psw_put_hdr(b, &h);
	ck_assert_int_eq(b[0], 'P'); /* little-endian on the wire, whatever the host */
	ck_assert_int_eq(b[3], '1');
	ck_assert_int_eq(psw_get_hdr(b, &g), 0);
	ck_assert_uint_eq(g.op, h.op);
	ck_assert_uint_eq(g.flags, h.flags);
	ck_assert_uint_eq(g.length, 12345);
	ck_assert_uint_eq(g.tag, 0xdeadbeef);
}
END_TEST

START_TEST(malformed_headers)
{
	unsigned char b[PSW_HDR];
	struct psw_hdr h = { PSW_WRITE, 0, 8, 1 }, g;
	psw_put_hdr(b, &h);
	b[0] = 'X';
	ck_assert_int_eq(psw_get_hdr(b, &g), PS_EINVAL); /* bad magic */
	h.op = 0;
	psw_put_hdr(b, &h);
	ck_assert_int_eq(psw_get_hdr(b, &g), PS_EINVAL); /* unknown operation */
	h.op = PSW_OP_LAST + 1;
	psw_put_hdr(b, &h);
	ck_assert_int_eq(psw_get_hdr(b, &g), PS_EINVAL);
	h.op = PSW_WRITE;
	h.flags = 0x80;
	psw_put_hdr(b, &h);
	ck_assert_int_eq(psw_get_hdr(b, &g), PS_EINVAL); /* unknown flags */
	h.flags = 0;
	h.length = PSW_MAX_PAYLOAD + 1;
	psw_put_hdr(b, &h);
	ck_assert_int_eq(psw_get_hdr(b, &g), PS_EINVAL); /* oversized */
}
END_TEST

/* Three frames in one stream, fed in pieces of every size from 1 byte up:
 * the same frames come out, in order. */
START_TEST(stream_cut_anywhere)
{
	unsigned char s[256];
	size_t n = frame(s, PSW_HELLO, 1, "hello");
	n += frame(s + n, PSW_STATS, 2, "");
	n += frame(s + n, PSW_WRITE, 3, "a tuple of bytes");
	for (size_t piece = 1; piece <= n; piece++) {
		struct psw_reader r;
		psw_reader_init(&r);
		int frames = 0;
		for (size_t off = 0; off < n;) {
			size_t len = n - off < piece ? n - off : piece, used;
			while (len) {
				int rc = psw_feed(&r, s + off, len, &used);
				ck_assert_int_ge(rc, 0);
				off += used;
				len -= used;
				if (rc == 1) {
					frames++;
					ck_assert_uint_eq(r.h.tag, (uint32_t)frames);
					if (frames == 3)
						ck_assert_mem_eq(r.payload, "a tuple of bytes", 16);
				}
				if (!used && !rc)
					break;
			}
		}
		ck_assert_int_eq(frames, 3);
		psw_reader_fini(&r);
	}
}
END_TEST

/* Garbage or an oversized length stops the stream before any payload is
 * stored: memory stays bounded. */
START_TEST(stream_rejects_bad_input)
{
	struct psw_reader r;
	psw_reader_init(&r);
	unsigned char junk[64];
	memset(junk, 0xab, sizeof(junk));
	size_t used;
	ck_assert_int_eq(psw_feed(&r, junk, sizeof(junk), &used), PS_EINVAL);
	ck_assert_uint_eq(used, PSW_HDR);
	ck_assert_int_eq(psw_feed(&r, junk, sizeof(junk), &used), PS_EINVAL); /* stays closed */
	psw_reader_fini(&r);
	psw_reader_init(&r);
	unsigned char b[PSW_HDR];
	struct psw_hdr h = { PSW_WRITE, 0, 0xfffffff0u, 9 };
	psw_put_hdr(b, &h);
	ck_assert_int_eq(psw_feed(&r, b, sizeof(b), &used), PS_EINVAL);
	ck_assert_ptr_null(r.payload);
	psw_reader_fini(&r);
}
END_TEST

/* A stream may open with an empty payload, before any buffer exists (the
 * sanitizer build caught a copy from no buffer here). */
START_TEST(empty_first_frame)
{
	unsigned char s[64];
	size_t n = frame(s, PSW_TIME, 1, ""), used;
	n += frame(s + n, PSW_TIME, 2, "");
	struct psw_reader r;
	psw_reader_init(&r);
	ck_assert_int_eq(psw_feed(&r, s, n, &used), 1);
	ck_assert_uint_eq(used, PSW_HDR);
	ck_assert_uint_eq(r.h.length, 0);
	ck_assert_int_eq(psw_feed(&r, s + used, n - used, &used), 1);
	ck_assert_uint_eq(r.h.tag, 2);
	psw_reader_fini(&r);
}
END_TEST

/* A reader bounded below the protocol's limit (a server before HELLO)
 * refuses a longer payload at its header, before storing any of it. */
START_TEST(stream_bound)
{
	unsigned char s[PSW_HDR + 300];
	memset(s, 'x', sizeof(s));
	struct psw_hdr h = { PSW_HELLO, 0, 300, 1 };
	psw_put_hdr(s, &h);
	struct psw_reader r;
	psw_reader_init(&r);
	r.max = 264;
	size_t used;
	ck_assert_int_eq(psw_feed(&r, s, sizeof(s), &used), PS_EINVAL);
	ck_assert_uint_eq(used, PSW_HDR);
	ck_assert_ptr_null(r.payload);
	psw_reader_fini(&r);
	psw_reader_init(&r);
	r.max = 300; /* at the bound: taken */
	ck_assert_int_eq(psw_feed(&r, s, sizeof(s), &used), 1);
	psw_reader_fini(&r);
}
END_TEST

Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("frames");
	tcase_add_test(tc, header_round_trip);
	tcase_add_test(tc, malformed_headers);
	tcase_add_test(tc, stream_cut_anywhere);
	tcase_add_test(tc, stream_rejects_bad_input);
	tcase_add_test(tc, empty_first_frame);
	tcase_add_test(tc, stream_bound);
	suite_add_tcase(s, tc);
	return s;
}
