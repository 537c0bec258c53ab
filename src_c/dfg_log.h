/*
 * dfg_log.h - natural logarithm of many positive values at once.
 *
 * The rank tables take one log per run of equal eta (about 30% of K x L values
 * per FAB iteration), a loop glibc's scalar log serves at about 6 ns a value.
 * dfg_log_array evaluates fdlibm's log (as in musl: reduction to
 * [sqrt(2)/2, sqrt(2)) * 2^k, a degree-14 odd polynomial in s = f / (2 + f);
 * error below 1 ulp) without branches, so the compiler vectorises it: SSE2 in
 * the baseline build, AVX2 or AVX-512F picked at run time on x86-64 CPUs that
 * have them (about 1.5 and 1.2 ns a value here). Nothing is contracted into FMA
 * (-ffp-contract=off, and the pragma in dfg_log.c), so every build makes the
 * same operations and gives the same bits (tested). Values must be positive,
 * finite and normal (>= DBL_MIN); the caller checks. DEFRAG_NO_AVX512 /
 * DEFRAG_NO_AVX2 force a narrower build (dfg_cpu.h).
 */
#ifndef DFG_LOG_H
#define DFG_LOG_H

#include "dfg_common.h"

/* out[i] = log(x[i]) for i < n; x and out may be the same array. */
void dfg_log_array(const double *x, double *out, int64_t n);

/* The same with the implementation chosen once by the caller (dfg_log_kind reads
   the CPU and the environment), for loops that take many short arrays. */
#define DFG_LOG_KIND_BASELINE 0
#define DFG_LOG_KIND_AVX2 1
#define DFG_LOG_KIND_AVX512 2
int dfg_log_kind(void);
void dfg_log_array_kind(int kind, const double *x, double *out, int64_t n);
/* out[i] = log(x[i] / (1 - x[i])), the log-odds, for x[i] in (0, 1) whose odds are normal. */
void dfg_log_odds_array_kind(int kind, const double *x, double *out, int64_t n);

#endif
