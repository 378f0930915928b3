/* es_object.h - let EventSpace's monitors see a program's state and steer it: objects with fields and methods, published when the program chooses, changed only at its safe points. */
#ifndef ES_OBJECT_H
#define ES_OBJECT_H

/*
 * Link with -lesregion (a library that does nothing) and run under esrun:
 * libescollect.so, preloaded, takes these calls.  An object names the
 * program's own variables (ints and doubles, scalars or arrays), each
 * read-only or writable within a range, and its methods (a function and a
 * pointer argument):
 *
 *     es_object *t = es_object_create("tunnel", "the wind tunnel");
 *     es_object_double(t, "inflow", &inflow, 1, 1, 0.0, 1.0, "particles in per site and step");
 *     es_object_double(t, "mass_flow", &flow, 1, 0, 0.0, 0.0, "mass flow through the exit");
 *     es_object_method(t, "reset", reset, &lattice, "start the flow again");
 *     for (;;) {
 *         step();
 *         es_object_publish(t);   // the sensor: the values now, one copy
 *         es_object_sync();       // the safe point: what monitors asked, applied
 *     }
 *
 * Nothing a monitor asks reaches the program except inside es_object_sync,
 * on the thread that calls it, in the order asked: `esctl JOB set
 * tunnel.inflow=0.3`, `esctl JOB call tunnel.reset`, and rules (`esctl JOB
 * rule --in-app 'when tunnel.mass_flow < 0.9 set tunnel.inflow =
 * tunnel.inflow + 0.01'`).  A value out of range (a method's argument
 * too), a read-only field, an unknown name never reach it; every change
 * people ask is recorded, with who asked as the kernel says, and rules'
 * actions are counted (esctl JOB changes, esctl JOB rules).  Declare an object's members before its first publish or
 * sync; names are letters, digits and _ (31 at most).  Functions return 0
 * or a negative code, and say what was wrong on stderr.
 *
 * Fortran (default INTEGER, DOUBLE PRECISION; OBJ an INTEGER handle):
 *     CALL ES_OBJECT_CREATE('tunnel', 'the wind tunnel', OBJ)
 *     CALL ES_OBJECT_DOUBLE(OBJ, 'inflow', INFLOW, 1, 1, 0D0, 1D0, 'particles in')
 *     CALL ES_OBJECT_INT(OBJ, 'steps', STEPS, 1, 0, 0, 1000000, 'steps made')
 *     CALL ES_OBJECT_METHOD(OBJ, 'reset', RESET, 'start again')  ! SUBROUTINE RESET(X), DOUBLE PRECISION X
 *     CALL ES_OBJECT_DOUBLE(OBJ, 'w', W(1), 3, 1, -2D0, 2D0, 'weights')   ! an array: its first element
 *     CALL ES_OBJECT_PUBLISH(OBJ)
 *     CALL ES_OBJECT_SYNC()
 */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_object es_object;

/* NULL if it cannot be made (a bad or taken name, too many objects) */
es_object *es_object_create(const char *name, const char *help);
/* count variables from var; writable 0 or 1; a set must be in [lo, hi] */
int es_object_int(es_object *o, const char *name, int *var, int count, int writable, int lo, int hi,
		  const char *help);
int es_object_double(es_object *o, const char *name, double *var, int count, int writable, double lo, double hi,
		     const char *help);
/* fn(arg, value) at a safe point; value is the call's argument (0 if none):
 * a finite number within 1e308 either way (NaN and infinities never reach
 * it); with es_object_method_range, within [lo, hi], as a field's value */
int es_object_method(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg,
		     const char *help);
int es_object_method_range(es_object *o, const char *name, void (*fn)(void *arg, double value), void *arg, double lo,
			   double hi, const char *help);
/* The sensor: every field's values now, written where monitors see them */
int es_object_publish(es_object *o);
/* The safe point: returns how many changes were applied (sets, calls) */
int es_object_sync(void);

#ifdef __cplusplus
}
#endif

#endif
