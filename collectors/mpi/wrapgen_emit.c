/* wrapgen_emit.c - the text wrapgen writes for each call of calls.def: its C entry point (recorded, its requests followed, its polls' streak) and its Fortran ones. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrapgen.h"

/* --- output helpers ------------------------------------------------------------- */

/* What is written and where, and the one way out on a malformed entry: the
 * reader (wrapgen.c) sets them and calls in here; this half never calls
 * back, so the two do not go round in a circle. */
const char *deffile;
FILE *out;

void die(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", deffile, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
}

/* Whether identifier w appears as a whole word in s. */
static int mentions(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; (p = strstr(p, w)); p += n) {
		int before = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = !(isalnum((unsigned char)p[n]) || p[n] == '_');
		if (before && after)
			return 1;
	}
	return 0;
}

static const char *or_default(const char *e, const char *d)
{
	return *e ? e : d;
}

static int is_status(const struct param *p)
{
	return !strcmp(p->base, "MPI_Status") && p->ptr == 1 && !p->array && !strcmp(p->name, "status");
}

static int has_status(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		if (is_status(&c->p[i]))
			return 1;
	return 0;
}

/* The f2c function for a handle type, or NULL if it is not one. */
static const char *f2c_of(const char *base)
{
	static const char *const map[][2] = {
		{ "MPI_Comm", "PMPI_Comm_f2c" }, { "MPI_Datatype", "PMPI_Type_f2c" },
		{ "MPI_Win", "PMPI_Win_f2c" }, { "MPI_Group", "PMPI_Group_f2c" },
		{ "MPI_Op", "PMPI_Op_f2c" }, { "MPI_Info", "PMPI_Info_f2c" },
		{ "MPI_Request", "PMPI_Request_f2c" }, { "MPI_Message", "PMPI_Message_f2c" },
		{ "MPI_File", "PMPI_File_f2c" } };
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(base, map[i][0]))
			return map[i][1];
	return NULL;
}

/* The C parameter list (decl) or argument list (with status -> st if subst). */
void c_params(const struct call *c)
{
	for (int i = 0; i < c->np; i++) {
		const struct param *p = &c->p[i];
		emit("%s%s%s%s%s", i ? ", " : "", p->decl, p->decl[strlen(p->decl) - 1] == '*' ? "" : " ",
		     p->name, p->array ? "[]" : "");
	}
	if (!c->np)
		emit("void");
}

static int is_statuses(const struct param *p);

/* subst: the call's own status (st) and statuses (sts_) for the caller's */
void c_args(const struct call *c, int subst)
{
	for (int i = 0; i < c->np; i++)
		emit("%s%s", i ? ", " : "", subst && is_status(&c->p[i]) ? "st"
					    : subst && is_statuses(&c->p[i]) && *c->reqs ? "sts_" : c->p[i].name);
}

static const char *f_type(const struct param *p)
{
	if (!strcmp(p->base, "void"))
		return "void *";
	if (!strcmp(p->base, "MPI_Aint"))
		return "MPI_Aint *";
	return "MPI_Fint *";
}

static void f_params(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		emit("%s f_%s, ", f_type(&c->p[i]), c->p[i].name);
	emit("MPI_Fint *ierr");
}

static void f_types(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		emit("%s, ", f_type(&c->p[i]));
	emit("MPI_Fint *");
}

static void f_args(const struct call *c, int subst)
{
	for (int i = 0; i < c->np; i++) {
		const struct param *p = &c->p[i];
		if (subst && is_status(p))
			emit("fst, ");
		else if (subst && is_statuses(p) && *c->reqs)
			emit("fsts_, ");
		else
			emit("f_%s, ", p->name);
	}
	emit("ierr");
}

/* --- the wrappers ------------------------------------------------------------------ */

static int has_param(const struct call *c, const char *name)
{
	for (int i = 0; i < c->np; i++)
		if (!strcmp(c->p[i].name, name))
			return 1;
	return 0;
}

static int is(const struct call *c, const char *kind)
{
	return !strcmp(c->kind, kind);
}

static int is_coll(const struct call *c)
{
	return is(c, "coll") || is(c, "icoll");
}

/* A blocking collective whose result needs every member's part (a
 * barrier, an all-reduce, -gather, -to-all), over the communicator it is
 * given: over every rank (MPI_COMM_WORLD or a dup), no rank leaves one
 * before every rank entered it, and they come in one order on every rank,
 * so every rank counts them alike and all reach a clock point made after
 * one (clocks.c, es_clocks_coll).  Rooted ones are not counted: a root may
 * leave a broadcast that a wrong program never makes elsewhere, and must
 * not wait in ours for it. */
static int world_coll(const struct call *c)
{
	static const char *const all[] = { "MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv",
					   "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter",
					   "MPI_Reduce_scatter_block", NULL };
	for (int i = 0; all[i]; i++)
		if (!strcmp(c->name, all[i]))
			return is(c, "coll") && has_param(c, "comm") && !*c->reqs;
	return 0;
}

