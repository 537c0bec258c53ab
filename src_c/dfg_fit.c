#include "dfg_fit.h"
#include "dfg_estep.h"
#include "dfg_joint.h"
#include "dfg_mstep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Keeps the components with keep[k] != 0, moving them to the front in order. */
static void compact(const dfg_data *data, dfg_params *p, double *beta, const uint8_t *keep) {
    const int64_t N = data->n_samples, K = p->n_components, L = data->n_splits;
    const int64_t C = data->n_classes;
    int64_t K_new = 0;
    for (int64_t k = 0; k < K; k++) {
        if (!keep[k]) continue;
        if (K_new != k) {
            memmove(p->eta + K_new * L, p->eta + k * L, (size_t)L * sizeof(double));
            p->alpha[K_new] = p->alpha[k];
            if (C == 0) { p->mean[K_new] = p->mean[k]; p->precision[K_new] = p->precision[k]; }
            else memmove(p->gamma + K_new * C, p->gamma + k * C, (size_t)C * sizeof(double));
        }
        K_new++;
    }
    /* In place, forwards: every destination index is <= its source index. */
    for (int64_t n = 0; n < N; n++) {
        double row_sum = 0.0;
        int64_t j = 0;
        for (int64_t k = 0; k < K; k++) {
            if (!keep[k]) continue;
            double v = beta[n * K + k];
            beta[n * K_new + j++] = v;
            row_sum += v;
        }
        for (j = 0; j < K_new; j++)
            beta[n * K_new + j] = row_sum > 0.0 ? beta[n * K_new + j] / row_sum : 1.0 / (double)K_new;
    }
    p->n_components = K_new;
}

int dfg_fit_max_iterations(const dfg_options *opt) {
    int64_t cap = (int64_t)opt->n_anneal * opt->anneal_iter + (int64_t)opt->max_iter + 1;
    return cap > INT32_MAX ? -1 : (int)cap;
}

/* The missing-value flags a run on the rank path needs: those of the features where
   some training sample is missing. On the others no sample has the missing rank,
   so its table row is never read and its histogram row is zero; dropping their
   flags spares the tables a sum over those splits per component (a fifth of the
   table time on a forest trained without missing values) and changes no result.
   *out is NULL when no flag is left; *owned is what to free. */
static int fit_missing_right(const dfg_data *data, const uint8_t **out, uint8_t **owned) {
    const int64_t N = data->n_samples, D = data->n_features;
    *out = NULL;
    *owned = NULL;
    if (!data->ranks || !data->missing_right) {
        *out = data->missing_right;
        return DFG_OK;
    }
    uint8_t *flags = (uint8_t *)malloc((size_t)(data->n_splits > 0 ? data->n_splits : 1));
    if (!flags) return DFG_ENOMEM;
    int64_t n_kept = 0;
    for (int64_t d = 0; d < D; d++) {
        const int64_t l0 = data->feat_ptr[d], m = data->feat_ptr[d + 1] - l0;
        const int32_t *r = data->ranks + d * N;
        int any_flag = 0, any_missing = 0;
        for (int64_t j = 0; j < m; j++) any_flag |= data->missing_right[l0 + j] != 0;
        for (int64_t n = 0; n < N && any_flag && !any_missing; n++) any_missing = r[n] == m + 1;
        for (int64_t j = 0; j < m; j++) {
            flags[l0 + j] = any_missing && data->missing_right[l0 + j];
            n_kept += flags[l0 + j];
        }
    }
    if (n_kept == 0) {
        free(flags);
        return DFG_OK;
    }
    *out = *owned = flags;
    return DFG_OK;
}

static int check_options(const dfg_options *opt, const dfg_params *params) {
    if (opt->max_iter < 1 || opt->n_threads < 1 || params->n_components < 1) return DFG_EINVAL;
    if (opt->method != DFG_METHOD_FAB && opt->method != DFG_METHOD_EM) return DFG_EINVAL;
    if (!(opt->tol >= 0.0) || !(opt->delta >= 0.0) || !(opt->var_floor > 0.0)) return DFG_EINVAL;
    if (!(opt->eps > 0.0 && opt->eps < 0.5) || opt->penalty_splits < 0) return DFG_EINVAL;
    if (opt->warmup_iter < 0 || opt->warmup_inner < 1 || opt->max_inner < 1) return DFG_EINVAL;
    if (opt->n_anneal < 0 || (opt->n_anneal > 0 && (opt->anneal_iter < 1 || !opt->anneal_eps)))
        return DFG_EINVAL;
    for (int j = 0; j < opt->n_anneal; j++)
        if (!(opt->anneal_eps[j] >= opt->eps && opt->anneal_eps[j] < 0.5)) return DFG_EINVAL;
    return dfg_fit_max_iterations(opt) < 1 ? DFG_EINVAL : DFG_OK;
}

