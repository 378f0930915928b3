/* steering.h - objects an application exposes (fields monitors see and may set, methods they may call), the asks monitors queue for the application's safe points, and the rules either side runs. */
#ifndef ES_STEERING_H
#define ES_STEERING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pastset/pastset.h"

/*
 * MOSS's model (Eisenhauer and Schwan), on PastSet elements in the rank's
 * trace space:
 *
 *   obj.schema  the application's objects, fields and methods, one record
 *               each (struct st_member), written once, when the object is
 *               first made visible (sealed); an object's record comes
 *               after its members', so a reader that sees it has them all.
 *   obj.K       object K's publications (a sensor): a header and every
 *               field's values, one tuple each, copied once from the
 *               application's variables into the ring.
 *   obj.ask     what monitors ask (struct st_ask: sets, a method's call, a
 *               rule to run in the application, one to stop): written by
 *               any process that may read the segment (PS_CONTROL, as
 *               es.ctl), through a tuple server with the job's secret too.
 *   obj.done    what the application did with each ask people made
 *               (struct st_done), at its safe point: each change applied,
 *               with who asked, the old and the new value, or why it was
 *               refused, with the value refused; each rule installed or
 *               removed, and by whom.  This is the record of every change
 *               people made: rules' actions never evict it.
 *   obj.fired   the answers to the asks monitors' rules make (ST_ASK_BY_RULE),
 *               as obj.done's: a rule that fires often evicts only these.
 *   obj.rules   every rule running in the application, and what the asks of
 *               monitors' rules came to, counted (struct st_rule_rec): a
 *               rule's firing is counted, never written by itself.
 *
 * Invariants (who writes what, and when a change reaches the application):
 *  - Only the application writes obj.schema, obj.K, obj.done, obj.fired
 *    and obj.rules, each from one thread at a time (its lock); anyone who
 *    may steer writes obj.ask.
 *  - An ask's who is written by PastSet where the ask is written
 *    (PS_STAMP_WHO): the tuple server's client as the kernel reports it,
 *    or the writing process's pid, user and name; never what the asker
 *    put there.  A reader escapes every string it prints of another
 *    process's (st_text).
 *  - An ask is applied only at a safe point (st_app_sync), on the thread
 *    that calls it, in the order the asks were written; an ask is one
 *    tuple, so it is applied whole or not at all: its sets are all checked
 *    before the first is applied.  An ask whose writer died while writing
 *    it is skipped by PastSet, never read torn.
 *  - A value reaches a variable only if its field is writable, the index
 *    within its length, the value within [lo, hi] (and whole, for an int):
 *    the monitor checks against the schema before it asks, the application
 *    again before it applies (an ask may come from anyone who may write).
 *  - An ask discarded before a safe point read it (the ring is full) is
 *    said in obj.done (ST_ELOST, with how many), never silently lost.
 */

#define ST_SCHEMA_ELEMENT "obj.schema"
#define ST_ASK_ELEMENT "obj.ask"
#define ST_DONE_ELEMENT "obj.done"
#define ST_FIRED_ELEMENT "obj.fired"
#define ST_RULES_ELEMENT "obj.rules"
#define ST_DATA_FORMAT "obj.%u" /* object K's publications */

#define ST_NAME_MAX 31  /* an object's, field's or method's name */
#define ST_HELP_MAX 95  /* its one line of help */
#define ST_WHO_MAX 47   /* who asked (PS_WHO_LEN - 1): "pid 4242 uid 1000 esctl", "tcp from 10.1.2.3" */
#define ST_OBJECTS_MAX 32
#define ST_MEMBERS_MAX 64 /* fields and methods of one object */
#define ST_SETS_MAX 8     /* sets in one ask, applied together */
#define ST_RULE_MAX 407   /* a rule's text */
#define ST_RULES_MAX 16   /* rules running in one application */
#define ST_PUB_MAX (PS_TUPLE_MAX - 64) /* an object's values, in bytes */

enum st_kind { ST_INT = 1, ST_DOUBLE = 2, ST_METHOD = 3, ST_OBJECT = 4 };
enum st_flags { ST_WRITABLE = 1u << 0 };

