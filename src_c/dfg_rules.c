#include "dfg_rules.h"

static int check_boxes(const double *lower, const double *upper, int64_t n_rules,
                       int64_t n_features) {
    for (int64_t j = 0; j < n_rules * n_features; j++)
        if (lower[j] != lower[j] || upper[j] != upper[j]) return DFG_EINVAL; /* NaN */
    return DFG_OK;
}

static inline int in_box(const double *x, const double *lo, const double *hi, int64_t D) {
    for (int64_t d = 0; d < D; d++)
        if (!(x[d] > lo[d] && x[d] <= hi[d])) return 0;
    return 1;
}

int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const double *lower, const double *upper, int64_t n_rules,
                    uint8_t *covers, int n_threads) {
    if (n_samples < 0 || n_features < 1 || n_rules < 0 || n_threads < 1) return DFG_EINVAL;
    if (check_boxes(lower, upper, n_rules, n_features) != DFG_OK) return DFG_EINVAL;
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t n = 0; n < n_samples; n++)
        for (int64_t r = 0; r < n_rules; r++)
            covers[n * n_rules + r] = (uint8_t)in_box(X + n * n_features, lower + r * n_features,
                                                      upper + r * n_features, n_features);
    return DFG_OK;
}

int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const double *lower, const double *upper, int64_t n_rules,
                    int32_t *first, int n_threads) {
    if (n_samples < 0 || n_features < 1 || n_rules < 0 || n_rules > INT32_MAX || n_threads < 1)
        return DFG_EINVAL;
    if (check_boxes(lower, upper, n_rules, n_features) != DFG_OK) return DFG_EINVAL;
    #pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int64_t n = 0; n < n_samples; n++) {
        int32_t hit = -1;
        for (int64_t r = 0; r < n_rules && hit < 0; r++)
            if (in_box(X + n * n_features, lower + r * n_features, upper + r * n_features, n_features))
                hit = (int32_t)r;
        first[n] = hit;
    }
    return DFG_OK;
}
