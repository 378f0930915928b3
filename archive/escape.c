/* escape.c - the one JSON string escaper: every JSON EventSpace writes (the converters', esprofile's, esview's) quotes through it, valid UTF-8 whatever it is given. */
#include <stdio.h>

#include "archive/archive.h"

void ar_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else { /* valid UTF-8 whatever it was given (a handler's bytes, a thread's name) */
			int n = base_utf8_len((const unsigned char *)s);
			if (n)
				fwrite(s, 1, (size_t)n, f), s += n - 1;
			else
				fputs("\\ufffd", f);
		}
	}
	fputc('"', f);
}
