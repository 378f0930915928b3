/* wire.h - the PastSet wire protocol's frames (PROTOCOL.md): header codec and a bounded stream reader. */
#ifndef PASTSET_WIRE_H
#define PASTSET_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "pastset.h"

#define PSW_MAGIC 0x31575350u   /* "PSW1" */
#define PSW_HDR 16
#define PSW_MAX_PAYLOAD (1u << 20)
#define PSW_REPLY 0x8000u
#define PSW_NATIVE 0x0001u      /* flags: tuples in the sender's byte order */

#define PSW_VERSION 1
#define PSW_NAME 48            /* names cross NUL-padded to this */
#define PSW_MANY_MAX 4096      /* handles in one LATEST_MANY */
#define PSW_LIST_MAX 1024      /* names in one LIST or NAMES reply */
#define PSW_EBADH (-EBADF)     /* status: a handle the connection does not hold */

enum psw_op {
	PSW_HELLO = 1, PSW_OPEN, PSW_WRITE, PSW_READ, PSW_READ_LATEST, PSW_READ_RANGE,
	PSW_TAKE, PSW_LATEST_MANY, PSW_STATS, PSW_ATTACH, PSW_NAMES, PSW_LIST, PSW_NOTES,
	PSW_CLOSE, PSW_TIME,
	PSW_OP_LAST = PSW_TIME,
};

/* The protocol's own fields are little-endian, whatever the host. */
static inline void psw_put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void psw_put64(unsigned char *p, uint64_t v)
{
	psw_put32(p, (uint32_t)v);
	psw_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t psw_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t psw_get64(const unsigned char *p)
{
	return (uint64_t)psw_get32(p) | (uint64_t)psw_get32(p + 4) << 32;
}

struct psw_hdr {
	uint16_t op, flags;
	uint32_t length, tag;
};

void psw_put_hdr(unsigned char out[PSW_HDR], const struct psw_hdr *h);
/* 0 and *h from a complete header; PS_EINVAL for a bad magic, an unknown
 * operation, unknown flags or a payload over the limit. */
int psw_get_hdr(const unsigned char in[PSW_HDR], struct psw_hdr *h);

/* Turns a byte stream into frames, a header and its payload at a time,
 * never holding more than one frame. */
struct psw_reader {
	unsigned char hdr[PSW_HDR];
	size_t have;              /* bytes of the current frame so far */
	struct psw_hdr h;
	unsigned char *payload;   /* PSW_MAX_PAYLOAD at most */
	size_t cap;
	uint32_t max;             /* largest payload taken now; 0: PSW_MAX_PAYLOAD */
	int bad;                  /* the stream broke the protocol: close it */
};
void psw_reader_init(struct psw_reader *r);
void psw_reader_fini(struct psw_reader *r);
/* Takes bytes from in[0..n); *used gets how many.  Returns 1 when a whole
 * frame is ready (r->h, r->payload; the next call starts the next frame),
 * 0 when it needs more, or a negative code (and r->bad) for a malformed
 * stream, a payload over r->max, or no memory. */
int psw_feed(struct psw_reader *r, const unsigned char *in, size_t n, size_t *used);

#endif
