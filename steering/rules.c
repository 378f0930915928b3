/* rules.c - the rule language: "when COND set OBJ.FIELD = EXPR" or "call OBJ.METHOD [EXPR]", compiled against an object's members into a bounded postfix program, and evaluated. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steering/steering.h"

enum {
	N_NUM = 1, N_FIELD, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_LT, N_LE, N_GT, N_GE, N_EQ, N_NE,
	N_AND, N_OR, N_NOT, N_MIN, N_MAX, N_ABS,
};

enum tok { T_END, T_NUM, T_NAME, T_OP };

/* The parser's state: the text, where it is, the token it looks at. */
struct parse {
	const char *text, *p;
	enum tok tok;
	const char *at; /* the token's start */
	size_t len;
	double num;
	const struct st_schema *s;
	struct st_rule *r;
	char *err;
	size_t errlen;
	int failed;
	int depth;
	const char *mat; /* the last member's name in the text, for what is said of it */
	size_t mlen;
};

static void next(struct parse *q)
{
	while (isspace((unsigned char)*q->p))
		q->p++;
	q->at = q->p;
	const char *p = q->p;
	if (!*p) {
		q->tok = T_END, q->len = 0;
	} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
		char *end;
		q->num = strtod(p, &end);
		q->tok = T_NUM, q->len = (size_t)(end - p);
	} else if (isalpha((unsigned char)*p) || *p == '_') {
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		q->tok = T_NAME, q->len = (size_t)(p - q->at);
	} else {
		q->tok = T_OP;
		q->len = (strchr("<>=!", *p) && p[1] == '=') ? 2 : 1;
	}
	q->p = q->at + q->len;
}

static bool is(const struct parse *q, const char *word)
{
	return q->tok != T_END && q->tok != T_NUM && q->len == strlen(word) && !strncmp(q->at, word, q->len);
}

/* Says what was expected at the token, once (the first error is the one). */
static void expected(struct parse *q, const char *fmt, ...)
{
	if (q->failed++)
		return;
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (q->tok == T_END)
		snprintf(q->err, q->errlen, "at %d: expected %s, got the end", (int)(q->at - q->text) + 1, what);
	else
		snprintf(q->err, q->errlen, "at %d: expected %s, got '%.*s'", (int)(q->at - q->text) + 1, what,
			 (int)(q->len > 24 ? 24 : q->len), q->at);
}

static void emit(struct parse *q, uint8_t op, double num, uint8_t field, uint16_t index)
{
	if (q->failed)
		return;
	if (q->r->n >= ST_RULE_NODES) {
		snprintf(q->err, q->errlen, "longer than %d steps", ST_RULE_NODES);
		q->failed++;
		return;
	}
	q->r->node[q->r->n++] = (struct st_node){ .op = op, .field = field, .index = index, .num = num };
}

static bool accept(struct parse *q, const char *word)
{
	if (!is(q, word))
		return false;
	next(q);
	return true;
}

static void want(struct parse *q, const char *word)
{
	if (!accept(q, word))
		expected(q, "'%s'", word);
}

/* OBJ.NAME [INDEX]: the member named, with its element; NULL after an error. */
static const struct st_member *ref(struct parse *q, uint32_t *index)
{
	*index = 0;
	if (q->tok != T_NAME || q->len != strlen(q->s->obj) || strncmp(q->at, q->s->obj, q->len)) {
		expected(q, "a field of %s (%s.NAME)", q->s->obj, q->s->obj);
		return NULL;
	}
	next(q);
	want(q, ".");
	if (q->failed)
		return NULL;
	const struct st_member *m = NULL;
	for (int i = 0; q->tok == T_NAME && i < q->s->n && !m; i++)
		if (strlen(q->s->members[i].name) == q->len && !strncmp(q->s->members[i].name, q->at, q->len))
			m = &q->s->members[i];
	if (!m) {
		expected(q, "a field or method of %s", q->s->obj);
		return NULL;
	}
	q->mat = q->at, q->mlen = q->len;
	next(q);
	if (accept(q, "[")) {
		if (q->tok != T_NUM || q->num < 0 || q->num != floor(q->num) || q->num >= m->count) {
			expected(q, "an index of %s.%s, 0 to %u", q->s->obj, m->name, m->count ? m->count - 1 : 0);
			return NULL;
		}
		*index = (uint32_t)q->num;
		next(q);
		want(q, "]");
	}
	return q->failed ? NULL : m;
}

