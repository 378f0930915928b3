/* es_tp.h - an LTTng-UST tracepoint with the same fields as the EventSpace trace tuple, for the collector benchmark. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER es_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tests/bench/es_tp.h"

#if !defined(ES_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define ES_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	es_bench, op,
	LTTNG_UST_TP_ARGS(uint64_t, start, uint64_t, end, uint32_t, seq, uint16_t, op,
			  uint16_t, collector, uint32_t, element, uint32_t, size, uint32_t, arg),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, start, start)
		lttng_ust_field_integer(uint64_t, end, end)
		lttng_ust_field_integer(uint32_t, seq, seq)
		lttng_ust_field_integer(uint16_t, op, op)
		lttng_ust_field_integer(uint16_t, collector, collector)
		lttng_ust_field_integer(uint32_t, element, element)
		lttng_ust_field_integer(uint32_t, size, size)
		lttng_ust_field_integer(uint32_t, arg, arg)))

#endif

#include <lttng/tracepoint-event.h>
