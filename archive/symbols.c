/* symbols.c - a return address in a module as function, file and line, through elfutils' libdw (DWARF). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"

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
	char **names; /* the names made here (demangled), freed with s */
	int nnames, capnames;
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
	for (int i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
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

/*
 * Names as their programmers wrote them.  C++'s are demangled by the C++
 * runtime's own demangler (libstdc++'s __cxa_demangle, the one every C++
 * program on the machine carries, looked up at run time: no C++ toolchain
 * needed to build this, and no second demangler to keep up with the ABI).
 * Fortran's are read from DWARF, where the compiler kept the source's
 * name and its module: gfortran's __heat_MOD_step_ is heat::step.
 */
typedef char *demangler(const char *mangled, char *buf, size_t *len, int *status);

static demangler *cxx;
static pthread_once_t cxx_once = PTHREAD_ONCE_INIT;

static void find_cxx(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&cxx = dlsym(h, "__cxa_demangle"); /* h stays open: cxx lives in it */
}

/* looked for once per process, whichever thread reads symbols first */
static demangler *cxx_demangler(void)
{
	pthread_once(&cxx_once, find_cxx);
	return cxx;
}

/* name, kept by s (and freed with it); NULL if it could not be */
static const char *keep(ar_symbols *s, char *name)
{
	if (!name)
		return NULL;
	if (s->nnames == s->capnames) {
		int cap = s->capnames ? s->capnames * 2 : 16;
		char **n = realloc(s->names, sizeof(*n) * (size_t)cap);
		if (!n) {
			free(name);
			return NULL;
		}
		s->names = n;
		s->capnames = cap;
	}
	return s->names[s->nnames++] = name;
}

static bool fortran(int lang)
{
	return lang == DW_LANG_Fortran77 || lang == DW_LANG_Fortran90 || lang == DW_LANG_Fortran95 ||
	       lang == DW_LANG_Fortran03 || lang == DW_LANG_Fortran08;
}

static char *demangled(const char *sym)
{
	if (!sym || sym[0] != '_' || sym[1] != 'Z' || !cxx_demangler())
		return NULL;
	int st = -1;
	char *name = cxx_demangler()(sym, NULL, NULL, &st);
	if (st != 0) {
		free(name);
		name = NULL;
	}
	return name;
}

/* Fortran's name of subprogram d, in module `module` (NULL: none). */
static char *fortran_name(Dwarf_Die *d, const char *module)
{
	const char *plain = dwarf_diename(d);
	char *name = NULL;
	if (plain && asprintf(&name, "%s%s%s", module ? module : "", module ? "::" : "", plain) < 0)
		name = NULL;
	return name;
}

/* The subprogram under parent whose code holds a, as Fortran names it
 * (an internal procedure, which is code of its own, after its host:
 * MODULE::HOST::NAME); NULL if none.  scope: the names around parent. */
static char *fortran_within(Dwarf_Die *parent, Dwarf_Addr a, const char *scope, int depth)
{
	Dwarf_Die c;
	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return NULL;
	char *name = NULL;
	do {
		int tag = dwarf_tag(&c);
		if (tag != DW_TAG_module && tag != DW_TAG_subprogram)
			continue;
		if (tag == DW_TAG_subprogram && dwarf_haspc(&c, a) > 0)
			return fortran_name(&c, scope);
		char *inner = fortran_name(&c, scope); /* the scope of what it contains */
		if (inner)
			name = fortran_within(&c, a, inner, depth + 1);
		free(inner);
	} while (!name && dwarf_siblingof(&c, &c) == 0);
	return name;
}

/*
 * The function the code at a is of, from DWARF: the innermost function
 * or inlined call around a (so that the name agrees with the file and
 * line, which are the inlined code's), C++'s by its linkage name
 * demangled, Fortran's as MODULE::NAME, C's by its name.  A module
 * procedure's scopes are not found by dwarf_getscopes (libdw does not
 * look inside DW_TAG_module): a Fortran unit's tree is walked for it.
 * NULL if DWARF says none.
 */
static char *dwarf_function(Dwfl_Module *mod, Dwarf_Addr a)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias), *scopes = NULL;
	if (!cu)
		return NULL;
	int n = dwarf_getscopes(cu, a - bias, &scopes);
	char *name = NULL;
	bool found = false;
	for (int i = 0; i < n && !found; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		found = true;
		Dwarf_Attribute at;
		const char *link = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &at));
		const char *plain = dwarf_diename(&scopes[i]);
		if (fortran(dwarf_srclang(cu))) {
			const char *module = NULL;
			for (int k = i + 1; k < n && !module; k++)
				if (dwarf_tag(&scopes[k]) == DW_TAG_module)
					module = dwarf_diename(&scopes[k]);
			name = fortran_name(&scopes[i], module);
		} else if (!(name = demangled(link)) && plain) {
			name = strdup(plain);
		}
	}
	free(scopes);
	if (!found && fortran(dwarf_srclang(cu)))
		name = fortran_within(cu, a - bias, NULL, 0);
	return name;
}

/* A stripped module: the function symbol it still exports whose code
 * holds a (its size says so), as NAME+0xOFF; NULL when a lies in none
 * (a static function's code after an exported one is not that one's:
 * the caller names the module and offset instead). */
static char *nearest(Dwfl_Module *mod, Dwarf_Addr a)
{
	int n = dwfl_module_getsymtab(mod);
	const char *best = NULL;
	GElf_Addr at = 0;
	for (int i = 1; i < n && !best; i++) {
		GElf_Sym sym;
		GElf_Addr v;
		const char *nm = dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL);
		if (nm && *nm && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && v <= a &&
		    a < v + sym.st_size)
			best = nm, at = v;
	}
	if (!best)
		return NULL;
	char *d = demangled(best), *name = NULL;
	if (asprintf(&name, "%s+0x%llx", d ? d : best, (unsigned long long)(a + 1 - at)) < 0)
		name = NULL; /* a + 1: the return address, as the module's offset is written */
	free(d);
	return name;
}

static const char *readable(ar_symbols *s, Dwfl_Module *mod, Dwarf_Addr a, const char *sym)
{
	char *name = dwarf_function(mod, a);
	if (!name)
		name = sym ? demangled(sym) : nearest(mod, a); /* no DWARF: the ELF symbol */
	const char *kept = keep(s, name);
	return kept ? kept : sym;
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
	out->function = readable(s, m->mod, a, dwfl_module_addrname(m->mod, a));
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, a);
	int line = 0;
	if (l) {
		const char *file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		out->file = file;
		out->line = line;
	}
	return out->function || out->file ? 0 : -ENOENT;
}
