/* esview.c - the live view: watches a job and serves its page and data to browsers over HTTP (GNU libmicrohttpd). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "view.h"

static const char *usage =
	"usage: esview [options] JOB\n"
	"Watches JOB (this host's trace spaces, or --servers) and serves it to browsers:\n"
	"a page of its threads as lanes over the last seconds, calls coloured by class.\n"
	"It prints the URL to open.\n"
	"  -p, --port P         the HTTP port (default 0: any free one)\n"
	"      --addr A         listen on A (default 127.0.0.1); any other address\n"
	"                       needs --view-secret: the page is then opened with\n"
	"                       ?key=SECRET, and a request without it gets nothing\n"
	"      --view-secret F  the secret browsers give (a file only you can read,\n"
	"                       16 to 256 bytes, as the tuple servers')\n"
	"  -r, --rate HZ        pulls a second (default 10): the perturbation trade-off\n"
	"      --window S       seconds of events kept (default 10)\n"
	"  -w, --wait S         wait up to S seconds for the job to appear (default 10)\n"
	MON_REMOTE_USAGE
	"  -h, --help\n"
	"      --version\n"
	"Browsers read what esview pulled: ten of them cost the job what one does.\n";

extern const unsigned char es_view_page[];
extern const size_t es_view_page_len;

/* What the HTTP threads serve: the latest JSON, swapped in under lock. */
struct served {
	pthread_mutex_t lock;
	char *json;
	size_t len;
	char secret[PS_SECRET_MAX + 1];
	size_t secret_len;
};

