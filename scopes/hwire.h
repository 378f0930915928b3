/* hwire.h - what a monitor (es_hlib, handler.c) and the process that runs one of its handlers (eshandler, hhost.c) say to each other over their socket; private to scopes/. */
#ifndef ES_SCOPES_HWIRE_H
#define ES_SCOPES_HWIRE_H

#include <stdint.h>

/*
 * One SOCK_SEQPACKET socket pair, the host's end its descriptor
 * HW_FD: each message one datagram, a struct hw_hdr first.  A
 * handler runs in a process of its own so that whatever it does (crash,
 * abort, hang, take seconds a batch) costs the monitor nothing but it:
 * the monitor never waits on it longer than it chose (a query's
 * deadline), and kills it when it ends.
 *
 * monitor -> host                        host -> monitor
 *   HW_HELLO  a: 0; text: LIB\0ARGS\0      HW_READY   a: 0 or the code of a
 *             MONITOR\0JOB\0                          refusal; text: its name
 *   HW_NAME   a: id, b: HW_OP or                      \0 its help, or why not
 *             HW_THREAD; text: the name    HW_ANSWER  a: the query's number,
 *   HW_EVENTS a: n; hw_event[n]                       b: events processed so
 *   HW_QUERY  a: its number; text                     far, c: query's code;
 *   HW_QUIT   destroy, and end                        text: the answer
 *                                          HW_PUSH    text
 *                                          HW_STOPPED c: what process()
 *                                                     returned, below 0
 * Names (an op's, a thread's) are sent once, before the first event that
 * points to them.  Texts end with their 0 inside the datagram; the host
 * reads nothing past what it received.
 */
#define HW_FD 3
#define HW_MAX 32768                    /* bytes in one datagram */
#define HW_TEXT 3824                    /* an answer or a push (ES_HLIB_TEXT) */

enum hw_type { HW_HELLO = 1, HW_NAME, HW_EVENTS, HW_QUERY, HW_QUIT, HW_READY, HW_ANSWER, HW_PUSH, HW_STOPPED };
enum hw_name { HW_OP = 1, HW_THREAD = 2 };

struct hw_hdr {
	uint32_t type;
	uint32_t a;
	uint64_t b;
	int64_t c;
};

/* es_handler_event with its names by number (HW_NAME) */
struct hw_event {
	uint64_t start_ns, end_ns, bytes;
	uint32_t code, flags;
	int32_t rank, thread;
	uint32_t peer, tag, comm;
	uint32_t op;     /* HW_OP name's id: the code */
	uint32_t tname;  /* HW_THREAD name's id: thread + 1 (0: none) */
	uint32_t pad;
};
#define HW_EVENTS_MAX ((HW_MAX - sizeof(struct hw_hdr)) / sizeof(struct hw_event))

#endif
