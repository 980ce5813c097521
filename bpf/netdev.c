//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's NodePort programs, attached to the node's external device:
 *   from_netdev: tc/tcx ingress. A packet from outside to a NodePort,
 *                ExternalIPs or LoadBalancer frontend (lib/lbmaps.h flags)
 *                is translated to a backend as from_container does
 *                (lib/lb.h: remembered backend, random selection,
 *                affinity, DNAT), and the translated flow is recorded in
 *                conntrack (direction CT_DIR_NODEPORT) with its rev-NAT
 *                index; the kernel then routes it to the backend.
 *   to_netdev:   tc/tcx egress. A reply of such a flow leaving through the
 *                device gets its source rewritten back to the frontend.
 * ClusterIP frontends are not reachable from outside (Cilium: non-routable),
 * unless external_clusterip.
 * A frontend flagged LB_SVC_FLAG_SOURCE_RANGE (loadBalancerSourceRanges)
 * admits only clients in its lb*_source_range prefixes; the others drop.
 * Backends on other nodes (an ipcache entry with a tunnel peer, or no
 * entry at all) also get their source translated (SNAT) to the frontend
 * address and a port of the SNAT range, so that their replies come back
 * through this node: from_netdev then rewrites a reply back to the client
 * (destination) and the frontend (source). Both directions leave through
 * bpf_redirect_neigh (their source is this node's own address, which the
 * stack drops as a martian on input); the replies must arrive on one of
 * the NodePort devices (--devices, or detected). Policy is
 * enforced by the backend's endpoint programs (to_container sees the
 * translated packet from the outside client, or from this node's address
 * when it was SNATed). Drops (and refusals) are reported as the endpoint
 * programs report theirs: counted in the metrics map and written as drop
 * events (netdev_drop). */

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/conntrack.h"
#include "lib/lb.h"
#include "lib/reject.h"
#include "lib/events.h"
#include "lib/policy.h"

char __license[] SEC("license") = "Dual BSD/GPL";

#define CT_DIR_NODEPORT 3

/* external_clusterip is set by the loader with --bpf-lb-external-clusterip
 * (Cilium's): ClusterIP frontends are balanced for traffic from outside
 * too (a router sends the service CIDR to the nodes). */
volatile const __u8 external_clusterip = 0;
#define LB_SVC_EXTERNAL (LB_SVC_FLAG_NODEPORT | LB_SVC_FLAG_EXTERNAL_IP | LB_SVC_FLAG_LOADBALANCER)

/* The SNAT port range (above the NodePort range and the usual ephemeral
 * one's start) and the attempts to find a free port. */
#define SNAT_PORT_MIN 40000
#define SNAT_PORT_SPAN 20000
#define SNAT_TRIES 8

static long (*fib_lookup)(void *ctx, struct bpf_fib_lookup *params, int plen,
			  __u32 flags) = (void *)BPF_FUNC_fib_lookup;
static long (*redirect_neigh)(__u32 ifindex, void *params, int plen,
			      __u64 flags) = (void *)BPF_FUNC_redirect_neigh;

#define DROP_NOT_IN_SRC_RANGE 177 /* loadBalancerSourceRanges do not hold the client (Cilium's number) */

/* netdev_drop reports the drop of f for reason as the endpoint programs
 * report theirs, counted in the metrics map (ingress) and written as a
 * drop event from the client's identity to the destination's (world's
 * when the ipcache does not know them: a frontend's; a backend's after
 * the translation) with no endpoint (0), and returns the drop verdict. A
 * rejected packet (answered with an ICMP error) is reported too. */
static __always_inline int netdev_drop(const struct flow *f, __u8 reason)
{
	metrics_count(reason, DIR_INGRESS, f->len);
	event_emit(f, EVENT_DROP, reason, 0, MATCH_NONE, DIR_INGRESS, 0, ipcache_lookup(f, f->saddr),
		   ipcache_lookup(f, f->daddr));
	return CTX_ACT_DROP;
}

/* redirect_fib sends the packet of f (source: this node's address, which
 * the stack would drop as a martian on input) straight out of the
 * interface the FIB names for its destination, neighbour resolved by the
 * kernel; the stack decides when the FIB has no answer. */
