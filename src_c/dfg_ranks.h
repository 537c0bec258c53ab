/*
 * dfg_ranks.h - thermometer ranks of samples among each feature's thresholds.
 *
 * The split table is sorted by (feature, threshold): the splits of feature d are
 * l = feat_ptr[d] .. feat_ptr[d+1]-1 with non-decreasing thresholds. For a sample x
 * the binary features of these splits form a thermometer code: s_l = [x_d > t_l]
 * is 1 exactly for the first r of them, where r = #{l of feature d : t_l < x_d}.
 * That rank r determines all of them, so kernels read one integer per
 * (sample, feature) instead of one bit per (sample, split).
 *
 * A missing value (NaN) gets the rank m_d + 1: its split outcomes are then given
 * by each split's missing direction (missing_right), not by a threshold.
 */
#ifndef DFG_RANKS_H
#define DFG_RANKS_H

#include "dfg_common.h"
#include "dfg_sets.h"

/*
 * X: n_samples x n_features, row-major. thresholds: the sorted split thresholds.
 * ranks (out): n_features x n_samples, feature-major (column d is contiguous).
 * stop: the caller's stop flag (dfg_common.h) or NULL, read before each block of rows.
 * Returns DFG_OK, DFG_EINVAL (bad sizes or unsorted feat_ptr) or DFG_EINTERRUPTED.
 */
int dfg_compute_ranks(const double *X, int64_t n_samples, int64_t n_features,
                      const int64_t *feat_ptr, const double *thresholds,
                      int32_t *ranks, int n_threads, const volatile int *stop);

/*
 * Ranks of a split table with categorical splits (dfg_sets.h), whose sets have no
 * thermometer code. The splits are cut into n_groups groups, each read as one rank
 * "feature": group g covers splits group_ptr[g] .. group_ptr[g+1]-1 of column
 * group_feature[g] of X. A numeric group (sorted thresholds) is ranked as above;
 * a set group is exactly one categorical split l of sets (one item per split),
 * ranked s_l (0 or 1: its set test), and a missing value gets rank 2 = m + 1, so
 * that the rank kernels give it missing_right[l] like the bit path. sets NULL:
 * every group is numeric. ranks (out): n_groups x n_samples.
 * Returns DFG_OK, DFG_EINVAL (bad sizes, a set group of more than one split) or
 * DFG_EINTERRUPTED (stop as for dfg_compute_ranks).
 */
int dfg_compute_group_ranks(const double *X, int64_t n_samples, int64_t n_features,
                            int64_t n_groups, const int32_t *group_feature,
                            const int64_t *group_ptr, const double *thresholds,
                            const dfg_sets *sets, int32_t *ranks, int n_threads,
                            const volatile int *stop);

#endif
