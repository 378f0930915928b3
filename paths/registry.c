/* registry.c - wrapper types by name, and the parameter helpers wrappers use in init. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Circle: registry.c <-> path.c.  The registry's first entries are the
 * wrappers path.c defines (element, pass, remote, handoff, fork), and
 * path.c looks every stage's type up here: the built-ins are in the table
 * before any lookup (pthread_once), with no registration by path.c whose
 * order could go wrong.
 */

#define MAX_TYPES 64

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static const struct paths_wrapper_type *types[MAX_TYPES];
static int ntypes;

static void add_builtins(void)
{
	types[ntypes++] = &paths__element_type;
	types[ntypes++] = &paths__pass_type;
	types[ntypes++] = &paths__remote_type;
	types[ntypes++] = &paths__handoff_type;
	types[ntypes++] = &paths__fork_type;
}

static const struct paths_wrapper_type *find(const char *name)
{
	for (int i = 0; i < ntypes; i++)
		if (!strcmp(types[i]->name, name))
			return types[i];
	return NULL;
}

int paths_register(const struct paths_wrapper_type *type)
{
	if (!type || !type->name || !*type->name || !type->op)
		return PS_EINVAL;
	pthread_once(&reg_once, add_builtins);
	int rc = 0;
	pthread_mutex_lock(&reg_lock);
	const struct paths_wrapper_type *old = find(type->name);
	if (old == type)
		rc = 0; /* registering twice is harmless */
	else if (old)
		rc = PS_EEXIST;
	else if (ntypes == MAX_TYPES)
		rc = PS_ENOSPC;
	else
		types[ntypes++] = type;
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

const struct paths_wrapper_type *paths_lookup(const char *name)
{
	if (!name)
		return NULL;
	pthread_once(&reg_once, add_builtins);
	pthread_mutex_lock(&reg_lock);
	const struct paths_wrapper_type *t = find(name);
	pthread_mutex_unlock(&reg_lock);
	return t;
}

/* --- parameters ------------------------------------------------------------ */

static const struct paths_param *param(const struct paths_params *p, const char *key)
{
	if (!p || !key)
		return NULL;
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return &p->v[i];
	return NULL;
}

int paths_params_fail(const struct paths_params *p, const char *key, const char *fmt, ...)
{
	if (!p || !p->err || !p->errlen)
		return PS_EINVAL;
	const struct paths_param *kv = param(p, key);
	int line = kv ? kv->line : p->line, col = kv ? kv->col : p->col;
	int n = snprintf(p->err, p->errlen, "%s:%d:%d: ", p->file ? p->file : "<params>",
			 line, col);
	if (n < 0 || (size_t)n >= p->errlen)
		return PS_EINVAL;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return PS_EINVAL;
}

int paths_param_int(const struct paths_params *p, const char *key, long dflt,
		    long min, long max, long *out)
{
	const struct paths_param *kv = param(p, key);
	if (!kv) {
		*out = dflt;
		return 1;
	}
	char *end;
	errno = 0;
	long v = strtol(kv->value, &end, 0);
	if (errno || end == kv->value || *end || v < min || v > max)
		return paths_params_fail(p, key, "%s: expected an integer from %ld to %ld, not '%s'",
					 key, min, max, kv->value);
	*out = v;
	return 0;
}

int paths_param_str(const struct paths_params *p, const char *key, const char *dflt,
		    const char **out)
{
	const struct paths_param *kv = param(p, key);
	*out = kv ? kv->value : dflt;
	return kv ? 0 : 1;
}

int paths_params_only(const struct paths_params *p, const char *const *known)
{
	if (!p)
		return 0;
	for (int i = 0; i < p->n; i++) {
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = !strcmp(*k, p->v[i].key);
		if (!ok) {
			char list[256] = "";
			size_t len = 0;
			for (const char *const *k = known; *k; k++)
				len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
						"%s%s", len ? ", " : "", *k);
			return paths_params_fail(p, p->v[i].key,
						 "unknown parameter '%s' (expected %s)", p->v[i].key,
						 *known ? list : "no parameters");
		}
	}
	return 0;
}
