/* wire.c - frames of the PastSet wire protocol: little-endian headers, checked before any payload is read. */
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
