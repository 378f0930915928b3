/* tree.c - collective operations on PATHS trees whose edges are PastSet elements. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "internal.h"

/*
 * Elements of a tree called NAME:
 *   NAME.nI.cJ   edge from child J of node I up to node I: flow, one writer
 *                (the child's runner), one taker (node I's runner)
 *   NAME.nI.d    node I's results going down: written once per operation
 *                that returns a result to all, read by index by the runners
 *                of I's children
 *   NAME.r       results of reduce and gather for a root that does not run
 *                the tree's root node
 * Every tuple carries a header naming the operation and its sequence
 * number, so participants that call different collectives, or the same
 * ones in a different order, get an error rather than someone else's data.
 */

enum kind { K_BARRIER = 1, K_BCAST, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER };

struct hdr {
	uint64_t seq;
	uint32_t kind;
	uint32_t has_data;
};
#define HDR sizeof(struct hdr)

struct tnode {
	struct paths_tree_node pub;
	const int *children; /* into the tree's children */
	paths_path **edge; /* per child */
	paths_path *down;
	int slot;          /* my index among my parent's children */
};

struct paths_tree {
	char name[32];
	int n, nnodes, fanout;
	size_t max_bytes, tuple_size;
	struct tnode *nodes;
	int *children;              /* every node's children, one block */
	int *leaf_node, *leaf_slot; /* per participant */
	paths_path *result;
	ps_server *srv;
	int nelems;
	ps_elem **elems;
};

struct paths_member {
	paths_tree *t;
	int me;
	uint64_t seq, down_seq, res_seq;
	int *hosted, nhosted; /* nodes I run, bottom-up */
	unsigned char **acc;  /* per hosted node: its combined tuple */
	unsigned char *mine, *in;
	int broken;
};

/* --- building ----------------------------------------------------------------- */

static int elem_create_or_open(paths_tree *t, const char *name, uint32_t thr,
			       enum ps_mode mode, ps_elem **out)
{
	/* Participants sleep on every element of the tree. */
	struct ps_elem_attr a = { .tuple_size = t->tuple_size, .threshold = thr, .mode = mode,
				  .flags = PS_EXACT_WAKE };
	int rc = ps_elem_create(t->srv, name, &a, out);
	if (rc == PS_EEXIST) /* another process of the tree made it first */
		rc = ps_elem_open(t->srv, name, t->tuple_size, out);
	/* on another host (a remote server): its processes make it; wait up
	 * to 30 s for them */
	for (int tries = 0; rc == PS_EROFS && tries < 3000; tries++)
		if ((rc = ps_elem_open(t->srv, name, t->tuple_size, out)) == PS_ENOENT) {
			rc = PS_EROFS;
			usleep(10000);
		}
	if (rc == PS_EROFS)
		rc = PS_ETIMEDOUT; /* never appeared */
	if (!rc)
		t->elems[t->nelems++] = *out;
	return rc;
}

/* A path to a new element: the spec's stages, then the element. */
static int make_path(paths_tree *t, const struct paths_tree_spec *s, const char *name,
		     uint32_t thr, enum ps_mode mode, paths_path **out)
{
	ps_elem *e;
	paths_stage *st, *next;
	int rc = elem_create_or_open(t, name, thr, mode, &e);
	if (rc || (rc = paths_stage_element(e, &st)))
		return rc;
	for (int i = s->nstages - 1; i >= 0; i--) {
		struct paths_params p = { 0 };
		if (s->stage_params)
			p = s->stage_params[i];
		p.path = name; /* so a collector can say which edge it watches */
		rc = paths_stage_create(s->stage_types[i], &p, st, &next);
		paths_stage_release(st); /* next holds it now, or we are done */
		if (rc)
			return rc;
		st = next;
	}
	rc = paths_path_create(name, st, t->tuple_size, out);
	paths_stage_release(st);
	return rc;
}

