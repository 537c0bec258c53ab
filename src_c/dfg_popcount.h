/*
 * dfg_popcount.h - population count with a runtime choice of instruction.
 *
 * The build never uses -march=native, so a plain __builtin_popcountll compiles to
 * a portable bit-twiddling sequence on x86-64. Kernels that count bits are
 * therefore compiled twice through DFG_WITH_POPCNT: once generic and once with
 * the POPCNT instruction enabled, and dfg_cpu_has_popcnt() picks one at run time.
 * On other architectures (aarch64 has CNT in its baseline) the generic version is
 * already the hardware instruction.
 */
#ifndef DFG_POPCOUNT_H
#define DFG_POPCOUNT_H

#include <stdint.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define DFG_POPCNT_DISPATCH 1
#define DFG_TARGET_POPCNT __attribute__((target("popcnt")))
#else
#define DFG_POPCNT_DISPATCH 0
#define DFG_TARGET_POPCNT
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DFG_ALWAYS_INLINE static inline __attribute__((always_inline))
#define dfg_popcount64(x) ((int64_t)__builtin_popcountll(x))
#else
#define DFG_ALWAYS_INLINE static inline
static inline int64_t dfg_popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int64_t)((x * 0x0101010101010101ULL) >> 56);
}
#endif

/* 1 when the hardware popcount kernels are used on this CPU, else 0. */
int dfg_cpu_has_popcnt(void);

#endif
