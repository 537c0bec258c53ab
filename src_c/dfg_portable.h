/*
 * dfg_portable.h - what the kernels need from the compiler beyond C99, in one place:
 * forced inlining, per-function instruction sets, bit counting and prefetching.
 *
 * The build never uses -march=native, so a plain __builtin_popcountll compiles to
 * a portable bit-twiddling sequence on x86-64. Kernels that count bits are
 * therefore compiled twice: once generic and once inside a DFG_TARGET_POPCNT
 * function, and dfg_cpu_has_popcnt() (dfg_cpu.h) picks one at run time. The same
 * scheme gives the AVX2 / AVX-512 kernels. On other architectures (aarch64 has CNT
 * in its baseline) the generic version is already the hardware instruction.
 */
#ifndef DFG_PORTABLE_H
#define DFG_PORTABLE_H

#include <stdint.h>

/* x86 with GCC or clang: functions can be compiled for instruction sets beyond the
   build's baseline, and the CPU read at run time to choose among them. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define DFG_X86_DISPATCH 1
#define DFG_TARGET(isa) __attribute__((target(isa)))
#else
#define DFG_X86_DISPATCH 0
#define DFG_TARGET(isa)
#endif
#define DFG_TARGET_POPCNT DFG_TARGET("popcnt")

#if defined(__GNUC__) || defined(__clang__)
/* Inlined even into a DFG_TARGET function, so that one body compiles for every target. */
#define DFG_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define DFG_ALWAYS_INLINE static __forceinline
#else
#define DFG_ALWAYS_INLINE static inline
#endif

/* Set bits of x. */
#if defined(__GNUC__) || defined(__clang__)
#define dfg_popcount64(x) ((int64_t)__builtin_popcountll(x))
#else
/* MSVC's __popcnt64 is the POPCNT instruction itself, which older x86-64 CPUs lack. */
static inline int64_t dfg_popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int64_t)((x * 0x0101010101010101ULL) >> 56);
}
#endif

/* Index of the lowest set bit of x; x must not be 0. */
#if defined(__GNUC__) || defined(__clang__)
#define dfg_ctz64(x) __builtin_ctzll(x)
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
#include <intrin.h>
static __forceinline int dfg_ctz64(uint64_t x) {
    unsigned long index;
    _BitScanForward64(&index, x);
    return (int)index;
}
#else
static inline int dfg_ctz64(uint64_t x) {
    /* de Bruijn: x & -x isolates the lowest bit, the product's top 6 bits name it */
    static const int position[64] = {
        0,  1,  48, 2,  57, 49, 28, 3,  61, 58, 50, 42, 38, 29, 17, 4,
        62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
        63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
        46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,  6};
    return position[((x & (0 - x)) * 0x03F79D71B4CB0A89ULL) >> 58];
}
#endif

/* A hint to fetch the cache line at p; nothing where the compiler has no such hint. */
#if defined(__GNUC__) || defined(__clang__)
#define dfg_prefetch(p) __builtin_prefetch(p)
#else
#define dfg_prefetch(p) ((void)(p))
#endif

/* Rules read a row's features out of order, so the hardware prefetcher sees
   scattered accesses: fetch the row 8 ahead (all its cache lines) explicitly. */
#define DFG_PREFETCH_ROW(X, n, n_samples, n_features) do {                          \
        if ((n) + 8 < (n_samples)) {                                              \
            const char *ahead_ = (const char *)((X) + ((n) + 8) * (n_features));   \
            for (int64_t o_ = 0; o_ < (n_features) * (int64_t)sizeof(double); o_ += 64) \
                dfg_prefetch(ahead_ + o_);                                         \
        }                                                                          \
    } while (0)

#endif
