/*
 * dfg_fit.h - one FAB (Algorithm 1) or EM (App. A) run of the defrag mixture
 * model (dfg_model.h): the driver that alternates the joint likelihood
 * (dfg_joint.h), the lower bound and E-step (dfg_estep.h), FAB's truncation of
 * components and the M-step (dfg_mstep.h), with an annealed clamp.
 */
#ifndef DFG_FIT_H
#define DFG_FIT_H

#include "dfg_model.h"

/* Bound evaluations a run can make: n_anneal * anneal_iter + max_iter + 1 (-1 if too many). */
int dfg_fit_max_iterations(const dfg_options *opt);

/*
 * One run. In: params (initial, K_max components) and beta (N x K_max initial
 * responsibilities). Out: params and beta compacted to the K surviving
 * components; lower_bound[t] the bound (eq. 12, or eq. 16 for EM) at the start
 * of outer iteration t < *n_iter, phase[t] its phase (0 .. n_anneal, n_anneal
 * being the final one). Within a phase the bound never decreases (App. C);
 * both arrays must hold dfg_fit_max_iterations(opt) values.
 * With opt->stop set during the run it returns DFG_EINTERRUPTED (params, beta and
 * the trace then hold a run cut short, to be discarded).
 */
int dfg_fit(const dfg_data *data, const dfg_options *opt, dfg_params *params,
            double *beta, double *lower_bound, int32_t *phase, int *n_iter);

#endif
