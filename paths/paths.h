/* paths.h - PATHS: wrapper chains from threads to PastSet elements, trees, collective operations. */
#ifndef PATHS_H
#define PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "pastset/pastset.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A path is the list of stages an operation passes from a thread to a
 * PastSet element.  Each stage is an instance of a wrapper type: code that
 * may act before and after it forwards the operation to the next stage.  The
 * last stage is the element itself.  Paths fork (one stage, several next
 * stages) and join (several paths into one shared stage) to form trees.
 *
 * Errors are the negative codes of pastset.h; ps_strerror() explains them.
 * Parameter errors also leave a "file:line:column: what was expected"
 * message in the paths_params' err buffer.
 */

enum paths_opcode {
	PATHS_WRITE,       /* buf: one tuple in;  idx out */
	PATHS_READ,        /* buf: one tuple out; idx in; blocks up to timeout */
	PATHS_READ_LATEST, /* buf: one tuple out; idx out */
	PATHS_TAKE,        /* buf: one tuple out; idx out; blocks up to timeout */
};

struct paths_op {
	enum paths_opcode code;
	void *buf;
	size_t size;     /* bytes in buf: a fork stage splits it among branches */
	uint64_t idx;
	uint64_t oldest; /* out, when an element answers PS_EDISCARDED */
	int timeout_ms;
};

/* Wrapper parameters as the pathmap gave them, with their positions. */
struct paths_param {
	const char *key, *value;
	int line, col;
};
struct paths_params {
	const char *file;  /* where they came from, for messages; may be NULL */
	int line, col;     /* the stage's own position */
	const struct paths_param *v;
	int n;
	char *err;         /* where init writes its message; may be NULL */
	size_t errlen;
	const char *path;  /* the path the stage is built for, when known */
};

/* Looks up key: 0 and *out set, 1 if absent (*out = dflt), or PS_EINVAL
 * with "file:line:col: KEY: expected ..." in params->err. */
int paths_param_int(const struct paths_params *p, const char *key, long dflt,
		    long min, long max, long *out);
int paths_param_str(const struct paths_params *p, const char *key,
		    const char *dflt, const char **out);
/* Formats "file:line:col: " + message into p->err, at key's position (or
 * the stage's when key is NULL or absent); returns PS_EINVAL. */
