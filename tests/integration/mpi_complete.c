/* mpi_complete.c - every way MPI completes a request, mixed in polling loops over different requests, round after round; each rank lists what it sent and every request it made with how it completed, for the tests to hold a recording against. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * mpi_complete ROUNDS DIR (2 or more ranks; 3 make wildcards choose).
 * Each round, on every rank:
 *  A  a polling loop over five arrays at once: MPI_Test on two receives,
 *     MPI_Testany on wildcard receives and on sends (one call, two arrays),
 *     MPI_Testsome on sends, MPI_Testall on a message to itself;
 *  B  MPI_Wait, Waitall, Waitany and Waitsome, an any-source receive and a
 *     null request among them;
 *  C  persistent requests started by MPI_Start and MPI_Startall (some
 *     rounds only some of them, waited for with the inactive ones);
 *  D  a receive cancelled, completed by MPI_Wait or MPI_Test; a send
 *     MPI_Cancel was called on (which Open MPI completes as sent);
 *  E  a send freed by MPI_Request_free while active;
 *  F  a generalized request waited for beside a send and a receive;
 *  G  matched probes: six messages probed (MPI_Mprobe or MPI_Improbe, on
 *     two communicators) before any is received (MPI_Mrecv, MPI_Imrecv);
 *  H  sends made into an array's free places while MPI_Testany or
 *     MPI_Testsome polls it.
 * Sizes vary with sender and tag, from 0 bytes (Open MPI then gives every
 * send its one shared completed request) to past the eager limit (a real
 * request); every receive checks its source, tag, size and contents.
 * DIR/complete.msgs.rR: a line per message sent, "FROM TO TAG BYTES COMM".
 * DIR/complete.reqs.rR: a line per request that gets an id in OTF2 (an
 * Isend, Irecv, Imrecv, or one start of a persistent request), in the
 * order made: "s TO TAG BYTES HOW" or "r FROM TAG BYTES HOW", HOW d
 * (completed), f (freed before it completed) or c (cancelled: "r - - - c").
 */

#define MAXC 1300 /* ints: the largest message, past Open MPI's eager limit */
#define TAG_PERSIST 32000
#define TAG_CANCEL 32010
#define TAG_FREE 32011

static int me, np, left, right, round_;
static MPI_Comm cw, cw2; /* wildcard receives' communicator; matched probes' */
static FILE *msgs;

struct logent {
	char kind, how; /* 's' or 'r'; 'd', 'f', 'c', or 0 while open */
	int peer, tag, bytes;
};
static struct logent *lg;
static int nlg, caplg;

/* A request's buffer and what the program knows of it. */
struct slot {
	int li;                 /* its line in the request list */
	int recv, src, tag;     /* a receive's expected source and tag (-1: either neighbour, any) */
	int buf[MAXC];
};

