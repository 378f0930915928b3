/* waits_int.h - what waits.c (a thread's waits, the job) and waits_rules.c (the rules each wait is judged by: R, S, C, M of waits.c's comment) share. */
#ifndef ES_MONITORS_WAITS_INT_H
#define ES_MONITORS_WAITS_INT_H

#include "monitors/monitors.h"
#include "waits.h"

#define UNIT_PATHS 0x40000000 /* a PATHS thread is a unit of its own: this + its index */
#define MAX_TARGETS 4096     /* units one clause waits for, at most, for the picture's sake */

struct hub {
	uint64_t id;
	uint32_t num;
	int gate;
};

/* A part of what a thread waits for: satisfied, not known, or waiting
 * for all or any of its targets (units, or gates when unit < 0). */
enum clause_kind { CL_SAT = 1, CL_UNKNOWN, CL_WAIT };
struct clause {
	enum clause_kind kind;
	bool all;
	int first, n; /* into the job's targets */
};
struct target {
	int unit, gate;
};

struct job {
	const es_scope *s;
	const struct hb_look *look;
	es_mpi *mpi;
	wf_graph *g;
	int n;                    /* threads */
	int *rank;                /* per thread: its MPI rank, or -1 */
	int *first_leaf;          /* per thread */
	const struct es_flight *fl; /* per thread: what it is inside */
	const bool *in;             /* ... if anything */
	int maxrank;
	int *rank_first, *by_rank; /* rank r's threads: by_rank[rank_first[r] .. rank_first[r + 1]) */
	const char **ended;       /* per thread: why it has ended, or NULL */
	struct hub *hubs;
	int nhubs, caphubs;
	struct clause cl[64];
	int ncl;
	/* the collectives the thread is in, for wf_coll once it is added */
	struct { int64_t comm; unsigned op; uint32_t num, root, bytes; char name[200]; } colls[16];
	int ncolls;
	struct target *tg;
	int ntg, captg;
	/* members gone past a collective with another call, for
	 * wf_coll_past once every thread is added */
	struct past { int rank; int64_t comm; unsigned op; uint32_t num, root; char name[200]; } *past;
	int npast, cappast;
};

/* --- waits_rules.c ----------------------------------------------------------------------- */

void wr_comm_words(const struct es_mpi_comm *c, char *buf, size_t len);
void wr_on_comm(const struct es_mpi_comm *c, char *buf, size_t len);
void wr_peer_words(const struct es_mpi_comm *c, uint32_t world, char *buf, size_t len);
void wr_tag_words(uint32_t tag, char *buf, size_t len);
void wr_clauses_start(struct job *j);
struct clause *wr_clause_new(struct job *j, enum clause_kind kind, bool all);
int wr_target_add(struct job *j, struct clause *c, int unit, int gate);
bool wr_is_recv_op(unsigned op);
int wr_open_receives(struct job *j, int r, uint32_t src, uint32_t tag, uint64_t id, uint64_t upto);
int wr_recv_clause(struct job *j, int r, uint32_t src, uint32_t tag, const struct es_mpi_comm *c, int side,
		       int need);
int wr_send_clause(struct job *j, int r, uint32_t d, uint32_t tag, const struct es_mpi_comm *c);
bool wr_is_coll_code(unsigned code);
int wr_add_past(struct job *j);
int wr_coll_clause(struct job *j, int t, int r, unsigned code, const struct es_mpi_comm *c, uint32_t num,
		       uint32_t root, uint32_t bytes);

#endif
