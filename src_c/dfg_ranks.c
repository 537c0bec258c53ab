#include "dfg_ranks.h"

/* Number of entries of t[0..m) strictly below x (t sorted ascending, m >= 1).
   Branch-free halving (a conditional move per step): the comparisons of a binary
   search over thousands of thresholds are unpredictable, and the mispredictions
   cost more than the loads. Invariant: the count lies in [base - t, base - t + n]. */
static inline int32_t count_below(const double *t, int64_t m, double x) {
    const double *base = t;
    int64_t n = m;
    while (n > 1) {
        int64_t half = n >> 1;
        base = base[half] < x ? base + half : base;
        n -= half;
    }
    return (int32_t)((base - t) + (*base < x));
}

int dfg_compute_ranks(const double *X, int64_t n_samples, int64_t n_features,
                      const int64_t *feat_ptr, const double *thresholds,
                      int32_t *ranks, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_threads < 1) return DFG_EINVAL;
    if (feat_ptr[0] != 0) return DFG_EINVAL;
    for (int64_t d = 0; d < n_features; d++) {
        if (feat_ptr[d + 1] < feat_ptr[d]) return DFG_EINVAL;
        if (feat_ptr[d + 1] - feat_ptr[d] > INT32_MAX - 2) return DFG_EINVAL;
    }
    int64_t n_blocks = dfg_n_blocks(n_samples);
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t n0 = b * DFG_BLOCK;
        int64_t n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        for (int64_t d = 0; d < n_features; d++) {
            const double *t = thresholds + feat_ptr[d];
            int64_t m = feat_ptr[d + 1] - feat_ptr[d];
            int32_t *out = ranks + d * n_samples;
            for (int64_t n = n0; n < n1; n++) {
                double x = X[n * n_features + d];
                out[n] = x != x ? (int32_t)(m + 1) : (m ? count_below(t, m, x) : 0);
            }
        }
    }
    return DFG_OK;
}
