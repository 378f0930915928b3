/* table.c - the engine's one hash table: 64-bit keys to 32-bit values, linear probing, deletion by backward shift (no tombstones, so a live reader's table does not fill with them). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static int grow(struct tab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	uint64_t *keys = malloc(sizeof(*keys) * cap);
	uint32_t *vals = malloc(sizeof(*vals) * cap);
	if (!keys || !vals) {
		free(keys), free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cap; i++)
		vals[i] = NIL;
	for (size_t i = 0; i < t->cap; i++)
		if (t->vals[i] != NIL) {
			size_t h = ps_hash_slot(t->keys[i], cap);
			while (vals[h] != NIL)
				h = ps_probe(h, cap);
			keys[h] = t->keys[i], vals[h] = t->vals[i];
		}
	free(t->keys), free(t->vals);
	t->keys = keys, t->vals = vals, t->cap = cap;
	return 0;
}

uint32_t *ws__tab_get(struct tab *t, uint64_t key)
{
	if (!t->n)
		return NULL;
	for (size_t h = ps_hash_slot(key, t->cap); t->vals[h] != NIL; h = ps_probe(h, t->cap))
		if (t->keys[h] == key)
			return &t->vals[h];
	return NULL;
}

int ws__tab_put(struct tab *t, uint64_t key, uint32_t val)
{
	uint32_t *v = ws__tab_get(t, key);
	if (v) {
		*v = val;
		return 0;
	}
	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return -ENOMEM;
	size_t h = ps_hash_slot(key, t->cap);
	while (t->vals[h] != NIL)
		h = ps_probe(h, t->cap);
	t->keys[h] = key, t->vals[h] = val;
	t->n++;
	return 0;
}

void ws__tab_del(struct tab *t, uint64_t key)
{
	uint32_t *v = ws__tab_get(t, key);
	if (!v)
		return;
	size_t i = (size_t)(v - t->vals), j = i;
	t->vals[i] = NIL;
	t->n--;
	/* pull back each later key of the run that may not sit past the hole */
	for (;;) {
		j = ps_probe(j, t->cap);
		if (t->vals[j] == NIL)
			return;
		size_t home = ps_hash_slot(t->keys[j], t->cap);
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		t->keys[i] = t->keys[j], t->vals[i] = t->vals[j];
		t->vals[j] = NIL;
		i = j;
	}
}

void ws__tab_free(struct tab *t)
{
	free(t->keys), free(t->vals);
	*t = (struct tab){ 0 };
}
