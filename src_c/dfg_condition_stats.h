/*
 * dfg_condition_stats.h - what printing a rule needs from the training rows, for many
 * conditions in one pass over X (row-major, N x D): the training values next to each
 * bound (the printed threshold must split the training rows as the real one does),
 * how many rows satisfy each condition, and how many values of each feature are missing.
 *
 * Every result is a maximum, a minimum or a count, so it is exact and independent of
 * the thread count and of the order in which rows are visited. dfg_condition_bits
 * gives the truth values themselves, bit-packed, one column per condition.
 */
#ifndef DFG_CONDITION_STATS_H
#define DFG_CONDITION_STATS_H

#include "dfg_common.h"
#include "dfg_sets.h"

/*
 * For each bound b: below[b] = the largest X[n, feature[b]] <= value[b] (-inf if none),
 * above[b] = the smallest X[n, feature[b]] > value[b] (+inf if none); NaN values are
 * skipped. value must not be NaN.
 */
int dfg_bound_neighbours(const double *X, int64_t n_samples, int64_t n_features,
                         int64_t n_bounds, const int32_t *feature, const double *value,
                         double *below, double *above, int n_threads);

/*
 * holds[c] = the rows satisfying condition c: for a present x = X[n, feature[c]], the
 * set test of item c of sets when sets is given and that item is not numeric, else
 * lower[c] < x <= upper[c] (lower[c] = -inf: no lower bound, which -inf satisfies); for a missing x (NaN, or |x| <= zero_threshold where
 * zero_missing[c] is 1; zero_missing may be NULL), missing[c] (0 or 1).
 * n_nan (n_features entries) = the NaN values of each feature.
 */
int dfg_condition_counts(const double *X, int64_t n_samples, int64_t n_features,
                         int64_t n_conditions, const int32_t *feature, const double *lower,
                         const double *upper, const uint8_t *missing, const uint8_t *zero_missing,
                         double zero_threshold, const dfg_sets *sets, int64_t *holds,
                         int64_t *n_nan, int n_threads);

/* The truth values of the conditions (as dfg_condition_counts counts them), bit-packed,
   condition-major: column c is cols + c * ceil(N / 64),
   row n its bit n % 64 of word n / 64. */
int dfg_condition_bits(const double *X, int64_t n_samples, int64_t n_features,
                       int64_t n_conditions, const int32_t *feature, const double *lower,
                       const double *upper, const uint8_t *missing, const uint8_t *zero_missing,
                       double zero_threshold, const dfg_sets *sets, uint64_t *cols,
                       int n_threads);

#endif
