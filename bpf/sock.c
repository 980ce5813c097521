//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's socket-level load balancer (as Cilium's bpf_sock.c), attached
 * to a cgroup v2 for the processes of the host network namespace, which
 * have no endpoint programs:
 *   connect4/6:     a TCP (or connected UDP) socket connecting to a
 *                   service frontend connects to a backend instead;
 *   sendmsg4/6:     an unconnected UDP datagram to a frontend is sent to a
 *                   backend;
 *   recvmsg4/6:     a datagram from that backend is reported as from the
 *                   frontend;
 *   getpeername4/6: a socket connected through a frontend names the
 *                   frontend as its peer.
 * The translation happens once per connect (per datagram for sendmsg), not
 * per packet: no NAT, no conntrack. Backend selection is random among the
 * active backends (slots 1..count of lib/lbmaps.h); a frontend without an
 * active backend refuses the connect/sendmsg: ECONNREFUSED, as kube-proxy's
 * REJECT gives (service_no_backend_reject), else EPERM. Session affinity
 * ClientIP keys the client by its network namespace (its cookie), as
 * Cilium's socket LB does: the source address is not known at connect. */

#include "lib/common.h"
#include "lib/lbmaps.h"

char __license[] SEC("license") = "Dual BSD/GPL";

static __u64 (*get_socket_cookie)(void *ctx) = (void *)BPF_FUNC_get_socket_cookie;
static __u32 (*sock_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;
static __u64 (*get_netns_cookie)(void *ctx) = (void *)BPF_FUNC_get_netns_cookie;
static __u64 (*sock_ktime_coarse)(void) = (void *)BPF_FUNC_ktime_get_coarse_ns;
static long (*set_retval)(int retval) = (void *)BPF_FUNC_set_retval;

/* service_no_backend_reject is set by the loader (--service-no-backend-
 * response=reject, the default): a refused connect or sendmsg fails with
 * ECONNREFUSED, as a REJECTed one would; 0: EPERM, the hook's own. */
volatile const __u8 service_no_backend_reject = 0;

#define SOCK_ECONNREFUSED 111

#define SOCK_NSEC_PER_SEC 1000000000ULL
#define SOCK_AFFINITY_FAMILY 0 /* lb_affinity keys of the socket LB: client is a netns cookie */

#define SYS_REJECT 0
#define SYS_PROCEED 1

/* host_netns_cookie, when not 0, is the cookie of the node's network
 * namespace (--bpf-lb-sock-hostns-only, as Cilium's): sockets of any other
 * namespace (pods) are not translated, their packets are balanced by their
 * endpoint programs instead, where a service mesh's sidecar sees the
 * frontend. The loader sets it. */
volatile const __u64 host_netns_cookie = 0;

/* sock_skip reports whether the socket's namespace is left to the
 * per-packet balancer. */
static __always_inline int sock_skip(void *ctx)
{
	return host_netns_cookie && get_netns_cookie(ctx) != host_netns_cookie;
}

/* struct sock_addr is the destination in host-neutral form. An IPv6
 * socket's IPv4-mapped address (::ffff:a.b.c.d, a dual-stack socket's
 * IPv4 peer) is family 4, v4mapped set: written back mapped. */
struct sock_addr {
	__u32 address[4];
	__be16 port;
	__u8 family;
	__u8 proto;
	__u8 scope; /* the frontend entry's (LB_SCOPE_*) */
	__u8 v4mapped;
};

static __always_inline struct lb_service *sock_service(const struct sock_addr *a, __u16 slot)
{
	if (a->family == 4) {
		struct lb4_key key = {
			.address = a->address[0],
			.dport = a->port,
			.backend_slot = slot,
			.proto = a->proto,
			.scope = a->scope,
		};
		return map_lookup_elem(&lb4_services, &key);
	}
	{
		struct lb6_key key = {
			.dport = a->port,
			.backend_slot = slot,
			.proto = a->proto,
			.scope = a->scope,
		};
		__builtin_memcpy(key.address, a->address, 16);
		return map_lookup_elem(&lb6_services, &key);
	}
}

/* sock_affinity returns the backend the client's network namespace last
 * used for svc while it is one of svc's backends and not timed out, else
 * 0; with put, records id as that backend. */
static __always_inline __u32 sock_affinity(void *ctx, const struct lb_service *svc, __u32 put)
{
	struct lb_affinity_key key = { .rev_nat_index = svc->rev_nat_index, .family = SOCK_AFFINITY_FAMILY };
	struct lb_affinity_match_key mkey = { .rev_nat_index = svc->rev_nat_index };
	struct lb_affinity_value *v, nv = {};
	__u64 cookie = get_netns_cookie(ctx), now = sock_ktime_coarse();

	__builtin_memcpy(key.client, &cookie, sizeof(cookie));
	if (put) {
		nv.last_used = now;
		nv.backend_id = put;
		map_update_elem(&lb_affinity, &key, &nv, BPF_ANY);
		return put;
	}
	v = map_lookup_elem(&lb_affinity, &key);
	if (!v || v->last_used + (__u64)svc->affinity_timeout * SOCK_NSEC_PER_SEC < now)
		return 0;
	mkey.backend_id = v->backend_id;
	if (!map_lookup_elem(&lb_affinity_match, &mkey))
		return 0;
	return v->backend_id;
}

/* sock_unspec_or_loopback reports whether a's address is the unspecified
 * or a loopback one. */
static __always_inline int sock_unspec_or_loopback(const struct sock_addr *a)
{
	if (a->family == 4)
		return a->address[0] == 0 ||
		       (a->address[0] & bpf_htonl(0xff000000)) == bpf_htonl(0x7f000000);
	return (a->address[0] | a->address[1] | a->address[2]) == 0 &&
	       (a->address[3] == 0 || a->address[3] == bpf_htonl(1));
}

/* sock_translate turns a (a frontend) into a backend and remembers the
 * way back for the socket. Returns SYS_PROCEED or SYS_REJECT. */
static __always_inline int sock_translate(void *ctx, struct sock_addr *a)
{
	struct sock_addr fe = *a; /* the frontend looked up */
	struct lb_service *svc = sock_service(&fe, 0), *slot;
	struct lb_sk_key rkey = { .family = a->family };
	struct lb_sk_value rval = { .port = a->port };
	__u32 id = 0;

	if (!svc && sock_unspec_or_loopback(&fe)) {
		/* A NodePort on a loopback (or the unspecified) address: the
		 * unspecified address's frontend, as Cilium's wildcard
		 * lookup (kube-proxy's route_localnet NodePorts). */
		__builtin_memset(fe.address, 0, sizeof(fe.address));
		svc = sock_service(&fe, 0);
		if (svc && !(svc->flags & LB_SVC_FLAG_NODEPORT))
			svc = 0;
	}
	if (!svc)
		return SYS_PROCEED;
	if (svc->flags & LB_SVC_FLAG_TWO_SCOPES) {
		struct lb_service *in;

		/* The node's processes are inside the cluster. */
		fe.scope = LB_SCOPE_INT;
		in = sock_service(&fe, 0);
		if (in)
			svc = in;
		else
			fe.scope = LB_SCOPE_EXT;
	}
	if (svc->count == 0)
		return SYS_REJECT;
	if (svc->flags & LB_SVC_FLAG_AFFINITY)
		id = sock_affinity(ctx, svc, 0);
	if (!id) {
		slot = sock_service(&fe, (sock_prandom_u32() % svc->count) + 1);
		if (!slot)
			return SYS_REJECT;
		id = slot->backend_id;
	}
	__builtin_memcpy(rval.address, a->address, 16);
	rval.rev_nat_index = svc->rev_nat_index;
	if (a->family == 4) {
		struct lb4_backend *b = map_lookup_elem(&lb4_backends, &id);

		if (!b)
			return SYS_REJECT;
		a->address[0] = b->address;
		a->port = b->port;
	} else {
		struct lb6_backend *b = map_lookup_elem(&lb6_backends, &id);

		if (!b)
			return SYS_REJECT;
		__builtin_memcpy(a->address, b->address, 16);
		a->port = b->port;
	}
	if (svc->flags & LB_SVC_FLAG_AFFINITY)
		sock_affinity(ctx, svc, id);
	rkey.cookie = get_socket_cookie(ctx);
	__builtin_memcpy(rkey.address, a->address, 16);
	rkey.port = a->port;
	map_update_elem(&lb_reverse_sk, &rkey, &rval, BPF_ANY);
	return SYS_PROCEED;
}

/* sock_reverse turns a (a backend the socket was sent to) back into the
 * frontend; returns whether it did. */
static __always_inline int sock_reverse(void *ctx, struct sock_addr *a)
{
	struct lb_sk_key rkey = { .family = a->family, .port = a->port };
	struct lb_sk_value *rval;

	rkey.cookie = get_socket_cookie(ctx);
	__builtin_memcpy(rkey.address, a->address, 16);
	rval = map_lookup_elem(&lb_reverse_sk, &rkey);
	if (!rval)
		return 0;
	__builtin_memcpy(a->address, rval->address, 16);
	a->port = rval->port;
	return 1;
}

static __always_inline struct sock_addr sock_read4(struct bpf_sock_addr *ctx, __u8 proto)
{
	struct sock_addr a = { .family = 4, .proto = proto };

	a.address[0] = ctx->user_ip4;
	a.port = (__be16)ctx->user_port;
	return a;
}

static __always_inline struct sock_addr sock_read6(struct bpf_sock_addr *ctx, __u8 proto)
{
	struct sock_addr a = { .family = 6, .proto = proto };

	a.address[0] = ctx->user_ip6[0];
	a.address[1] = ctx->user_ip6[1];
	a.address[2] = ctx->user_ip6[2];
	a.address[3] = ctx->user_ip6[3];
	a.port = (__be16)ctx->user_port;
	if (a.address[0] == 0 && a.address[1] == 0 && a.address[2] == bpf_htonl(0xffff)) {
		/* IPv4-mapped: an IPv4 service, as Cilium's v4-in-v6. */
		a.family = 4;
		a.v4mapped = 1;
		a.address[0] = a.address[3];
		a.address[2] = 0;
		a.address[3] = 0;
	}
	return a;
}

static __always_inline void sock_write4(struct bpf_sock_addr *ctx, const struct sock_addr *a)
{
	ctx->user_ip4 = a->address[0];
	ctx->user_port = (__u32)a->port;
}

static __always_inline void sock_write6(struct bpf_sock_addr *ctx, const struct sock_addr *a)
{
	if (a->v4mapped) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0xffff);
		ctx->user_ip6[3] = a->address[0];
		ctx->user_port = (__u32)a->port;
		return;
	}
	ctx->user_ip6[0] = a->address[0];
	ctx->user_ip6[1] = a->address[1];
	ctx->user_ip6[2] = a->address[2];
	ctx->user_ip6[3] = a->address[3];
	ctx->user_port = (__u32)a->port;
}

