/* sites.c - where the program called MPI: each thread's call sites, numbered once, and the modules they lie in. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/mpi/record.h"

/*
 * record.h gives the invariants.  The common path (record.h: es_site) is
 * one multiply and one load in the thread's table; this file is the rest,
 * taken once per site and thread, or on every call when a call path is
 * asked for (ES_CALLPATH=N frames; 0 keeps no site): glibc's backtrace() then walks the
 * stack through the unwind tables, which costs what tests/bench/mpi_cost
 * shows, and which is why one frame is the default.
 *
 * A Fortran program that uses the mpi_f08 module calls Open MPI's
 * binding (libmpi_usempif08), which calls our ompi_NAME_f: the return
 * address is then inside that library, the same for every caller, so such
 * an address is marked ES_SITE_UNWIND and its caller found by unwinding,
 * past the MPI libraries' frames, on every call.
 */

/* --- modules ---------------------------------------------------------------------- */

struct find {
	uintptr_t pc;
	uintptr_t base, end;
	char path[sizeof(((struct es_module_rec *)0)->path)];
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int in = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + p->p_vaddr, b = a + p->p_memsz;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		in |= f->pc >= a && f->pc < b;
	}
	if (!in)
		return 0;
	f->base = info->dlpi_addr;
	f->end = hi;
	if (info->dlpi_name && *info->dlpi_name) {
		snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	} else { /* the program itself */
		ssize_t n = readlink("/proc/self/exe", f->path, sizeof(f->path) - 1);
		f->path[n > 0 ? n : 0] = 0;
	}
	return 1;
}

/* Whether pc lies in a module already listed; if not, lists it. */
static void note_module(uintptr_t pc)
{
	struct es_module_rec *m = es_g.modules;
	if (!m)
		return;
	pthread_mutex_lock(&es_g.lock);
	for (int i = 0; i < es_g.nmodules; i++)
		if (pc >= m[i].base && pc < m[i].end) {
			pthread_mutex_unlock(&es_g.lock);
			return;
		}
	struct find f = { .pc = pc };
	if (es_g.nmodules < (int)ES_MODULES_SLOTS && dl_iterate_phdr(find_module, &f)) {
		struct es_module_rec *r = &m[es_g.nmodules++];
		r->base = f.base;
		memcpy(r->path, f.path, sizeof(r->path));
		__atomic_store_n(&r->end, (uint64_t)f.end, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&es_g.lock);
}

/* Whether pc is in an MPI library's own code (its Fortran bindings) or ours. */
static bool in_mpi(uintptr_t pc)
{
	Dl_info d;
	if (!dladdr((void *)pc, &d) || !d.dli_fname)
		return false;
	const char *base = strrchr(d.dli_fname, '/');
	base = base ? base + 1 : d.dli_fname;
	return !strncmp(base, "libmpi", 6) || !strncmp(base, "libescollect", 12);
}

/* --- the thread's table ----------------------------------------------------------- */

/* The slot of key in the table: where it is, or the free one where it goes. */
static uint32_t slot_of(const struct es_sites *s, uintptr_t key)
{
	uint32_t h = es_site_hash(key);
	while (s->key[h] && s->key[h] != key)
		h = (uint32_t)base_probe(h, ES_SITES_HASH);
	return h;
}

/* A new number for frames (listing their modules first), or 0 when the board is full. */
static uint16_t give(struct es_sites *s, const uintptr_t *pc, int n)
{
	if (s->next >= ES_SITES_SLOTS)
		return 0;
	for (int i = 0; i < n; i++)
		note_module(pc[i]);
	uint16_t id = (uint16_t)s->next++;
	struct es_site_rec *r = &s->board[id];
	for (int i = 0; i < n; i++)
		r->pc[i] = pc[i];
	__atomic_store_n(&r->frames, (uint32_t)n, __ATOMIC_RELEASE);
	return id;
}

static uint16_t lookup(struct es_sites *s, uintptr_t key, const uintptr_t *pc, int n)
{
	uint32_t h = slot_of(s, key);
	if (s->key[h])
		return s->id[h];
	uint16_t id = give(s, pc, n);
	if (id) { /* a full board gives 0 each time: the table never fills */
		s->key[h] = key;
		s->id[h] = id;
	}
	return id;
}

/* The frames below ours, from the first one that is the program's (past
 * the MPI libraries' when ra is inside them), up to depth. */
static int unwind(const void *ra, uintptr_t *pc, int depth)
{
	void *buf[64];
	int n = backtrace(buf, 64), i = 0;
	while (i < n && buf[i] != ra)
		i++;
	if (i == n) /* not found: start past our own frames */
		for (i = 0; i < n && in_mpi((uintptr_t)buf[i]); i++)
			;
	while (i < n && in_mpi((uintptr_t)buf[i]))
		i++;
	int k = 0;
	for (; i < n && k < depth; i++)
		pc[k++] = (uintptr_t)buf[i];
	return k;
}

static uintptr_t path_key(const uintptr_t *pc, int n)
{
	uint64_t h = BASE_HASH_SEED;
	for (int i = 0; i < n; i++)
		h = base_hash_fold(h, pc[i]);
	return (uintptr_t)(h | 1); /* never 0, and apart from any single address's own key */
}

/* The thread's table, at its first site, over the board core.c made it
 * (NULL: none, or no memory: its sites are not kept). */
static struct es_sites *sites_of_thread(void)
{
	if (es_t.sites || !es_t.site_board)
		return es_t.sites;
	struct es_sites *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->board = es_t.site_board;
	s->next = 1;
	es_t.sites = s;
	return s;
}

uint16_t es__site(const void *ra)
{
	struct es_sites *s = sites_of_thread();
	if (!s || !s->board || !ra)
		return 0;
	uintptr_t pc[ES_SITE_FRAMES], a = (uintptr_t)ra;
	int depth = es_route.depth > 1 ? es_route.depth : 1;
	uint32_t h = slot_of(s, a);
	if (depth == 1 && s->key[h] && s->id[h] != ES_SITE_UNWIND)
		return s->id[h];
	if (depth == 1 && !s->key[h]) {
		if (!in_mpi(a)) {
			pc[0] = a;
			return lookup(s, a, pc, 1);
		}
		s->key[h] = a; /* a binding's: unwind from now on */
		s->id[h] = ES_SITE_UNWIND;
	}
	int n = unwind(ra, pc, depth);
	if (n == 0)
		return 0;
	return lookup(s, n == 1 ? pc[0] : path_key(pc, n), pc, n);
}

/* --- the rank's modules ----------------------------------------------------------- */

void es_sites_setup(ps_server *srv)
{
	const char *env = getenv("ES_CALLPATH");
	int depth = env && *env ? atoi(env) : 1;
	es_route.depth = (unsigned char)(depth < 0 ? 1 : depth > ES_SITE_FRAMES ? ES_SITE_FRAMES : depth);
	es_g.modules = es_rank_board(srv, ES_MODULES_ELEMENT, sizeof(struct es_module_rec), ES_MODULES_SLOTS,
				     ES_MODULES_LAYOUT, &es_g.modules_elem);
}

void es_sites_finalize(void)
{
	/* under es_g.lock, with every element closing: no site is looked up after */
	if (es_t.sites)
		es_t.sites->board = NULL;
	es_t.site_board = NULL;
	es_g.modules = NULL;
	es_g.nmodules = 0;
	ps_elem_close(es_g.modules_elem);
	es_g.modules_elem = NULL;
}
