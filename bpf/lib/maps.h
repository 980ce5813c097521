/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The maps of the endpoint programs, their key and value layouts. The Go
 * side (datapath/maps/<name>) has a struct per key and value with the same
 * layout; a test compares their sizes with the bpf2go-generated types.
 *
 * Shared maps (one per node, pinned under the bpf root by the loader):
 * ipcache, ct4, ct6, endpoints, config, frags, metrics, events.
 * Per-endpoint map: policy (the loader replaces it with the endpoint's
 * pinned policy_<id> map at load time). */
#ifndef APIARY_MAPS_H
#define APIARY_MAPS_H

#include "common.h"

/* ipcache: LPM trie, peer IP prefix -> security identity.
 * key:   prefixlen (bits after the prefixlen field: 32 for pad+family,
 *        plus the IP prefix length), 3 bytes padding, family (4 or 6),
 *        the address (IPv4 in the first 4 bytes).
 * value: identity; the IPsec key index (0: none; not used by the programs
 *        yet); the family of the tunnel peer (0: none, 4 or 6); 2 padding
 *        bytes; the tunnel peer, the node hosting a remote prefix (IPv4 in
 *        the first 4 bytes; in tunnel routing the programs encapsulate to
 *        it, lib/encap.h). */
struct ipcache_key {
	__u32 prefixlen;
	__u8 pad[3];
	__u8 family;
	__u32 addr[4];
};

struct ipcache_value {
	__u32 identity;
	__u8 encrypt_key;
	__u8 tunnel_family;
	__u16 pad;
	__u32 tunnel_peer[4];
};

#define IPCACHE_STATIC_PREFIX 32 /* pad + family */
#define IPCACHE_MAX_ENTRIES 524288

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct ipcache_key);
	__type(value, struct ipcache_value);
	__uint(max_entries, IPCACHE_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} ipcache SEC(".maps");

/* policy: LPM trie per endpoint, the endpoint's resolved policy.
 * key:   prefixlen (40 fixed bits: identity + direction, then 8 for a
 *        specific protocol, then the port prefix length), peer identity
 *        (0 = any peer), direction (0 ingress, 1 egress), protocol (0 =
 *        any; a key with protocol 0 has no port bits), port in network byte
 *        order (for ICMP and ICMPv6 the ICMP type).
 * value: flags (bit 0: deny), the key's prefix length past the 40 fixed
 *        bits (0: any protocol, 8: a protocol and any port, up to 24: a
 *        protocol and a port prefix; it orders matches and names the match
 *        type of verdict events), 6 padding bytes, then packets and bytes
 *        counted by the programs on the first packet of each flow and on
 *        denied packets (the agent writes 0 and ignores them when it diffs
 *        desired against actual). */
struct policy_key {
	__u32 prefixlen;
	__u32 identity;
	__u8 direction;
	__u8 proto;
	__be16 port;
};

struct policy_value {
	__u8 flags;
	__u8 l4_prefixlen;
	__u16 pad1;
	__u32 pad2;
	__u64 packets;
	__u64 bytes;
};

#define POLICY_FLAG_DENY 0x1
#define POLICY_STATIC_PREFIX 40 /* identity + direction */
#define POLICY_FULL_PREFIX 64
#define POLICY_MAX_ENTRIES 16384

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct policy_key);
	__type(value, struct policy_value);
	__uint(max_entries, POLICY_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} policy SEC(".maps");

/* ct4 / ct6: LRU hashes, connection tracking.
 * key:   source and destination address and port of the packet that opened
 *        the flow (network byte order), protocol, direction of the
 *        endpoint that created the entry (0 ingress: made by to_container;
 *        1 egress: made by from_container), 2 padding bytes.
 * value: expiry (CLOCK_MONOTONIC_COARSE ns), the peer's identity, the endpoint
 *        id, TCP flags seen in either direction, entry flags (bit 0:
 *        closing, FIN or RST seen), the endpoint's policy revision and the
 *        ipcache revision the flow was last allowed under (see the
 *        endpoints and config maps), then packets and bytes of the flow's opening direction
 *        (tx) and of its replies (rx), counted per packet; the backend id
 *        and rev-NAT index of a service flow (lib/lb.h, lib/lbmaps.h).
 * Direction 2 (CT_DIR_SERVICE) keys the untranslated tuple of a flow to a
 * service frontend, made by from_container.
 * Both maps have BPF_F_NO_COMMON_LRU: each CPU keeps its own LRU lists,
 * so creating an entry takes no map-wide lock (as Cilium's CT maps). */
