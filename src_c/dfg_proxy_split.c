#include "dfg_proxy_split.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    double x;
    int64_t row;
} keyed_row;

static int cmp_keyed(const void *a, const void *b) {
    const keyed_row *p = (const keyed_row *)a, *q = (const keyed_row *)b;
    if (p->x < q->x) return -1;
    if (p->x > q->x) return 1;
    return (p->row > q->row) - (p->row < q->row); /* deterministic order for ties */
}

static inline double node_log_var(double sum_v, double sum_d, double sum_d2, double n,
                                  double var_floor) {
    /* sum over rows of v + (m - mu)^2 with d = m - c (c a fixed shift):
       sum_v + sum_d2 - sum_d^2 / n. */
    double sse = sum_d2 - sum_d * sum_d / n;
    if (sse < 0.0) sse = 0.0;
    double s2 = (sum_v + sse) / n;
    if (s2 < var_floor) s2 = var_floor;
    return log(s2);
}

static int check_rows(const int64_t *rows, int64_t n_rows, int64_t n_samples) {
    for (int64_t i = 0; i < n_rows; i++)
        if (rows[i] < 0 || rows[i] >= n_samples) return DFG_EINVAL;
    return DFG_OK;
}

int dfg_proxy_node_score(const int64_t *rows, int64_t n_rows, int64_t n_samples,
                         const double *mean, const double *var, double var_floor,
                         double *score) {
    if (n_rows < 1 || n_samples < 1 || !(var_floor > 0.0)) return DFG_EINVAL;
    if (check_rows(rows, n_rows, n_samples) != DFG_OK) return DFG_EINVAL;
    double c = mean[rows[0]], sv = 0.0, sd = 0.0, sd2 = 0.0;
    for (int64_t i = 0; i < n_rows; i++) {
        double v = var[rows[i]], d = mean[rows[i]] - c;
        if (!(v >= 0.0)) return DFG_EINVAL;
        sv += v; sd += d; sd2 += d * d;
    }
    *score = -(double)n_rows * node_log_var(sv, sd, sd2, (double)n_rows, var_floor);
    return DFG_OK;
}

/* Best split on one feature: sorts buf (n_rows entries) and sweeps. */
static void search_feature(const double *X, int64_t n_features, int64_t d,
                           const int64_t *rows, int64_t n_rows, const double *mean,
                           const double *var, int64_t min_leaf, double var_floor,
                           double shift, double parent, keyed_row *buf,
                           double *best_gain, double *best_thr, int64_t *best_left) {
    for (int64_t i = 0; i < n_rows; i++) {
        buf[i].x = X[rows[i] * n_features + d];
        buf[i].row = rows[i];
    }
    qsort(buf, (size_t)n_rows, sizeof(keyed_row), cmp_keyed);
    *best_gain = -INFINITY;
    *best_thr = 0.0;
    *best_left = -1;
    if (buf[0].x == buf[n_rows - 1].x) return;
    double tv = 0.0, td = 0.0, td2 = 0.0;
    for (int64_t i = 0; i < n_rows; i++) {
        double dd = mean[buf[i].row] - shift;
        tv += var[buf[i].row]; td += dd; td2 += dd * dd;
    }
    double lv = 0.0, ld = 0.0, ld2 = 0.0;
    for (int64_t i = 0; i < n_rows - 1; i++) {
        double dd = mean[buf[i].row] - shift;
        lv += var[buf[i].row]; ld += dd; ld2 += dd * dd;
        int64_t nl = i + 1, nr = n_rows - nl;
        if (buf[i].x == buf[i + 1].x || nl < min_leaf || nr < min_leaf) continue;
        double g = -(double)nl * node_log_var(lv, ld, ld2, (double)nl, var_floor)
                   - (double)nr * node_log_var(tv - lv, td - ld, td2 - ld2, (double)nr, var_floor)
                   - parent;
        if (g > *best_gain) {
            double t = 0.5 * (buf[i].x + buf[i + 1].x);
            if (!(t < buf[i + 1].x)) t = buf[i].x; /* midpoint rounded up to the next value */
            *best_gain = g;
            *best_thr = t;
            *best_left = nl;
        }
    }
}

