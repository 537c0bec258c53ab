#include "dfg_bits.h"

/* s_l(v) of split l for a present value v: the threshold test, or the set test. */
static inline int split_bit(const dfg_sets *sets, const double *threshold, int64_t l, double v) {
    return sets && sets->kind[l] != DFG_KIND_NUMERIC ? dfg_sets_test(sets, l, v) : v > threshold[l];
}

int dfg_pack_rows(const double *X, int64_t n_samples, int64_t n_features,
                  const int32_t *split_feature, const double *split_threshold,
                  const uint8_t *missing_right, const dfg_sets *sets, int64_t n_splits,
                  uint64_t *S, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_splits < 0 || n_threads < 1) return DFG_EINVAL;
    if (sets && dfg_sets_check(sets, n_splits) != DFG_OK) return DFG_EINVAL;
    for (int64_t l = 0; l < n_splits; l++)
        if (split_feature[l] < 0 || split_feature[l] >= n_features) return DFG_EINVAL;
    int64_t n_words = dfg_n_words(n_splits);
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t n = 0; n < n_samples; n++) {
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
    return DFG_OK;
}

/* Rows per task of dfg_condition_columns: 64 words of 64 rows; a task's rows
   (64 x 64 x D doubles for D = 28: 900 KB) are read once per condition while they
   stay in L2, instead of the whole of X once per condition (a strided column read
   brings in every row's cache line: 1e6 rows x 28 cost 7 ms per condition). */
#define DFG_COLUMN_WORDS 64

int dfg_condition_columns(const double *X, int64_t n_samples, int64_t n_features,
                          int64_t n_conditions, const int32_t *feature, const double *threshold,
                          const uint8_t *greater, const uint8_t *missing, const dfg_sets *sets,
                          uint64_t *cols, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_conditions < 0 || n_threads < 1) return DFG_EINVAL;
    if (sets && dfg_sets_check(sets, n_conditions) != DFG_OK) return DFG_EINVAL;
    for (int64_t c = 0; c < n_conditions; c++)
        if (feature[c] < 0 || feature[c] >= n_features) return DFG_EINVAL;
    const int64_t n_words = dfg_n_words(n_samples);
    const int64_t n_tasks = (n_words + DFG_COLUMN_WORDS - 1) / DFG_COLUMN_WORDS;
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t task = 0; task < n_tasks; task++) {
        int64_t w0 = task * DFG_COLUMN_WORDS;
        int64_t w1 = w0 + DFG_COLUMN_WORDS < n_words ? w0 + DFG_COLUMN_WORDS : n_words;
        for (int64_t c = 0; c < n_conditions; c++) {
            const double *x = X + feature[c];
            const int is_set = sets && sets->kind[c] != DFG_KIND_NUMERIC;
            const double t = threshold[c];
            const int above = greater[c] != 0, nan_bit = missing[c] != 0;
            for (int64_t w = w0; w < w1; w++) {
                uint64_t word = 0;
                int64_t n0 = w * 64, n1 = n0 + 64 < n_samples ? n0 + 64 : n_samples;
                for (int64_t n = n0; n < n1; n++) {
                    double v = x[n * n_features];
                    int bit = v != v ? nan_bit
                            : is_set ? dfg_sets_test(sets, c, v)
                            : (above ? v > t : v <= t);
                    word |= (uint64_t)bit << (n - n0);
                }
                cols[c * n_words + w] = word;
            }
        }
    }
    return DFG_OK;
}
