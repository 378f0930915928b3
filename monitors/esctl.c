/* esctl.c - live control of a running job, its command line: what its ranks record (collect LIST), pause, resume, what each records now (control.c); its objects listed, set, called, steered by rules (objects.c); its handlers' answers (handlers.c). */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitors/control.h"
#include "monitors/handlers.h"
#include "monitors/monitors.h"
#include "monitors/objects.h"

static const char *usage =
	"usage: esctl [options] JOB collect LIST\n"
	"       esctl [options] JOB pause | resume | status\n"
	"       esctl [options] JOB objects | changes | set OBJ.FIELD=VALUE... | call OBJ.METHOD [ARG]\n"
	"       esctl [options] JOB rule [--in-app] 'when COND set|call ...' | unrule N\n"
	"Changes what a running job's ranks record, without a restart, as the\n"
	"pathmap's `mpi: collect:` would have at MPI_Init:\n"
	"  collect LIST   the calls to record from now on, in the same words:\n"
	"                 all, a group (point-to-point, collectives, one-sided,\n"
	"                 persistent, communicators), polls, or an MPI function,\n"
	"                 each with a - to leave it out, in order:\n"
	"                   esctl run1 collect '[-all, MPI_Allreduce]'\n"
	"                   esctl run1 collect all\n"
	"  pause, resume  record nothing for now; record again what was chosen\n"
	"  status         what each rank records now, and an order it has not\n"
	"                 applied yet\n"
	"A rank applies an order at its next MPI call (one load on the path every\n"
	"call takes); esctl waits for each rank to say so, up to --wait seconds.\n"
	"The objects a program exposes (es_object.h), changed only at its safe\n"
	"points (es_object_sync), in the order asked, each change recorded:\n"
	"  objects        each rank's objects: fields, types, ranges, help, values,\n"
	"                 methods\n"
	"  set OBJ.FIELD=VALUE [OBJ.FIELD[I]=VALUE...]   applied together or not at\n"
	"                 all; refused here when out of range, read-only or unknown\n"
	"  call OBJ.METHOD [ARG]\n"
	"  query NAME     the latest answer (and push) of handler NAME in every\n"
	"                 monitor watching JOB here (--handler)\n"
	"  changes        every change people asked of each rank, with who asked (as\n"
	"                 the kernel or the tuple server says), every ask refused with\n"
	"                 the value refused, every rule begun or removed; then what\n"
	"                 the rules did, counted (they never evict people's changes)\n"
	"  rules          every rule running: in the application (its number, who\n"
	"                 began it, its actions applied and refused) and in monitors\n"
	"                 here (esctl rule)\n"
	"  rule 'when tunnel.mass_flow < 0.9 set tunnel.inflow = tunnel.inflow + 0.01'\n"
	"                 run here at each publication until Ctrl-C (--for S);\n"
	"                 with --in-app, given to the application, which runs it at\n"
	"                 each safe point with no round trip (unrule N stops it)\n"
	"  -r, --rank R         only rank R (default: every rank with the object)\n"
	"      --in-app         the rule runs in the application\n"
	"      --for S          run a rule here for S seconds\n"
	"  -w, --wait S         for the job to appear and the ranks to apply the\n"
	"                       order (default 10)\n"
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"Across hosts, through the job's tuple servers (--servers): whoever may read\n"
	"the job may steer it, with the same secret; nobody else.\n";

/* The job's scope, every event's: 0, or the exit status (said why) */
static int attach(const char *job, double wait, es_scope **s)
{
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, job);
	spec.reduce = ES_REDUCE_NONE;
	mon_signals();
	char err[600];
	int rc = mon_remote(&spec, err, sizeof(err));
	if (rc || (rc = mon_attach("esctl", &spec, wait, s, err, sizeof(err)))) {
		fprintf(stderr, "esctl: %s\n", err);
		return mon_status(rc);
	}
	return 0;
}

/* --- objects ------------------------------------------------------------------------------- */

static bool is_objects_cmd(const char *cmd)
{
	static const char *const cmds[] = { "objects", "set", "call", "rule", "unrule", "changes", "rules" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i]))
			return true;
	return false;
}

