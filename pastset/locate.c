/* locate.c - a segment wherever it is: NAME on this host (shared memory) or HOST:PORT/NAME behind a tuple server (remote.c); the one place that chooses between them. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int ps_state_at(const char *where, const struct ps_remote_attr *ra)
{
	if (!where)
		return PS_EINVAL;
	if (!strchr(where, ':')) {
		struct ps_shm_info in;
		int rc = ps_shm_info(where, &in);
		return rc ? rc : (int)in.state;
	}
	ps_server *s;
	int rc = ps_server_open_at(where, PS_RDONLY, ra, &s);
	if (rc)
		return rc;
	rc = ps__server_state(s);
	ps_server_destroy(s);
	return rc;
}

int ps_locator_parse(const char *where, char *host, size_t hostlen, int *port, char *segment)
{
	if (!where || !host || !port || !segment)
		return PS_EINVAL;
	const char *colon = strrchr(where, ':');
	const char *slash = colon ? strchr(colon, '/') : NULL;
	if (!colon || colon == where || (size_t)(colon - where) >= hostlen)
		return PS_EINVAL;
	char *end;
	long p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || p <= 0 || p > 65535 || (*end && *end != '/'))
		return PS_EINVAL;
	memcpy(host, where, (size_t)(colon - where));
	host[colon - where] = 0;
	*port = (int)p;
	segment[0] = 0;
	if (slash && snprintf(segment, PS_NAME_MAX + 1, "%s", slash + 1) > PS_NAME_MAX)
		return PS_EBADNAME;
	return 0;
}

int ps_server_open_at(const char *where, unsigned flags, const struct ps_remote_attr *ra,
		      ps_server **out)
{
	if (!where)
		return PS_EINVAL;
	if (!strchr(where, ':'))
		return ps_server_open_shm(where, flags, out);
	char host[256], seg[PS_NAME_MAX + 1];
	int port, rc = ps_locator_parse(where, host, sizeof(host), &port, seg);
	return rc ? rc : ps_server_open_remote(host, port, seg, flags, ra, out);
}
