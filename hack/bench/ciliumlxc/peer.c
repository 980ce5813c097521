//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Cilium's own endpoint program as the peer of cmd/bpfbench: bpf_lxc.c of
 * the cilium module (hack/bench/go.mod), built inside Cilium's BPF test
 * framework (bpf/tests: common.h, lib/bpf_lxc.h) for an IPv4 endpoint
 * 192.168.0.1. The setup program adds what the benchmark's flow needs:
 * an ipcache entry for the peer 192.168.0.2 (identity 2001) and an egress
 * allow entry for it on TCP 80. The benchmark then runs
 * cil_from_container itself. */

#include <bpf/ctx/skb.h>
#include "common.h"
#include "pktgen.h"

#define ENABLE_IPV4

#include "lib/bpf_lxc.h"

ASSIGN_CONFIG(union v4addr, endpoint_ipv4, { .be32 = v4_pod_one })

#include "lib/policy.h"
#include "lib/ipcache.h"

#define PEER_IDENTITY 2001

SETUP("tc", "apiary_bench")
int apiary_bench_setup(struct __ctx_buff *ctx __maybe_unused)
{
	ipcache_v4_add_entry(v4_pod_two, 0, PEER_IDENTITY, 0, 0);
	policy_add_egress_allow_l3_l4_entry(PEER_IDENTITY, IPPROTO_TCP, __bpf_htons(80), 0);
	return CTX_ACT_OK;
}
