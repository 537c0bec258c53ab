#include "dfg_bits.h"
#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <stdlib.h>
#include <string.h>

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

/* A one-item test for a column: a threshold (sets == NULL) or set 0 of sets. */
typedef struct {
    double threshold;
    int greater;
    const dfg_sets *sets;
} column_test;

static int fill_column(const double *X, int64_t n_samples, int64_t n_features, int32_t feature,
                       const column_test *t, int missing, uint64_t *col) {
    if (n_samples < 0 || feature < 0 || feature >= n_features) return DFG_EINVAL;
    int64_t n_words = dfg_n_words(n_samples);
    for (int64_t w = 0; w < n_words; w++) {
        uint64_t word = 0;
        int64_t n0 = w * 64, n1 = n0 + 64 < n_samples ? n0 + 64 : n_samples;
        for (int64_t n = n0; n < n1; n++) {
            double v = X[n * n_features + feature];
            int bit = v != v ? missing != 0
                    : t->sets ? dfg_sets_test(t->sets, 0, v)
                    : (t->greater ? v > t->threshold : v <= t->threshold);
            word |= (uint64_t)bit << (n - n0);
        }
        col[w] = word;
    }
    return DFG_OK;
}

int dfg_condition_column(const double *X, int64_t n_samples, int64_t n_features,
                         int32_t feature, double threshold, int greater, int missing,
                         uint64_t *col) {
    column_test t = {threshold, greater, NULL};
    return fill_column(X, n_samples, n_features, feature, &t, missing, col);
}

int dfg_set_column(const double *X, int64_t n_samples, int64_t n_features, int32_t feature,
                   const uint64_t *words, int64_t n_words, int negate, int missing,
                   uint64_t *col) {
    if (n_words < 0 || (n_words > 0 && !words)) return DFG_EINVAL;
    uint8_t kind = negate ? DFG_KIND_NOT_IN_SET : DFG_KIND_IN_SET;
    int64_t ptr[2] = {0, n_words};
    dfg_sets one = {1, &kind, ptr, words};
    if (dfg_sets_check(&one, 1) != DFG_OK) return DFG_EINVAL;
    column_test t = {0.0, 0, &one};
    return fill_column(X, n_samples, n_features, feature, &t, missing, col);
}

DFG_ALWAYS_INLINE int64_t count_all_impl(const uint64_t *cols, int64_t m,
                                         int64_t n_samples, int64_t skip) {
    int64_t n_words = dfg_n_words(n_samples), total = 0;
    for (int64_t w = 0; w < n_words; w++) {
        uint64_t word = ~(uint64_t)0;
        if (w == n_words - 1 && (n_samples & 63)) word = ((uint64_t)1 << (n_samples & 63)) - 1;
        for (int64_t j = 0; j < m; j++)
            if (j != skip) word &= cols[j * n_words + w];
        total += dfg_popcount64(word);
    }
    return total;
}

#if DFG_X86_DISPATCH
DFG_TARGET_POPCNT static int64_t count_all_hw(const uint64_t *cols, int64_t m,
                                              int64_t n_samples, int64_t skip) {
    return count_all_impl(cols, m, n_samples, skip);
}
#endif

static int64_t count_all_generic(const uint64_t *cols, int64_t m, int64_t n_samples,
                                 int64_t skip) {
    return count_all_impl(cols, m, n_samples, skip);
}

int64_t dfg_count_all(const uint64_t *cols, int64_t m, int64_t n_samples, int64_t skip) {
    if (m < 0 || n_samples < 0) return -1;
#if DFG_X86_DISPATCH
    if (dfg_cpu_has_popcnt()) return count_all_hw(cols, m, n_samples, skip);
#endif
    return count_all_generic(cols, m, n_samples, skip);
}

int64_t dfg_prune_conditions(const uint64_t *cols, int64_t m, int64_t n_samples,
                             uint8_t *keep) {
    if (m < 0 || n_samples < 0) return -1;
    int64_t n_words = dfg_n_words(n_samples);
    /* Gather the kept columns so that dropping one is a skip index. */
    int64_t *idx = (int64_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof(int64_t));
    uint64_t *kept = (uint64_t *)malloc((size_t)((m > 0 ? m : 1) * (n_words > 0 ? n_words : 1)) * sizeof(uint64_t));
    if (!idx || !kept) { free(idx); free(kept); return -1; }
    int64_t n_kept = 0;
    for (int64_t j = 0; j < m; j++) {
        if (!keep[j]) continue;
        idx[n_kept] = j;
        memcpy(kept + n_kept * n_words, cols + j * n_words, (size_t)n_words * sizeof(uint64_t));
        n_kept++;
    }
    int64_t covered = dfg_count_all(kept, n_kept, n_samples, -1);
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int64_t j = 0; j < n_kept; j++) {
            if (dfg_count_all(kept, n_kept, n_samples, j) != covered) continue;
            keep[idx[j]] = 0;
            memmove(kept + j * n_words, kept + (j + 1) * n_words,
                    (size_t)((n_kept - j - 1) * n_words) * sizeof(uint64_t));
            memmove(idx + j, idx + j + 1, (size_t)(n_kept - j - 1) * sizeof(int64_t));
            n_kept--;
            changed = 1;
            break;
        }
    }
    free(idx);
    free(kept);
    return covered;
}
