//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The floor of the datapath benchmark: the least an endpoint program
 * must do for a packet, namely the same parse as apiary's programs
 * (bpf/lib/parse.h), one LPM lookup (the ipcache) and one hash lookup
 * (conntrack). It decides nothing. floor_ct_only is the same without the
 * LPM lookup once the hash lookup hits. */

#include "common.h"
#include "parse.h"

char __license[] SEC("license") = "Dual BSD/GPL";

/* Same layouts as struct ipcache_key / ct4_key in bpf/lib/maps.h. */
struct floor_lpm_key {
	__u32 prefixlen;
	__u8 pad[3];
	__u8 family;
	__u32 addr[4];
};

struct floor_ct_key {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 direction;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct floor_lpm_key);
	__type(value, __u64);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} floor_lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct floor_ct_key);
	__type(value, __u64);
	__uint(max_entries, 1024);
} floor_hash SEC(".maps");

/* floor_parse fills the hash and LPM keys of the packet; 0 when it is not
 * an IPv4 flow. */
static __always_inline int floor_parse(struct __sk_buff *ctx, struct floor_ct_key *ck,
				       struct floor_lpm_key *lk)
{
	struct flow f = {};

	if (parse_packet(ctx, &f) != PARSE_OK || f.family != 4)
		return 0;
	ck->saddr = f.saddr[0];
	ck->daddr = f.daddr[0];
	ck->sport = f.sport;
	ck->dport = f.dport;
	ck->proto = f.proto;
	ck->direction = DIR_EGRESS;
	lk->addr[0] = f.daddr[0];
	return 1;
}

/* floor_prog is the datapath benchmark's floor, for new and established
 * flows alike: parse, one hash lookup (conntrack), one LPM lookup
 * (ipcache). */
SEC("tc")
int floor_prog(struct __sk_buff *ctx)
{
	struct floor_ct_key ck = {};
	struct floor_lpm_key lk = { .prefixlen = 64, .family = 4 };
	int tracked;

	if (!floor_parse(ctx, &ck, &lk))
		return CTX_ACT_OK;
	tracked = map_lookup_elem(&floor_hash, &ck) != 0;
	/* An opaque scalar: keeps clang from or-ing the two pointers. */
	asm volatile("" : "+r"(tracked));
	if (map_lookup_elem(&floor_lpm, &lk))
		return CTX_ACT_OK;
	return tracked ? CTX_ACT_OK : CTX_ACT_DROP;
}

/* floor_ct_only stops after a hash hit: parse and one hash lookup for a
 * tracked flow. A stricter reference for the established case (apiary's
 * programs skip the ipcache for tracked flows too); bpfbench prints it
 * next to floor_prog. */
SEC("tc")
int floor_ct_only(struct __sk_buff *ctx)
{
	struct floor_ct_key ck = {};
	struct floor_lpm_key lk = { .prefixlen = 64, .family = 4 };

	if (!floor_parse(ctx, &ck, &lk))
		return CTX_ACT_OK;
	if (map_lookup_elem(&floor_hash, &ck))
		return CTX_ACT_OK;
	if (map_lookup_elem(&floor_lpm, &lk))
		return CTX_ACT_OK;
	return CTX_ACT_DROP;
}
