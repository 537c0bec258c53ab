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
                partial[K + 1] += b[k] * log(b[k]);
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
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        block_terms(logf, beta, K, n0, n1, partials + b * (K + 2));
    }
    *value = reduce_bound(partials, n_blocks, K, omega, colsum);
    free(partials);
    return DFG_OK;
}

int dfg_estep(const double *logf, int64_t n_samples, int64_t n_components, double omega,
              int max_inner, double tol, double *beta, double *colsum, double *value,
              int *n_inner, int n_threads) {
    if (n_samples < 0 || n_components < 1 || n_threads < 1 || omega < 0.0 || max_inner < 1)
        return DFG_EINVAL;
    const int64_t K = n_components, n_blocks = dfg_n_blocks(n_samples);
    double *partials = (double *)malloc((size_t)((n_blocks > 0 ? n_blocks : 1) * (K + 2)) * sizeof(double));
    double *penalty = (double *)malloc((size_t)K * sizeof(double));
    if (!partials || !penalty) { free(partials); free(penalty); return DFG_ENOMEM; }
    int status = DFG_OK;
    double previous = 0.0;
    if (omega > 0.0) {
        status = dfg_lower_bound(logf, beta, n_samples, K, omega, colsum, &previous, n_threads);
    } else {
        for (int64_t k = 0; k < K; k++) colsum[k] = 0.0;
        max_inner = 1; /* EM: the softmax is the exact maximiser */
    }
    int it = 0;
    while (status == DFG_OK && it < max_inner) {
        for (int64_t k = 0; k < K; k++) penalty[k] = omega / (colsum[k] + 1.0);
        #pragma omp parallel for schedule(static) num_threads(n_threads)
        for (int64_t b = 0; b < n_blocks; b++) {
            int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
            block_softmax(logf, penalty, K, n0, n1, beta);
            block_terms(logf, beta, K, n0, n1, partials + b * (K + 2));
        }
        double current = reduce_bound(partials, n_blocks, K, omega, colsum);
        it++;
        *value = current;
        if (omega > 0.0 && current - previous < tol * fmax(1.0, fabs(previous))) break;
        previous = current;
    }
    *n_inner = it;
    free(partials);
    free(penalty);
    return status;
}
