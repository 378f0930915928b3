/* test_steering.c - steering: the rule language, an application's objects seen and steered through a mirror, and every refusal (range, read-only, unknown, index, a torn batch, asks lost). */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "steering/steering.h"
#include "tests/unit/suites.h"

/* --- rules -------------------------------------------------------------------------------- */

static const struct st_member tunnel[] = {
	{ .obj = 1, .idx = 1, .kind = ST_DOUBLE, .flags = ST_WRITABLE, .count = 1, .lo = 0, .hi = 1, .name = "inflow" },
	{ .obj = 1, .idx = 2, .kind = ST_DOUBLE, .count = 1, .lo = -1e308, .hi = 1e308, .name = "mass_flow" },
	{ .obj = 1, .idx = 3, .kind = ST_INT, .flags = ST_WRITABLE, .count = 2, .lo = 0, .hi = 100, .name = "plate" },
	{ .obj = 1, .idx = 4, .kind = ST_METHOD, .count = 1, .lo = -1e308, .hi = 1e308, .name = "reset" },
};

static double vals[5][2];
static double get(void *arg, uint32_t idx, uint32_t index)
{
	(void)arg;
	return vals[idx][index];
}

static int compile(const char *text, struct st_rule *r, char *err)
{
	struct st_schema s = { .obj = "tunnel", .n = 4, .members = tunnel };
	return st_rule_compile(text, &s, r, err, 200);
}

START_TEST(rules_compile_and_run)
{
	struct st_rule r;
	char err[200];
	double v = 0;
	ck_assert_int_eq(compile("when tunnel.mass_flow < 0.9 set tunnel.inflow = tunnel.inflow + 0.01", &r, err), 0);
	vals[1][0] = 0.5, vals[2][0] = 0.8;
	ck_assert_int_eq(st_rule_eval(&r, get, NULL, &v), 1);
	ck_assert(fabs(v - 0.51) < 1e-12);
	vals[2][0] = 0.95;
	ck_assert_int_eq(st_rule_eval(&r, get, NULL, &v), 0);
	ck_assert_int_eq(r.kind, ST_ASK_SET);
	ck_assert_int_eq(r.target, 1);
	/* precedence, and/or/not, functions, array elements, a call with and without its argument */
	ck_assert_int_eq(compile("when not tunnel.plate[1] == 3 and (tunnel.inflow > 0.2 or 1 > 2) "
				 "call tunnel.reset max(2, abs(-7)) * 2 - 1", &r, err), 0);
	vals[3][1] = 4, vals[1][0] = 0.5;
	ck_assert_int_eq(st_rule_eval(&r, get, NULL, &v), 1);
	ck_assert(v == 13);
	ck_assert(r.has_value);
	vals[3][1] = 3;
	ck_assert_int_eq(st_rule_eval(&r, get, NULL, &v), 0);
	ck_assert_int_eq(compile("when 1 call tunnel.reset", &r, err), 0);
	ck_assert(!r.has_value);
	ck_assert_int_eq(compile("when -tunnel.inflow / 0 < 1 set tunnel.plate[1] = 2 + 3 * 4", &r, err), 0);
	ck_assert_int_eq(st_rule_eval(&r, get, NULL, &v), 1); /* -inf < 1 */
	ck_assert(v == 14);
	ck_assert_int_eq(r.target_index, 1);
	char obj[ST_NAME_MAX + 1];
	ck_assert_int_eq(st_rule_object("when  tunnel.x > 1 set tunnel.y = 2", obj), 0);
	ck_assert_str_eq(obj, "tunnel");
	ck_assert_int_eq(st_rule_object("when 1 > 2", obj), ST_ERULE);
}
END_TEST

