/* es_tp.c - instantiates the benchmark's LTTng-UST tracepoint provider. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tests/bench/es_tp.h"