int paths_tree_shape(int n, int fanout, struct paths_tree_node *nodes, int *children, int cap)
{
	if (n < 1 || n > PATHS_TREE_MAX || (n > 1 && fanout < 2))
		return PS_EINVAL;
	if (n == 1)
		fanout = 2; /* one node over the one participant, whatever was asked */
	/* Level 0 groups participants; each level above groups the one below. */
	int count = 0, below = n, below_first = 0, used = 0;
	bool fill = nodes && children;
	do {
		int first_here = count;
		for (int g = 0; g < below; g += fanout, count++) {
			int k = below - g < fanout ? below - g : fanout;
			if (!fill || count >= cap)
				continue;
			struct paths_tree_node *nd = &nodes[count];
			nd->parent = -1;
			nd->nchildren = k;
			nd->children = children + used;
			for (int j = 0; j < k; j++) {
				int c = below_first + g + j;
				children[used++] = first_here ? c : -1 - c;
				if (first_here)
					nodes[c].parent = count;
			}
			int c0 = nd->children[0], ck = nd->children[k - 1];
			nd->first = c0 < 0 ? -1 - c0 : nodes[c0].first;
			nd->last = ck < 0 ? -1 - ck : nodes[ck].last;
			nd->runs_on = nd->first;
		}
		below_first = first_here;
		below = count - first_here;
	} while (below > 1);
	return fill && count > cap ? PS_EINVAL : count;
}

static int build_shape(paths_tree *t, const int *runs_on)
{
	int count = paths_tree_shape(t->n, t->fanout, NULL, NULL, 0);
	if (count < 0)
		return count;
	struct paths_tree_node *pub = calloc((size_t)count, sizeof(*pub));
	t->nodes = calloc((size_t)count, sizeof(*t->nodes));
	t->children = calloc((size_t)(t->n + count), sizeof(int));
	t->leaf_node = calloc((size_t)t->n, sizeof(int));
	t->leaf_slot = calloc((size_t)t->n, sizeof(int));
	if (!pub || !t->nodes || !t->children || !t->leaf_node || !t->leaf_slot) {
		free(pub);
		return PS_ENOMEM;
	}
	paths_tree_shape(t->n, t->fanout, pub, t->children, count);
	t->nnodes = count;
	for (int i = 0; i < count; i++) {
		struct tnode *nd = &t->nodes[i];
		nd->pub = pub[i];
		nd->children = t->children + (pub[i].children - t->children);
		for (int j = 0; j < nd->pub.nchildren; j++) {
			int c = nd->children[j];
			if (c < 0) {
				t->leaf_node[-1 - c] = i;
				t->leaf_slot[-1 - c] = j;
			} else {
				t->nodes[c].slot = j;
			}
		}
	}
	free(pub);
	for (int i = 0; runs_on && i < t->nnodes; i++) {
		if (runs_on[i] < -1 || runs_on[i] >= t->n)
			return PS_EINVAL;
		if (runs_on[i] >= 0)
			t->nodes[i].pub.runs_on = runs_on[i];
	}
	return 0;
}

/* T1-T4 (internal.h) */
void paths__check_tree(const paths_tree *t)
{
#ifdef ES_DEBUG
	BASE_INVARIANT("T1: the root is the last node", t->nnodes >= 1 && t->nodes[t->nnodes - 1].pub.parent == -1);
	for (int i = 0; i < t->nnodes; i++) {
		const struct tnode *nd = &t->nodes[i];
		BASE_INVARIANT("T1: every other node's parent is above it",
			       i == t->nnodes - 1 || (nd->pub.parent > i && nd->pub.parent < t->nnodes));
		BASE_INVARIANT("T3: a node runs on a participant", nd->pub.runs_on >= 0 && nd->pub.runs_on < t->n);
		BASE_INVARIANT("T4: every node has its path down", nd->down != NULL);
		int next = nd->pub.first;
		for (int j = 0; j < nd->pub.nchildren; j++) {
			int c = nd->children[j];
			if (c < 0) {
				BASE_INVARIANT("T2: a participant names the node and place that list it",
					       t->leaf_node[-1 - c] == i && t->leaf_slot[-1 - c] == j);
				BASE_INVARIANT("T3: a subtree's participants in order", -1 - c == next);
				next++;
			} else {
				BASE_INVARIANT("T2: a child node is below its parent, and knows its place",
					       c < i && t->nodes[c].pub.parent == i && t->nodes[c].slot == j);
				BASE_INVARIANT("T3: a subtree's participants in order", t->nodes[c].pub.first == next);
				next = t->nodes[c].pub.last + 1;
			}
			int runner = c < 0 ? -1 - c : t->nodes[c].pub.runs_on;
			BASE_INVARIANT("T4: an edge up unless the child's runner is the node's",
				       (runner == nd->pub.runs_on) == !nd->edge[j]);
		}
		BASE_INVARIANT("T3: a subtree is its children's participants", next == nd->pub.last + 1);
	}
#else
	(void)t;
#endif
}