/* proto_of is the L4 protocol of the services of a socket of protocol p:
 * TCP for TCP and MPTCP sockets, UDP for UDP ones; 0 for any other (SCTP,
 * UDP-Lite, raw), which the hooks leave alone: an SCTP stream socket is
 * not a TCP one of the same port (SCTP services are balanced per packet
 * only). */
static __always_inline __u8 proto_of(__u32 p)
{
	switch (p) {
	case IPPROTO_TCP:
	case 262: /* IPPROTO_MPTCP */
		return IPPROTO_TCP;
	case IPPROTO_UDP:
		return IPPROTO_UDP;
	}
	return 0;
}

static __always_inline __u8 sock_proto(struct bpf_sock_addr *ctx)
{
	return proto_of(ctx->protocol);
}

static __always_inline int forward4(struct bpf_sock_addr *ctx)
{
	__u8 proto = sock_proto(ctx);
	struct sock_addr a;
	int ret;

	if (!proto || sock_skip(ctx))
		return SYS_PROCEED;
	a = sock_read4(ctx, proto);
	ret = sock_translate(ctx, &a);
	if (ret == SYS_REJECT && service_no_backend_reject)
		set_retval(-SOCK_ECONNREFUSED);

	if (ret == SYS_PROCEED)
		sock_write4(ctx, &a);
	return ret;
}

