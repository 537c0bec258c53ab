#include "dfg_rules.h"
#include "dfg_cpu.h"
#include "dfg_portable.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int dfg_ruleset_check(const dfg_ruleset *rules, int64_t n_features) {
    if (rules->n_rules < 0 || rules->n_rules > INT32_MAX || n_features < 1) return DFG_EINVAL;
    if (rules->rule_ptr[0] != 0) return DFG_EINVAL;
    for (int64_t r = 0; r < rules->n_rules; r++)
        if (rules->rule_ptr[r + 1] < rules->rule_ptr[r]) return DFG_EINVAL;
    for (int64_t c = 0; c < rules->rule_ptr[rules->n_rules]; c++) {
        if (rules->feature[c] < 0 || rules->feature[c] >= n_features) return DFG_EINVAL;
        if (rules->lower[c] != rules->lower[c] || rules->upper[c] != rules->upper[c]) return DFG_EINVAL;
        if (rules->missing[c] > 2) return DFG_EINVAL;
    }
    if (rules->sets && dfg_sets_check(rules->sets, rules->rule_ptr[rules->n_rules]) != DFG_OK)
        return DFG_EINVAL;
    return DFG_OK;
}

int dfg_ruleset_strict_features(const dfg_ruleset *rules, int64_t n_features, int32_t **out, int64_t *n_out) {
    const int64_t n_cond = rules->rule_ptr[rules->n_rules];
    *out = NULL;
    *n_out = 0;
    uint8_t *seen = (uint8_t *)calloc((size_t)n_features, 1);
    if (!seen) return DFG_ENOMEM;
    for (int64_t c = 0; c < n_cond; c++)
        if (rules->missing[c] == 2 && !seen[rules->feature[c]]) {
            seen[rules->feature[c]] = 1;
            (*n_out)++;
        }
    if (*n_out) {
        *out = (int32_t *)malloc((size_t)*n_out * sizeof(int32_t));
        if (!*out) { free(seen); return DFG_ENOMEM; }
        int64_t k = 0;
        for (int64_t f = 0; f < n_features; f++)
            if (seen[f]) (*out)[k++] = (int32_t)f;
    }
    free(seen);
    return DFG_OK;
}

/*
 * Dense boxes. When every condition is an interval and the rules name few
 * features compared with their conditions, rule r is stored as one interval
 * per used feature (lower < x <= upper, +-inf where the rule says nothing) and
 * tested on all of them at once: a vectorised loop over the row's used values,
 * with one data-dependent branch per rule instead of one per group of
 * conditions. Compiled for AVX2 and chosen at run time; the baseline build
 * does not vectorise this loop, and keeps the per-condition path above.
 */
typedef struct {
    int64_t n_used;       /* features named by some condition */
    int32_t *used;        /* their indices */
    double *lower, *upper; /* n_rules x n_used */
    int64_t *nan_ok;      /* n_rules x n_used: 1 when a NaN satisfies the rule there */
    int64_t *strict;      /* n_used: 1 when a NaN there is an error (missing == 2) */
    int any_strict;
} dense_rules;

static void dense_free(dense_rules *d) {
    free(d->used); free(d->lower); free(d->upper); free(d->nan_ok); free(d->strict);
}

/* DFG_OK and a filled d, or DFG_EINVAL when the rule set does not suit the dense
   form (set conditions, or too sparse), or DFG_ENOMEM. */
