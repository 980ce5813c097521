//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's socket terminator (as Cilium's bpf_sock_term.c): socket
 * iterators the agent runs in the node's network namespace when a backend
 * leaves the load-balancing maps. A socket connected to that backend by
 * the socket-level balancer (sock.c: it has an lb_reverse_sk entry for the
 * backend under its cookie) is destroyed (bpf_sock_destroy): its
 * application gets ECONNABORTED at once and connects again, through the
 * frontend, to a backend that exists, instead of sending into a void until
 * it gives up (a connected UDP socket never does). Sockets connected to the
 * backend's address directly, and unconnected UDP sockets (their next
 * datagram to the frontend is balanced again), are left alone. Each
 * destroyed socket's cookie is written to the iterator's output, so the
 * agent counts them. */

#include "lib/common.h"
#include "lib/lbmaps.h"

char __license[] SEC("license") = "Dual BSD/GPL";

/* term_filter is the backend whose sockets go: the agent sets it
 * before each run (address in 16 bytes, IPv4 in the first 4; port in
 * network byte order; family 4 or 6). */
struct sock_term_filter {
	__u32 address[4];
	__be16 port;
	__u8 family;
	__u8 pad;
};

struct sock_term_filter term_filter;

/* The kernel types the iterators read, as much of them as is used:
 * relocated by name against the kernel's BTF (CO-RE). */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__udp {
	struct bpf_iter_meta *meta;
	void *udp_sk;
} __attribute__((preserve_access_index));

struct bpf_iter__tcp {
	struct bpf_iter_meta *meta;
	void *sk_common;
} __attribute__((preserve_access_index));

struct in6_addr_words {
	union {
		__u32 u6_addr32[4];
	} in6_u;
} __attribute__((preserve_access_index));

struct sock_common {
	union {
		struct {
			__be32 skc_daddr;
			__be32 skc_rcv_saddr;
		};
	};
	union {
		struct {
			__be16 skc_dport;
			__u16 skc_num;
		};
	};
	unsigned short skc_family;
	struct in6_addr_words skc_v6_daddr;
} __attribute__((preserve_access_index));

extern int bpf_sock_destroy(struct sock_common *sk) __attribute__((section(".ksyms")));
static __u64 (*iter_socket_cookie)(void *sk) = (void *)BPF_FUNC_get_socket_cookie;
static long (*seq_write)(struct seq_file *m, const void *data, __u32 len) = (void *)BPF_FUNC_seq_write;

#define TERM_AF_INET 2
#define TERM_AF_INET6 10

/* term_matches reports whether socket sk is connected to the filter's
 * backend through the socket-level balancer. */
static __always_inline int term_matches(struct sock_common *sk)
{
	struct lb_sk_key key = { .family = term_filter.family, .port = term_filter.port };
	__u16 family = sk->skc_family;

	if (sk->skc_dport != term_filter.port)
		return 0;
	if (term_filter.family == 4) {
		/* An IPv6 socket connected to an IPv4-mapped address holds
		 * the IPv4 address here too. */
		if ((family != TERM_AF_INET && family != TERM_AF_INET6) ||
		    sk->skc_daddr != term_filter.address[0])
			return 0;
	} else {
		if (family != TERM_AF_INET6 ||
		    sk->skc_v6_daddr.in6_u.u6_addr32[0] != term_filter.address[0] ||
		    sk->skc_v6_daddr.in6_u.u6_addr32[1] != term_filter.address[1] ||
		    sk->skc_v6_daddr.in6_u.u6_addr32[2] != term_filter.address[2] ||
		    sk->skc_v6_daddr.in6_u.u6_addr32[3] != term_filter.address[3])
			return 0;
	}
	key.cookie = iter_socket_cookie(sk);
	__builtin_memcpy(key.address, term_filter.address, sizeof(key.address));
	return map_lookup_elem(&lb_reverse_sk, &key) != 0;
}

/* term destroys sk when it matches and writes its cookie to seq. */
static __always_inline int term(struct bpf_iter_meta *meta, void *sk)
{
	__u64 cookie;

	if (!sk || !term_matches(sk))
		return 0;
	cookie = iter_socket_cookie(sk);
	if (bpf_sock_destroy(sk) == 0)
		seq_write(meta->seq, &cookie, sizeof(cookie));
	return 0;
}

SEC("iter/udp")
int sock_term_udp(struct bpf_iter__udp *ctx) { return term(ctx->meta, ctx->udp_sk); }

SEC("iter/tcp")
int sock_term_tcp(struct bpf_iter__tcp *ctx) { return term(ctx->meta, ctx->sk_common); }
