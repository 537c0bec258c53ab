#include "dfg_gate.h"
#include "dfg_loglik.h"
#include "dfg_mstep.h"

#include <math.h>
#include <stdlib.h>

static int check_layout(int64_t n_samples, int64_t n_features, const int64_t *feat_ptr,
                        int64_t n_components, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    if (feat_ptr[0] != 0) return DFG_EINVAL;
    for (int64_t d = 0; d < n_features; d++)
        if (feat_ptr[d + 1] < feat_ptr[d]) return DFG_EINVAL;
    return DFG_OK;
}

int dfg_gate_tables(const double *w, int64_t n_components, const int64_t *feat_ptr,
                    int64_t n_features, const uint8_t *missing_right, double *table,
                    int n_threads) {
    int status = check_layout(0, n_features, feat_ptr, n_components, n_threads);
    if (status != DFG_OK) return status;
    const int64_t K = n_components, L = feat_ptr[n_features];
    (void)n_threads; /* used only by the OpenMP pragma */
    #pragma omp parallel for schedule(dynamic, 1) num_threads(dfg_team(n_threads))
    for (int64_t d = 0; d < n_features; d++) {
        const int64_t l0 = feat_ptr[d], m = feat_ptr[d + 1] - l0;
        double *block = table + (l0 + 2 * d) * K;
        for (int64_t k = 0; k < K; k++) {
            const double *wk = w + k * L + l0;
            double a = 0.0, miss = 0.0;
            block[k] = 0.0;
            for (int64_t j = 0; j < m; j++) {
                a += wk[j];
                block[(j + 1) * K + k] = a;
                if (missing_right && missing_right[l0 + j]) miss += wk[j];
            }
            block[(m + 1) * K + k] = miss;
        }
    }
    return DFG_OK;
}

/* Scores a_nk = w_k^T s_n into out (N x K); table: (L + 2 D) * K + K doubles of workspace
   (its last K entries are the zero base of dfg_loglik_ranks). */
static int gate_scores(const int32_t *ranks, int64_t N, int64_t D, const int64_t *feat_ptr,
                       const uint8_t *missing_right, const double *w, int64_t K, double *table,
                       double *out, int n_threads) {
    const int64_t L = feat_ptr[D];
    double *base = table + (L + 2 * D) * K;
    for (int64_t k = 0; k < K; k++) base[k] = 0.0;
    int status = dfg_gate_tables(w, K, feat_ptr, D, missing_right, table, n_threads);
    if (status == DFG_OK && N > 0)
        status = dfg_loglik_ranks(ranks, N, D, feat_ptr, table, base, K, out, n_threads);
    return status;
}

/* log sum_k exp(a_k) of one row, stable. */
static double row_logsumexp(const double *a, int64_t K) {
    double top = -INFINITY;
    for (int64_t k = 0; k < K; k++) top = a[k] > top ? a[k] : top;
    double z = 0.0;
    for (int64_t k = 0; k < K; k++) z += exp(a[k] - top);
    return top + log(z);
}

int dfg_gate_log_prob(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                      const int64_t *feat_ptr, const uint8_t *missing_right, const double *w,
                      int64_t n_components, double *out, int n_threads) {
    int status = check_layout(n_samples, n_features, feat_ptr, n_components, n_threads);
    if (status != DFG_OK) return status;
    const int64_t K = n_components, L = feat_ptr[n_features], N = n_samples;
    double *table = (double *)malloc((size_t)((L + 2 * n_features) * K + K) * sizeof(double));
    if (!table) return DFG_ENOMEM;
    status = gate_scores(ranks, N, n_features, feat_ptr, missing_right, w, K, table, out,
                         n_threads);
    free(table);
    if (status != DFG_OK) return status;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t n = 0; n < N; n++) {
        double *a = out + n * K;
        const double lse = row_logsumexp(a, K);
        for (int64_t k = 0; k < K; k++) a[k] -= lse;
    }
    return DFG_OK;
}

int dfg_gate_objective(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                       const int64_t *feat_ptr, const uint8_t *missing_right,
                       const double *beta, const double *w, int64_t n_components, double rho,
                       double *value, double *grad, int n_threads, const volatile int *stop) {
    int status = check_layout(n_samples, n_features, feat_ptr, n_components, n_threads);
    if (status != DFG_OK) return status;
    if (!(rho >= 0.0)) return DFG_EINVAL;
    const int64_t K = n_components, L = feat_ptr[n_features], N = n_samples, D = n_features;
    const int64_t n_blocks = dfg_n_blocks(N);
    double *table = (double *)malloc((size_t)((L + 2 * D) * K + K) * sizeof(double));
    double *resid = (double *)malloc((size_t)(N * K > 0 ? N * K : 1) * sizeof(double));
    double *partial = (double *)malloc((size_t)(n_blocks > 0 ? n_blocks : 1) * sizeof(double));
    if (!table || !resid || !partial) {
        free(table); free(resid); free(partial);
        return DFG_ENOMEM;
    }
    if (dfg_stop_requested(stop)) status = DFG_EINTERRUPTED;
    if (status == DFG_OK)
        status = gate_scores(ranks, N, D, feat_ptr, missing_right, w, K, table, resid, n_threads);
    if (status == DFG_OK && dfg_stop_requested(stop)) status = DFG_EINTERRUPTED;
    if (status == DFG_OK) {
        /* per row: sum_k beta_nk log q_nk into the block's partial, and the residual
           beta_nk - r_n q_nk in place of the scores */
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t b = 0; b < n_blocks; b++) {
            const int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < N ? n0 + DFG_BLOCK : N;
            double acc = 0.0;
            for (int64_t n = n0; n < n1; n++) {
                double *a = resid + n * K;
                const double *bn = beta + n * K;
                const double lse = row_logsumexp(a, K);
                double r = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    const double lq = a[k] - lse;
                    r += bn[k];
                    if (bn[k] != 0.0) acc += bn[k] * lq;
                    a[k] = lq;
                }
                for (int64_t k = 0; k < K; k++) a[k] = bn[k] - r * exp(a[k]);
            }
            partial[b] = acc;
        }
        double fit = 0.0;
        for (int64_t b = 0; b < n_blocks; b++) fit += partial[b];
        if (dfg_stop_requested(stop))
            status = DFG_EINTERRUPTED;
        else if (N > 0 && L > 0)
            status = dfg_split_stats_ranks(ranks, N, D, feat_ptr, missing_right, resid, K, grad,
                                           n_threads);
        else
            for (int64_t j = 0; j < K * L; j++) grad[j] = 0.0;
        double norm = 0.0;
        for (int64_t j = 0; j < K * L; j++) {
            norm += w[j] * w[j];
            grad[j] = rho * w[j] - grad[j];
        }
        *value = -fit + 0.5 * rho * norm;
    }
    free(table);
    free(resid);
    free(partial);
    return status;
}