/* The call's communicator or window as the expressions' c_, or "". */
static const char *cinfo_of(const struct call *c)
{
	static char buf[128];
	if (*c->cinfo)
		snprintf(buf, sizeof(buf), "%s", c->cinfo);
	else if (*c->win)
		snprintf(buf, sizeof(buf), "es_win_of(%s)", c->win);
	else if (*c->comm)
		snprintf(buf, sizeof(buf), "es_comm_of(%s)", c->comm);
	else if (has_param(c, "comm"))
		snprintf(buf, sizeof(buf), "es_comm_of(comm)");
	else
		buf[0] = 0;
	return buf;
}

/* How the made communicator's id is made: ES_MADE_*. */
static const char *made_of(const struct call *c)
{
	return !strcmp(c->made, "group") ? "ES_MADE_GROUP" : !strcmp(c->made, "inter") ? "ES_MADE_INTER"
											   : "ES_MADE_CHILD";
}

/* The parent's count moves on every member: calls collective over it. */
static int seeds(const struct call *c)
{
	return (*c->new_ && strcmp(c->made, "group") && strcmp(c->made, "inter")) || *c->newwin || *c->idup;
}

static const char *which_of(const struct call *c)
{
	return !strcmp(c->which, "index") ? "ES_WHICH_INDEX" : !strcmp(c->which, "some") ? "ES_WHICH_SOME"
											      : "ES_WHICH_ALL";
}

static int is_statuses(const struct param *p)
{
	return !strcmp(p->base, "MPI_Status") && !strcmp(p->name, "array_of_statuses");
}

static int has_statuses(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		if (is_statuses(&c->p[i]))
			return 1;
	return 0;
}

/* The notes' words besides the op: element, arg, comm. */
static void note_args(const struct call *c, char *buf, size_t len)
{
	const char *ci = cinfo_of(c);
	char comm[32];
	snprintf(comm, sizeof(comm), "%s", *ci ? "es_note_comm(c_, " : "es_note_comm(NULL, ");
	if (is_coll(c)) {
		snprintf(buf, len, "%s, n_ | (uint64_t)(uint32_t)sz_ << 32, %sES_NONE)",
			 or_default(c->note, "ES_NONE"), comm);
		return;
	}
	snprintf(buf, len, "%s, (uint32_t)(%s) | (uint64_t)(uint32_t)(%s) << 32, %s%s)",
		 is(c, "start") ? "ES_NONE" : is(c, "poll") && *c->reqs ? "(uint32_t)unk_"
					 : or_default(c->note, "ES_NONE"),
		 *c->notetag ? c->notetag : "0", *c->notesendtag ? c->notesendtag : "ES_NONE", comm,
		 *c->notedest ? c->notedest : "ES_NONE");
}

/* Everything the call's expressions read before the call, and after it. */
static void expr_text(const struct call *c, char *before, size_t bl, char *after, size_t al)
{
	snprintf(before, bl, "%s %s %s %s %s %s %s %s %s %s %s %s %s", c->hoist, c->note, c->notetag, c->notedest,
		 c->notesendtag, cinfo_of(c), c->n, c->hold, c->madetag,
		 is_coll(c) ? c->size : "", *c->chan && !strcmp(c->chan, "send") ? c->element : "",
		 *c->chan && !strcmp(c->chan, "send") ? c->arg : "", c->win);
	snprintf(after, al, "%s %s %s %s %s %s %s %s %s %s %s %s %s %s", c->element, c->size, c->arg,
		 c->done, c->new_, c->newwin, c->n, c->req, c->rsrc, c->rsize, c->rtag, c->wcount,
		 c->windex, c->after);
}

/* Fortran: the C value of every parameter an expression reads, by the
 * same name, so that the expressions read the same in both languages. */
static void f_locals(const struct call *c, const char *used, int after)
{
	for (int i = 0; i < c->np; i++) {
		const struct param *p = &c->p[i];
		const char *f2c = f2c_of(p->base);
		if (is_status(p) || is_statuses(p) || !mentions(used, p->name))
			continue;
		if (p->array && f2c)
			continue; /* arrays of handles: TYPES() and REQS() pass the Fortran ones */
		if (after) {
			if (f2c && p->ptr == 1)
				emit("\t%s_c = %s(*f_%s);\n", p->name, f2c, p->name);
			continue;
		}
		if (!strcmp(p->base, "void"))
			emit("\tconst void *%s = f_%s;\n", p->name, p->name);
		else if (!strcmp(p->base, "MPI_Aint") && !p->ptr && !p->array)
			emit("\tMPI_Aint %s = *f_%s;\n", p->name, p->name);
		else if (!strcmp(p->base, "int") && !p->ptr && !p->array)
			emit("\tint %s = (int)*f_%s;\n", p->name, p->name);
		else if (!strcmp(p->base, "int"))
			emit("\tint *%s = (int *)f_%s;\n", p->name, p->name);
		else if (f2c && !p->ptr)
			emit("\t%s %s = %s(*f_%s);\n", p->base, p->name, f2c, p->name);
		else if (f2c && p->ptr == 1)
			emit("\t%s %s_c = %s(*f_%s), *%s = &%s_c;\n", p->base, p->name, f2c, p->name,
			     p->name, p->name);
		else {
			fprintf(stderr, "%s:%d: %s: the Fortran entry cannot read '%s %s' in an expression\n",
				deffile, c->line, c->name, p->decl, p->name);
			exit(1);
		}
	}
}

