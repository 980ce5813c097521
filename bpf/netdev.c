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
 * ClusterIP frontends are not reachable from outside (Cilium: non-routable).
 * IPv4 backends on other nodes (an ipcache entry with a tunnel peer, or no
 * entry at all) also get their source translated (SNAT) to the frontend
 * address and a port of the SNAT range, so that their replies come back
 * through this node: from_netdev then rewrites a reply back to the client
 * (destination) and the frontend (source). Both directions leave through
 * bpf_redirect_neigh (their source is this node's own address, which the
 * stack drops as a martian on input); the replies must arrive on a device
 * of --devices.
 * (IPv6 backends on other nodes: DNAT only, not done.) Policy is
 * enforced by the backend's endpoint programs (to_container sees the
 * translated packet from the outside client, or from this node's address
 * when it was SNATed). */

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/conntrack.h"
#include "lib/lb.h"

char __license[] SEC("license") = "Dual BSD/GPL";

#define CT_DIR_NODEPORT 3
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

/* redirect4 sends the packet (source: this node's address, which the
 * stack would drop as a martian on input) straight out of the interface
 * the FIB names for daddr, neighbour resolved by the kernel; the stack
 * decides when the FIB has no answer. */
static __always_inline int redirect4(struct __sk_buff *ctx, __be32 saddr, __be32 daddr)
{
	struct bpf_fib_lookup p = {
		.family = 2, /* AF_INET */
		.ipv4_src = saddr,
		.ipv4_dst = daddr,
		.ifindex = ctx->ingress_ifindex,
	};
	long ret = fib_lookup(ctx, &p, sizeof(p), 0);

	if (ret != BPF_FIB_LKUP_RET_SUCCESS && ret != BPF_FIB_LKUP_RET_NO_NEIGH)
		return CTX_ACT_OK;
	return redirect_neigh(p.ifindex, 0, 0, 0);
}

/* backend_is_remote: the ipcache names another node for addr (a tunnel
 * peer), or does not know addr. */
static __always_inline int backend_is_remote(__be32 addr)
{
	struct ipcache_key key = { .prefixlen = IPCACHE_STATIC_PREFIX + 32, .family = 4 };
	struct ipcache_value *v;

	key.addr[0] = addr;
	v = map_lookup_elem(&ipcache, &key);
	return !v || v->tunnel_family != 0;
}

/* snat4_forward translates the source of f (already DNATed to a remote
 * backend; fe is the frontend address) to fe and a SNAT port, the flow's
 * own when it has one. Returns 0 or a drop reason. */
static __attribute__((noinline)) int snat4_forward(struct __sk_buff *ctx, struct flow *f, __be32 fe,
						   __u16 rev_nat)
{
	struct snat4_key fk = {
		.saddr = f->saddr[0], .daddr = f->daddr[0], .sport = f->sport, .dport = f->dport,
		.proto = f->proto,
	};
	struct snat4_key rk = { .saddr = f->daddr[0], .daddr = fe, .sport = f->dport, .proto = f->proto, .dir = 1 };
	struct snat4_value *fv = map_lookup_elem(&lb_snat4, &fk);
	struct snat4_value nv = { .addr = fe }, rv = { .addr = f->saddr[0], .port = f->sport, .rev_nat_index = rev_nat };
	__u32 addr[4] = { fe };
	int i;

	if (fv) {
		nv = *fv;
	} else {
#pragma unroll
		for (i = 0; i < SNAT_TRIES; i++) {
			rk.dport = bpf_htons(SNAT_PORT_MIN + get_prandom_u32() % SNAT_PORT_SPAN);
			if (!map_lookup_elem(&lb_snat4, &rk))
				break;
		}
		if (i == SNAT_TRIES)
			return DROP_NO_SERVICE;
		nv.port = rk.dport;
		if (map_update_elem(&lb_snat4, &rk, &rv, BPF_ANY) < 0 ||
		    map_update_elem(&lb_snat4, &fk, &nv, BPF_ANY) < 0)
			return DROP_NO_SERVICE;
	}
	if (lb_rewrite(ctx, f, 0, addr, nv.port) < 0)
		return DROP_CSUM;
	return 0;
}

/* snat4_reverse rewrites a reply of a SNATed flow (backend -> frontend
 * address and SNAT port) to go from the frontend to the client; returns
 * whether f was one. */
static __attribute__((noinline)) int snat4_reverse(struct __sk_buff *ctx, struct flow *f)
{
	struct snat4_key rk = {
		.saddr = f->saddr[0], .daddr = f->daddr[0], .sport = f->sport, .dport = f->dport,
		.proto = f->proto, .dir = 1,
	};
	struct snat4_value *rv = map_lookup_elem(&lb_snat4, &rk);
	struct lb4_rev_nat *r;
	__u32 addr[4] = {};
	__be16 cport;

	if (!rv)
		return 0;
	r = map_lookup_elem(&lb4_reverse_nat, &rv->rev_nat_index);
	if (!r)
		return 0;
	addr[0] = rv->addr;
	cport = rv->port;
	if (lb_rewrite(ctx, f, 1, addr, cport) < 0)
		return 1;
	f->daddr[0] = addr[0];
	f->dport = cport;
	addr[0] = r->address;
	if (lb_rewrite(ctx, f, 0, addr, r->port) == 0) {
		f->saddr[0] = addr[0];
		f->sport = r->port;
	}
	return 1;
}

SEC("tc")
int from_netdev(struct __sk_buff *ctx)
{
	struct flow f = {};
	struct lb_service *svc;
	struct revs rev = {};
	__be32 fe;
	__u64 now;

	if (parse_packet(ctx, &f) != PARSE_OK || f.frag == FRAG_LATER)
		return CTX_ACT_OK;
	if (f.proto != IPPROTO_TCP && f.proto != IPPROTO_UDP)
		return CTX_ACT_OK;
	if (f.family == 4 && snat4_reverse(ctx, &f))
		return redirect4(ctx, f.saddr[0], f.daddr[0]);
	svc = lb_service_get(&f, 0);
	if (!svc || !(svc->flags & LB_SVC_EXTERNAL))
		return CTX_ACT_OK;
	fe = f.daddr[0];
	now = ktime_get_coarse_ns();
	if (lb_translate(ctx, &f, svc, 0, now))
		return CTX_ACT_DROP;
	if (f.family == 4 && backend_is_remote(f.daddr[0]))
		return snat4_forward(ctx, &f, fe, f.lb_rev_nat) ? CTX_ACT_DROP :
								   redirect4(ctx, fe, f.daddr[0]);
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
	if (f.proto != IPPROTO_TCP && f.proto != IPPROTO_UDP)
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
