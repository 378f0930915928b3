/* wrapgen.h - what wrapgen's two halves share: the calls read from calls.def (wrapgen.c) and the text written for each (wrapgen_emit.c). */
#ifndef ES_WRAPGEN_H
#define ES_WRAPGEN_H

#include <stdio.h>

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
	char note[200], notetag[80], notedest[80], notesendtag[80], element[200], size[300], arg[200];
	char done[200], comm[80], win[80], cinfo[80], new_[80], newwin[80], made[16], madetag[40];
	char reqs[80], n[80], f08[16], fortran[16], chan[16], rsrc[80], rsize[80], rtag[80], req[40];
	char which[16], wcount[120], windex[80], hold[80], after[120], idup[40];
	/* W(x) of a value parameter x, computed once where c_ is (wrapgen.c,
	 * hoist): "uint32_t w_x_ = W(x);" lines, as the expressions read w_x_ */
	char hoist[400];
};

/* wrapgen.c's: the calls read */
extern struct call calls[MAXC];
extern int ncalls, npolls;

/* --- wrapgen_emit.c: it uses nothing of wrapgen.c (data flows one way) ---------------- */

extern const char *deffile;
extern FILE *out; /* the file being written */
/* calls.def:LINE: what was expected, on stderr; then exit 1, nothing written. */
__attribute__((format(printf, 2, 3), noreturn)) void die(int line, const char *fmt, ...);

/* fmt to out */
__attribute__((format(printf, 1, 2))) void emit(const char *fmt, ...);
/* a call's C parameter list, and its arguments (subst: the wrapper's locals) */
void c_params(const struct call *c);
void c_args(const struct call *c, int subst);
/* the C entry point of c, and its Fortran ones */
void c_wrapper(const struct call *c);
void f_wrapper(const struct call *c);

#endif