/* The statuses a wait or test passes MPI (its own, when the caller
 * ignores them but a followed receive needs them), and those
 * es_wait_end/es_poll_completed read: "sts_, NULL" or "NULL, fsts_". */
static const char *status_args(const struct call *c, int fortran)
{
	if (has_statuses(c))
		return fortran ? "NULL, fsts_" : "sts_, NULL";
	if (has_status(c))
		return "st, NULL";
	return "NULL, NULL";
}

/* The tuple, and what follows from the call's success: channels, requests, communicators. */
static void body_after(const struct call *c, int fortran)
{
	const char *k = c->kind, *element = or_default(c->element, "ES_NONE");
	const char *size = or_default(c->size, "0"), *arg = is_coll(c) ? "n_" : or_default(c->arg, "0");
	const char *ci = cinfo_of(c), *serial = *ci ? "es_serial16(c_)" : "ES_COMM_NONE";
	int wait = is(c, "wait");
	if (wait) /* one end stamp for the call's tuple and the completions it made */
		emit("\tuint64_t t1_ = want_ || w_.followed ? es_now() : 0;\n"
		     "\tes_wait_end(&w_, rc, %s, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS ? (%s) : 0, %s, %s, t1_);\n",
		     which_of(c), c->wcount, or_default(c->windex, "NULL"), status_args(c, fortran));
	if (is(c, "start"))
		emit("\tes_started(%s, t0, REQS(%s), %s, rc);\n", c->op, c->reqs, c->n);
	else if (wait)
		emit("\tif (want_)\n\t\tes_write(%s, t0, t1_, unk_, 0, %s, ES_COMM_NONE, rc);\n", c->op, arg);
	else if (*c->rsrc) /* the send and the receive end together, in the call: a
			    * message is counted received only once its tuple is
			    * written, so that heartbeat, seeing the count, never takes
			    * the receiver for one that still waits (waits.c, rule R) */
		emit("\tuint32_t rsrc_ = %s, rtag_ = %s;\n"
		     "\tstruct es_num r_ = rc == MPI_SUCCESS ? es_chan(c_, rsrc_, rtag_, ES_CHAN_RECVD) : ES_NUM_NONE;\n"
		     "\tif (want_) {\n\t\tuint64_t t1_ = es_now();\n"
		     "\t\tes_write_msg(%s, t0, t1_, %s, %s, %s, %s, rc, m_);\n"
		     "\t\tes_write_msg(%s | ES_OP_DONE, t0, t1_, rsrc_, %s, rtag_, %s, rc, r_);\n\t}\n"
		     "\tes_chan_done(r_);\n", c->rsrc, c->rtag, c->op,
		     element, size, arg, serial, c->op, c->rsize, serial);
	else if (!strcmp(c->chan, "recv"))
		emit("\tes_end_recv(%s, t0, c_, %s, %s, %s, rc, want_);\n", c->op, element, size, arg);
	else if (*c->req) /* a request MPI completes within the call ends with it */
		emit("\tuint64_t t1_ = want_ ? es_end_msg(%s, t0, %s, %s, %s, %s, rc, %s) : 0;\n", c->op, element, size,
		     arg, serial, !strcmp(c->chan, "send") ? "m_" : "ES_NUM_NONE");
	else if (!strcmp(c->chan, "send"))
		emit("\tif (want_)\n\t\tes_end_msg(%s, t0, %s, %s, %s, %s, rc, m_);\n", c->op, element, size, arg, serial);
	else
		emit("\tif (want_)\n\t\tes_end(%s, t0, %s, %s, %s, %s, rc);\n", c->op, element, size, arg, serial);
	/* a message's request is followed whether or not its call is
	 * recorded (quiet), so that its message is counted */
	const char *state = is(c, "pinit") ? "ES_REQ_PERSISTENT" : "ES_REQ_ACTIVE";
	char how[96];
	if (!strcmp(c->chan, "req"))
		snprintf(how, sizeof(how), "want_ ? %s : %s | ES_REQ_QUIET", state, state);
	else
		snprintf(how, sizeof(how), "%s", state);
	if (*c->req)
		emit("\tif (%src == MPI_SUCCESS)\n\t\tes_req_made(%s, %s, %s, %s, %s, %s, %s, %s, %s);\n",
		     strcmp(c->chan, "req") ? "want_ && " : "", c->req, c->op, *ci ? "c_" : "NULL", element, arg, size,
		     is(c, "pinit") ? "0" : "t0", wait || *c->rsrc || is(c, "start") ? "0" : "t1_", how);
	if (*c->idup && !fortran)
		emit("\tif (want_ && rc == MPI_SUCCESS)\n\t\tes_req_idup(%s, c_, %s, seed_);\n", c->req, c->idup);
	if (*c->new_)
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_comm_made(c_, %s, %s, %s, %s);\n", seeds(c) ? "seed_" : "0",
		     c->new_, made_of(c), or_default(c->madetag, "0"));
	if (*c->newwin)
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_win_made(c_, seed_, %s);\n", c->newwin);
	if (*c->after)
		emit("\tif (rc == MPI_SUCCESS)\n\t\t%s;\n", c->after);
	(void)k;
}

