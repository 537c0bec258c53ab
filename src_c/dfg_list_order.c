#include "dfg_list_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg_list_loss.h"

typedef struct {
    const uint8_t *cover;
    int64_t n, R;
    const double *y;
    const int64_t *y_class;
    int64_t n_classes;
    double *values;  /* n: a set's values (regression) */
    int64_t *counts; /* n_classes: a set's class counts (classification) */
} order_ctx;

/* The loss of one constant on the rows left whose cover by rule r is `inside`:
 * np.sum((v - v.mean()) ** 2) of their values v, or their count minus their majority
 * class's (0 for no rows). */
static double constant_loss(order_ctx *c, const uint8_t *left, int64_t r, int inside) {
    int64_t m = 0;
    if (c->n_classes == 0) {
        for (int64_t i = 0; i < c->n; i++)
            if (left[i] && (c->cover[i * c->R + r] != 0) == inside) c->values[m++] = c->y[i];
        if (m == 0) return 0.0;
        const double mean = dfg_pairwise_sum(c->values, m) / (double)m;
        for (int64_t k = 0; k < m; k++) {
            const double d = c->values[k] - mean;
            c->values[k] = d * d;
        }
        return dfg_pairwise_sum(c->values, m);
    }
    memset(c->counts, 0, (size_t)c->n_classes * sizeof(int64_t));
    for (int64_t i = 0; i < c->n; i++)
        if (left[i] && (c->cover[i * c->R + r] != 0) == inside) {
            c->counts[c->y_class[i]]++;
            m++;
        }
    if (m == 0) return 0.0;
    int64_t most = 0;
    for (int64_t k = 0; k < c->n_classes; k++)
        if (c->counts[k] > most) most = c->counts[k];
    return (double)(m - most);
}

static void greedy_order(order_ctx *c, uint8_t *left, uint8_t *used, int64_t *order) {
    memset(left, 1, (size_t)c->n);
    memset(used, 0, (size_t)c->R);
    for (int64_t t = 0; t < c->R; t++) {
        int64_t best = -1;
        double best_cost = 0.0;
        for (int64_t r = 0; r < c->R; r++) {
            if (used[r]) continue;
            const double cost = constant_loss(c, left, r, 1) + constant_loss(c, left, r, 0);
            /* np.argmin: the first NaN, else the first of the smallest */
            if (best < 0 || (!isnan(best_cost) && (isnan(cost) || cost < best_cost))) {
                best = r;
                best_cost = cost;
            }
        }
        order[t] = best;
        used[best] = 1;
        for (int64_t i = 0; i < c->n; i++)
            if (c->cover[i * c->R + best]) left[i] = 0;
    }
}

static int local_search(order_ctx *c, int64_t *order, int64_t *trial, const volatile int *stop) {
    const int64_t R = c->R;
    double current;
    int matched;
    int status = dfg_list_loss_unchecked(c->cover, c->n, R, order, R, c->y, c->y_class, c->n_classes, &current,
                                         &matched);
    if (status != DFG_OK) return status;
    int improved = 1;
    while (improved) {
        improved = 0;
        for (int64_t i = 0; i < R; i++) {
            if (dfg_stop_requested(stop)) return DFG_EINTERRUPTED;
            for (int64_t j = 0; j < R; j++) {
                if (i == j) continue;
                /* trial = order with its entry i moved to position j */
                const int64_t moved = order[i];
                for (int64_t p = 0, q = 0; p < R; p++)
                    if (p != i) trial[q++] = order[p];
                memmove(trial + j + 1, trial + j, (size_t)(R - 1 - j) * sizeof(int64_t));
                trial[j] = moved;
                double loss;
                status = dfg_list_loss_unchecked(c->cover, c->n, R, trial, R, c->y, c->y_class, c->n_classes,
                                                 &loss, &matched);
                if (status != DFG_OK) return status;
                /* relative to the loss alone: lists of targets of any scale move alike */
                if (loss < current - 1e-12 * current) {
                    memcpy(order, trial, (size_t)R * sizeof(int64_t));
                    current = loss;
                    improved = 1;
                }
            }
        }
    }
    return DFG_OK;
}

int dfg_list_order(const uint8_t *cover, int64_t n_samples, int64_t n_rules, const double *y,
                   const int64_t *y_class, int64_t n_classes, int local_search_on, int64_t *order,
                   const volatile int *stop) {
    if (n_samples < 0 || n_rules < 0 || n_classes < 0 || (n_rules > 0 && order == NULL)
        || (n_samples > 0 && n_rules > 0 && cover == NULL)
        || !dfg_list_targets_ok(n_samples, y, y_class, n_classes)
        || (n_rules > 0 && n_samples > INT64_MAX / n_rules) || n_rules >= INT64_MAX - 1
        || (size_t)n_samples > SIZE_MAX / sizeof(double) || (size_t)n_rules > SIZE_MAX / sizeof(int64_t)
        || (size_t)n_classes > SIZE_MAX / sizeof(int64_t))
        return DFG_EINVAL;
    if (n_rules == 0) return DFG_OK;
    order_ctx c = {cover, n_samples, n_rules, y, y_class, n_classes, NULL, NULL};
    c.values = malloc((size_t)(n_samples > 0 ? n_samples : 1) * sizeof(double));
    c.counts = malloc((size_t)(n_classes > 0 ? n_classes : 1) * sizeof(int64_t));
    uint8_t *left = malloc((size_t)(n_samples > 0 ? n_samples : 1));
    uint8_t *used = malloc((size_t)n_rules);
    int64_t *trial = malloc((size_t)n_rules * sizeof(int64_t));
    int status = DFG_ENOMEM;
    if (c.values && c.counts && left && used && trial) {
        greedy_order(&c, left, used, order);
        status = local_search_on ? local_search(&c, order, trial, stop) : DFG_OK;
    }
    free(c.values);
    free(c.counts);
    free(left);
    free(used);
    free(trial);
    return status;
}