static __always_inline int forward6(struct bpf_sock_addr *ctx)
{
	__u8 proto = sock_proto(ctx);
	struct sock_addr a;
	int ret;

	if (!proto || sock_skip(ctx))
		return SYS_PROCEED;
	a = sock_read6(ctx, proto);
	ret = sock_translate(ctx, &a);
	if (ret == SYS_REJECT && service_no_backend_reject)
		set_retval(-SOCK_ECONNREFUSED);

	if (ret == SYS_PROCEED)
		sock_write6(ctx, &a);
	return ret;
}

static __always_inline int reverse4(struct bpf_sock_addr *ctx)
{
	__u8 proto = sock_proto(ctx);
	struct sock_addr a;

	if (!proto)
		return SYS_PROCEED;
	a = sock_read4(ctx, proto);
	if (sock_reverse(ctx, &a))
		sock_write4(ctx, &a);
	return SYS_PROCEED;
}

static __always_inline int reverse6(struct bpf_sock_addr *ctx)
{
	__u8 proto = sock_proto(ctx);
	struct sock_addr a;

	if (!proto)
		return SYS_PROCEED;
	a = sock_read6(ctx, proto);
	if (sock_reverse(ctx, &a))
		sock_write6(ctx, &a);
	return SYS_PROCEED;
}

