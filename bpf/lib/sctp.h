/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The CRC32c of an SCTP packet after a rewrite of one of its ports.
 *
 * SCTP's checksum covers the common header and the chunks, not the IP
 * addresses: a rewritten address leaves it right, a rewritten port does
 * not. CRC32c is linear, so the update is the CRC (initial value 0, no
 * inversion) of the two bytes' difference followed by the zero bytes to
 * the packet's end: the CRC of the two bytes, times x^(8z) modulo the
 * polynomial for z zero bytes, z = lo + 256 hi, whose factors
 * lib/sctp_crc.h tables (bpf/internal/sctpcrc computes them and tests
 * this arithmetic against Go's hash/crc32). The checksum field holds the
 * inverted register little-endian: it changes by the same xor.
 *
 * A packet whose checksum the stack computes later (CHECKSUM_PARTIAL: an
 * SCTP socket on a device that offloads it, such as a veth) gets its
 * field recomputed over the rewritten bytes anyway: the update is then
 * harmless. */
#ifndef APIARY_SCTP_H
#define APIARY_SCTP_H

#include "common.h"
#include "sctp_crc.h"

#define SCTP_CRC32C_POLY 0x82f63b78

/* sctp_bit returns bit 0 of v. The empty asm hides that it is 0 or 1:
 * the compiler would make the product below a select, which BPF lowers
 * to a branch (48 in a row are 2^48 paths to the verifier). A product,
 * not an and with a 0 or all-ones mask: the verifier splits its state on
 * such masks. */
static __always_inline __u32 sctp_bit(__u32 v)
{
	__u32 b = v & 1;

	asm volatile("" : "+r"(b));
	return b;
}

/* sctp_crc_step multiplies r by x modulo the polynomial. */
static __always_inline __u32 sctp_crc_step(__u32 r)
{
	return (r >> 1) ^ (SCTP_CRC32C_POLY * sctp_bit(r));
}

/* sctp_crc_mul returns a*b modulo the polynomial (reflected: bit 31 is
 * x^0), without branches. */
static __always_inline __u32 sctp_crc_mul(__u32 a, __u32 b)
{
	__u32 p = 0;
	int i;

#pragma unroll
	for (i = 0; i < 32; i++) {
		p ^= b * sctp_bit(a >> (31 - i));
		b = sctp_crc_step(b);
	}
	return p;
}

/* sctp_crc_delta returns what changing 16 bits of an SCTP packet by diff
 * (old xor new as the two bytes lie in memory, read little-endian), with
 * zeros bytes after them to the packet's end, xors into its checksum
 * field (read little-endian). A global function: verified once, called
 * only for SCTP packets whose port is rewritten. */
__attribute__((noinline)) __u32 sctp_crc_delta(__u32 diff, __u32 zeros)
{
	__u32 r = diff & 0xffff;
	int i;

#pragma unroll
	for (i = 0; i < 16; i++)
		r = sctp_crc_step(r);
	r = sctp_crc_mul(sctp_x8_lo[zeros & 0xff], r);
	return sctp_crc_mul(sctp_x8_hi[(zeros >> 8) & 0xff], r);
}

#endif