int dfg_proxy_best_split(const double *X, int64_t n_samples, int64_t n_features,
                         const int64_t *rows, int64_t n_rows,
                         const double *mean, const double *var,
                         int64_t min_leaf, double var_floor,
                         int32_t *feature, double *threshold, double *gain,
                         int64_t *n_left, int n_threads) {
    if (n_samples < 1 || n_features < 1 || n_features > INT32_MAX || n_rows < 1 ||
        n_rows > n_samples || min_leaf < 1 || !(var_floor > 0.0) || n_threads < 1)
        return DFG_EINVAL;
    if (check_rows(rows, n_rows, n_samples) != DFG_OK) return DFG_EINVAL;
    for (int64_t i = 0; i < n_rows; i++)
        if (!(var[rows[i]] >= 0.0)) return DFG_EINVAL;
    *feature = -1;
    *threshold = 0.0;
    *gain = -INFINITY;
    *n_left = 0;
    if (n_rows < 2 * min_leaf) return DFG_OK;

    double parent;
    dfg_proxy_node_score(rows, n_rows, n_samples, mean, var, var_floor, &parent);
    double shift = mean[rows[0]];

    double *f_gain = (double *)malloc((size_t)n_features * sizeof(double));
    double *f_thr = (double *)malloc((size_t)n_features * sizeof(double));
    int64_t *f_left = (int64_t *)malloc((size_t)n_features * sizeof(int64_t));
    if (!f_gain || !f_thr || !f_left) {
        free(f_gain); free(f_thr); free(f_left);
        return DFG_ENOMEM;
    }
    int nomem = 0;
    #pragma omp parallel num_threads(n_threads) reduction(|:nomem)
    {
        keyed_row *buf = (keyed_row *)malloc((size_t)n_rows * sizeof(keyed_row));
        if (!buf) nomem = 1;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t d = 0; d < n_features; d++) {
            if (!buf) { f_gain[d] = -INFINITY; f_left[d] = -1; continue; }
            search_feature(X, n_features, d, rows, n_rows, mean, var, min_leaf, var_floor,
                           shift, parent, buf, &f_gain[d], &f_thr[d], &f_left[d]);
        }
        free(buf);
    }
    if (!nomem) {
        for (int64_t d = 0; d < n_features; d++) {
            if (f_left[d] >= 0 && f_gain[d] > *gain) {
                *gain = f_gain[d];
                *feature = (int32_t)d;
                *threshold = f_thr[d];
                *n_left = f_left[d];
            }
        }
    }
    free(f_gain); free(f_thr); free(f_left);
    return nomem ? DFG_ENOMEM : DFG_OK;
}

/* n H(p) of class sums s[0..C-1] over n rows: n log n - sum_c s_c log s_c. */
static inline double n_entropy(const double *s, int64_t C, double n) {
    double h = 0.0, tot = 0.0;
    for (int64_t c = 0; c < C; c++) {
        if (s[c] > 0.0) h -= s[c] * log(s[c]);
        tot += s[c] > 0.0 ? s[c] : 0.0;
    }
    (void)n;
    return tot > 0.0 ? h + tot * log(tot) : 0.0;
}

