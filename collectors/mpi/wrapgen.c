/* wrapgen.c - writes libescollect's C and Fortran MPI wrappers and the op-code table from calls.def. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Usage: wrapgen calls.def OUTDIR
 * Writes OUTDIR/es_mpi_ops.h, OUTDIR/es_mpi_ops.c and OUTDIR/wrappers.c.
 * The format of calls.def is described at its top.  A malformed entry is
 * reported as FILE:LINE: what was expected, and nothing is written.
 */

#define MAXP 16
#define MAXC 256

struct param {
	char decl[96];  /* as written, without the name or [] */
	char base[32];  /* the type without const and '*' */
	char name[40];
	int ptr;        /* number of '*' */
	int array;      /* written with [] */
};

struct call {
	char name[48];  /* MPI_Send */
	char op[56];    /* ES_OP_MPI_SEND */
	char lower[48]; /* send */
	char upper[48]; /* SEND */
	int code, line, slot;
	char group[24], kind[12];
	int np;
	struct param p[MAXP];
	/* the expressions, "" when not given */
	char note[200], notetag[80], element[200], size[300], arg[200], done[200];
	char comm[80], win[80], new_[80], newwin[80], reqs[80], n[80], f08[16];
};

static struct call calls[MAXC];
static int ncalls, npolls;
static const char *deffile;

static void die(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", deffile, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static void copy(char *dst, size_t len, const char *src, int line, const char *what)
{
	if (strlen(src) >= len)
		die(line, "%s too long: '%s'", what, src);
	strcpy(dst, src);
}

/* "const int recvcounts[]" -> decl "const int", base int, name, array */
static void parse_param(struct call *c, char *text)
{
	if (c->np == MAXP)
		die(c->line, "more than %d parameters", MAXP);
	struct param *p = &c->p[c->np++];
	char *s = trim(text);
	char *br = strstr(s, "[]");
	if (br) {
		p->array = 1;
		*br = 0;
		s = trim(s);
	}
	char *e = s + strlen(s);
	while (e > s && (isalnum((unsigned char)e[-1]) || e[-1] == '_'))
		e--;
	if (!*e || e == s)
		die(c->line, "%s: parameter '%s': expected TYPE NAME", c->name, text);
	copy(p->name, sizeof(p->name), e, c->line, "parameter name");
	*e = 0;
	copy(p->decl, sizeof(p->decl), trim(s), c->line, "parameter type");
	char tmp[96], *t = tmp;
	strcpy(tmp, p->decl);
	if (!strncmp(t, "const ", 6))
		t += 6;
	for (char *q = t; *q; q++)
		if (*q == '*') {
			p->ptr++;
			*q = ' ';
		}
	copy(p->base, sizeof(p->base), trim(t), c->line, "parameter type");
}

static void parse_fields(struct call *c, char *text)
{
	struct { const char *key; char *dst; size_t len; } keys[] = {
		{ "note", c->note, sizeof(c->note) }, { "notetag", c->notetag, sizeof(c->notetag) },
		{ "element", c->element, sizeof(c->element) },
		{ "size", c->size, sizeof(c->size) }, { "arg", c->arg, sizeof(c->arg) },
		{ "done", c->done, sizeof(c->done) }, { "comm", c->comm, sizeof(c->comm) },
		{ "win", c->win, sizeof(c->win) }, { "new", c->new_, sizeof(c->new_) },
		{ "newwin", c->newwin, sizeof(c->newwin) }, { "reqs", c->reqs, sizeof(c->reqs) },
		{ "n", c->n, sizeof(c->n) }, { "f08", c->f08, sizeof(c->f08) } };
	char *save, *f;
	for (f = strtok_r(text, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		f = trim(f);
		if (!*f)
			continue;
		char *eq = strchr(f, '=');
		if (!eq)
			die(c->line, "%s: '%s': expected key=expression", c->name, f);
		*eq = 0;
		char *k = trim(f), *v = trim(eq + 1);
		size_t i;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i].key))
				break;
		if (i == sizeof(keys) / sizeof(keys[0]))
			die(c->line, "%s: unknown key '%s' (expected note, notetag, element, size, arg, done, "
			    "comm, win, new, newwin, reqs, n or f08)", c->name, k);
		copy(keys[i].dst, keys[i].len, v, c->line, k);
	}
}

