/* spaces.c - the names of a job's trace spaces (JOB.tP, JOB.rR), made and read in one place. */
#include <stdio.h>
#include <string.h>

#include "pastset/pastset.h"
#include "trace/trace.h"

int es_space_name(char *buf, size_t len, const char *job, enum es_space_kind kind, int n)
{
	if (!buf || !len)
		return PS_EINVAL;
	int w = job && n >= 0 && (kind == ES_SPACE_PROCESS || kind == ES_SPACE_RANK)
		? snprintf(buf, len, "%s.%c%d", job, (char)kind, n) : -1;
	if (w < 0 || (size_t)w >= len || ps_name_check(buf)) {
		*buf = 0;
		return PS_EBADNAME;
	}
	return 0;
}

bool es_space_of(const char *name, const char *job, enum es_space_kind *kind, int *n)
{
	const char *dot = name && !job ? strrchr(name, '.') : NULL;
	size_t jl = job ? strlen(job) : dot ? (size_t)(dot - name) : 0;
	if (!name || !jl || (job && strncmp(name, job, jl)) || name[jl] != '.' ||
	    (name[jl + 1] != ES_SPACE_PROCESS && name[jl + 1] != ES_SPACE_RANK))
		return false;
	const char *d = name + jl + 2;
	long v = 0;
	if (!*d)
		return false;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return false;
		v = v < 100000000 ? v * 10 + (*d - '0') : v; /* no rank is that high */
	}
	if (kind)
		*kind = (enum es_space_kind)name[jl + 1];
	if (n)
		*n = (int)v;
	return true;
}

bool es_job_ok(const char *job)
{
	size_t n = job ? strlen(job) : 0;
	char c = n ? job[0] : 0;
	return n && n <= ES_JOB_MAX && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) &&
	       !ps_name_check(job);
}
