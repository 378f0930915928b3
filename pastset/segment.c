/* segment.c - a shared-memory segment as a file of this host: its header read and checked, its owner, its keep policy, its state, the list of them, unlinked or released. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "segment.h"

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

int ps__neg_errno(int e)
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

void ps__seg_obj_name(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/" PS_SHM_PREFIX "%s", name);
}

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
int ps__seg_read_header(int fd, struct ps_seg_hdr *copy, bool may_wait)
{
	for (int tries = 0; tries < 200; tries++) {
		struct stat st;
		if (fstat(fd, &st))
			return ps__neg_errno(errno);
		if ((size_t)st.st_size >= PS_PAGE) {
			void *p = mmap(NULL, PS_PAGE, PROT_READ, MAP_SHARED, fd, 0);
			if (p == MAP_FAILED)
				return ps__neg_errno(errno);
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

int ps__seg_open_fd(const char *name, bool want_write, bool *fd_writable)
{
	char obj[PS_NAME_MAX + 16];
	ps__seg_obj_name(obj, sizeof(obj), name);
	/* Even an observer opens read-write when it may: it needs to register
	 * as a waiter.  Tuples stay mapped read-only for it regardless. */
	int fd = shm_open(obj, O_RDWR | O_CLOEXEC, 0);
	*fd_writable = fd >= 0;
	if (fd < 0 && errno == EACCES && !want_write)
		fd = shm_open(obj, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return ps__neg_errno(errno);
	return fd;
}

static int shm_stat(const char *name, struct stat *st)
{
	char obj[PS_NAME_MAX + 16], path[PS_NAME_MAX + 32];
	ps__seg_obj_name(obj, sizeof(obj), name);
	snprintf(path, sizeof(path), "/dev/shm%s", obj);
	return lstat(path, st) ? ps__neg_errno(errno) : 0;
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
	ps__seg_obj_name(obj, sizeof(obj), name);
	return shm_unlink(obj) ? ps__neg_errno(errno) : 0;
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
	int fd = ps__seg_open_fd(name, true, &w);
	if (fd < 0)
		return fd;
	struct ps_seg_hdr hc;
	if ((rc = ps__seg_read_header(fd, &hc, true))) {
		close(fd);
		return rc;
	}
	void *p = mmap(NULL, PS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return ps__neg_errno(errno);
	__atomic_store_n(&((struct ps_seg_hdr *)p)->keep, (uint32_t)keep, __ATOMIC_RELAXED);
	munmap(p, PS_PAGE);
	return 0;
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
	int fd = ps__seg_open_fd(name, false, &w);
	if (fd < 0)
		return fd;
	struct ps_seg_hdr hc;
	struct stat st;
	rc = ps__seg_read_header(fd, &hc, may_wait);
	if (!rc && fstat(fd, &st))
		rc = ps__neg_errno(errno);
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
		return ps__neg_errno(errno);
	int rc = 0;
	const size_t plen = strlen(PS_SHM_PREFIX);
	for (struct dirent *de; !rc && (de = readdir(d));)
		if (!strncmp(de->d_name, PS_SHM_PREFIX, plen) &&
		    !ps__check_name(de->d_name + plen))
			rc = fn(de->d_name + plen, arg);
	closedir(d);
	return rc;
}