static const char *const kinds[] = { "timed", "coll", "icoll", "poll", "wait", "pinit", "start",
				     "manual", NULL };
static const char *const groups[] = { "setup", "point-to-point", "collectives", "one-sided",
				      "persistent", "communicators", NULL };
static const char *const group_enums[] = { "ES_GROUP_SETUP", "ES_GROUP_P2P", "ES_GROUP_COLLECTIVES",
					    "ES_GROUP_ONE_SIDED", "ES_GROUP_PERSISTENT",
					    "ES_GROUP_COMMUNICATORS" };

static int index_of(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], w))
			return i;
	return -1;
}

/* One entry: header, parameter list, fields (already joined into one line). */
static void parse_entry(char *text, int line)
{
	if (ncalls == MAXC)
		die(line, "more than %d calls", MAXC);
	struct call *c = &calls[ncalls++];
	memset(c, 0, sizeof(*c));
	c->line = line;
	char *open = strchr(text, '('), *close = open ? strchr(open, ')') : NULL;
	if (!open || !close)
		die(line, "expected the C parameters in parentheses after the header");
	*open = 0;
	*close = 0;
	char name[64], group[64], kind[64];
	int code;
	if (sscanf(text, "%63s %d %63s %63s", name, &code, group, kind) != 4)
		die(line, "expected MPI_NAME CODE GROUP KIND");
	copy(c->name, sizeof(c->name), name, line, "name");
	if (strncmp(name, "MPI_", 4))
		die(line, "'%s': expected a name starting MPI_", name);
	if (code < 32 || code > 255)
		die(line, "%s: code %d: expected 32..255", name, code);
	for (int i = 0; i < ncalls - 1; i++) {
		if (calls[i].code == code)
			die(line, "%s: code %d is %s's already", name, code, calls[i].name);
		if (!strcmp(calls[i].name, name))
			die(line, "%s listed twice", name);
	}
	c->code = code;
	if (index_of(groups, group) < 0)
		die(line, "%s: group '%s': expected setup, point-to-point, collectives, one-sided, "
		    "persistent or communicators", name, group);
	if (index_of(kinds, kind) < 0)
		die(line, "%s: kind '%s': expected timed, coll, icoll, poll, wait, pinit, start or "
		    "manual", name, kind);
	strcpy(c->group, group);
	strcpy(c->kind, kind);
	snprintf(c->op, sizeof(c->op), "ES_OP_");
	for (size_t i = 0; name[i]; i++)
		c->op[6 + i] = (char)toupper((unsigned char)name[i]);
	for (size_t i = 0; name[4 + i]; i++) {
		c->lower[i] = (char)tolower((unsigned char)name[4 + i]);
		c->upper[i] = (char)toupper((unsigned char)name[4 + i]);
	}
	char *save, *p;
	for (p = strtok_r(open + 1, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (*trim(p))
			parse_param(c, p);
	parse_fields(c, close + 1);
	c->slot = -1;
	if (!strcmp(kind, "poll"))
		c->slot = npolls++;
	if ((!strcmp(kind, "wait") || !strcmp(kind, "start")) && (!*c->reqs || !*c->n))
		die(line, "%s: a %s call needs reqs= and n=", name, kind);
	if (!strcmp(kind, "poll") && !*c->done)
		die(line, "%s: a poll needs done=", name);
	if (*c->f08 && strcmp(c->f08, "pmpi"))
		die(line, "%s: f08=%s: expected f08=pmpi", name, c->f08);
}

static void read_def(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		perror(file);
		exit(1);
	}
	char line[1024], entry[4096] = "";
	int n = 0, start = 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		char *s = line;
		s[strcspn(s, "\n")] = 0;
		if (*trim(s) == '#' || !*trim(s))
			continue;
		if (!isspace((unsigned char)s[0])) { /* a header line starts an entry */
			if (*entry)
				parse_entry(entry, start);
			entry[0] = 0;
			start = n;
		} else if (!*entry) {
			die(n, "an indented line outside an entry");
		}
		if (strlen(entry) + strlen(s) + 2 >= sizeof(entry))
			die(n, "entry too long");
		strcat(entry, " ");
		strcat(entry, trim(s));
	}
	if (*entry)
		parse_entry(entry, start);
	fclose(f);
}