static __always_inline int redirect_fib(struct __sk_buff *ctx, const struct flow *f)
{
	struct bpf_fib_lookup p = { .ifindex = ctx->ingress_ifindex };
	long ret;

	if (f->family == 4) {
		p.family = 2; /* AF_INET */
		p.ipv4_src = f->saddr[0];
		p.ipv4_dst = f->daddr[0];
	} else {
		p.family = 10; /* AF_INET6 */
		__builtin_memcpy(p.ipv6_src, f->saddr, 16);
		__builtin_memcpy(p.ipv6_dst, f->daddr, 16);
	}
	ret = fib_lookup(ctx, &p, sizeof(p), 0);
	if (ret != BPF_FIB_LKUP_RET_SUCCESS && ret != BPF_FIB_LKUP_RET_NO_NEIGH)
		return CTX_ACT_OK;
	return redirect_neigh(p.ifindex, 0, 0, 0);
}

/* backend_is_remote: the ipcache names another node for f's destination
 * (a tunnel peer), or does not know it. */
static __always_inline int backend_is_remote(const struct flow *f)
{
	struct ipcache_key key = { .family = f->family };
	struct ipcache_value *v;

	key.prefixlen = IPCACHE_STATIC_PREFIX + (f->family == 4 ? 32 : 128);
	__builtin_memcpy(key.addr, f->daddr, 16);
	v = map_lookup_elem(&ipcache, &key);
	return !v || v->tunnel_family != 0;
}

/* snat_forward translates the source of f (already DNATed to a remote
 * backend; fe is the frontend address) to fe and a SNAT port, the flow's
 * own when it has one. Returns 0 or a drop reason. */
static __attribute__((noinline)) int snat_forward(struct __sk_buff *ctx, struct flow *f,
						  const __u32 *fe, __u16 rev_nat)
{
	struct snat_key fk = { .sport = f->sport, .dport = f->dport, .proto = f->proto, .family = f->family };
	struct snat_key rk = { .sport = f->dport, .proto = f->proto, .dir = 1, .family = f->family };
	struct snat_value nv = {}, rv = { .port = f->sport, .rev_nat_index = rev_nat };
	struct snat_value *fv;
	int i;

	__builtin_memcpy(fk.saddr, f->saddr, 16);
	__builtin_memcpy(fk.daddr, f->daddr, 16);
	__builtin_memcpy(rk.saddr, f->daddr, 16);
	__builtin_memcpy(rk.daddr, fe, 16);
	__builtin_memcpy(rv.addr, f->saddr, 16);
	__builtin_memcpy(nv.addr, fe, 16);
	fv = map_lookup_elem(&lb_snat, &fk);
	if (fv) {
		nv.port = fv->port;
	} else {
#pragma unroll
		for (i = 0; i < SNAT_TRIES; i++) {
			rk.dport = bpf_htons(SNAT_PORT_MIN + get_prandom_u32() % SNAT_PORT_SPAN);
			if (!map_lookup_elem(&lb_snat, &rk))
				break;
		}
		if (i == SNAT_TRIES)
			return DROP_NAT_NO_MAPPING;
		nv.port = rk.dport;
		if (map_update_elem(&lb_snat, &rk, &rv, BPF_ANY) < 0 ||
		    map_update_elem(&lb_snat, &fk, &nv, BPF_ANY) < 0)
			return DROP_NAT_NO_MAPPING;
	}
	if (lb_rewrite(ctx, f, 0, nv.addr, nv.port) < 0)
		return DROP_CSUM;
	__builtin_memcpy(f->saddr, nv.addr, 16);
	f->sport = nv.port;
	return 0;
}

/* snat_reverse rewrites a reply of a SNATed flow (backend -> frontend
 * address and SNAT port) to go from the frontend to the client; returns
 * whether f was one. */
