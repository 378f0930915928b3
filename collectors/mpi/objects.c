/* objects.c - es_object.h in libescollect: a program's objects (C and Fortran) handed to steering/ and made visible in the rank's trace space from MPI_Init to MPI_Finalize. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/mpi/es_object.h"
#include "collectors/mpi/wrap.h"
#include "steering/steering.h"

/*
 * One st_app per process, made at the first es_object_create (a program
 * may declare its objects before MPI_Init), attached to the rank's server
 * at MPI_Init and detached at MPI_Finalize; objects stay declared, so a
 * publication after MPI_Finalize does nothing.  Fortran's handles are the
 * objects' numbers, 1...
 */
struct es_object {
	st_obj *o;
	char name[ST_NAME_MAX + 1];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static st_app *app;
static ps_server *attached; /* the rank's server while MPI runs */
static es_object *handles[ST_OBJECTS_MAX + 1];
static int nhandles;

size_t es_objects_bytes(void)
{
	return ps_elem_footprint(sizeof(struct st_member), ST_OBJECTS_MAX * (ST_MEMBERS_MAX + 1)) +
	       ps_elem_footprint(sizeof(struct st_ask), 64) + ps_elem_footprint(sizeof(struct st_done), 1024) +
	       (4u << 20); /* the objects' publications */
}

void es_objects_setup(ps_server *srv)
{
	pthread_mutex_lock(&lock);
	attached = srv;
	if (app && st_app_attach(app, srv))
		fprintf(stderr, "escollect: rank %d: objects: no room for them in the trace space\n", es_g.rank);
	pthread_mutex_unlock(&lock);
}

void es_objects_finalize(void)
{
	pthread_mutex_lock(&lock);
	attached = NULL;
	if (app)
		st_app_attach(app, NULL);
	pthread_mutex_unlock(&lock);
}

/* Says a declaration's error once, in the program's words */
static int said(int rc, const char *call, const char *obj, const char *name)
{
	if (rc)
		fprintf(stderr, "escollect: %s(%s%s%s): %s\n", call, obj ? obj : "", obj && name ? "." : "",
			name ? name : "", rc == PS_EBADNAME ? "expected a name of letters, digits and _ (31 at most)"
							     : st_strerror(rc));
	return rc;
}

es_object *es_object_create(const char *name, const char *help)
{
	pthread_mutex_lock(&lock);
	int rc = 0;
	if (!app && !(rc = st_app_create(&app)) && attached) /* made after MPI_Init */
		rc = st_app_attach(app, attached);
	es_object *h = rc ? NULL : calloc(1, sizeof(*h));
	if (!rc && !h)
		rc = PS_ENOMEM;
	if (!rc && (rc = st_obj_create(app, name, help, &h->o))) {
		free(h);
		h = NULL;
	}
	if (!rc) {
		snprintf(h->name, sizeof(h->name), "%s", name);
		handles[++nhandles] = h;
	}
	pthread_mutex_unlock(&lock);
	said(rc, "es_object_create", name, NULL);
	return h;
}

static int field(es_object *o, const char *name, enum st_kind kind, void *var, int count, int writable, double lo,
		 double hi, const char *help, const char *call)
{
	int rc = !o ? PS_EINVAL
		 : st_obj_field(o->o, name, kind, var, count > 0 ? (uint32_t)count : 0, writable ? ST_WRITABLE : 0, lo, hi,
				help);
	if (rc == PS_EINVAL)
		fprintf(stderr, "escollect: %s(%s.%s): expected an object, a variable, a count above 0 and lo <= hi\n",
			call, o ? o->name : "NULL", name ? name : "");
	else
		said(rc, call, o ? o->name : "NULL", name);
	return rc;
}

int es_object_int(es_object *o, const char *name, int *var, int count, int writable, int lo, int hi,
		  const char *help)
{
	return field(o, name, ST_INT, var, count, writable, lo, hi, help, "es_object_int");
}

int es_object_double(es_object *o, const char *name, double *var, int count, int writable, double lo, double hi,
		     const char *help)
{
	return field(o, name, ST_DOUBLE, var, count, writable, lo, hi, help, "es_object_double");
}

int es_object_method(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg,
		     const char *help)
{
	int rc = o ? st_obj_method(o->o, name, fn, arg, help) : PS_EINVAL;
	return said(rc, "es_object_method", o ? o->name : "NULL", name);
}

int es_object_method_range(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg, double lo,
			   double hi, const char *help)
{
	int rc = o ? st_obj_method_range(o->o, name, fn, arg, lo, hi, help) : PS_EINVAL;
	return said(rc, "es_object_method_range", o ? o->name : "NULL", name);
}

int es_object_publish(es_object *o)
{
	return o ? st_obj_publish(o->o) : PS_EINVAL;
}

int es_object_sync(void)
{
	return st_app_sync(__atomic_load_n(&app, __ATOMIC_ACQUIRE));
}

/* --- Fortran ------------------------------------------------------------------------------- */

static es_object *f_handle(const int *obj)
{
	pthread_mutex_lock(&lock);
	es_object *h = *obj >= 1 && *obj <= nhandles ? handles[*obj] : NULL;
	pthread_mutex_unlock(&lock);
	return h;
}

static void f_create(const char *name, const char *help, int *obj, size_t ln, size_t lh)
{
	char n[ST_NAME_MAX + 2], hp[ST_HELP_MAX + 1];
	es_f_str(n, sizeof(n), name, ln);
	es_f_str(hp, sizeof(hp), help, lh);
	es_object *h = es_object_create(n, hp);
	pthread_mutex_lock(&lock);
	*obj = h ? nhandles : 0;
	pthread_mutex_unlock(&lock);
}

static void f_int(const int *obj, const char *name, int *var, const int *count, const int *writable, const int *lo,
		  const int *hi, const char *help, size_t ln, size_t lh)
{
	char n[ST_NAME_MAX + 2], hp[ST_HELP_MAX + 1];
	es_f_str(n, sizeof(n), name, ln);
	es_f_str(hp, sizeof(hp), help, lh);
	field(f_handle(obj), n, ST_INT, var, *count, *writable, *lo, *hi, hp, "ES_OBJECT_INT");
}

static void f_double(const int *obj, const char *name, double *var, const int *count, const int *writable,
		     const double *lo, const double *hi, const char *help, size_t ln, size_t lh)
{
	char n[ST_NAME_MAX + 2], hp[ST_HELP_MAX + 1];
	es_f_str(n, sizeof(n), name, ln);
	es_f_str(hp, sizeof(hp), help, lh);
	field(f_handle(obj), n, ST_DOUBLE, var, *count, *writable, *lo, *hi, hp, "ES_OBJECT_DOUBLE");
}

/* A Fortran subroutine, called as SUBROUTINE NAME(X) with DOUBLE PRECISION X */
struct f_method {
	void (*fn)(double *);
};

static void f_call(void *arg, double value)
{
	const struct f_method *m = arg;
	m->fn(&value);
}

static void f_method(const int *obj, const char *name, void (*fn)(double *), const char *help, size_t ln, size_t lh)
{
	char n[ST_NAME_MAX + 2], hp[ST_HELP_MAX + 1];
	es_f_str(n, sizeof(n), name, ln);
	es_f_str(hp, sizeof(hp), help, lh);
	es_object *h = f_handle(obj);
	struct f_method *m = h && fn ? malloc(sizeof(*m)) : NULL; /* lives as long as its object */
	if (m)
		m->fn = fn;
	int rc = m ? st_obj_method(h->o, n, f_call, m, hp) : PS_EINVAL;
	if (rc)
		free(m);
	said(rc, "ES_OBJECT_METHOD", h ? h->name : "?", n);
}

static void f_publish(const int *obj)
{
	es_object_publish(f_handle(obj));
}

static void f_sync(void)
{
	es_object_sync();
}

void es_object_create_(const char *, const char *, int *, size_t, size_t) ES_F_ALIAS(f_create);
void es_object_create__(const char *, const char *, int *, size_t, size_t) ES_F_ALIAS(f_create);
void es_object_int_(const int *, const char *, int *, const int *, const int *, const int *, const int *,
		    const char *, size_t, size_t) ES_F_ALIAS(f_int);
void es_object_int__(const int *, const char *, int *, const int *, const int *, const int *, const int *,
		     const char *, size_t, size_t) ES_F_ALIAS(f_int);
void es_object_double_(const int *, const char *, double *, const int *, const int *, const double *, const double *,
		       const char *, size_t, size_t) ES_F_ALIAS(f_double);
void es_object_double__(const int *, const char *, double *, const int *, const int *, const double *,
			const double *, const char *, size_t, size_t) ES_F_ALIAS(f_double);
void es_object_method_(const int *, const char *, void (*)(double *), const char *, size_t, size_t)
	ES_F_ALIAS(f_method);
void es_object_method__(const int *, const char *, void (*)(double *), const char *, size_t, size_t)
	ES_F_ALIAS(f_method);
void es_object_publish_(const int *) ES_F_ALIAS(f_publish);
void es_object_publish__(const int *) ES_F_ALIAS(f_publish);
void es_object_sync_(void) ES_F_ALIAS(f_sync);
void es_object_sync__(void) ES_F_ALIAS(f_sync);
