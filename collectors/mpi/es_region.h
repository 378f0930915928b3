/* es_region.h - name a program's phases for EventSpace: es_region_begin("solve") ... es_region_end("solve"). */
#ifndef ES_REGION_H
#define ES_REGION_H

/*
 * Link with -lesregion (a library that does nothing) and run under esrun:
 * libescollect.so, preloaded, takes these calls and records each phase
 * from its beginning to its end; esprofile breaks time down by phase,
 * OTF2 and the JSON show them as regions, the timeline marks them.
 * Phases nest; ending one ends those begun inside it.  es_region_end(NULL)
 * ends the innermost.  Names are cut at 59 characters.
 *
 * Fortran: CALL ES_REGION_BEGIN('solve') and CALL ES_REGION_END('solve').
 * MPI_Pcontrol(level) marks phases too: "Pcontrol LEVEL" until the next
 * MPI_Pcontrol (level 0 ends it).
 */
#ifdef __cplusplus
extern "C" {
#endif

void es_region_begin(const char *name);
void es_region_end(const char *name);

#ifdef __cplusplus
}
#endif

#endif