/* Errors (negative, beside PastSet's) */
#define ST_ERRBASE 8192
#define ST_ENOOBJ     (-(ST_ERRBASE + 1))  /* no object of that name */
#define ST_ENOFIELD   (-(ST_ERRBASE + 2))  /* no field or method of that name */
#define ST_EREADONLY  (-(ST_ERRBASE + 3))  /* the field is read-only */
#define ST_ERANGE     (-(ST_ERRBASE + 4))  /* the value is out of the field's range */
#define ST_ENOTINT    (-(ST_ERRBASE + 5))  /* an int field given a value that is not whole */
#define ST_EINDEX     (-(ST_ERRBASE + 6))  /* an index past the field's length */
#define ST_ELOST      (-(ST_ERRBASE + 7))  /* asks discarded before a safe point read them */
#define ST_EBADASK    (-(ST_ERRBASE + 8))  /* not an ask (malformed) */
#define ST_ERULE      (-(ST_ERRBASE + 9))  /* a rule that does not compile, or none of that number */
#define ST_ESEALED    (-(ST_ERRBASE + 10)) /* a member added to an object already published */
#define ST_EFULL      (-(ST_ERRBASE + 11)) /* too many objects, members or rules */
#define ST_ENOTMETHOD (-(ST_ERRBASE + 12)) /* a call of a field, or a set of a method */
#define ST_EDUP       (-(ST_ERRBASE + 13)) /* a name already taken */
const char *st_strerror(int rc);

/* obj.schema: one record per object (kind ST_OBJECT, idx 0) and per member */
struct st_member {
	uint32_t obj;    /* the object's number, 1.. */
	uint32_t idx;    /* 0: the object itself; 1.. its members in the order declared */
	uint32_t kind;   /* enum st_kind */
	uint32_t flags;  /* enum st_flags */
	uint32_t count;  /* values (an array's length); an object's: its members */
	uint32_t offset; /* where its values start in a publication, after the header;
			  * an object's: its publications' size, header included */
	double lo, hi;   /* the range a set must be in */
	char name[ST_NAME_MAX + 1];
	char help[ST_HELP_MAX + 1];
};
_Static_assert(sizeof(struct st_member) == 168, "obj.schema's record has a fixed size");
#define ST_MEMBER_LAYOUT "iiiiiidd32b96b"

/* obj.K: each publication's header; the values follow */
struct st_pub {
	uint64_t seq;   /* the object's publications before this one */
	uint64_t stamp; /* CLOCK_MONOTONIC ns, when published */
	uint32_t obj;
	uint32_t bytes; /* of values after the header */
};
_Static_assert(sizeof(struct st_pub) == 24, "a publication's header has a fixed size");

enum st_ask_kind { ST_ASK_SET = 1, ST_ASK_CALL = 2, ST_ASK_RULE = 3, ST_ASK_UNRULE = 4 };
/* Beside a set's or call's kind: asked by a monitor's rule (answered in
 * obj.fired and counted in obj.rules, not in obj.done) */
#define ST_ASK_BY_RULE 0x100u
#define ST_ASK_KIND(k) ((k) & 0xffu)
struct st_set {
	char field[ST_NAME_MAX + 1];
	uint32_t index;   /* an array's element (0 for a scalar) */
	uint32_t has_arg; /* a call: whether value is its argument */
	double value;
};
/* obj.ask */
struct st_ask {
	uint64_t id;    /* the asker's number for it, which its answers carry */
	uint64_t stamp; /* CLOCK_MONOTONIC ns, when asked */
	uint32_t kind;  /* enum st_ask_kind */
	uint32_t n;     /* sets (ST_ASK_SET), 1 (a call), the rule's number (ST_ASK_UNRULE) */
	char who[ST_WHO_MAX + 1]; /* written by PastSet (PS_STAMP_WHO), whatever the asker put */
	char obj[ST_NAME_MAX + 1];
	union {
		struct st_set set[ST_SETS_MAX];
		char rule[ST_RULE_MAX + 1]; /* ST_ASK_RULE: its text */
	} u;
};
_Static_assert(sizeof(struct st_ask) == 512, "obj.ask's record has a fixed size");

