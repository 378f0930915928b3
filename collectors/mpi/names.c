/* names.c - a rank's board of names (mpi.files, mpi.regions): each name numbered once, from 1, its slot written before it is used. */
#include <stdio.h>
#include <string.h>

#include "collectors/mpi/record.h"

/*
 * Invariants: slot n (1 <= n < b->n) holds number n's name, whole (cut to
 * the slot and ended), written before its used word (release); a name is
 * numbered once; numbers and slots change only under es_g.lock, which the
 * caller holds.  Slot 0 is never used: 0 is "none".
 */

void es_names_open(struct es_names *b, ps_server *srv, const char *elem, size_t rec, uint32_t slots,
		   const char *layout)
{
	b->board = es_rank_board(srv, elem, rec, slots, layout, &b->elem);
	b->rec = rec;
	b->slots = slots;
	b->n = 1;
}

static char *name_at(const struct es_names *b, uint32_t i)
{
	return (char *)b->board + (size_t)i * b->rec + sizeof(uint32_t);
}

uint32_t es_names_id(struct es_names *b, const char *name)
{
	if (!b->board)
		return 0;
	char n[512];
	size_t max = b->rec - sizeof(uint32_t);
	snprintf(n, max < sizeof(n) ? max : sizeof(n), "%s", name && *name ? name : "-");
	for (uint32_t i = 1; i < b->n; i++)
		if (!strcmp(name_at(b, i), n))
			return i;
	if (b->n >= b->slots)
		return 0;
	uint32_t id = b->n++;
	memcpy(name_at(b, id), n, strlen(n) + 1);
	__atomic_store_n((uint32_t *)((char *)b->board + (size_t)id * b->rec), 1u, __ATOMIC_RELEASE);
	return id;
}

void es_names_close(struct es_names *b)
{
	ps_elem_close(b->elem);
	*b = (struct es_names){ .n = 1 };
}
