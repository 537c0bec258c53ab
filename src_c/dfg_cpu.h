/*
 * dfg_cpu.h - which instruction sets the kernels may use on the running CPU.
 *
 * The one place that reads the CPU (x86 with GCC or clang, dfg_portable.h) and the
 * environment overrides that force narrower kernels, which tests use to compare
 * the builds:
 *   DEFRAG_NO_AVX2    no AVX2 (nor AVX-512) kernel: the baseline ones run;
 *   DEFRAG_NO_AVX512  no AVX-512 kernel: the AVX2 ones run where the CPU has AVX2.
 * The CPU and the environment are read once, at the first kernel call that dispatches
 * (dfg_cpu_reread makes the next call read them again: tests compare the builds in one
 * process). Everywhere else every function returns 0 (1 for popcount on aarch64, whose
 * baseline has CNT).
 */
#ifndef DFG_CPU_H
#define DFG_CPU_H

/* 1 when the bit-counting kernels run their hardware popcount build. */
int dfg_cpu_has_popcnt(void);

/* 1 when the CPU has AVX2 and DEFRAG_NO_AVX2 is unset. */
int dfg_cpu_use_avx2(void);

/* 1 when the CPU has AVX2 and FMA and DEFRAG_NO_AVX2 is unset. */
int dfg_cpu_use_avx2_fma(void);

/* 1 when the CPU has AVX-512F and FMA and neither DEFRAG_NO_AVX2 nor DEFRAG_NO_AVX512
   is set. */
int dfg_cpu_use_avx512f_fma(void);

/* The next dispatch reads the CPU and the environment again (for tests, between kernel
   calls: a kernel running meanwhile may see either choice for its next dispatch). */
void dfg_cpu_reread(void);

#endif
