/* internal.h - what the PATHS files share and nobody else needs. */
#ifndef PATHS_INTERNAL_H
#define PATHS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "paths.h"

extern const struct paths_wrapper_type paths__element_type;
extern const struct paths_wrapper_type paths__pass_type;
extern const struct paths_wrapper_type paths__remote_type;
extern const struct paths_wrapper_type paths__handoff_type;
extern const struct paths_wrapper_type paths__fork_type;

/* An operation handed to another thread, and how its caller waits. */
struct paths__req {
	struct paths_op *op;
	paths_stage *stage;
	int rc;
	bool done;
	struct paths__req *qnext;
};
/* Starts op on s: in a hand-off stage's thread, or here and now. */
void paths__submit(paths_stage *s, struct paths_op *op, struct paths__req *req);
int paths__wait(struct paths__req *req);

#endif