START_TEST(rules_refused_with_where)
{
	static const struct { const char *text, *says; } bad[] = {
		{ "if tunnel.inflow < 1 set tunnel.inflow = 0", "at 1: expected 'when', got 'if'" },
		{ "when tunnel.mass < 1 set tunnel.inflow = 0", "at 13: expected a field or method of tunnel" },
		{ "when tunnel.inflow < 1 set tunnel.mass_flow = 0", "at 35: expected a writable field (mass_flow is read-only), got 'mass_flow'" },
		{ "when tunnel.inflow < 1 set tunnel.reset = 0", "is a method: call it" },
		{ "when tunnel.inflow < 1 call tunnel.inflow", "is a field: set it" },
		{ "when tunnel.reset < 1 call tunnel.reset", "a field (reset is a method)" },
		{ "when tunnel.plate[2] < 1 call tunnel.reset", "an index of tunnel.plate, 0 to 1" },
		{ "when other.plate < 1 call tunnel.reset", "a field of tunnel" },
		{ "when tunnel.inflow < 1 set tunnel.inflow = 0 0", "the end of the rule" },
		{ "when tunnel.inflow < 1", "'set' or 'call'" },
		{ "when (((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))) call tunnel.reset",
		  "fewer parentheses" },
		{ "when 1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1 call tunnel.reset",
		  "longer than 64 steps" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct st_rule r;
		char err[200] = "";
		ck_assert_int_eq(compile(bad[i].text, &r, err), ST_ERULE);
		ck_assert_msg(strstr(err, bad[i].says), "%s: said '%s', expected '%s'", bad[i].text, err, bad[i].says);
	}
}
END_TEST

START_TEST(values_checked)
{
	const struct st_member *in = &tunnel[0], *plate = &tunnel[2];
	ck_assert_int_eq(st_value_check(in, 0, 0.5), 0);
	ck_assert_int_eq(st_value_check(in, 0, 1.5), ST_ERANGE);
	ck_assert_int_eq(st_value_check(in, 0, NAN), ST_ERANGE);
	ck_assert_int_eq(st_value_check(in, 1, 0.5), ST_EINDEX);
	ck_assert_int_eq(st_value_check(&tunnel[1], 0, 0.5), ST_EREADONLY);
	ck_assert_int_eq(st_value_check(plate, 1, 2.5), ST_ENOTINT);
	ck_assert_int_eq(st_value_check(&tunnel[3], 0, 1), ST_ENOTMETHOD);
	ck_assert_int_eq(st_name_check("tunnel_2"), 0);
	ck_assert_int_eq(st_name_check("2tunnel"), PS_EBADNAME);
	ck_assert_int_eq(st_name_check("tun.nel"), PS_EBADNAME);
	ck_assert_int_eq(st_name_check("a23456789012345678901234567890123"), PS_EBADNAME);
}
END_TEST

/* --- an application and its mirror -------------------------------------------------------- */

struct world {
	ps_server *srv;
	st_app *a;
	st_obj *o;
	double inflow, flow[3];
	int steps;
	int calls;
	double last_arg;
	st_mirror *m;
};

static void reset(void *arg, double v)
{
	struct world *w = arg;
	w->calls++;
	w->last_arg = v;
}

static void world_up(struct world *w, bool attach_first)
{
	memset(w, 0, sizeof(*w));
	ck_assert_int_eq(ps_server_create_local(&w->srv), 0);
	ck_assert_int_eq(st_app_create(&w->a), 0);
	if (attach_first)
		ck_assert_int_eq(st_app_attach(w->a, w->srv), 0);
	ck_assert_int_eq(st_obj_create(w->a, "tunnel", "the wind tunnel", &w->o), 0);
	w->inflow = 0.5;
	ck_assert_int_eq(st_obj_field(w->o, "inflow", ST_DOUBLE, &w->inflow, 1, ST_WRITABLE, 0, 1, "particles in"), 0);
	ck_assert_int_eq(st_obj_field(w->o, "flow", ST_DOUBLE, w->flow, 3, 0, 0, 0, "mass flow"), 0);
	ck_assert_int_eq(st_obj_field(w->o, "steps", ST_INT, &w->steps, 1, ST_WRITABLE, 0, 1e12, "steps"), 0);
	ck_assert_int_eq(st_obj_method(w->o, "reset", reset, w, "start again"), 0);
	if (!attach_first)
		ck_assert_int_eq(st_app_attach(w->a, w->srv), 0);
	ck_assert_int_eq(st_app_sync(w->a), 0); /* seals */
	ck_assert_int_eq(st_mirror_open(w->srv, w->srv, &w->m), 0);
}

static void world_down(struct world *w)
{
	st_mirror_close(w->m);
	st_app_destroy(w->a);
	ps_server_destroy(w->srv);
}

static struct st_ask set1(const char *field, uint32_t index, double v)
{
	struct st_ask k = { .kind = ST_ASK_SET, .n = 1, .obj = "tunnel", .who = "test" };
	snprintf(k.u.set[0].field, sizeof(k.u.set[0].field), "%s", field);
	k.u.set[0].index = index;
	k.u.set[0].value = v;
	return k;
}

START_TEST(objects_seen_and_set)
{
	struct world w;
	world_up(&w, _i);
	ck_assert_int_eq(st_mirror_objects(w.m), 1);
	const struct st_member *ms, *self = st_mirror_object(w.m, 0, &ms);
	ck_assert_str_eq(self->name, "tunnel");
	ck_assert_int_eq(self->count, 4);
	ck_assert_str_eq(ms[1].name, "flow");
	ck_assert_int_eq(ms[1].count, 3);
	ck_assert_str_eq(ms[3].help, "start again");
	ck_assert_int_eq(st_mirror_latest(w.m, 0, NULL), PS_ENODATA);
	w.flow[2] = 0.75, w.steps = 42;
	ck_assert_int_eq(st_obj_publish(w.o), 0);
	struct st_pub h;
	ck_assert_int_eq(st_mirror_latest(w.m, 0, &h), 0);
	ck_assert_int_eq(h.seq, 0);
	ck_assert(st_mirror_value(w.m, 0, &ms[1], 2) == 0.75);
	ck_assert(st_mirror_value(w.m, 0, &ms[2], 0) == 42);
	ck_assert(st_mirror_value(w.m, 0, &ms[0], 0) == 0.5);
	/* a set and a call: nothing happens until the safe point, then in order */
	struct st_ask k = set1("inflow", 0, 0.25);
	uint64_t id1, id2;
	char err[200];
	ck_assert_int_eq(st_mirror_ask(w.m, &k, &id1, err, sizeof(err)), 0);
	struct st_ask c = { .kind = ST_ASK_CALL, .n = 1, .obj = "tunnel", .who = "test" };
	snprintf(c.u.set[0].field, sizeof(c.u.set[0].field), "reset");
	c.u.set[0].has_arg = 1, c.u.set[0].value = 7;
	ck_assert_int_eq(st_mirror_ask(w.m, &c, &id2, err, sizeof(err)), 0);
	ck_assert(w.inflow == 0.5 && w.calls == 0);
	ck_assert_int_eq(st_app_sync(w.a), 2);
	ck_assert(w.inflow == 0.25 && w.calls == 1 && w.last_arg == 7);
	struct st_done d[2];
	ck_assert_int_eq(st_mirror_answers(w.m, id1, d, 1, 0), 1);
	ck_assert_int_eq(d[0].status, 0);
	ck_assert(d[0].old_value == 0.5 && d[0].new_value == 0.25);
	char me[ST_WHO_MAX + 1]; /* who asked: what the kernel says of the writer, not the ask's "test" */
	snprintf(me, sizeof(me), "pid %d uid %u ", (int)getpid(), (unsigned)geteuid());
	ck_assert_msg(!strncmp(d[0].who, me, strlen(me)), "who: %s", d[0].who);
	ck_assert_str_eq(d[0].field, "inflow");
	ck_assert_int_eq(st_mirror_answers(w.m, id2, d, 1, 0), 1);
	ck_assert_int_eq(d[0].status, 0);
	ck_assert(d[0].new_value == 7);
	ck_assert_int_eq(st_app_sync(w.a), 0); /* nothing queued */
	/* published again: the mirror waits for it */
	ck_assert_int_eq(st_mirror_wait(w.m, 0, 0, 0), PS_ETIMEDOUT);
	ck_assert_int_eq(st_obj_publish(w.o), 0);
	ck_assert_int_eq(st_mirror_wait(w.m, 0, 0, 100), 0);
	ck_assert(st_mirror_value(w.m, 0, &ms[0], 0) == 0.25);
	/* a member after the object was made visible */
	double late;
	ck_assert_int_eq(st_obj_field(w.o, "late", ST_DOUBLE, &late, 1, 0, 0, 1, ""), ST_ESEALED);
	world_down(&w);
}
END_TEST

START_TEST(refusals_never_reach_the_application)
{
	struct world w;
	world_up(&w, true);
	char err[200];
	uint64_t id;
	static const struct { const char *field; uint32_t index; double v; int rc; const char *says; } bad[] = {
		{ "inflow", 0, 1.5, ST_ERANGE, "tunnel.inflow: 1.5 is out of its range [0, 1]" },
		{ "flow", 0, 0.5, ST_EREADONLY, "tunnel.flow: the field is read-only" },
		{ "nothing", 0, 0.5, ST_ENOFIELD, "tunnel.nothing: no field or method" },
		{ "inflow", 1, 0.5, ST_EINDEX, "tunnel.inflow[1]: it has 1 element" },
		{ "steps", 0, 2.5, ST_ENOTINT, "not whole" },
		{ "reset", 0, 1, ST_ENOTMETHOD, "a method is called" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct st_ask k = set1(bad[i].field, bad[i].index, bad[i].v);
		ck_assert_int_eq(st_mirror_ask(w.m, &k, &id, err, sizeof(err)), bad[i].rc);
		ck_assert_msg(strstr(err, bad[i].says), "said '%s', expected '%s'", err, bad[i].says);
	}
	struct st_ask k = set1("inflow", 0, 0.5);
	snprintf(k.obj, sizeof(k.obj), "nothere");
	ck_assert_int_eq(st_mirror_ask(w.m, &k, &id, err, sizeof(err)), ST_ENOOBJ);
	ck_assert_int_eq(st_app_sync(w.a), 0); /* the mirror wrote none of them */
	/* written raw, past the mirror's check: the application refuses them too */
	ps_elem *ask;
	ck_assert_int_eq(ps_elem_open(w.srv, ST_ASK_ELEMENT, sizeof(struct st_ask), &ask), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k = set1(bad[i].field, bad[i].index, bad[i].v);
		k.id = 100 + i;
		ck_assert_int_eq(ps_write(ask, &k, 0, NULL), 0);
	}
	/* a batch whose second set is refused: the first is not applied either */
	k = set1("inflow", 0, 0.125);
	k.n = 2, k.id = 200;
	snprintf(k.u.set[1].field, sizeof(k.u.set[1].field), "steps");
	k.u.set[1].value = -1;
	ck_assert_int_eq(ps_write(ask, &k, 0, NULL), 0);
	/* no terminating zero anywhere, a wrong count, a wrong kind */
	memset(&k, 'x', sizeof(k));
	k.id = 300, k.kind = ST_ASK_SET, k.n = 99;
	ck_assert_int_eq(ps_write(ask, &k, 0, NULL), 0);
	k = set1("inflow", 0, 0.5);
	k.id = 301, k.kind = 77;
	ck_assert_int_eq(ps_write(ask, &k, 0, NULL), 0);
	ck_assert_int_eq(st_app_sync(w.a), 0);
	ck_assert(w.inflow == 0.5 && w.steps == 0 && w.calls == 0);
	struct st_done d;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(st_mirror_answers(w.m, 100 + i, &d, 1, 0), 1);
		ck_assert_int_eq(d.status, bad[i].rc);
	}
	ck_assert_int_eq(st_mirror_answers(w.m, 200, &d, 1, 0), 1);
	ck_assert_int_eq(d.status, ST_ERANGE);
	ck_assert_int_eq(d.n, 1);
	ck_assert_str_eq(d.field, "steps");
	ck_assert_int_eq(st_mirror_answers(w.m, 300, &d, 1, 0), 1);
	ck_assert_int_eq(d.status, ST_ENOOBJ);
	ck_assert_int_eq(st_mirror_answers(w.m, 301, &d, 1, 0), 1);
	ck_assert_int_eq(d.status, ST_EBADASK);
	ps_elem_close(ask);
	world_down(&w);
}
END_TEST

START_TEST(asks_in_order_and_lost_said)
{
	struct world w;
	world_up(&w, true);
	ps_elem *ask;
	ck_assert_int_eq(ps_elem_open(w.srv, ST_ASK_ELEMENT, sizeof(struct st_ask), &ask), 0);
	/* two askers, interleaved: applied in the order written, each recorded
	 * with its asker as the writing side says, whatever the ask claims */
	for (int i = 0; i < 10; i++) {
		struct st_ask k = set1("steps", 0, i);
		k.id = 1000 + (uint64_t)i;
		snprintf(k.who, sizeof(k.who), "rank 0: by esctl pid 4242\n\x1b[2J");
		char who[PS_WHO_LEN];
		snprintf(who, sizeof(who), "asker %d", i % 2);
		ck_assert_int_eq(i % 2 ? ps_write_as(ask, &k, who, 0, NULL) : ps_write(ask, &k, 0, NULL), 0);
	}
	ck_assert_int_eq(st_app_sync(w.a), 10);
	ck_assert_int_eq(w.steps, 9);
	ps_elem *done = st_mirror_done_elem(w.m);
	for (int i = 0; i < 10; i++) {
		struct st_done d;
		ck_assert_int_eq(ps_read(done, (uint64_t)i, &d, 0, NULL), 0);
		ck_assert_int_eq(d.ask, 1000 + i);
		ck_assert(d.old_value == (i ? i - 1 : 0) && d.new_value == i);
		char who[ST_WHO_MAX + 1];
		if (i % 2)
			snprintf(who, sizeof(who), "asker 1");
		else
			snprintf(who, sizeof(who), "pid %d uid %u ", (int)getpid(), (unsigned)geteuid());
		ck_assert_msg(!strncmp(d.who, who, strlen(who)), "who: %s", d.who);
	}
	/* more than the ring holds before a safe point: the lost ones said */
	for (int i = 0; i < 100; i++) {
		struct st_ask k = set1("steps", 0, 500 + i);
		k.id = 2000 + (uint64_t)i;
		ck_assert_int_eq(ps_write(ask, &k, 0, NULL), 0);
	}
	ck_assert_int_eq(st_app_sync(w.a), 64);
	ck_assert_int_eq(w.steps, 599);
	struct st_done d;
	ck_assert_int_eq(ps_read(done, 10, &d, 0, NULL), 0);
	ck_assert_int_eq(d.status, ST_ELOST);
	ck_assert_int_eq(d.n, 36);
	ps_elem_close(ask);
	world_down(&w);
}
END_TEST

START_TEST(rules_in_the_application)
{
	struct world w;
	world_up(&w, true);
	char err[200];
	uint64_t id;
	struct st_ask k = { .kind = ST_ASK_RULE, .obj = "tunnel", .who = "test" };
	snprintf(k.u.rule, sizeof(k.u.rule), "when tunnel.flow[0] < 0.9 set tunnel.inflow = tunnel.inflow + 0.125");
	ck_assert_int_eq(st_mirror_ask(w.m, &k, &id, err, sizeof(err)), 0);
	ck_assert_int_eq(st_app_sync(w.a), 2); /* installed, and it holds at once */
	struct st_done d[2];
	ck_assert_int_eq(st_mirror_answers(w.m, id, d, 1, 0), 1);
	ck_assert_int_eq(d[0].status, 0);
	uint32_t number = d[0].index;
	ck_assert_int_eq(number, 1);
	ck_assert(w.inflow == 0.625);
	ck_assert_int_eq(st_app_sync(w.a), 1);
	ck_assert(w.inflow == 0.75);
	w.flow[0] = 0.95;
	ck_assert_int_eq(st_app_sync(w.a), 0);
	w.flow[0] = 0;
	ck_assert_int_eq(st_app_sync(w.a), 1);
	ck_assert_int_eq(st_app_sync(w.a), 1);
	ck_assert(w.inflow == 1);
	/* its next action is out of range: refused and counted, never applied;
	 * its actions are counted, never logged one by one: the log holds the
	 * install alone */
	ck_assert_int_eq(st_app_sync(w.a), 0);
	ck_assert(w.inflow == 1);
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(st_mirror_done_elem(w.m), &st), 0);
	ck_assert_int_eq(st.written, 1);
	struct st_rule_rec x[4];
	for (int i = 0; i < 20 && st_mirror_rules(w.m, x, 4) == 1 && x[0].refused == 0; i++) {
		struct timespec ts = { 0, 20000000 }; /* its counts said at most every 0.2 s */
		nanosleep(&ts, NULL);
		st_app_sync(w.a);
	}
	ck_assert_int_eq(st_mirror_rules(w.m, x, 4), 1);
	ck_assert_int_eq(x[0].number, number);
	ck_assert_uint_eq(x[0].fired, 4); /* 0.625, 0.75, 0.875, 1 */
	ck_assert_uint_ge(x[0].refused, 1);
	ck_assert_int_eq(x[0].last_status, ST_ERANGE);
	ck_assert_msg(!strncmp(x[0].who, "pid ", 4), "who: %s", x[0].who);
	ck_assert_str_eq(x[0].text, "when tunnel.flow[0] < 0.9 set tunnel.inflow = tunnel.inflow + 0.125");
	/* a rule that does not compile: the mirror says so, the application too */
	snprintf(k.u.rule, sizeof(k.u.rule), "when tunnel.flow < 1 set tunnel.flow = 0");
	ck_assert_int_eq(st_mirror_ask(w.m, &k, &id, err, sizeof(err)), ST_ERULE);
	ck_assert_msg(strstr(err, "read-only"), "%s", err);
	/* removed */
	struct st_ask u = { .kind = ST_ASK_UNRULE, .n = number, .obj = "tunnel", .who = "test" };
	ck_assert_int_eq(st_mirror_ask(w.m, &u, &id, err, sizeof(err)), 0);
	st_app_sync(w.a);
	ck_assert_int_eq(st_mirror_answers(w.m, id, d, 1, 0), 1);
	ck_assert_int_eq(d[0].status, 0);
	w.inflow = 0;
	ck_assert_int_eq(st_app_sync(w.a), 0);
	ck_assert(w.inflow == 0);
	ck_assert_int_eq(st_mirror_ask(w.m, &u, &id, err, sizeof(err)), 0);
	st_app_sync(w.a);
	ck_assert_int_eq(st_mirror_answers(w.m, id, d, 1, 0), 1);
	ck_assert_int_eq(d[0].status, ST_ERULE);
	ck_assert_msg(strstr(d[0].why, "no rule 1 runs here"), "%s", d[0].why);
	ck_assert_int_eq(st_mirror_rules(w.m, x, 4), 0); /* none runs now */
	world_down(&w);
}
END_TEST