/* What a poll of one request (MPI_Test) completed: its request as it was
 * before the call, kept in es_t.poll_req; "NULL" for a poll of an array,
 * even of one (MPI_Testany(1, ...)), whose handles the streak kept. */
static const char *single_of(const struct call *c)
{
	return !strcmp(c->n, "1") ? "&es_t.poll_req" : "NULL";
}

/* A poll of an array of requests (not MPI_Test's one): its streak's held
 * handles must be its array's (es_poll_moved). */
static int polls_array(const struct call *c)
{
	return *c->reqs && strcmp(c->n, "1");
}

/* A poll: a fruitless one counts in its streak, the one that completes
 * writes it and the completions of the requests it completed. */
static void poll_after(const struct call *c, int fortran, const char *begin_args)
{
	const char *ci = cinfo_of(c), *serial = *ci ? "es_serial16(c_)" : "ES_COMM_NONE";
	emit("\tif (rc != MPI_SUCCESS || (%s)) {\n\t\tuint64_t t1_ = es_now();\n", c->done);
	if (fortran) {
		char all[2300], before[800];
		expr_text(c, before, sizeof(before), all, sizeof(all));
		f_locals(c, all, 1);
		if (has_status(c))
			emit("\t\tif (rc == MPI_SUCCESS)\n\t\t\tPMPI_Status_f2c(fst, st);\n");
	}
	if (*c->reqs)
		emit("\t\tes_poll_completed(%d, %s, REQS(%s), %s, %s, rc == MPI_SUCCESS ? (%s) : 0, %s, %s, t1_);\n",
		     c->slot, single_of(c), c->reqs, c->n, which_of(c), c->wcount, or_default(c->windex, "NULL"),
		     status_args(c, fortran));
	if (*c->after)
		emit("\t\tif (rc == MPI_SUCCESS)\n\t\t\t%s;\n", c->after);
	emit("\t\tes_poll_end(%d, %s, t0, t1_, %s, %s, %s, rc);\n\t} else {\n"
	     "\t\tes_poll_miss(%d, t0, fresh_, want_, %s, %s);\n", c->slot, c->op,
	     or_default(c->element, "ES_NONE"), or_default(c->size, "0"), serial, c->slot, c->op,
	     begin_args);
	if (!fortran) /* the next poll may go the fast way (requests.h) */
		emit("\t\tes_poll_arm(%d, %s, %s);\n", c->slot, polls_array(c) ? c->reqs : "NULL",
		     polls_array(c) ? c->n : "0");
	emit("\t}\n");
}

/* The body shared by both languages; call is the expression that makes
 * the call and yields its return code. */