int paths_params_fail(const struct paths_params *p, const char *key,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* PS_EINVAL naming the first key not in the NULL-terminated list. */
int paths_params_only(const struct paths_params *p, const char *const *known);

typedef struct paths_stage paths_stage;

struct paths_wrapper_type {
	const char *name;
	size_t state_size; /* zeroed bytes at paths_stage_state() */
	int (*init)(paths_stage *self, const struct paths_params *params);
	/* Handles op: usually some work, paths_forward(), more work. */
	int (*op)(paths_stage *self, struct paths_op *op);
	void (*fini)(paths_stage *self); /* may be NULL */
	/* May be set by a wrapper that only looks at what came back: one whose
	 * op is exactly `return after(self, op, paths_forward(self, op))`
	 * (paths_after_op, below), and
	 * whose after gives the same for the same tuple until the stage says
	 * otherwise (paths_stage_changed).  A fork reading the newest tuples
	 * of branches made of such wrappers over elements then reads all the
	 * elements in one sweep and runs the afters only where a tuple is new:
	 * the full view of thousands of trace elements, a thousand times a
	 * second, without a call per stage per element. */
	int (*after)(paths_stage *self, struct paths_op *op, int rc);
};

/* The op of a wrapper that has an after: forwards, then runs the after. */
int paths_after_op(paths_stage *self, struct paths_op *op);

/* What a stage's after gives has changed (a wrapper's state, say a clock):
 * forks read their elements afresh at the next read. */
void paths_stage_changed(paths_stage *s);

/* Wrapper types are found by name.  The built-ins (element, pass, remote,
 * handoff, fork) are always there; later layers register theirs.  PS_EEXIST if the
 * name is taken. */
int paths_register(const struct paths_wrapper_type *type);
const struct paths_wrapper_type *paths_lookup(const char *name);

/* A stage.  The fields are public so that forwarding inlines; treat them
 * as read-only. */
struct paths_stage {
	const struct paths_wrapper_type *type;
	paths_stage *next;      /* NULL only for a terminal stage */
	void *state;
	int refs;               /* paths and stages that lead here (joins) */
	paths_stage **branches; /* fork stages only */
	int nbranches;
};

static inline int paths_forward(paths_stage *self, struct paths_op *op)
{
	return self->next->type->op(self->next, op);
}

static inline void *paths_stage_state(paths_stage *s)
{
	return s->state;
}

/* Makes a stage of the named type.  `next` is the stage it forwards to (it
 * gains a reference: joins are several stages with one next).  params may
 * be NULL.  PS_ENOENT if no such type. */
int paths_stage_create(const char *type, const struct paths_params *params,
		       paths_stage *next, paths_stage **out);
/* The terminal stage of a path: operations land on element e.  The stage
 * does not own e. */
int paths_stage_element(ps_elem *e, paths_stage **out);
/* A fork: operations go to every branch; a write sends the same tuple to
 * each, a read or take fills consecutive tuples of buf from each branch in
 * turn (a gather).  Branches whose first stage is a hand-off run at the same
 * time.  Takes a reference on each branch. */
int paths_stage_fork(paths_stage *const *branches, int n, paths_stage **out);
/* The same, with the bytes each branch reads given (their sum is the size
 * of a read through the fork), for branches that return different numbers
 * of tuples. */
int paths_stage_fork_sized(paths_stage *const *branches, int n, const size_t *shares,
			   paths_stage **out);
/* Drops one reference; the last one finalises the stage and drops its
 * references on what follows. */
void paths_stage_release(paths_stage *s);
void paths_stage_retain(paths_stage *s);

/* A path: a named entry point to a chain of stages. */
typedef struct paths_path paths_path;
int paths_path_create(const char *name, paths_stage *first, size_t tuple_size,
		      paths_path **out);
void paths_path_destroy(paths_path *p);
const char *paths_path_name(const paths_path *p);
paths_stage *paths_path_first(const paths_path *p);

int paths_write(paths_path *p, const void *tuple, int timeout_ms, uint64_t *idx);
int paths_read(paths_path *p, uint64_t idx, void *out, int timeout_ms, uint64_t *oldest);
int paths_read_latest(paths_path *p, void *out, uint64_t *idx);
int paths_take(paths_path *p, void *out, int timeout_ms, uint64_t *idx);
/* Runs any operation down the path. */
int paths_run(paths_path *p, struct paths_op *op);

/* --- Trees and collective operations ------------------------------------ */

/*
 * A collective tree joins n participants (threads, of one process or of
 * several processes on a node).  Leaves are the participants in order;
 * internal nodes group `fanout` children.  Each internal node runs on one
 * participant of its subtree (by default its first): that participant takes
 * the children's contributions, combines them and passes the result up.
 * Results come back down the same tree.  Every edge is a PastSet element,
 * reached through a path, so collectors can watch each edge.
 *
 * Every participant must call the same collectives in the same order.
 */
typedef struct paths_tree paths_tree;

struct paths_tree_spec {
	const char *name;      /* prefix of the tree's element names */
	int nparticipants;     /* 1..PATHS_TREE_MAX */
	int fanout;            /* 2..nparticipants (1 participant: ignored) */
	size_t max_bytes;      /* largest payload of one operation, in total */
	ps_server *server;     /* where the elements live: a local server, or a
				  shared segment every participating process
				  opened read-write */
	const int *runs_on;    /* per internal node (see paths_tree_nodes), the
				  participant that runs it, or -1; may be NULL */
	/* Extra stages in front of every edge element, outermost first (the
	 * pathmap puts collectors here); may be 0/NULL. */
	int nstages;
	const char *const *stage_types;
	const struct paths_params *stage_params;
};
#define PATHS_TREE_MAX 4096

/* Shape, for tools and tests: node i's parent (-1 for the root), its
 * children (participants are encoded as -1 - p), and where it runs. */
struct paths_tree_node {
	int parent;
	int nchildren;
	const int *children;
	int runs_on;
	int first, last;       /* participants of its subtree: [first, last] */
};

/*
 * The shape of a tree of n participants, computed without making it (the
 * pathmap's plan, tools): internal nodes group `fanout` children, the
 * participants first, then level by level up to the root, the last node.
 * Node i runs on its subtree's first participant.  With nodes and children
 * (n + count entries, which the nodes point into) and count <= cap, fills
 * them.  Returns count, or PS_EINVAL (also when cap is too small).
 */
int paths_tree_shape(int n, int fanout, struct paths_tree_node *nodes, int *children, int cap);

/*
 * A tree's elements are named for it, and monitors read the names back:
 * TREE.nI.cJ carries node I's J-th child's share up, TREE.nI.d node I's
 * result down, TREE.r the result to every participant.
 */
enum paths_tree_elem { PATHS_TREE_UP, PATHS_TREE_DOWN, PATHS_TREE_RESULT };
/* Fills buf; PS_EBADNAME when the name does not fit (buf then empty). */
int paths_tree_elem_name(char *buf, size_t len, const char *tree, enum paths_tree_elem kind,
			 int node, int child);
/* Whether name is an edge up (TREE.nI.cJ): its tree (cut to treelen - 1
 * bytes), node and child. */
bool paths_tree_edge_of(const char *name, char *tree, size_t treelen, int *node, int *child);

/* Creates the tree's elements (or opens them, if another process did). */
int paths_tree_create(const struct paths_tree_spec *spec, paths_tree **out);
void paths_tree_destroy(paths_tree *t);
int paths_tree_nodes(const paths_tree *t);
const struct paths_tree_node *paths_tree_node(const paths_tree *t, int i);

enum paths_dtype { PATHS_INT64, PATHS_DOUBLE };
enum paths_redop { PATHS_SUM, PATHS_MIN, PATHS_MAX };

/* One participant's handle: per-thread, not shared between threads. */
typedef struct paths_member paths_member;
int paths_member_create(paths_tree *t, int me, paths_member **out);
void paths_member_destroy(paths_member *m);

int paths_barrier(paths_member *m, int timeout_ms);
int paths_bcast(paths_member *m, void *buf, size_t bytes, int root, int timeout_ms);
int paths_reduce(paths_member *m, const void *in, void *out, size_t count,
		 enum paths_dtype type, enum paths_redop op, int root, int timeout_ms);
int paths_allreduce(paths_member *m, const void *in, void *out, size_t count,
		    enum paths_dtype type, enum paths_redop op, int timeout_ms);
/* bytes is one participant's share; out (root only) holds n * bytes. */
int paths_gather(paths_member *m, const void *in, size_t bytes, void *out,
		 int root, int timeout_ms);
/* in (root only) holds n * bytes; each participant gets its share in out. */
int paths_scatter(paths_member *m, const void *in, size_t bytes, void *out,
		  int root, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* PATHS_H */
