/* load_nodes.c - what the pathmap loader's sections share: YAML nodes read with the file, line and column of what was expected, and a small set of integers that keeps loading linear. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "internal.h"
#include "load.h"

int pm__set_init(struct set *s, size_t n)
{
	base_tab_init(&s->t, sizeof(int));
	return base_tab_reserve(&s->t, n) < 0 ? PS_ENOMEM : 0;
}

void pm__set_free(struct set *s)
{
	base_tab_free(&s->t);
}

/* Adds key -> v; if the key is there, its value instead (and -1 if new,
 * or out of memory: the sets are reserved for all their keys first). */
int pm__set_put(struct set *s, uint64_t key, int v)
{
	bool fresh;
	int *x = base_tab_put(&s->t, key, &fresh);
	if (!x || !fresh)
		return x ? *x : -1;
	*x = v;
	return -1;
}

int pm__set_get(const struct set *s, uint64_t key)
{
	const int *x = base_tab_get(&s->t, key);
	return x ? *x : -1;
}

uint64_t pm__pair(int a, int b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

int pm__fail(struct ld *ld, const yaml_node_t *n, const char *fmt, ...)
{
	if (!ld->err || !ld->errlen)
		return PS_EINVAL;
	int k = snprintf(ld->err, ld->errlen, "%s:%zu:%zu: ", ld->file,
			 n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1);
	if (k > 0 && (size_t)k < ld->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ld->err + k, ld->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return PS_EINVAL;
}

yaml_node_t *pm__node(struct ld *ld, int i)
{
	return yaml_document_get_node(ld->doc, i);
}

const char *pm__sval(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

const char *pm__kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	case YAML_SCALAR_NODE: return n->data.scalar.length ? "a scalar" : "nothing";
	default: return "nothing";
	}
}

/* Whether a pair's key is the scalar `key`: a key may be any node ([a]: 1). */
bool pm__is_key(struct ld *ld, const yaml_node_pair_t *p, const char *key)
{
	const char *s = pm__sval(pm__node(ld, p->key));
	return s && !strcmp(s, key);
}

/* Checks that n is a mapping whose keys are scalars from `allowed`, each
 * once, and that `required` ones are there. */
int pm__check_map(struct ld *ld, yaml_node_t *n, const char *what,
		     const char *const *allowed, const char *const *required)
{
	if (n->type != YAML_MAPPING_NODE)
		return pm__fail(ld, n, "%s: expected a mapping, got %s", what, pm__kind(n));
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = pm__node(ld, p->key);
		const char *key = pm__sval(k);
		if (!key)
			return pm__fail(ld, k, "%s: expected a key name, got %s", what, pm__kind(k));
		bool ok = false;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(*a, key);
		if (!ok) {
			char list[400] = "";
			for (const char *const *a = allowed; *a; a++) {
				if (a != allowed)
					strncat(list, ", ", sizeof(list) - strlen(list) - 1);
				strncat(list, *a, sizeof(list) - strlen(list) - 1);
			}
			return pm__fail(ld, k, "unknown key '%s' in %s (expected %s)", key, what, list);
		}
		for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++)
			if (pm__is_key(ld, q, key))
				return pm__fail(ld, k, "%s: key '%s' given twice (first at line %zu)",
					    what, key, pm__node(ld, q->key)->start_mark.line + 1);
	}
	for (const char *const *r = required; r && *r; r++) {
		bool found = false;
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top && !found; p++)
			found = pm__is_key(ld, p, *r);
		if (!found)
			return pm__fail(ld, n, "%s: missing required key '%s'", what, *r);
	}
	return 0;
}

yaml_node_t *pm__get(struct ld *ld, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		if (pm__is_key(ld, p, key))
			return pm__node(ld, p->value);
	return NULL;
}

int pm__need_list(struct ld *ld, yaml_node_t *n, const char *what)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return pm__fail(ld, n, "%s: expected a list, got %s", what, pm__kind(n));
	return 0;
}

int pm__list_len(yaml_node_t *n)
{
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

yaml_node_t *pm__item(struct ld *ld, yaml_node_t *n, int i)
{
	return pm__node(ld, n->data.sequence.items.start[i]);
}

int pm__as_int(struct ld *ld, yaml_node_t *n, const char *what, long min, long max, long *out)
{
	const char *s = pm__sval(n);
	char *end;
	errno = 0;
	long v = s && *s ? strtol(s, &end, 10) : 0;
	if (!s || !*s || errno || *end || v < min || v > max)
		return pm__fail(ld, n, "%s: expected an integer from %ld to %ld, got %s%s%s", what, min,
			    max, s ? "'" : "", s ? s : pm__kind(n), s ? "'" : "");
	*out = v;
	return 0;
}

int pm__as_double(struct ld *ld, yaml_node_t *n, const char *what, double min, double *out)
{
	const char *s = pm__sval(n);
	char *end;
	errno = 0;
	double v = s && *s ? strtod(s, &end) : 0;
	if (!s || !*s || errno || *end || !(v >= min))
		return pm__fail(ld, n, "%s: expected a number of at least %g, got %s%s%s", what, min,
			    s ? "'" : "", s ? s : pm__kind(n), s ? "'" : "");
	*out = v;
	return 0;
}

int pm__as_bool(struct ld *ld, yaml_node_t *n, const char *what, bool *out)
{
	const char *s = pm__sval(n);
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
		*out = true;
	else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
		*out = false;
	else
		return pm__fail(ld, n, "%s: expected true or false, got %s%s%s", what, s ? "'" : "",
			    s ? s : pm__kind(n), s ? "'" : "");
	return 0;
}

/* One of the words in `choices` (NULL-terminated); *out gets its index. */
int pm__as_choice(struct ld *ld, yaml_node_t *n, const char *what,
		     const char *const *choices, int *out)
{
	const char *s = pm__sval(n);
	char list[400] = "";
	for (int i = 0; choices[i]; i++) {
		if (s && !strcmp(s, choices[i])) {
			*out = i;
			return 0;
		}
		if (i)
			strncat(list, choices[i + 1] ? ", " : " or ", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	return pm__fail(ld, n, "%s: expected %s, got %s%s%s", what, list, s ? "'" : "",
		    s ? s : pm__kind(n), s ? "'" : "");
}

bool pm__good_name(const char *s, size_t max)
{
	size_t n = 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return n > 0 && n <= max && strcmp(s, ".") && strcmp(s, "..");
}

int pm__as_name(struct ld *ld, yaml_node_t *n, const char *what, size_t max, const char **out)
{
	const char *s = pm__sval(n);
	if (!s || !pm__good_name(s, max))
		return pm__fail(ld, n, "%s: expected a name of 1 to %zu characters from A-Z a-z 0-9 . _ -, "
			    "got %s%s%s", what, max, s ? "'" : "", s ? s : pm__kind(n), s ? "'" : "");
	*out = pm__strdup(ld->m, s);
	return *out ? 0 : PS_ENOMEM;
}

int pm__find_host(const pm_map *m, const char *name)
{
	int i = pm__names_get(&m->ho_ix, name);
	i = i < m->model.nhosts ? i : -1; /* only hosts read so far */
	return i < 0 ? -1 : i;
}

void pm__host_list(const pm_map *m, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < m->model.nhosts; i++) {
		if (i)
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, m->ho[i].name, len - strlen(buf) - 1);
	}
}

void pm__core_list(const struct pm_host *h, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < h->ncores && strlen(buf) + 12 < len; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? " " : "", h->cores[i]);
}
