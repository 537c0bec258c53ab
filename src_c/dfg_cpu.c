#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <stdlib.h>

#if DFG_X86_DISPATCH
/* __builtin_cpu_init first: this code may run before the constructors that fill in
   what __builtin_cpu_supports reads (it returns at once once done). */
#define CPU_SUPPORTS(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature) != 0)

enum { CPU_KNOWN = 1, CPU_AVX2 = 2, CPU_AVX2_FMA = 4, CPU_AVX512F_FMA = 8 };

/* The kernels' instruction sets (CPU_* flags), 0 until the first dispatch reads the CPU
   and the environment. A dispatch runs per kernel call, on any thread: getenv there
   would cost a scan of the environment each time, and may race with a setenv elsewhere.
   The value depends only on the CPU and on the environment at that first read, so
   threads that race to fill it in store the same value; the atomic builtins (GCC and
   clang, the only compilers that dispatch) make that race well defined. */
static int cpu_flags = 0;

static int kernel_flags(void) {
    int flags = __atomic_load_n(&cpu_flags, __ATOMIC_RELAXED);
    if (flags) return flags;
    flags = CPU_KNOWN;
    if (!getenv("DEFRAG_NO_AVX2")) {
        if (CPU_SUPPORTS("avx2")) flags |= CPU_AVX2 | (CPU_SUPPORTS("fma") ? CPU_AVX2_FMA : 0);
        if (!getenv("DEFRAG_NO_AVX512") && CPU_SUPPORTS("avx512f") && CPU_SUPPORTS("fma"))
            flags |= CPU_AVX512F_FMA;
    }
    __atomic_store_n(&cpu_flags, flags, __ATOMIC_RELAXED);
    return flags;
}
#endif

int dfg_cpu_has_popcnt(void) {
#if DFG_X86_DISPATCH
    return CPU_SUPPORTS("popcnt");
#elif defined(__aarch64__) || defined(__ARM_FEATURE_SVE)
    return 1;
#else
    return 0;
#endif
}

int dfg_cpu_use_avx2(void) {
#if DFG_X86_DISPATCH
    return (kernel_flags() & CPU_AVX2) != 0;
#else
    return 0;
#endif
}

int dfg_cpu_use_avx2_fma(void) {
#if DFG_X86_DISPATCH
    return (kernel_flags() & CPU_AVX2_FMA) != 0;
#else
    return 0;
#endif
}

int dfg_cpu_use_avx512f_fma(void) {
#if DFG_X86_DISPATCH
    return (kernel_flags() & CPU_AVX512F_FMA) != 0;
#else
    return 0;
#endif
}

void dfg_cpu_reread(void) {
#if DFG_X86_DISPATCH
    __atomic_store_n(&cpu_flags, 0, __ATOMIC_RELAXED);
#endif
}
