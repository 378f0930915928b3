/* guard.c - who a client is, and how fast the clients that do not know a secret may guess it: shared by the tuple servers and esview. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"
#include "tcp.h"

/*
 * The policy, and why:
 *  - A client is known by who it is, not where it comes from.  On
 *    loopback every address of 127/8 reaches us, so an address says
 *    nothing; the kernel says which user owns the client's end.  Another
 *    local user's failures are counted against that user, never against
 *    the owner's clients, and rotating over 127/8 changes nothing.  Off
 *    loopback the address is all there is (an IPv6 host owns its /64).
 *  - Nobody is ever refused for what someone else did: a handshake is
 *    held, not refused, and a held one with the right secret passes.
 *  - The secret is looked at only when the hold is over, so a client
 *    learns nothing sooner by closing: a guesser's rate is the handshakes
 *    it may have waiting (the caller bounds them) over the hold.
 *  - Per client: GUARD_FREE failures in a row cost nothing (a typo, a
 *    stale secret file); then each handshake is held 100 ms, doubling with
 *    each failure, up to GUARD_HOLD_MAX_MS.  A pass clears it.
 *  - In all: while more than GUARD_RATE handshakes a second fail, every
 *    client that has not passed in the last GUARD_GOOD_MS is held
 *    GUARD_HOLD_MAX_MS, however few it failed itself, so that guessers
 *    with many addresses get no more tries than one.  A client that
 *    passed before keeps passing at once.
 */
enum {
	GUARD_SLOTS = 256,
	GUARD_FREE = 3,
	GUARD_RATE = 10,
	GUARD_HOLD_MAX_MS = 2000,
	GUARD_GOOD_MS = 600000,
};

struct ps_guard {
	struct gslot {
		uint64_t who;      /* 0: free */
		uint32_t fails;    /* in a row */
		int64_t seen_ms;   /* its last handshake */
		int64_t passed_ms; /* its last pass, or INT64_MIN */
	} s[GUARD_SLOTS];
	int64_t sec;             /* the current second (now_ms / 1000) */
	uint32_t fails_now, fails_before; /* failures in it and the second before */
	struct ps_guard_counts n;
};

int ps_guard_create(ps_guard **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : PS_ENOMEM;
}

void ps_guard_destroy(ps_guard *g)
{
	free(g);
}

/* who's slot; with make, the one it takes (the client seen longest ago,
 * one that never passed before one that did). */
static struct gslot *guard_slot(ps_guard *g, uint64_t who, bool make)
{
	struct gslot *victim = NULL;
	for (int i = 0; i < GUARD_SLOTS; i++) {
		struct gslot *k = &g->s[i];
		if (k->who == who && who)
			return k;
		bool better = !victim || !k->who ||
			      (victim->who && ((k->passed_ms == INT64_MIN) > (victim->passed_ms == INT64_MIN) ||
					       ((k->passed_ms == INT64_MIN) == (victim->passed_ms == INT64_MIN) &&
						k->seen_ms < victim->seen_ms)));
		if (better)
			victim = k;
	}
	if (!make)
		return NULL;
	*victim = (struct gslot){ .who = who, .passed_ms = INT64_MIN };
	return victim;
}

/* The failures of the last second or so, in all. */
static uint32_t failing(ps_guard *g, int64_t now_ms)
{
	int64_t sec = now_ms / 1000;
	if (sec != g->sec) {
		g->fails_before = sec == g->sec + 1 ? g->fails_now : 0;
		g->fails_now = 0;
		g->sec = sec;
	}
	return g->fails_now + g->fails_before;
}

int64_t ps_guard_hold(ps_guard *g, uint64_t who, int64_t now_ms)
{
	struct gslot *k = guard_slot(g, who, false);
	int64_t hold = 0;
	if (k && k->fails >= GUARD_FREE) {
		uint32_t n = k->fails - GUARD_FREE;
		hold = n >= 5 ? GUARD_HOLD_MAX_MS : 100ll << n;
		if (hold > GUARD_HOLD_MAX_MS)
			hold = GUARD_HOLD_MAX_MS;
	}
	bool good = k && k->passed_ms != INT64_MIN && now_ms - k->passed_ms < GUARD_GOOD_MS;
	if (!good && failing(g, now_ms) > GUARD_RATE)
		hold = GUARD_HOLD_MAX_MS;
	if (hold)
		g->n.held++;
	return hold;
}

void ps_guard_note(ps_guard *g, uint64_t who, bool passed, int64_t now_ms)
{
	struct gslot *k = guard_slot(g, who, true);
	k->seen_ms = now_ms;
	if (passed) {
		k->fails = 0;
		k->passed_ms = now_ms;
		g->n.passed++;
		return;
	}
	if (k->fails < UINT32_MAX)
		k->fails++;
	failing(g, now_ms);
	g->fails_now++;
	g->n.failed++;
}

void ps_guard_counts(const ps_guard *g, struct ps_guard_counts *c)
{
	*c = g->n;
}

/* Whether a is this host's loopback (127/8, ::1, or 127/8 mapped into IPv6). */
static bool loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	const struct in6_addr *s6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(s6) || (IN6_IS_ADDR_V4MAPPED(s6) && s6->s6_addr[12] == 127);
}

uint64_t ps_peer_who(int fd, long *uid)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	*uid = -1;
	if (getpeername(fd, (struct sockaddr *)&ss, &len)) {
		*uid = -2;
		return 0;
	}
	if (loopback(&ss) && ss.ss_family == AF_INET) {
		*uid = ps__peer_uid(fd);
		if (*uid >= 0)
			return PS_WHO_USER | (uint64_t)*uid;
		if (*uid == -2)
			return 0;
	}
	if (ss.ss_family == AF_INET)
		return PS_WHO_IPV4 | ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	uint64_t h = 1469598103934665603ull; /* FNV-1a over the /64 */
	const unsigned char *a = ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr;
	for (int i = 0; i < 8; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	return PS_WHO_IPV6 | (h >> 2);
}

bool ps_secret_equal(const char *want, size_t want_len, const char *given, size_t given_len)
{
	/* compared in full whatever was given, so timing tells nothing */
	unsigned char diff = given_len != want_len;
	for (size_t i = 0; i < want_len; i++)
		diff |= (unsigned char)(want[i] ^ (i < given_len ? given[i] : 0));
	return !diff;
}