/* The ask the words after the command make: 0, or 2 with why said */
static int make_ask(const char *cmd, int n, char **w, bool in_app, struct st_ask *k)
{
	char err[300] = "";
	int rc = 0;
	*k = (struct st_ask){ 0 };
	if (!strcmp(cmd, "set")) {
		k->kind = ST_ASK_SET;
		if (n < 1 || n > ST_SETS_MAX)
			snprintf(err, sizeof(err), "set: expected 1 to %d OBJ.FIELD=VALUE", ST_SETS_MAX), rc = 2;
		for (int i = 0; i < n && !rc; i++) {
			char obj[ST_NAME_MAX + 1];
			if (mon_objs_parse_set(w[i], obj, &k->u.set[i], err, sizeof(err)))
				rc = 2;
			else if (i && strcmp(obj, k->obj))
				snprintf(err, sizeof(err), "set: one object at a time (%s, then %s)", k->obj, obj), rc = 2;
			snprintf(k->obj, sizeof(k->obj), "%s", obj);
		}
		k->n = (uint32_t)n;
	} else if (!strcmp(cmd, "call")) {
		const char *dot = n >= 1 ? strchr(w[0], '.') : NULL;
		char *end = NULL;
		k->kind = ST_ASK_CALL, k->n = 1;
		if (!dot || n > 2 || (size_t)(dot - w[0]) > ST_NAME_MAX || strlen(dot + 1) > ST_NAME_MAX)
			snprintf(err, sizeof(err), "call: expected OBJ.METHOD [ARG]"), rc = 2;
		else if (n == 2 && ((k->u.set[0].value = strtod(w[1], &end)), end == w[1] || *end))
			snprintf(err, sizeof(err), "call: expected a number as the argument, got '%s'", w[1]), rc = 2;
		if (!rc) {
			snprintf(k->obj, sizeof(k->obj), "%.*s", (int)(dot - w[0]), w[0]);
			snprintf(k->u.set[0].field, sizeof(k->u.set[0].field), "%s", dot + 1);
			k->u.set[0].has_arg = n == 2;
		}
	} else if (!strcmp(cmd, "rule")) {
		k->kind = ST_ASK_RULE;
		if (n != 1 || strlen(w[0]) > ST_RULE_MAX || st_rule_object(w[0], k->obj))
			snprintf(err, sizeof(err), "rule: expected one rule, quoted: 'when OBJ.FIELD < 1 set OBJ.FIELD = 2'"),
				rc = 2;
		else
			snprintf(k->u.rule, sizeof(k->u.rule), "%s", w[0]);
		(void)in_app;
	} else { /* unrule */
		char *end = NULL;
		unsigned long r = n == 1 ? strtoul(w[0], &end, 10) : 0;
		k->kind = ST_ASK_UNRULE;
		if (n != 1 || end == w[0] || *end || !r || r > UINT32_MAX)
			snprintf(err, sizeof(err), "unrule: expected a rule's number (esctl said it when it began)"), rc = 2;
		k->n = (uint32_t)r;
	}
	if (rc)
		fprintf(stderr, "esctl: %s\n", err);
	return rc;
}

