/* tcp_fixture.h - what the tuple server's and the remote client's suites share: a served segment, raw frames, secret files. */
#ifndef TESTS_UNIT_TCP_FIXTURE_H
#define TESTS_UNIT_TCP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pastset/pastset.h"

/* A local server with a discard element d (36 bytes, 8 held) and a flow
 * element f (8 bytes, 2 held), served as "seg". */
struct fixture {
	ps_server *srv;
	ps_elem *d, *f;
	ps_tcp *t;
	int port;
};
void fx_up(struct fixture *x, const struct ps_tcp_attr *a);
void fx_down(struct fixture *x);
/* A 36-byte tuple saying v. */
void tuple(unsigned char t[36], uint32_t v);
/* A file holding `what`, with that mode, named for this process and tag. */
void secret_file(char *path, size_t len, const char *tag, const char *what, mode_t mode);
int count_seg(const char *seg, void *arg); /* for ps_remote_list: counts */
/* Frames by hand, for what the client would never send. */
int raw_connect(int port);
void raw_send(int fd, uint16_t op, uint32_t len, const void *payload, size_t have);
void raw_hello(int fd);

#endif
