/*
 * dfg_loglik.h - log-Bernoulli likelihood of the binary features (eq. 6):
 *
 *   log p(s | k) = sum_l s_l log eta_kl + (1 - s_l) log(1 - eta_kl)
 *                = base_k + sum_{l : s_l = 1} w_kl,
 *   base_k = sum_l log(1 - eta_kl),  w_kl = log eta_kl - log(1 - eta_kl).
 *
 * eta is K x L (component-major) and must lie in [eps, 1 - eps] (the M-step clamps
 * it there), so every term is finite. Two exact evaluation paths:
 *
 *  - rank path: splits of one feature are a thermometer code (dfg_ranks.h), so
 *    their sum is a prefix sum of w at the sample's rank. Cost O(N K D) per call
 *    after O(K L) table building, instead of O(N K L).
 *  - bit path: over the bit-packed s matrix (dfg_bits.h). Splits whose eta sits
 *    at a clamp (eps or 1 - eps) contribute a constant per match or mismatch, so
 *    they reduce to popcounts under a mask; the others are summed over set bits.
 */
#ifndef DFG_LOGLIK_H
#define DFG_LOGLIK_H

#include "dfg_common.h"

/*
 * Rank-path tables. table is (n_splits + 2 n_features) x K: entry
 * (feat_ptr[d] + 2d + r) * K + k = sum_{j < r} w_{k, feat_ptr[d] + j}, for
 * r = 0 .. m_d (m_d splits on feature d), and for the missing rank r = m_d + 1
 * the sum of w over the feature's splits that send missing values right
 * (missing_right, L flags; NULL: all go left). base (out, K) = sum_l log(1 - eta_kl).
 */
int dfg_rank_tables(const double *eta, int64_t n_components, int64_t n_splits,
                    const int64_t *feat_ptr, int64_t n_features, const uint8_t *missing_right,
                    double *table, double *base, int n_threads);

/* The same without checking that eta lies in (0, 1): for eta the M-step has just
   clamped (checking every entry is a pass over K x L values per iteration). */
int dfg_rank_tables_unchecked(const double *eta, int64_t n_components, int64_t n_splits,
                              const int64_t *feat_ptr, int64_t n_features,
                              const uint8_t *missing_right, double *table, double *base,
                              int n_threads);

/* out (N x K, row-major) = log p(s_n | k) from ranks and the tables above. */
int dfg_loglik_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                     const int64_t *feat_ptr, const double *table, const double *base,
                     int64_t n_components, double *out, int n_threads);

/* Same on rows n0..n1-1 only, writing out[(n - n0) * K + k]; single-threaded. */
void dfg_loglik_ranks_rows(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                           const int64_t *feat_ptr, const double *table, const double *base,
                           int64_t n_components, int64_t n0, int64_t n1, double *out);

/*
 * out (N x K) = log p(s_n | k) from the bit-packed rows S (N x ceil(L/64)).
 * eps gives the clamp values eps and 1 - eps whose splits take the popcount path.
 */
int dfg_loglik_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                    const double *eta, int64_t n_components, double eps,
                    double *out, int n_threads);

#endif
