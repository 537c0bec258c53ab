#include "dfg_emkl.h"
#include "dfg_estep.h"
#include "dfg_gate.h"
#include "dfg_joint.h"
#include "dfg_loglik.h"
#include "dfg_mstep.h"

#include <math.h>
#include <stdlib.h>

/* out (N x K) += log q(k | x_n) */
static int add_gate(const dfg_data *data, const double *w, int64_t K, double *out,
                    int n_threads) {
    const int64_t N = data->n_samples;
    double *gate = (double *)malloc((size_t)(N * K) * sizeof(double));
    if (!gate) return DFG_ENOMEM;
    int status = dfg_gate_log_prob(data->ranks, N, data->n_features, data->feat_ptr,
                                   data->missing_right, w, K, gate, n_threads);
    if (status == DFG_OK) {
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t j = 0; j < N * K; j++) out[j] += gate[j];
    }
    free(gate);
    return status;
}

int dfg_emkl_estep(const dfg_data *data, const dfg_params *params, const double *w,
                   double *beta, double *logf, double *bound, int n_threads,
                   const volatile int *stop) {
    int status = dfg_check_data(data);
    if (status != DFG_OK) return status;
    const int64_t N = data->n_samples, K = params->n_components;
    if (!data->ranks || K < 1 || n_threads < 1) return DFG_EINVAL;
    /* log q(z|k) + log q(s|k) by the mixture's joint with every alpha_k = 1 */
    double *ones = (double *)malloc((size_t)(2 * K) * sizeof(double));
    if (!ones) return DFG_ENOMEM;
    double *colsum = ones + K;
    for (int64_t k = 0; k < K; k++) ones[k] = 1.0;
    dfg_params p = *params;
    p.alpha = ones;
    /* the stop flag between the passes over the rows */
    status = dfg_stop_requested(stop) ? DFG_EINTERRUPTED : dfg_log_joint(data, &p, logf, n_threads);
    if (status == DFG_OK && dfg_stop_requested(stop)) status = DFG_EINTERRUPTED;
    if (status == DFG_OK) status = add_gate(data, w, K, logf, n_threads);
    if (status == DFG_OK && dfg_stop_requested(stop)) status = DFG_EINTERRUPTED;
    if (status == DFG_OK)
        status = dfg_lower_bound(logf, beta, N, K, 0.0, colsum, bound, n_threads);
    int n_inner = 0;
    if (status == DFG_OK)
        status = dfg_estep(logf, N, K, 0.0, 1, 0.0, beta, colsum, NULL, &n_inner, NULL,
                           n_threads, stop);
    free(ones);
    return status;
}

int dfg_emkl_mstep(const dfg_data *data, const double *beta, double eps, double var_floor,
                   dfg_params *params, int n_threads) {
    if (!data->ranks) return DFG_EINVAL;
    dfg_options o = {0};
    o.method = DFG_METHOD_EM;
    o.max_iter = 1;
    o.eps = eps;
    o.var_floor = var_floor;
    o.warmup_inner = o.max_inner = o.anneal_iter = 1;
    o.n_threads = n_threads;
    if (!(var_floor > 0.0)) return DFG_EINVAL;
    return dfg_mstep(data, beta, &o, params);
}

int dfg_emkl_posterior(const dfg_data *data, const double *eta, const double *w,
                       int64_t n_components, double *out, int n_threads) {
    const int64_t N = data->n_samples, K = n_components, L = data->n_splits;
    const int64_t D = data->n_features;
    if (N < 0 || K < 1 || n_threads < 1 || !data->ranks) return DFG_EINVAL;
    if (data->feat_ptr[0] != 0 || data->feat_ptr[D] != L) return DFG_EINVAL;
    double *table = (double *)malloc((size_t)((L + 2 * D) * K + K) * sizeof(double));
    if (!table) return DFG_ENOMEM;
    double *base = table + (L + 2 * D) * K;
    int status = dfg_rank_tables(eta, K, L, data->feat_ptr, D, data->missing_right, table, base,
                                 n_threads);
    if (status == DFG_OK && N > 0)
        status = dfg_loglik_ranks(data->ranks, N, D, data->feat_ptr, table, base, K, out,
                                  n_threads);
    free(table);
    if (status == DFG_OK && N > 0) status = add_gate(data, w, K, out, n_threads);
    if (status != DFG_OK || N == 0) return status;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t n = 0; n < N; n++) {
        double *a = out + n * K;
        double top = -INFINITY, z = 0.0;
        for (int64_t k = 0; k < K; k++) top = a[k] > top ? a[k] : top;
        for (int64_t k = 0; k < K; k++) {
            a[k] = exp(a[k] - top);
            z += a[k];
        }
        for (int64_t k = 0; k < K; k++) a[k] /= z;
    }
    return DFG_OK;
}
