/* region_stub.c - libesregion.so: es_region_begin/end and es_object_* that do nothing, for programs run without EventSpace (esrun's libescollect.so takes them). */
#include <stddef.h>

#include "collectors/mpi/es_object.h"
#include "collectors/mpi/es_region.h"

void es_region_begin(const char *name)
{
	(void)name;
}

void es_region_end(const char *name)
{
	(void)name;
}

/* Fortran's names, with the length it passes */
void es_region_begin_(const char *name, size_t len);
void es_region_end_(const char *name, size_t len);

void es_region_begin_(const char *name, size_t len)
{
	(void)name, (void)len;
}

void es_region_end_(const char *name, size_t len)
{
	(void)name, (void)len;
}

/* Objects: a handle that stands for nothing, calls that succeed */
struct es_object {
	int unused;
};
static struct es_object nothing;

es_object *es_object_create(const char *name, const char *help)
{
	(void)name, (void)help;
	return &nothing;
}

int es_object_int(es_object *o, const char *name, int *var, int count, int writable, int lo, int hi,
		  const char *help)
{
	(void)o, (void)name, (void)var, (void)count, (void)writable, (void)lo, (void)hi, (void)help;
	return 0;
}

int es_object_double(es_object *o, const char *name, double *var, int count, int writable, double lo, double hi,
		     const char *help)
{
	(void)o, (void)name, (void)var, (void)count, (void)writable, (void)lo, (void)hi, (void)help;
	return 0;
}

int es_object_method(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg,
		     const char *help)
{
	(void)o, (void)name, (void)fn, (void)arg, (void)help;
	return 0;
}

int es_object_method_range(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg, double lo,
			   double hi, const char *help)
{
	(void)o, (void)name, (void)fn, (void)arg, (void)lo, (void)hi, (void)help;
	return 0;
}

int es_object_publish(es_object *o)
{
	(void)o;
	return 0;
}

int es_object_sync(void)
{
	return 0;
}

/* Fortran's, with the lengths it passes */
void es_object_create_(const char *name, const char *help, int *obj, size_t ln, size_t lh);
void es_object_int_(const int *obj, const char *name, int *var, const int *count, const int *writable, const int *lo,
		    const int *hi, const char *help, size_t ln, size_t lh);
void es_object_double_(const int *obj, const char *name, double *var, const int *count, const int *writable,
		       const double *lo, const double *hi, const char *help, size_t ln, size_t lh);
void es_object_method_(const int *obj, const char *name, void (*fn)(double *), const char *help, size_t ln, size_t lh);
void es_object_publish_(const int *obj);
void es_object_sync_(void);

void es_object_create_(const char *name, const char *help, int *obj, size_t ln, size_t lh)
{
	(void)name, (void)help, (void)ln, (void)lh;
	*obj = 1;
}

void es_object_int_(const int *obj, const char *name, int *var, const int *count, const int *writable, const int *lo,
		    const int *hi, const char *help, size_t ln, size_t lh)
{
	(void)obj, (void)name, (void)var, (void)count, (void)writable, (void)lo, (void)hi, (void)help, (void)ln, (void)lh;
}

void es_object_double_(const int *obj, const char *name, double *var, const int *count, const int *writable,
		       const double *lo, const double *hi, const char *help, size_t ln, size_t lh)
{
	(void)obj, (void)name, (void)var, (void)count, (void)writable, (void)lo, (void)hi, (void)help, (void)ln, (void)lh;
}

void es_object_method_(const int *obj, const char *name, void (*fn)(double *), const char *help, size_t ln, size_t lh)
{
	(void)obj, (void)name, (void)fn, (void)help, (void)ln, (void)lh;
}

void es_object_publish_(const int *obj)
{
	(void)obj;
}

void es_object_sync_(void)
{
}
