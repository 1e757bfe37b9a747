/*
 * LD_PRELOAD shim for zebra in tests: zebra's route, nexthop and LSP writes to the kernel are
 * acknowledged without being applied, so zebra's dataplane pipeline goes on to the FPM
 * provider (dplane_fpm_nl) exactly as on a host that accepted them.
 *
 * Why: these test kernels have no MPLS (no mpls_router, no MPLS lwtunnel). zebra's kernel
 * provider runs before the FPM provider, and a context the kernel rejects is moved to the
 * error list and never reaches FPM: without this shim no labelled route and no LSP is ever
 * sent over FPM. The shim rewrites each RTM_{NEW,DEL}{ROUTE,NEXTHOP} request that zebra sends
 * on a netlink socket into NLMSG_NOOP; the kernel answers a NOOP with the same ACK
 * (error 0, same sequence number) that a successful request gets. Nothing else is touched:
 * zebra still reads links, addresses and the kernel's own routes. It must never be used
 * outside tests: the kernel's table is left without zebra's routes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);

static int is_netlink(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	return ss.ss_family == AF_NETLINK;
}

/* Rewrites the route and nexthop writes in buf (a run of nlmsghdr) into NOOPs. */
static void neuter(char *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);

		if (h->nlmsg_len < sizeof(*h) || off + h->nlmsg_len > len)
			return;
		switch (h->nlmsg_type) {
		case RTM_NEWROUTE:
		case RTM_DELROUTE:
		case RTM_NEWNEXTHOP:
		case RTM_DELNEXTHOP:
			h->nlmsg_type = NLMSG_NOOP;
			break;
		default:
			break;
		}
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
}

static size_t iov_total(const struct msghdr *m)
{
	size_t t = 0;

	for (size_t i = 0; i < m->msg_iovlen; i++)
		t += m->msg_iov[i].iov_len;
	return t;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!real_sendmsg)
		real_sendmsg = dlsym(RTLD_NEXT, "sendmsg");
	if (!is_netlink(fd) || msg->msg_iovlen == 0)
		return real_sendmsg(fd, msg, flags);

	/* Copy into one buffer: the caller's buffers stay as they were. */
	size_t total = iov_total(msg);
	char *buf = malloc(total);
	if (!buf)
		return real_sendmsg(fd, msg, flags);
	size_t off = 0;
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		memcpy(buf + off, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		off += msg->msg_iov[i].iov_len;
	}
	neuter(buf, total);
	struct iovec iov = {.iov_base = buf, .iov_len = total};
	struct msghdr copy = *msg;
	copy.msg_iov = &iov;
	copy.msg_iovlen = 1;
	ssize_t rv = real_sendmsg(fd, &copy, flags);
	free(buf);
	return rv;
}

ssize_t sendto(int fd, const void *data, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	if (!real_sendto)
		real_sendto = dlsym(RTLD_NEXT, "sendto");
	if (!is_netlink(fd) || len == 0)
		return real_sendto(fd, data, len, flags, to, tolen);
	char *buf = malloc(len);
	if (!buf)
		return real_sendto(fd, data, len, flags, to, tolen);
	memcpy(buf, data, len);
	neuter(buf, len);
	ssize_t rv = real_sendto(fd, buf, len, flags, to, tolen);
	free(buf);
	return rv;
}

ssize_t send(int fd, const void *data, size_t len, int flags)
{
	return sendto(fd, data, len, flags, NULL, 0);
}
