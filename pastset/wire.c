/* wire.c - frames of the PastSet wire protocol: little-endian headers, checked before any payload is read. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static void le16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

void psw_put_hdr(unsigned char out[PSW_HDR], const struct psw_hdr *h)
{
	psw_put32(out, PSW_MAGIC);
	le16(out + 4, h->op);
	le16(out + 6, h->flags);
	psw_put32(out + 8, h->length);
	psw_put32(out + 12, h->tag);
}

int psw_get_hdr(const unsigned char in[PSW_HDR], struct psw_hdr *h)
{
	h->op = get16(in + 4);
	h->flags = get16(in + 6);
	h->length = psw_get32(in + 8);
	h->tag = psw_get32(in + 12);
	unsigned op = h->op & ~PSW_REPLY;
	if (psw_get32(in) != PSW_MAGIC || op < PSW_HELLO || op > PSW_OP_LAST ||
	    (h->flags & ~PSW_NATIVE) || h->length > PSW_MAX_PAYLOAD)
		return PS_EINVAL;
	return 0;
}

void psw_reader_init(struct psw_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void psw_reader_fini(struct psw_reader *r)
{
	free(r->payload);
	memset(r, 0, sizeof(*r));
}

int psw_feed(struct psw_reader *r, const unsigned char *in, size_t n, size_t *used)
{
	size_t u = 0;
	*used = 0;
	if (r->bad)
		return PS_EINVAL;
	if (r->have == PSW_HDR + r->h.length && r->have >= PSW_HDR)
		r->have = 0; /* the last frame was handed out: start the next */
	if (r->have < PSW_HDR) {
		size_t k = PSW_HDR - r->have < n ? PSW_HDR - r->have : n;
		memcpy(r->hdr + r->have, in, k);
		r->have += k;
		u += k;
		if (r->have < PSW_HDR) {
			*used = u;
			return 0;
		}
		/* the header decides before a byte of payload is stored */
		if (psw_get_hdr(r->hdr, &r->h) || (r->max && r->h.length > r->max)) {
			r->bad = 1;
			*used = u;
			return PS_EINVAL;
		}
		if (r->h.length > r->cap) {
			unsigned char *p = realloc(r->payload, r->h.length);
			if (!p) {
				r->bad = 1;
				*used = u;
				return PS_ENOMEM;
			}
			r->payload = p;
			r->cap = r->h.length;
		}
	}
	size_t need = PSW_HDR + r->h.length - r->have;
	size_t k = need < n - u ? need : n - u;
	if (k) /* an empty payload may have no buffer yet */
		memcpy(r->payload + (r->have - PSW_HDR), in + u, k);
	r->have += k;
	u += k;
	*used = u;
	return r->have == PSW_HDR + r->h.length ? 1 : 0;
}

/* --- the messages ------------------------------------------------------------ */

size_t psw_name_put(unsigned char *p, const char *name)
{
	memset(p, 0, PSW_NAME);
	memcpy(p, name, strnlen(name, PS_NAME_MAX));
	return PSW_NAME;
}

void psw_name_get(const unsigned char *p, char name[PS_NAME_MAX + 1])
{
	memcpy(name, p, PS_NAME_MAX);
	name[PS_NAME_MAX] = 0;
}

size_t psw_hello_req_put(unsigned char *p, const struct psw_hello_req *m)
{
	size_t n = m->secret_len < PS_SECRET_MAX ? m->secret_len : PS_SECRET_MAX;
	psw_put32(p, m->version);
	memcpy(p + 4, &m->mark, 4); /* in the sender's order: that is its point */
	if (n)
		memcpy(p + 8, m->secret, n);
	return PSW_HELLO_REQ_LEN + n;
}

int psw_hello_req_get(const unsigned char *p, size_t n, struct psw_hello_req *m)
{
	if (n < PSW_HELLO_REQ_LEN || n > PSW_HELLO_REQ_LEN + PS_SECRET_MAX)
		return PS_EPROTO;
	m->version = psw_get32(p);
	memcpy(&m->mark, p + 4, 4);
	m->secret = p + 8;
	m->secret_len = n - PSW_HELLO_REQ_LEN;
	return 0;
}

size_t psw_hello_rep_put(unsigned char *p, const struct psw_hello_rep *m)
{
	psw_put32(p, m->version);
	memcpy(p + 4, &m->mark, 4);
	psw_put32(p + 8, (uint32_t)m->status);
	return PSW_HELLO_REP_LEN;
}

int psw_hello_rep_get(const unsigned char *p, size_t n, struct psw_hello_rep *m)
{
	if (n != PSW_HELLO_REP_LEN)
		return PS_EPROTO;
	m->version = psw_get32(p);
	memcpy(&m->mark, p + 4, 4);
	m->status = (int32_t)psw_get32(p + 8);
	return 0;
}

size_t psw_open_req_put(unsigned char *p, const struct psw_open_req *m)
{
	psw_name_put(p, m->segment);
	psw_name_put(p + PSW_NAME, m->element);
	psw_put32(p + 2 * PSW_NAME, m->tuple_size);
	psw_put32(p + 2 * PSW_NAME + 4, m->flags);
	return PSW_OPEN_REQ_LEN;
}

int psw_open_req_get(const unsigned char *p, size_t n, struct psw_open_req *m)
{
	if (n != PSW_OPEN_REQ_LEN)
		return PS_EPROTO;
	psw_name_get(p, m->segment);
	psw_name_get(p + PSW_NAME, m->element);
	m->tuple_size = psw_get32(p + 2 * PSW_NAME);
	m->flags = psw_get32(p + 2 * PSW_NAME + 4);
	return 0;
}

