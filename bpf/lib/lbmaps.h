/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The load-balancing maps (services in the datapath), their key and value
 * layouts; the Go side is datapath/maps/lbmap, which a test compares with
 * the bpf2go-generated types. Shared maps, pinned under the bpf root:
 * lb4_services, lb6_services, lb4_backends, lb6_backends, lb4_reverse_nat,
 * lb6_reverse_nat, lb_affinity, lb_affinity_match. The layouts follow
 * Cilium's lb4_service / lb4_backend / lb4_reverse_nat (not byte for byte).
 *
 * lb4_services / lb6_services: hash, frontend -> service.
 * key:   the frontend address and port (network byte order), the backend
 *        slot (0: the service's master entry; 1..count: its active
 *        backends), the L4 protocol, the scope (LB_SCOPE_*), 2 padding
 *        bytes.
 * value: backend_id (slots only), affinity_timeout (master only: seconds
 *        of ClientIP session affinity), count (master: number of active
 *        backends, slots 1..count), rev_nat_index (the service id: the
 *        reverse-NAT entry and the affinity scope), flags (LB_SVC_FLAG_*),
 *        the master entry's scope (its key's), 2 padding bytes.
 * The agent writes a service's backends and slots before its master
 * entry's count, and lowers the count before it removes slots, so the
 * programs never see a slot that is not written.
 *
 * lb4_backends / lb6_backends: hash, backend id -> backend address, port,
 *        protocol, state (LB_BACKEND_*), cluster id. One id space for both
 *        families; a backend shared between services is written once.
 * lb4_reverse_nat / lb6_reverse_nat: hash, rev_nat_index -> the frontend
 *        address and port a reply's source is rewritten to.
 * lb_affinity: LRU hash, (client address, family, rev_nat_index) -> the
 *        backend the client last used and when (CLOCK_MONOTONIC_COARSE ns).
 * lb_affinity_match: hash, (backend id, rev_nat_index) -> 1 while the
 *        backend is one of that service's active backends (services with
 *        session affinity only), so a remembered backend that left the
 *        service or is terminating is not reused.
 * lb_reverse_sk: LRU hash, (socket cookie, backend address and port,
 *        family) -> the frontend the socket asked for: the socket-level
 *        balancer (sock.c) rewrites a datagram's source and the peer name
 *        back with it.
 * lb_snat: LRU hash, the SNAT of NodePort flows to backends on other
 *        nodes (netdev.c).
 * lb4_source_range / lb6_source_range: LPM trie, (rev_nat_index, client
 *        prefix) -> 1: the clients from outside that may reach a frontend
 *        flagged LB_SVC_FLAG_SOURCE_RANGE (loadBalancerSourceRanges, as
 *        Cilium's lb4_source_range); netdev.c drops the others. */
#ifndef APIARY_LBMAPS_H
#define APIARY_LBMAPS_H

#include "common.h"

struct lb4_key {
	__be32 address;
	__be16 dport;
	__u16 backend_slot;
	__u8 proto;
	__u8 scope; /* LB_SCOPE_* */
	__u8 pad[2];
};

struct lb6_key {
	__u32 address[4];
	__be16 dport;
	__u16 backend_slot;
	__u8 proto;
	__u8 scope;
	__u8 pad[2];
};

/* Lookup scopes (Cilium's LB_LOOKUP_SCOPE_*): a frontend flagged
 * LB_SVC_FLAG_TWO_SCOPES (externalTrafficPolicy Local) has a second entry
 * of the internal scope, which traffic from inside the cluster uses. */
#define LB_SCOPE_EXT 0
#define LB_SCOPE_INT 1

struct lb_service {
	__u32 backend_id;
	__u32 affinity_timeout;
	__u16 count;
	__u16 rev_nat_index;
	__u8 flags;
	__u8 scope; /* master entry: its key's scope (LB_SCOPE_*) */
	__u8 pad[2];
};

#define LB_SVC_FLAG_AFFINITY 0x01     /* sessionAffinity: ClientIP */
#define LB_SVC_FLAG_LOCAL 0x02        /* traffic policy Local */
#define LB_SVC_FLAG_NODEPORT 0x04     /* type NodePort */
#define LB_SVC_FLAG_EXTERNAL_IP 0x08  /* an external IP */
#define LB_SVC_FLAG_LOADBALANCER 0x10 /* a LoadBalancer ingress IP */
#define LB_SVC_FLAG_SOURCE_RANGE 0x20 /* clients from outside limited (lb*_source_range) */
#define LB_SVC_FLAG_TWO_SCOPES 0x40   /* an internal-scope entry exists too */
#define LB_SVC_FLAG_HOSTPORT 0x80     /* a pod's hostPort (with LB_SVC_FLAG_NODEPORT) */

struct lb4_backend {
	__be32 address;
	__be16 port;
	__u8 proto;
	__u8 state;
	__u32 cluster_id;
};

struct lb6_backend {
	__u32 address[4];
	__be16 port;
	__u8 proto;
	__u8 state;
	__u32 cluster_id;
};

#define LB_BACKEND_ACTIVE 0
#define LB_BACKEND_TERMINATING 1
#define LB_BACKEND_QUARANTINED 2

struct lb4_rev_nat {
	__be32 address;
	__be16 port;
	__u16 pad;
};

struct lb6_rev_nat {
	__u32 address[4];
	__be16 port;
	__u16 pad;
};

struct lb_affinity_key {
	__u32 client[4];
	__u16 rev_nat_index;
	__u8 family;
	__u8 pad;
};

struct lb_affinity_value {
	__u64 last_used;
	__u32 backend_id;
	__u32 pad;
};

struct lb_affinity_match_key {
	__u32 backend_id;
	__u16 rev_nat_index;
	__u16 pad;
};

struct lb_sk_key {
	__u64 cookie;
	__u32 address[4];
	__be16 port;
	__u8 family;
	__u8 pad;
	__u32 pad2;
};

struct lb_sk_value {
	__u32 address[4];
	__be16 port;
	__u16 rev_nat_index;
	__u32 pad;
};

#define LB_SERVICES_MAX_ENTRIES 65536
#define LB_BACKENDS_MAX_ENTRIES 65536
#define LB_REV_NAT_MAX_ENTRIES 65536
#define LB_AFFINITY_MAX_ENTRIES 65536

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct lb4_key);
	__type(value, struct lb_service);
	__uint(max_entries, LB_SERVICES_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb4_services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct lb6_key);
	__type(value, struct lb_service);
	__uint(max_entries, LB_SERVICES_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb6_services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct lb4_backend);
	__uint(max_entries, LB_BACKENDS_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb4_backends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct lb6_backend);
	__uint(max_entries, LB_BACKENDS_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb6_backends SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u16);
	__type(value, struct lb4_rev_nat);
	__uint(max_entries, LB_REV_NAT_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb4_reverse_nat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u16);
	__type(value, struct lb6_rev_nat);
	__uint(max_entries, LB_REV_NAT_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb6_reverse_nat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct lb_affinity_key);
	__type(value, struct lb_affinity_value);
	__uint(max_entries, LB_AFFINITY_MAX_ENTRIES);
} lb_affinity SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct lb_affinity_match_key);
	__type(value, __u8);
	__uint(max_entries, LB_AFFINITY_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb_affinity_match SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct lb_sk_key);
	__type(value, struct lb_sk_value);
	__uint(max_entries, LB_AFFINITY_MAX_ENTRIES);
} lb_reverse_sk SEC(".maps");

