/* records.c - the steering records' words: error texts, names, whether a value may be set into a field or given to a method, and another process's text made safe to print. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "steering/steering.h"

const char *st_strerror(int rc)
{
	switch (rc) {
	case 0: return "applied";
	case ST_ENOOBJ: return "no object of that name";
	case ST_ENOFIELD: return "no field or method of that name";
	case ST_EREADONLY: return "the field is read-only";
	case ST_ERANGE: return "the value is out of its range";
	case ST_ENOTINT: return "the field holds integers: the value is not whole";
	case ST_EINDEX: return "the index is past the field's length";
	case ST_ELOST: return "asks were discarded before a safe point read them";
	case ST_EBADASK: return "not an ask";
	case ST_ERULE: return "the rule does not compile";
	case ST_ESEALED: return "the object is published already: its members are fixed";
	case ST_EFULL: return "too many objects, members or rules";
	case ST_ENOTMETHOD: return "a method is called and a field set, not the other way round";
	case ST_EDUP: return "the name is taken";
	default: return ps_strerror(rc);
	}
}

int st_name_check(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (!n || n > ST_NAME_MAX || !isalpha((unsigned char)name[0]))
		return PS_EBADNAME;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return PS_EBADNAME;
	return 0;
}

int st_value_check(const struct st_member *m, uint32_t index, double v)
{
	if (m->kind == ST_METHOD || m->kind == ST_OBJECT)
		return ST_ENOTMETHOD;
	if (!(m->flags & ST_WRITABLE))
		return ST_EREADONLY;
	if (index >= m->count)
		return ST_EINDEX;
	/* NaN is in no range: every comparison with it is false */
	if (!(v >= m->lo && v <= m->hi))
		return ST_ERANGE;
	if (m->kind == ST_INT && v != floor(v))
		return ST_ENOTINT;
	return 0;
}

void st_value_format(const struct st_member *m, double v, char *buf, size_t len)
{
	if (m && m->kind == ST_INT)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.15g", v);
}

int st_arg_check(const struct st_member *m, double v)
{
	if (m->kind != ST_METHOD)
		return ST_ENOTMETHOD;
	/* NaN is in no range; an infinity past every method's */
	if (!(v >= m->lo && v <= m->hi) || isinf(v))
		return ST_ERANGE;
	return 0;
}

void st_text(const char *text, char *out, size_t len)
{
	size_t o = 0;
	if (!len)
		return;
	for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
		int n = *p >= 0x80 ? base_utf8_len(p) : 0;
		char esc[8];
		size_t k;
		if (n) {
			if (o + (size_t)n >= len)
				break;
			memcpy(out + o, p, (size_t)n);
			o += (size_t)n, p += n - 1;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f || *p >= 0x80 || *p == '\\')
			k = (size_t)snprintf(esc, sizeof(esc), *p == '\\' ? "\\\\" : "\\x%02x", *p);
		else
			esc[0] = (char)*p, k = 1;
		if (o + k >= len)
			break;
		memcpy(out + o, esc, k);
		o += k;
	}
	out[o] = 0;
}
