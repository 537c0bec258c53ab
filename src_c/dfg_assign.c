#include "dfg_assign.h"
#include "dfg_loglik.h"

#include <math.h>
#include <stdlib.h>

int dfg_map_assign(const dfg_data *data, const dfg_params *params, double eps,
                   int32_t *assign, int n_threads) {
    const int64_t N = data->n_samples, K = params->n_components;
    const int64_t L = data->n_splits, D = data->n_features;
    if (N < 0 || K < 1 || n_threads < 1 || (!data->ranks && !data->bits)) return DFG_EINVAL;
    if (data->feat_ptr[0] != 0 || data->feat_ptr[D] != L) return DFG_EINVAL;
    for (int64_t k = 0; k < K; k++)
        if (!(params->alpha[k] > 0.0)) return DFG_EINVAL;
    int status = DFG_OK;
    if (data->ranks) {
        /* Block by block: no N x K buffer, so scoring large inputs stays small. */
        double *table = (double *)malloc((size_t)((L + 2 * D) * K + 2 * K) * sizeof(double));
        if (!table) return DFG_ENOMEM;
        double *base = table + (L + 2 * D) * K;
        status = dfg_rank_tables(params->eta, K, L, data->feat_ptr, D, data->missing_right, table,
                                 base, n_threads);
        for (int64_t k = 0; status == DFG_OK && k < K; k++) base[k] += log(params->alpha[k]);
        /* tasks of up to 16,384 rows: long enough to keep a feature's table in cache
           across them (see DFG_LOGLIK_ROWS), small enough for a per-thread buffer */
        const int64_t rows = 16384;
        int64_t n_blocks = (N + rows - 1) / rows;
        if (status == DFG_OK) {
            #pragma omp parallel num_threads(dfg_team(n_threads))
            {
                double *buf = (double *)malloc((size_t)(rows * K) * sizeof(double));
                if (!buf) {
                    #pragma omp atomic write
                    status = DFG_ENOMEM;
                }
                #pragma omp for schedule(dynamic, 1)
                for (int64_t b = 0; b < n_blocks; b++) {
                    if (!buf) continue;
                    int64_t n0 = b * rows, n1 = n0 + rows < N ? n0 + rows : N;
                    dfg_loglik_ranks_rows(data->ranks, N, D, data->feat_ptr, table, base, K, n0, n1, buf);
                    for (int64_t n = n0; n < n1; n++) {
                        const double *row = buf + (n - n0) * K;
                        int32_t best = 0;
                        for (int64_t k = 1; k < K; k++) if (row[k] > row[best]) best = (int32_t)k;
                        assign[n] = best;
                    }
                }
                free(buf);
            }
        }
        free(table);
    } else {
        double *buf = (double *)malloc((size_t)((N > 0 ? N : 1) * K) * sizeof(double));
        if (!buf) return DFG_ENOMEM;
        status = dfg_loglik_bits(data->bits, N, L, params->eta, K, eps, buf, n_threads);
        for (int64_t n = 0; status == DFG_OK && n < N; n++) {
            int32_t best = 0;
            for (int64_t k = 0; k < K; k++) buf[n * K + k] += log(params->alpha[k]);
            for (int64_t k = 1; k < K; k++) if (buf[n * K + k] > buf[n * K + best]) best = (int32_t)k;
            assign[n] = best;
        }
        free(buf);
    }
    return status;
}
