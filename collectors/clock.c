/* clock.c - raw timestamps that cost little to take, calibrated once to CLOCK_MONOTONIC nanoseconds. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors.h"

#define ES_CLOCK_MAGIC 0x45534331u /* "ESC1" */

int es__clock_tsc;
static struct es_clock clk;
static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

/* The TSC is used only where it ticks at a constant rate through sleep
 * states (invariant TSC) and the kernel itself trusts it as its clock
 * source: a timestamp must never tell a lie about order or duration. */
static int tsc_trustworthy(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a < 0x80000007u)
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
	if (!(d & (1u << 8)))
		return 0;
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	char src[32] = "";
	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = 0;
		fclose(f);
	}
	return !strncmp(src, "tsc", 3);
#else
	return 0;
#endif
}

/* One (monotonic, tsc) pair, taken so that the two are as close as the
 * machine allows: the tightest of a few brackets. */
static void pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 9; i++) {
		uint64_t a = ps_now_ns(), t = __builtin_ia32_rdtsc(), b = ps_now_ns();
		if (b - a < best) {
			best = b - a;
			*ns = a + (b - a) / 2;
			*tsc = t;
		}
	}
}

static void calibrate(void)
{
	const char *env = getenv("ES_CLOCK");
	bool want_tsc = env && !strcmp(env, "monotonic") ? false : tsc_trustworthy();
	clk.magic = ES_CLOCK_MAGIC;
	if (!want_tsc) {
		clk.source = ES_CLOCK_MONOTONIC;
		clk.mult = 1ull << 32;
		clk.ticks_per_ns = 1.0;
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	uint64_t n0 = 0, t0 = 0, n1 = 0, t1 = 0;
	pair(&n0, &t0);
	struct timespec nap = { 0, 20 * 1000 * 1000 }; /* 20 ms: error ~1e-5 */
	nanosleep(&nap, NULL);
	pair(&n1, &t1);
	if (t1 <= t0 || n1 <= n0) { /* a TSC that did not move: do not use it */
		clk.source = ES_CLOCK_MONOTONIC;
		clk.mult = 1ull << 32;
		clk.ticks_per_ns = 1.0;
		return;
	}
	clk.source = ES_CLOCK_TSC;
	clk.raw0 = t1;
	clk.ns0 = n1;
	clk.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
	clk.ticks_per_ns = (double)(t1 - t0) / (double)(n1 - n0);
	es__clock_tsc = 1;
#endif
}

const struct es_clock *es_clock_init(void)
{
	pthread_once(&clk_once, calibrate);
	return &clk;
}

uint64_t es_clock_ns(const struct es_clock *c, uint64_t raw)
{
	if (c->source != ES_CLOCK_TSC)
		return raw;
	if (raw >= c->raw0)
		return c->ns0 + (uint64_t)(((unsigned __int128)(raw - c->raw0) * c->mult) >> 32);
	return c->ns0 - (uint64_t)(((unsigned __int128)(c->raw0 - raw) * c->mult) >> 32);
}

void es_clock_shift(struct es_clock *c, int64_t ns)
{
	if (!ns)
		return;
	if (c->source != ES_CLOCK_TSC) {
		/* raw stamps are ns already: the identity, as a line that can move */
		c->source = ES_CLOCK_TSC;
		c->raw0 = c->ns0 = 0;
		c->mult = 1ull << 32;
		c->ticks_per_ns = 1.0;
	}
	c->ns0 += (uint64_t)ns; /* two's complement: a negative shift subtracts */
}

void es_trace_portable(const struct es_clock *c, const struct es_trace *in, struct es_trace *out)
{
	struct es_trace t = *in;
	t.start = es_clock_ns(c, in->start);
	t.end = es_clock_ns(c, in->end);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	t.start = __builtin_bswap64(t.start);
	t.end = __builtin_bswap64(t.end);
	t.seq = __builtin_bswap32(t.seq);
	t.op = __builtin_bswap16(t.op);
	t.collector = __builtin_bswap16(t.collector);
	t.element = __builtin_bswap32(t.element);
	t.size = __builtin_bswap32(t.size);
	t.arg = __builtin_bswap32(t.arg);
#endif
	*out = t;
}
