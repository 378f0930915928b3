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

/*
 * The messages, one codec each (PROTOCOL.md's table).  A put writes the
 * fixed part at p and returns its length; a get reads it from a payload of
 * n bytes and returns 0, or PS_EPROTO when n is not a length the message
 * may have.  Tuples, handles of LATEST_MANY and names of NAMES and LIST
 * follow the fixed part; where they start is its length.  Names cross
 * NUL-padded to PSW_NAME bytes; a get always ends them.
 *
 *   op            request                    reply
 *   HELLO         psw_hello_req (+ secret)   psw_hello_rep
 *   OPEN          psw_open_req               psw_open_rep
 *   WRITE         psw_handle (+ tuple)       psw_tuple_rep
 *   READ          psw_read_req               psw_tuple_rep (+ tuple)
 *   READ_LATEST   psw_handle                 psw_tuple_rep (+ tuple)
 *   READ_RANGE    psw_range_req              psw_range_rep (+ tuples)
 *   TAKE          psw_handle                 psw_tuple_rep (+ tuple)
 *   LATEST_MANY   psw_count (+ handles)      psw_status, then per handle
 *                                            psw_tuple_rep (+ tuple)
 *   STATS         psw_handle                 psw_stats_rep
 *   ATTACH        psw_name                   psw_attach_rep
 *   NAMES, LIST   psw_names_req              psw_names_rep (+ names)
 *   NOTES         psw_handle                 psw_notes_rep
 *   CLOSE         psw_handle                 psw_status
 *   TIME          (nothing)                  psw_time
 */
#define PSW_HELLO_REQ_LEN 8
#define PSW_HELLO_REP_LEN 12
#define PSW_OPEN_REQ_LEN (2 * PSW_NAME + 8)
#define PSW_OPEN_REP_LEN 24
#define PSW_HANDLE_LEN 4
#define PSW_READ_REQ_LEN 12
#define PSW_RANGE_REQ_LEN 16
#define PSW_TUPLE_REP_LEN 12
#define PSW_RANGE_REP_LEN 12
#define PSW_STATUS_LEN 4
#define PSW_COUNT_LEN 4
#define PSW_STATS_REP_LEN 36
#define PSW_ATTACH_REP_LEN (12 + PS_USER_AREA)
#define PSW_NAMES_REQ_LEN (PSW_NAME + 4)
#define PSW_NAMES_REP_LEN 12
#define PSW_NOTES_REP_LEN (4 + 8 * PS_NOTE_WORDS)
#define PSW_TIME_LEN 8
#define PSW_BOM 0x01020304u  /* HELLO's byte-order mark, stored in the sender's order */

struct psw_hello_req {
	uint32_t version;
	uint32_t mark;          /* PSW_BOM as the sender stores it */
	const unsigned char *secret; /* get: points into the payload */
	size_t secret_len;      /* at most PS_SECRET_MAX */
};
struct psw_hello_rep {
	uint32_t version, mark;
	int32_t status;
};
struct psw_open_req {
	char segment[PS_NAME_MAX + 1], element[PS_NAME_MAX + 1];
	uint32_t tuple_size;    /* 0: any */
	uint32_t flags;         /* PS_RDWR or PS_RDONLY */
};
struct psw_open_rep {
	int32_t status;
	uint32_t handle, tuple_size, threshold, mode, flags;
};
struct psw_read_req {
	uint32_t handle;
	uint64_t index;
};
struct psw_range_req {
	uint32_t handle;
	uint64_t first;
	uint32_t count;
};
struct psw_tuple_rep {
	int32_t status;
	uint64_t index;         /* READ's PS_EDISCARDED: the oldest held */
};
struct psw_range_rep {
	int32_t count;          /* tuples that follow, or a status */
	uint64_t oldest;
};
struct psw_stats_rep {
	int32_t status;
	uint64_t written, discarded, taken, oldest;
};
struct psw_attach_rep {
	int32_t status;
	uint32_t count, state;  /* elements; enum ps_shm_state */
	const unsigned char *area; /* PS_USER_AREA bytes; get: into the payload */
};
struct psw_names_req {
	char name[PS_NAME_MAX + 1]; /* NAMES: the segment; LIST: the prefix */
	uint32_t first;
};
struct psw_names_rep {
	int32_t status;
	uint32_t total, count;  /* count names of PSW_NAME bytes follow */
};
struct psw_notes_rep {
	int32_t status;
	uint64_t words[PS_NOTE_WORDS];
};