static void die(const char *what)
{
	fprintf(stderr, "mpi_complete: rank %d, round %d: %s\n", me, round_, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static int logreq(char kind, int peer, int tag, int bytes, char how)
{
	if (nlg == caplg) {
		caplg = caplg ? 2 * caplg : 1024;
		if (!(lg = realloc(lg, sizeof(*lg) * (size_t)caplg)))
			die("no memory");
	}
	lg[nlg] = (struct logent){ kind, how, peer, tag, bytes };
	return nlg++;
}

static const char *cname(MPI_Comm c)
{
	return c == MPI_COMM_WORLD ? "world" : c == cw ? "w" : "w2";
}

/* A message's ints, from its sender and tag: 0, a few, or past the eager limit. */
static int count_of(int sender, int tag)
{
	unsigned v = (unsigned)(sender * 7 + tag * 13) % 11u;
	if (v == 0)
		return 0;
	if (v >= 9)
		return 1100 + (sender * 5 + tag) % 97;
	return 3 + (sender * 3 + tag * 5) % 37;
}

static int word(int sender, int tag, int i)
{
	return sender * 100003 + tag * 31 + i;
}

static void fill(int *b, int tag)
{
	int n = count_of(me, tag);
	for (int i = 0; i < n; i++)
		b[i] = word(me, tag, i);
}

static void sent(int to, int tag, int bytes, MPI_Comm c)
{
	fprintf(msgs, "%d %d %d %d %s\n", me, to, tag, bytes, cname(c));
}

/* A send: listed (its message too, unless it may be cancelled), then made. */
static void isend_as(struct slot *s, MPI_Request *r, int to, int tag, MPI_Comm c, int listed)
{
	int n = count_of(me, tag);
	fill(s->buf, tag);
	s->recv = 0;
	s->li = logreq('s', to, tag, 4 * n, 0);
	if (listed)
		sent(to, tag, 4 * n, c);
	if (MPI_Isend(s->buf, n, MPI_INT, to, tag, c, r) != MPI_SUCCESS)
		die("MPI_Isend");
}

static void isend(struct slot *s, MPI_Request *r, int to, int tag, MPI_Comm c)
{
	isend_as(s, r, to, tag, c, 1);
}

/* A receive posted for (from, tag), expected from esrc with etag. */
static void irecv(struct slot *s, MPI_Request *r, int from, int tag, int esrc, int etag, MPI_Comm c)
{
	s->recv = 1;
	s->src = esrc;
	s->tag = etag;
	s->li = logreq('r', -1, -1, -1, 0);
	if (MPI_Irecv(s->buf, MAXC, MPI_INT, from, tag, c, r) != MPI_SUCCESS)
		die("MPI_Irecv");
}

/* What came: from whom, with what tag and how many ints, as sent. */
static void check(const int *buf, int src, int tag, int n, int esrc, int etag)
{
	if (esrc >= 0 ? src != esrc : src != left && src != right)
		die("a receive from the wrong source");
	if (etag >= 0 && tag != etag)
		die("a receive with the wrong tag");
	if (n != count_of(src, tag))
		die("a receive of the wrong size");
	for (int i = 0; i < n; i++)
		if (buf[i] != word(src, tag, i))
			die("a receive's contents are not what was sent");
}

/* Request s completed, with its status (NULL: ignored, so the receive's
 * expected source and tag stand). */
static void finish(struct slot *s, const MPI_Status *st)
{
	struct logent *e = &lg[s->li];
	if (e->how)
		die("a request completed twice");
	e->how = 'd';
	if (!s->recv)
		return;
	int src = s->src, tag = s->tag, n = -1, c = 0;
	if (st) {
		MPI_Get_count(st, MPI_INT, &n);
		MPI_Test_cancelled(st, &c);
		src = st->MPI_SOURCE;
		tag = st->MPI_TAG;
	} else if (src < 0 || tag < 0) {
		die("a wildcard receive's status ignored");
	} else {
		n = count_of(src, tag);
	}
	if (c)
		die("a receive cancelled that nobody cancelled");
	check(s->buf, src, tag, n, s->src, s->tag);
	e->peer = src;
	e->tag = tag;
	e->bytes = 4 * n;
}

/* --- A: one polling loop over five arrays ----------------------------------------- */

static void poll_one(MPI_Request *r, struct slot *s, int ignore, int *open)
{
	int f;
	MPI_Status st;
	MPI_Request was = *r;
	MPI_Test(r, &f, ignore ? MPI_STATUS_IGNORE : &st);
	if (f && was != MPI_REQUEST_NULL) {
		finish(s, ignore ? NULL : &st);
		--*open;
	}
}

static void poll_any(int n, MPI_Request *r, struct slot *s, int *open)
{
	int f, i;
	MPI_Status st;
	MPI_Testany(n, r, &i, &f, &st);
	if (f && i != MPI_UNDEFINED) {
		finish(&s[i], &st);
		--*open;
	}
}

static void poll_some(int n, MPI_Request *r, struct slot *s, int ignore, int *open)
{
	int out, idx[8];
	MPI_Status sts[8];
	MPI_Testsome(n, r, &out, idx, ignore ? MPI_STATUSES_IGNORE : sts);
	for (int k = 0; out != MPI_UNDEFINED && k < out; k++, --*open)
		finish(&s[idx[k]], ignore ? NULL : &sts[k]);
}

static void poll_all(int n, MPI_Request *r, struct slot *s, int ignore, int *open)
{
	int f, was[8];
	MPI_Status sts[8];
	for (int i = 0; i < n; i++)
		was[i] = r[i] != MPI_REQUEST_NULL;
	MPI_Testall(n, r, &f, ignore ? MPI_STATUSES_IGNORE : sts);
	for (int i = 0; f && i < n; i++)
		if (was[i]) {
			finish(&s[i], ignore ? NULL : &sts[i]);
			--*open;
		}
}

static void block_mixed(void)
{
	static struct slot w[2], sp[2], self[2], sw[2], ss[2];
	MPI_Request rw[2], rsp[2], rself[2], rsw[2], rss[2];
	int t = round_ * 64, ign = round_ % 2, open = 10;
	irecv(&w[0], &rw[0], MPI_ANY_SOURCE, MPI_ANY_TAG, -1, -1, cw);
	irecv(&w[1], &rw[1], MPI_ANY_SOURCE, MPI_ANY_TAG, -1, -1, cw);
	irecv(&sp[0], &rsp[0], left, t + 1, left, t + 1, MPI_COMM_WORLD);
	irecv(&sp[1], &rsp[1], right, t + 2, right, t + 2, MPI_COMM_WORLD);
	irecv(&self[0], &rself[0], me, t + 3, me, t + 3, MPI_COMM_WORLD);
	isend(&self[1], &rself[1], me, t + 3, MPI_COMM_WORLD);
	isend(&sw[0], &rsw[0], left, t + 4, cw);
	isend(&sw[1], &rsw[1], right, t + 5, cw);
	isend(&ss[0], &rss[0], right, t + 1, MPI_COMM_WORLD);
	isend(&ss[1], &rss[1], left, t + 2, MPI_COMM_WORLD);
	/* the self message is checked against me, not a neighbour */
	while (open) {
		for (int j = 0; j < 6; j++) {
			switch ((j + round_) % 6) {
			case 0: poll_one(&rsp[0], &sp[0], ign, &open); break;
			case 1: poll_any(2, rw, w, &open); break;
			case 2: poll_some(2, rss, ss, ign, &open); break;
			case 3: poll_all(2, rself, self, ign, &open); break;
			case 4: poll_any(2, rsw, sw, &open); break;
			default: poll_one(&rsp[1], &sp[1], !ign, &open); break;
			}
		}
	}
}

/* --- B: waits ------------------------------------------------------------------- */

static void wait_any(int n, MPI_Request *r, struct slot *s)
{
	for (;;) {
		int i;
		MPI_Status st;
		MPI_Waitany(n, r, &i, &st);
		if (i == MPI_UNDEFINED)
			return;
		finish(&s[i], &st);
	}
}

static void wait_some(int n, MPI_Request *r, struct slot *s, int ignore)
{
	for (;;) {
		int out, idx[8];
		MPI_Status sts[8];
		MPI_Waitsome(n, r, &out, idx, ignore ? MPI_STATUSES_IGNORE : sts);
		if (out == MPI_UNDEFINED)
			return;
		for (int k = 0; k < out; k++)
			finish(&s[idx[k]], ignore ? NULL : &sts[k]);
	}
}

static void wait_all(int n, MPI_Request *r, struct slot *s, int ignore)
{
	int was[8];
	MPI_Status sts[8];
	for (int i = 0; i < n; i++)
		was[i] = r[i] != MPI_REQUEST_NULL;
	MPI_Waitall(n, r, ignore ? MPI_STATUSES_IGNORE : sts);
	for (int i = 0; i < n; i++)
		if (was[i])
			finish(&s[i], ignore ? NULL : &sts[i]);
}

static void block_waits(void)
{
	static struct slot rs[4], ss[3];
	MPI_Request rr[4], rsd[3];
	int t = round_ * 64 + 8;
	irecv(&rs[0], &rr[0], left, t, left, t, MPI_COMM_WORLD);
	irecv(&rs[1], &rr[1], right, t + 1, right, t + 1, MPI_COMM_WORLD);
	rr[2] = MPI_REQUEST_NULL;
	irecv(&rs[3], &rr[3], MPI_ANY_SOURCE, t + 2, left, t + 2, MPI_COMM_WORLD);
	isend(&ss[0], &rsd[0], right, t, MPI_COMM_WORLD);
	isend(&ss[1], &rsd[1], left, t + 1, MPI_COMM_WORLD);
	isend(&ss[2], &rsd[2], right, t + 2, MPI_COMM_WORLD);
	switch (round_ % 3) {
	case 0:
		wait_all(4, rr, rs, round_ % 2);
		wait_all(3, rsd, ss, 1);
		break;
	case 1:
		wait_any(4, rr, rs);
		wait_some(3, rsd, ss, 1);
		break;
	default: {
		MPI_Status st;
		MPI_Wait(&rr[1], &st);
		finish(&rs[1], &st);
		wait_some(4, rr, rs, 0);
		for (int i = 2; i >= 0; i--) {
			MPI_Wait(&rsd[i], MPI_STATUS_IGNORE);
			finish(&ss[i], NULL);
		}
	}
	}
}

/* --- C: persistent requests -------------------------------------------------------- */

static struct slot ps[6];
static MPI_Request pr[6];

static void persist_init(void)
{
	const int peer[6] = { left, right, right, left, MPI_ANY_SOURCE, right };
	for (int i = 0; i < 6; i++) {
		int tag = TAG_PERSIST + i / 2;
		if (i % 2 == 0) { /* receives */
			ps[i].recv = 1;
			ps[i].src = i == 4 ? left : peer[i];
			ps[i].tag = tag;
			MPI_Recv_init(ps[i].buf, MAXC, MPI_INT, peer[i], tag, MPI_COMM_WORLD, &pr[i]);
		} else {
			ps[i].recv = 0;
			fill(ps[i].buf, tag);
			MPI_Send_init(ps[i].buf, count_of(me, tag), MPI_INT, peer[i], tag, MPI_COMM_WORLD, &pr[i]);
		}
	}
}

/* Request i is started: listed as a new request. */
static void persist_listed(int i)
{
	int tag = TAG_PERSIST + i / 2;
	if (ps[i].recv) {
		ps[i].li = logreq('r', -1, -1, -1, 0);
		return;
	}
	ps[i].li = logreq('s', i == 3 ? left : right, tag, 4 * count_of(me, tag), 0);
	sent(i == 3 ? left : right, tag, 4 * count_of(me, tag), MPI_COMM_WORLD);
}

static void block_persistent(void)
{
	int mode = round_ % 4, open = 6;
	if (mode == 2) { /* only the first pair, waited for with the four inactive ones */
		persist_listed(0);
		persist_listed(1);
		MPI_Start(&pr[0]);
		MPI_Start(&pr[1]);
		wait_all(2, pr, ps, 0);
		MPI_Waitall(6, pr, MPI_STATUSES_IGNORE); /* all inactive now: nothing completes */
		for (int i = 2; i < 6; i++) {
			persist_listed(i);
			MPI_Start(&pr[i]);
		}
		open = 4;
		while (open)
			poll_any(6, pr, ps, &open);
		return;
	}
	for (int i = 0; i < 6; i++)
		persist_listed(i);
	if (mode == 1)
		for (int i = 0; i < 6; i++)
			MPI_Start(&pr[i]);
	else
		MPI_Startall(6, pr);
	if (mode == 0) {
		wait_all(6, pr, ps, 0);
	} else if (mode == 1) {
		int f = 0;
		MPI_Status sts[6];
		while (!f)
			MPI_Testall(6, pr, &f, sts);
		for (int i = 0; i < 6; i++)
			finish(&ps[i], &sts[i]);
	} else {
		while (open) { /* Waitsome returns those that completed; inactive ones are not returned again */
			int out, idx[6];
			MPI_Status sts[6];
			MPI_Waitsome(6, pr, &out, idx, sts);
			for (int k = 0; out != MPI_UNDEFINED && k < out; k++, open--)
				finish(&ps[idx[k]], &sts[k]);
		}
	}
}

/* --- D, E, F: cancelled, freed, generalized ---------------------------------------------- */

static void block_cancel(void)
{
	static struct slot s;
	MPI_Request r;
	MPI_Status st;
	int c, f = 0;
	irecv(&s, &r, left, TAG_CANCEL, left, TAG_CANCEL, MPI_COMM_WORLD); /* never sent */
	MPI_Cancel(&r);
	if (round_ % 2)
		MPI_Wait(&r, &st);
	else
		while (!f)
			MPI_Test(&r, &f, &st);
	MPI_Test_cancelled(&st, &c);
	if (!c)
		die("a cancelled receive not cancelled");
	lg[s.li].how = 'c';
}

/* A send MPI_Cancel was called on (Open MPI cannot cancel one: it then
 * completes as sent), and the receive meant for it, which the sender's
 * word (a message of its own) says to cancel or to wait for. */
static void block_cancel_send(void)
{
	static struct slot s, r;
	MPI_Request sr, rr;
	MPI_Status st;
	int t = round_ * 64 + 12, c, lc, f = 0;
	irecv(&r, &rr, left, t, left, t, MPI_COMM_WORLD);
	isend_as(&s, &sr, right, t, MPI_COMM_WORLD, 0);
	MPI_Cancel(&sr);
	if (round_ % 2)
		MPI_Wait(&sr, &st);
	else
		while (!f)
			MPI_Test(&sr, &f, &st);
	MPI_Test_cancelled(&st, &c);
	if (c)
		lg[s.li] = (struct logent){ 's', 'c', 0, 0, 0 };
	else
		finish(&s, &st), sent(right, t, lg[s.li].bytes, MPI_COMM_WORLD);
	MPI_Send(&c, 1, MPI_INT, right, t + 1, MPI_COMM_WORLD);
	sent(right, t + 1, 4, MPI_COMM_WORLD);
	MPI_Recv(&lc, 1, MPI_INT, left, t + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (lc)
		MPI_Cancel(&rr);
	MPI_Wait(&rr, &st);
	MPI_Test_cancelled(&st, &c);
	if (c != lc)
		die("a receive cancelled, or not, unlike its send");
	if (c)
		lg[r.li].how = 'c';
	else
		finish(&r, &st);
}

static void block_free(void)
{
	static int buf[8][MAXC], in[MAXC];
	int tag = TAG_FREE, n = count_of(me, tag + round_ % 5), c;
	MPI_Request r;
	MPI_Status st;
	for (int i = 0; i < n; i++)
		buf[round_ % 8][i] = word(me, tag + round_ % 5, i);
	logreq('s', right, tag + round_ % 5, 4 * n, 'f');
	sent(right, tag + round_ % 5, 4 * n, MPI_COMM_WORLD);
	MPI_Isend(buf[round_ % 8], n, MPI_INT, right, tag + round_ % 5, MPI_COMM_WORLD, &r);
	MPI_Request_free(&r);
	if (r != MPI_REQUEST_NULL)
		die("MPI_Request_free left the handle");
	MPI_Recv(in, MAXC, MPI_INT, left, tag + round_ % 5, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &c);
	check(in, st.MPI_SOURCE, st.MPI_TAG, c, left, tag + round_ % 5);
}

static int grequests_freed;

static int g_query(void *extra, MPI_Status *st)
{
	(void)extra;
	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int g_free(void *extra)
{
	++*(int *)extra;
	return MPI_SUCCESS;
}

static int g_cancel(void *extra, int complete)
{
	(void)extra, (void)complete;
	return MPI_SUCCESS;
}

static void block_grequest(void)
{
	static struct slot s[3];
	MPI_Request r[3], g;
	int t = round_ * 64 + 16, open = 2;
	MPI_Grequest_start(g_query, g_free, g_cancel, &grequests_freed, &g);
	r[0] = g;
	irecv(&s[1], &r[1], left, t, left, t, MPI_COMM_WORLD);
	isend(&s[2], &r[2], right, t, MPI_COMM_WORLD);
	if (round_ % 2 == 0) {
		MPI_Grequest_complete(g);
		MPI_Status sts[3];
		MPI_Waitall(3, r, sts);
		finish(&s[1], &sts[1]);
		finish(&s[2], &sts[2]);
		return;
	}
	for (int spin = 0; r[0] != MPI_REQUEST_NULL || open; spin++) {
		int out, idx[3];
		MPI_Status sts[3];
		if (spin == 1)
			MPI_Grequest_complete(g); /* from inside the loop, after a fruitless poll */
		MPI_Testsome(3, r, &out, idx, sts);
		for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
			if (idx[k]) {
				finish(&s[idx[k]], &sts[k]);
				open--;
			}
	}
}

/* --- G: matched probes ------------------------------------------------------------- */

static void block_mprobe(void)
{
	static struct slot out[6], in[6];
	MPI_Request so[6], ri[6];
	MPI_Message m[6];
	MPI_Status st;
	int t = round_ * 64 + 24, open = 6;
	/* half on WORLD, half on cw2: one thread's probed messages on two communicators */
	for (int i = 0; i < 6; i++)
		isend(&out[i], &so[i], right, t + i, i % 2 ? cw2 : MPI_COMM_WORLD);
	for (int i = 0; i < 6; i++) {
		MPI_Comm c = i % 2 ? cw2 : MPI_COMM_WORLD;
		int f = 0, n;
		if (round_ % 2 == 0)
			MPI_Mprobe(left, t + i, c, &m[i], &st);
		else
			while (!f)
				MPI_Improbe(MPI_ANY_SOURCE, t + i, c, &f, &m[i], &st);
		MPI_Get_count(&st, MPI_INT, &n);
		if (st.MPI_SOURCE != left || st.MPI_TAG != t + i || n != count_of(left, t + i))
			die("a probe saw the wrong message");
	}
	for (int i = 5; i >= 0; i--) { /* the last probed first */
		if (round_ % 2 == 0 && i >= 3) {
			int n;
			MPI_Mrecv(in[i].buf, MAXC, MPI_INT, &m[i], &st);
			MPI_Get_count(&st, MPI_INT, &n);
			check(in[i].buf, st.MPI_SOURCE, st.MPI_TAG, n, left, t + i);
			ri[i] = MPI_REQUEST_NULL;
			open--;
			continue;
		}
		in[i].recv = 1;
		in[i].src = left;
		in[i].tag = t + i;
		in[i].li = logreq('r', -1, -1, -1, 0);
		MPI_Imrecv(in[i].buf, MAXC, MPI_INT, &m[i], &ri[i]);
	}
	while (open)
		poll_any(6, ri, in, &open);
	wait_all(6, so, out, 1);
}

/* --- H: requests made into an array while it is polled ------------------------------ */

/* Each message to the right waits for the one from the left: the send
 * goes into the polled array's next place from inside the loop, while
 * MPI_Testany or MPI_Testsome polls it.  Tags whose messages are past the
 * eager limit, so each send is a request of its own; the receives take
 * any tag from the left (on cw, quiet until the barrier). */
static void block_repost(void)
{
	static struct slot s[3], r[3];
	MPI_Request sa[3] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL }, rq;
	int tags[3], n = 0, k = 0, open = 6;
	for (int tag = round_ * 64 + 40; n < 3; tag++)
		if (count_of(me, tag) >= 1100)
			tags[n++] = tag;
	irecv(&r[0], &rq, left, MPI_ANY_TAG, left, -1, cw);
	isend(&s[0], &sa[0], right, tags[0], cw);
	while (open) {
		if (round_ % 3 == 0)
			poll_any(3, sa, s, &open);
		else
			poll_some(3, sa, s, round_ % 2, &open);
		int f = 0;
		MPI_Status st;
		if (k < 3)
			MPI_Test(&rq, &f, &st);
		if (!f)
			continue;
		finish(&r[k], &st);
		open--;
		if (++k < 3) {
			irecv(&r[k], &rq, left, MPI_ANY_TAG, left, -1, cw);
			isend(&s[k], &sa[k], right, tags[k], cw);
		}
	}
}

/* --- the rounds ------------------------------------------------------------------ */

static void write_lists(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/complete.reqs.r%d", dir, me);
	FILE *f = fopen(path, "w");
	if (!f)
		die("cannot write the request list");
	for (int i = 0; i < nlg; i++) {
		const struct logent *e = &lg[i];
		if (!e->how)
			die("a request never completed");
		if (e->how == 'c')
			fprintf(f, "%c - - - c\n", e->kind);
		else
			fprintf(f, "%c %d %d %d %c\n", e->kind, e->peer, e->tag, e->bytes, e->how);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	if (argc < 3 || np < 2 || rounds < 1 || rounds > 400) {
		if (me == 0)
			fprintf(stderr, "usage: mpirun -np 2|3 mpi_complete ROUNDS(1-400) DIR\n");
		MPI_Finalize();
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/complete.msgs.r%d", argv[2], me);
	if (!(msgs = fopen(path, "w")))
		die("cannot write the message list");
	right = (me + 1) % np;
	left = (me + np - 1) % np;
	MPI_Comm_dup(MPI_COMM_WORLD, &cw);
	MPI_Comm_dup(MPI_COMM_WORLD, &cw2);
	persist_init();
	for (round_ = 0; round_ < rounds; round_++) {
		block_mixed();
		block_waits();
		block_persistent();
		block_cancel();
		block_cancel_send();
		block_free();
		block_grequest();
		block_mprobe();
		block_repost();
		MPI_Barrier(MPI_COMM_WORLD); /* the freed sends' buffers are free again */
	}
	for (int i = 0; i < 6; i++)
		MPI_Request_free(&pr[i]);
	if (grequests_freed != rounds)
		die("a generalized request not freed");
	write_lists(argv[2]);
	fclose(msgs);
	MPI_Comm_free(&cw);
	MPI_Comm_free(&cw2);
	MPI_Finalize();
	return 0;
}
