/* tcp_peer.c - who is on the other end of a loopback connection: its uid, from the kernel (sock_diag), else /proc/net/tcp. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

/* The user owning the socket local:lport -> remote:rport, asked of the
 * kernel by its exact address (sock_diag): one look-up, not a read of
 * every socket on the host.  -1 if the kernel cannot say. */
static long diag_uid(const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} q = {
		.nlh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
		       .id = { .idiag_sport = local->sin_port, .idiag_dport = remote->sin_port,
			       .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
	};
	q.r.id.idiag_src[0] = local->sin_addr.s_addr;
	q.r.id.idiag_dst[0] = remote->sin_addr.s_addr;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	long uid = -1;
	union {
		struct nlmsghdr h;
		char b[1024];
	} a;
	struct timeval tv = { 0, 200000 }; /* the kernel answers at once, or never */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&nl, sizeof(nl)) == (ssize_t)sizeof(q)) {
		ssize_t n = recv(fd, &a, sizeof(a), 0);
		if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) &&
		    NLMSG_OK(&a.h, (size_t)n) && a.h.nlmsg_type == SOCK_DIAG_BY_FAMILY)
			uid = ((struct inet_diag_msg *)NLMSG_DATA(&a.h))->idiag_uid;
	}
	close(fd);
	return uid;
}

/* The same from /proc/net/tcp, where sock_diag is not there (a kernel
 * without inet_diag): a read of every TCP socket on the host. */
static long proc_uid(const struct sockaddr_in *local, const struct sockaddr_in *remote)
{
	char l[32], r[32], line[256], a[64], b[64];
	snprintf(l, sizeof(l), "%08X:%04X", (unsigned)local->sin_addr.s_addr, ntohs(local->sin_port));
	snprintf(r, sizeof(r), "%08X:%04X", (unsigned)remote->sin_addr.s_addr,
		 ntohs(remote->sin_port));
	FILE *f = fopen("/proc/net/tcp", "re");
	long uid = -1, u;
	while (f && uid < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %63s %63s %*x %*s %*s %*s %ld", a, b, &u) == 3 &&
		    !strcmp(a, l) && !strcmp(b, r))
			uid = u;
	if (f)
		fclose(f);
	return uid;
}

/* The user a loopback client runs as (SO_PEERCRED is for Unix sockets
 * only): the owner of the client's end, whose local end is our peer and
 * remote end us.  -1 if not found, -2 if the client is already gone. */
long ps__peer_uid(int fd)
{
	struct sockaddr_in me, peer;
	socklen_t l1 = sizeof(me), l2 = sizeof(peer);
	if (getsockname(fd, (struct sockaddr *)&me, &l1))
		return -1;
	if (getpeername(fd, (struct sockaddr *)&peer, &l2))
		return -2;
	long uid = diag_uid(&peer, &me);
	if (uid < 0)
		uid = proc_uid(&peer, &me);
	/* not found, because the client's end closed while we looked? */
	if (uid < 0 && getpeername(fd, (struct sockaddr *)&peer, &l2))
		return -2;
	return uid;
}
