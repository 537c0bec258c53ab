/*
 * dfg_estep.h - E-step of FAB inference (Hara & Hayashi 2017, eq. 13, App. C
 * eq. 33-35) and of EM (App. A, eq. 17), and the lower bound (eq. 12).
 *
 * logf is N x K with log f_nk = log p(y_n | k) + log p(s_n | k) + log alpha_k.
 * beta is N x K with rows summing to 1 (the responsibilities q(u_k^(n))).
 */
#ifndef DFG_ESTEP_H
#define DFG_ESTEP_H

#include "dfg_common.h"

/*
 * Lower bound (eq. 12; with omega = 0 the EM bound, eq. 16):
 *   sum_nk beta_nk log f_nk - omega sum_k log(sum_n beta_nk + 1) - sum_nk beta_nk log beta_nk.
 * colsum (out, K) receives sum_n beta_nk.
 */
int dfg_lower_bound(const double *logf, const double *beta, int64_t n_samples,
                    int64_t n_components, double omega, double *colsum,
                    double *value, int n_threads);

/*
 * E-step. With omega > 0 (FAB) iterates eq. 35,
 *   beta_nk <- softmax_k(log f_nk - omega / (sum_n beta_nk + 1)),
 * starting from the given beta, until no column sum sum_n beta_nk moves by more
 * than tol * N (the update depends on beta only through them) or after
 * max_inner updates; each update raises the bound (App. C). With omega = 0 it is the exact EM update (one softmax).
 * beta is updated in place; colsum (out, K) = sum_n beta_nk; value (out, may be
 * NULL) is the bound after the last update; n_inner (out) the number of updates.
 * scratch: N x K doubles of workspace for FAB, or NULL to allocate it per call.
 * stop (may be NULL): read before every update; DFG_EINTERRUPTED once it is set.
 */
int dfg_estep(const double *logf, int64_t n_samples, int64_t n_components, double omega,
              int max_inner, double tol, double *beta, double *colsum, double *value,
              int *n_inner, double *scratch, int n_threads, const volatile int *stop);

#endif
