/* load.h - what the pathmap loader's files (load*.c) share; private to pathmaps/. */
#ifndef PATHMAPS_LOAD_H
#define PATHMAPS_LOAD_H

#include <stdbool.h>
#include <yaml.h>

#include "internal.h"

/* What a pathmap may hold.  Past these it is refused with its position:
 * a real job is far inside them, and each costs time linear in its size. */
#define PM_MAX_DEPTH 32          /* nesting of lists and mappings (a pathmap needs 6) */
#define PM_MAX_NODES (1u << 21)  /* YAML events in the whole document */
#define PM_MAX_USES (1u << 20)   /* (thread, element) pairs, aliases counted each time */
#define PM_MAX_PARAMS 32         /* parameters of one stage */
#define PM_MAX_PATTERNS 256      /* paths.collectors patterns */

#define NOMEM(p) do { if (!(p)) return PS_ENOMEM; } while (0)

/* A set of 64-bit keys with a value each, for one check: malloc'd. */
struct set {
	struct base_tab t; /* key -> int */
};

/* The loader at work: the map it fills, the document it reads, and where
 * an error goes, naming the file (pm__fail adds the line and column). */
struct ld {
	pm_map *m;
	yaml_document_t *doc;
	const char *file;
	const char *dir; /* the file's directory (resolved), where relative handlers are; NULL: none */
	char *err;
	size_t errlen;
};

/* The paths section is kept as parsed; generate.c applies it. */
struct pm_paths_spec {
	int ndefault;
	struct pm_stage *dflt;
	bool all, none;
	int npatterns;
	const char **patterns;
	int ncustom;
	struct { int thread, element, nstages; struct pm_stage *stages; } *custom;
	struct set custom_ix; /* (thread, element) -> custom path; freed after make_paths */
};


int pm__set_init(struct set *s, size_t n);
void pm__set_free(struct set *s);
int pm__set_put(struct set *s, uint64_t key, int v);
int pm__set_get(const struct set *s, uint64_t key);
uint64_t pm__pair(int a, int b);
yaml_node_t *pm__node(struct ld *ld, int i);
const char *pm__sval(const yaml_node_t *n);
const char *pm__kind(const yaml_node_t *n);
bool pm__is_key(struct ld *ld, const yaml_node_pair_t *p, const char *key);
int pm__check_map(struct ld *ld, yaml_node_t *n, const char *what, const char *const *allowed, const char *const *required);
yaml_node_t *pm__get(struct ld *ld, yaml_node_t *map, const char *key);
int pm__need_list(struct ld *ld, yaml_node_t *n, const char *what);
int pm__list_len(yaml_node_t *n);
yaml_node_t *pm__item(struct ld *ld, yaml_node_t *n, int i);
int pm__as_int(struct ld *ld, yaml_node_t *n, const char *what, long min, long max, long *out);
int pm__as_double(struct ld *ld, yaml_node_t *n, const char *what, double min, double *out);
int pm__as_bool(struct ld *ld, yaml_node_t *n, const char *what, bool *out);
int pm__as_choice(struct ld *ld, yaml_node_t *n, const char *what, const char *const *choices, int *out);
bool pm__good_name(const char *s, size_t max);
int pm__as_name(struct ld *ld, yaml_node_t *n, const char *what, size_t max, const char **out);
int pm__find_host(const pm_map *m, const char *name);
void pm__host_list(const pm_map *m, char *buf, size_t len);
void pm__core_list(const struct pm_host *h, char *buf, size_t len);
int pm__elements(struct ld *ld, yaml_node_t *list);
int pm__thread_refs(struct ld *ld, yaml_node_t *list, const char *what, int **out, int *count);
int pm__threads(struct ld *ld, yaml_node_t *list);
int pm__cores_of(struct ld *ld, yaml_node_t *v, struct pm_host *h);
int pm__cluster(struct ld *ld, yaml_node_t *c);
int pm__mapping(struct ld *ld, yaml_node_t *mp);
int pm__processes(struct ld *ld, yaml_node_t *list, const struct set *cores);
int pm__stage(struct ld *ld, yaml_node_t *n, struct pm_stage *st);
int pm__stage_list(struct ld *ld, yaml_node_t *list, const char *what, struct pm_stage **out, int *n);
int pm__paths_section(struct ld *ld, yaml_node_t *p, struct pm_paths_spec *ps);
int pm__custom_paths(struct ld *ld, yaml_node_t *v, struct pm_paths_spec *ps, const struct set *used);
int pm__make_paths(struct ld *ld, const struct pm_paths_spec *ps);
int pm__trees(struct ld *ld, yaml_node_t *list);
int pm__runs_on(struct ld *ld, yaml_node_t *v, struct pm_tree *tr);
int pm__fail(struct ld *ld, const yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
