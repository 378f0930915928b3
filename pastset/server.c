/* server.c - tuple servers: in-process memory and named shared-memory segments. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "segment.h"

struct local_ent {
	char name[PS_NAME_MAX + 1];
	struct ps_ehdr *h;
	struct ps_waitc *wc;
};

struct ps_server {
	bool shm;          /* which of the two below; neither: ops */
	bool writable;     /* may create, write and take */
	bool creator;
	bool can_register; /* waiter counts are writable */
	char name[PS_NAME_MAX + 1];
	struct {           /* in process memory */
		pthread_mutex_t lock;
		struct local_ent *ents;
		int n, cap;
		unsigned char user[PS_USER_AREA];
	} mem;
	struct {           /* a named shared-memory segment */
		unsigned char *base;
		size_t size;
		struct ps_seg_hdr *hdr;
		int fd;    /* kept by a writer, to reserve each element's memory */
		/* the layout, as checked when the segment was opened: a peer
		 * that can write the header must not be able to move it under us */
		uint64_t wait_off, dir_off, data_off, data_size;
		uint32_t max_elems;
	} seg;
	/* reached through a table (a tuple server elsewhere: remote.c) */
	const struct ps_server_ops *ops;
	void *impl;
};

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

/* Gives the pages of [off, off + len) their memory now, or PS_ENOSPC. */
static int reserve(int fd, size_t off, size_t len)
{
	int e = posix_fallocate(fd, (off_t)off, (off_t)len);
	return e ? ps__neg_errno(e) : 0;
}

static void keep_layout(ps_server *s, const struct ps_seg_hdr *h)
{
	s->seg.wait_off = h->wait_off;
	s->seg.dir_off = h->dir_off;
	s->seg.data_off = h->data_off;
	s->seg.data_size = h->data_size;
	s->seg.max_elems = h->max_elems;
}

/* --- in-process ----------------------------------------------------------- */

int ps_server_create_local(ps_server **out)
{
	if (!out)
		return PS_EINVAL;
	ps_server *s = calloc(1, sizeof(*s));
	if (!s)
		return PS_ENOMEM;
	int rc = ps__mutex_init(&s->mem.lock, false);
	if (rc) {
		free(s);
		return rc;
	}
	s->writable = s->creator = s->can_register = true;
	*out = s;
	return 0;
}

static struct local_ent *local_find(ps_server *s, const char *name)
{
	for (int i = 0; i < s->mem.n; i++)
		if (!strcmp(s->mem.ents[i].name, name))
			return &s->mem.ents[i];
	return NULL;
}

static int local_create(ps_server *s, const char *name,
			const struct ps_elem_attr *a, ps_elem **out)
{
	int rc = PS_ENOMEM;
	pthread_mutex_lock(&s->mem.lock);
	if (local_find(s, name)) {
		rc = PS_EEXIST;
		goto unlock;
	}
	if (s->mem.n == s->mem.cap) {
		int cap = s->mem.cap ? 2 * s->mem.cap : 16;
		struct local_ent *ents = realloc(s->mem.ents, cap * sizeof(*ents));
		if (!ents)
			goto unlock;
		s->mem.ents = ents;
		s->mem.cap = cap;
	}
	size_t bytes = round_up(ps__elem_bytes((uint32_t)a->tuple_size, a->threshold),
				PS_CACHELINE);
	struct ps_ehdr *h = aligned_alloc(PS_CACHELINE, bytes);
	struct ps_waitc *wc = aligned_alloc(PS_CACHELINE, sizeof(*wc));
	if (!h || !wc)
		goto fail;
	memset(h, 0, bytes);
	memset(wc, 0, sizeof(*wc));
	if ((rc = ps__elem_init(h, a, (uint32_t)s->mem.n, false)))
		goto fail;
	if ((rc = ps__elem_handle(s, h, wc, name, a, true, true, false, out))) {
		pthread_mutex_destroy(&h->wlock);
		pthread_mutex_destroy(&h->tlock);
		goto fail;
	}
	struct local_ent *ent = &s->mem.ents[s->mem.n++];
	snprintf(ent->name, sizeof(ent->name), "%s", name);
	ent->h = h;
	ent->wc = wc;
	pthread_mutex_unlock(&s->mem.lock);
	return 0;
fail:
	free(h);
	free(wc);
unlock:
	pthread_mutex_unlock(&s->mem.lock);
	return rc;
}