/* Two monitor rules that undo each other, flooding: their asks answered in
 * obj.fired and counted by asker; a person's change before them stays in
 * obj.done, and method arguments out of range never reach the method. */
START_TEST(rules_never_evict_people)
{
	struct world w;
	world_up(&w, true);
	char err[200];
	uint64_t id;
	struct st_ask k = set1("inflow", 0, 0.75);
	ck_assert_int_eq(st_mirror_ask(w.m, &k, &id, err, sizeof(err)), 0);
	ck_assert_int_eq(st_app_sync(w.a), 1);
	ps_elem *ask;
	ck_assert_int_eq(ps_elem_open(w.srv, ST_ASK_ELEMENT, sizeof(struct st_ask), &ask), 0);
	for (int i = 0; i < 3000; i++) {
		struct st_ask r = set1("inflow", 0, i % 2 ? 0.25 : 0.5);
		r.kind |= ST_ASK_BY_RULE;
		r.id = 5000 + (uint64_t)i;
		ck_assert_int_eq(ps_write_as(ask, &r, i % 2 ? "monitor b" : "monitor a", 0, NULL), 0);
		if (i % 32 == 31)
			st_app_sync(w.a);
	}
	st_app_sync(w.a);
	ps_elem *done = st_mirror_done_elem(w.m);
	struct ps_stats st;
	ck_assert_int_eq(ps_elem_stats(done, &st), 0);
	ck_assert_int_eq(st.written, 1); /* the person's change, alone */
	struct st_done d;
	ck_assert_int_eq(ps_read(done, 0, &d, 0, NULL), 0);
	ck_assert_uint_eq(d.ask, id);
	ck_assert(d.new_value == 0.75);
	/* the last rule ask answered in obj.fired, for the monitor waiting on it */
	ck_assert_int_eq(st_mirror_answers(w.m, 5000 + 2999, &d, 1, 0), 1);
	ck_assert_int_eq(d.status, 0);
	struct st_rule_rec x[4];
	for (int i = 0; i < 20 && (st_mirror_rules(w.m, x, 4) != 2 || x[0].fired + x[1].fired != 3000); i++) {
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
		st_app_sync(w.a);
	}
	ck_assert_int_eq(st_mirror_rules(w.m, x, 4), 2);
	ck_assert_uint_eq(x[0].fired + x[1].fired, 3000);
	ck_assert_int_eq(x[0].number, 0);
	/* a method's argument: NaN, infinities and values past 1e308 never reach it */
	static const double bad[] = { NAN, INFINITY, -INFINITY, 1.79e308 };
	for (size_t i = 0; i < 4; i++) {
		struct st_ask c = { .kind = ST_ASK_CALL, .n = 1, .obj = "tunnel" };
		snprintf(c.u.set[0].field, sizeof(c.u.set[0].field), "reset");
		c.u.set[0].has_arg = 1, c.u.set[0].value = bad[i];
		ck_assert_int_eq(st_mirror_ask(w.m, &c, &id, err, sizeof(err)), ST_ERANGE);
		c.id = 9000 + i; /* past the mirror: the application refuses it too */
		ck_assert_int_eq(ps_write(ask, &c, 0, NULL), 0);
	}
	st_app_sync(w.a);
	ck_assert_int_eq(w.calls, 0);
	ck_assert_int_eq(st_mirror_answers(w.m, 9000, &d, 1, 0), 1);
	ck_assert_int_eq(d.status, ST_ERANGE);
	ps_elem_close(ask);
	world_down(&w);
}
END_TEST