/* obj.done: one per change applied, one per ask refused (with why) */
struct st_done {
	uint64_t ask;   /* the ask's id (0: asks lost, n of them) */
	uint64_t stamp; /* CLOCK_MONOTONIC ns, when applied */
	int32_t status; /* 0: applied; an ST_E* code: refused */
	uint32_t kind;  /* the ask's */
	uint32_t index; /* a set's element; a rule's number (installed, removed, acting) */
	uint32_t n;     /* ST_ELOST: asks lost; else which of the ask's sets (from 0) */
	double old_value, new_value; /* refused: new_value the value refused */
	char who[ST_WHO_MAX + 1];
	char obj[ST_NAME_MAX + 1];
	char field[ST_NAME_MAX + 1];
	uint32_t count; /* the field's elements (0: no field): an array's index is always said */
	char why[92];   /* a refused rule: where it does not compile */
};
_Static_assert(sizeof(struct st_done) == 256, "obj.done's record has a fixed size");

/* obj.rules: written whole (a snapshot of every rule, one record each) when
 * a rule is installed or removed, and at most every ST_RULES_EVERY_NS
 * while their counts move: its latest `of` records are the rules now.
 * number 0: the asks of a monitor's rule, by who (the rule runs there). */
struct st_rule_rec {
	uint64_t snap;    /* the snapshot's number, from 1 */
	uint64_t stamp;   /* CLOCK_MONOTONIC ns, when written */
	uint32_t of;      /* records in the snapshot (0: no rule runs) */
	uint32_t number;  /* the rule's number here; 0: a monitor's */
	uint64_t fired;   /* actions applied */
	uint64_t refused; /* actions refused (a value out of range...) */
	uint64_t last_ns; /* the last action, applied or refused (0: none) */
	double last_value;
	int32_t last_status; /* 0, or the last refusal's ST_E* */
	uint32_t kind;    /* its action's: ST_ASK_SET, ST_ASK_CALL */
	char who[ST_WHO_MAX + 1]; /* who installed it; a monitor's: who asks */
	char obj[ST_NAME_MAX + 1];
	char text[ST_RULE_MAX + 1]; /* an in-app rule's; a monitor's: "" */
};
_Static_assert(sizeof(struct st_rule_rec) == 552, "obj.rules' record has a fixed size");
#define ST_RULES_EVERY_NS 200000000ull /* a snapshot of moving counts, at most every 0.2 s */
#define ST_RULE_ASKERS 16 /* monitors' rules counted apart; more: together, as "others" */

/* --- values and names ----------------------------------------------------------- */

/* text as safe to print: control bytes and bytes that are not UTF-8 as
 * \xNN, a backslash as \\ (another process's words: a newline or a
 * terminal escape in them must not show as a line of ours) */
void st_text(const char *text, char *out, size_t len);

/* 0 if name is a name (letters, digits, _; a letter first; 1..31 long) */
int st_name_check(const char *name);
/* Whether v may be set into member m at index: 0, or ST_E* (never a PastSet code) */
int st_value_check(const struct st_member *m, uint32_t index, double v);
/* Whether v may be method m's argument (within its [lo, hi]): 0 or ST_E* */
int st_arg_check(const struct st_member *m, double v);
/* A value as written back to a user: an int without a point, a double with %.17g */
void st_value_format(const struct st_member *m, double v, char *buf, size_t len);

/* --- rules ----------------------------------------------------------------------------- */

