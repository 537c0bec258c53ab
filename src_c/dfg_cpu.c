#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <stdlib.h>

#if DFG_X86_DISPATCH
/* __builtin_cpu_init first: this code may run before the constructors that fill in
   what __builtin_cpu_supports reads (it returns at once once done). */
#define CPU_SUPPORTS(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature) != 0)
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
    return !getenv("DEFRAG_NO_AVX2") && CPU_SUPPORTS("avx2");
#else
    return 0;
#endif
}

int dfg_cpu_use_avx2_fma(void) {
#if DFG_X86_DISPATCH
    return !getenv("DEFRAG_NO_AVX2") && CPU_SUPPORTS("avx2") && CPU_SUPPORTS("fma");
#else
    return 0;
#endif
}

int dfg_cpu_use_avx512f_fma(void) {
#if DFG_X86_DISPATCH
    return !getenv("DEFRAG_NO_AVX2") && !getenv("DEFRAG_NO_AVX512") && CPU_SUPPORTS("avx512f") &&
           CPU_SUPPORTS("fma");
#else
    return 0;
#endif
}
