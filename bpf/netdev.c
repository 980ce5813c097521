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
 * Backends on other nodes would need SNAT so that replies come back
 * through this node: not done; the control plane gives these frontends
 * local backends (externalTrafficPolicy=Local) or routes must bring the
 * replies back. Policy is enforced by the backend's endpoint programs
 * (to_container sees the translated packet from the outside client). */

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/conntrack.h"
#include "lib/lb.h"

char __license[] SEC("license") = "Dual BSD/GPL";

#define CT_DIR_NODEPORT 3
#define LB_SVC_EXTERNAL (LB_SVC_FLAG_NODEPORT | LB_SVC_FLAG_EXTERNAL_IP | LB_SVC_FLAG_LOADBALANCER)

SEC("tc")
int from_netdev(struct __sk_buff *ctx)
{
	struct flow f = {};
	struct lb_service *svc;
	struct revs rev = {};
	__u64 now;

	if (parse_packet(ctx, &f) != PARSE_OK || f.frag == FRAG_LATER)
		return CTX_ACT_OK;
	if (f.proto != IPPROTO_TCP && f.proto != IPPROTO_UDP)
		return CTX_ACT_OK;
	svc = lb_service_get(&f, 0);
	if (!svc || !(svc->flags & LB_SVC_EXTERNAL))
		return CTX_ACT_OK;
	now = ktime_get_coarse_ns();
	if (lb_translate(ctx, &f, svc, 0, now))
		return CTX_ACT_DROP;
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
