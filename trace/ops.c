/* ops.c - what each op code in a trace tuple is: its name, group, kind and class; the control order's checks; the boards' names. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

/* Written by wrapgen from collectors/mpi/calls.def (es_mpi_ops.c). */
extern const struct es_op_info es__mpi_ops[];
extern const int es__mpi_nops;

static const struct es_op_info pastset_ops[] = {
	{ ES_OP_WRITE, ES_GROUP_PASTSET, ES_KIND_TIMED, "write" },
	{ ES_OP_READ, ES_GROUP_PASTSET, ES_KIND_TIMED, "read" },
	{ ES_OP_READ_LATEST, ES_GROUP_PASTSET, ES_KIND_TIMED, "read_latest" },
	{ ES_OP_TAKE, ES_GROUP_PASTSET, ES_KIND_TIMED, "take" },
};

const struct es_op_info *es_op_info(unsigned op)
{
	/* by code: built once, codes are below 256 */
	static const struct es_op_info *by_code[256];
	static int built;
	op = es_op_code(op);
	if (op >= 256)
		return NULL;
	if (!__atomic_load_n(&built, __ATOMIC_ACQUIRE)) {
		/* idempotent: two threads that build it write the same */
		for (size_t i = 0; i < sizeof(pastset_ops) / sizeof(pastset_ops[0]); i++)
			__atomic_store_n(&by_code[pastset_ops[i].code], &pastset_ops[i], __ATOMIC_RELAXED);
		for (int i = 0; i < es__mpi_nops; i++)
			__atomic_store_n(&by_code[es__mpi_ops[i].code], &es__mpi_ops[i], __ATOMIC_RELAXED);
		__atomic_store_n(&built, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&by_code[op], __ATOMIC_RELAXED);
}

const char *es_op_name(unsigned op)
{
	const struct es_op_info *i = es_op_info(op);
	return i ? i->name : "unknown";
}

const char *es_op_label(unsigned op, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", es_op_name(op), op & ES_OP_DONE ? "/done" : "",
		 op & ES_OP_RECV ? "/recv" : "", op & ES_OP_FAILED ? "/failed" : "");
	return buf;
}

unsigned es_op_from_name(const char *name)
{
	for (unsigned k = 1; name && k < 256; k++) {
		const struct es_op_info *i = es_op_info(k);
		if (i && !strcmp(i->name, name))
			return k;
	}
	return 0;
}

static const char *const group_names[] = { "pastset", "setup", "point-to-point", "collectives",
					   "one-sided", "persistent", "communicators", "io" };

const char *es_op_group_name(enum es_op_group g)
{
	return (unsigned)g < sizeof(group_names) / sizeof(group_names[0]) ? group_names[g] : "?";
}

static const char *const class_names[ES_NCLASS] = {
	[ES_CLASS_P2P] = "point-to-point", [ES_CLASS_WAIT] = "waits and polls", [ES_CLASS_COLL] = "collectives",
	[ES_CLASS_ONE_SIDED] = "one-sided", [ES_CLASS_IO] = "I/O", [ES_CLASS_OTHER] = "other MPI",
	[ES_CLASS_PATHS] = "PATHS operations",
};

enum es_class es_op_class(unsigned op)
{
	const struct es_op_info *i = es_op_info(op);
	if (!i || i->group == ES_GROUP_PASTSET)
		return ES_CLASS_PATHS;
	if (i->kind == ES_KIND_WAIT || i->kind == ES_KIND_POLL)
		return ES_CLASS_WAIT;
	if (i->group == ES_GROUP_ONE_SIDED)
		return ES_CLASS_ONE_SIDED;
	if (i->group == ES_GROUP_IO)
		return ES_CLASS_IO;
	if (i->kind == ES_KIND_COLL || i->kind == ES_KIND_ICOLL) /* MPI_Comm_split too: it waits for all */
		return ES_CLASS_COLL;
	if (i->group == ES_GROUP_P2P || i->group == ES_GROUP_PERSISTENT)
		return ES_CLASS_P2P;
	return ES_CLASS_OTHER;
}

const char *es_class_name(enum es_class c)
{
	return (unsigned)c < ES_NCLASS ? class_names[c] : "?";
}

const struct es_op_info *es_mpi_ops(int *n)
{
	*n = es__mpi_nops;
	return es__mpi_ops;
}