size_t psw_open_rep_put(unsigned char *p, const struct psw_open_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	psw_put32(p + 4, m->handle);
	psw_put32(p + 8, m->tuple_size);
	psw_put32(p + 12, m->threshold);
	psw_put32(p + 16, m->mode);
	psw_put32(p + 20, m->flags);
	return PSW_OPEN_REP_LEN;
}

int psw_open_rep_get(const unsigned char *p, size_t n, struct psw_open_rep *m)
{
	if (n != PSW_OPEN_REP_LEN)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	m->handle = psw_get32(p + 4);
	m->tuple_size = psw_get32(p + 8);
	m->threshold = psw_get32(p + 12);
	m->mode = psw_get32(p + 16);
	m->flags = psw_get32(p + 20);
	return 0;
}

size_t psw_read_req_put(unsigned char *p, const struct psw_read_req *m)
{
	psw_put32(p, m->handle);
	psw_put64(p + 4, m->index);
	return PSW_READ_REQ_LEN;
}

int psw_read_req_get(const unsigned char *p, size_t n, struct psw_read_req *m)
{
	if (n != PSW_READ_REQ_LEN)
		return PS_EPROTO;
	m->handle = psw_get32(p);
	m->index = psw_get64(p + 4);
	return 0;
}

size_t psw_range_req_put(unsigned char *p, const struct psw_range_req *m)
{
	psw_put32(p, m->handle);
	psw_put64(p + 4, m->first);
	psw_put32(p + 12, m->count);
	return PSW_RANGE_REQ_LEN;
}

int psw_range_req_get(const unsigned char *p, size_t n, struct psw_range_req *m)
{
	if (n != PSW_RANGE_REQ_LEN)
		return PS_EPROTO;
	m->handle = psw_get32(p);
	m->first = psw_get64(p + 4);
	m->count = psw_get32(p + 12);
	return 0;
}

size_t psw_range_rep_put(unsigned char *p, const struct psw_range_rep *m)
{
	psw_put32(p, (uint32_t)m->count);
	psw_put64(p + 4, m->oldest);
	return PSW_RANGE_REP_LEN;
}

int psw_range_rep_get(const unsigned char *p, size_t n, struct psw_range_rep *m)
{
	if (n < PSW_RANGE_REP_LEN)
		return PS_EPROTO;
	m->count = (int32_t)psw_get32(p);
	m->oldest = psw_get64(p + 4);
	return 0;
}

size_t psw_stats_rep_put(unsigned char *p, const struct psw_stats_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	psw_put64(p + 4, m->written);
	psw_put64(p + 12, m->discarded);
	psw_put64(p + 20, m->taken);
	psw_put64(p + 28, m->oldest);
	return PSW_STATS_REP_LEN;
}

int psw_stats_rep_get(const unsigned char *p, size_t n, struct psw_stats_rep *m)
{
	if (n != PSW_STATS_REP_LEN)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	m->written = psw_get64(p + 4);
	m->discarded = psw_get64(p + 12);
	m->taken = psw_get64(p + 20);
	m->oldest = psw_get64(p + 28);
	return 0;
}

size_t psw_attach_rep_put(unsigned char *p, const struct psw_attach_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	psw_put32(p + 4, m->count);
	psw_put32(p + 8, m->state);
	if (m->area)
		memcpy(p + 12, m->area, PS_USER_AREA);
	else
		memset(p + 12, 0, PS_USER_AREA);
	return PSW_ATTACH_REP_LEN;
}

int psw_attach_rep_get(const unsigned char *p, size_t n, struct psw_attach_rep *m)
{
	if (n != PSW_ATTACH_REP_LEN)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	m->count = psw_get32(p + 4);
	m->state = psw_get32(p + 8);
	m->area = p + 12;
	return 0;
}

size_t psw_names_req_put(unsigned char *p, const struct psw_names_req *m)
{
	psw_name_put(p, m->name);
	psw_put32(p + PSW_NAME, m->first);
	return PSW_NAMES_REQ_LEN;
}

int psw_names_req_get(const unsigned char *p, size_t n, struct psw_names_req *m)
{
	if (n != PSW_NAMES_REQ_LEN)
		return PS_EPROTO;
	psw_name_get(p, m->name);
	m->first = psw_get32(p + PSW_NAME);
	return 0;
}

size_t psw_names_rep_put(unsigned char *p, const struct psw_names_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	psw_put32(p + 4, m->total);
	psw_put32(p + 8, m->count);
	return PSW_NAMES_REP_LEN;
}

int psw_names_rep_get(const unsigned char *p, size_t n, struct psw_names_rep *m)
{
	if (n < PSW_NAMES_REP_LEN || (n - PSW_NAMES_REP_LEN) % PSW_NAME)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	m->total = psw_get32(p + 4);
	m->count = psw_get32(p + 8);
	return m->count == (n - PSW_NAMES_REP_LEN) / PSW_NAME ? 0 : PS_EPROTO;
}

size_t psw_notes_rep_put(unsigned char *p, const struct psw_notes_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	for (unsigned w = 0; w < PS_NOTE_WORDS; w++)
		psw_put64(p + 4 + 8 * w, m->words[w]);
	return PSW_NOTES_REP_LEN;
}

int psw_notes_rep_get(const unsigned char *p, size_t n, struct psw_notes_rep *m)
{
	if (n != PSW_NOTES_REP_LEN)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	for (unsigned w = 0; w < PS_NOTE_WORDS; w++)
		m->words[w] = psw_get64(p + 4 + 8 * w);
	return 0;
}
