/* wrapgen.c - writes libescollect's C and Fortran MPI wrappers and the op-code table from calls.def. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrapgen.h"

/*
 * Usage: wrapgen calls.def OUTDIR
 * Writes OUTDIR/es_mpi_ops.h, OUTDIR/es_mpi_ops.c, OUTDIR/wrappers.c, OUTDIR/route.c,
 * OUTDIR/empty.c and OUTDIR/floor.c.
 * The format of calls.def is described at its top.  A malformed entry is
 * reported as FILE:LINE: what was expected, and nothing is written.
 */

struct call calls[MAXC];
int ncalls, npolls;

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
#define KEY(k, f) { k, c->f, sizeof(c->f) }
	struct { const char *key; char *dst; size_t len; } keys[] = {
		KEY("note", note), KEY("notetag", notetag), KEY("notedest", notedest),
		KEY("notesendtag", notesendtag), KEY("element", element), KEY("size", size),
		KEY("arg", arg), KEY("done", done), KEY("comm", comm), KEY("win", win),
		KEY("cinfo", cinfo), KEY("new", new_), KEY("newwin", newwin), KEY("made", made),
		KEY("madetag", madetag), KEY("reqs", reqs), KEY("n", n), KEY("f08", f08), KEY("fortran", fortran), KEY("chan", chan),
		KEY("rsrc", rsrc), KEY("rsize", rsize), KEY("rtag", rtag), KEY("req", req),
		KEY("which", which), KEY("wcount", wcount), KEY("windex", windex), KEY("hold", hold),
		KEY("after", after), KEY("idup", idup) };
#undef KEY
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
			die(c->line, "%s: unknown key '%s' (expected note, notetag, notedest, notesendtag, "
			    "element, size, arg, done, comm, win, cinfo, new, newwin, made, madetag, reqs, n, "
			    "f08, fortran, chan, rsrc, rsize, rtag, req, which, wcount, windex, hold, after or idup)",
			    c->name, k);
		copy(keys[i].dst, keys[i].len, v, c->line, k);
	}
}

static const char *const kinds[] = { "timed", "coll", "icoll", "poll", "wait", "pinit", "start",
				     "manual", NULL };
static const char *const groups[] = { "setup", "point-to-point", "collectives", "one-sided",
				      "persistent", "communicators", "io", NULL };
static const char *const group_enums[] = { "ES_GROUP_SETUP", "ES_GROUP_P2P", "ES_GROUP_COLLECTIVES",
					    "ES_GROUP_ONE_SIDED", "ES_GROUP_PERSISTENT",
					    "ES_GROUP_COMMUNICATORS", "ES_GROUP_IO" };

static int index_of(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], w))
			return i;
	return -1;
}

/* One entry: header, parameter list, fields (already joined into one line). */
/* A value parameter of the call named name (not a pointer, not an array). */
static int value_param(const struct call *c, const char *name)
{
	for (int i = 0; i < c->np; i++)
		if (!strcmp(c->p[i].name, name))
			return !c->p[i].ptr && !c->p[i].array;
	return 0;
}

/*
 * W(x) of a value parameter x, once: the expressions may name it several
 * times (MPI_Sendrecv's W(dest) four), and gcc reads c_'s fields again for
 * each, since the notes' and the tuple's atomic stores come between.  The
 * expressions then read w_x_, which the wrappers declare where c_ is
 * (c->hoist, whole lines).
 */