/* --- output helpers ------------------------------------------------------------- */

static FILE *out;

static void emit(const char *fmt, ...)
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
		{ "MPI_Request", "PMPI_Request_f2c" }, { "MPI_Message", "PMPI_Message_f2c" } };
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(base, map[i][0]))
			return map[i][1];
	return NULL;
}

/* The C parameter list (decl) or argument list (with status -> st if subst). */
static void c_params(const struct call *c)
{
	for (int i = 0; i < c->np; i++) {
		const struct param *p = &c->p[i];
		emit("%s%s%s%s%s", i ? ", " : "", p->decl, p->decl[strlen(p->decl) - 1] == '*' ? "" : " ",
		     p->name, p->array ? "[]" : "");
	}
	if (!c->np)
		emit("void");
}

static void c_args(const struct call *c, int subst)
{
	for (int i = 0; i < c->np; i++)
		emit("%s%s", i ? ", " : "", subst && is_status(&c->p[i]) ? "st" : c->p[i].name);
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
	for (int i = 0; i < c->np; i++)
		emit("%s%s, ", subst && is_status(&c->p[i]) ? "" : "f_", subst && is_status(&c->p[i]) ?
		     "fst" : c->p[i].name);
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

/* The communicator or window the notes name while the call waits: a
 * collective's, or the one a noted peer's rank is in. */
static const char *note_comm(const struct call *c)
{
	static char buf[100];
	if (!strcmp(c->kind, "coll") || !strcmp(c->kind, "icoll"))
		snprintf(buf, sizeof(buf), "es_handle(%s)", *c->win ? c->win : or_default(c->comm, "comm"));
	else if (*c->note && has_param(c, "comm"))
		snprintf(buf, sizeof(buf), "es_handle(comm)");
	else if (*c->note && has_param(c, "win"))
		snprintf(buf, sizeof(buf), "es_handle(win)");
	else
		snprintf(buf, sizeof(buf), "0");
	return buf;
}

/* Everything the call's expressions read before the call, and after it. */
static void expr_text(const struct call *c, char *before, size_t bl, char *after, size_t al)
{
	snprintf(before, bl, "%s %s %s %s %s %s %s", c->note, c->notetag, note_comm(c), c->comm, c->win,
		 c->n,
		 !strcmp(c->kind, "coll") || !strcmp(c->kind, "icoll") ? *c->comm || *c->win ? "" : "comm" : "");
	snprintf(after, al, "%s %s %s %s %s %s %s %s", c->element, c->size, c->arg, c->done, c->new_,
		 c->newwin, c->n, !strcmp(c->kind, "icoll") || !strcmp(c->kind, "pinit") ? "request" : "");
}

/* Fortran: the C value of every parameter an expression reads, by the
 * same name, so that the expressions read the same in both languages. */
static void f_locals(const struct call *c, const char *used, int after)
{
	for (int i = 0; i < c->np; i++) {
		const struct param *p = &c->p[i];
		const char *f2c = f2c_of(p->base);
		if (is_status(p) || !mentions(used, p->name))
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

/* The body shared by both languages; call is the expression that makes
 * the call and yields its return code. */
static void body(const struct call *c, int fortran, const char *call)
{
	char before[800], after[1400];
	expr_text(c, before, sizeof(before), after, sizeof(after));
	char begin_args[400]; /* what the notes say besides the op */
	const char *k = c->kind, *note = or_default(c->note, "ES_NONE");
	const char *element = or_default(c->element, "ES_NONE"), *size = or_default(c->size, "0");
	const char *arg = or_default(c->arg, "0");
	int st = has_status(c);
	int reqs = *c->reqs != 0;
	int wait = !strcmp(k, "wait"), poll = !strcmp(k, "poll"), pinit = !strcmp(k, "pinit");
	int coll = !strcmp(k, "coll") || !strcmp(k, "icoll");
	if (!*c->note && *c->notetag)
		die(c->line, "%s: notetag without note", c->name);
	snprintf(begin_args, sizeof(begin_args), "%s, %s%s%s, %s",
		 !strcmp(k, "start") ? "ES_NONE" : note, coll ? "n_" : *c->notetag ? "(uint32_t)(" : "0",
		 coll ? "" : c->notetag, !coll && *c->notetag ? ")" : "", note_comm(c));

	emit("\tint rc;\n");
	/* a poll's status is read only after MPI filled it (rc == MPI_SUCCESS
	 * and it completed): not worth initialising on every fruitless poll */
	if (st && !fortran)
		emit("\tMPI_Status st_%s, *st = status == MPI_STATUS_IGNORE ? &st_ : status;\n",
		     poll ? "" : " = ES_STATUS_INIT");
	if (st && fortran)
		emit("\tMPI_Fint fst_[ES_F_STATUS_SIZE], *fst = f_status == MPI_F_STATUS_IGNORE ? fst_ : f_status;\n"
		     "\tMPI_Status st_%s, *st = &st_;\n", poll ? "" : " = ES_STATUS_INIT");
	if (fortran) {
		char all[2300];
		snprintf(all, sizeof(all), "%s %s", before, after);
		f_locals(c, all, 0);
	}
	if (poll && fortran) {
		/* inside a streak, with no nonblocking collective to look for: a
		 * fruitless poll only counts itself (C: poll_NAME, see c_wrapper) */
		emit("\tstruct es_streak *s_ = &es_t.streak[%d];\n"
		     "\tif (__builtin_expect(s_->polls && !es_nbc_pending() && es_want(%s), 1)) {\n"
		     "\t\trc = %s;\n"
		     "\t\tif (__builtin_expect(rc == MPI_SUCCESS && !(%s), 1)) {\n"
		     "\t\t\ts_->polls++;\n"
		     "\t\t\treturn%s;\n\t\t}\n", c->slot, c->op, call, c->done, fortran ? "" : " rc");
		f_locals(c, after, 1);
		if (st)
			emit("\t\tif (rc == MPI_SUCCESS)\n\t\t\tPMPI_Status_f2c(fst, st);\n");
		emit("\t\tes_poll_end(%d, %s, s_->start, %s, %s, rc);\n\t\treturn;\n\t}\n", c->slot, c->op,
		     element, size);
	}
	if (reqs)
		emit("\tstruct es_reqs rq_;\n\tes_reqs_before(&rq_, REQS(%s), %s);\n", c->reqs, c->n);
	if (coll)
		emit("\tuint32_t n_ = %s(%s);\n", *c->win ? "es_win_coll" : "es_coll",
		     *c->win ? c->win : or_default(c->comm, "comm"));
	if (wait || pinit)
		emit("\tint want_ = es_want(%s);\n\tuint64_t t0 = want_ ? es_begin(%s, %s) : 0;\n", c->op,
		     c->op, begin_args);
	else if (poll)
		emit("\tint want_ = es_want(%s);\n\tuint64_t t0 = 0;\n"
		     "\tint fresh_ = want_ ? es_poll_begin(%d, &t0) : 0;\n", c->op, c->slot);
	else
		emit("\tuint64_t t0 = es_begin(%s, %s);\n", c->op, begin_args);
	emit("\trc = %s;\n", call);
	if (reqs)
		emit("\tes_reqs_after(&rq_, REQS(%s));\n", c->reqs);
	if (fortran && !poll) {
		f_locals(c, after, 1);
		if (st)
			emit("\tif (rc == MPI_SUCCESS)\n\t\tPMPI_Status_f2c(fst, st);\n");
	}
	if (poll) {
		emit("\tif (want_ && (rc != MPI_SUCCESS || (%s))) {\n", c->done);
		if (fortran) {
			f_locals(c, after, 1);
			if (st)
				emit("\t\tif (rc == MPI_SUCCESS)\n\t\t\tPMPI_Status_f2c(fst, st);\n");
		}
		emit("\t\tes_poll_end(%d, %s, t0, %s, %s, rc);\n\t} else if (want_) {\n"
		     "\t\tes_poll_miss(%d, t0, fresh_, %s, %s);\n\t}\n", c->slot, c->op, element, size, c->slot,
		     c->op, begin_args);
	} else if (!strcmp(k, "start")) {
		emit("\tes_started(%s, t0, REQS(%s), %s, rc);\n", c->op, c->reqs, c->n);
	} else {
		emit("%ses_end(%s, t0, %s, %s, %s, rc);\n", wait || pinit ? "\tif (want_)\n\t\t" : "\t",
		     c->op, element, size, coll ? "n_" : arg);
	}
	if (pinit)
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_persist(*request, %s, %s, %s, %s);\n", c->op,
		     element, size, arg);
	if (!strcmp(k, "icoll"))
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_nbc_started(*request, %s, t0, %s, %s, n_);\n", c->op,
		     element, size);
	if (*c->new_)
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_comm_met(%s);\n", c->new_);
	if (*c->newwin)
		emit("\tif (rc == MPI_SUCCESS)\n\t\tes_win_met(%s);\n", c->newwin);
}

/* When the call is not recorded: straight through (waits and tests still
 * look for nonblocking collectives they complete, while there are any). */
static const char *pass_test(const struct call *c)
{
	static char buf[128];
	if (*c->reqs && strcmp(c->kind, "start"))
		snprintf(buf, sizeof(buf), "!es_want(%s) && !es_nbc_pending()", c->op);
	else if (!strcmp(c->kind, "pinit"))
		snprintf(buf, sizeof(buf), "!es_want(%s) && !es_persist_wanted()", c->op);
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
 * A recorded poll inside a streak, with no nonblocking collective to look
 * for: a fruitless one only counts itself.  Programs like hpcc's
 * RandomAccess spin on MPI_Testany at 30 ns a turn, so this is its own
 * small function, not the fast branch of rec_NAME, whose frame holds the
 * request bookkeeping: it keeps only what the fruitless poll reads live
 * across MPI's call (the status goes through es_t.poll_st), and returns
 * MPI_SUCCESS as a constant.  tests/bench/mpi_cost times it: a fruitless
 * MPI_Testany on four receives, 14.3 ns bare, 16.3 ns recorded.
 */
static void c_streak(const struct call *c)
{
	char call[1024], pre[160];
	emit("\nstatic __attribute__((noinline)) int poll_%s(", c->name);
	c_params(c);
	emit(")\n{\n\tif (__builtin_expect(!es_t.streak[%d].polls, 0))\n\t\treturn rec_%s(", c->slot,
	     c->name);
	c_args(c, 0);
	emit(");\n");
	if (has_status(c))
		emit("\tMPI_Status *st = es_t.poll_st = status == MPI_STATUS_IGNORE ? &es_t.poll_status : status;\n");
	snprintf(pre, sizeof(pre), "((__typeof__(&P%s))es_route.pmpi[%s])(", c->name, c->op);
	call_text(call, sizeof(call), pre, c_args, c, ")");
	emit("\tint rc = %s;\n\tif (__builtin_expect(rc != MPI_SUCCESS, 0))\n\t\tgoto done;\n"
	     "\tif (__builtin_expect(!(%s), 1)) {\n"
	     "\t\tes_t.streak[%d].polls++;\n\t\treturn MPI_SUCCESS;\n\t}\n"
	     "\trc = MPI_SUCCESS; /* known, and then not kept in a register */\ndone:\n", call, c->done,
	     c->slot);
	if (has_status(c))
		emit("\tst = es_t.poll_st;\n");
	emit("\tes_poll_done(%d, %s, %s, %s, rc);\n\treturn rc;\n}\n", c->slot, c->op,
	     or_default(c->element, "ES_NONE"), or_default(c->size, "0"));
}

/*
 * Each entry point is two functions: the one MPI's name calls, which only
 * decides and tail-calls (so a call that is not recorded costs two loads
 * and a jump, no stack frame), and the recording body, out of line.  The
 * deciding ones sit together in .text.es_entry and read only es_route
 * (record.h says why): the pass-through jumps through es_route.pmpi, not
 * through the PLT and the GOT, pages of their own.
 */
static void c_wrapper(const struct call *c)
{
	char call[1024], pre[64];
	int poll = !strcmp(c->kind, "poll");
	emit("\nstatic __attribute__((noinline)) int rec_%s(", c->name);
	c_params(c);
	emit(")\n{\n");
	snprintf(pre, sizeof(pre), "P%s(", c->name);
	call_text(call, sizeof(call), pre, c_args, c, ")");
	body(c, 0, call);
	emit("\treturn rc;\n}\n");
	if (poll)
		c_streak(c);
	emit("\nES_ENTRY int %s(", c->name);
	c_params(c);
	emit(")\n{\n");
	if (poll) {
		/* no nonblocking collective to look for: counted in its streak, or straight through */
		emit("\tif (!es_nbc_pending()) {\n\t\tif (es_want(%s))\n\t\t\treturn poll_%s(", c->op, c->name);
		c_args(c, 0);
		emit(");\n\t\treturn ((__typeof__(&P%s))es_route.pmpi[%s])(", c->name, c->op);
		c_args(c, 0);
		emit(");\n\t}\n\treturn rec_%s(", c->name);
		c_args(c, 0);
		emit(");\n}\n");
		return;
	}
	emit("\tif (%s)\n\t\treturn ((__typeof__(&P%s))es_route.pmpi[%s])(", pass_test(c), c->name, c->op);
	c_args(c, 0);
	emit(");\n\treturn rec_%s(", c->name);
	c_args(c, 0);
	emit(");\n}\n");
}

static void f_wrapper(const struct call *c)
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
	emit("}\n\nstatic void f_%s(", c->name);
	f_params(c);
	emit(")\n{\n\tf_%s_t *real = (f_%s_t *)es_f_real(&f_%s_real, \"%s\");\n"
	     "\tif (!real) {\n\t\t*ierr = MPI_ERR_INTERN;\n\t\treturn;\n\t}\n", c->name, c->name, c->name,
	     c->lower);
	emit("\tif (%s) {\n\t\treal(", pass_test(c));
	f_args(c, 0);
	emit(");\n\t\treturn;\n\t}\n\trec_f_%s(real, ", c->name);
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
		emit(") ES_F_ALIAS(f_%s);\n", c->name);
	}
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.tmp", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

/* Same bytes as before: leave the old file, and its time, so nothing rebuilds. */
static int same_file(const char *a, const char *b)
{
	FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
	int same = x && y;
	while (same) {
		int c = fgetc(x), d = fgetc(y);
		same = c == d;
		if (c == EOF || d == EOF)
			break;
	}
	if (x)
		fclose(x);
	if (y)
		fclose(y);
	return same;
}

static void finish(FILE *f, const char *dir, const char *name)
{
	char tmp[4096], path[4096];
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (fclose(f)) {
		perror(tmp);
		exit(1);
	}
	if (same_file(tmp, path)) {
		remove(tmp);
		return;
	}
	if (rename(tmp, path)) {
		perror(path);
		exit(1);
	}
}

static void write_ops_h(const char *dir)
{
	out = open_out(dir, "es_mpi_ops.h");
	emit("/* es_mpi_ops.h - the MPI op codes of trace tuples; written by wrapgen from "
	     "collectors/mpi/calls.def, do not edit. */\n"
	     "#ifndef ES_MPI_OPS_H\n#define ES_MPI_OPS_H\n\nenum es_mpi_op {\n");
	for (int i = 0; i < ncalls; i++)
		emit("\t%s = %d,\n", calls[i].op, calls[i].code);
	emit("};\n\n/* polls, each with its own streak per thread */\n#define ES_MPI_NPOLLS %d\n\n#endif\n",
	     npolls);
	finish(out, dir, "es_mpi_ops.h");
}

static void write_ops_c(const char *dir)
{
	out = open_out(dir, "es_mpi_ops.c");
	emit("/* es_mpi_ops.c - names, groups and kinds of the MPI op codes; written by wrapgen from "
	     "collectors/mpi/calls.def, do not edit. */\n#include \"collectors/collectors.h\"\n\n"
	     "const struct es_op_info es__mpi_ops[] = {\n");
	for (int i = 0; i < ncalls; i++) {
		char kind[16];
		for (size_t k = 0; k <= strlen(calls[i].kind); k++)
			kind[k] = (char)toupper((unsigned char)calls[i].kind[k]);
		emit("\t{ %d, %s, ES_KIND_%s, \"%s\" },\n", calls[i].code,
		     group_enums[index_of(groups, calls[i].group)], kind, calls[i].name);
	}
	emit("};\nconst int es__mpi_nops = %d;\n", ncalls);
	finish(out, dir, "es_mpi_ops.c");
}

static void write_wrappers(const char *dir)
{
	out = open_out(dir, "wrappers.c");
	emit("/* wrappers.c - libescollect's C and Fortran entry points for every call in "
	     "collectors/mpi/calls.def; written by wrapgen, do not edit. */\n"
	     "#include \"collectors/mpi/record.h\"\n\n"
	     "/* --- C: MPI_NAME, calling PMPI_NAME --- */\n\n"
	     "#define ES_ENTRY __attribute__((section(\".text.es_entry\")))\n"
	     "#define IN_PLACE(b) ((const void *)(b) == MPI_IN_PLACE)\n"
	     "#define TYPES(t) (t), NULL\n#define REQS(r) (r), NULL\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual"))
			c_wrapper(&calls[i]);
	emit("\nstruct es_route es_route = { .pmpi = {\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual"))
			emit("\t[%s] = (void (*)(void))P%s,\n", calls[i].op, calls[i].name);
	emit("} };\n");
	emit("\n#undef IN_PLACE\n#undef TYPES\n#undef REQS\n\n"
	     "/* --- Fortran: mpi_name_ and its other spellings, calling the MPI library's own\n"
	     " * Fortran entry point; the expressions read C handles made by MPI_*_f2c --- */\n\n"
	     "#define IN_PLACE(b) es_f_in_place(b)\n"
	     "#define TYPES(t) NULL, (f_##t)\n#define REQS(r) NULL, (f_##r)\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual"))
			f_wrapper(&calls[i]);
	finish(out, dir, "wrappers.c");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: wrapgen calls.def OUTDIR\n");
		return 2;
	}
	deffile = argv[1];
	read_def(argv[1]);
	write_ops_h(argv[2]);
	write_ops_c(argv[2]);
	write_wrappers(argv[2]);
	return 0;
}
