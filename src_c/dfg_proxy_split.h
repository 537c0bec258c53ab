/*
 * dfg_proxy_split.h - split search of the proxy tree (maximum-likelihood
 * regression tree fitted to a reference model's predictive mean and variance).
 *
 * A node i holding rows j with reference mean m_j and variance v_j >= 0 has the
 * ML estimates (eq. 8 and sec. 3.1.1 of Afrabandpey et al.)
 *   mu_i      = mean_j m_j
 *   sigma2_i  = mean_j [ v_j + (m_j - mu_i)^2 ]      (floored at var_floor)
 * and the score L_i = -n_i log(sigma2_i). A split x_d <= t / x_d > t gains
 *   L_left + L_right - L_i.
 * For each feature the rows are sorted by x_d and swept once with running sums;
 * a threshold is the midpoint between two consecutive distinct values, and both
 * children must hold at least min_leaf rows.
 *
 * Missing values (NaN in X), as scikit-learn's CART: at each threshold the rows
 * with NaN in x_d are tried in the left child and in the right child and the
 * better side is kept (*missing_right). One more candidate sends every present
 * value left and the NaN rows right (threshold: the largest present value).
 * When the node has no NaN in the chosen feature, *missing_right says whether
 * the right child holds more rows (NaN at predict time goes to the larger side;
 * ties: left). Ties between candidates keep the lowest feature, then the lowest
 * threshold, then missing values on the left (the present/missing split last).
 */
#ifndef DFG_PROXY_SPLIT_H
#define DFG_PROXY_SPLIT_H

#include "dfg_common.h"

/* Score -n log(max(sigma2, var_floor)) of the rows `rows` (n_rows of them). */
int dfg_proxy_node_score(const int64_t *rows, int64_t n_rows, int64_t n_samples,
                         const double *mean, const double *var, double var_floor,
                         double *score);

/* Best split of the node holding `rows` (indices into X, N x D row-major, NaN
 * allowed). Outputs: *feature (-1 when no split satisfies min_leaf or no gain
 * is finite), *threshold, *gain, *n_left (rows sent left, NaN rows included
 * when they go left), *missing_right (1: NaN goes right). Features are searched
 * in parallel; the result does not depend on n_threads. stop: the caller's stop
 * flag (dfg_common.h) or NULL, read before each feature (DFG_EINTERRUPTED). */
int dfg_proxy_best_split(const double *X, int64_t n_samples, int64_t n_features,
                         const int64_t *rows, int64_t n_rows,
                         const double *mean, const double *var,
                         int64_t min_leaf, double var_floor,
                         int32_t *feature, double *threshold, double *gain,
                         int64_t *n_left, int32_t *missing_right, int n_threads,
                         const volatile int *stop);

/* Classification with soft targets: row j carries the reference's class
 * probabilities P[j, 0..C-1] (C = n_classes). The expected categorical
 * log-likelihood of a node is n_i sum_c p_c log p_c = -n_i H(p) with p the mean
 * of P over the node, and a split gains n H(p) - n_L H(p_L) - n_R H(p_R) >= 0.
 * Same sweep, missing values, tie rules and outputs as dfg_proxy_best_split.
 * P must be finite and >= 0 (rows need not sum to one exactly). */
int dfg_proxy_best_split_proba(const double *X, int64_t n_samples, int64_t n_features,
                               const int64_t *rows, int64_t n_rows,
                               const double *P, int64_t n_classes, int64_t min_leaf,
                               int32_t *feature, double *threshold, double *gain,
                               int64_t *n_left, int32_t *missing_right, int n_threads,
                               const volatile int *stop);

#endif
