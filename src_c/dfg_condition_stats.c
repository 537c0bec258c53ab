#include "dfg_condition_stats.h"

#include <math.h>
#include <stdlib.h>

/* Each thread keeps its own extremes or counts over a static share of the rows and
   merges them at the end: maxima, minima and integer sums do not depend on the order. */

int dfg_bound_neighbours(const double *X, int64_t n_samples, int64_t n_features,
                         int64_t n_bounds, const int32_t *feature, const double *value,
                         double *below, double *above, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_bounds < 0 || n_threads < 1) return DFG_EINVAL;
    for (int64_t b = 0; b < n_bounds; b++)
        if (feature[b] < 0 || feature[b] >= n_features || value[b] != value[b]) return DFG_EINVAL;
    for (int64_t b = 0; b < n_bounds; b++) {
        below[b] = -INFINITY;
        above[b] = INFINITY;
    }
    int status = DFG_OK;
    #pragma omp parallel num_threads(dfg_team(n_threads))
    {
        double *lo = (double *)malloc((size_t)(2 * (n_bounds > 0 ? n_bounds : 1)) * sizeof(double));
        double *hi = lo ? lo + n_bounds : NULL;
        if (!lo) {
            #pragma omp atomic write
            status = DFG_ENOMEM;
        }
        for (int64_t b = 0; lo && b < n_bounds; b++) {
            lo[b] = -INFINITY;
            hi[b] = INFINITY;
        }
        #pragma omp for schedule(static)
        for (int64_t n = 0; n < n_samples; n++) {
            if (!lo) continue;
            const double *x = X + n * n_features;
            for (int64_t b = 0; b < n_bounds; b++) {
                double v = x[feature[b]];
                /* NaN fails every comparison below and changes neither extreme */
                int is_below = v <= value[b];
                lo[b] = is_below && v > lo[b] ? v : lo[b];
                hi[b] = !is_below && v < hi[b] ? v : hi[b];
            }
        }
        #pragma omp critical(dfg_bound_neighbours_merge)
        for (int64_t b = 0; lo && b < n_bounds; b++) {
            if (lo[b] > below[b]) below[b] = lo[b];
            if (hi[b] < above[b]) above[b] = hi[b];
        }
        free(lo);
    }
    return status;
}

/* Whether condition c holds for the value v (see dfg_condition_counts). */
static inline int condition_holds(double v, int64_t c, const double *lower, const double *upper,
                                  const uint8_t *missing, const uint8_t *zero_missing,
                                  double zero_threshold, const dfg_sets *sets) {
    int absent = v != v || (zero_missing && zero_missing[c] && fabs(v) <= zero_threshold);
    return absent ? missing[c]
         : sets && sets->kind[c] != DFG_KIND_NUMERIC ? dfg_sets_test(sets, c, v)
         : (lower[c] == -INFINITY || v > lower[c]) & (v <= upper[c]); /* -inf: no lower bound */
}

static int check_conditions(int64_t n_samples, int64_t n_features, int64_t n_conditions,
                            const int32_t *feature, const uint8_t *missing, double zero_threshold,
                            const dfg_sets *sets, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_conditions < 0 || n_threads < 1) return DFG_EINVAL;
    if (!(zero_threshold >= 0.0)) return DFG_EINVAL;
    if (sets && dfg_sets_check(sets, n_conditions) != DFG_OK) return DFG_EINVAL;
    for (int64_t c = 0; c < n_conditions; c++)
        if (feature[c] < 0 || feature[c] >= n_features || missing[c] > 1) return DFG_EINVAL;
    return DFG_OK;
}

int dfg_condition_counts(const double *X, int64_t n_samples, int64_t n_features,
                         int64_t n_conditions, const int32_t *feature, const double *lower,
                         const double *upper, const uint8_t *missing, const uint8_t *zero_missing,
                         double zero_threshold, const dfg_sets *sets, int64_t *holds,
                         int64_t *n_nan, int n_threads) {
    int status = check_conditions(n_samples, n_features, n_conditions, feature, missing,
                                  zero_threshold, sets, n_threads);
    if (status != DFG_OK) return status;
    for (int64_t c = 0; c < n_conditions; c++) holds[c] = 0;
    for (int64_t d = 0; d < n_features; d++) n_nan[d] = 0;
    #pragma omp parallel num_threads(dfg_team(n_threads))
    {
        int64_t *count = (int64_t *)calloc((size_t)(n_conditions + n_features + 1), sizeof(int64_t));
        int64_t *nan_count = count ? count + n_conditions : NULL;
        if (!count) {
            #pragma omp atomic write
            status = DFG_ENOMEM;
        }
        #pragma omp for schedule(static)
        for (int64_t n = 0; n < n_samples; n++) {
            if (!count) continue;
            const double *x = X + n * n_features;
            for (int64_t d = 0; d < n_features; d++) nan_count[d] += x[d] != x[d];
            for (int64_t c = 0; c < n_conditions; c++)
                count[c] += condition_holds(x[feature[c]], c, lower, upper, missing, zero_missing,
                                            zero_threshold, sets);
        }
        #pragma omp critical(dfg_condition_counts_merge)
        {
            for (int64_t c = 0; count && c < n_conditions; c++) holds[c] += count[c];
            for (int64_t d = 0; count && d < n_features; d++) n_nan[d] += nan_count[d];
        }
        free(count);
    }
    return status;
}

/* Words (of 64 rows) per task of dfg_condition_bits: a task's 4,096 rows stay in L2 while
   each condition reads its column of them (a strided read of a whole column per
   condition brings in every row's cache lines: 7 ms per condition at 1e6 x 28). */
#define DFG_BITS_WORDS 64

int dfg_condition_bits(const double *X, int64_t n_samples, int64_t n_features,
                       int64_t n_conditions, const int32_t *feature, const double *lower,
                       const double *upper, const uint8_t *missing, const uint8_t *zero_missing,
                       double zero_threshold, const dfg_sets *sets, uint64_t *cols,
                       int n_threads) {
    int status = check_conditions(n_samples, n_features, n_conditions, feature, missing,
                                  zero_threshold, sets, n_threads);
    if (status != DFG_OK) return status;
    const int64_t n_words = dfg_n_words(n_samples);
    const int64_t n_tasks = (n_words + DFG_BITS_WORDS - 1) / DFG_BITS_WORDS;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t task = 0; task < n_tasks; task++) {
        int64_t w1 = (task + 1) * DFG_BITS_WORDS < n_words ? (task + 1) * DFG_BITS_WORDS : n_words;
        for (int64_t c = 0; c < n_conditions; c++) {
            const double *x = X + feature[c];
            for (int64_t w = task * DFG_BITS_WORDS; w < w1; w++) {
                uint64_t word = 0;
                int64_t n0 = w * 64, n1 = n0 + 64 < n_samples ? n0 + 64 : n_samples;
                for (int64_t n = n0; n < n1; n++)
                    word |= (uint64_t)condition_holds(x[n * n_features], c, lower, upper, missing,
                                                      zero_missing, zero_threshold, sets)
                            << (n - n0);
                cols[c * n_words + w] = word;
            }
        }
    }
    return DFG_OK;
}
