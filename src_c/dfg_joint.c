#include "dfg_joint.h"
#include "dfg_loglik.h"

#include <math.h>
#include <stdlib.h>

#define DFG_TWO_PI 6.283185307179586476925286766559

/* log p(s | k) for all rows into out (N x K). workspace: (L + 2 D) * K + K doubles for
   the rank tables, or NULL to allocate them. eta_clamped: eta comes from the fit's clamp
   or M-step, so the tables skip checking it. */
static int log_regions(const dfg_data *data, const dfg_params *p, double eps, double *out,
                       double *workspace, int eta_clamped, int n_threads) {
    const int64_t K = p->n_components, L = data->n_splits, D = data->n_features;
    if (!data->ranks)
        return dfg_loglik_bits(data->bits, data->n_samples, L, p->eta, K, eps, out, n_threads);
    double *owned = NULL, *table = workspace;
    if (!table) table = owned = (double *)malloc((size_t)((L + 2 * D) * K + K) * sizeof(double));
    if (!table) return DFG_ENOMEM;
    double *base = table + (L + 2 * D) * K;
    int status = eta_clamped
        ? dfg_rank_tables_unchecked(p->eta, K, L, data->feat_ptr, D, data->missing_right, table,
                                    base, n_threads)
        : dfg_rank_tables(p->eta, K, L, data->feat_ptr, D, data->missing_right, table, base,
                          n_threads);
    if (status == DFG_OK)
        status = dfg_loglik_ranks(data->ranks, data->n_samples, D, data->feat_ptr, table, base,
                                  K, out, n_threads);
    free(owned);
    return status;
}

static int log_joint(const dfg_data *data, const dfg_params *params, double *logf,
                     double *workspace, int eta_clamped, int n_threads) {
    int status = dfg_check_data(data);
    if (status != DFG_OK) return status;
    const int64_t N = data->n_samples, K = params->n_components, C = data->n_classes;
    if (K < 1 || n_threads < 1) return DFG_EINVAL;
    /* eps only selects the popcount path of the bit kernel; any clamp value works. */
    status = log_regions(data, params, 1e-10, logf, workspace, eta_clamped, n_threads);
    if (status != DFG_OK) return status;
    double *extra = (double *)malloc((size_t)(K * (C > 0 ? C + 1 : 3)) * sizeof(double));
    if (!extra) return DFG_ENOMEM;
    for (int64_t k = 0; k < K; k++) {
        if (!(params->alpha[k] > 0.0)) { free(extra); return DFG_EINVAL; }
        extra[k] = log(params->alpha[k]);
    }
    if (C == 0) {
        /* eq. 8, Gaussian: 0.5 log(lambda / 2 pi) - 0.5 lambda (y - mu)^2 */
        for (int64_t k = 0; k < K; k++) {
            if (!(params->precision[k] > 0.0)) { free(extra); return DFG_EINVAL; }
            extra[K + k] = 0.5 * log(params->precision[k] / DFG_TWO_PI);
        }
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) {
                double r = data->y_value[n] - params->mean[k];
                logf[n * K + k] += extra[k] + extra[K + k] - 0.5 * params->precision[k] * r * r;
            }
    } else {
        /* eq. 8, categorical: log gamma_{k, y_n}; gamma must be > 0 where used. */
        double *lg = extra + K;
        for (int64_t j = 0; j < K * C; j++)
            lg[j] = params->gamma[j] > 0.0 ? log(params->gamma[j]) : -INFINITY;
        for (int64_t n = 0; n < N; n++)
            if (data->y_class[n] < 0 || data->y_class[n] >= C) { free(extra); return DFG_EINVAL; }
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++)
                logf[n * K + k] += extra[k] + lg[k * C + data->y_class[n]];
    }
    free(extra);
    return DFG_OK;
}

int dfg_log_joint(const dfg_data *data, const dfg_params *params, double *logf, int n_threads) {
    return log_joint(data, params, logf, NULL, 0, n_threads);
}

int dfg_log_joint_clamped(const dfg_data *data, const dfg_params *params, double *logf,
                          double *workspace, int n_threads) {
    return log_joint(data, params, logf, workspace, 1, n_threads);
}
