/*
 * dfg_gate.h - the softmax gate of the EM-KL mixture of experts (Hara & Hayashi 2016,
 * model (3)):
 *
 *   q(k | x) = exp(w_k^T s) / sum_k' exp(w_k'^T s),   w_k in R^L,
 *
 * and the objective of its M-step, a weighted multinomial logistic regression with an
 * L2 penalty rho / 2 ||w||^2 (to be minimised):
 *
 *   f(w) = - sum_n sum_k beta_nk log q(k | x_n) + rho / 2 sum_kl w_kl^2,
 *   df/dw_kl = - sum_n (beta_nk - r_n q(k | x_n)) s_nl + rho w_kl,   r_n = sum_k beta_nk.
 *
 * Rank path only (dfg_ranks.h): the splits of one feature are a thermometer code, so
 * w_k^T s restricted to them is a prefix sum of w_k over the feature's sorted
 * thresholds at the sample's rank (the table layout of dfg_rank_tables, dfg_loglik.h),
 * and the gradient is the per-rank histogram of the residuals followed by a suffix
 * sum (dfg_split_stats_ranks, dfg_mstep.h). Cost O(N K D + K L) per evaluation, never
 * a dense N x L matrix. w is K x L, component-major; every sum over samples is
 * reduced in fixed blocks (dfg_common.h) or per feature in sample order, so results do
 * not depend on the thread count.
 */
#ifndef DFG_GATE_H
#define DFG_GATE_H

#include "dfg_common.h"

/*
 * table (out, (L + 2 D) x K): entry (feat_ptr[d] + 2 d + r) * K + k =
 * sum_{j < r} w_{k, feat_ptr[d] + j} for r = 0 .. m_d, and for the missing rank
 * r = m_d + 1 the sum of w over the feature's splits with missing_right set
 * (L flags; NULL: none).
 */
int dfg_gate_tables(const double *w, int64_t n_components, const int64_t *feat_ptr,
                    int64_t n_features, const uint8_t *missing_right, double *table,
                    int n_threads);

/* out (N x K) = log q(k | x_n). ranks: D x N thermometer ranks (dfg_ranks.h). */
int dfg_gate_log_prob(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                      const int64_t *feat_ptr, const uint8_t *missing_right, const double *w,
                      int64_t n_components, double *out, int n_threads);

/*
 * value (out) = f(w); grad (out, K x L) = its gradient; beta: N x K non-negative
 * weights (responsibilities). rho >= 0. stop: the caller's stop flag (dfg_common.h) or
 * NULL, read between the passes over the rows (DFG_EINTERRUPTED).
 */
int dfg_gate_objective(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                       const int64_t *feat_ptr, const uint8_t *missing_right,
                       const double *beta, const double *w, int64_t n_components, double rho,
                       double *value, double *grad, int n_threads, const volatile int *stop);

#endif