int paths_tree_create(const struct paths_tree_spec *s, paths_tree **out)
{
	if (!s || !out || !s->name || !s->server || s->nparticipants < 1 ||
	    s->nparticipants > PATHS_TREE_MAX || s->max_bytes > (1u << 20) ||
	    (s->nparticipants > 1 && (s->fanout < 2 || s->fanout > s->nparticipants)) ||
	    (s->nstages && !s->stage_types) || s->nstages < 0)
		return PS_EINVAL;
	if (strlen(s->name) > 24)
		return PS_EBADNAME; /* room for ".n4095.c4095" within PS_NAME_MAX */
	paths_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return PS_ENOMEM;
	snprintf(t->name, sizeof(t->name), "%s", s->name);
	t->n = s->nparticipants;
	t->fanout = t->n > 1 ? s->fanout : 2;
	t->max_bytes = s->max_bytes;
	t->tuple_size = HDR + ((s->max_bytes + 7) & ~(size_t)7);
	t->srv = s->server;
	int rc = build_shape(t, s->runs_on);
	if (rc)
		goto fail;
	t->elems = calloc((size_t)(2 * t->nnodes + t->n + 2), sizeof(ps_elem *));
	if (!t->elems) {
		rc = PS_ENOMEM;
		goto fail;
	}
	char name[96]; /* too long a name fails in ps_elem_create */
	for (int i = 0; i < t->nnodes; i++) {
		struct tnode *nd = &t->nodes[i];
		nd->edge = calloc((size_t)nd->pub.nchildren, sizeof(*nd->edge));
		if (!nd->edge) {
			rc = PS_ENOMEM;
			goto fail;
		}
		for (int j = 0; j < nd->pub.nchildren; j++) {
			/* A child the node's own runner runs hands its share over
			 * in memory: that edge is never used, so it is not made
			 * (and no collector waits on it in vain). */
			int c = nd->children[j];
			int child_runner = c < 0 ? -1 - c : t->nodes[c].pub.runs_on;
			if (child_runner == nd->pub.runs_on)
				continue;
			paths_tree_elem_name(name, sizeof(name), t->name, PATHS_TREE_UP, i, j);
			if ((rc = make_path(t, s, name, 2, PS_FLOW, &nd->edge[j])))
				goto fail;
		}
		paths_tree_elem_name(name, sizeof(name), t->name, PATHS_TREE_DOWN, i, 0);
		if ((rc = make_path(t, s, name, 4, PS_DISCARD, &nd->down)))
			goto fail;
	}
	paths_tree_elem_name(name, sizeof(name), t->name, PATHS_TREE_RESULT, 0, 0);
	if ((rc = make_path(t, s, name, 4, PS_DISCARD, &t->result)))
		goto fail;
	paths__check_tree(t);
	*out = t;
	return 0;
fail:
	paths_tree_destroy(t);
	return rc;
}