static void search_feature_proba(const double *X, int64_t n_features, int64_t d,
                                 const int64_t *rows, int64_t n_rows, const double *P,
                                 int64_t C, int64_t min_leaf, double parent,
                                 keyed_row *buf, double *left, double *right,
                                 const double *total, double *best_gain, double *best_thr,
                                 int64_t *best_left) {
    for (int64_t i = 0; i < n_rows; i++) {
        buf[i].x = X[rows[i] * n_features + d];
        buf[i].row = rows[i];
    }
    qsort(buf, (size_t)n_rows, sizeof(keyed_row), cmp_keyed);
    *best_gain = -INFINITY;
    *best_thr = 0.0;
    *best_left = -1;
    if (buf[0].x == buf[n_rows - 1].x) return;
    for (int64_t c = 0; c < C; c++) left[c] = 0.0;
    for (int64_t i = 0; i < n_rows - 1; i++) {
        const double *p = P + buf[i].row * C;
        for (int64_t c = 0; c < C; c++) left[c] += p[c];
        int64_t nl = i + 1, nr = n_rows - nl;
        if (buf[i].x == buf[i + 1].x || nl < min_leaf || nr < min_leaf) continue;
        for (int64_t c = 0; c < C; c++) right[c] = total[c] - left[c];
        double g = parent - n_entropy(left, C, (double)nl) - n_entropy(right, C, (double)nr);
        if (g > *best_gain) {
            double t = 0.5 * (buf[i].x + buf[i + 1].x);
            if (!(t < buf[i + 1].x)) t = buf[i].x;
            *best_gain = g;
            *best_thr = t;
            *best_left = nl;
        }
    }
}

int dfg_proxy_best_split_proba(const double *X, int64_t n_samples, int64_t n_features,
                               const int64_t *rows, int64_t n_rows,
                               const double *P, int64_t n_classes, int64_t min_leaf,
                               int32_t *feature, double *threshold, double *gain,
                               int64_t *n_left, int n_threads) {
    if (n_samples < 1 || n_features < 1 || n_features > INT32_MAX || n_rows < 1 ||
        n_rows > n_samples || n_classes < 1 || min_leaf < 1 || n_threads < 1)
        return DFG_EINVAL;
    if (check_rows(rows, n_rows, n_samples) != DFG_OK) return DFG_EINVAL;
    const int64_t C = n_classes;
    double *total = (double *)calloc((size_t)C, sizeof(double));
    if (!total) return DFG_ENOMEM;
    for (int64_t i = 0; i < n_rows; i++)
        for (int64_t c = 0; c < C; c++) {
            double p = P[rows[i] * C + c];
            if (!(p >= 0.0) || p == INFINITY) { free(total); return DFG_EINVAL; }
            total[c] += p;
        }
    *feature = -1;
    *threshold = 0.0;
    *gain = -INFINITY;
    *n_left = 0;
    if (n_rows < 2 * min_leaf) { free(total); return DFG_OK; }
    double parent = n_entropy(total, C, (double)n_rows);

    double *f_gain = (double *)malloc((size_t)n_features * sizeof(double));
    double *f_thr = (double *)malloc((size_t)n_features * sizeof(double));
    int64_t *f_left = (int64_t *)malloc((size_t)n_features * sizeof(int64_t));
    if (!f_gain || !f_thr || !f_left) {
        free(f_gain); free(f_thr); free(f_left); free(total);
        return DFG_ENOMEM;
    }
    int nomem = 0;
    #pragma omp parallel num_threads(n_threads) reduction(|:nomem)
    {
        keyed_row *buf = (keyed_row *)malloc((size_t)n_rows * sizeof(keyed_row));
        double *sums = (double *)malloc((size_t)(2 * C) * sizeof(double));
        if (!buf || !sums) nomem = 1;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t d = 0; d < n_features; d++) {
            if (!buf || !sums) { f_gain[d] = -INFINITY; f_left[d] = -1; continue; }
            search_feature_proba(X, n_features, d, rows, n_rows, P, C, min_leaf, parent, buf,
                                 sums, sums + C, total, &f_gain[d], &f_thr[d], &f_left[d]);
        }
        free(buf);
        free(sums);
    }
    if (!nomem) {
        for (int64_t d = 0; d < n_features; d++) {
            if (f_left[d] >= 0 && f_gain[d] > *gain) {
                *gain = f_gain[d];
                *feature = (int32_t)d;
                *threshold = f_thr[d];
                *n_left = f_left[d];
            }
        }
    }
    free(f_gain); free(f_thr); free(f_left); free(total);
    return nomem ? DFG_ENOMEM : DFG_OK;
}