struct ct4_key {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 direction;
	__u16 pad;
};

struct ct6_key {
	__u32 saddr[4];
	__u32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 direction;
	__u16 pad;
};

struct ct_value {
	__u64 expires;
	__u32 peer_identity;
	__u16 endpoint_id;
	__u8 tcp_flags;
	__u8 flags;
	__u32 policy_rev;
	__u32 ipcache_rev;
	__u64 tx_packets;
	__u64 tx_bytes;
	__u64 rx_packets;
	__u64 rx_bytes;
	/* lib/lb.h: a service entry (direction CT_DIR_SERVICE) holds the
	 * flow's backend; a translated flow's entry the rev-NAT index its
	 * replies are rewritten with (0: not translated). */
	__u32 backend_id;
	__u16 rev_nat_index;
	__u16 lb_pad;
};

#define CT_FLAG_CLOSING 0x1
/* lib/lb.h: the flow of an endpoint reaching itself through a service
 * (hairpin), as its programs see it: source the service loopback address. */
#define CT_FLAG_LOOPBACK 0x2
#define CT_MAX_ENTRIES 65536

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct ct4_key);
	__type(value, struct ct_value);
	__uint(max_entries, CT_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} ct4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct ct6_key);
	__type(value, struct ct_value);
	__uint(max_entries, CT_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
} ct6 SEC(".maps");

/* endpoints: array indexed by endpoint id, per-endpoint state the agent
 * changes without reloading the endpoint's programs.
 * value: policy_rev, the revision of the endpoint's policy map, which the
 *        agent bumps after every write that changes it; 4 padding bytes.
 * A conntrack entry records the revision its flow was allowed under; a
 * packet of the flow that finds another revision has the flow's policy
 * looked up again (conntrack.h, ct_revalidate in lxc.c). */
struct endpoint_state {
	__u32 policy_rev;
	__u32 pad;
};

#define ENDPOINTS_MAX_ENTRIES 65536

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct endpoint_state);
	__uint(max_entries, ENDPOINTS_MAX_ENTRIES);
} endpoints SEC(".maps");

/* config: array of one entry, node-wide settings the agent changes at run
 * time.
 * value: flags (CONFIG_VERDICT_EVENTS: a monitor client is listening, so
 *        policy verdicts of allowed flows go to the events ring; drops are
 *        reported regardless); ipcache_rev, the revision of the ipcache
 *        map, which the agent bumps after every write to it (a peer's
 *        identity may have changed: conntrack entries of an older revision
 *        are looked up again, like those of an older policy revision). */
struct config_value {
	__u32 flags;
	__u32 ipcache_rev;
};

#define CONFIG_VERDICT_EVENTS 0x1

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct config_value);
	__uint(max_entries, 1);
} config SEC(".maps");

/* frags: LRU hash, the ports of fragmented packets, so that fragments
 * after the first (which carry no L4 header) match the same conntrack
 * entry and policy keys as the first.
 * key:   source and destination address (IPv4 in the first 4 bytes), the
 *        fragment id (IPv4 identification or IPv6 fragment id, network
 *        byte order), protocol, family, 2 padding bytes.
 * value: source and destination port (network byte order), ICMP type, 3
 *        padding bytes. */
struct frag_key {
	__u32 saddr[4];
	__u32 daddr[4];
	__u32 id;
	__u8 proto;
	__u8 family;
	__u16 pad;
};

struct frag_value {
	__be16 sport;
	__be16 dport;
	__u8 icmp_type;
	__u8 pad[3];
};

#define FRAGS_MAX_ENTRIES 8192

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct frag_key);
	__type(value, struct frag_value);
	__uint(max_entries, FRAGS_MAX_ENTRIES);
} frags SEC(".maps");

/* metrics: per-CPU array, packet and byte counters per (reason,
 * direction). Index: reason << 1 | direction; reason 0 is "forwarded",
 * others are the DROP_* reasons of events.h.
 * value: packets, bytes. */
struct metrics_value {
	__u64 packets;
	__u64 bytes;
};

#define METRICS_MAX_ENTRIES 512

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct metrics_value);
	__uint(max_entries, METRICS_MAX_ENTRIES);
} metrics SEC(".maps");

/* events: ring buffer of struct event records (events.h). */
#define EVENTS_SIZE (256 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_SIZE);
} events SEC(".maps");

#endif /* APIARY_MAPS_H */
