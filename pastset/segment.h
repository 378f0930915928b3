/* segment.h - a shared-memory segment's file as server.c and segment.c share it: its header and directory, read and checked. */
#ifndef PASTSET_SEGMENT_H
#define PASTSET_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

#define PS_SEG_MAGIC   0x3130474553545350ull /* "PSTSEG01" */
#define PS_SEG_VERSION 3u /* 3: elements keep a slot to spare (ps__slots_for) */
#define PS_SHM_PREFIX  "pastset."
#define PS_PAGE        4096u
#define PS_DEFAULT_DATA (64u << 20)
#define PS_DEFAULT_ELEMS 1024u
#define PS_MAX_ELEMS   (1u << 20)

/*
 * Segment layout, each part page-aligned:
 *   header | waiter counts (writable by every opener) | directory | element data
 * A read-only opener maps everything PROT_READ and then makes the waiter
 * counts writable, so it can sleep on a futex but never touch a tuple.
 */
struct ps_seg_hdr {
	uint64_t magic;            /* stored last, with release, once all is set */
	uint32_t version;
	uint32_t byte_order;       /* 0x01020304 in the creator's order */
	uint64_t total_size;
	uint64_t wait_off, dir_off, data_off, data_size;
	uint32_t max_elems;
	_Atomic uint32_t nelems;   /* directory entries published */
	_Atomic uint32_t state;    /* enum ps_shm_state, as the creator left it */
	int32_t creator_pid;
	uint64_t creator_start;    /* start time in clock ticks: tells a reused pid */
	uint64_t data_used;        /* under lock */
	char name[PS_NAME_MAX + 1];
	pthread_mutex_t lock;      /* robust, process-shared: directory changes */
	_Alignas(16) unsigned char user[PS_USER_AREA];
	/* after the rest, so that segments made before it read as 0, the default */
	uint32_t keep;             /* enum ps_keep */
};
_Static_assert(sizeof(struct ps_seg_hdr) <= PS_PAGE, "segment header fits a page");

struct ps_dirent {
	char name[PS_NAME_MAX + 1];
	uint64_t off; /* from data_off */
	uint32_t tuple_size, threshold, mode, flags;
};

/* errno as a PastSet code */
int ps__neg_errno(int e);
/* "/pastset.NAME", the object shm_open names */
void ps__seg_obj_name(char *buf, size_t len, const char *name);
/* The header page read and checked into copy; waits briefly, if allowed,
 * for a creator that is mid-setup.  0, PS_EBADSEG, PS_EPARTIAL or an error. */
int ps__seg_read_header(int fd, struct ps_seg_hdr *copy, bool may_wait);
/* The segment's file, read-write when it may be (an observer registers as
 * a waiter), else read-only; *fd_writable says which.  A descriptor, or an error. */
int ps__seg_open_fd(const char *name, bool want_write, bool *fd_writable);

#endif