/* Another process's words as they are printed: nothing of it a line or a
 * terminal's order, valid UTF-8 kept */
START_TEST(text_escaped)
{
	char out[200];
	st_text("rank 0: by esctl\n\x1b[2Jx\\y caf\xc3\xa9 \xff\xc3", out, sizeof(out));
	ck_assert_str_eq(out, "rank 0: by esctl\\x0a\\x1b[2Jx\\\\y caf\xc3\xa9 \\xff\\xc3");
	st_text("\xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80", out, sizeof(out)); /* surrogate, overlong, past U+10FFFF */
	ck_assert_str_eq(out, "\\xed\\xa0\\x80 \\xc0\\xaf \\xf4\\x90\\x80\\x80");
	st_text("abcdef", out, 4);
	ck_assert_str_eq(out, "abc");
}
END_TEST

START_TEST(declared_wrong)
{
	st_app *a;
	st_obj *o, *o2;
	int x;
	ck_assert_int_eq(st_app_create(&a), 0);
	ck_assert_int_eq(st_obj_create(a, "bad name", "", &o), PS_EBADNAME);
	ck_assert_int_eq(st_obj_create(a, "ok", "", &o), 0);
	ck_assert_int_eq(st_obj_create(a, "ok", "", &o2), ST_EDUP);
	ck_assert_int_eq(st_obj_field(o, "x", ST_INT, &x, 1, 0, 2, 1, ""), PS_EINVAL); /* lo > hi */
	ck_assert_int_eq(st_obj_field(o, "x", ST_METHOD, &x, 1, 0, 0, 1, ""), PS_EINVAL);
	ck_assert_int_eq(st_obj_field(o, "x", ST_INT, &x, 1, 0, 0, 1, ""), 0);
	ck_assert_int_eq(st_obj_field(o, "x", ST_INT, &x, 1, 0, 0, 1, ""), ST_EDUP);
	ck_assert_int_eq(st_obj_field(o, "big", ST_DOUBLE, &x, 1u << 20, 0, 0, 1, ""), PS_E2BIG);
	/* nowhere to publish yet: nothing, and no error */
	ck_assert_int_eq(st_obj_publish(o), 0);
	ck_assert_int_eq(st_app_sync(a), 0);
	st_app_destroy(a);
}
END_TEST

Suite *steering_suite(void)
{
	Suite *s = suite_create("steering");
	TCase *tc = tcase_create("steering");
	tcase_add_test(tc, rules_compile_and_run);
	tcase_add_test(tc, rules_refused_with_where);
	tcase_add_test(tc, values_checked);
	tcase_add_loop_test(tc, objects_seen_and_set, 0, 2);
	tcase_add_test(tc, refusals_never_reach_the_application);
	tcase_add_test(tc, asks_in_order_and_lost_said);
	tcase_add_test(tc, rules_in_the_application);
	tcase_add_test(tc, declared_wrong);
	tcase_add_test(tc, rules_never_evict_people);
	tcase_add_test(tc, text_escaped);
	suite_add_tcase(s, tc);
	return s;
}
