#include "dfg_bits.h"

/* s_l(v) of split l for a present value v: the threshold test, or the set test. */
static inline int split_bit(const dfg_sets *sets, const double *threshold, int64_t l, double v) {
    return sets && sets->kind[l] != DFG_KIND_NUMERIC ? dfg_sets_test(sets, l, v) : v > threshold[l];
}

int dfg_pack_rows(const double *X, int64_t n_samples, int64_t n_features,
                  const int32_t *split_feature, const double *split_threshold,
                  const uint8_t *missing_right, const dfg_sets *sets, int64_t n_splits,
                  uint64_t *S, int n_threads, const volatile int *stop) {
    if (n_samples < 0 || n_features < 0 || n_splits < 0 || n_threads < 1) return DFG_EINVAL;
    if (sets && dfg_sets_check(sets, n_splits) != DFG_OK) return DFG_EINVAL;
    for (int64_t l = 0; l < n_splits; l++)
        if (split_feature[l] < 0 || split_feature[l] >= n_features) return DFG_EINVAL;
    int64_t n_words = dfg_n_words(n_splits), n_blocks = dfg_n_blocks(n_samples);
    /* by blocks of rows, so that the stop flag is read once per block */
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        if (dfg_stop_requested(stop)) continue;
        int64_t n1 = (b + 1) * DFG_BLOCK < n_samples ? (b + 1) * DFG_BLOCK : n_samples;
        for (int64_t n = b * DFG_BLOCK; n < n1; n++) {
            const double *x = X + n * n_features;
            uint64_t *row = S + n * n_words;
            for (int64_t w = 0; w < n_words; w++) {
                uint64_t word = 0;
                int64_t l0 = w * 64, l1 = l0 + 64 < n_splits ? l0 + 64 : n_splits;
                for (int64_t l = l0; l < l1; l++) {
                    double v = x[split_feature[l]];
                    int bit = v != v ? (missing_right ? missing_right[l] != 0 : 0)
                                     : split_bit(sets, split_threshold, l, v);
                    word |= (uint64_t)bit << (l - l0);
                }
                row[w] = word;
            }
        }
    }
    return dfg_stop_requested(stop) ? DFG_EINTERRUPTED : DFG_OK;
}
