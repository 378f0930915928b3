/* ctl_forge.c - writes a hostile order to a rank's es.ctl, as anyone who may steer the job could: a number out of turn, or bytes that are no order. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/collectors.h"

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "list") && strcmp(argv[3], "clean"))) {
		fprintf(stderr, "usage: ctl_forge SEGMENT GEN list|clean (list: its list and collect bytes are not text)\n");
		return 2;
	}
	struct es_ctl_rec c = { .gen = strtoull(argv[2], NULL, 0) };
	if (!strcmp(argv[3], "list")) {
		memset(c.list, 0x1b, sizeof(c.list)); /* escapes, and no end */
		memset(c.collect, 0xff, sizeof(c.collect));
	} else {
		memset(c.collect, 1, sizeof(c.collect));
		snprintf(c.list, sizeof(c.list), "[all]");
	}
	ps_server *srv;
	ps_elem *e;
	int rc = ps_server_open_shm(argv[1], PS_RDWR, &srv);
	if (!rc && !(rc = ps_elem_open(srv, ES_CTL_ELEMENT, sizeof(c), &e))) {
		rc = ps_write(e, &c, 0, NULL);
		ps_elem_close(e);
	}
	if (!rc)
		ps_server_destroy(srv);
	if (rc)
		fprintf(stderr, "ctl_forge: %s: %s\n", argv[1], ps_strerror(rc));
	return rc ? 1 : 0;
}