static void cond(struct parse *q);
static void expr(struct parse *q);

static void unary(struct parse *q)
{
	if (++q->depth > 32) {
		expected(q, "fewer parentheses");
		return;
	}
	if (accept(q, "-")) {
		unary(q);
		emit(q, N_NEG, 0, 0, 0);
	} else if (q->tok == T_NUM) {
		emit(q, N_NUM, q->num, 0, 0);
		next(q);
	} else if (accept(q, "(")) {
		cond(q);
		want(q, ")");
	} else if (is(q, "min") || is(q, "max") || is(q, "abs")) {
		uint8_t op = is(q, "min") ? N_MIN : is(q, "max") ? N_MAX : N_ABS;
		next(q);
		want(q, "(");
		expr(q);
		if (op != N_ABS) {
			want(q, ",");
			expr(q);
		}
		want(q, ")");
		emit(q, op, 0, 0, 0);
	} else {
		uint32_t index;
		const struct st_member *m = ref(q, &index);
		if (m && m->kind == ST_METHOD)
			expected(q, "a field (%s is a method)", m->name);
		if (m)
			emit(q, N_FIELD, 0, (uint8_t)m->idx, (uint16_t)index);
	}
	q->depth--;
}

static void term(struct parse *q)
{
	unary(q);
	while (!q->failed && (is(q, "*") || is(q, "/"))) {
		uint8_t op = is(q, "*") ? N_MUL : N_DIV;
		next(q);
		unary(q);
		emit(q, op, 0, 0, 0);
	}
}

static void expr(struct parse *q)
{
	term(q);
	while (!q->failed && (is(q, "+") || is(q, "-"))) {
		uint8_t op = is(q, "+") ? N_ADD : N_SUB;
		next(q);
		term(q);
		emit(q, op, 0, 0, 0);
	}
}

static void neg(struct parse *q)
{
	if (accept(q, "not")) {
		neg(q);
		emit(q, N_NOT, 0, 0, 0);
		return;
	}
	expr(q);
	static const struct { const char *w; uint8_t op; } cmp[] = {
		{ "<", N_LT }, { "<=", N_LE }, { ">", N_GT }, { ">=", N_GE }, { "==", N_EQ }, { "!=", N_NE } };
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]) && !q->failed; i++)
		if (accept(q, cmp[i].w)) {
			expr(q);
			emit(q, cmp[i].op, 0, 0, 0);
			return;
		}
}

static void conjunct(struct parse *q)
{
	neg(q);
	while (!q->failed && accept(q, "and")) {
		neg(q);
		emit(q, N_AND, 0, 0, 0);
	}
}

static void cond(struct parse *q)
{
	conjunct(q);
	while (!q->failed && accept(q, "or")) {
		conjunct(q);
		emit(q, N_OR, 0, 0, 0);
	}
}

/* 'set' ref '=' expr | 'call' ref [expr] */
static void action(struct parse *q)
{
	struct st_rule *r = q->r;
	bool set = is(q, "set");
	if (!set && !is(q, "call")) {
		expected(q, "'set' or 'call' after the condition");
		return;
	}
	next(q);
	uint32_t index;
	const struct st_member *m = ref(q, &index);
	if (!m)
		return;
	const char *at = q->at;
	enum tok tok = q->tok;
	size_t len = q->len;
	q->at = q->mat, q->len = q->mlen, q->tok = T_NAME; /* what is said, is said of the member */
	if (set && m->kind == ST_METHOD)
		expected(q, "a field to set (%s is a method: call it)", m->name);
	else if (set && !(m->flags & ST_WRITABLE))
		expected(q, "a writable field (%s is read-only)", m->name);
	else if (!set && m->kind != ST_METHOD)
		expected(q, "a method to call (%s is a field: set it)", m->name);
	q->at = at, q->len = len, q->tok = tok;
	r->kind = set ? ST_ASK_SET : ST_ASK_CALL;
	r->target = m->idx;
	r->target_index = index;
	snprintf(r->target_name, sizeof(r->target_name), "%s", m->name);
	if (set)
		want(q, "=");
	if (set || q->tok != T_END) {
		r->has_value = true;
		expr(q);
	}
}