int paths_tree_elem_name(char *buf, size_t len, const char *tree, enum paths_tree_elem kind,
			 int node, int child)
{
	if (!buf || !len)
		return PS_EINVAL;
	int n = !tree ? -1
	      : kind == PATHS_TREE_UP ? snprintf(buf, len, "%s.n%d.c%d", tree, node, child)
	      : kind == PATHS_TREE_DOWN ? snprintf(buf, len, "%s.n%d.d", tree, node)
	      : snprintf(buf, len, "%s.r", tree);
	if (n < 0 || (size_t)n >= len) {
		*buf = 0;
		return PS_EBADNAME;
	}
	return 0;
}

/* Reads a number that ends at end (exclusive), backwards from it; the
 * position of its first digit, or NULL. */
static const char *number_before(const char *start, const char *end, int *v)
{
	const char *p = end;
	while (p > start && p[-1] >= '0' && p[-1] <= '9' && end - p < 9)
		p--;
	if (p == end)
		return NULL;
	*v = 0;
	for (const char *q = p; q < end; q++)
		*v = *v * 10 + (*q - '0');
	return p;
}

bool paths_tree_edge_of(const char *name, char *tree, size_t treelen, int *node, int *child)
{
	/* from the end, so that a tree's own name may hold dots */
	const char *end = name ? name + strlen(name) : NULL;
	const char *c = end ? number_before(name, end, child) : NULL;
	if (!c || c - name < 2 || c[-1] != 'c' || c[-2] != '.')
		return false;
	const char *n = number_before(name, c - 2, node);
	if (!n || n - name < 3 || n[-1] != 'n' || n[-2] != '.')
		return false;
	size_t tl = (size_t)(n - 2 - name);
	if (treelen) {
		tl = tl < treelen - 1 ? tl : treelen - 1;
		memcpy(tree, name, tl);
		tree[tl] = 0;
	}
	return true;
}

void paths_tree_destroy(paths_tree *t)
{
	if (!t)
		return;
	for (int i = 0; t->nodes && i < t->nnodes; i++) {
		struct tnode *nd = &t->nodes[i];
		for (int j = 0; nd->edge && j < nd->pub.nchildren; j++)
			paths_path_destroy(nd->edge[j]);
		free(nd->edge);
		paths_path_destroy(nd->down);
	}
	paths_path_destroy(t->result);
	for (int i = 0; i < t->nelems; i++)
		ps_elem_close(t->elems[i]);
	free(t->elems);
	free(t->nodes);
	free(t->children);
	free(t->leaf_node);
	free(t->leaf_slot);
	free(t);
}

int paths_tree_nodes(const paths_tree *t)
{
	return t->nnodes;
}

const struct paths_tree_node *paths_tree_node(const paths_tree *t, int i)
{
	return i >= 0 && i < t->nnodes ? &t->nodes[i].pub : NULL;
}

int paths_member_create(paths_tree *t, int me, paths_member **out)
{
	if (!t || !out || me < 0 || me >= t->n)
		return PS_EINVAL;
	paths_member *m = calloc(1, sizeof(*m));
	if (!m)
		return PS_ENOMEM;
	m->t = t;
	m->me = me;
	m->hosted = calloc((size_t)t->nnodes, sizeof(int));
	m->acc = calloc((size_t)t->nnodes, sizeof(*m->acc));
	m->mine = calloc(1, t->tuple_size);
	m->in = calloc(1, t->tuple_size);
	if (!m->hosted || !m->acc || !m->mine || !m->in)
		goto nomem;
	/* Node indices grow level by level, so index order is bottom-up. */
	for (int i = 0; i < t->nnodes; i++)
		if (t->nodes[i].pub.runs_on == me) {
			m->acc[i] = calloc(1, t->tuple_size);
			if (!m->acc[i])
				goto nomem;
			m->hosted[m->nhosted++] = i;
		}
	*out = m;
	return 0;
nomem:
	paths_member_destroy(m);
	return PS_ENOMEM;
}

void paths_member_destroy(paths_member *m)
{
	if (!m)
		return;
	for (int i = 0; m->acc && i < m->t->nnodes; i++)
		free(m->acc[i]);
	free(m->acc);
	free(m->hosted);
	free(m->mine);
	free(m->in);
	free(m);
}

