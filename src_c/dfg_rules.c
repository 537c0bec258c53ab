#include "dfg_rules.h"

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

/* 1 if rule r covers x, 0 if not; sets *nan when a compared value is NaN.
   Conditions are checked branch-free in groups of four, leaving the rule only
   between groups: whether one condition holds is data dependent and mispredicts
   often, while long rules still stop early. */
static inline int covers_row(const double *x, const dfg_ruleset *rules, int64_t r, int *nan) {
    int ok = 1, has_nan = 0;
    int64_t c = rules->rule_ptr[r], end = rules->rule_ptr[r + 1];
    while (c < end && ok) {
        int64_t stop = c + 4 < end ? c + 4 : end;
        for (; c < stop; c++) {
            double v = x[rules->feature[c]];
            int missing = v != v;
            int holds = rules->sets && rules->sets->kind[c] != DFG_KIND_NUMERIC
                            ? dfg_sets_test(rules->sets, c, v)
                            : (v > rules->lower[c]) & (v <= rules->upper[c]);
            ok &= missing ? rules->missing[c] == 1 : holds;
            has_nan |= missing & (rules->missing[c] == 2);
        }
    }
    *nan |= has_nan;
    return ok;
}

/* Rules read a row's features out of order, so the hardware prefetcher sees
   scattered accesses: fetch the row 8 ahead (all its cache lines) explicitly. */
#if defined(__GNUC__) || defined(__clang__)
#define DFG_PREFETCH_ROW(X, n, n_samples, n_features) do {                          \
        if ((n) + 8 < (n_samples)) {                                              \
            const char *ahead_ = (const char *)((X) + ((n) + 8) * (n_features));   \
            for (int64_t o_ = 0; o_ < (n_features) * (int64_t)sizeof(double); o_ += 64) \
                __builtin_prefetch(ahead_ + o_);                                   \
        }                                                                          \
    } while (0)
#else
#define DFG_PREFETCH_ROW(X, n, n_samples, n_features) ((void)0)
#endif

int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, uint8_t *covers, int n_threads) {
    if (n_samples < 0 || n_threads < 1) return DFG_EINVAL;
    int status = dfg_ruleset_check(rules, n_features);
    if (status != DFG_OK) return status;
    const int64_t R = rules->n_rules;
    int nan = 0;
    #pragma omp parallel for schedule(static) num_threads(n_threads) reduction(|:nan)
    for (int64_t n = 0; n < n_samples; n++) {
        DFG_PREFETCH_ROW(X, n, n_samples, n_features);
        for (int64_t r = 0; r < R; r++)
            covers[n * R + r] = (uint8_t)covers_row(X + n * n_features, rules, r, &nan);
    }
    return nan ? DFG_ENAN : DFG_OK;
}

int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, int32_t *first, int n_threads) {
    if (n_samples < 0 || n_threads < 1) return DFG_EINVAL;
    int status = dfg_ruleset_check(rules, n_features);
    if (status != DFG_OK) return status;
    const int64_t R = rules->n_rules;
    int nan = 0;
    #pragma omp parallel for schedule(static) num_threads(n_threads) reduction(|:nan)
    for (int64_t n = 0; n < n_samples; n++) {
        DFG_PREFETCH_ROW(X, n, n_samples, n_features);
        int32_t hit = -1;
        for (int64_t r = 0; r < R; r++)
            if (covers_row(X + n * n_features, rules, r, &nan)) { hit = (int32_t)r; break; }
        first[n] = hit;
    }
    return nan ? DFG_ENAN : DFG_OK;
}
