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

/* Thermometer ranks of column d of X (rows n0..n1-1) among the m thresholds t. */
static inline void rank_column(const double *X, int64_t n_features, int64_t d, const double *t,
                               int64_t m, int64_t n0, int64_t n1, int32_t *out) {
    for (int64_t n = n0; n < n1; n++) {
        double x = X[n * n_features + d];
        out[n] = x != x ? (int32_t)(m + 1) : (m ? count_below(t, m, x) : 0);
    }
}

int dfg_compute_ranks(const double *X, int64_t n_samples, int64_t n_features,
                      const int64_t *feat_ptr, const double *thresholds,
                      int32_t *ranks, int n_threads, const volatile int *stop) {
    if (n_samples < 0 || n_features < 0 || n_threads < 1) return DFG_EINVAL;
    if (feat_ptr[0] != 0) return DFG_EINVAL;
    for (int64_t d = 0; d < n_features; d++) {
        if (feat_ptr[d + 1] < feat_ptr[d]) return DFG_EINVAL;
        if (feat_ptr[d + 1] - feat_ptr[d] > INT32_MAX - 2) return DFG_EINVAL;
    }
    int64_t n_blocks = dfg_n_blocks(n_samples);
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        if (dfg_stop_requested(stop)) continue; /* the other blocks are skipped */
        int64_t n0 = b * DFG_BLOCK;
        int64_t n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        for (int64_t d = 0; d < n_features; d++)
            rank_column(X, n_features, d, thresholds + feat_ptr[d], feat_ptr[d + 1] - feat_ptr[d],
                        n0, n1, ranks + d * n_samples);
    }
    return dfg_stop_requested(stop) ? DFG_EINTERRUPTED : DFG_OK;
}

int dfg_compute_group_ranks(const double *X, int64_t n_samples, int64_t n_features,
                            int64_t n_groups, const int32_t *group_feature,
                            const int64_t *group_ptr, const double *thresholds,
                            const dfg_sets *sets, int32_t *ranks, int n_threads,
                            const volatile int *stop) {
    if (n_samples < 0 || n_features < 0 || n_groups < 0 || n_threads < 1) return DFG_EINVAL;
    if (group_ptr[0] != 0) return DFG_EINVAL;
    int64_t n_splits = group_ptr[n_groups];
    if (sets && dfg_sets_check(sets, n_splits) != DFG_OK) return DFG_EINVAL;
    for (int64_t g = 0; g < n_groups; g++) {
        int64_t l0 = group_ptr[g], m = group_ptr[g + 1] - l0;
        if (m < 0 || m > INT32_MAX - 2) return DFG_EINVAL;
        if (group_feature[g] < 0 || group_feature[g] >= n_features) return DFG_EINVAL;
        if (!sets) continue;
        /* a set group is exactly one categorical split; a numeric group has none */
        for (int64_t j = 0; j < m; j++)
            if (sets->kind[l0 + j] != DFG_KIND_NUMERIC && m != 1) return DFG_EINVAL;
    }
    int64_t n_blocks = dfg_n_blocks(n_samples);
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        if (dfg_stop_requested(stop)) continue;
        int64_t n0 = b * DFG_BLOCK;
        int64_t n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        for (int64_t g = 0; g < n_groups; g++) {
            int64_t l = group_ptr[g], d = group_feature[g];
            int32_t *out = ranks + g * n_samples;
            if (!sets || group_ptr[g + 1] - l != 1 || sets->kind[l] == DFG_KIND_NUMERIC) {
                rank_column(X, n_features, d, thresholds + l, group_ptr[g + 1] - l, n0, n1, out);
                continue;
            }
            for (int64_t n = n0; n < n1; n++) {
                double x = X[n * n_features + d];
                out[n] = x != x ? 2 : dfg_sets_test(sets, l, x);
            }
        }
    }
    return dfg_stop_requested(stop) ? DFG_EINTERRUPTED : DFG_OK;
}
