/* region_stub.c - libesregion.so: es_region_begin/end that do nothing, for programs run without EventSpace (esrun's libescollect.so takes them). */
#include <stddef.h>

#include "collectors/mpi/es_region.h"

void es_region_begin(const char *name)
{
	(void)name;
}

void es_region_end(const char *name)
{
	(void)name;
}

/* Fortran's names, with the length it passes */
void es_region_begin_(const char *name, size_t len);
void es_region_end_(const char *name, size_t len);

void es_region_begin_(const char *name, size_t len)
{
	(void)name, (void)len;
}

void es_region_end_(const char *name, size_t len)
{
	(void)name, (void)len;
}
