/* symbols.c - a return address in a module as function, file and line, through elfutils' libdw (DWARF). */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive/symbols.h"

/*
 * One Dwfl session per module file, that file reported at address 0, so
 * that a module is read once however many processes loaded it and
 * wherever each put it: a process's address minus the module's load
 * address (collectors.h: es_module_rec) is then an address of the
 * session.  The frame's line is that of the call, the byte before the
 * return address.  A file that is gone, or has no DWARF, still gives its
 * ELF symbol if it has one; what cannot be told stays NULL.
 */

struct module {
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: the file could not be read */
};

struct ar_symbols {
	struct module *mods;
	int n, cap;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

int ar_symbols_create(ar_symbols **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ar_symbols_destroy(ar_symbols *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
		free(s->mods[i].path);
	}
	free(s->mods);
	free(s);
}

static struct module *module_of(ar_symbols *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->mods[i].path, path))
			return &s->mods[i];
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 8;
		struct module *m = realloc(s->mods, sizeof(*m) * (size_t)cap);
		if (!m)
			return NULL;
		s->mods = m;
		s->cap = cap;
	}
	struct module *m = &s->mods[s->n];
	memset(m, 0, sizeof(*m));
	if (!(m->path = strdup(path)))
		return NULL;
	s->n++;
	m->dwfl = dwfl_begin(&callbacks);
	if (m->dwfl) {
		m->mod = dwfl_report_elf(m->dwfl, path, path, -1, 0, false);
		dwfl_report_end(m->dwfl, NULL, NULL);
	}
	return m;
}

int ar_symbols_lookup(ar_symbols *s, const char *path, uint64_t offset, struct ar_symbol *out)
{
	memset(out, 0, sizeof(*out));
	struct module *m = module_of(s, path);
	if (!m)
		return -ENOMEM;
	if (!m->mod || offset == 0)
		return -ENOENT;
	Dwarf_Addr a = offset - 1; /* inside the call instruction */
	out->function = dwfl_module_addrname(m->mod, a);
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, a);
	int line = 0;
	if (l) {
		const char *file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		out->file = file;
		out->line = line;
	}
	return out->function || out->file ? 0 : -ENOENT;
}