static int dense_build(const dfg_ruleset *rules, int64_t n_features, dense_rules *d) {
    const int64_t R = rules->n_rules, n_cond = rules->rule_ptr[R];
    memset(d, 0, sizeof *d);
    if (R == 0) return DFG_EINVAL;
    if (rules->sets)
        for (int64_t c = 0; c < n_cond; c++)
            if (rules->sets->kind[c] != DFG_KIND_NUMERIC) return DFG_EINVAL;
    int32_t *slot = (int32_t *)malloc((size_t)n_features * sizeof(int32_t));
    if (!slot) return DFG_ENOMEM;
    for (int64_t f = 0; f < n_features; f++) slot[f] = -1;
    for (int64_t c = 0; c < n_cond; c++) slot[rules->feature[c]] = 0;
    /* slots in feature order: when every feature is used a row is read in place */
    for (int64_t f = 0; f < n_features; f++)
        if (slot[f] == 0) slot[f] = (int32_t)d->n_used++;
    /* a box costs n_used per rule; per-condition evaluation costs its conditions */
    if (R * d->n_used > 2 * n_cond + 8 * R) { free(slot); return DFG_EINVAL; }
    const int64_t U = d->n_used;
    d->used = (int32_t *)malloc((size_t)U * sizeof(int32_t));
    d->lower = (double *)malloc((size_t)(R * U) * sizeof(double));
    d->upper = (double *)malloc((size_t)(R * U) * sizeof(double));
    d->nan_ok = (int64_t *)malloc((size_t)(R * U) * sizeof(int64_t));
    d->strict = (int64_t *)calloc((size_t)U, sizeof(int64_t));
    if (!d->used || !d->lower || !d->upper || !d->nan_ok || !d->strict) {
        free(slot); dense_free(d); return DFG_ENOMEM;
    }
    for (int64_t f = 0; f < n_features; f++)
        if (slot[f] >= 0) d->used[slot[f]] = (int32_t)f;
    for (int64_t j = 0; j < R * U; j++) {
        d->lower[j] = -INFINITY;
        d->upper[j] = INFINITY;
        d->nan_ok[j] = 1;
    }
    /* several conditions of one rule on one feature: their intersection */
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = rules->rule_ptr[r]; c < rules->rule_ptr[r + 1]; c++) {
            int64_t j = r * U + slot[rules->feature[c]];
            if (rules->lower[c] > d->lower[j]) d->lower[j] = rules->lower[c];
            if (rules->upper[c] < d->upper[j]) d->upper[j] = rules->upper[c];
            d->nan_ok[j] &= rules->missing[c] == 1;
            if (rules->missing[c] == 2) { d->strict[slot[rules->feature[c]]] = 1; d->any_strict = 1; }
        }
    free(slot);
    return DFG_OK;
}

static inline int64_t box_holds(const double *x, const double *lower, const double *upper,
                                const int64_t *nan_ok, int64_t n) {
    int64_t ok = 1;
    for (int64_t u = 0; u < n; u++) {
        double v = x[u];
        ok &= (int64_t)((v > lower[u]) & (v <= upper[u])) | ((int64_t)(v != v) & nan_ok[u]);
    }
    return ok;
}

/* The same for a row without NaN: half the work per feature. */
static inline int64_t box_holds_present(const double *x, const double *lower, const double *upper,
                                        int64_t n) {
    int64_t ok = 1;
    for (int64_t u = 0; u < n; u++) ok &= (int64_t)((x[u] > lower[u]) & (x[u] <= upper[u]));
    return ok;
}

static inline int64_t any_nan(const double *x, int64_t n) {
    int64_t nan = 0;
    for (int64_t u = 0; u < n; u++) nan |= (int64_t)(x[u] != x[u]);
    return nan;
}

static inline int64_t strict_nan(const double *x, const int64_t *strict, int64_t n) {
    int64_t nan = 0;
    for (int64_t u = 0; u < n; u++) nan |= (int64_t)(x[u] != x[u]) & strict[u];
    return nan;
}

#if DFG_X86_DISPATCH
#define DFG_RULES_AVX2 1
/* first (when non-NULL) or covers of rows n0 .. n1 - 1 from the dense boxes. */
DFG_TARGET("avx2") static int dense_rows(const double *X, int64_t n0, int64_t n1,
                                         int64_t n_samples, int64_t n_features,
                                         const dense_rules *d, int64_t R,
                                         uint8_t *covers, int32_t *first) {
    const int64_t U = d->n_used;
    double xs[256];
    int nan = 0;
    for (int64_t n = n0; n < n1; n++) {
        DFG_PREFETCH_ROW(X, n, n_samples, n_features);
        const double *x = X + n * n_features, *x_used = xs;
        for (int64_t u = 0; u < U; u++) xs[u] = dfg_as_compared(x[d->used[u]]);
        if (d->any_strict) nan |= (int)strict_nan(x_used, d->strict, U);
        const int64_t row_nan = any_nan(x_used, U);
#define DFG_BOX(r) (row_nan ? box_holds(x_used, d->lower + (r) * U, d->upper + (r) * U, d->nan_ok + (r) * U, U) \
                            : box_holds_present(x_used, d->lower + (r) * U, d->upper + (r) * U, U))
        if (first) {
            int32_t hit = -1;
            for (int64_t r = 0; r < R; r++)
                if (DFG_BOX(r)) {
                    hit = (int32_t)r;
                    break;
                }
            first[n] = hit;
        } else {
            for (int64_t r = 0; r < R; r++) covers[n * R + r] = (uint8_t)DFG_BOX(r);
        }
#undef DFG_BOX
    }
    return nan;
}
#endif

