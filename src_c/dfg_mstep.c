#include "dfg_mstep.h"
#include "dfg_portable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* num = the sums; with colsum non-NULL, eta = clamp(num * (1 / colsum_k), lo, hi) (0.5 where
   colsum_k is 0) written in the same pass instead. */
static int split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                             const int64_t *feat_ptr, const uint8_t *missing_right,
                             const double *beta, int64_t n_components, double *num,
                             const double *colsum, double lo, double hi, int n_threads);

int dfg_split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                          const int64_t *feat_ptr, const uint8_t *missing_right,
                          const double *beta, int64_t n_components, double *num, int n_threads) {
    return split_stats_ranks(ranks, n_samples, n_features, feat_ptr, missing_right, beta,
                             n_components, num, NULL, 0.0, 1.0, n_threads);
}

int dfg_split_eta_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                        const int64_t *feat_ptr, const uint8_t *missing_right,
                        const double *beta, int64_t n_components, const double *colsum,
                        double lo, double hi, double *eta, int n_threads) {
    if (!colsum || !(lo <= hi)) return DFG_EINVAL;
    return split_stats_ranks(ranks, n_samples, n_features, feat_ptr, missing_right, beta,
                             n_components, eta, colsum, lo, hi, n_threads);
}

static int split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                             const int64_t *feat_ptr, const uint8_t *missing_right,
                             const double *beta, int64_t n_components, double *num,
                             const double *colsum, double lo, double hi, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    const int64_t K = n_components, L = feat_ptr[n_features];
    int64_t max_m = 0;
    for (int64_t d = 0; d < n_features; d++) {
        int64_t m = feat_ptr[d + 1] - feat_ptr[d];
        if (m < 0) return DFG_EINVAL;
        if (m > max_m) max_m = m;
    }
    /* Once the components have separated, most beta_nk are exactly 0 (exp
       underflows): with a bit mask of each row's nonzero entries the histograms
       add only those. Adding 0.0 changes no sum, so both loops give identical
       results. */
    uint64_t *nonzero = NULL;
    if (K <= 64 && n_samples > 0) {
        nonzero = (uint64_t *)malloc((size_t)n_samples * sizeof(uint64_t));
        if (nonzero) {
            int64_t count = 0;
            for (int64_t n = 0; n < n_samples; n++) {
                uint64_t bits = 0;
                for (int64_t k = 0; k < K; k++) bits |= (uint64_t)(beta[n * K + k] != 0.0) << k;
                nonzero[n] = bits;
                count += dfg_popcount64(bits);
            }
            if (count > n_samples * K / 2) { free(nonzero); nonzero = NULL; }
        }
    }
    int status = DFG_OK;
    double *inv = NULL;
    if (colsum) {
        inv = (double *)malloc((size_t)K * sizeof(double));
        if (!inv) { free(nonzero); return DFG_ENOMEM; }
        for (int64_t k = 0; k < K; k++) inv[k] = colsum[k] > 0.0 ? 1.0 / colsum[k] : 0.0;
    }
    #pragma omp parallel num_threads(dfg_team(n_threads))
    {
        double *hist = (double *)malloc((size_t)((max_m + 2) * K) * sizeof(double));
        if (!hist) {
            #pragma omp atomic write
            status = DFG_ENOMEM;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t d = 0; d < n_features; d++) {
            int64_t m = feat_ptr[d + 1] - feat_ptr[d];
            if (!hist || m == 0) continue;
            memset(hist, 0, (size_t)((m + 2) * K) * sizeof(double));
            const int32_t *r = ranks + d * n_samples;
            if (nonzero) {
                for (int64_t n = 0; n < n_samples; n++) {
                    double *h = hist + (int64_t)r[n] * K;
                    const double *b = beta + n * K;
                    for (uint64_t bits = nonzero[n]; bits; bits &= bits - 1) {
                        int k = dfg_ctz64(bits);
                        h[k] += b[k];
                    }
                }
            } else {
                for (int64_t n = 0; n < n_samples; n++) {
                    double *h = hist + (int64_t)r[n] * K;
                    const double *b = beta + n * K;
                    for (int64_t k = 0; k < K; k++) h[k] += b[k];
                }
            }
            /* j-th threshold: s = 1 for ranks j+1 .. m, a suffix sum; missing values
               (rank m + 1) count where the split sends them right. */
            /* Suffix sums in place, row r = ranks r .. m, all components at once (K
               independent sums instead of one long chain); then each component's
               splits written contiguously. */
            for (int64_t r = m - 1; r >= 1; r--) {
                double *row = hist + r * K;
                const double *next = row + K;
                for (int64_t k = 0; k < K; k++) row[k] += next[k];
            }
            const double *missing = hist + (m + 1) * K;
            const uint8_t *mr = missing_right ? missing_right + feat_ptr[d] : NULL;
            for (int64_t k = 0; k < K; k++) {
                double *out = num + k * L + feat_ptr[d];
                const double *col = hist + K + k; /* the sum for split j is at row j + 1 */
                /* adding 0.0 (missing values go left) leaves a sum unchanged */
                const double miss = missing[k];
                if (!colsum) {
                    for (int64_t j = 0; j < m; j++)
                        out[j] = col[j * K] + (mr && mr[j] ? miss : 0.0);
                } else if (colsum[k] > 0.0) {
                    /* times 1 / colsum_k: a division per entry costs 15% of a FAB update */
                    const double scale = inv[k];
                    for (int64_t j = 0; j < m; j++) {
                        double e = (col[j * K] + (mr && mr[j] ? miss : 0.0)) * scale;
                        e = e < lo ? lo : e;
                        out[j] = e > hi ? hi : e;
                    }
                } else {
                    for (int64_t j = 0; j < m; j++) out[j] = 0.5;
                }
            }
        }
        free(hist);
    }
    free(nonzero);
    free(inv);
    return status;
}

