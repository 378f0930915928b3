/* clock.c - raw timestamps that cost little to take, calibrated once to CLOCK_MONOTONIC nanoseconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors.h"

#define ES_CLOCK_MAGIC 0x45534331u /* "ESC1" */

int es__clock_tsc;
static struct es_clock clk;
static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

/* The processor's word on its TSC: invariant (constant rate, ticking
 * through sleep states), CPUID 0x80000007 EDX bit 8. */
static bool tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a < 0x80000007u)
		return false;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
	return d & (1u << 8);
#else
	return false;
#endif
}

#if defined(__x86_64__) || defined(__i386__)
static bool kernel_uses_tsc(void)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	char src[32] = "";
	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = 0;
		fclose(f);
	}
	return !strncmp(src, "tsc", 3);
}

/* One (monotonic, tsc) pair, taken so that the two are as close as the
 * machine allows: the tightest of a few brackets. */
static void pair(uint64_t *ns, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 9; i++) {
		uint64_t a = base_now_ns(), t = __builtin_ia32_rdtsc(), b = base_now_ns();
		if (b - a < best) {
			best = b - a;
			*ns = a + (b - a) / 2;
			*tsc = t;
		}
	}
}

/* The line through (ns0, raw0) that rises dns over dtsc ticks. */
static void fit(struct es_clock *c, uint64_t ns0, uint64_t raw0, uint64_t dns, uint64_t dtsc)
{
	c->raw0 = raw0;
	c->ns0 = ns0;
	c->mult = (uint64_t)(((unsigned __int128)dns << 32) / dtsc);
	c->ticks_per_ns = (double)dtsc / (double)dns;
}

/* How far a calibration may be off before it is called drift: the pair's
 * own uncertainty, plus 20 ppm of the time since calibration (a 20 ms
 * calibration is good to a few ppm). */
static uint64_t tolerance(const struct es_clock *c, uint64_t now)
{
	uint64_t since = now > c->ns0 ? now - c->ns0 : c->ns0 - now;
	return 10000 + since / 50000;
}
#endif

int es_clock_check(struct es_clock *c, int64_t *drift_ns)
{
	if (drift_ns)
		*drift_ns = 0;
	if (!c || c->source != ES_CLOCK_TSC || c->ticks_per_ns == 1.0)
		return 0; /* monotonic ns, or a line es_clock_shift made of them */
#if defined(__x86_64__) || defined(__i386__)
	uint64_t ns = 0, tsc = 0;
	pair(&ns, &tsc);
	int64_t drift = (int64_t)(es_clock_ns(c, tsc) - ns);
	if (drift_ns)
		*drift_ns = drift;
	if ((uint64_t)(drift < 0 ? -drift : drift) <= tolerance(c, ns))
		return 0;
	/* A line through the calibration and now: the rate the TSC really
	 * kept, as long as it kept one at all. */
	if (tsc <= c->raw0 || ns <= c->ns0)
		return ES_ECLOCK;
	struct es_clock kept = *c;
	fit(&kept, c->ns0, c->raw0, ns - c->ns0, tsc - c->raw0);
	double ratio = (double)kept.mult / (double)c->mult;
	if (ratio < 0.99 || ratio > 1.01)
		return ES_ECLOCK; /* not a clock that keeps a rate: a jump, a migration */
	*c = kept;
	return 1;
#else
	return ES_ECLOCK;
#endif
}

#if defined(__x86_64__) || defined(__i386__)
/* Where the kernel does not trust the TSC (a virtual machine's kvm-clock,
 * say) its own CPUID word may still hold: try the calibration on every CPU
 * this thread may run on, since vCPUs whose TSCs were never synchronised
 * are the usual reason for distrust.  The thread's CPU mask is restored. */
static bool agrees_on_every_cpu(const struct es_clock *c)
{
	cpu_set_t was, one;
	if (sched_getaffinity(0, sizeof(was), &was))
		return false;
	bool ok = true;
	for (int cpu = 0; cpu < CPU_SETSIZE && ok; cpu++) {
		if (!CPU_ISSET(cpu, &was))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		struct es_clock copy = *c; /* judged, never re-fitted */
		ok = es_clock_check(&copy, NULL) == 0;
	}
	sched_setaffinity(0, sizeof(was), &was);
	return ok;
}
#endif

static void monotonic(void)
{
	clk.source = ES_CLOCK_MONOTONIC;
	clk.mult = 1ull << 32;
	clk.ticks_per_ns = 1.0;
	es__clock_tsc = 0;
}

static void calibrate(void)
{
	const char *env = getenv("ES_CLOCK");
	clk.magic = ES_CLOCK_MAGIC;
	if ((env && !strcmp(env, "monotonic")) || !tsc_invariant()) {
		monotonic();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	uint64_t n0 = 0, t0 = 0, n1 = 0, t1 = 0;
	pair(&n0, &t0);
	struct timespec nap = { 0, 20 * 1000 * 1000 }; /* 20 ms: error ~1e-5 */
	nanosleep(&nap, NULL);
	pair(&n1, &t1);
	if (t1 <= t0 || n1 <= n0) { /* a TSC that did not move: do not use it */
		monotonic();
		return;
	}
	clk.source = ES_CLOCK_TSC;
	fit(&clk, n1, t1, n1 - n0, t1 - t0);
	/* The kernel's own choice needs no second opinion; without it, the
	 * line must still hold a few ms later, and on every CPU. */
	if (!kernel_uses_tsc()) {
		struct timespec more = { 0, 5 * 1000 * 1000 };
		nanosleep(&more, NULL);
		if (!agrees_on_every_cpu(&clk)) {
			monotonic();
			return;
		}
	}
	es__clock_tsc = 1;
#endif
}

const struct es_clock *es_clock_init(void)
{
	pthread_once(&clk_once, calibrate);
	return &clk;
}

static inline uint64_t clock_ns(const struct es_clock *c, uint64_t raw)
{
	if (c->source != ES_CLOCK_TSC)
		return raw;
	if (raw >= c->raw0)
		return c->ns0 + (uint64_t)(((unsigned __int128)(raw - c->raw0) * c->mult) >> 32);
	return c->ns0 - (uint64_t)(((unsigned __int128)(c->raw0 - raw) * c->mult) >> 32);
}

uint64_t es_clock_ns(const struct es_clock *c, uint64_t raw)
{
	return clock_ns(c, raw);
}

int es_clock_adopt(const struct es_clock *c)
{
	const struct es_clock *own = es_clock_init();
	if (!c || c->magic != ES_CLOCK_MAGIC || c->source != ES_CLOCK_TSC || own->source != ES_CLOCK_TSC ||
	    !c->mult)
		return -EINVAL; /* this process's stamps are not that TSC's ticks */
	clk.raw0 = c->raw0;
	clk.ns0 = c->ns0;
	clk.mult = c->mult;
	clk.ticks_per_ns = c->ticks_per_ns;
	return 0;
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

void es_trace_portable_n(const struct es_clock *c, const struct es_trace *in, struct es_trace *out, size_t n)
{
	for (size_t i = 0; i < n; i++) /* one call for a batch: a recorder's every tuple comes here */
		es_trace_portable(c, &in[i], &out[i]);
}

void es_trace_portable(const struct es_clock *c, const struct es_trace *in, struct es_trace *out)
{
	struct es_trace t = *in;
	t.start = clock_ns(c, in->start);
	t.end = clock_ns(c, in->end);
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
