/* server.c - tuple servers: in-process memory and named shared-memory segments. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int neg_errno(int e)
{
	switch (e) {
	case EEXIST: return PS_EEXIST;
	case ENOENT: return PS_ENOENT;
	case EACCES: case EPERM: return PS_EACCES;
	case ENOMEM: return PS_ENOMEM;
	case ENOSPC: case EFBIG: return PS_ENOSPC;
	case ENAMETOOLONG: return PS_EBADNAME;
	default: return -e;
	}
}

/* Gives the pages of [off, off + len) their memory now, or PS_ENOSPC. */
static int reserve(int fd, size_t off, size_t len)
{
	int e = posix_fallocate(fd, (off_t)off, (off_t)len);
	return e ? neg_errno(e) : 0;
}

static void obj_name(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/" PS_SHM_PREFIX "%s", name);
}

uint64_t ps_proc_start(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)(pid ? pid : getpid()));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	unsigned long long v = 0;
	int field = 2;
	char *save;
	for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (++field == 3 && (*tok == 'Z' || *tok == 'X')) {
			return 0; /* a zombie has died, though its parent has not reaped it yet */
		} else if (field == 22) {
			v = strtoull(tok, NULL, 10);
			break;
		}
	return v;
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
	obj_name(obj, sizeof(obj), name);
	int fd = shm_open(obj, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	struct ps_shm_info info;
	if (fd < 0 && errno == EEXIST && attr && (attr->flags & PS_SHM_REPLACE_DEAD) &&
	    ps_shm_info(name, &info) == 0 && info.state != PS_SHM_LIVE) {
		shm_unlink(obj);
		fd = shm_open(obj, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		rc = neg_errno(errno);
		free(s);
		return rc;
	}
	/* The umask may only take bits away; make the mode exactly 0600. */
	if (fchmod(fd, 0600) || ftruncate(fd, (off_t)total)) {
		rc = neg_errno(errno);
		goto fail;
	}
	/* The file stays sparse, but what will be touched is reserved now: a
	 * page of a full /dev/shm touched later is a SIGBUS in the writer. */
	if ((rc = reserve(fd, 0, data_off)))
		goto fail;
	void *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		rc = neg_errno(errno);
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

/* The parts of a segment must lie in order inside it, where they fit. */
static bool layout_ok(const struct ps_seg_hdr *h)
{
	return h->wait_off == PS_PAGE && h->wait_off <= h->dir_off && h->dir_off <= h->data_off &&
	       h->data_off <= h->total_size && !(h->dir_off % PS_PAGE) && !(h->data_off % PS_PAGE) &&
	       h->data_off + h->data_size == h->total_size && h->max_elems >= 1 &&
	       h->max_elems <= PS_MAX_ELEMS &&
	       (uint64_t)h->max_elems * sizeof(struct ps_waitc) <= h->dir_off - h->wait_off &&
	       (uint64_t)h->max_elems * sizeof(struct ps_dirent) <= h->data_off - h->dir_off;
}

/* A segment file whose header is not there yet was made under a second
 * ago (its creator is mid-setup) or never will be (the creator died, or a
 * stranger made an empty file): only the first is worth waiting for. */
static bool young(const struct stat *st)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec - st->st_ctim.tv_sec <= 1;
}

/* Maps the header page; waits briefly, if allowed, for a creator that is
 * mid-setup (see young()), never for a file that will not change. */
static int read_header(int fd, struct ps_seg_hdr *copy, bool may_wait)
{
	for (int tries = 0; tries < 200; tries++) {
		struct stat st;
		if (fstat(fd, &st))
			return neg_errno(errno);
		if ((size_t)st.st_size >= PS_PAGE) {
			void *p = mmap(NULL, PS_PAGE, PROT_READ, MAP_SHARED, fd, 0);
			if (p == MAP_FAILED)
				return neg_errno(errno);
			struct ps_seg_hdr *h = p;
			uint64_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
			if (magic == PS_SEG_MAGIC) {
				memcpy(copy, h, sizeof(*h)); /* the lock's bytes as data: never used */
				munmap(p, PS_PAGE);
				if (copy->version != PS_SEG_VERSION ||
				    copy->byte_order != 0x01020304 ||
				    copy->total_size != (uint64_t)st.st_size)
					return PS_EBADSEG;
				return layout_ok(copy) ? 0 : PS_EBADSEG;
			}
			munmap(p, PS_PAGE);
			if (magic != 0)
				return PS_EBADSEG;
		}
		if (!may_wait || !young(&st))
			return PS_EPARTIAL;
		usleep(1000);
	}
	return PS_EPARTIAL;
}

static int open_fd(const char *name, bool want_write, bool *fd_writable)
{
	char obj[PS_NAME_MAX + 16];
	obj_name(obj, sizeof(obj), name);
	/* Even an observer opens read-write when it may: it needs to register
	 * as a waiter.  Tuples stay mapped read-only for it regardless. */
	int fd = shm_open(obj, O_RDWR | O_CLOEXEC, 0);
	*fd_writable = fd >= 0;
	if (fd < 0 && errno == EACCES && !want_write)
		fd = shm_open(obj, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return neg_errno(errno);
	return fd;
}

int ps_server_open_shm(const char *name, unsigned flags, ps_server **out)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!out || (flags & ~(unsigned)(PS_RDWR | PS_NOWAIT)))
		return PS_EINVAL;
	bool want_write = flags & PS_RDWR, fd_writable;
	int fd = open_fd(name, want_write, &fd_writable);
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
	if ((rc = read_header(fd, &hc, !(flags & PS_NOWAIT)))) {
		close(fd);
		return rc;
	}
	int prot = want_write ? PROT_READ | PROT_WRITE : PROT_READ;
	unsigned char *base = mmap(NULL, hc.total_size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED || !want_write) {
		rc = base == MAP_FAILED ? neg_errno(errno) : 0;
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
static int shm_stat(const char *name, struct stat *st)
{
	char obj[PS_NAME_MAX + 16], path[PS_NAME_MAX + 32];
	obj_name(obj, sizeof(obj), name);
	snprintf(path, sizeof(path), "/dev/shm%s", obj);
	return lstat(path, st) ? neg_errno(errno) : 0;
}

int ps__shm_id(const char *name, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	int rc = shm_stat(name, &st);
	if (rc)
		return rc;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int ps_shm_owner(const char *name, uid_t *uid)
{
	int rc = ps__check_name(name);
	struct stat st;
	if (rc || !uid)
		return rc ? rc : PS_EINVAL;
	if ((rc = shm_stat(name, &st)))
		return rc;
	*uid = st.st_uid;
	return 0;
}

int ps_shm_unlink(const char *name)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	char obj[PS_NAME_MAX + 16];
	obj_name(obj, sizeof(obj), name);
	return shm_unlink(obj) ? neg_errno(errno) : 0;
}

static const char *const keep_names[] = { "failed", "always", "never" };

const char *ps_keep_name(enum ps_keep k)
{
	return (unsigned)k <= PS_KEEP_NEVER ? keep_names[k] : "?";
}

int ps_keep_parse(const char *s, enum ps_keep *out)
{
	for (unsigned k = 0; s && k <= PS_KEEP_NEVER; k++)
		if (!strcmp(s, keep_names[k])) {
			*out = (enum ps_keep)k;
			return 0;
		}
	return PS_EINVAL;
}

int ps_shm_set_keep(const char *name, enum ps_keep keep)
{
	int rc = ps__check_name(name);
	if (rc || (unsigned)keep > PS_KEEP_NEVER)
		return rc ? rc : PS_EINVAL;
	bool w;
	int fd = open_fd(name, true, &w);
	if (fd < 0)
		return fd;
	struct ps_seg_hdr hc;
	if ((rc = read_header(fd, &hc, true))) {
		close(fd);
		return rc;
	}
	void *p = mmap(NULL, PS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return neg_errno(errno);
	__atomic_store_n(&((struct ps_seg_hdr *)p)->keep, (uint32_t)keep, __ATOMIC_RELAXED);
	munmap(p, PS_PAGE);
	return 0;
}

int ps_shm_release(const char *const *names, int n)
{
	struct ps_shm_info in;
	int there = 0;
	/* the last of the group to end removes it: each one closed its own
	 * first, so at least the last to look sees every one closed */
	for (int i = 0; i < n; i++) {
		int rc = ps_shm_info(names[i], &in);
		if (rc == PS_ENOENT)
			continue; /* on another host, or removed already */
		if (rc || in.state != PS_SHM_CLOSED)
			return 0;
		there++;
	}
	int removed = 0;
	for (int i = 0; i < n; i++)
		if (!ps_shm_info(names[i], &in) && in.state == PS_SHM_CLOSED && in.keep != PS_KEEP_ALWAYS &&
		    !ps_shm_unlink(names[i]))
			removed++;
	return there ? removed : 0;
}

int ps_shm_info(const char *name, struct ps_shm_info *info)
{
	return ps__shm_info(name, info, true);
}

int ps__shm_info(const char *name, struct ps_shm_info *info, bool may_wait)
{
	int rc = ps__check_name(name);
	if (rc)
		return rc;
	if (!info)
		return PS_EINVAL;
	bool w;
	int fd = open_fd(name, false, &w);
	if (fd < 0)
		return fd;
	struct ps_seg_hdr hc;
	struct stat st;
	rc = read_header(fd, &hc, may_wait);
	if (!rc && fstat(fd, &st))
		rc = neg_errno(errno);
	close(fd);
	if (rc)
		return rc;
	memset(info, 0, sizeof(*info));
	info->used = (uint64_t)st.st_blocks * 512; /* the pages written, or reserved at creation */
	info->keep = hc.keep <= PS_KEEP_NEVER ? (enum ps_keep)hc.keep : PS_KEEP_FAILED;
	snprintf(info->name, sizeof(info->name), "%s", name);
	info->size = hc.total_size;
	info->elems = atomic_load(&hc.nelems);
	if (info->elems > hc.max_elems)
		info->elems = hc.max_elems;
	info->creator_pid = hc.creator_pid;
	info->creator_start = hc.creator_start;
	uint32_t state = atomic_load(&hc.state);
	if (state == PS_SHM_CLOSED)
		info->state = PS_SHM_CLOSED;
	else if (kill(hc.creator_pid, 0) == 0 || errno == EPERM)
		info->state = ps_proc_start(hc.creator_pid) == hc.creator_start ?
			      PS_SHM_LIVE : PS_SHM_STALE;
	else
		info->state = PS_SHM_STALE;
	return 0;
}

int ps_shm_list(int (*fn)(const char *name, void *arg), void *arg)
{
	if (!fn)
		return PS_EINVAL;
	DIR *d = opendir("/dev/shm");
	if (!d)
		return neg_errno(errno);
	int rc = 0;
	const size_t plen = strlen(PS_SHM_PREFIX);
	for (struct dirent *de; !rc && (de = readdir(d));)
		if (!strncmp(de->d_name, PS_SHM_PREFIX, plen) &&
		    !ps__check_name(de->d_name + plen))
			rc = fn(de->d_name + plen, arg);
	closedir(d);
	return rc;
}

int ps__server_state(ps_server *s)
{
	return s->ops ? s->ops->state(s) : PS_EINVAL;
}

int64_t ps_server_clock_offset(const ps_server *srv)
{
	return srv && srv->ops ? srv->ops->clock_offset(srv) : 0;
}