static int local_open(ps_server *s, const char *name, size_t tuple_size, ps_elem **out)
{
	int rc;
	pthread_mutex_lock(&s->mem.lock);
	struct local_ent *ent = local_find(s, name);
	if (!ent)
		rc = PS_ENOENT;
	else if (tuple_size && tuple_size != ent->h->tuple_size)
		rc = PS_ESIZE;
	else {
		struct ps_elem_attr a = { .tuple_size = ent->h->tuple_size, .threshold = ent->h->threshold,
					  .mode = (enum ps_mode)ent->h->mode, .flags = ent->h->flags };
		rc = ps__elem_handle(s, ent->h, ent->wc, name, &a, true, true, false, out);
	}
	pthread_mutex_unlock(&s->mem.lock);
	return rc;
}

/* --- shared memory ------------------------------------------------------- */

int ps_server_create_shm(const char *name, const struct ps_shm_attr *attr,
			 ps_server **out)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!out)
		return PS_EINVAL;
	size_t data = attr && attr->size ? attr->size : PS_DEFAULT_DATA;
	uint32_t max = attr && attr->max_elems ? attr->max_elems : PS_DEFAULT_ELEMS;
	if (max > PS_MAX_ELEMS || data > ((size_t)1 << 40) ||
	    (attr && (attr->flags & ~(unsigned)PS_SHM_REPLACE_DEAD)))
		return PS_EINVAL;
	size_t wait_off = PS_PAGE;
	size_t dir_off = wait_off + round_up((size_t)max * sizeof(struct ps_waitc), PS_PAGE);
	size_t data_off = dir_off + round_up((size_t)max * sizeof(struct ps_dirent), PS_PAGE);
	size_t total = data_off + round_up(data, PS_PAGE);

	ps_server *s = calloc(1, sizeof(*s));
	if (!s)
		return PS_ENOMEM;
	char obj[PS_NAME_MAX + 16];
	ps__seg_obj_name(obj, sizeof(obj), name);
	int fd = shm_open(obj, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	struct ps_shm_info info;
	if (fd < 0 && errno == EEXIST && attr && (attr->flags & PS_SHM_REPLACE_DEAD) &&
	    ps_shm_info(name, &info) == 0 && info.state != PS_SHM_LIVE) {
		shm_unlink(obj);
		fd = shm_open(obj, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		rc = ps__neg_errno(errno);
		free(s);
		return rc;
	}
	/* The umask may only take bits away; make the mode exactly 0600. */
	if (fchmod(fd, 0600) || ftruncate(fd, (off_t)total)) {
		rc = ps__neg_errno(errno);
		goto fail;
	}
	/* The file stays sparse, but what will be touched is reserved now: a
	 * page of a full /dev/shm touched later is a SIGBUS in the writer. */
	if ((rc = reserve(fd, 0, data_off)))
		goto fail;
	void *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		rc = ps__neg_errno(errno);
		goto fail;
	}
	s->seg.fd = fd;
	s->shm = s->writable = s->creator = s->can_register = true;
	s->seg.base = base;
	s->seg.size = total;
	s->seg.hdr = base;
	snprintf(s->name, sizeof(s->name), "%s", name);

	struct ps_seg_hdr *h = s->seg.hdr;
	h->version = PS_SEG_VERSION;
	h->byte_order = 0x01020304;
	h->total_size = total;
	h->wait_off = wait_off;
	h->dir_off = dir_off;
	h->data_off = data_off;
	h->data_size = total - data_off;
	h->max_elems = max;
	h->creator_pid = (int32_t)getpid();
	h->creator_start = ps_proc_start(0);
	h->keep = attr && attr->keep <= PS_KEEP_NEVER ? (uint32_t)attr->keep : PS_KEEP_FAILED;
	atomic_store(&h->state, PS_SHM_LIVE);
	snprintf(h->name, sizeof(h->name), "%s", name);
	if ((rc = ps__mutex_init(&h->lock, true))) {
		munmap(base, total);
		goto fail;
	}
	keep_layout(s, h);
	__atomic_store_n(&h->magic, PS_SEG_MAGIC, __ATOMIC_RELEASE);
	*out = s;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	shm_unlink(obj);
	free(s);
	return rc;
}

