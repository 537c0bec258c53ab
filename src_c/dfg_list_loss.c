#include "dfg_list_loss.h"

#include <stdlib.h>

double dfg_pairwise_sum(const double *a, int64_t n) {
    /* numpy/_core/src/umath/loops_utils.h.src, @TYPE@_pairwise_sum: eight accumulators
     * over blocks of up to 128 values, halves (a multiple of 8) above that */
    if (n < 8) {
        double res = 0.0;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return dfg_pairwise_sum(a, n2) + dfg_pairwise_sum(a + n2, n - n2);
}

/* The first rule of the list (its position, 0 .. n_rules - 1) covering a row, n_rules
 * where none does. */
static inline int64_t first_rule(const uint8_t *row, const int64_t *order, int64_t n_rules) {
    int64_t r = 0;
    while (r < n_rules && !row[order[r]]) r++;
    return r;
}

static int regression_loss(const uint8_t *cover, int64_t n, int64_t n_columns,
                           const int64_t *order, int64_t n_rules, const double *y,
                           double *loss, int64_t *count) {
    const int64_t groups = n_rules + 1;
    double *sum = calloc((size_t)groups * 2, sizeof(double));
    int64_t *first = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    if (sum == NULL || first == NULL) {
        free(sum);
        free(first);
        return DFG_ENOMEM;
    }
    double *sse = sum + groups;
    for (int64_t i = 0; i < n; i++) {
        const int64_t g = first_rule(cover + i * n_columns, order, n_rules);
        first[i] = g;
        count[g]++;
        sum[g] += y[i];
    }
    for (int64_t g = 0; g < groups; g++) sum[g] /= (double)(count[g] > 0 ? count[g] : 1); /* the means */
    for (int64_t i = 0; i < n; i++) {
        const double residual = y[i] - sum[first[i]];
        sse[first[i]] += residual * residual;
    }
    *loss = dfg_pairwise_sum(sse, groups);
    free(sum);
    free(first);
    return DFG_OK;
}

static int classification_loss(const uint8_t *cover, int64_t n, int64_t n_columns,
                               const int64_t *order, int64_t n_rules, const int64_t *y_class,
                               int64_t n_classes, double *loss, int64_t *count) {
    const int64_t groups = n_rules + 1;
    if (n_classes > INT64_MAX / groups || groups * n_classes > (int64_t)(SIZE_MAX / sizeof(int64_t)))
        return DFG_EINVAL;
    int64_t *per_class = calloc((size_t)(groups * n_classes), sizeof(int64_t));
    if (per_class == NULL) return DFG_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        const int64_t g = first_rule(cover + i * n_columns, order, n_rules);
        count[g]++;
        per_class[g * n_classes + y_class[i]]++;
    }
    int64_t right = 0; /* rows of each group's majority class */
    for (int64_t g = 0; g < groups; g++) {
        int64_t most = 0;
        for (int64_t c = 0; c < n_classes; c++)
            if (per_class[g * n_classes + c] > most) most = per_class[g * n_classes + c];
        right += most;
    }
    *loss = (double)(n - right);
    free(per_class);
    return DFG_OK;
}

int dfg_list_targets_ok(int64_t n_samples, const double *y, const int64_t *y_class, int64_t n_classes) {
    if (n_samples < 0 || n_classes < 0) return 0;
    if (n_samples == 0) return 1;
    if (n_classes == 0) return y != NULL;
    if (y_class == NULL) return 0;
    for (int64_t i = 0; i < n_samples; i++)
        if (y_class[i] < 0 || y_class[i] >= n_classes) return 0;
    return 1;
}

int dfg_list_loss_unchecked(const uint8_t *cover, int64_t n_samples, int64_t n_columns,
                            const int64_t *order, int64_t n_rules, const double *y,
                            const int64_t *y_class, int64_t n_classes, double *loss, int *all_matched) {
    int64_t *count = calloc((size_t)n_rules + 1, sizeof(int64_t));
    if (count == NULL) return DFG_ENOMEM;
    const int status = n_classes == 0
        ? regression_loss(cover, n_samples, n_columns, order, n_rules, y, loss, count)
        : classification_loss(cover, n_samples, n_columns, order, n_rules, y_class, n_classes, loss,
                              count);
    if (status == DFG_OK) {
        *all_matched = 1;
        for (int64_t r = 0; r < n_rules; r++)
            if (count[r] == 0) *all_matched = 0;
    }
    free(count);
    return status;
}

int dfg_list_loss(const uint8_t *cover, int64_t n_samples, int64_t n_columns,
                  const int64_t *order, int64_t n_rules, const double *y,
                  const int64_t *y_class, int64_t n_classes, double *loss, int *all_matched) {
    if (n_samples < 0 || n_columns < 0 || n_rules < 0 || n_classes < 0 || loss == NULL
        || all_matched == NULL || n_rules >= INT64_MAX - 1
        || (size_t)n_rules + 1 > SIZE_MAX / (2 * sizeof(double))
        || (n_samples > 0 && n_rules > 0 && (cover == NULL || order == NULL))
        || (n_columns > 0 && n_samples > INT64_MAX / n_columns)
        || (size_t)n_samples > SIZE_MAX / sizeof(int64_t)
        || !dfg_list_targets_ok(n_samples, y, y_class, n_classes))
        return DFG_EINVAL;
    for (int64_t r = 0; r < n_rules; r++)
        if (order[r] < 0 || order[r] >= n_columns) return DFG_EINVAL;
    return dfg_list_loss_unchecked(cover, n_samples, n_columns, order, n_rules, y, y_class, n_classes, loss,
                                   all_matched);
}