/*
 * A rule is a condition on one object's fields and an action on the same
 * object, as MOSS's "if request_rate > 100 Replicate()":
 *
 *   when tunnel.mass_flow < 0.9 set tunnel.inflow = tunnel.inflow + 0.01
 *   when tunnel.steps >= 1000 and not tunnel.plate[0] == 3 call tunnel.reset 2
 *
 *   rule   := 'when' cond ( 'set' ref '=' expr | 'call' OBJ.METHOD [expr] )
 *   cond   := conj { 'or' conj } ;  conj := neg { 'and' neg }
 *   neg    := 'not' neg | expr [ ('<'|'<='|'>'|'>='|'=='|'!=') expr ]
 *   expr   := term { ('+'|'-') term } ;  term := unary { ('*'|'/') unary }
 *   unary  := '-' unary | NUMBER | ref | '(' cond ')' | ('min'|'max') '(' expr ',' expr ')' | 'abs' '(' expr ')'
 *   ref    := OBJ '.' FIELD [ '[' INDEX ']' ]
 *
 * It is checked before it runs (every name a field or method of the object,
 * every index within its field, the target writable or a method) and
 * bounded: no loops, at most ST_RULE_NODES steps, evaluated in one pass
 * over a fixed array.  A value is true when it is not 0.  It is evaluated
 * where it runs: in a monitor at each publication it mirrors, in the
 * application (st_app_sync) at each safe point.  Its action is a set or a
 * call like any ask's, checked the same way: a value out of range is
 * refused and said, never applied.
 */
#define ST_RULE_NODES 64
struct st_node {
	uint8_t op;
	uint8_t field;  /* ST_N_FIELD: the member's idx */
	uint16_t index; /* ST_N_FIELD: the element */
	double num;     /* ST_N_NUM */
};
struct st_rule {
	char obj[ST_NAME_MAX + 1];
	int n;                          /* nodes of the condition, then of the value */
	int cond_end;                   /* nodes [0, cond_end) the condition, in postfix */
	struct st_node node[ST_RULE_NODES];
	uint32_t kind;                  /* ST_ASK_SET or ST_ASK_CALL */
	uint32_t target;                /* the member's idx */
	uint32_t target_index;
	bool has_value;                 /* a call's argument given */
	char target_name[ST_NAME_MAX + 1];
	char text[ST_RULE_MAX + 1];
};
/* The members of the object a rule is checked against: members[i] has idx i + 1. */
struct st_schema {
	char obj[ST_NAME_MAX + 1];
	int n;
	const struct st_member *members;
};
/* Compiles text against the object's members: 0, or ST_ERULE with err
 * saying where and what was expected ("at 17: expected a field of tunnel,
 * got 'mass'"). */
int st_rule_compile(const char *text, const struct st_schema *s, struct st_rule *r, char *err, size_t len);
/* A field's value as the rule's evaluator reads it (idx as in st_member) */
typedef double (*st_get_fn)(void *arg, uint32_t idx, uint32_t index);
/* Evaluates the condition; when it holds, the action: 1 and *value (the
 * value to set, or the call's argument), else 0. */
int st_rule_eval(const struct st_rule *r, st_get_fn get, void *arg, double *value);
/* The ask a monitor's rule's action makes, with value (st_rule_eval's):
 * marked ST_ASK_BY_RULE (its who is PastSet's to write) */
void st_rule_ask(const struct st_rule *r, double value, struct st_ask *k);
/* The object a rule's text names, without compiling it (for a monitor that
 * must find the object first): 0 or ST_ERULE. */
int st_rule_object(const char *text, char obj[ST_NAME_MAX + 1]);

/* --- the application's side ------------------------------------------------------------- */

/*
 * An application's objects (libescollect's es_object.h calls, in the
 * application's process).  Declared at any time, even before there is a
 * trace space; made visible (sealed: schema written, data element made)
 * at the first publication or safe point once st_app_attach gave the
 * rank's server.  Thread-safe: declarations and safe points take the
 * app's lock, a publication its object's.
 */
typedef struct st_app st_app;
typedef struct st_obj st_obj;
/* A method: called at a safe point, on the thread that reached it, with
 * its argument (0 when none was given). */
typedef void (*st_method_fn)(void *arg, double value);

int st_app_create(st_app **out);
void st_app_destroy(st_app *a);
/* The server holding the rank's trace space: objects declared are sealed
 * there from now on.  NULL: detach (the elements closed; objects kept). */
