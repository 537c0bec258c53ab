#include "dfg_log.h"
#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <string.h>

/* x86-64 only: on 32-bit x86 the scalar code runs on the x87 unit with excess
   precision, and its bits would differ from the vector lanes'. */
#if DFG_X86_DISPATCH && defined(__x86_64__)
#define DFG_LOG_AVX2 1
#endif

/* No a * b + c contracted into an FMA, so that every build makes the same
   operations: setup.py passes -ffp-contract=off, and clang (whose default
   contracts) also honours the pragma; GCC only knows the flag. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* fdlibm e_log.c: ln2 split in two parts and the coefficients of the polynomial */
static const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
static const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                    Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                    Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                    Lg7 = 1.479819860511658591e-01;

static inline double log_positive(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    /* x = m * 2^k with m in [sqrt(2)/2, sqrt(2)): shift the exponent so that
       mantissas from 0x6a09e... (sqrt(2)/2) upwards carry into the next power */
    u += (uint64_t)(0x3ff00000 - 0x3fe6a09e) << 32;
    uint64_t biased_k = u >> 52;
    u = (u & 0x000fffffffffffffULL) + ((uint64_t)0x3fe6a09e << 32);
    double m, k;
    memcpy(&m, &u, sizeof m);
    /* k as a double without an int64 conversion (which AVX2 lacks): 2^52 + biased_k */
    uint64_t kbits = 0x4330000000000000ULL + biased_k;
    memcpy(&k, &kbits, sizeof k);
    k -= 4503599627370496.0 + 1023.0;
    double f = m - 1.0;
    double hfsq = 0.5 * f * f;
    double s = f / (2.0 + f);
    double z = s * s, w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    return s * (hfsq + t1 + t2) + k * ln2_lo - hfsq + f + k * ln2_hi;
}

/* The loops over arrays, compiled once per build: the compiler vectorises
   log_positive with each target's instructions. */
#define DFG_LOG_LOOPS(build, attributes)                                                      \
    attributes static void log_array_##build(const double *x, double *out, int64_t n) {       \
        for (int64_t i = 0; i < n; i++) out[i] = log_positive(x[i]);                          \
    }                                                                                         \
    attributes static void log_odds_array_##build(const double *x, double *out, int64_t n) {  \
        for (int64_t i = 0; i < n; i++) out[i] = log_positive(x[i] / (1.0 - x[i]));           \
    }

DFG_LOG_LOOPS(generic, )
#ifdef DFG_LOG_AVX2
DFG_LOG_LOOPS(avx2, DFG_TARGET("avx2,fma"))
DFG_LOG_LOOPS(avx512, DFG_TARGET("avx512f,fma"))
#endif

typedef void (*log_loop)(const double *x, double *out, int64_t n);

/* The build of kind among a loop's three builds. */
static log_loop pick(int kind, log_loop generic, log_loop avx2, log_loop avx512) {
    (void)avx2;
    (void)avx512;
#ifdef DFG_LOG_AVX2
    if (kind == DFG_LOG_KIND_AVX512) return avx512;
    if (kind == DFG_LOG_KIND_AVX2) return avx2;
#endif
    (void)kind;
    return generic;
}

int dfg_log_kind(void) {
#ifdef DFG_LOG_AVX2
    if (dfg_cpu_use_avx512f_fma()) return DFG_LOG_KIND_AVX512;
    if (dfg_cpu_use_avx2_fma()) return DFG_LOG_KIND_AVX2;
#endif
    return DFG_LOG_KIND_BASELINE;
}

#ifdef DFG_LOG_AVX2
#define DFG_LOG_PICK(kind, loop) pick(kind, loop##_generic, loop##_avx2, loop##_avx512)
#else
#define DFG_LOG_PICK(kind, loop) pick(kind, loop##_generic, NULL, NULL)
#endif

void dfg_log_array_kind(int kind, const double *x, double *out, int64_t n) {
    DFG_LOG_PICK(kind, log_array)(x, out, n);
}

void dfg_log_odds_array_kind(int kind, const double *x, double *out, int64_t n) {
    DFG_LOG_PICK(kind, log_odds_array)(x, out, n);
}

void dfg_log_array(const double *x, double *out, int64_t n) {
    dfg_log_array_kind(dfg_log_kind(), x, out, n);
}