static void body(const struct call *c, int fortran, const char *call)
{
	char before[1000], after[1400], begin_args[1200];
	expr_text(c, before, sizeof(before), after, sizeof(after));
	const char *ci = cinfo_of(c);
	int poll = is(c, "poll"), wait = is(c, "wait"), coll = is_coll(c);
	if (!*c->note && *c->notetag)
		die(c->line, "%s: notetag without note", c->name);
	note_args(c, begin_args, sizeof(begin_args));
	emit("\tint rc;\n\tconst void *ra_ = es_t.ra;\n");
	/* a poll's status is read only after MPI filled it (rc == MPI_SUCCESS
	 * and it completed): not worth initialising on every fruitless poll */
	if (has_status(c) && !fortran)
		emit("\tMPI_Status st_%s, *st = status == MPI_STATUS_IGNORE ? &st_ : status;\n",
		     poll ? "" : " = ES_STATUS_INIT");
	if (has_status(c) && fortran)
		emit("\tMPI_Fint fst_[ES_F_STATUS_SIZE], *fst = f_status == MPI_F_STATUS_IGNORE ? fst_ : f_status;\n"
		     "\tMPI_Status st_%s, *st = &st_;\n", poll ? "" : " = ES_STATUS_INIT");
	if (fortran) {
		char all[2500];
		snprintf(all, sizeof(all), "%s %s", before, after);
		f_locals(c, all, 0);
	}
	if (*ci)
		emit("\tstruct es_comm *c_ = %s;\n\t(void)c_;\n", ci);
	emit("%s", c->hoist);
	if (*c->hold)
		emit("\t__typeof__(%s) held_ = %s;\n", c->hold, c->hold);
	emit("\tint want_ = es_collects(%s);\n", c->op); /* the entry point looked for an order */
	if (poll && fortran && *c->reqs && !strcmp(c->n, "1"))
		emit("\tes_t.poll_req = PMPI_Request_f2c(*f_%s);\n", c->reqs);
	if (poll && fortran) {
		/* inside a streak: a fruitless poll only counts itself (C: poll_NAME) */
		emit("\tstruct es_streak *s_ = &es_t.streak[%d];\n\tif (__builtin_expect(s_->polls != 0", c->slot);
		if (polls_array(c))
			emit(" && !es_poll_moved(%d, REQS(%s), %s)", c->slot, c->reqs, c->n);
		emit(", 1)) {\n");
		if (has_statuses(c))
			emit("\t\tMPI_Fint *fsts_ = f_array_of_statuses == MPI_F_STATUSES_IGNORE && s_->recv ? "
			     "es_poll_fstatuses(%s) : f_array_of_statuses;\n", c->n);
		emit("\t\tuint64_t t0 = s_->start;\n\t\tint fresh_ = 0%s;\n\t\trc = %s;\n\t\tes_t.ra = ra_;\n",
		     *c->reqs ? ", unk_ = 0" : "", call);
		poll_after(c, fortran, begin_args);
		emit("\t\treturn;\n\t}\n");
	}
	if (coll)
		emit("\tuint32_t n_ = want_ ? es_coll(c_, %s, %s) : 0;\n\tuint64_t sz_ = want_ ? (uint64_t)(%s) : 0;\n",
		     c->op, or_default(c->element, "ES_NONE"), or_default(c->size, "0"));
	if (seeds(c))
		emit("\tuint32_t seed_ = es_comm_seed(c_);\n\t(void)seed_;\n");
	if (wait) {
		emit("\tstruct es_wait w_;\n\tuint64_t t0 = es_now();\n"
		     "\tint unk_ = es_wait_begin(&w_, REQS(%s), %s, want_ ? t0 : 0);\n"
		     "\tif (want_ && es_elem())\n\t\tes_note_call(es_t.notes, t0, %s, (uint32_t)unk_, %s, ES_NONE);\n",
		     c->reqs, c->n, c->op, c->n); /* before the call: how many were given */
		if (has_statuses(c))
			emit(fortran ? "\tMPI_Fint *fsts_ = es_wait_fstatuses(&w_, f_array_of_statuses, %s);\n"
				     : "\tMPI_Status *sts_ = es_wait_statuses(&w_, array_of_statuses, %s);\n", c->n);
	} else if (poll) {
		emit("\tuint64_t t0 = 0;\n\tint fresh_ = es_poll_begin(%d, &t0);\n", c->slot);
		if (*c->reqs && !strcmp(c->n, "1") && !fortran)
			emit("\tes_t.poll_req = %s ? *%s : MPI_REQUEST_NULL; /* NULL: MPI refuses it */\n", c->reqs, c->reqs);
		if (polls_array(c)) /* inside a streak too, when its array moved */
			emit("\tint unk_ = fresh_ || es_poll_moved(%d, REQS(%s), %s) ? es_poll_hold(%d, REQS(%s), %s, t0) "
			     ": 0;\n\t(void)unk_;\n", c->slot, c->reqs, c->n, c->slot, c->reqs, c->n);
		else if (*c->reqs)
			emit("\tint unk_ = fresh_ ? es_poll_hold(%d, REQS(%s), %s, t0) : 0;\n\t(void)unk_;\n",
			     c->slot, c->reqs, c->n);
		if (has_statuses(c))
			emit(fortran ? "\tMPI_Fint *fsts_ = f_array_of_statuses == MPI_F_STATUSES_IGNORE && "
				       "es_t.streak[%d].recv ? es_poll_fstatuses(%s) : f_array_of_statuses;\n"
				     : "\tMPI_Status *sts_ = array_of_statuses == MPI_STATUSES_IGNORE && "
				       "es_t.streak[%d].recv ? es_poll_statuses(%s) : array_of_statuses;\n",
			     c->slot, c->n);
	} else if (is(c, "start")) {
		emit("\tuint64_t t0 = want_ ? es_begin(%s, %s) : es_now();\n", c->op, begin_args);
	} else {
		emit("\tuint64_t t0 = want_ ? es_begin(%s, %s) : 0;\n", c->op, begin_args);
	}
	/* a send is counted before its call, recorded or not */
	if (!strcmp(c->chan, "send"))
		emit("\tstruct es_num m_ = es_chan_send(c_, %s, %s);\n", c->element, or_default(c->arg, "0"));
	emit("\trc = %s;\n\tes_t.ra = ra_;\n", call);
	if (poll) {
		poll_after(c, fortran, begin_args);
		return;
	}
	if (fortran) {
		f_locals(c, after, 1);
		if (has_status(c))
			emit("\tif (rc == MPI_SUCCESS)\n\t\tPMPI_Status_f2c(fst, st);\n");
	}
	body_after(c, fortran);
}

