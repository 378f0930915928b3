/* door.h - esview's door: who may connect, which requests pass, how many at once and how fast a key is guessed (private to esview). */
#ifndef MONITORS_VIEW_DOOR_H
#define MONITORS_VIEW_DOOR_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The rules (docs/guide.md: "Who may see a job's live view"):
 *  - Without a key, esview listens on loopback and serves only the user
 *    who started it (or root): the kernel says who owns the other end of
 *    each connection, as the tuple servers ask.  With a key (--view-secret),
 *    whoever gives it; a wrong one is held before it is looked at, as the
 *    tuple servers hold a wrong secret (pastset/guard.c).
 *  - Every request names esview in Host (its address, localhost on
 *    loopback, this host's names and addresses when it listens on all, and
 *    --host names): a page of another site whose name was made to point
 *    here (DNS rebinding) gets nothing.
 *  - GET never changes anything.  A POST needs the token of the page
 *    esview served (X-ES-Token) and an Origin that is esview's own, and
 *    what a browser says another site's page asks (Sec-Fetch-Site, a
 *    foreign Origin) is refused before any key is looked at: another web
 *    page its user opens can neither read the view, nor change it, nor
 *    make it work, nor count wrong keys against the user.
 *  - Connections: at most VD_MAX_CONNS, of which VD_MAX_STRANGERS have not
 *    yet passed a request (and must send its head within VD_HEADER_MS), and of one client
 *    (a user on loopback, an address elsewhere) at most VD_WHO_STRANGERS,
 *    past which its newcomers are refused; past VD_MAX_STRANGERS a
 *    newcomer closes the oldest stranger of whoever has the most (one
 *    still sending its request first).  A connection gets a thread only
 *    once the head of its request is whole.  So slow or idle clients, and
 *    a flood of them, never keep out a browser with the key, nor make
 *    threads.  A newcomer refused is kept VD_LINGER_MS before it is
 *    closed: refused at once, a flood would come again as fast as it can.
 */
enum {
	VD_MAX_CONNS = 128,
	VD_MAX_STRANGERS = 32,
	VD_WHO_STRANGERS = 8,
	VD_HEADER_MS = 3000,
	VD_IDLE_S = 10,
	VD_URI_MAX = 8192,
	VD_HEAD_MAX = 32768, /* a request's head waited for, at most (libmicrohttpd's room for one) */
	VD_LINGER = 256,     /* connections refused, kept ... */
	VD_LINGER_MS = 1000, /* ... this long before they are closed */
};

/* Serves a request that passed the door: post tells a POST (state may
 * change) from a GET; answered with vd_reply. */
typedef enum MHD_Result vd_serve_fn(void *cls, struct MHD_Connection *c, const char *url, bool post);

struct vd_attr {
	const char *addr;                  /* IPv4 to listen on */
	int port;                          /* 0: any free one */
	const char *secret;                /* the key, or NULL: this user on loopback only */
	size_t secret_len;
	const char *const *hosts;          /* further names Host may give (--host) */
	int nhosts;
	const char *token;                 /* the page's token (64 hex digits), or NULL: one made */
	vd_serve_fn *serve;
	void *cls;
};

struct vd_counts {
	uint64_t admitted;  /* connections handed to libmicrohttpd */
	uint64_t passed;    /* requests served */
	uint64_t user;      /* refused: another user, without a key */
	uint64_t host;      /* refused: a Host that is not esview's */
	uint64_t key;       /* refused: no key or a wrong one */
	uint64_t forged;    /* refused: a POST without the page's token or Origin */
	uint64_t held;      /* wrong keys held before they were looked at */
	uint64_t evicted;   /* strangers closed: too slow, crowded out, or a head too long */
	uint64_t full;      /* connections refused: their client had its share of strangers, or no room at all */
};

typedef struct vd vd;
/* Listens and serves; 0, or an error said in err (the address, the port in use). */
int vd_open(const struct vd_attr *a, vd **out, char *err, size_t errlen);
int vd_port(const vd *d);
/* The token of the page, for its POSTs: 64 hex digits, new each run. */
const char *vd_token(const vd *d);
void vd_counts(vd *d, struct vd_counts *c);
void vd_close(vd *d);

/* A reply with the headers every answer of esview carries (no caching,
 * no sniffing, no framing, no use by another site, no referrer); csp: the
 * page's Content-Security-Policy, or NULL. */
enum MHD_Result vd_reply(struct MHD_Connection *c, unsigned status, const char *type, const void *body, size_t len,
			 enum MHD_ResponseMemoryMode mode, const char *csp);

#endif
