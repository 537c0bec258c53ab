/*
 * dfg_joint.h - the joint log-likelihood of the mixture model (eq. 9):
 *   log f_nk = log p(y_n | k) + log p(s_n | k) + log alpha_k,
 * log p(s | k) by the rank or bit path of dfg_loglik.h, log p(y | k) by eq. 8.
 */
#ifndef DFG_JOINT_H
#define DFG_JOINT_H

#include "dfg_model.h"

/* logf (out, N x K) = log f_nk; checks the data and that eta lies in (0, 1). */
int dfg_log_joint(const dfg_data *data, const dfg_params *params, double *logf, int n_threads);

/* The same for eta the fit has just clamped to [eps, 1 - eps], whose check (a pass
   over K x L values per iteration) is skipped. workspace: (L + 2 D) * K + K doubles
   for the rank tables, or NULL to allocate them. */
int dfg_log_joint_clamped(const dfg_data *data, const dfg_params *params, double *logf,
                          double *workspace, int n_threads);

#endif