/* When the call is not recorded: straight through, unless requests or
 * communicators must be followed all the same. */
static const char *pass_test(const struct call *c)
{
	static char buf[160];
	if (*c->new_ || *c->newwin || *c->idup)
		snprintf(buf, sizeof(buf), "!es_tracing()");
	else if (*c->chan) /* messages are counted while traced */
		snprintf(buf, sizeof(buf), "!es_want(%s) && !es_tracing()", c->op);
	else if (*c->reqs || *c->hold)
		snprintf(buf, sizeof(buf), "!es_want(%s) && !es_route.reqs", c->op);
	else if (is(c, "pinit"))
		snprintf(buf, sizeof(buf), "!es_want(%s) && !es_collects(ES_OP_MPI_START) && !es_collects(ES_OP_MPI_STARTALL)",
			 c->op);
	else
		snprintf(buf, sizeof(buf), "!es_want(%s)", c->op);
	return buf;
}

/* The text of the call the body makes: PRE, the arguments, POST. */
static void call_text(char *buf, size_t len, const char *pre, void (*args)(const struct call *, int),
		      const struct call *c, const char *post)
{
	FILE *save = out;
	char *text = NULL;
	size_t n = 0;
	out = open_memstream(&text, &n);
	emit("%s", pre);
	args(c, 1);
	emit("%s", post);
	fclose(out);
	out = save;
	snprintf(buf, len, "%s", text);
	free(text);
}

/*
 * A recorded poll inside a streak whose key matches (requests.h, "The fast
 * path"): a fruitless one only counts itself.  Programs like hpcc's
 * RandomAccess spin on MPI_Testany at 30 ns a turn, so this is inlined
 * into the entry point and keeps live across MPI's call only what it
 * reads after it (the flag); the poll that completes goes out of line to
 * done_NAME, given everything again.  MPI_Test's request as it was before
 * the call goes through es_t.poll_req (a poll made from inside MPI's call,
 * a generalized request's callback, may overwrite it: the completing poll
 * then looks for that one's handle, which it does not find, and says the
 * completion is unknown).  tests/bench/mpi_cost times it: a fruitless
 * MPI_Testany on four receives.
 */
static void c_streak(const struct call *c)
{
	char call[1024], pre[160];
	const char *ci = cinfo_of(c);
	/* done_NAME's body first: it is given only the parameters it reads,
	 * which are all the fast path keeps across MPI's call */
	char *text = NULL;
	size_t len = 0;
	FILE *save = out;
	out = open_memstream(&text, &len);
	emit("\tuint64_t t1_ = es_now();\n");
	if (*ci)
		emit("\tstruct es_comm *c_ = %s;\n\t(void)c_;\n", ci);
	emit("%s", c->hoist);
	if (*c->reqs)
		emit("\tes_poll_completed(%d, %s, REQS(%s), %s, %s, rc == MPI_SUCCESS ? (%s) : 0, %s, %s, t1_);\n",
		     c->slot, single_of(c), c->reqs, c->n, which_of(c), c->wcount, or_default(c->windex, "NULL"),
		     status_args(c, 0));
	if (*c->after)
		emit("\tif (rc == MPI_SUCCESS)\n\t\t%s;\n", c->after);
	emit("\tes_poll_done(%d, %s, t1_, %s, %s, %s, rc);\n\treturn rc;\n}\n", c->slot, c->op,
	     or_default(c->element, "ES_NONE"), or_default(c->size, "0"), *ci ? "es_serial16(c_)" : "ES_COMM_NONE");
	fclose(out);
	out = save;
	if (!text)
		die(c->line, "out of memory");
	int used[MAXP] = { 0 };
	emit("\nstatic __attribute__((noinline, cold)) int done_%s(int rc", c->name);
	for (int i = 0; i < c->np; i++)
		if ((used[i] = mentions(text, c->p[i].name)))
			emit(", %s%s%s%s", c->p[i].decl, c->p[i].decl[strlen(c->p[i].decl) - 1] == '*' ? "" : " ",
			     c->p[i].name, c->p[i].array ? "[]" : "");
	int st_used = has_status(c) && mentions(text, "st"), sts_used = has_statuses(c) && mentions(text, "sts_");
	emit("%s%s)\n{\n%s", st_used ? ", MPI_Status *st" : "", sts_used ? ", MPI_Status *sts_" : "", text);
	free(text);

	emit("\nstatic inline __attribute__((always_inline)) int poll_%s(", c->name);
	c_params(c);
	emit(")\n{\n");
	if (has_status(c))
		emit("\tMPI_Status *st = status == MPI_STATUS_IGNORE ? &es_t.poll_status : status;\n");
	if (*c->reqs && !strcmp(c->n, "1")) /* NULL: MPI refuses it (a branch never taken costs least here) */
		emit("\tes_t.poll_req = __builtin_expect(%s != NULL, 1) ? *%s : MPI_REQUEST_NULL;\n", c->reqs, c->reqs);
	if (has_statuses(c))
		emit("\tMPI_Status *sts_ = array_of_statuses == MPI_STATUSES_IGNORE && es_t.streak[%d].recv ? "
		     "es_poll_statuses(%s) : array_of_statuses;\n", c->slot, c->n);
	snprintf(pre, sizeof(pre), "((__typeof__(&P%s))es_route.pmpi[%s])(", c->name, c->op);
	call_text(call, sizeof(call), pre, c_args, c, ")");
	emit("\tint rc = %s;\n\tif (__builtin_expect(rc == MPI_SUCCESS && !(%s), 1)) {\n"
	     "\t\tes_t.streak[%d].polls++;\n\t\treturn MPI_SUCCESS;\n\t}\n"
	     "\tes_t.ra = __builtin_return_address(0);\n\treturn done_%s(rc", call, c->done, c->slot, c->name);
	for (int i = 0; i < c->np; i++)
		if (used[i])
			emit(", %s", c->p[i].name);
	emit("%s%s);\n}\n", st_used ? ", st" : "", sts_used ? ", sts_" : "");
}

