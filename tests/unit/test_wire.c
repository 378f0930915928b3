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

/* Every message: what is put is what is got, byte for byte where the
 * protocol fixes the bytes, and a payload of another length is refused. */
#define RT(put, get, in, out, len) do {                     \
		memset(b, 0xa5, sizeof(b));                  \
		ck_assert_uint_eq(put(b, &(in)), (len));     \
		ck_assert_int_eq(get(b, (len), &(out)), 0);  \
		ck_assert_int_eq(get(b, (len) + 1, &(out)), PS_EPROTO); \
		ck_assert_int_eq(get(b, (len) - 1, &(out)), PS_EPROTO); \
		ck_assert_int_eq(get(b, (len), &(out)), 0);  \
	} while (0)

START_TEST(messages_round_trip)
{
	unsigned char b[PSW_ATTACH_REP_LEN + 64];
	/* HELLO: the mark crosses in the sender's order */
	struct psw_hello_req hq = { PSW_VERSION, PSW_BOM, (const unsigned char *)"sesame", 6 }, hq2;
	ck_assert_uint_eq(psw_hello_req_put(b, &hq), PSW_HELLO_REQ_LEN + 6);
	ck_assert_int_eq(psw_hello_req_get(b, PSW_HELLO_REQ_LEN + 6, &hq2), 0);
	ck_assert(hq2.version == PSW_VERSION && hq2.mark == PSW_BOM && hq2.secret_len == 6 &&
		  !memcmp(hq2.secret, "sesame", 6));
	uint32_t native = PSW_BOM;
	ck_assert(!memcmp(b + 4, &native, 4));
	ck_assert_int_eq(psw_hello_req_get(b, PSW_HELLO_REQ_LEN - 1, &hq2), PS_EPROTO);
	ck_assert_int_eq(psw_hello_req_get(b, PSW_HELLO_REQ_LEN + PS_SECRET_MAX + 1, &hq2), PS_EPROTO);
	struct psw_hello_rep hr = { PSW_VERSION, PSW_BOM, PS_EACCES }, hr2;
	RT(psw_hello_rep_put, psw_hello_rep_get, hr, hr2, PSW_HELLO_REP_LEN);
	ck_assert(hr2.version == hr.version && hr2.mark == hr.mark && hr2.status == PS_EACCES);
	/* OPEN: names end however long they came */
	struct psw_open_req oq = { "seg", "", 36, PS_RDWR }, oq2;
	memset(oq.element, 'e', PS_NAME_MAX);
	RT(psw_open_req_put, psw_open_req_get, oq, oq2, PSW_OPEN_REQ_LEN);
	ck_assert_str_eq(oq2.segment, "seg");
	ck_assert_uint_eq(strlen(oq2.element), PS_NAME_MAX);
	ck_assert(oq2.tuple_size == 36 && oq2.flags == PS_RDWR);
	struct psw_open_rep orp = { PS_ENOENT, 7, 36, 1024, 2, 5 }, orp2;
	RT(psw_open_rep_put, psw_open_rep_get, orp, orp2, PSW_OPEN_REP_LEN);
	ck_assert(!memcmp(&orp, &orp2, sizeof(orp)));
	ck_assert(b[4] == 7 && b[5] == 0 && b[8] == 36); /* little-endian on the wire */
	/* READ, READ_RANGE and the tuple replies */
	struct psw_read_req rq = { 3, 0x0102030405060708ull }, rq2;
	RT(psw_read_req_put, psw_read_req_get, rq, rq2, PSW_READ_REQ_LEN);
	ck_assert(rq2.handle == 3 && rq2.index == rq.index);
	struct psw_range_req gq = { 4, 1ull << 40, 999 }, gq2;
	RT(psw_range_req_put, psw_range_req_get, gq, gq2, PSW_RANGE_REQ_LEN);
	ck_assert(gq2.handle == 4 && gq2.first == gq.first && gq2.count == 999);
	struct psw_range_rep gr = { PS_EDISCARDED, 77 }, gr2;
	ck_assert_uint_eq(psw_range_rep_put(b, &gr), PSW_RANGE_REP_LEN);
	ck_assert_int_eq(psw_range_rep_get(b, PSW_RANGE_REP_LEN + 36, &gr2), 0); /* tuples follow */
	ck_assert(gr2.count == PS_EDISCARDED && gr2.oldest == 77);
	ck_assert_int_eq(psw_range_rep_get(b, PSW_RANGE_REP_LEN - 1, &gr2), PS_EPROTO);
	struct psw_tuple_rep tr = { PS_ETIMEDOUT, UINT64_MAX - 1 }, tr2;
	ck_assert_uint_eq(psw_tuple_rep_put(b, &tr), PSW_TUPLE_REP_LEN);
	ck_assert_int_eq(psw_tuple_rep_get(b, PSW_TUPLE_REP_LEN + 8, &tr2), 0);
	ck_assert(tr2.status == PS_ETIMEDOUT && tr2.index == tr.index);
	ck_assert_int_eq(psw_tuple_rep_get(b, PSW_TUPLE_REP_LEN - 1, &tr2), PS_EPROTO);
	/* STATS, NOTES, ATTACH */
	struct psw_stats_rep sr = { 0, 10, 2, 3, 5 }, sr2;
	RT(psw_stats_rep_put, psw_stats_rep_get, sr, sr2, PSW_STATS_REP_LEN);
	ck_assert(sr2.status == 0 && sr2.written == 10 && sr2.discarded == 2 && sr2.taken == 3 &&
		  sr2.oldest == 5);
	struct psw_notes_rep nr = { 0, { 1, 2, 3, UINT64_MAX } }, nr2;
	RT(psw_notes_rep_put, psw_notes_rep_get, nr, nr2, PSW_NOTES_REP_LEN);
	ck_assert(nr2.status == 0 && !memcmp(nr.words, nr2.words, sizeof(nr.words)));
	unsigned char area[PS_USER_AREA];
	for (int i = 0; i < PS_USER_AREA; i++)
		area[i] = (unsigned char)i;
	struct psw_attach_rep ar = { 0, 12, 1, area }, ar2;
	RT(psw_attach_rep_put, psw_attach_rep_get, ar, ar2, PSW_ATTACH_REP_LEN);
	ck_assert(ar2.count == 12 && ar2.state == 1 && !memcmp(ar2.area, area, PS_USER_AREA));
	/* NAMES and LIST: the count must match the names that follow */
	struct psw_names_req mq = { "job.", 1024 }, mq2;
	RT(psw_names_req_put, psw_names_req_get, mq, mq2, PSW_NAMES_REQ_LEN);
	ck_assert(!strcmp(mq2.name, "job.") && mq2.first == 1024);
	struct psw_names_rep mr = { 0, 3, 1 }, mr2;
	size_t k = psw_names_rep_put(b, &mr);
	k += psw_name_put(b + k, "job.t0");
	ck_assert_int_eq(psw_names_rep_get(b, k, &mr2), 0);
	ck_assert(mr2.total == 3 && mr2.count == 1);
	char nm[PS_NAME_MAX + 1];
	psw_name_get(b + PSW_NAMES_REP_LEN, nm);
	ck_assert_str_eq(nm, "job.t0");
	ck_assert_int_eq(psw_names_rep_get(b, k - 1, &mr2), PS_EPROTO);
	ck_assert_int_eq(psw_names_rep_get(b, PSW_NAMES_REP_LEN, &mr2), PS_EPROTO); /* says 1, has 0 */
	/* the small ones */
	uint32_t h;
	ck_assert_uint_eq(psw_handle_put(b, 4095), PSW_HANDLE_LEN);
	ck_assert_int_eq(psw_handle_get(b, PSW_HANDLE_LEN, &h), 0);
	ck_assert_uint_eq(h, 4095);
	ck_assert_int_eq(psw_handle_get(b, PSW_HANDLE_LEN + 1, &h), PS_EPROTO);
	uint64_t ns;
	ck_assert_uint_eq(psw_time_put(b, 123456789012345ull), PSW_TIME_LEN);
	ck_assert_int_eq(psw_time_get(b, PSW_TIME_LEN, &ns), 0);
	ck_assert(ns == 123456789012345ull);
	ck_assert_int_eq(psw_time_get(b, PSW_TIME_LEN - 1, &ns), PS_EPROTO);
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
	tcase_add_test(tc, messages_round_trip);
	suite_add_tcase(s, tc);
	return s;
}
