#include "dfg_estep.h"

#include <math.h>
#include <stdlib.h>

/* Per-block partial sums: K column sums, then sum beta*logf, then sum beta*log(beta). */
static void block_terms(const double *logf, const double *beta, int64_t K,
                        int64_t n0, int64_t n1, double *partial) {
    for (int64_t j = 0; j < K + 2; j++) partial[j] = 0.0;
    for (int64_t n = n0; n < n1; n++) {
        const double *f = logf + n * K, *b = beta + n * K;
        for (int64_t k = 0; k < K; k++) {
            partial[k] += b[k];
            if (b[k] > 0.0) {
                partial[K] += b[k] * f[k];
                /* 1 log 1 = 0 adds nothing, and most rows are one-hot once the
                   components have separated: a quarter of the bound's time */
                if (b[k] != 1.0) partial[K + 1] += b[k] * log(b[k]);
            }
        }
    }
}

/* beta_n = softmax(logf_n - penalty) on rows n0..n1-1. */
static void block_softmax(const double *logf, const double *penalty, int64_t K,
                          int64_t n0, int64_t n1, double *beta) {
    for (int64_t n = n0; n < n1; n++) {
        const double *f = logf + n * K;
        double *b = beta + n * K;
        double top = -INFINITY;
        for (int64_t k = 0; k < K; k++) {
            b[k] = f[k] - penalty[k];
            if (b[k] > top) top = b[k];
        }
        double z = 0.0;
        for (int64_t k = 0; k < K; k++) {
            /* exp underflows to 0 below -745; skipping it avoids libm's slow path. */
            b[k] = b[k] - top > -745.0 ? exp(b[k] - top) : 0.0;
            z += b[k];
        }
        for (int64_t k = 0; k < K; k++) b[k] /= z;
    }
}

/* Sums the block partials in block order: identical for any thread count. */
static double reduce_bound(const double *partials, int64_t n_blocks, int64_t K,
                           double omega, double *colsum) {
    double fit = 0.0, neg_entropy = 0.0;
    for (int64_t k = 0; k < K; k++) colsum[k] = 0.0;
    for (int64_t b = 0; b < n_blocks; b++) {
        const double *p = partials + b * (K + 2);
        for (int64_t k = 0; k < K; k++) colsum[k] += p[k];
        fit += p[K];
        neg_entropy += p[K + 1];
    }
    double penalty = 0.0;
    for (int64_t k = 0; k < K; k++) penalty += log(colsum[k] + 1.0);
    return fit - omega * penalty - neg_entropy;
}

int dfg_lower_bound(const double *logf, const double *beta, int64_t n_samples,
                    int64_t n_components, double omega, double *colsum,
                    double *value, int n_threads) {
    if (n_samples < 0 || n_components < 1 || n_threads < 1 || omega < 0.0) return DFG_EINVAL;
    const int64_t K = n_components, n_blocks = dfg_n_blocks(n_samples);
    double *partials = (double *)malloc((size_t)((n_blocks > 0 ? n_blocks : 1) * (K + 2)) * sizeof(double));
    if (!partials) return DFG_ENOMEM;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        block_terms(logf, beta, K, n0, n1, partials + b * (K + 2));
    }
    *value = reduce_bound(partials, n_blocks, K, omega, colsum);
    free(partials);
    return DFG_OK;
}

/* Column sums of beta for rows n0..n1-1 into partial (K). */
static void block_colsum(const double *beta, int64_t K, int64_t n0, int64_t n1, double *partial) {
    for (int64_t k = 0; k < K; k++) partial[k] = 0.0;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t k = 0; k < K; k++) partial[k] += beta[n * K + k];
}

/* Row-scaled exponentials E_nk = exp(logf_nk - max_k logf_nk), computed once per
   E-step so that each update of eq. 35 costs multiplications, not exponentials. */
static void block_scaled_exp(const double *logf, int64_t K, int64_t n0, int64_t n1, double *E) {
    for (int64_t n = n0; n < n1; n++) {
        const double *f = logf + n * K;
        double top = -INFINITY;
        for (int64_t k = 0; k < K; k++) if (f[k] > top) top = f[k];
        for (int64_t k = 0; k < K; k++)
            E[n * K + k] = f[k] - top > -745.0 ? exp(f[k] - top) : 0.0;
    }
}