/*
 * Each entry point is two functions: the one MPI's name calls, which only
 * decides and tail-calls (so a call that is not recorded costs two loads
 * and a jump, no stack frame), and the recording body, out of line.  The
 * deciding ones sit together in .text.es_entry and read only es_route
 * (record.h says why): the pass-through jumps through es_route.pmpi, not
 * through the PLT and the GOT, pages of their own.  A poll's entry point
 * first compares its streak's key (requests.h, "The fast path"), and inside
 * a streak makes MPI's call itself.
 */
void c_wrapper(const struct call *c)
{
	char call[1024], pre[64];
	int poll = is(c, "poll");
	emit("\nstatic __attribute__((noinline)) int rec_%s(", c->name);
	c_params(c);
	emit(")\n{\n");
	snprintf(pre, sizeof(pre), "P%s(", c->name);
	call_text(call, sizeof(call), pre, c_args, c, ")");
	body(c, 0, call);
	emit("\treturn rc;\n}\n");
	if (poll)
		c_streak(c);
	if (world_coll(c)) {
		/* a blocking collective on MPI_COMM_WORLD, counted on every rank
		 * alike, recorded or not: rank 0 may have asked for a clock point
		 * after it (clocks.c) */
		emit("\nstatic __attribute__((noinline)) int world_%s(", c->name);
		c_params(c);
		emit(")\n{\n\tint rc = %s ? ((__typeof__(&P%s))es_route.pmpi[%s])(", pass_test(c), c->name, c->op);
		c_args(c, 0);
		emit(") : rec_%s(", c->name);
		c_args(c, 0);
		emit(");\n\tes_clocks_coll(comm);\n\treturn rc;\n}\n");
	}
	emit("\nES_ENTRY int %s(", c->name);
	c_params(c);
	emit(")\n{\n");
	if (poll) {
		/* inside a streak whose key matches, a poll neither looks for an
		 * order nor decides: it touches one line of ours (the streak)
		 * beside its code and es_route's pointer */
		emit("\tif (__builtin_expect(es_t.streak[%d].key == ", c->slot);
		if (polls_array(c))
			emit("es_poll_key(%s, %s)", c->reqs, c->n);
		else
			emit("ES_POLL_ONE");
		emit(", 1))\n\t\treturn poll_%s(", c->name);
		c_args(c, 0);
		emit(");\n");
	}
	if (world_coll(c)) {
		emit("\tif (es_route.tracing) {\n"
		     "\t\tes_t.ra = __builtin_return_address(0);\n\t\treturn world_%s(", c->name);
		c_args(c, 0);
		emit(");\n\t}\n");
	}
	emit("\tif (%s)\n\t\treturn ((__typeof__(&P%s))es_route.pmpi[%s])(", pass_test(c), c->name, c->op);
	c_args(c, 0);
	emit(");\n\tes_t.ra = __builtin_return_address(0);\n\treturn rec_%s(", c->name);
	c_args(c, 0);
	emit(");\n}\n");
}