/* --- live control's orders -------------------------------------------------------- */

const char *es_ctl_check(const struct es_ctl_rec *c, uint64_t applied, uint64_t orders)
{
	if (c->gen <= applied || c->gen - applied > orders)
		return "its number does not follow the order applied";
	if (c->paused > 1)
		return "not an order: paused is neither 0 nor 1";
	if (c->refused)
		return "not an order: it counts refusals, as only a rank's own word does";
	for (int op = 0; op < 256; op++)
		if (c->collect[op] > 1)
			return "not an order: what to record is neither 0 nor 1";
	size_t n = strnlen(c->list, sizeof(c->list));
	if (n == sizeof(c->list))
		return "not an order: its list does not end";
	for (size_t i = 0; i < n; i++)
		if (c->list[i] < 0x20 || c->list[i] > 0x7e)
			return "not an order: its list holds what is not text";
	return NULL;
}

void es_ctl_list(const struct es_ctl_rec *c, char out[241])
{
	size_t n = strnlen(c->list, sizeof(c->list));
	for (size_t i = 0; i < n; i++)
		out[i] = c->list[i] >= 0x20 && c->list[i] <= 0x7e ? c->list[i] : '?';
	out[n] = 0;
}

/* --- what a tuple says of a message ----------------------------------------------- */

static enum es_msg classify(unsigned code, bool done, bool recv_flag)
{
	switch (code) {
	case ES_OP_MPI_SEND: case ES_OP_MPI_BSEND: case ES_OP_MPI_SSEND: case ES_OP_MPI_RSEND:
		return done ? ES_MSG_NONE : ES_MSG_SEND;
	case ES_OP_MPI_SENDRECV: case ES_OP_MPI_SENDRECV_REPLACE:
		return done ? ES_MSG_RECV : ES_MSG_SEND;
	case ES_OP_MPI_ISEND: case ES_OP_MPI_IBSEND: case ES_OP_MPI_ISSEND: case ES_OP_MPI_IRSEND:
		return done ? ES_MSG_ISEND_DONE : ES_MSG_ISEND;
	case ES_OP_MPI_SEND_INIT: case ES_OP_MPI_BSEND_INIT: case ES_OP_MPI_SSEND_INIT: case ES_OP_MPI_RSEND_INIT:
		return done ? ES_MSG_ISEND_DONE : ES_MSG_NONE;
	case ES_OP_MPI_START: case ES_OP_MPI_STARTALL:
		return done ? ES_MSG_NONE : recv_flag ? ES_MSG_IRECV_REQ : ES_MSG_ISEND;
	case ES_OP_MPI_RECV: case ES_OP_MPI_MRECV:
		return done ? ES_MSG_NONE : ES_MSG_RECV;
	case ES_OP_MPI_IRECV: case ES_OP_MPI_IMRECV:
		return done ? ES_MSG_IRECV : ES_MSG_IRECV_REQ;
	case ES_OP_MPI_RECV_INIT:
		return done ? ES_MSG_IRECV : ES_MSG_NONE;
	default:
		return ES_MSG_NONE;
	}
}

enum es_msg es_msg_kind(unsigned op)
{
	if (op & ES_OP_UNFINISHED)
		return ES_MSG_NONE; /* a call not returned moved no message yet */
	return classify(es_op_code(op), op & ES_OP_DONE, op & ES_OP_RECV);
}

int es_message(unsigned op)
{
	if (op & ES_OP_FAILED)
		return 0;
	switch (es_msg_kind(op)) {
	case ES_MSG_SEND: case ES_MSG_ISEND: return 1;
	case ES_MSG_RECV: case ES_MSG_IRECV: return -1;
	default: return 0;
	}
}

bool es_in_mpi_call(unsigned op)
{
	unsigned code = es_op_code(op);
	return code > ES_OP_MPI_INIT && code != ES_OP_MPI_FINALIZE && code != ES_OP_MPI_PCONTROL &&
	       !(op & (ES_OP_DONE | ES_OP_UNFINISHED));
}

void es_mpi_board_name(char *buf, size_t len, const char *trace, const char *board)
{
	const char *k = !strncmp(trace, "mpi.thread", 10) ? trace + 10 : NULL;
	if (k && *k && strspn(k, "0123456789") == strlen(k))
		snprintf(buf, len, "%s%s", board, k);
	else if (len)
		*buf = 0;
}