static void hoist(struct call *c)
{
	char *fields[] = { c->note, c->notetag, c->notedest, c->notesendtag, c->element, c->size, c->arg,
			   c->rsrc, c->rsize, c->rtag };
	size_t lens[] = { sizeof(c->note), sizeof(c->notetag), sizeof(c->notedest), sizeof(c->notesendtag),
			  sizeof(c->element), sizeof(c->size), sizeof(c->arg), sizeof(c->rsrc), sizeof(c->rsize),
			  sizeof(c->rtag) };
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		char *f = fields[k];
		for (char *at = f; (at = strstr(at, "W(")); at++) {
			if (at > f && (isalnum((unsigned char)at[-1]) || at[-1] == '_'))
				continue;
			char name[40], *close = strchr(at, ')');
			size_t n = close ? (size_t)(close - at - 2) : 0;
			if (!n || n >= sizeof(name))
				continue;
			memcpy(name, at + 2, n);
			name[n] = 0;
			if (!value_param(c, name))
				continue;
			char var[48], decl[200], rest[400];
			snprintf(var, sizeof(var), "w_%s_", name);
			snprintf(decl, sizeof(decl), "\tuint32_t %s = W(%s);\n\t(void)%s;\n", var, name, var);
			if (!strstr(c->hoist, decl)) {
				if (strlen(c->hoist) + strlen(decl) >= sizeof(c->hoist))
					die(c->line, "%s: too many W() to compute once", c->name);
				strcat(c->hoist, decl);
			}
			snprintf(rest, sizeof(rest), "%s", close + 1);
			if ((size_t)(at - f) + strlen(var) + strlen(rest) >= lens[k])
				die(c->line, "%s: an expression too long once W(%s) is %s", c->name, name, var);
			snprintf(at, lens[k] - (size_t)(at - f), "%s%s", var, rest);
		}
	}
}

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
	if (code == 63) /* collectors.h: ES_OP_MPI_CHANNEL */
		die(line, "%s: code 63 is a channel's mark, not a call's", name);
	for (int i = 0; i < ncalls - 1; i++) {
		if (calls[i].code == code)
			die(line, "%s: code %d is %s's already", name, code, calls[i].name);
		if (!strcmp(calls[i].name, name))
			die(line, "%s listed twice", name);
	}
	c->code = code;
	if (index_of(groups, group) < 0)
		die(line, "%s: group '%s': expected setup, point-to-point, collectives, one-sided, "
		    "persistent, communicators or io", name, group);
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
	for (char *at; (at = strstr(c->done, "SLOT"));) { /* the streak's slot, in done= */
		char rest[sizeof(c->done)];
		snprintf(rest, sizeof(rest), "%s", at + 4);
		snprintf(at, sizeof(c->done) - (size_t)(at - c->done), "%d%s", c->slot, rest);
	}
	if ((!strcmp(kind, "wait") || !strcmp(kind, "start")) && (!*c->reqs || !*c->n))
		die(line, "%s: a %s call needs reqs= and n=", name, kind);
	if (!strcmp(kind, "poll") && !*c->done)
		die(line, "%s: a poll needs done=", name);
	if (*c->f08 && strcmp(c->f08, "pmpi"))
		die(line, "%s: f08=%s: expected f08=pmpi", name, c->f08);
	if (*c->fortran && strcmp(c->fortran, "none"))
		die(line, "%s: fortran=%s: expected fortran=none", name, c->fortran);
	if ((!strcmp(kind, "wait") || (!strcmp(kind, "poll") && *c->reqs)) &&
	    (strcmp(c->which, "all") && strcmp(c->which, "index") && strcmp(c->which, "some")))
		die(line, "%s: which=%s: expected all, index or some", name, c->which);
	if (*c->which && !*c->wcount)
		die(line, "%s: which= needs wcount=", name);
	if (*c->chan && strcmp(c->chan, "send") && strcmp(c->chan, "recv") && strcmp(c->chan, "req") &&
	    strcmp(c->chan, "probe"))
		die(line, "%s: chan=%s: expected send, recv, req or probe", name, c->chan);
	if (!strcmp(c->chan, "req") && !*c->req)
		die(line, "%s: chan=req needs req=", name);
	if (*c->made && strcmp(c->made, "child") && strcmp(c->made, "group") && strcmp(c->made, "inter"))
		die(line, "%s: made=%s: expected child, group or inter", name, c->made);
	if ((*c->rsrc || *c->rsize || *c->rtag) && !(*c->rsrc && *c->rsize && *c->rtag))
		die(line, "%s: rsrc=, rsize= and rtag= go together", name);
	if (*c->after && strstr(c->after, "held_") && !*c->hold)
		die(line, "%s: after= uses held_ without hold=", name);
	hoist(c);
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
	     "#include \"collectors/mpi/wrap.h\"\n\n"
	     "/* --- C: MPI_NAME, calling PMPI_NAME --- */\n\n"
	     "#define ES_ENTRY __attribute__((section(\".text.es_entry\")))\n"
	     "#define IN_PLACE(b) ((const void *)(b) == MPI_IN_PLACE)\n"
	     "#define TYPES(t) (t), NULL\n#define REQS(r) (r), NULL\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual"))
			c_wrapper(&calls[i]);
	emit("\n#undef IN_PLACE\n#undef TYPES\n#undef REQS\n\n"
	     "/* --- Fortran: mpi_name_ and its other spellings, calling the MPI library's own\n"
	     " * Fortran entry point; the expressions read C handles made by MPI_*_f2c --- */\n\n"
	     "#define IN_PLACE(b) es_f_in_place(b)\n"
	     "#define TYPES(t) NULL, (f_##t)\n#define REQS(r) NULL, (f_##r)\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual") && strcmp(calls[i].fortran, "none"))
			f_wrapper(&calls[i]);
	finish(out, dir, "wrappers.c");
}