/* Whether a call takes a choice buffer (void *): MPICH's mpi_f08 routine
 * for it (NAME_f08ts) calls the C entry point, which records it. */
static int has_buffer(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		if (!strcmp(c->p[i].base, "void"))
			return 1;
	return 0;
}

/* The Fortran entry point's work once it has MPI's routine (real): shared
 * by every binding's name, inlined into each so that es_t.ra is its caller. */
static void f_go(const struct call *c)
{
	emit("static inline __attribute__((always_inline)) void go_f_%s(f_%s_t *real, ", c->name, c->name);
	f_params(c);
	emit(")\n{\n\tif (%s) {\n\t\treal(", pass_test(c));
	f_args(c, 0);
	if (world_coll(c)) { /* as world_NAME does in C */
		emit(");\n\t} else {\n\t\tes_t.ra = __builtin_return_address(0);\n\t\trec_f_%s(real, ", c->name);
		f_args(c, 0);
		emit(");\n\t}\n\tif (es_route.tracing)\n\t\tes_clocks_coll_f(*f_comm);\n}\n");
	} else {
		emit(");\n\t\treturn;\n\t}\n\tes_t.ra = __builtin_return_address(0);\n\trec_f_%s(real, ", c->name);
		f_args(c, 0);
		emit(");\n}\n");
	}
}

/* MPICH's mpi_f08 routines of calls without a buffer (NAME_f08) call
 * PMPI_NAME, never our C entry point: they get their own, which calls
 * MPICH's.  Their ierror is OPTIONAL (NULL when left out), and their
 * MPI_STATUS(ES)_IGNORE are objects of the f08 module (es_f08_ignore). */
static void f08_mpich(const struct call *c)
{
	if (has_buffer(c))
		return;
	emit("#if defined(MPICH_VERSION)\nstatic void *f08_%s_real;\nstatic void f08_%s(", c->name, c->name);
	f_params(c);
	emit(")\n{\n\tMPI_Fint ierr_;\n\tif (!ierr)\n\t\tierr = &ierr_;\n");
	for (int i = 0; i < c->np; i++)
		if (is_status(&c->p[i]) || is_statuses(&c->p[i]))
			emit("\tif (es_f08_ignore(f_%s, %d))\n\t\tf_%s = %s;\n", c->p[i].name, is_statuses(&c->p[i]),
			     c->p[i].name, is_statuses(&c->p[i]) ? "MPI_F_STATUSES_IGNORE" : "MPI_F_STATUS_IGNORE");
	emit("\tf_%s_t *real = (f_%s_t *)es_f08_real(&f08_%s_real, \"%s\");\n"
	     "\tif (!real) {\n\t\t*ierr = MPI_ERR_INTERN;\n\t\treturn;\n\t}\n\tgo_f_%s(real, ", c->name, c->name,
	     c->name, c->lower, c->name);
	f_args(c, 0);
	emit(");\n}\nvoid mpi_%s_f08_(", c->lower);
	f_types(c);
	emit(") ES_F_ALIAS(f08_%s);\n#endif\n", c->name);
}

void f_wrapper(const struct call *c)
{
	char call[1024];
	emit("\ntypedef void f_%s_t(", c->name);
	f_types(c);
	emit(");\nstatic void *f_%s_real;\n", c->name);
	emit("static __attribute__((noinline)) void rec_f_%s(f_%s_t *real, ", c->name, c->name);
	f_params(c);
	emit(")\n{\n");
	call_text(call, sizeof(call), "(real(", f_args, c, "), (int)*ierr)");
	body(c, 1, call);
	emit("}\n\n");
	f_go(c);
	emit("\nstatic void f_%s(", c->name);
	f_params(c);
	emit(")\n{\n\tf_%s_t *real = (f_%s_t *)es_f_real(&f_%s_real, \"%s\");\n"
	     "\tif (!real) {\n\t\t*ierr = MPI_ERR_INTERN;\n\t\treturn;\n\t}\n\tgo_f_%s(real, ", c->name, c->name, c->name,
	     c->lower, c->name);
	f_args(c, 0);
	emit(");\n}\n");
	/* every spelling compilers give the Fortran name, and Open MPI's
	 * ompi_NAME_f, which the mpi_f08 module calls */
	const char *spell[6][3] = { { "mpi_", c->lower, "_" }, { "mpi_", c->lower, "__" },
				    { "mpi_", c->lower, "" }, { "MPI_", c->upper, "" },
				    { "ompi_", c->lower, "_f" }, { "pmpi_", c->lower, "_" } };
	for (int i = 0; i < (*c->f08 ? 6 : 5); i++) {
		emit("void %s%s%s(", spell[i][0], spell[i][1], spell[i][2]);
		f_types(c);
		emit(") ES_F_MPI_ALIAS(f_%s);\n", c->name);
	}
	f08_mpich(c);
}
