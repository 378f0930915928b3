/* internal.h - what the PATHS files share and nobody else needs. */
#ifndef PATHS_INTERNAL_H
#define PATHS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "base/base.h"
#include "paths.h"

/*
 * Invariants (checked by paths__check_stage and paths__check_tree in the
 * debug builds, where a path is made and a tree built):
 *
 *  S1. A stage forwards to next, or ends the path: next is NULL exactly
 *      for the terminal stages, an element's and a fork's.
 *  S2. A fork has branches (nbranches >= 1, none NULL); no other stage
 *      has any.
 *  S3. refs >= 1 while a path or a stage leads to it; a stage is freed
 *      by the release that takes it to 0, and its next and branches
 *      released then (a join's next outlives every stage joining it).
 *  S4. Every way through a path ends at a terminal stage: stages are made
 *      over stages that exist already, so there is no cycle, and a walk
 *      of next (and each fork's branches) from the first stage ends.
 *
 *  T1. A tree of n participants has nnodes internal nodes, the root the
 *      last (parent -1), every other node's parent above it.
 *  T2. Node i's children are participants (-1 - p) or nodes j < i whose
 *      parent is i and whose slot is their place among i's children;
 *      participant p's leaf_node and leaf_slot name the one node and
 *      place that list it.
 *  T3. A node's subtree is the participants [first, last], the union of
 *      its children's in order; it runs on one of the n participants.
 *  T4. An edge up from child j of node i exists unless the child's runner
 *      is node i's own (it hands its share over in memory); every node
 *      has its path down.
 */

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

/* S1-S4 over every stage reachable from s; T1-T4 over t (tree.c).  Each
 * costs nothing outside the debug builds. */
void paths__check_stage(const paths_stage *s);
struct paths_tree;
void paths__check_tree(const struct paths_tree *t);

#endif
