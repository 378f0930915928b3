/* records.c - the steering records' words: error texts, names, and whether a value may be set into a field. */
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
	case ST_ERANGE: return "the value is out of the field's range";
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