/* lb_snat: LRU hash of the SNAT of NodePort flows to backends on other
 * nodes (netdev.c). Addresses in 16 bytes (IPv4 in the first 4).
 * dir 0: (client, backend, client port, backend port) -> the frontend
 *        address and the SNAT port;
 * dir 1: (backend, frontend address, backend port, SNAT port) -> the
 *        client address and port, and the rev-NAT index. */
struct snat_key {
	__u32 saddr[4];
	__u32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 dir;
	__u8 family;
	__u8 pad;
};

struct snat_value {
	__u32 addr[4];
	__be16 port;
	__u16 rev_nat_index;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct snat_key);
	__type(value, struct snat_value);
	__uint(max_entries, 65536);
} lb_snat SEC(".maps");

/* The source-range keys: prefixlen counts the rev-NAT index and the pad
 * (32 bits, always matched whole) and the client prefix. */
struct lb4_src_range_key {
	__u32 prefixlen;
	__u16 rev_nat_index;
	__u16 pad;
	__be32 address;
};

struct lb6_src_range_key {
	__u32 prefixlen;
	__u16 rev_nat_index;
	__u16 pad;
	__u32 address[4];
};

#define LB_SRC_RANGE_MAX_ENTRIES 65536

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct lb4_src_range_key);
	__type(value, __u8);
	__uint(max_entries, LB_SRC_RANGE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb4_source_range SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct lb6_src_range_key);
	__type(value, __u8);
	__uint(max_entries, LB_SRC_RANGE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} lb6_source_range SEC(".maps");

#endif /* APIARY_LBMAPS_H */
