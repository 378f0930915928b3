/* colours.c - how every picture colours a call (esconvert's timeline, esview, the JSON's categories, the guide's key): one colour per class of trace/trace.h. */
#include "archive/archive.h"

/* Waiting is red wherever it is drawn; the rest are matplotlib's first
 * colours, told apart by most eyes. */
static const char *const colours[ES_NCLASS] = {
	[ES_CLASS_P2P] = "#1f77b4",	  [ES_CLASS_WAIT] = "#d62728", [ES_CLASS_COLL] = "#ff7f0e",
	[ES_CLASS_ONE_SIDED] = "#2ca02c", [ES_CLASS_IO] = "#8c564b",   [ES_CLASS_OTHER] = "#9467bd",
	[ES_CLASS_PATHS] = "#7f7f7f",
};

const char *ar_class_colour(enum es_class c)
{
	return (unsigned)c < ES_NCLASS ? colours[c] : "#000000";
}