int dfg_fit(const dfg_data *data_in, const dfg_options *opt, dfg_params *params,
            double *beta, double *lower_bound, int32_t *phase, int *n_iter) {
    int status = dfg_check_data(data_in);
    if (status == DFG_OK) status = check_options(opt, params);
    if (status != DFG_OK) return status;
    dfg_data fit_data = *data_in;
    const dfg_data *data = &fit_data;
    uint8_t *owned_flags = NULL;
    status = fit_missing_right(data_in, &fit_data.missing_right, &owned_flags);
    if (status != DFG_OK) return status;
    const int64_t N = data->n_samples, K_max = params->n_components, L = data->n_splits;
    const int64_t penalty_splits = opt->penalty_splits > 0 ? opt->penalty_splits : L;
    const double omega = opt->method == DFG_METHOD_FAB ? dfg_omega_splits(data, penalty_splits) : 0.0;
    const int cap = dfg_fit_max_iterations(opt);
    /* logf and the E-step's workspace, allocated once: fresh N x K buffers every
       iteration cost page faults (10% of a 1e6-row run). */
    double *logf = (double *)malloc((size_t)(2 * N * K_max) * sizeof(double));
    double *tables = (double *)malloc((size_t)((L + 2 * data->n_features) * K_max + K_max) * sizeof(double));
    double *colsum = (double *)malloc((size_t)K_max * sizeof(double));
    uint8_t *keep = (uint8_t *)malloc((size_t)K_max);
    if (!logf || !tables || !colsum || !keep) {
        free(logf); free(tables); free(colsum); free(keep); free(owned_flags);
        return DFG_ENOMEM;
    }
    double *scratch = logf + N * K_max;
    dfg_options step = *opt; /* step.eps: the clamp of the current phase */
    int ph = 0, ph_start = 0;
    step.eps = opt->n_anneal ? opt->anneal_eps[0] : opt->eps;
    for (int64_t j = 0; j < K_max * L; j++) {
        if (params->eta[j] != params->eta[j]) status = DFG_EINVAL; /* NaN: no clamp fixes it */
        params->eta[j] = clamp(params->eta[j], step.eps, 1.0 - step.eps);
    }
    int t = 0;
    for (; t < cap && status == DFG_OK; t++) {
        const int64_t K = params->n_components;
        if (opt->live_threads && *opt->live_threads >= 1) step.n_threads = *opt->live_threads;
        const int n_threads = step.n_threads;
        /* the stop flag between the stages: each is at most a few passes over the rows */
        if (dfg_stop_requested(opt->stop)) { status = DFG_EINTERRUPTED; break; }
        status = dfg_log_joint_clamped(data, params, logf, tables, n_threads);
        if (status != DFG_OK) break;
        /* Bound at (q_t, Pi_t): within a phase the E-step and the M-step each raise it. */
        status = dfg_lower_bound(logf, beta, N, K, omega, colsum, &lower_bound[t], n_threads);
        if (status == DFG_OK && dfg_stop_requested(opt->stop)) status = DFG_EINTERRUPTED;
        if (status != DFG_OK) break;
        phase[t] = ph;
        int converged = t > ph_start &&
            lower_bound[t] - lower_bound[t - 1] < opt->tol * fmax(1.0, fabs(lower_bound[t - 1]));
        if (ph == opt->n_anneal) {
            /* final phase: stop after max_iter updates (the bound at t follows the last) */
            if (converged || t - ph_start >= opt->max_iter) { t++; break; }
        } else if (converged || t - ph_start + 1 >= opt->anneal_iter) {
            /* this iteration's M-step already uses the next phase's clamp */
            ph++;
            ph_start = t + 1;
            step.eps = ph < opt->n_anneal ? opt->anneal_eps[ph] : opt->eps;
        }
        /* In the warm-up the E-step makes only a few updates: the parameters are still
           near their random start, and iterating eq. 35 to convergence on them
           truncates components before the M-step has given them a shape. */
        int max_inner = t < opt->warmup_iter ? opt->warmup_inner : opt->max_inner;
        int n_inner = 0;
        status = dfg_estep(logf, N, K, omega, max_inner, opt->tol, beta, colsum, NULL, &n_inner,
                           scratch, n_threads, opt->stop);
        if (status != DFG_OK) break;
        if (opt->method == DFG_METHOD_FAB) {
            /* Algorithm 1: remove k when (1/N) sum_n q(u_k) < delta. */
            int64_t n_keep = 0;
            for (int64_t k = 0; k < K; k++) {
                keep[k] = colsum[k] / (double)N >= opt->delta;
                n_keep += keep[k];
            }
            if (n_keep == 0) { /* delta above every share: keep the largest component */
                int64_t top = 0;
                for (int64_t k = 1; k < K; k++) if (colsum[k] > colsum[top]) top = k;
                keep[top] = 1;
                n_keep = 1;
            }
            if (n_keep < K) compact(data, params, beta, keep);
        }
        if (dfg_stop_requested(opt->stop)) { status = DFG_EINTERRUPTED; break; }
        status = dfg_mstep(data, beta, &step, params);
    }
    *n_iter = t;
    free(logf);
    free(tables);
    free(colsum);
    free(keep);
    free(owned_flags);
    return status;
}
