/* symbols.h - call sites' addresses as function, file and line (DWARF, through libdw), for the recorder. */
#ifndef ES_ARCHIVE_SYMBOLS_H
#define ES_ARCHIVE_SYMBOLS_H

#include <stdint.h>

typedef struct ar_symbols ar_symbols;

struct ar_symbol {
	const char *function; /* NULL where not known; the strings live as long as the ar_symbols */
	const char *file;
	int line;             /* 0 where not known */
};

int ar_symbols_create(ar_symbols **out);
void ar_symbols_destroy(ar_symbols *s);
/* The call whose return address is at offset in the module file path:
 * 0, -ENOENT (the file, or anything of it, not found) or -ENOMEM. */
int ar_symbols_lookup(ar_symbols *s, const char *path, uint64_t offset, struct ar_symbol *out);

#endif
