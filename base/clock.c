/* clock.c - the monotonic clock and the deadlines every layer waits by. */
#define _GNU_SOURCE
#include <limits.h>
#include <time.h>

#include "base.h"

uint64_t base_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t base_deadline_ns(int timeout_ms)
{
	if (timeout_ms < 0)
		return UINT64_MAX;
	return base_now_ns() + (uint64_t)timeout_ms * 1000000u;
}

int base_ms_left(uint64_t deadline_ns)
{
	if (deadline_ns == UINT64_MAX)
		return -1; /* forever */
	uint64_t now = base_now_ns();
	if (now >= deadline_ns)
		return 0;
	uint64_t ms = (deadline_ns - now) / 1000000u;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}