static bool key_ok(const struct served *sv, struct MHD_Connection *c)
{
	if (!sv->secret_len)
		return true;
	const char *k = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "key");
	size_t n = k ? strlen(k) : 0;
	unsigned char diff = n != sv->secret_len;
	for (size_t i = 0; i < sv->secret_len; i++) /* the whole secret, whatever was given */
		diff |= (unsigned char)(sv->secret[i] ^ (i < n ? k[i] : 0));
	return !diff;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, const void *body,
			     size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	enum MHD_Result ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *data, size_t *data_size, void **state)
{
	(void)version, (void)data, (void)data_size, (void)state;
	struct served *sv = cls;
	static const char nope[] = "not found\n", denied[] = "a key is needed\n";
	if (strcmp(method, "GET"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", nope, sizeof(nope) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (!key_ok(sv, c))
		return reply(c, MHD_HTTP_FORBIDDEN, "text/plain", denied, sizeof(denied) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", es_view_page, es_view_page_len,
			     MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/data"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", nope, sizeof(nope) - 1, MHD_RESPMEM_PERSISTENT);
	pthread_mutex_lock(&sv->lock);
	char *copy = sv->json ? malloc(sv->len) : NULL;
	size_t len = copy ? sv->len : 0;
	if (copy)
		memcpy(copy, sv->json, len);
	pthread_mutex_unlock(&sv->lock);
	if (!copy)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", nope, sizeof(nope) - 1,
			     MHD_RESPMEM_PERSISTENT);
	return reply(c, MHD_HTTP_OK, "application/json", copy, len, MHD_RESPMEM_MUST_FREE);
}

struct opts {
	int port;
	const char *addr, *secret_file, *job;
	double rate, window, wait;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' }, { "addr", required_argument, NULL, 'A' },
		{ "view-secret", required_argument, NULL, 'S' }, { "rate", required_argument, NULL, 'r' },
		{ "window", required_argument, NULL, 'W' }, { "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, MON_REMOTE_OPTS, { 0 } };
	*o = (struct opts){ .addr = "127.0.0.1", .rate = 10, .window = 10, .wait = 10 };
	int c;
	while ((c = getopt_long(argc, argv, "p:r:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': o->port = (int)mon_number("esview", "--port", optarg, 0); break;
		case 'A': o->addr = optarg; break;
		case 'S': o->secret_file = optarg; break;
		case 'r': o->rate = mon_number("esview", "--rate", optarg, 0.1); break;
		case 'W': o->window = mon_number("esview", "--window", optarg, 1); break;
		case 'w': o->wait = mon_number("esview", "--wait", optarg, 0); break;
		case 'R': mon_servers = optarg; break;
		case 'K': mon_secret_file = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("esview (EventSpace) %s\n", ES_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "esview: expected one JOB name\n%s", usage);
		return 2;
	}
	o->job = argv[optind];
	if (o->port > 65535) {
		fprintf(stderr, "esview: --port %d: expected a port number, 0 to 65535\n", o->port);
		return 2;
	}
	return -1;
}

/* The listener: loopback without a secret; elsewhere only with one. */
static struct MHD_Daemon *listen_on(const struct opts *o, struct served *sv, int *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	if (inet_pton(AF_INET, o->addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "esview: --addr %s: expected an IPv4 address\n", o->addr);
		return NULL;
	}
	bool loopback = (ntohl(sin.sin_addr.s_addr) >> 24) == 127;
	if (!loopback && !o->secret_file) {
		fprintf(stderr, "esview: --addr %s: a listener off loopback needs --view-secret FILE\n", o->addr);
		return NULL;
	}
	char why[200];
	if (o->secret_file && ps_secret_read(o->secret_file, sv->secret, &sv->secret_len, why, sizeof(why))) {
		fprintf(stderr, "esview: --view-secret %s: %s\n", o->secret_file, why);
		return NULL;
	}
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
						on_request, sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
						MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
						MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "esview: cannot listen on %s:%d\n", o->addr, o->port);
		return NULL;
	}
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = i ? i->port : o->port;
	return d;
}

/* The threads as the page lists them, from the scope. */
static struct lv_thread *threads_of(const es_scope *s, int *n)
{
	*n = es_scope_threads(s);
	struct lv_thread *t = calloc((size_t)*n + 1, sizeof(*t));
	for (int i = 0; t && i < *n; i++)
		t[i] = (struct lv_thread){ es_scope_thread(s, i), -1 };
	for (int i = 0; t && i < es_scope_leaves(s); i++)
		t[es_scope_leaf(s, i)->thread].rank = es_scope_leaf(s, i)->rank;
	return t;
}

/* Pulls at the rate, keeps the window, and swaps in the JSON for the browsers. */
static void watch(es_scope *s, const struct opts *o, lv *v, struct served *sv)
{
	enum { MAX = 65536 };
	struct es_trace *ev = malloc(MAX * sizeof(*ev));
	struct mon_watch w = { .grace = 3 };
	while (ev && !mon_stop) {
		bool alive = mon_watch("esview", s, &w);
		es_scope_refresh(s);
		int n;
		uint64_t lost;
		while ((n = es_scope_consume(s, ev, MAX, &lost)) > 0) {
			for (int i = 0; i < n; i++) {
				const struct es_leaf *l = es_scope_leaf(s, es_scope_consumed_leaf(s, (size_t)i));
				struct lv_event e = { ev[i].start, ev[i].end, (uint32_t)l->thread, ev[i].element,
						      ev[i].op };
				lv_add(v, &e);
			}
			if (n < MAX)
				break;
		}
		int nt;
		struct lv_thread *t = threads_of(s, &nt);
		char *json = NULL;
		size_t len = 0;
		if (t && !lv_json(v, o->job, t, nt, ps_now_ns(), (uint64_t)(o->window * 1e9), 20000, &json, &len)) {
			pthread_mutex_lock(&sv->lock);
			free(sv->json);
			sv->json = json, sv->len = len;
			pthread_mutex_unlock(&sv->lock);
		}
		free(t);
		if (!alive)
			break;
		mon_sleep(1 / o->rate);
	}
	free(ev);
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct served sv = { .lock = PTHREAD_MUTEX_INITIALIZER };
	int port = 0;
	struct MHD_Daemon *d = listen_on(&o, &sv, &port);
	if (!d)
		return 2;
	struct es_scope_spec spec;
	es_scope_spec_default(&spec, o.job);
	spec.reduce = ES_REDUCE_NONE;
	spec.by_leaf = true;
	mon_remote("esview", &spec);
	mon_signals();
	printf("esview: job %s at http://%s:%d/%s\n", o.job, o.addr, port, sv.secret_len ? "?key=SECRET" : "");
	fflush(stdout);
	es_scope *s;
	lv *v;
	if ((rc = mon_attach("esview", &spec, o.wait, &s))) {
		MHD_stop_daemon(d);
		return rc;
	}
	if (lv_create((size_t)(o.window * 50000), &v)) { /* 50,000 calls a second, 1.6 MB */
		es_scope_destroy(s);
		MHD_stop_daemon(d);
		return 1;
	}
	watch(s, &o, v, &sv);
	printf("esview: the job ended; the page shows its last %.0f s until esview is stopped\n", o.window);
	fflush(stdout);
	while (!mon_stop)
		mon_sleep(1);
	MHD_stop_daemon(d);
	free(sv.json);
	lv_destroy(v);
	es_scope_destroy(s);
	return 0;
}
