/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Common definitions for apiary's eBPF programs: integer types from the
 * kernel UAPI headers, section and map-definition macros, the helper
 * functions the programs call (by their stable helper numbers), byte-order
 * helpers and the tc return codes. No libbpf headers are needed. */
#ifndef APIARY_COMMON_H
#define APIARY_COMMON_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>

#define SEC(name) __attribute__((section(name), used))
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))

/* BTF-style map definitions, as cilium/ebpf and libbpf read them. */
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define __array(name, val) typeof(val) *name[]

/* Helper functions, called through their UAPI numbers. */
static void *(*map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static long (*map_update_elem)(void *map, const void *key, const void *value,
			       __u64 flags) = (void *)BPF_FUNC_map_update_elem;
static long (*map_delete_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_delete_elem;
/* CLOCK_MONOTONIC_COARSE: a tick's precision is plenty for conntrack
 * lifetimes and it costs a fraction of ktime_get_ns. */
static __u64 (*ktime_get_coarse_ns)(void) = (void *)BPF_FUNC_ktime_get_coarse_ns;
static long (*ringbuf_output)(void *ringbuf, void *data, __u64 size,
			      __u64 flags) = (void *)BPF_FUNC_ringbuf_output;
static long (*redirect)(__u32 ifindex, __u64 flags) = (void *)BPF_FUNC_redirect;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define bpf_htons(x) __builtin_bswap16(x)
#define bpf_ntohs(x) __builtin_bswap16(x)
#define bpf_htonl(x) __builtin_bswap32(x)
#else
#define bpf_htons(x) (x)
#define bpf_ntohs(x) (x)
#define bpf_htonl(x) (x)
#endif

/* Verdicts returned to tc/tcx: TC_ACT_OK passes, TC_ACT_SHOT drops (tcx
 * reads them as TCX_PASS and TCX_DROP). */
#define CTX_ACT_OK TC_ACT_OK
#define CTX_ACT_DROP TC_ACT_SHOT

/* Directions, seen from the endpoint. Values match the Go side's
 * policy.Direction (ingress 0, egress 1). */
#define DIR_INGRESS 0
#define DIR_EGRESS 1

/* Reserved identities (policy/identity). */
/* world (2) is never given by the programs: misses are per family. */
#define WORLD_IPV4_ID 9
#define WORLD_IPV6_ID 10

#endif /* APIARY_COMMON_H */
