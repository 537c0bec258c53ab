#include "dfg_proxy_split.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    double x;
    int64_t pos; /* position of the row in the node's row list (and stats matrix) */
} keyed_row;

/* NaN sorts last; ties by position (deterministic order). */
static int cmp_keyed(const void *a, const void *b) {
    const keyed_row *p = (const keyed_row *)a, *q = (const keyed_row *)b;
    int pn = isnan(p->x), qn = isnan(q->x);
    if (pn != qn) return pn - qn;
    if (!pn) {
        if (p->x < q->x) return -1;
        if (p->x > q->x) return 1;
    }
    return (p->pos > q->pos) - (p->pos < q->pos);
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

/* A node's cost (the negated log-likelihood the split lowers) from its W row sums. */
typedef double (*cost_fn)(const double *sums, int64_t width, double n, double var_floor);

static double cost_regression(const double *s, int64_t width, double n, double var_floor) {
    (void)width;
    return n * node_log_var(s[0], s[1], s[2], n, var_floor);
}

/* n H(p) of class sums s[0..C-1] over n rows: n log n - sum_c s_c log s_c. */
static double cost_entropy(const double *s, int64_t C, double n, double var_floor) {
    double h = 0.0, tot = 0.0;
    (void)n; (void)var_floor;
    for (int64_t c = 0; c < C; c++) {
        if (s[c] > 0.0) h -= s[c] * log(s[c]);
        tot += s[c] > 0.0 ? s[c] : 0.0;
    }
    return tot > 0.0 ? h + tot * log(tot) : 0.0;
}

typedef struct {
    double gain, threshold;
    int64_t n_left;
    int32_t missing_right;
} split_result;

/* What one feature's search shares: the node's row stats S (n_rows x W, by position),
 * the cost, and the parent's cost. */
typedef struct {
    const double *X;
    int64_t n_features;
    const int64_t *rows;
    int64_t n_rows;
    const double *S;
    int64_t W;
    cost_fn cost;
    double var_floor, parent;
    int64_t min_leaf;
    const volatile int *stop; /* the caller's stop flag, read before each feature */
} search_ctx;

/* Scratch of one thread: the sorted rows and five W-vectors. */
typedef struct {
    keyed_row *buf;
    double *left, *right, *miss, *present, *tmp;
} scratch;

static inline void add_into(double *acc, const double *s, int64_t W) {
    for (int64_t w = 0; w < W; w++) acc[w] += s[w];
}

/* Scores the candidate (left sums L over nl rows, right sums R over nr rows). */
static inline void consider(const search_ctx *c, const double *L, int64_t nl, const double *R,
                            int64_t nr, double threshold, int32_t missing_right,
                            split_result *best) {
    if (nl < c->min_leaf || nr < c->min_leaf) return;
    double g = c->parent - c->cost(L, c->W, (double)nl, c->var_floor)
               - c->cost(R, c->W, (double)nr, c->var_floor);
    if (g > best->gain) {
        best->gain = g;
        best->threshold = threshold;
        best->n_left = nl;
        best->missing_right = missing_right;
    }
}

/* Best split on feature d (best->n_left -1 when none). */
static void search_feature(const search_ctx *c, int64_t d, scratch *sc, split_result *best) {
    const int64_t n = c->n_rows, W = c->W;
    keyed_row *buf = sc->buf;
    for (int64_t i = 0; i < n; i++) {
        buf[i].x = c->X[c->rows[i] * c->n_features + d];
        buf[i].pos = i;
    }
    qsort(buf, (size_t)n, sizeof(keyed_row), cmp_keyed);
    best->gain = -INFINITY;
    best->threshold = 0.0;
    best->n_left = -1;
    best->missing_right = 0;
    int64_t n_present = n;
    while (n_present > 0 && isnan(buf[n_present - 1].x)) n_present--;
    const int64_t n_miss = n - n_present;
    if (n_present == 0) return;
    for (int64_t w = 0; w < W; w++) sc->present[w] = sc->miss[w] = sc->left[w] = 0.0;
    for (int64_t i = 0; i < n_present; i++) add_into(sc->present, c->S + buf[i].pos * W, W);
    for (int64_t i = n_present; i < n; i++) add_into(sc->miss, c->S + buf[i].pos * W, W);
    for (int64_t i = 0; i + 1 < n_present; i++) {
        add_into(sc->left, c->S + buf[i].pos * W, W);
        if (buf[i].x == buf[i + 1].x) continue;
        int64_t nl = i + 1, nr = n_present - nl;
        double t = 0.5 * (buf[i].x + buf[i + 1].x);
        if (!(t < buf[i + 1].x)) t = buf[i].x; /* midpoint rounded up to the next value */
        for (int64_t w = 0; w < W; w++) sc->right[w] = sc->present[w] - sc->left[w];
        if (n_miss == 0) {
            consider(c, sc->left, nl, sc->right, nr, t, nr > nl, best);
            continue;
        }
        for (int64_t w = 0; w < W; w++) sc->tmp[w] = sc->left[w] + sc->miss[w];
        consider(c, sc->tmp, nl + n_miss, sc->right, nr, t, 0, best);
        for (int64_t w = 0; w < W; w++) sc->tmp[w] = sc->right[w] + sc->miss[w];
        consider(c, sc->left, nl, sc->tmp, nr + n_miss, t, 1, best);
    }
    if (n_miss > 0) /* every present value left, the missing ones right */
        consider(c, sc->present, n_present, sc->miss, n_miss, buf[n_present - 1].x, 1, best);
}

/* Searches every feature (in parallel) and keeps the best split. */
static int best_split(const search_ctx *c, int32_t *feature, double *threshold, double *gain,
                      int64_t *n_left, int32_t *missing_right, int n_threads) {
    *feature = -1;
    *threshold = 0.0;
    *gain = -INFINITY;
    *n_left = 0;
    *missing_right = 0;
    if (c->n_rows < 2 * c->min_leaf) return DFG_OK;
    const int64_t D = c->n_features, W = c->W;
    split_result *per = (split_result *)malloc((size_t)D * sizeof(split_result));
    if (!per) return DFG_ENOMEM;
    int nomem = 0;
    #pragma omp parallel num_threads(dfg_team(n_threads)) reduction(|:nomem)
    {
        scratch sc;
        sc.buf = (keyed_row *)malloc((size_t)c->n_rows * sizeof(keyed_row));
        double *vecs = (double *)malloc((size_t)(5 * W) * sizeof(double));
        if (!sc.buf || !vecs) nomem = 1;
        sc.left = vecs; sc.right = vecs + W; sc.miss = vecs + 2 * W;
        sc.present = vecs + 3 * W; sc.tmp = vecs + 4 * W;
        #pragma omp for schedule(dynamic, 1)
        for (int64_t d = 0; d < D; d++) {
            if (!sc.buf || !vecs || dfg_stop_requested(c->stop)) { per[d].n_left = -1; continue; }
            search_feature(c, d, &sc, &per[d]);
        }
        free(sc.buf);
        free(vecs);
    }
    if (!nomem) {
        for (int64_t d = 0; d < D; d++) {
            if (per[d].n_left >= 0 && per[d].gain > *gain) {
                *gain = per[d].gain;
                *feature = (int32_t)d;
                *threshold = per[d].threshold;
                *n_left = per[d].n_left;
                *missing_right = per[d].missing_right;
            }
        }
    }
    free(per);
    if (nomem) return DFG_ENOMEM;
    return dfg_stop_requested(c->stop) ? DFG_EINTERRUPTED : DFG_OK;
}

static int check_rows(const int64_t *rows, int64_t n_rows, int64_t n_samples) {
    for (int64_t i = 0; i < n_rows; i++)
        if (rows[i] < 0 || rows[i] >= n_samples) return DFG_EINVAL;
    return DFG_OK;
}

static int check_sizes(int64_t n_samples, int64_t n_features, int64_t n_rows, int64_t min_leaf,
                       int n_threads) {
    if (n_samples < 1 || n_features < 1 || n_features > INT32_MAX || n_rows < 1 ||
        n_rows > n_samples || min_leaf < 1 || n_threads < 1)
        return DFG_EINVAL;
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

int dfg_proxy_best_split(const double *X, int64_t n_samples, int64_t n_features,
                         const int64_t *rows, int64_t n_rows,
                         const double *mean, const double *var,
                         int64_t min_leaf, double var_floor,
                         int32_t *feature, double *threshold, double *gain,
                         int64_t *n_left, int32_t *missing_right, int n_threads,
                         const volatile int *stop) {
    if (check_sizes(n_samples, n_features, n_rows, min_leaf, n_threads) != DFG_OK ||
        !(var_floor > 0.0))
        return DFG_EINVAL;
    if (check_rows(rows, n_rows, n_samples) != DFG_OK) return DFG_EINVAL;
    double score;
    int status = dfg_proxy_node_score(rows, n_rows, n_samples, mean, var, var_floor, &score);
    if (status != DFG_OK) return status; /* a negative or NaN variance */
    /* per-row sums (v, m - shift, (m - shift)^2), shift the first row's mean */
    double *S = (double *)malloc((size_t)n_rows * 3 * sizeof(double));
    if (!S) return DFG_ENOMEM;
    const double shift = mean[rows[0]];
    for (int64_t i = 0; i < n_rows; i++) {
        double dd = mean[rows[i]] - shift;
        S[3 * i] = var[rows[i]];
        S[3 * i + 1] = dd;
        S[3 * i + 2] = dd * dd;
    }
    search_ctx c = {X, n_features, rows, n_rows, S, 3, cost_regression, var_floor, -score,
                    min_leaf, stop};
    status = best_split(&c, feature, threshold, gain, n_left, missing_right, n_threads);
    free(S);
    return status;
}

int dfg_proxy_best_split_proba(const double *X, int64_t n_samples, int64_t n_features,
                               const int64_t *rows, int64_t n_rows,
                               const double *P, int64_t n_classes, int64_t min_leaf,
                               int32_t *feature, double *threshold, double *gain,
                               int64_t *n_left, int32_t *missing_right, int n_threads,
                               const volatile int *stop) {
    if (check_sizes(n_samples, n_features, n_rows, min_leaf, n_threads) != DFG_OK ||
        n_classes < 1)
        return DFG_EINVAL;
    if (check_rows(rows, n_rows, n_samples) != DFG_OK) return DFG_EINVAL;
    const int64_t C = n_classes;
    double *S = (double *)malloc((size_t)(n_rows * C + C) * sizeof(double));
    if (!S) return DFG_ENOMEM;
    double *total = S + n_rows * C;
    for (int64_t c = 0; c < C; c++) total[c] = 0.0;
    for (int64_t i = 0; i < n_rows; i++)
        for (int64_t c = 0; c < C; c++) {
            double p = P[rows[i] * C + c];
            if (!(p >= 0.0) || p == INFINITY) { free(S); return DFG_EINVAL; }
            S[i * C + c] = p;
            total[c] += p;
        }
    search_ctx ctx = {X, n_features, rows, n_rows, S, C, cost_entropy, 1.0,
                      cost_entropy(total, C, (double)n_rows, 1.0), min_leaf, stop};
    int status = best_split(&ctx, feature, threshold, gain, n_left, missing_right, n_threads);
    free(S);
    return status;
}
