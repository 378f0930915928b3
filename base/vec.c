/* vec.c - the one growable vector: elements of one size, doubling. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

int base_vec_reserve(struct base_vec *v, size_t n)
{
	if (n <= v->cap)
		return 0;
	if (!v->size || n > SIZE_MAX / 2 / v->size)
		return -ENOMEM; /* no size set, or more than memory holds */
	size_t cap = v->cap ? v->cap : 16;
	while (cap < n)
		cap *= 2;
	void *m = realloc(v->v, v->size * cap);
	if (!m)
		return -ENOMEM;
	v->v = m, v->cap = cap;
	return 0;
}

void *base_vec_push(struct base_vec *v)
{
	if (v->n == v->cap && base_vec_reserve(v, v->n + 1) < 0)
		return NULL;
	return memset((char *)v->v + v->size * v->n++, 0, v->size);
}

void base_vec_free(struct base_vec *v)
{
	free(v->v);
	*v = (struct base_vec){ .size = v->size };
}
