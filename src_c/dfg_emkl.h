/*
 * dfg_emkl.h - the E-step, M-step and lower bound of the EM-KL mixture of experts
 * (Hara & Hayashi 2016, sec. 4.3):
 *
 *   q(z, s | x) = sum_k q(z | k) q(s | k) q(k | x),
 *
 * q(s | k) the Bernoulli region eta_k (dfg_loglik.h), q(z | k) the Gaussian
 * (mean_k, precision_k) or, for classification, the categorical gamma_k of
 * dfg_model.h, and q(k | x) the softmax gate over the split bits (dfg_gate.h). There
 * is no mixing weight: params->alpha is not read (the M-step writes the mean
 * responsibilities there, the components' weights as printed). Rank path only.
 */
#ifndef DFG_EMKL_H
#define DFG_EMKL_H

#include "dfg_model.h"

/*
 * E-step with the bound (6). logf (out, N x K) = log q(z_n | k) + log q(s_n | k)
 * + log q(k | x_n) at params and w (K x L); bound (out) = (6) at the given beta,
 * sum_nk beta_nk logf_nk - sum_nk beta_nk log beta_nk; then beta (N x K, in place)
 * <- softmax_k(logf_n), the maximiser of (6) over q(u).
 */
int dfg_emkl_estep(const dfg_data *data, const dfg_params *params, const double *w,
                   double *beta, double *logf, double *bound, int n_threads,
                   const volatile int *stop);

/*
 * M-step closed forms from beta (N x K): eta_kl = sum_n beta_nk s_nl / sum_n beta_nk
 * clamped to [eps, 1 - eps]; mean_k, precision_k = sum beta / sum beta (z - mean)^2
 * (variance floored at var_floor), or gamma_kc = sum_n beta_nk [z_n = c] / sum_n beta_nk
 * (clamped at eps). alpha (out) = the mean responsibilities. The gate is fitted apart
 * (dfg_gate_objective).
 */
int dfg_emkl_mstep(const dfg_data *data, const double *beta, double eps, double var_floor,
                   dfg_params *params, int n_threads);

/*
 * out (N x K) = q(k | x_n, s_n) proportional to q(s_n | k) q(k | x_n): the weight of
 * expert k in the prediction at x_n. Needs no targets (data->y_* are not read);
 * eta must lie in (0, 1).
 */
int dfg_emkl_posterior(const dfg_data *data, const double *eta, const double *w,
                       int64_t n_components, double *out, int n_threads);

#endif
