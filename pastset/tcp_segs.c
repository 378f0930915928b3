/* tcp_segs.c - the segments a tuple server serves: opened on first use, shared by the handles of every client, unmapped when idle. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcp.h"

/* --- segments ------------------------------------------------------------------ */

/* Frees a segment's slot, under t->lock; returns its server, to destroy
 * once the lock is dropped. */
static ps_server *seg_release(struct seg *g)
{
	ps_server *gone = g->srv;
	memset(g, 0, sizeof(*g));
	return gone;
}

/* Closes an element handle; its segment goes when retired and unused.
 * Only the loop thread calls this. */
void ps__seg_put(struct ps_tcp *t, struct handle *h)
{
	ps_elem_close(h->e);
	ps_server_destroy(h->own);
	int i = h->seg;
	*h = (struct handle){ .e = NULL };
	pthread_mutex_lock(&t->lock);
	struct seg *g = &t->segs[i];
	ps_server *gone = NULL;
	g->used_ms = ps__tcp_now_ms();
	if (--g->refs == 0 && g->retired)
		gone = seg_release(g);
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
}

/*
 * A node daemon keeps a segment mapped while clients hold handles on it,
 * and a little after (ATTACH and NAMES come in bursts), then lets it go:
 * jobs come and go under new names, and a removed segment must not stay
 * mapped nor hold a slot.
 */
void ps__segs_sweep(struct ps_tcp *t)
{
	ps_server *gone[64];
	int n;
	int64_t now = ps__tcp_now_ms();
	do { /* unmapped in batches, outside the lock */
		n = 0;
		pthread_mutex_lock(&t->lock);
		for (int i = 0; i < t->nsegs && n < 64; i++) {
			struct seg *g = &t->segs[i];
			if (g->srv && g->owned && !g->refs && now - g->used_ms >= SEG_IDLE_MS)
				gone[n++] = seg_release(g);
		}
		while (t->nsegs && !t->segs[t->nsegs - 1].srv)
			t->nsegs--;
		pthread_mutex_unlock(&t->lock);
		for (int i = 0; i < n; i++)
			ps_server_destroy(gone[i]);
	} while (n == 64);
}

bool ps__serves_shm(const struct ps_tcp *t, const char *name)
{
	return t->serve_shm && !strncmp(name, t->shm_prefix, strlen(t->shm_prefix));
}

/* A free slot, under t->lock; -1 if there is none. */
static int free_seg(struct ps_tcp *t)
{
	for (int i = 0; i < t->nsegs; i++)
		if (!t->segs[i].srv)
			return i;
	return t->nsegs < MAX_SEGS ? t->nsegs++ : -1;
}

/*
 * The segment of that name now.  A node daemon's cached mapping is checked
 * against the file: a job that ran again made a new segment of the same
 * name, and a removed one must not stay mapped; the old one is retired and
 * closed when its last handle goes.  Only the loop thread calls this.
 */
int ps__find_seg(struct ps_tcp *t, const char *name, ps_server **srv, int *slot)
{
	uint64_t dev = 0, ino = 0;
	bool shm = ps__serves_shm(t, name);
	bool exists = shm && !ps__shm_id(name, &dev, &ino);
	ps_server *gone = NULL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++) {
		struct seg *g = &t->segs[i];
		if (!g->srv || g->retired || strcmp(g->name, name))
			continue;
		if (!g->owned || (exists && g->dev == dev && g->ino == ino)) {
			g->used_ms = ps__tcp_now_ms();
			*srv = g->srv;
			*slot = i;
			pthread_mutex_unlock(&t->lock);
			return 0;
		}
		g->retired = true;
		if (!g->refs)
			gone = seg_release(g);
	}
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
	if (!shm)
		return PS_ENOENT;
	ps_server *s;
	/* the loop never waits on a segment: one being made is PS_EPARTIAL,
	 * and the client asks again */
	int rc = ps_server_open_shm(name, (t->shm_writable ? PS_RDWR : PS_RDONLY) | PS_NOWAIT, &s);
	if (rc)
		return rc;
	ps__shm_id(name, &dev, &ino);
	pthread_mutex_lock(&t->lock);
	int i = free_seg(t);
	for (int k = 0; i < 0 && k < t->nsegs; k++) { /* full: the least recently used idle one goes */
		struct seg *g = &t->segs[k];
		if (g->owned && !g->refs && (i < 0 || g->used_ms < t->segs[i].used_ms))
			i = k;
	}
	if (i < 0) {
		pthread_mutex_unlock(&t->lock);
		ps_server_destroy(s);
		return PS_ENOSPC;
	}
	struct seg *g = &t->segs[i];
	gone = g->srv ? seg_release(g) : NULL;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->srv = s;
	g->owned = true;
	g->writable = t->shm_writable;
	g->used_ms = ps__tcp_now_ms();
	g->dev = dev;
	g->ino = ino;
	pthread_mutex_unlock(&t->lock);
	ps_server_destroy(gone);
	*srv = s;
	*slot = i;
	return 0;
}

bool ps__is_added(struct ps_tcp *t, const char *name)
{
	bool added = false;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].srv && !t->segs[i].owned && !strcmp(t->segs[i].name, name))
			added = true;
	pthread_mutex_unlock(&t->lock);
	return added;
}

int ps_tcp_add(ps_tcp *t, const char *segment, ps_server *srv)
{
	int rc = ps__check_name(segment);
	if (rc || !t || !srv)
		return rc ? rc : PS_EINVAL;
	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->nsegs; i++)
		if (t->segs[i].srv && !t->segs[i].retired && !strcmp(t->segs[i].name, segment))
			rc = PS_EEXIST;
	int i = rc ? -1 : free_seg(t);
	if (!rc && i < 0)
		rc = PS_ENOSPC;
	if (!rc) {
		struct seg *g = &t->segs[i];
		snprintf(g->name, sizeof(g->name), "%s", segment);
		g->srv = srv;
		g->owned = false;
		g->writable = true;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* LIST: the segments served whose names start with prefix, the added ones
 * first, then (a node daemon) this host's; a page of them from `first`. */


void ps__list_put(struct listing *l, const char *name)
{
	if (l->total++ >= l->first && l->n < PSW_LIST_MAX)
		memcpy(l->out + (size_t)l->n++ * PSW_NAME, name, strnlen(name, PS_NAME_MAX));
}

int ps__list_one(const char *name, void *arg)
{
	struct listing *l = arg;
	if (!strncmp(name, l->prefix, strlen(l->prefix)) && ps__serves_shm(l->t, name) &&
	    !ps__is_added(l->t, name)) /* those were listed first */
		ps__list_put(l, name);
	return 0;
}
