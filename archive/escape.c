/* escape.c - the one JSON string escaper: every JSON EventSpace writes (the converters', esprofile's, esview's) quotes through it. */
#include <stdio.h>

#include "archive/archive.h"

void ar_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