int ps_server_create_private(const char *prefix, const struct ps_shm_attr *attr, ps_server **out, char *name,
			     char *why, size_t whylen)
{
	if (!prefix || strlen(prefix) > PS_NAME_MAX - 13 || !out || !name)
		return PS_EINVAL;
	snprintf(why, whylen, "%s", "");
	int rc = PS_EEXIST;
	for (int tries = 0; tries < 8 && rc == PS_EEXIST; tries++) {
		uint64_t r = 0;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return ps__neg_errno(errno);
		snprintf(name, PS_NAME_MAX + 1, "%s-%012llx", prefix, (unsigned long long)(r & 0xffffffffffffull));
		if ((rc = ps_server_create_shm(name, attr, out)) != PS_EEXIST)
			break;
		uid_t uid; /* said, whoever it is: a name of 48 random bits taken is no accident */
		if (!ps_shm_owner(name, &uid))
			snprintf(why, whylen, "%s was taken, by uid %u%s; ", name, (unsigned)uid,
				 uid == geteuid() ? " (yours)" : " (another user)");
	}
	if (rc && why && whylen) {
		size_t n = strlen(why);
		snprintf(why + n, whylen - n, "a segment %s-...: %s", prefix, ps_strerror(rc));
	}
	return rc;
}

/* The parts of a segment must lie in order inside it, where they fit. */
int ps_server_open_shm(const char *name, unsigned flags, ps_server **out)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!out || (flags & ~(unsigned)(PS_RDWR | PS_NOWAIT)))
		return PS_EINVAL;
	bool want_write = flags & PS_RDWR, fd_writable;
	int fd = ps__seg_open_fd(name, want_write, &fd_writable);
	if (fd < 0)
		return fd;
	/* Owner-only: a segment someone else made, or opened up to others,
	 * could be read or fed to us by them. */
	struct stat st;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return PS_EACCES;
	}
	struct ps_seg_hdr hc;
	if ((rc = ps__seg_read_header(fd, &hc, !(flags & PS_NOWAIT)))) {
		close(fd);
		return rc;
	}
	int prot = want_write ? PROT_READ | PROT_WRITE : PROT_READ;
	unsigned char *base = mmap(NULL, hc.total_size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED || !want_write) {
		rc = base == MAP_FAILED ? ps__neg_errno(errno) : 0;
		close(fd);
		fd = -1;
		if (rc)
			return rc;
	}
	bool can_register = want_write;
	if (!want_write && fd_writable)
		can_register = !mprotect(base + hc.wait_off, hc.dir_off - hc.wait_off,
					 PROT_READ | PROT_WRITE);
	ps_server *s = calloc(1, sizeof(*s));
	if (!s) {
		munmap(base, hc.total_size);
		if (fd >= 0)
			close(fd);
		return PS_ENOMEM;
	}
	s->seg.fd = fd;
	s->shm = true;
	s->writable = want_write;
	s->can_register = can_register;
	s->seg.base = base;
	s->seg.size = hc.total_size;
	s->seg.hdr = (struct ps_seg_hdr *)base;
	keep_layout(s, &hc);
	snprintf(s->name, sizeof(s->name), "%s", name);
	*out = s;
	return 0;
}

static struct ps_dirent *dirent_at(ps_server *s, uint32_t i)
{
	return (struct ps_dirent *)(s->seg.base + s->seg.dir_off) + i;
}

static struct ps_waitc *waitc_at(ps_server *s, uint32_t i)
{
	return (struct ps_waitc *)(s->seg.base + s->seg.wait_off) + i;
}

/* Published entries, never more than the directory holds. */
static uint32_t shm_count(ps_server *s)
{
	uint32_t n = atomic_load_explicit(&s->seg.hdr->nelems, memory_order_acquire);
	return n < s->seg.max_elems ? n : s->seg.max_elems;
}