size_t psw_hello_req_put(unsigned char *p, const struct psw_hello_req *m);
int psw_hello_req_get(const unsigned char *p, size_t n, struct psw_hello_req *m);
size_t psw_hello_rep_put(unsigned char *p, const struct psw_hello_rep *m);
int psw_hello_rep_get(const unsigned char *p, size_t n, struct psw_hello_rep *m);
size_t psw_open_req_put(unsigned char *p, const struct psw_open_req *m);
int psw_open_req_get(const unsigned char *p, size_t n, struct psw_open_req *m);
size_t psw_open_rep_put(unsigned char *p, const struct psw_open_rep *m);
int psw_open_rep_get(const unsigned char *p, size_t n, struct psw_open_rep *m);
size_t psw_read_req_put(unsigned char *p, const struct psw_read_req *m);
int psw_read_req_get(const unsigned char *p, size_t n, struct psw_read_req *m);
size_t psw_range_req_put(unsigned char *p, const struct psw_range_req *m);
int psw_range_req_get(const unsigned char *p, size_t n, struct psw_range_req *m);
size_t psw_range_rep_put(unsigned char *p, const struct psw_range_rep *m);
int psw_range_rep_get(const unsigned char *p, size_t n, struct psw_range_rep *m);
size_t psw_stats_rep_put(unsigned char *p, const struct psw_stats_rep *m);
int psw_stats_rep_get(const unsigned char *p, size_t n, struct psw_stats_rep *m);
size_t psw_attach_rep_put(unsigned char *p, const struct psw_attach_rep *m);
int psw_attach_rep_get(const unsigned char *p, size_t n, struct psw_attach_rep *m);
size_t psw_names_req_put(unsigned char *p, const struct psw_names_req *m);
int psw_names_req_get(const unsigned char *p, size_t n, struct psw_names_req *m);
size_t psw_names_rep_put(unsigned char *p, const struct psw_names_rep *m);
/* n: the whole payload; PS_EPROTO unless the count names follow it exactly */
int psw_names_rep_get(const unsigned char *p, size_t n, struct psw_names_rep *m);
size_t psw_notes_rep_put(unsigned char *p, const struct psw_notes_rep *m);
int psw_notes_rep_get(const unsigned char *p, size_t n, struct psw_notes_rep *m);
/* A name, NUL-padded to PSW_NAME bytes (ATTACH's request, and each name
 * of a NAMES or LIST reply); the get ends it. */
size_t psw_name_put(unsigned char *p, const char *name);
void psw_name_get(const unsigned char *p, char name[PS_NAME_MAX + 1]);

/* The small ones, inline: they sit on every tuple's way. */
static inline size_t psw_u32_put(unsigned char *p, uint32_t v) /* handle, count, status */
{
	psw_put32(p, v);
	return 4;
}
static inline int psw_u32_get(const unsigned char *p, size_t n, size_t want, uint32_t *v)
{
	if (n != want)
		return PS_EPROTO;
	*v = psw_get32(p);
	return 0;
}
#define psw_handle_put(p, h) psw_u32_put(p, h)
#define psw_handle_get(p, n, h) psw_u32_get(p, n, PSW_HANDLE_LEN, h)
#define psw_count_put(p, k) psw_u32_put(p, k)
#define psw_status_put(p, s) psw_u32_put(p, (uint32_t)(s))
static inline size_t psw_tuple_rep_put(unsigned char *p, const struct psw_tuple_rep *m)
{
	psw_put32(p, (uint32_t)m->status);
	psw_put64(p + 4, m->index);
	return PSW_TUPLE_REP_LEN;
}
/* n: the bytes from p on; at least the fixed part */
static inline int psw_tuple_rep_get(const unsigned char *p, size_t n, struct psw_tuple_rep *m)
{
	if (n < PSW_TUPLE_REP_LEN)
		return PS_EPROTO;
	m->status = (int32_t)psw_get32(p);
	m->index = psw_get64(p + 4);
	return 0;
}
static inline size_t psw_time_put(unsigned char *p, uint64_t ns)
{
	psw_put64(p, ns);
	return PSW_TIME_LEN;
}
static inline int psw_time_get(const unsigned char *p, size_t n, uint64_t *ns)
{
	if (n != PSW_TIME_LEN)
		return PS_EPROTO;
	*ns = psw_get64(p);
	return 0;
}

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