/* --- running ---------------------------------------------------------------------- */

struct coll {
	enum kind kind;
	enum paths_dtype type;
	enum paths_redop op;
	size_t bytes;     /* payload bytes of one contribution or result */
	size_t share;     /* gather: bytes per participant */
	int root;
	bool down;        /* result goes to everyone */
	uint64_t deadline; /* base_deadline_ns */
};

static int ms_left(const struct coll *c)
{
	return base_ms_left(c->deadline);
}

static void combine(const paths_tree *t, const struct coll *c, unsigned char *acc,
		    const unsigned char *in, const struct paths_tree_node *from)
{
	struct hdr *ah = (struct hdr *)acc;
	const struct hdr *ih = (const struct hdr *)in;
	if (!ih->has_data)
		return;
	unsigned char *a = acc + HDR;
	const unsigned char *b = in + HDR;
	switch (c->kind) {
	case K_REDUCE:
	case K_ALLREDUCE:
		if (!ah->has_data) {
			memcpy(a, b, c->bytes);
			break;
		}
		for (size_t i = 0; i < c->bytes / 8; i++) {
			if (c->type == PATHS_INT64) {
				int64_t x, y;
				memcpy(&x, a + 8 * i, 8);
				memcpy(&y, b + 8 * i, 8);
				x = c->op == PATHS_SUM ? (int64_t)((uint64_t)x + (uint64_t)y) :
				    c->op == PATHS_MIN ? (y < x ? y : x) : (y > x ? y : x);
				memcpy(a + 8 * i, &x, 8);
			} else {
				double x, y;
				memcpy(&x, a + 8 * i, 8);
				memcpy(&y, b + 8 * i, 8);
				x = c->op == PATHS_SUM ? x + y :
				    c->op == PATHS_MIN ? (y < x ? y : x) : (y > x ? y : x);
				memcpy(a + 8 * i, &x, 8);
			}
		}
		break;
	case K_GATHER: {
		/* A subtree's contribution holds its participants' shares. */
		size_t off = (size_t)from->first * c->share;
		size_t len = (size_t)(from->last - from->first + 1) * c->share;
		memcpy(a + off, b + off, len);
		break;
	}
	default: /* bcast, scatter: the root's payload, wherever it is */
		memcpy(a, b, c->bytes);
		break;
	}
	(void)t;
	ah->has_data = 1;
}

static int check_hdr(const paths_member *m, const unsigned char *tuple, uint64_t seq,
		     enum kind k)
{
	const struct hdr *h = (const struct hdr *)tuple;
	(void)m;
	/* Participants disagree on which collective this is: a caller's bug
	 * that must not turn into silently wrong results. */
	return h->seq == seq && h->kind == (uint32_t)k ? 0 : PS_EINVAL;
}

/* My own contribution, placed where the combine expects it. */
static void put_mine(paths_member *m, const struct coll *c, const void *in, uint64_t seq)
{
	struct hdr *mh = (struct hdr *)m->mine;
	mh->seq = seq;
	mh->kind = c->kind;
	mh->has_data = 0;
	if (c->kind == K_REDUCE || c->kind == K_ALLREDUCE) {
		memcpy(m->mine + HDR, in, c->bytes);
		mh->has_data = 1;
	} else if (c->kind == K_GATHER) {
		memcpy(m->mine + HDR + (size_t)m->me * c->share, in, c->share);
		mh->has_data = 1;
	} else if ((c->kind == K_BCAST || c->kind == K_SCATTER) && m->me == c->root) {
		memcpy(m->mine + HDR, in, c->bytes);
		mh->has_data = 1;
	}
}

/* Up: sends mine unless I run my leaf's node; then runs my nodes, bottom
 * up, each combining its children's shares and passing the result on. */