static int shm_find(ps_server *s, const char *name)
{
	uint32_t n = shm_count(s);
	for (uint32_t i = 0; i < n; i++)
		if (!strncmp(dirent_at(s, i)->name, name, PS_NAME_MAX + 1))
			return (int)i;
	return PS_ENOENT;
}

/* A handle on entry i, after checking everything a reader relies on: the
 * segment may have been written by a crashing or hostile process. */
static int shm_handle(ps_server *s, uint32_t i, ps_elem **out)
{
	struct ps_dirent d;
	memcpy(&d, dirent_at(s, i), sizeof(d));
	d.name[PS_NAME_MAX] = 0;
	if (d.off % PS_CACHELINE || d.off > s->seg.data_size || s->seg.data_size - d.off < PS_SLOTS_OFF)
		return PS_EBADSEG;
	struct ps_ehdr *h = (struct ps_ehdr *)(s->seg.base + s->seg.data_off + d.off);
	struct ps_elem_attr a = { .tuple_size = h->tuple_size, .threshold = h->threshold,
				  .mode = (enum ps_mode)h->mode, .flags = h->flags };
	uint32_t nslots = h->nslots, stride = h->stride;
	if (h->magic != PS_EHDR_MAGIC || ps__check_attr(&a) || a.tuple_size != d.tuple_size ||
	    a.threshold != d.threshold || a.mode != (enum ps_mode)d.mode || a.flags != d.flags ||
	    nslots != ps__slots_for(a.threshold) || stride != ps__stride_for((uint32_t)a.tuple_size) ||
	    ps__elem_bytes((uint32_t)a.tuple_size, a.threshold) > s->seg.data_size - d.off)
		return PS_EBADSEG;
	return ps__elem_handle(s, h, waitc_at(s, i), d.name, &a, s->writable, s->can_register,
			       true, out);
}

static int shm_create(ps_server *s, const char *name, const struct ps_elem_attr *a,
		      ps_elem **out)
{
	struct ps_seg_hdr *hdr = s->seg.hdr;
	struct ps_deadline d;
	ps__deadline(&d, PS_FOREVER);
	int rc = ps__lock(&hdr->lock, &d);
	if (rc)
		return rc;
	uint32_t n = atomic_load_explicit(&hdr->nelems, memory_order_relaxed);
	size_t bytes = round_up(ps__elem_bytes((uint32_t)a->tuple_size, a->threshold),
				PS_CACHELINE);
	if (shm_find(s, name) >= 0) {
		rc = PS_EEXIST;
	} else if (n >= s->seg.max_elems || hdr->data_used > s->seg.data_size ||
		   bytes > s->seg.data_size - hdr->data_used) {
		rc = PS_ENOSPC;
	} else if (!(rc = reserve(s->seg.fd, s->seg.data_off + hdr->data_used, bytes))) {
		struct ps_ehdr *h = (struct ps_ehdr *)(s->seg.base + s->seg.data_off + hdr->data_used);
		rc = ps__elem_init(h, a, n, true);
		/* The handle first: once published, the element must work. */
		if (!rc && (rc = ps__elem_handle(s, h, waitc_at(s, n), name, a, true,
						 s->can_register, true, out))) {
			pthread_mutex_destroy(&h->wlock);
			pthread_mutex_destroy(&h->tlock);
		}
		if (!rc) {
			struct ps_dirent *de = dirent_at(s, n);
			snprintf(de->name, sizeof(de->name), "%s", name);
			de->off = hdr->data_used;
			de->tuple_size = (uint32_t)a->tuple_size;
			de->threshold = a->threshold;
			de->mode = a->mode;
			de->flags = a->flags;
			hdr->data_used += bytes;
			atomic_store_explicit(&hdr->nelems, n + 1, memory_order_release);
		}
	}
	pthread_mutex_unlock(&hdr->lock);
	return rc;
}

/* --- common -------------------------------------------------------------- */