int dfg_split_stats_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                         const double *beta, int64_t n_components, double *num,
                         int n_threads) {
    if (n_samples < 0 || n_splits < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    const int64_t K = n_components, n_words = dfg_n_words(n_splits);
    int status = DFG_OK;
    #pragma omp parallel num_threads(dfg_team(n_threads))
    {
        double *acc = (double *)malloc((size_t)(64 * K) * sizeof(double));
        if (!acc) {
            #pragma omp atomic write
            status = DFG_ENOMEM;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t w = 0; w < n_words; w++) {
            if (!acc) continue;
            memset(acc, 0, (size_t)(64 * K) * sizeof(double));
            for (int64_t n = 0; n < n_samples; n++) {
                uint64_t bits = S[n * n_words + w];
                const double *b = beta + n * K;
                while (bits) {
                    double *a = acc + (int64_t)dfg_ctz64(bits) * K;
                    for (int64_t k = 0; k < K; k++) a[k] += b[k];
                    bits &= bits - 1;
                }
            }
            int64_t l0 = w * 64, l1 = l0 + 64 < n_splits ? l0 + 64 : n_splits;
            for (int64_t l = l0; l < l1; l++)
                for (int64_t k = 0; k < K; k++) num[k * n_splits + l] = acc[(l - l0) * K + k];
        }
        free(acc);
    }
    return status;
}

/* Block-ordered weighted column sums: out_k = sum_n beta_nk v_n (v = NULL: v_n = 1),
   or with centre != NULL, sum_n beta_nk (v_n - centre_k)^2. */
static int weighted_sums(const double *beta, const double *v, const double *centre,
                         int64_t n_samples, int64_t K, double *out, int n_threads) {
    (void)n_threads; /* used only by the OpenMP pragma */
    int64_t n_blocks = dfg_n_blocks(n_samples);
    double *partials = (double *)calloc((size_t)((n_blocks > 0 ? n_blocks : 1) * K), sizeof(double));
    if (!partials) return DFG_ENOMEM;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        double *p = partials + b * K;
        for (int64_t n = n0; n < n1; n++) {
            const double *bn = beta + n * K;
            for (int64_t k = 0; k < K; k++) {
                double x = v ? v[n] : 1.0;
                if (centre) x = (x - centre[k]) * (x - centre[k]);
                p[k] += bn[k] * x;
            }
        }
    }
    for (int64_t k = 0; k < K; k++) out[k] = 0.0;
    for (int64_t b = 0; b < n_blocks; b++)
        for (int64_t k = 0; k < K; k++) out[k] += partials[b * K + k];
    free(partials);
    return DFG_OK;
}