static __attribute__((noinline)) int snat_reverse(struct __sk_buff *ctx, struct flow *f)
{
	struct snat_key rk = { .sport = f->sport, .dport = f->dport, .proto = f->proto, .dir = 1, .family = f->family };
	struct snat_value *rv;
	__u32 addr[4] = {};
	__be16 port;

	__builtin_memcpy(rk.saddr, f->saddr, 16);
	__builtin_memcpy(rk.daddr, f->daddr, 16);
	rv = map_lookup_elem(&lb_snat, &rk);
	if (!rv)
		return 0;
	if (f->family == 4) {
		struct lb4_rev_nat *r = map_lookup_elem(&lb4_reverse_nat, &rv->rev_nat_index);

		if (!r)
			return 0;
		addr[0] = r->address;
		port = r->port;
	} else {
		struct lb6_rev_nat *r = map_lookup_elem(&lb6_reverse_nat, &rv->rev_nat_index);

		if (!r)
			return 0;
		__builtin_memcpy(addr, r->address, 16);
		port = r->port;
	}
	if (lb_rewrite(ctx, f, 1, rv->addr, rv->port) < 0)
		return 1;
	__builtin_memcpy(f->daddr, rv->addr, 16);
	f->dport = rv->port;
	if (lb_rewrite(ctx, f, 0, addr, port) == 0) {
		__builtin_memcpy(f->saddr, addr, 16);
		f->sport = port;
	}
	return 1;
}

SEC("tc")
int from_netdev(struct __sk_buff *ctx)
{
	struct flow f = {};
	struct lb_service *svc;
	struct revs rev = {};
	__u32 fe[4];
	__u64 now;
	int reason;

	if (parse_packet(ctx, &f) != PARSE_OK || f.frag == FRAG_LATER)
		return CTX_ACT_OK;
	if (f.proto != IPPROTO_TCP && f.proto != IPPROTO_UDP && f.proto != IPPROTO_SCTP)
		return CTX_ACT_OK;
	if (snat_reverse(ctx, &f))
		return redirect_fib(ctx, &f);
	svc = lb_service_get(&f, 0, LB_SCOPE_EXT);
	if (!svc || (!(svc->flags & LB_SVC_EXTERNAL) && !external_clusterip))
		return CTX_ACT_OK;
	/* loadBalancerSourceRanges: every packet, so that a client the
	 * ranges stop admitting loses its established flows too. */
	if ((svc->flags & LB_SVC_FLAG_SOURCE_RANGE) && !lb_src_range_ok(&f, svc->rev_nat_index)) {
		f.lb_rev_nat = svc->rev_nat_index; /* the event names the service */
		return netdev_drop(&f, DROP_NOT_IN_SRC_RANGE);
	}
	__builtin_memcpy(fe, f.daddr, 16);
	now = ktime_get_coarse_ns();
	reason = lb_translate(ctx, &f, svc, 0, now);
	if (reason) {
		netdev_drop(&f, reason);
		if (reason == DROP_NO_SERVICE && service_no_backend_reject)
			return lb_reject_back(ctx, &f, 0); /* back out to the client */
		return CTX_ACT_DROP;
	}
	if (backend_is_remote(&f)) {
		reason = snat_forward(ctx, &f, fe, f.lb_rev_nat);
		return reason ? netdev_drop(&f, reason) : redirect_fib(ctx, &f);
	}
	ct_create(&f, CT_DIR_NODEPORT, 0, 0, rev, now);
	return CTX_ACT_OK;
}

SEC("tc")
int to_netdev(struct __sk_buff *ctx)
{
	struct flow f = {};
	struct flow o = {};
	struct ct_value *v = 0;

	if (parse_packet(ctx, &f) != PARSE_OK || f.frag == FRAG_LATER)
		return CTX_ACT_OK;
	if (f.proto != IPPROTO_TCP && f.proto != IPPROTO_UDP && f.proto != IPPROTO_SCTP)
		return CTX_ACT_OK;
	/* The flow's opening packet: the client to the backend. */
	o.family = f.family;
	o.proto = f.proto;
	__builtin_memcpy(o.saddr, f.daddr, 16);
	__builtin_memcpy(o.daddr, f.saddr, 16);
	o.sport = f.dport;
	o.dport = f.sport;
	o.tcp_flags = f.tcp_flags;
	o.len = f.len;
	if (ct_lookup(&o, CT_DIR_NODEPORT, ktime_get_coarse_ns(), &v) == CT_ESTABLISHED && v &&
	    v->rev_nat_index)
		lb_rev_nat(ctx, &f, v->rev_nat_index);
	return CTX_ACT_OK;
}