int ps_elem_create(ps_server *srv, const char *name,
		   const struct ps_elem_attr *attr, ps_elem **out)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!srv || !out)
		return PS_EINVAL;
	if ((rc = ps__check_attr(attr)))
		return rc;
	if (!srv->writable || srv->ops)
		return PS_EROFS; /* an element is made by the host it lives on */
	return srv->shm ? shm_create(srv, name, attr, out) : local_create(srv, name, attr, out);
}

int ps_elem_open(ps_server *srv, const char *name, size_t tuple_size, ps_elem **out)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!srv || !out)
		return PS_EINVAL;
	if (srv->ops)
		return srv->ops->elem_open(srv, name, tuple_size, out);
	if (!srv->shm)
		return local_open(srv, name, tuple_size, out);
	int i = shm_find(srv, name);
	if (i < 0)
		return i;
	if (tuple_size && tuple_size != dirent_at(srv, (uint32_t)i)->tuple_size)
		return PS_ESIZE;
	return shm_handle(srv, (uint32_t)i, out);
}

int ps_server_count(ps_server *srv)
{
	if (!srv)
		return PS_EINVAL;
	if (srv->ops)
		return srv->ops->count(srv);
	if (srv->shm)
		return (int)shm_count(srv);
	pthread_mutex_lock(&srv->mem.lock);
	int n = srv->mem.n;
	pthread_mutex_unlock(&srv->mem.lock);
	return n;
}

int ps_server_elem_name(ps_server *srv, int i, char *buf)
{
	if (srv && srv->ops)
		return buf ? srv->ops->elem_name(srv, i, buf) : PS_EINVAL;
	int n = ps_server_count(srv);
	if (n < 0)
		return n;
	if (i < 0 || i >= n || !buf)
		return PS_EINVAL;
	if (srv->shm) {
		snprintf(buf, PS_NAME_MAX + 1, "%.*s", PS_NAME_MAX, dirent_at(srv, (uint32_t)i)->name);
	} else {
		pthread_mutex_lock(&srv->mem.lock);
		snprintf(buf, PS_NAME_MAX + 1, "%s", srv->mem.ents[i].name);
		pthread_mutex_unlock(&srv->mem.lock);
	}
	return 0;
}

int ps_server_user_area(ps_server *srv, void **area)
{
	if (!srv || !area)
		return PS_EINVAL;
	*area = srv->ops ? srv->ops->user_area(srv) : srv->shm ? srv->seg.hdr->user : srv->mem.user;
	return 0;
}

void ps_server_destroy(ps_server *srv)
{
	if (!srv)
		return;
	if (srv->ops) {
		srv->ops->close(srv);
	} else if (srv->shm) {
		if (srv->creator)
			atomic_store(&srv->seg.hdr->state, PS_SHM_CLOSED);
		munmap(srv->seg.base, srv->seg.size);
		if (srv->seg.fd >= 0)
			close(srv->seg.fd);
	} else {
		for (int i = 0; i < srv->mem.n; i++) {
			pthread_mutex_destroy(&srv->mem.ents[i].h->wlock);
			pthread_mutex_destroy(&srv->mem.ents[i].h->tlock);
			free(srv->mem.ents[i].h);
			free(srv->mem.ents[i].wc);
		}
		free(srv->mem.ents);
		pthread_mutex_destroy(&srv->mem.lock);
	}
	free(srv);
}

int ps__server_new(const struct ps_server_ops *ops, void *impl, const char *name, bool writable,
		   ps_server **out)
{
	ps_server *s = calloc(1, sizeof(*s));
	if (!s)
		return PS_ENOMEM;
	s->ops = ops;
	s->impl = impl;
	s->writable = writable;
	snprintf(s->name, sizeof(s->name), "%s", name);
	*out = s;
	return 0;
}

void *ps__server_impl(const ps_server *s)
{
	return s->impl;
}

bool ps__server_writable(const ps_server *s)
{
	return s->writable;
}

/* The file behind segment `name`, as lstat sees it: a link is not followed. */
int ps__server_state(ps_server *s)
{
	return s->ops ? s->ops->state(s) : PS_EINVAL;
}

int64_t ps_server_clock_offset(const ps_server *srv)
{
	return srv && srv->ops ? srv->ops->clock_offset(srv) : 0;
}