SEC("cgroup/connect4")
int sock_connect4(struct bpf_sock_addr *ctx) { return forward4(ctx); }

SEC("cgroup/connect6")
int sock_connect6(struct bpf_sock_addr *ctx) { return forward6(ctx); }

SEC("cgroup/sendmsg4")
int sock_sendmsg4(struct bpf_sock_addr *ctx) { return forward4(ctx); }

SEC("cgroup/sendmsg6")
int sock_sendmsg6(struct bpf_sock_addr *ctx) { return forward6(ctx); }

SEC("cgroup/recvmsg4")
int sock_recvmsg4(struct bpf_sock_addr *ctx) { return reverse4(ctx); }

SEC("cgroup/recvmsg6")
int sock_recvmsg6(struct bpf_sock_addr *ctx) { return reverse6(ctx); }

SEC("cgroup/getpeername4")
int sock_getpeername4(struct bpf_sock_addr *ctx) { return reverse4(ctx); }

SEC("cgroup/getpeername6")
int sock_getpeername6(struct bpf_sock_addr *ctx) { return reverse6(ctx); }

/* node_netns_cookie is the cookie of the node's network namespace, set by
 * the loader for the bind protection (AttachBindProtection). */
volatile const __u64 node_netns_cookie = 0;

#define SOCK_EADDRINUSE 98
#define SOCK_BIND_PROTECTED (LB_SVC_FLAG_NODEPORT | LB_SVC_FLAG_EXTERNAL_IP | LB_SVC_FLAG_LOADBALANCER)


/* bind_check refuses with EADDRINUSE, as Cilium's
 * --node-port-bind-protection, a bind of a socket of the node's network
 * namespace to the address and port of a NodePort, ExternalIPs or
 * LoadBalancer frontend, whose traffic the datapath balances away from
 * the socket; the unspecified and the loopback addresses take the
 * NodePort's own (the unspecified address's frontend), IPv6's :: IPv4's
 * too (a dual-stack socket). Sockets of other
 * namespaces (pods) are not the node's ports. */
static __always_inline int bind_check(struct bpf_sock *ctx, struct sock_addr *a)
{
	struct lb_service *svc;

	if (!a->proto || !a->port || get_netns_cookie(ctx) != node_netns_cookie)
		return SYS_PROCEED;
	svc = sock_service(a, 0);
	if (!svc) {
		if (!sock_unspec_or_loopback(a))
			return SYS_PROCEED;
		__builtin_memset(a->address, 0, sizeof(a->address));
		svc = sock_service(a, 0);
	}
	if (!(svc && (svc->flags & SOCK_BIND_PROTECTED)) && a->family == 6 &&
	    (a->address[0] | a->address[1] | a->address[2] | a->address[3]) == 0) {
		/* A dual-stack socket on :: takes IPv4 too. */
		a->family = 4;
		svc = sock_service(a, 0);
	}
	if (svc && (svc->flags & SOCK_BIND_PROTECTED)) {
		set_retval(-SOCK_EADDRINUSE);
		return SYS_REJECT;
	}
	return SYS_PROCEED;
}

SEC("cgroup/post_bind4")
int sock_post_bind4(struct bpf_sock *ctx)
{
	struct sock_addr a = { .family = 4, .proto = proto_of(ctx->protocol), .port = bpf_htons(ctx->src_port) };

	a.address[0] = ctx->src_ip4;
	return bind_check(ctx, &a);
}

SEC("cgroup/post_bind6")
int sock_post_bind6(struct bpf_sock *ctx)
{
	struct sock_addr a = { .family = 6, .proto = proto_of(ctx->protocol), .port = bpf_htons(ctx->src_port) };

	a.address[0] = ctx->src_ip6[0];
	a.address[1] = ctx->src_ip6[1];
	a.address[2] = ctx->src_ip6[2];
	a.address[3] = ctx->src_ip6[3];
	return bind_check(ctx, &a);
}