int dfg_regression_stats(const double *y, const double *beta, int64_t n_samples,
                         int64_t n_components, double *colsum, double *mean,
                         double *sq_dev, int n_threads) {
    if (n_samples < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    const int64_t K = n_components;
    int status = weighted_sums(beta, NULL, NULL, n_samples, K, colsum, n_threads);
    if (status == DFG_OK) status = weighted_sums(beta, y, NULL, n_samples, K, mean, n_threads);
    if (status != DFG_OK) return status;
    for (int64_t k = 0; k < K; k++) mean[k] = colsum[k] > 0.0 ? mean[k] / colsum[k] : 0.0;
    return weighted_sums(beta, y, mean, n_samples, K, sq_dev, n_threads);
}

int dfg_class_stats(const int32_t *y, int64_t n_classes, const double *beta,
                    int64_t n_samples, int64_t n_components, double *counts,
                    int n_threads) {
    if (n_samples < 0 || n_components < 1 || n_classes < 1 || n_threads < 1) return DFG_EINVAL;
    for (int64_t n = 0; n < n_samples; n++)
        if (y[n] < 0 || y[n] >= n_classes) return DFG_EINVAL;
    const int64_t K = n_components, C = n_classes, n_blocks = dfg_n_blocks(n_samples);
    double *partials = (double *)calloc((size_t)((n_blocks > 0 ? n_blocks : 1) * K * C), sizeof(double));
    if (!partials) return DFG_ENOMEM;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t n0 = b * DFG_BLOCK, n1 = n0 + DFG_BLOCK < n_samples ? n0 + DFG_BLOCK : n_samples;
        double *p = partials + b * K * C;
        for (int64_t n = n0; n < n1; n++)
            for (int64_t k = 0; k < K; k++) p[k * C + y[n]] += beta[n * K + k];
    }
    for (int64_t j = 0; j < K * C; j++) counts[j] = 0.0;
    for (int64_t b = 0; b < n_blocks; b++)
        for (int64_t j = 0; j < K * C; j++) counts[j] += partials[b * K * C + j];
    free(partials);
    return DFG_OK;
}

int dfg_mstep(const dfg_data *data, const double *beta, const dfg_options *opt,
              dfg_params *params) {
    int status = dfg_check_data(data);
    if (status != DFG_OK) return status;
    const int64_t N = data->n_samples, K = params->n_components, L = data->n_splits;
    const int64_t C = data->n_classes;
    const int nt = opt->n_threads;
    if (K < 1 || nt < 1 || !(opt->eps > 0.0 && opt->eps < 0.5)) return DFG_EINVAL;
    double *colsum = (double *)malloc((size_t)(2 * K) * sizeof(double));
    if (!colsum) return DFG_ENOMEM;
    double *aux = colsum + K;
    if (C == 0) {
        status = dfg_regression_stats(data->y_value, beta, N, K, colsum, params->mean, aux, nt);
        for (int64_t k = 0; status == DFG_OK && k < K; k++) {
            double var = colsum[k] > 0.0 ? aux[k] / colsum[k] : 0.0;
            params->precision[k] = 1.0 / fmax(var, opt->var_floor);
        }
    } else {
        status = dfg_class_stats(data->y_class, C, beta, N, K, params->gamma, nt);
        for (int64_t k = 0; status == DFG_OK && k < K; k++) {
            double s = 0.0;
            for (int64_t c = 0; c < C; c++) s += params->gamma[k * C + c];
            colsum[k] = s;
            /* eq. 40; clamped at eps so that log gamma stays finite. */
            for (int64_t c = 0; c < C; c++)
                params->gamma[k * C + c] = s > 0.0 ? fmax(params->gamma[k * C + c] / s, opt->eps) : 1.0 / (double)C;
        }
    }
    /* eq. 41; eta clamped to [eps, 1 - eps], the constrained maximiser. The rank path
       divides and clamps while it writes the sums; the bit path in a pass after. */
    const double lo = opt->eps, hi = 1.0 - opt->eps;
    if (status == DFG_OK && dfg_stop_requested(opt->stop)) status = DFG_EINTERRUPTED;
    if (status == DFG_OK) {
        if (data->ranks)
            status = dfg_split_eta_ranks(data->ranks, N, data->n_features, data->feat_ptr,
                                         data->missing_right, beta, K, colsum, lo, hi,
                                         params->eta, nt);
        else
            status = dfg_split_stats_bits(data->bits, N, L, beta, K, params->eta, nt);
    }
    if (status == DFG_OK) {
        double total = 0.0;
        for (int64_t k = 0; k < K; k++) total += colsum[k];
        #pragma omp parallel for schedule(static, 1) num_threads(dfg_team(nt))
        for (int64_t k = 0; k < K; k++) {
            double s = colsum[k];
            double *eta = params->eta + k * L;
            if (!data->ranks) {
                const double inv = s > 0.0 ? 1.0 / s : 0.0; /* as the rank path does */
                for (int64_t l = 0; l < L; l++) {
                    double e = s > 0.0 ? eta[l] * inv : 0.5;
                    e = e < lo ? lo : e;
                    eta[l] = e > hi ? hi : e;
                }
            }
            params->alpha[k] = colsum[k] / total;
        }
    }
    free(colsum);
    return status;
}
