//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Cilium's own endpoint program as the peer of cmd/bpfbench: bpf_lxc.c of
 * the cilium module (hack/bench/go.mod), built inside Cilium's BPF test
 * framework (bpf/tests: common.h, lib/bpf_lxc.h) for an IPv4 endpoint
 * 192.168.0.1. The setup program adds what the benchmark's flows need:
 * ipcache entries for the peers 192.168.0.2 and 192.168.0.3 (identity
 * 2001), egress allow entries for that identity on TCP 80 and UDP 53, and
 * the services the ClusterIP rows use, as apiary's bench writes them into
 * apiary's maps: 172.16.10.1:80/TCP and 172.16.10.1:53/UDP, each with the
 * two peers as backends (per-packet LB in bpf_lxc, no socket LB). The
 * benchmark then runs cil_from_container itself. */

#include <bpf/ctx/skb.h>
#include "common.h"
#include "pktgen.h"

#define ENABLE_IPV4

#include "lib/bpf_lxc.h"

ASSIGN_CONFIG(union v4addr, endpoint_ipv4, { .be32 = v4_pod_one })

#include "lib/policy.h"
#include "lib/ipcache.h"
#include "lib/lb.h"

#define PEER_IDENTITY 2001

SETUP("tc", "apiary_bench")
int apiary_bench_setup(struct __ctx_buff *ctx __maybe_unused)
{
	ipcache_v4_add_entry(v4_pod_two, 0, PEER_IDENTITY, 0, 0);
	ipcache_v4_add_entry(v4_pod_three, 0, PEER_IDENTITY, 0, 0);
	policy_add_egress_allow_l3_l4_entry(PEER_IDENTITY, IPPROTO_TCP, __bpf_htons(80), 0);
	policy_add_egress_allow_l3_l4_entry(PEER_IDENTITY, IPPROTO_UDP, __bpf_htons(53), 0);
	lb_v4_add_service(v4_svc_one, __bpf_htons(80), IPPROTO_TCP, 2, 1);
	lb_v4_add_backend(v4_svc_one, __bpf_htons(80), 1, 1, v4_pod_two, __bpf_htons(80), IPPROTO_TCP, 0);
	lb_v4_add_backend(v4_svc_one, __bpf_htons(80), 2, 2, v4_pod_three, __bpf_htons(80), IPPROTO_TCP, 0);
	lb_v4_add_service(v4_svc_one, __bpf_htons(53), IPPROTO_UDP, 2, 2);
	lb_v4_add_backend(v4_svc_one, __bpf_htons(53), 1, 3, v4_pod_two, __bpf_htons(53), IPPROTO_UDP, 0);
	lb_v4_add_backend(v4_svc_one, __bpf_htons(53), 2, 4, v4_pod_three, __bpf_htons(53), IPPROTO_UDP, 0);
	return CTX_ACT_OK;
}
