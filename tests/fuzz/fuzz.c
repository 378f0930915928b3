/* fuzz.c - feeds EventSpace what it must survive: mutated pathmaps, hostile wire frames at a live server, damaged segment files. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collectors/collectors.h"
#include "pastset/pastset.h"
#include "pastset/wire.h"
#include "pathmaps/pathmaps.h"

#include "tests/fuzz/fuzz.h"

/*
 * Each case runs under alarm(HANG_S): a case that takes longer is a hang,
 * and the default action of SIGALRM ends the run with it.  Crashes end it
 * too, under ASan+UBSan with a report.  What a case was is written to
 * fuzz-case.* before it runs, so a failure can be replayed.
 */
static uint64_t rng;

uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

const char *outdir = ".";

void keep_case(const char *what, const void *p, size_t n)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/fuzz-case.%s", outdir, what);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* --- pathmaps ------------------------------------------------------------ */

struct buf {
	char *p;
	size_t n, cap;
};

static void reserve(struct buf *b, size_t n)
{
	if (b->n + n + 1 <= b->cap)
		return;
	b->cap = 2 * (b->n + n + 1);
	b->p = realloc(b->p, b->cap);
	if (!b->p)
		abort();
}

static void insert(struct buf *b, size_t at, const char *s, size_t n)
{
	reserve(b, n);
	memmove(b->p + at + n, b->p + at, b->n - at);
	memcpy(b->p + at, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void cut(struct buf *b, size_t at, size_t n)
{
	if (at + n > b->n)
		n = b->n - at;
	memmove(b->p + at, b->p + at + n, b->n - at - n);
	b->n -= n;
	b->p[b->n] = 0;
}

/* Start of line k (0-based), or the end. */
static size_t line_at(const struct buf *b, size_t k)
{
	size_t i = 0;
	while (k && i < b->n)
		if (b->p[i++] == '\n')
			k--;
	return i;
}

static size_t lines(const struct buf *b)
{
	size_t n = 1;
	for (size_t i = 0; i < b->n; i++)
		n += b->p[i] == '\n';
	return n;
}

static const char *const tokens[] = {
	"[", "]", "{", "}", ":", ", ", "- ", "&a ", "*a", "!!str ", "|\n", ">\n", "'", "\"", "#",
	"\n", "  ", "\t", "0", "-1", "99999999999999999999", "1e308", "~", "null", "true",
	"[a, b]", "{ x: 1 }", "? [k]\n: v\n", "&b [*b]", "name", "threads", "uses", "tuple_size",
	"threshold", "hosts", "cores", "processes", "stages", "custom", "trees", "fanout", "runs_on",
	"scopes", "view", "servers", "mpi", "collect", "trace", "\xff\xfe", "%YAML 1.1\n---\n", "...\n",
};

static void mutate_yaml(struct buf *b)
{
	int n = 1 + (int)below(4);
	for (int k = 0; k < n && b->n; k++) {
		size_t at = below(b->n + 1), ln = lines(b);
		switch (below(8)) {
		case 0: /* a token anywhere */
		case 1: {
			const char *t = tokens[below(sizeof(tokens) / sizeof(tokens[0]))];
			insert(b, at, t, strlen(t));
			break;
		}
		case 2: /* a byte changed */
			if (at < b->n)
				b->p[at] = (char)(rnd() & 0x7f ? " -:[]{},&*\n#0a"[below(14)] : (int)rnd());
			break;
		case 3:
			cut(b, at, 1 + below(40));
			break;
		case 4: { /* a line repeated, elsewhere */
			size_t l = below(ln), s = line_at(b, l), e = line_at(b, l + 1);
			if (e > s && e - s < 4096) {
				char *copy = strndup(b->p + s, e - s);
				insert(b, line_at(b, below(ln)), copy, e - s);
				free(copy);
			}
			break;
		}
		case 5: { /* a line indented, or less */
			size_t s = line_at(b, below(ln));
			if (below(2))
				insert(b, s, "  ", 2);
			else if (s + 1 < b->n && b->p[s] == ' ')
				cut(b, s, 1 + below(2));
			break;
		}
		case 6: /* cut short */
			b->n = at;
			b->p[b->n] = 0;
			break;
		case 7: { /* a value made a list or a mapping */
			char *colon = memchr(b->p + at, ':', b->n - at);
			if (colon) {
				const char *v = below(2) ? " [x, [y]]" : " { k: *a }";
				insert(b, (size_t)(colon - b->p) + 1, v, strlen(v));
			}
			break;
		}
		}
	}
}

static const char *const builtin[] = {
	"pathmap: 1\nname: f\napplication:\n  elements:\n    - { name: a, tuple_size: 8, threshold: 4 }\n"
	"    - { name: b, tuple_size: 16 }\n  threads:\n    - { name: t0, uses: [a, b] }\n"
	"    - { name: t1, uses: [a] }\ncluster:\n  hosts:\n    - { name: h0, cores: [0, 1] }\n"
	"    - { name: h1, cores: 2, address: 127.0.0.1 }\nmapping:\n  processes:\n"
	"    - { name: p0, host: h0, threads: [t0], cores: [1] }\n    - { name: p1, host: h1, threads: [t1] }\n"
	"paths:\n  stages: [pass]\n  collectors: ['t0:*']\n  custom:\n"
	"    - { thread: t1, element: a, stages: [{ type: pass }] }\n"
	"trees:\n  - { name: sum, threads: [t0, t1], fanout: 2, runs_on: { 0: t1 } }\n"
	"trace: { threshold: 100, placement: node }\n"
	"scopes:\n  - { name: s, view: thread, of: t0, fanout: 2, rate_limit_hz: 5, reduce: max }\n"
	"mpi:\n  collect: [collectives, -polls]\nservers:\n  runs: process\n  listen: loopback\n  port: 0\n",
};

static int fuzz_pathmaps(const char *examples, long count)
{
	struct buf corpus[16];
	int nc = 0;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		corpus[nc++] = (struct buf){ strdup(builtin[i]), strlen(builtin[i]), strlen(builtin[i]) + 1 };
	DIR *d = examples ? opendir(examples) : NULL;
	for (struct dirent *de; d && nc < 16 && (de = readdir(d));) {
		char path[4200];
		if (!strstr(de->d_name, ".yaml"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", examples, de->d_name);
		FILE *f = fopen(path, "rb");
		struct buf b = { malloc(65536), 0, 65536 };
		if (f) {
			b.n = fread(b.p, 1, b.cap - 1, f);
			fclose(f);
		}
		b.p[b.n] = 0;
		corpus[nc++] = b;
	}
	if (d)
		closedir(d);
	long valid = 0, refused = 0;
	for (long c = 0; c < count; c++) {
		const struct buf *src = &corpus[below((size_t)nc)];
		struct buf b = { malloc(src->n + 1), src->n, src->n + 1 };
		memcpy(b.p, src->p, src->n + 1);
		mutate_yaml(&b);
		keep_case("yaml", b.p, b.n);
		char err[1024];
		pm_map *m = NULL;
		alarm(HANG_S);
		int rc = pm_load_string("fuzz.yaml", b.p, b.n, &m, err, sizeof(err));
		if (!rc) {
			FILE *null = fopen("/dev/null", "w");
			pm_summary(m, null);
			pm_show(m, null);
			fclose(null);
			pm_destroy(m);
			valid++;
		} else {
			unsigned line, col;
			char sep;
			if (rc != PS_ENOMEM && (sscanf(err, "fuzz.yaml:%u:%u%c", &line, &col, &sep) != 3 ||
						sep != ':')) {
				fprintf(stderr, "fuzz: pathmap case %ld: an error without file:line:column: "
					"'%s' (the case is in %s/fuzz-case.yaml)\n", c, err, outdir);
				return 1;
			}
			refused++;
		}
		alarm(0);
		free(b.p);
	}
	for (int i = 0; i < nc; i++)
		free(corpus[i].p);
	printf("fuzz: pathmaps: %ld cases, %ld valid, %ld refused with a position, 0 crashes, 0 hangs\n",
	       count, valid, refused);
	return 0;
}

/* --- wire frames at a live server ------------------------------------------- */

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	struct timeval tv = { 0, 50000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void frame(struct buf *b, uint16_t op, uint16_t flags, uint32_t len, const void *p, size_t have)
{
	unsigned char h[PSW_HDR];
	struct psw_hdr q = { op, flags, len, (uint32_t)rnd() };
	psw_put_hdr(h, &q);
	reserve(b, PSW_HDR + have);
	memcpy(b->p + b->n, h, PSW_HDR);
	memcpy(b->p + b->n + PSW_HDR, p, have);
	b->n += PSW_HDR + have;
}

static void name_field(unsigned char *p, const char *s)
{
	memset(p, 0, PSW_NAME);
	memcpy(p, s, strnlen(s, PSW_NAME));
}

/* A client's whole conversation: mostly well-formed, then not. */
static void conversation(struct buf *b)
{
	unsigned char p[1024];
	b->n = 0;
	if (below(10) < 8) { /* HELLO first, most of the time */
		uint32_t v = below(20) ? PSW_VERSION : (uint32_t)rnd(), order = 0x01020304;
		memcpy(p, &v, 4);
		memcpy(p + 4, &order, 4);
		frame(b, PSW_HELLO, 0, 8, p, 8);
	}
	int k = 1 + (int)below(6);
	for (int i = 0; i < k; i++) {
		uint16_t op = (uint16_t)(1 + below(18));
		size_t len = below(6) ? below(2 * PSW_NAME + 16) : below(sizeof(p));
		for (size_t j = 0; j < len; j++)
			p[j] = (unsigned char)rnd();
		if (op == 2 && len >= 2 * PSW_NAME + 8 && below(2)) { /* OPEN of what is there */
			name_field(p, "fz");
			name_field(p + PSW_NAME, below(2) ? "d" : "f");
			len = 2 * PSW_NAME + 8;
		}
		if (below(8) == 0)
			op |= PSW_REPLY; /* a reply sent to the server */
		uint32_t said = below(10) ? (uint32_t)len : (uint32_t)rnd(); /* a length that lies */
		frame(b, op, (uint16_t)below(3), said, p, len);
	}
	if (below(4) == 0 && b->n) /* cut short */
		b->n = below(b->n);
	for (int i = 0, flips = (int)below(3); i < flips && b->n; i++)
		b->p[below(b->n)] ^= (char)(1 << below(8));
}

static int server_alive(int port)
{
	ps_server *r;
	ps_elem *e;
	unsigned char t[36];
	struct ps_remote_attr ra = { .timeout_ms = 4000 };
	int rc = ps_server_open_remote("127.0.0.1", port, "fz", PS_RDONLY, &ra, &r);
	if (rc)
		return rc;
	if (!(rc = ps_elem_open(r, "d", 36, &e))) {
		rc = ps_read_latest(e, t, NULL);
		ps_elem_close(e);
	}
	ps_server_destroy(r);
	return rc == PS_ENODATA ? 0 : rc;
}

static int fuzz_wire(long count)
{
	ps_server *srv;
	ps_elem *d, *f;
	ps_tcp *t;
	struct ps_elem_attr da = { .tuple_size = 36, .threshold = 8 };
	struct ps_elem_attr fa = { .tuple_size = 8, .threshold = 2, .mode = PS_FLOW };
	struct ps_tcp_attr ta = { .idle_ms = 200 };
	if (ps_server_create_local(&srv) || ps_elem_create(srv, "d", &da, &d) ||
	    ps_elem_create(srv, "f", &fa, &f) || ps_tcp_start(&ta, &t) || ps_tcp_add(t, "fz", srv)) {
		fprintf(stderr, "fuzz: wire: cannot start a server\n");
		return 1;
	}
	unsigned char tup[36] = { 1 };
	ps_write(d, tup, 0, NULL);
	int port = ps_tcp_port(t);
	struct buf b = { 0 };
	for (long c = 0; c < count; c++) {
		conversation(&b);
		keep_case("wire", b.p, b.n);
		alarm(HANG_S);
		int fd = dial(port);
		if (fd >= 0) {
			if (b.n)
				send(fd, b.p, b.n, MSG_NOSIGNAL);
			char sink[4096];
			while (recv(fd, sink, sizeof(sink), 0) > 0)
				;
			close(fd);
		}
		int rc = c % 50 == 49 ? server_alive(port) : 0;
		alarm(0);
		if (rc) {
			fprintf(stderr, "fuzz: wire case %ld: the server stopped serving: %s (the case is "
				"in %s/fuzz-case.wire)\n", c, ps_strerror(rc), outdir);
			return 1;
		}
	}
	alarm(HANG_S);
	int rc = server_alive(port);
	alarm(0);
	struct ps_tcp_counts n;
	ps_tcp_counts(t, &n);
	ps_tcp_stop(t);
	ps_elem_close(d);
	ps_elem_close(f);
	ps_server_destroy(srv);
	free(b.p);
	if (rc) {
		fprintf(stderr, "fuzz: wire: the server stopped serving: %s\n", ps_strerror(rc));
		return 1;
	}
	printf("fuzz: wire: %ld conversations, %llu frames served, %llu malformed closed, "
	       "the server serving throughout, 0 crashes, 0 hangs\n", count,
	       (unsigned long long)n.frames, (unsigned long long)n.bad);
	return 0;
}

/* --- damaged segment files ---------------------------------------------------- */

static void *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	void *p = malloc(*n ? *n : 1);
	if (p && fread(p, 1, *n, f) != *n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* Everything a reader (psadm, a monitor) does with a segment, none of it waiting. */
static void read_all(const char *seg)
{
	struct ps_shm_info info;
	ps_shm_info(seg, &info);
	ps_server *s;
	if (!ps_server_open_shm(seg, PS_RDONLY | PS_NOWAIT, &s)) {
		int n = ps_server_count(s);
		for (int i = 0; i < n && i < 64; i++) {
			char name[PS_NAME_MAX + 1];
			ps_elem *e;
			if (ps_server_elem_name(s, i, name) || ps_elem_open(s, name, 0, &e))
				continue;
			struct ps_stats st;
			unsigned char buf[4 * 4096];
			ps_elem_stats(e, &st);
			size_t ts = ps_elem_tuple_size(e);
			if (ts && ts <= 4096) {
				ps_read_latest(e, buf, NULL);
				ps_read_range(e, st.oldest, 4, buf, NULL);
				ps_read(e, st.oldest, buf, 0, NULL);
			}
			ps_elem_close(e);
		}
		ps_server_destroy(s);
	}
	es_space *sp;
	if (!es_space_open(seg, &sp)) {
		es_space_collectors(sp);
		es_space_destroy(sp);
	}
}

static int fuzz_segments(long count)
{
	char seg[64], bad[80], path[128], badpath[160];
	snprintf(seg, sizeof(seg), "fz%d", (int)getpid());
	snprintf(bad, sizeof(bad), "%s.bad", seg);
	snprintf(path, sizeof(path), "/dev/shm/pastset.%s", seg);
	snprintf(badpath, sizeof(badpath), "/dev/shm/pastset.%s", bad);
	/* a real trace space, with a thread's trace and notes, written and closed */
	es_space *sp;
	struct es_meta m = { 0 };
	snprintf(m.trace, sizeof(m.trace), "trace0");
	snprintf(m.thread, sizeof(m.thread), "t0");
	uint16_t id;
	ps_elem *e;
	if (es_space_create(seg, 4u << 20, &sp) || es_space_add(sp, &m, 100, false, &id, &e)) {
		fprintf(stderr, "fuzz: segments: cannot make a trace space\n");
		return 1;
	}
	struct es_trace tr = { .start = 1, .end = 2 };
	for (int i = 0; i < 150; i++)
		ps_write(e, &tr, 0, NULL);
	ps_elem_close(e);
	es_space_destroy(sp);
	size_t n;
	unsigned char *orig = slurp(path, &n);
	ps_shm_unlink(seg);
	if (!orig) {
		fprintf(stderr, "fuzz: segments: cannot read %s\n", path);
		return 1;
	}
	unsigned char *b = malloc(n);
	/* where the segment says something: most of a big segment is zeros */
	size_t *live = malloc(sizeof(*live) * (n / 8 + 1)), nlive = 0;
	for (size_t i = 0; i < n; i += 8)
		if (memcmp(orig + i, "\0\0\0\0\0\0\0\0", n - i < 8 ? n - i : 8))
			live[nlive++] = i;
	for (long c = 0; c < count; c++) {
		memcpy(b, orig, n);
		size_t len = n;
		switch (below(5)) {
		case 0: /* cut short anywhere */
			len = below(n);
			break;
		case 1: /* zeros over a stretch */
			{
				size_t at = below(n), k = 1 + below(4096);
				memset(b + at, 0, at + k > n ? n - at : k);
			}
			break;
		default: /* bytes changed, mostly in the header, directory and element headers */
			for (int i = 0, k = 1 + (int)below(16); i < k; i++) {
				size_t at = nlive && below(2) ? live[below(nlive)] + below(8) :
					    below(4) ? below(n < 3 * 4096 ? n : 3 * 4096) : below(n);
				at = at < n ? at : n - 1;
				b[at] = below(3) ? (unsigned char)rnd() : below(2) ? 0xff : 0;
			}
		}
		keep_case("segment", b, len);
		int fd = open(badpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, b, len) != (ssize_t)len) {
			fprintf(stderr, "fuzz: segments: cannot write %s\n", badpath);
			return 1;
		}
		close(fd);
		alarm(HANG_S);
		read_all(bad);
		alarm(0);
	}
	unlink(badpath);
	free(live);
	free(b);
	free(orig);
	printf("fuzz: segments: %ld damaged copies of a trace space read by psadm's and the monitors' "
	       "calls, 0 crashes, 0 hangs\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	long count = 2000;
	uint64_t seed = 1;
	const char *what = "all", *examples = "pathmaps/examples", *seeds = "tests/fuzz/seeds";
	double seconds = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = atol(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--examples") && i + 1 < argc)
			examples = argv[++i];
		else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			outdir = argv[++i];
		else if (argv[i][0] != '-')
			what = argv[i];
		else {
			fprintf(stderr, "usage: fuzz [--count N] [--seed N] [--examples DIR] [--seeds DIR] "
				"[--seconds S] [--out DIR] [pathmaps|wire|segments|archives|all]\n");
			return 2;
		}
	}
	if (!seed)
		seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	rng = seed | 1;
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line out before a crash could lose it */
	printf("fuzz: seed %llu, %ld cases each\n", (unsigned long long)seed, count);
	fflush(stdout);
	int rc = 0;
	if (!rc && (!strcmp(what, "all") || !strcmp(what, "pathmaps")))
		rc = fuzz_pathmaps(examples, count);
	if (!rc && (!strcmp(what, "all") || !strcmp(what, "wire")))
		rc = fuzz_wire(count);
	if (!rc && (!strcmp(what, "all") || !strcmp(what, "segments")))
		rc = fuzz_segments(count);
	/* archives: --seconds bounds the time too (each case reads one five ways) */
	if (!rc && (!strcmp(what, "all") || !strcmp(what, "archives")))
		rc = fuzz_archives(seeds, count, seconds);
	return rc;
}