/* beta_n proportional to E_nk * scale_k. scale_k = exp(-(penalty_k - min penalty)) <= 1.
   A term dropped because E_nk underflowed is below e^-745 * scale_k; when the row
   sum is at least 1e-290 that is a relative error under 1e-30. Rows with a smaller
   sum (the components holding them are being truncated) take the exact path. */
static void block_scaled_update(const double *logf, const double *E, const double *scale,
                                const double *penalty, int64_t K, int64_t n0, int64_t n1,
                                double *beta) {
    for (int64_t n = n0; n < n1; n++) {
        const double *e = E + n * K;
        double *b = beta + n * K;
        double z = 0.0;
        for (int64_t k = 0; k < K; k++) {
            b[k] = e[k] * scale[k];
            z += b[k];
        }
        if (z >= 1e-290) {
            /* one division per row: K of them cost more than the rest of the update */
            const double inv = 1.0 / z;
            for (int64_t k = 0; k < K; k++) b[k] *= inv;
        } else {
            block_softmax(logf, penalty, K, n, n + 1, beta);
        }
    }
}

int dfg_estep(const double *logf, int64_t n_samples, int64_t n_components, double omega,
              int max_inner, double tol, double *beta, double *colsum, double *value,
              int *n_inner, double *scratch, int n_threads, const volatile int *stop) {
    if (n_samples < 0 || n_components < 1 || n_threads < 1 || omega < 0.0 || max_inner < 1)
        return DFG_EINVAL;
    const int64_t K = n_components, n_blocks = dfg_n_blocks(n_samples);
    double *partials = (double *)malloc((size_t)((n_blocks > 0 ? n_blocks : 1) * (K + 2)) * sizeof(double));
    double *penalty = (double *)malloc((size_t)(3 * K) * sizeof(double));
    double *owned = NULL, *E = scratch;
    if (omega > 0.0 && !E)
        E = owned = (double *)malloc((size_t)((n_samples > 0 ? n_samples : 1) * K) * sizeof(double));
    if (omega <= 0.0) E = NULL;
    if (!partials || !penalty || (omega > 0.0 && !E)) { free(partials); free(penalty); free(owned); return DFG_ENOMEM; }
    double *previous = penalty + K, *scale = penalty + 2 * K;
    /* eq. 35 reads beta only through its column sums: iterate on them, and stop
       when none moves by more than tol * N (the bound is computed once, after). */
    if (omega > 0.0) {
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t b = 0; b < n_blocks; b++) {
            int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
            block_colsum(beta, K, n0, n1, partials + b * K);
            block_scaled_exp(logf, K, n0, n1, E);
        }
        for (int64_t k = 0; k < K; k++) colsum[k] = 0.0;
        for (int64_t b = 0; b < n_blocks; b++)
            for (int64_t k = 0; k < K; k++) colsum[k] += partials[b * K + k];
    } else {
        for (int64_t k = 0; k < K; k++) colsum[k] = 0.0;
        max_inner = 1; /* EM: the softmax is the exact maximiser */
    }
    int it = 0;
    while (it < max_inner) {
        if (dfg_stop_requested(stop)) break;
        double low = INFINITY;
        for (int64_t k = 0; k < K; k++) {
            penalty[k] = omega / (colsum[k] + 1.0);
            previous[k] = colsum[k];
            if (penalty[k] < low) low = penalty[k];
        }
        for (int64_t k = 0; k < K; k++) scale[k] = exp(low - penalty[k]);
        #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
        for (int64_t b = 0; b < n_blocks; b++) {
            int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
            if (E) block_scaled_update(logf, E, scale, penalty, K, n0, n1, beta);
            else block_softmax(logf, penalty, K, n0, n1, beta);
            block_colsum(beta, K, n0, n1, partials + b * K);
        }
        double moved = 0.0;
        for (int64_t k = 0; k < K; k++) colsum[k] = 0.0;
        for (int64_t b = 0; b < n_blocks; b++)
            for (int64_t k = 0; k < K; k++) colsum[k] += partials[b * K + k];
        for (int64_t k = 0; k < K; k++) moved = fmax(moved, fabs(colsum[k] - previous[k]));
        it++;
        if (omega > 0.0 && moved <= tol * (double)n_samples) break;
    }
    *n_inner = it;
    free(partials);
    free(penalty);
    free(owned);
    if (dfg_stop_requested(stop)) return DFG_EINTERRUPTED;
    if (!value) return DFG_OK; /* the bound costs N K logarithms: only when asked */
    return dfg_lower_bound(logf, beta, n_samples, K, omega, colsum, value, n_threads);
}