static int go_up(paths_member *m, struct coll *c, uint64_t seq)
{
	paths_tree *t = m->t;
	const struct paths_tree_node leaf = { .first = m->me, .last = m->me };
	struct paths_tree_node other = { 0 };
	int L = t->leaf_node[m->me], rc;
	if (t->nodes[L].pub.runs_on != m->me &&
	    (rc = paths_write(t->nodes[L].edge[t->leaf_slot[m->me]], m->mine, ms_left(c), NULL)))
		return rc;
	for (int h = 0; h < m->nhosted; h++) {
		int n = m->hosted[h];
		struct tnode *nd = &t->nodes[n];
		unsigned char *acc = m->acc[n];
		struct hdr *ah = (struct hdr *)acc;
		ah->seq = seq;
		ah->kind = c->kind;
		ah->has_data = 0;
		for (int j = 0; j < nd->pub.nchildren; j++) {
			int ch = nd->children[j];
			const unsigned char *src;
			const struct paths_tree_node *from;
			if (ch < 0 && -1 - ch == m->me) {
				src = m->mine;
				from = &leaf;
			} else if (ch >= 0 && t->nodes[ch].pub.runs_on == m->me) {
				src = m->acc[ch];
				from = &t->nodes[ch].pub;
			} else {
				if ((rc = paths_take(nd->edge[j], m->in, ms_left(c), NULL)) ||
				    (rc = check_hdr(m, m->in, seq, c->kind)))
					return rc;
				src = m->in;
				other.first = other.last = -1 - ch;
				from = ch < 0 ? &other : &t->nodes[ch].pub;
			}
			combine(t, c, acc, src, from);
		}
		int p = nd->pub.parent;
		if (p >= 0 && t->nodes[p].pub.runs_on != m->me &&
		    (rc = paths_write(t->nodes[p].edge[nd->slot], acc, ms_left(c), NULL)))
			return rc;
	}
	return 0;
}

/* Down, for a result every participant gets: for each node I run, top
 * down, fetch its parent's result (unless I have it) and pass it on to its
 * children; then take my own. */
static int go_down(paths_member *m, struct coll *c, const unsigned char **result)
{
	paths_tree *t = m->t;
	int L = t->leaf_node[m->me], rc;
	for (int h = m->nhosted - 1; h >= 0; h--) {
		int n = m->hosted[h], p = t->nodes[n].pub.parent;
		if (p >= 0 && t->nodes[p].pub.runs_on != m->me) {
			if ((rc = paths_read(t->nodes[p].down, m->down_seq, m->acc[n], ms_left(c), NULL)))
				return rc;
		} else if (p >= 0) {
			memcpy(m->acc[n], m->acc[p], t->tuple_size);
		}
		if ((rc = paths_write(t->nodes[n].down, m->acc[n], 0, NULL)))
			return rc;
	}
	if (t->nodes[L].pub.runs_on == m->me) {
		*result = m->acc[L];
	} else {
		if ((rc = paths_read(t->nodes[L].down, m->down_seq, m->in, ms_left(c), NULL)))
			return rc;
		*result = m->in;
	}
	m->down_seq++;
	return 0;
}

/* Only the root gets a result: from the root node's runner, through the
 * result element if the root is another participant. */
static int to_root(paths_member *m, struct coll *c, const unsigned char **result)
{
	paths_tree *t = m->t;
	int root = t->nnodes - 1, host = t->nodes[root].pub.runs_on, rc = 0;
	if (host == m->me && c->root == m->me) {
		*result = m->acc[root];
	} else if (host == m->me) {
		rc = paths_write(t->result, m->acc[root], 0, NULL);
	} else if (c->root == m->me) {
		if (!(rc = paths_read(t->result, m->res_seq, m->in, ms_left(c), NULL)))
			*result = m->in;
	}
	/* Everyone knows whether the result element was used, so everyone
	 * agrees on the index of its next tuple. */
	if (!rc && host != c->root)
		m->res_seq++;
	return rc;
}

