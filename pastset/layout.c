/* layout.c - tuples across byte orders: an element's layout, checked, and the swap a reader of the other order needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

/* --- byte order ------------------------------------------------------------ */

/* Calls fn(width) for every field of a layout: letters b h i q, each
 * optionally preceded by a count ("hhi160b"); false if it is malformed. */
static bool layout_walk(const char *layout, size_t *bytes, unsigned char *t)
{
	size_t total = 0;
	for (const char *p = layout; *p;) {
		unsigned long count = 1;
		if (*p >= '0' && *p <= '9') {
			char *end;
			count = strtoul(p, &end, 10);
			if (!count || count > PS_TUPLE_MAX)
				return false;
			p = end;
		}
		size_t w = *p == 'b' ? 1 : *p == 'h' ? 2 : *p == 'i' ? 4 : *p == 'q' ? 8 : 0;
		if (!w)
			return false;
		p++;
		for (unsigned long k = 0; t && k < count; k++, t += w)
			for (size_t a = 0, b = w - 1; a < b; a++, b--) {
				unsigned char x = t[a];
				t[a] = t[b];
				t[b] = x;
			}
		total += w * count;
		if (total > PS_TUPLE_MAX)
			return false;
	}
	*bytes = total;
	return true;
}

int ps__layout_check(const char *layout, size_t tuple_size)
{
	size_t n;
	return strlen(layout) <= PS_LAYOUT_MAX && layout_walk(layout, &n, NULL) && n == tuple_size
	       ? 0 : PS_EINVAL;
}

void ps__layout_swap(const char *layout, unsigned char *t)
{
	size_t n;
	layout_walk(layout, &n, t);
}


int ps_elem_set_layout(ps_elem *e, const char *layout)
{
	if (!e || !layout || ps__layout_check(layout, e->tuple_size))
		return PS_EINVAL;
	if (e->remote)
		snprintf(e->remote->layout, sizeof(e->remote->layout), "%s", layout);
	return 0;
}

/* Tuples arrive in the server's order: ours only if the layout says how. */
void ps__to_ours(const struct ps__relem *re, unsigned char *t)
{
	if (re->c->swap && re->layout[0])
		ps__layout_swap(re->layout, t);
}
