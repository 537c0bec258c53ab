/*
 * dfg_mstep.h - the M-step (eq. 14 / App. C eq. 39-41) and its sufficient statistics.
 *
 * Every sum over samples is deterministic: either reduced in fixed blocks
 * (dfg_common.h) or, for the split statistics, computed per feature or per word
 * of splits by one thread walking the samples in order.
 */
#ifndef DFG_MSTEP_H
#define DFG_MSTEP_H

#include "dfg_model.h"

/* M-step (eq. 14 / 39-41): params from beta (N x K, K = params->n_components), eta
   and gamma clamped at opt->eps, variances floored at opt->var_floor. */
int dfg_mstep(const dfg_data *data, const double *beta, const dfg_options *opt,
              dfg_params *params);

/*
 * num (out, K x L) = sum_n beta_nk s_nl from thermometer ranks: per feature a
 * histogram of beta over ranks, then a suffix sum (s_l = 1 iff rank > j for the
 * j-th threshold of the feature), plus the missing rank's mass for the splits
 * that send missing values right (missing_right, NULL: none). Cost O(N K D + K L).
 */
int dfg_split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                          const int64_t *feat_ptr, const uint8_t *missing_right,
                          const double *beta, int64_t n_components, double *num, int n_threads);

/*
 * The M-step's eta (eq. 41) straight from the same statistics, in one pass:
 * eta (out, K x L) = clamp(num * (1 / colsum_k), lo, hi), 0.5 where colsum_k == 0.
 */
int dfg_split_eta_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                        const int64_t *feat_ptr, const uint8_t *missing_right,
                        const double *beta, int64_t n_components, const double *colsum,
                        double lo, double hi, double *eta, int n_threads);

/* Same from the bit-packed rows S (N x ceil(L/64)). Cost O(K * number of set bits). */
int dfg_split_stats_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                         const double *beta, int64_t n_components, double *num,
                         int n_threads);

/*
 * Regression statistics: colsum_k = sum_n beta_nk, mean_k = sum_n beta_nk y_n / colsum_k,
 * sq_dev_k = sum_n beta_nk (y_n - mean_k)^2 (two passes, no cancellation).
 */
int dfg_regression_stats(const double *y, const double *beta, int64_t n_samples,
                         int64_t n_components, double *colsum, double *mean,
                         double *sq_dev, int n_threads);

/* Classification statistics: counts (out, K x C) = sum_n beta_nk [y_n = c]. */
int dfg_class_stats(const int32_t *y, int64_t n_classes, const double *beta,
                    int64_t n_samples, int64_t n_components, double *counts,
                    int n_threads);

#endif