/* es_route, which every part of libescollect reads (what is recorded, the
 * PMPI entry points by op): beside core.c, so that no part uses the
 * wrappers' file and the wrappers use them all. */
static void write_route(const char *dir)
{
	out = open_out(dir, "route.c");
	emit("/* route.c - es_route: what libescollect records and each call's PMPI entry point, by op code; "
	     "written by wrapgen from collectors/mpi/calls.def, do not edit. */\n"
	     "#include \"collectors/mpi/record.h\"\n\n"
	     "struct es_route es_route = { .ctl = &es_route.ctl_seen, .pmpi = {\n");
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].kind, "manual"))
			emit("\t[%s] = (void (*)(void))P%s,\n", calls[i].op, calls[i].name);
	emit("} };\n");
	finish(out, dir, "route.c");
}

/* The pointer a poll's outcome is read through: its flag, or Testsome's count. */
static const char *outcome_of(const struct call *c)
{
	for (int i = 0; i < c->np; i++)
		if (c->p[i].ptr == 1 && (!strcmp(c->p[i].name, "flag") || !strcmp(c->p[i].name, "outcount")))
			return c->p[i].name;
	return NULL;
}

/*
 * The floors tests/bench/mpi.sh measures libescollect against, built as it
 * is: empty.c, every C entry point of the list and nothing but its PMPI
 * call, the floor any PMPI tool stands on; and floor.c, the same but a
 * poll keeps its flag across MPI's call and looks at it (counting those
 * that completed something), the least a tool that records completions
 * must do: a frame, a register kept, a load and a compare.  hpcc's
 * RandomAccess polls every 25 ns, so the second, not the empty
 * interposer's jump, is what such a tool can reach.
 */
static void write_interposer(const char *dir, const char *name, const char *what, int look)
{
	out = open_out(dir, name);
	emit("/* %s - %s; written by wrapgen from collectors/mpi/calls.def, do not edit. */\n#include <mpi.h>\n",
	     name, what);
	if (look)
		emit("\n/* polls that completed something, so that the look is not optimised away */\n"
		     "__thread unsigned long es_floor_done;\n");
	for (int i = 0; i < ncalls; i++) {
		const struct call *c = &calls[i];
		if (!strcmp(c->kind, "manual"))
			continue;
		const char *flag = look && !strcmp(c->kind, "poll") ? outcome_of(c) : NULL;
		emit("\nint %s(", c->name);
		c_params(c);
		emit(")\n{\n\t%sP%s(", flag ? "int rc = " : "return ", c->name);
		c_args(c, 0);
		if (flag)
			emit(");\n\tif (rc == MPI_SUCCESS && *%s > 0)\n\t\tes_floor_done++;\n\treturn rc;\n}\n", flag);
		else
			emit(");\n}\n");
	}
	finish(out, dir, name);
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
	write_route(argv[2]);
	write_interposer(argv[2], "empty.c", "an empty PMPI interposer: every C entry point libescollect has, "
			 "each only calling its PMPI_ twin", 0);
	write_interposer(argv[2], "floor.c", "the floor of a PMPI tool that sees each poll's outcome: every C "
			 "entry point libescollect has, each calling its PMPI_ twin, a poll also looking at its flag", 1);
	return 0;
}