static int objects_main(const char *job, const char *cmd, int n, char **w, int only, bool in_app, double seconds,
			double wait)
{
	struct st_ask k;
	/* the options may follow the command too: esctl JOB rule --in-app '...' */
	int kept = 0;
	for (int i = 0; i < n; i++) {
		const char *a = w[i];
		if (!strcmp(a, "--in-app")) {
			in_app = true;
		} else if ((!strcmp(a, "--rank") || !strcmp(a, "-r") || !strcmp(a, "--for") || !strcmp(a, "--wait") ||
			    !strcmp(a, "-w")) && i + 1 < n) {
			double v = mon_number("esctl", a, w[++i], 0);
			if (a[2] == 'r' || a[1] == 'r')
				only = (int)v;
			else if (a[2] == 'f')
				seconds = v;
			else
				wait = v;
		} else {
			w[kept++] = w[i];
		}
	}
	n = kept;
	bool look = !strcmp(cmd, "objects") || !strcmp(cmd, "changes") || !strcmp(cmd, "rules");
	if (!look && make_ask(cmd, n, w, in_app, &k))
		return 2;
	if (look && n) {
		fprintf(stderr, "esctl: %s takes no words after it\n", cmd);
		return 2;
	}
	es_scope *s;
	char err[600];
	int rc = attach(job, wait, &s);
	if (rc)
		return rc;
	struct mon_objs o;
	struct ps_remote_attr ra = mon_ra();
	rc = mon_objs_open(s, &ra, &o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "esctl: %s\n", err);
		es_scope_destroy(s);
		return 1;
	}
	if (!o.n && o.ranks && o.ended == o.ranks) {
		fprintf(stderr, "esctl: job '%s' has ended: nothing to steer\n", job);
		rc = 1;
	} else if (!strcmp(cmd, "objects")) {
		mon_objs_list(&o, stdout);
	} else if (!strcmp(cmd, "changes")) {
		mon_objs_changes(&o, stdout);
	} else if (!strcmp(cmd, "rules")) {
		mon_objs_rules(&o, job, stdout);
	} else if (!strcmp(cmd, "rule") && !in_app) {
		printf("esctl: rule runs here: %s\n", k.u.rule);
		fflush(stdout);
		rc = mon_objs_rule(&o, job, only, k.u.rule, seconds, stdout, err, sizeof(err));
	} else {
		char what[600];
		int at = snprintf(what, sizeof(what), "%s", cmd);
		for (int i = 0; i < n && at < (int)sizeof(what); i++)
			at += snprintf(what + at, sizeof(what) - (size_t)at, " %s", w[i]);
		rc = mon_objs_ask(&o, only, &k, what, wait, stdout, err, sizeof(err));
	}
	if (rc == 2)
		fprintf(stderr, "esctl: %s\n", err);
	mon_objs_close(&o);
	es_scope_destroy(s);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "wait", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { "rank", required_argument, NULL, 'r' },
		{ "in-app", no_argument, NULL, 'A' }, { "for", required_argument, NULL, 'F' }, MON_REMOTE_OPTS, { 0 } };
	double wait = 10, seconds = 0;
	int c, only = -1;
	bool in_app = false;
	while ((c = getopt_long(argc, argv, "+w:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = mon_number("esctl", "--wait", optarg, 0); break;
		case 'r': only = (int)mon_number("esctl", "--rank", optarg, 0); break;
		case 'A': in_app = true; break;
		case 'F': seconds = mon_number("esctl", "--for", optarg, 0); break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esctl (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	const char *cmd = optind + 1 < argc ? argv[optind + 1] : "";
	if (!strcmp(cmd, "query")) { /* a handler's answers, kept by the monitors running it here */
		if (optind + 3 != argc) {
			fprintf(stderr, "esctl: query: expected a handler's name (esctl JOB query count)\n");
			return 2;
		}
		if (mh_query(argv[optind], argv[optind + 2], stdout))
			return 0;
		fprintf(stderr, "esctl: no monitor of job '%s' on this host runs a handler '%s' (--handler)\n",
			argv[optind], argv[optind + 2]);
		return 1;
	}
	bool collect = !strcmp(cmd, "collect"), objects = is_objects_cmd(cmd);
	if (objects)
		return objects_main(argv[optind], cmd, argc - optind - 2, argv + optind + 2, only, in_app, seconds, wait);
	if ((collect && optind + 2 >= argc) || (!collect && optind + 2 != argc) ||
	    (!collect && strcmp(cmd, "pause") && strcmp(cmd, "resume") && strcmp(cmd, "status"))) {
		fprintf(stderr, "esctl: expected JOB and collect LIST, pause, resume, status, objects, set, call, rule, "
			"unrule, changes, rules or query, got '%s'\n%s", optind < argc ? cmd : "", usage);
		return 2;
	}
	char list[1024] = "";
	for (int i = optind + 2, k = 0; i < argc && k < (int)sizeof(list); i++) /* the list's words, however quoted */
		k += snprintf(list + k, sizeof(list) - (size_t)k, "%s%s", i > optind + 2 ? " " : "", argv[i]);
	es_scope *s;
	int rc = attach(argv[optind], wait, &s);
	if (rc)
		return rc;
	struct ps_remote_attr ra = mon_ra();
	mon_ctl *ctl;
	if (!(rc = mon_ctl_open(s, argv[optind], &ra, &ctl))) {
		if (collect || strcmp(cmd, "status"))
			rc = mon_ctl_order(ctl, cmd, list, wait, stdout);
		else
			mon_ctl_status(ctl, stdout);
		mon_ctl_close(ctl);
	}
	es_scope_destroy(s);
	return rc;
}
