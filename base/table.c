/* table.c - the one hash table: 64-bit keys to fixed-size values, linear probing, deletion by backward shift. */
#include <stdlib.h>
#include <string.h>

#include "base.h"

#define KEY(t, i) (*(uint64_t *)(void *)((t)->slots + (i) * (t)->stride))
#define VAL(t, i) ((void *)((t)->slots + (i) * (t)->stride + sizeof(uint64_t)))

void base_tab_init(struct base_tab *t, size_t value_size)
{
	*t = (struct base_tab){ .size = value_size };
}

static size_t stride_of(const struct base_tab *t)
{
	size_t size = t->size ? t->size : sizeof(uint32_t);
	return sizeof(uint64_t) + (size + 7) / 8 * 8; /* the next key 8-aligned */
}

void *base_tab_get(const struct base_tab *t, uint64_t key)
{
	if (!t->n)
		return NULL;
	for (size_t h = base_hash_slot(key, t->cap); t->used[h]; h = base_probe(h, t->cap))
		if (KEY(t, h) == key)
			return VAL(t, h);
	return NULL;
}

static int grow_to(struct base_tab *t, size_t cap)
{
	size_t stride = t->stride ? t->stride : stride_of(t);
	unsigned char *slots = malloc(stride * cap), *used = calloc(cap, 1);
	if (!slots || !used) {
		free(slots), free(used);
		return -ENOMEM;
	}
	struct base_tab nt = { .slots = slots, .used = used, .n = t->n, .cap = cap, .size = t->size, .stride = stride };
	for (size_t i = 0; i < t->cap; i++)
		if (t->used[i]) {
			size_t h = base_hash_slot(KEY(t, i), cap);
			while (used[h])
				h = base_probe(h, cap);
			used[h] = 1;
			memcpy(slots + h * stride, t->slots + i * stride, stride);
		}
	free(t->slots), free(t->used);
	*t = nt;
	return 0;
}

int base_tab_reserve(struct base_tab *t, size_t n)
{
	if (n > SIZE_MAX / 4)
		return -ENOMEM;
	size_t cap = t->cap ? t->cap : 16;
	while (cap < 2 * n)
		cap *= 2;
	return cap == t->cap ? 0 : grow_to(t, cap);
}

void *base_tab_put(struct base_tab *t, uint64_t key, bool *fresh)
{
	/* one probe: the key's slot if there, else the free slot ending its run */
	size_t h = t->cap ? base_hash_slot(key, t->cap) : 0;
	for (; t->cap && t->used[h]; h = base_probe(h, t->cap))
		if (KEY(t, h) == key) {
			if (fresh)
				*fresh = false;
			return VAL(t, h);
		}
	if (fresh)
		*fresh = true;
	if ((t->n + 1) * 2 > t->cap) {
		if (grow_to(t, t->cap ? t->cap * 2 : 16) < 0)
			return NULL;
		for (h = base_hash_slot(key, t->cap); t->used[h]; h = base_probe(h, t->cap))
			;
	}
	t->used[h] = 1;
	KEY(t, h) = key;
	t->n++;
	return memset(VAL(t, h), 0, t->stride - sizeof(uint64_t));
}

void base_tab_del(struct base_tab *t, uint64_t key)
{
	unsigned char *v = base_tab_get(t, key);
	if (!v)
		return;
	size_t i = (size_t)(v - sizeof(uint64_t) - t->slots) / t->stride, j = i;
	t->used[i] = 0;
	t->n--;
	/* pull back each later key of the run whose home is not between the
	 * hole and it (cyclically): left past the hole, a lookup would stop
	 * at the hole before reaching it */
	for (;;) {
		j = base_probe(j, t->cap);
		if (!t->used[j])
			break;
		size_t home = base_hash_slot(KEY(t, j), t->cap);
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		memcpy(t->slots + i * t->stride, t->slots + j * t->stride, t->stride);
		t->used[i] = 1, t->used[j] = 0;
		i = j;
	}
}

void *base_tab_next(const struct base_tab *t, size_t *at, uint64_t *key)
{
	for (; *at < t->cap; ++*at)
		if (t->used[*at]) {
			if (key)
				*key = KEY(t, *at);
			return VAL(t, (*at)++);
		}
	return NULL;
}

void base_tab_clear(struct base_tab *t)
{
	if (t->cap)
		memset(t->used, 0, t->cap);
	t->n = 0;
}

void base_tab_free(struct base_tab *t)
{
	free(t->slots), free(t->used);
	*t = (struct base_tab){ .size = t->size };
}

void base_tab_check(const struct base_tab *t)
{
	BASE_INVARIANT("cap is 0 or a power of two, n < cap / 2 + 1",
		       (t->cap & (t->cap - 1)) == 0 && (t->cap ? t->n <= t->cap / 2 : t->n == 0));
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		n++;
		size_t h = base_hash_slot(KEY(t, i), t->cap);
		for (; h != i; h = base_probe(h, t->cap))
			BASE_INVARIANT("every used key is reached from its home slot without crossing an unused one", t->used[h]);
	}
	BASE_INVARIANT("n is the number of used slots", n == t->n);
}