int st_app_attach(st_app *a, ps_server *srv);
/* Each change applied or ask refused is told to fn as well (the collector
 * writes it to the rank's trace). */
void st_app_on_done(st_app *a, void (*fn)(void *arg, const struct st_done *d), void *arg);

int st_obj_create(st_app *a, const char *name, const char *help, st_obj **out);
/* var points at count ints or doubles the application keeps; flags
 * ST_WRITABLE; [lo, hi] the range a set must be in. */
int st_obj_field(st_obj *o, const char *name, enum st_kind kind, void *var, uint32_t count, unsigned flags,
		 double lo, double hi, const char *help);
int st_obj_method(st_obj *o, const char *name, st_method_fn fn, void *arg, const char *help);
/* ... whose argument must be in [lo, hi]; st_obj_method's: every finite
 * number up to 1e308 either way (NaN and infinities never reach it) */
int st_obj_method_range(st_obj *o, const char *name, st_method_fn fn, void *arg, double lo, double hi,
			const char *help);
/* The sensor: every field's values as they are now, one tuple. */
int st_obj_publish(st_obj *o);
/* The safe point: the asks queued since the last, applied in order, and
 * the rules running here evaluated; returns the changes applied, or an
 * error.  Cheap when nothing is queued and no rule runs (one load). */
int st_app_sync(st_app *a);

/* --- the monitors' side: a rank's objects mirrored -------------------------------------- */

/*
 * A mirror of one rank's objects, on the server of its trace space (local
 * shared memory, or a tuple server with the job's secret): its schema,
 * each object's latest values, asks written and their answers awaited.
 */
typedef struct st_mirror st_mirror;
/* PS_ENOENT when the rank exposes no object (no obj.schema) */
int st_mirror_open(ps_server *srv, ps_server *rw, st_mirror **out);
void st_mirror_close(st_mirror *m);
/* The schema read again (objects sealed since are added) */
int st_mirror_refresh(st_mirror *m);
int st_mirror_objects(const st_mirror *m);
/* Object i's record and its members (schema order); NULL past the end */
const struct st_member *st_mirror_object(const st_mirror *m, int i, const struct st_member **members);
/* The object of that name: its index, or ST_ENOOBJ */
int st_mirror_find(const st_mirror *m, const char *obj);
/* Object i's latest publication: 0 and its header; PS_ENODATA when it
 * has published nothing yet.  st_mirror_value reads a field from it. */
int st_mirror_latest(st_mirror *m, int i, struct st_pub *hdr);
/* Waits up to timeout_ms for a publication after seq (the one a caller
 * last saw): 0 and it is the latest now, or PS_ETIMEDOUT. */
int st_mirror_wait(st_mirror *m, int i, uint64_t seq, int timeout_ms);
double st_mirror_value(const st_mirror *m, int i, const struct st_member *f, uint32_t index);
/* Whether the ask would be applied, as the application will check it:
 * 0, or the ST_E* code with err saying which name or value is wrong. */
int st_mirror_check(const st_mirror *m, const struct st_ask *ask, char *err, size_t len);
/* An ask, checked against the schema first (a value out of range, a
 * read-only field, an unknown name are refused here, never written):
 * 0 and *id, or the ST_E* code with err saying which. */
int st_mirror_ask(st_mirror *m, struct st_ask *ask, uint64_t *id, char *err, size_t len);
/* The answers to ask id, waited for up to timeout_ms: how many were read
 * into out (at most n; the ask's sets, or one refusal), 0 if none yet. */
int st_mirror_answers(st_mirror *m, uint64_t id, struct st_done *out, int n, int timeout_ms);
/* obj.done from its first record still held, for a reader of the log */
ps_elem *st_mirror_done_elem(st_mirror *m);
/* The rules running in the application, and the asks of monitors' rules
 * counted, as its latest snapshot of obj.rules says: how many into out
 * (at most n), 0 when none runs, or a negative code (an application of
 * an older EventSpace: PS_ENOENT). */
int st_mirror_rules(st_mirror *m, struct st_rule_rec *out, int n);

#endif