int st_rule_object(const char *text, char obj[ST_NAME_MAX + 1])
{
	struct parse q = { .text = text, .p = text };
	for (next(&q); q.tok != T_END; next(&q))
		if (q.tok == T_NAME && *q.p == '.' && q.len <= ST_NAME_MAX) {
			snprintf(obj, ST_NAME_MAX + 1, "%.*s", (int)q.len, q.at);
			return 0;
		}
	return ST_ERULE;
}

int st_rule_compile(const char *text, const struct st_schema *s, struct st_rule *r, char *err, size_t len)
{
	char spare[8];
	if (!err || !len)
		err = spare, len = sizeof(spare);
	memset(r, 0, sizeof(*r));
	if (!text || strlen(text) > ST_RULE_MAX) {
		snprintf(err, len, "a rule of 1 to %d characters", ST_RULE_MAX);
		return ST_ERULE;
	}
	struct parse q = { .text = text, .p = text, .s = s, .r = r, .err = err, .errlen = len };
	snprintf(r->obj, sizeof(r->obj), "%s", s->obj);
	snprintf(r->text, sizeof(r->text), "%s", text);
	next(&q);
	want(&q, "when");
	cond(&q);
	r->cond_end = r->n;
	action(&q);
	if (!q.failed && q.tok != T_END)
		expected(&q, "the end of the rule");
	return q.failed ? ST_ERULE : 0;
}

/* Runs nodes [from, to) on a stack: the value left on it. */
static double run(const struct st_rule *r, int from, int to, st_get_fn get, void *arg)
{
	double st[ST_RULE_NODES];
	int sp = 0;
	for (int i = from; i < to; i++) {
		const struct st_node *n = &r->node[i];
		double b = sp > 0 ? st[sp - 1] : 0, a = sp > 1 ? st[sp - 2] : 0;
		switch (n->op) {
		case N_NUM: st[sp++] = n->num; continue;
		case N_FIELD: st[sp++] = get(arg, n->field, n->index); continue;
		case N_NEG: st[sp - 1] = -b; continue;
		case N_NOT: st[sp - 1] = !(b != 0); continue;
		case N_ABS: st[sp - 1] = fabs(b); continue;
		default: break;
		}
		double v;
		switch (n->op) {
		case N_ADD: v = a + b; break;
		case N_SUB: v = a - b; break;
		case N_MUL: v = a * b; break;
		case N_DIV: v = a / b; break; /* by 0: inf or NaN, which no range holds */
		case N_LT: v = a < b; break;
		case N_LE: v = a <= b; break;
		case N_GT: v = a > b; break;
		case N_GE: v = a >= b; break;
		case N_EQ: v = a == b; break;
		case N_NE: v = a != b; break;
		case N_AND: v = a != 0 && b != 0; break;
		case N_OR: v = a != 0 || b != 0; break;
		case N_MIN: v = a < b ? a : b; break;
		case N_MAX: v = a > b ? a : b; break;
		default: return NAN;
		}
		st[--sp - 1] = v;
	}
	return sp ? st[sp - 1] : 0;
}

int st_rule_eval(const struct st_rule *r, st_get_fn get, void *arg, double *value)
{
	double c = run(r, 0, r->cond_end, get, arg);
	if (!(c != 0) || c != c)
		return 0;
	*value = r->has_value ? run(r, r->cond_end, r->n, get, arg) : 0;
	return 1;
}

void st_rule_ask(const struct st_rule *r, double value, struct st_ask *k)
{
	*k = (struct st_ask){ .kind = r->kind | ST_ASK_BY_RULE, .n = 1 };
	snprintf(k->obj, sizeof(k->obj), "%s", r->obj);
	snprintf(k->u.set[0].field, sizeof(k->u.set[0].field), "%s", r->target_name);
	k->u.set[0].index = r->target_index;
	k->u.set[0].value = value;
	k->u.set[0].has_arg = r->has_value;
}