/* The dense path when the CPU and the rule set suit it: 1 and *status set, else 0. */
static int try_dense(const double *X, int64_t n_samples, int64_t n_features,
                     const dfg_ruleset *rules, uint8_t *covers, int32_t *first, int n_threads,
                     int *status) {
#ifdef DFG_RULES_AVX2
    if (!dfg_cpu_use_avx2()) return 0;
    dense_rules d;
    int built = dense_build(rules, n_features, &d);
    if (built == DFG_ENOMEM) { *status = DFG_ENOMEM; return 1; }
    if (built != DFG_OK) return 0;
    if (d.n_used > 256) { dense_free(&d); return 0; } /* the row buffer below */
    const int64_t R = rules->n_rules, rows = 4096, n_tasks = (n_samples + rows - 1) / rows;
    int nan = 0;
    /* (one task: no thread team to start, as for the small blocks predict gives) */
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads)) reduction(|:nan) if(n_tasks > 1)
    for (int64_t t = 0; t < n_tasks; t++) {
        int64_t n0 = t * rows, n1 = n0 + rows < n_samples ? n0 + rows : n_samples;
        nan |= dense_rows(X, n0, n1, n_samples, n_features, &d, R, covers, first);
    }
    dense_free(&d);
    *status = nan ? DFG_ENAN : DFG_OK;
    return 1;
#else
    (void)X; (void)n_samples; (void)n_features; (void)rules; (void)covers; (void)first;
    (void)n_threads; (void)status;
    return 0;
#endif
}

/* Checks, then first (when non-NULL) or covers: by dense boxes where they suit,
   otherwise condition by condition. */
static int evaluate(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, uint8_t *covers, int32_t *first, int n_threads) {
    if (n_samples < 0 || n_threads < 1) return DFG_EINVAL;
    int status = dfg_ruleset_check(rules, n_features);
    if (status != DFG_OK) return status;
    if (try_dense(X, n_samples, n_features, rules, covers, first, n_threads, &status)) return status;
    int32_t *strict;
    int64_t n_strict;
    if (dfg_ruleset_strict_features(rules, n_features, &strict, &n_strict) != DFG_OK) return DFG_ENOMEM;
    const int64_t R = rules->n_rules;
    int nan = 0;
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads)) reduction(|:nan) if(n_samples > 4096)
    for (int64_t n = 0; n < n_samples; n++) {
        DFG_PREFETCH_ROW(X, n, n_samples, n_features);
        const double *x = X + n * n_features;
        for (int64_t s = 0; s < n_strict; s++) nan |= x[strict[s]] != x[strict[s]];
        if (first) {
            int32_t hit = -1;
            for (int64_t r = 0; r < R; r++)
                if (dfg_rule_covers(x, rules, r)) { hit = (int32_t)r; break; }
            first[n] = hit;
        } else {
            for (int64_t r = 0; r < R; r++) covers[n * R + r] = (uint8_t)dfg_rule_covers(x, rules, r);
        }
    }
    free(strict);
    return nan ? DFG_ENAN : DFG_OK;
}

int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, uint8_t *covers, int n_threads) {
    return evaluate(X, n_samples, n_features, rules, covers, NULL, n_threads);
}

int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, int32_t *first, int n_threads) {
    return evaluate(X, n_samples, n_features, rules, NULL, first, n_threads);
}