static int run(paths_member *m, struct coll *c, const void *in, void *out)
{
	if (m->broken)
		return m->broken;
	if (c->bytes > m->t->max_bytes)
		return PS_ESIZE;
	uint64_t seq = m->seq;
	const unsigned char *result = NULL;
	put_mine(m, c, in, seq);
	int rc = go_up(m, c, seq);
	if (!rc)
		rc = c->down ? go_down(m, c, &result) : to_root(m, c, &result);
	if (!rc && result)
		rc = check_hdr(m, result, seq, c->kind);
	if (rc) {
		/* Part of the operation happened: the tree's sequence is lost. */
		m->broken = rc;
		return rc;
	}
	if (result && out) {
		if (c->kind == K_SCATTER)
			memcpy(out, result + HDR + (size_t)m->me * c->share, c->share);
		else
			memcpy(out, result + HDR, c->bytes);
	}
	m->seq++;
	return 0;
}

static void start(struct coll *c, enum kind k, int timeout_ms)
{
	memset(c, 0, sizeof(*c));
	c->kind = k;
	c->down = k == K_BARRIER || k == K_BCAST || k == K_ALLREDUCE || k == K_SCATTER;
	c->deadline = base_deadline_ns(timeout_ms);
}

int paths_barrier(paths_member *m, int timeout_ms)
{
	if (!m)
		return PS_EINVAL;
	struct coll c;
	start(&c, K_BARRIER, timeout_ms);
	return run(m, &c, NULL, NULL);
}

int paths_bcast(paths_member *m, void *buf, size_t bytes, int root, int timeout_ms)
{
	if (!m || !buf || root < 0 || root >= m->t->n)
		return PS_EINVAL;
	struct coll c;
	start(&c, K_BCAST, timeout_ms);
	c.bytes = bytes;
	c.root = root;
	return run(m, &c, buf, buf);
}

static int reduce(paths_member *m, enum kind k, const void *in, void *out, size_t count,
		  enum paths_dtype type, enum paths_redop op, int root, int timeout_ms)
{
	if (!m || !in || root < 0 || root >= m->t->n ||
	    (type != PATHS_INT64 && type != PATHS_DOUBLE) ||
	    (op != PATHS_SUM && op != PATHS_MIN && op != PATHS_MAX) || count > (1u << 20))
		return PS_EINVAL;
	if (!out && (k == K_ALLREDUCE || m->me == root))
		return PS_EINVAL;
	struct coll c;
	start(&c, k, timeout_ms);
	c.type = type;
	c.op = op;
	c.bytes = count * 8;
	c.root = root;
	return run(m, &c, in, out);
}

int paths_reduce(paths_member *m, const void *in, void *out, size_t count,
		 enum paths_dtype type, enum paths_redop op, int root, int timeout_ms)
{
	return reduce(m, K_REDUCE, in, out, count, type, op, root, timeout_ms);
}

int paths_allreduce(paths_member *m, const void *in, void *out, size_t count,
		    enum paths_dtype type, enum paths_redop op, int timeout_ms)
{
	return reduce(m, K_ALLREDUCE, in, out, count, type, op, 0, timeout_ms);
}

int paths_gather(paths_member *m, const void *in, size_t bytes, void *out, int root,
		 int timeout_ms)
{
	if (!m || !in || root < 0 || root >= m->t->n || (m->me == root && !out))
		return PS_EINVAL;
	struct coll c;
	start(&c, K_GATHER, timeout_ms);
	c.share = bytes;
	c.bytes = bytes * (size_t)m->t->n;
	c.root = root;
	return run(m, &c, in, out);
}

int paths_scatter(paths_member *m, const void *in, size_t bytes, void *out, int root,
		  int timeout_ms)
{
	if (!m || !out || root < 0 || root >= m->t->n || (m->me == root && !in))
		return PS_EINVAL;
	struct coll c;
	start(&c, K_SCATTER, timeout_ms);
	c.share = bytes;
	c.bytes = bytes * (size_t)m->t->n;
	c.root = root;
	return run(m, &c, in, out);
}
