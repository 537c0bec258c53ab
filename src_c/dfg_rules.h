/*
 * dfg_rules.h - evaluating extracted rules on raw inputs, for scoring services.
 *
 * Rule r is the conjunction of its conditions c = rule_ptr[r] .. rule_ptr[r+1]-1:
 *   lower[c] < x[feature[c]] <= upper[c]   (+-inf for an absent bound), or, when
 *   sets is given and sets->kind[c] is not DFG_KIND_NUMERIC, the set test of item c
 *   on the category code x[feature[c]] (dfg_sets.h; its bounds are then not read).
 * Only the features a rule names are read. A missing value (NaN) satisfies
 * condition c when missing[c] == 1, fails it when 0, and when 2 (the source model
 * had no rule for missing values) makes the kernels return DFG_ENAN: a NaN in any
 * row, on any feature where some condition has missing == 2, whether or not the
 * row's rules reach that condition. -inf is compared as -DBL_MAX (below every
 * threshold: x <= t holds, and so does an absent lower bound, -inf).
 */
#ifndef DFG_RULES_H
#define DFG_RULES_H

#include "dfg_common.h"
#include "dfg_sets.h"

#include <float.h>

#define DFG_ENAN (-3)

typedef struct {
    int64_t n_rules;
    const int64_t *rule_ptr;  /* n_rules + 1 */
    const int32_t *feature;   /* rule_ptr[n_rules] conditions */
    const double *lower;
    const double *upper;
    const uint8_t *missing;   /* per condition: 0, 1 or 2 (see above) */
    const dfg_sets *sets;     /* one item per condition, or NULL: all are intervals */
} dfg_ruleset;

/* Checks sizes, feature indices (< n_features), that no bound is NaN, and the sets. */
int dfg_ruleset_check(const dfg_ruleset *rules, int64_t n_features);

/* covers (out, N x n_rules, 0/1): rule r covers sample n. */
int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, uint8_t *covers, int n_threads);

/* first (out, N): index of the first rule covering sample n, or -1. */
int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, int32_t *first, int n_threads);

/* The features where a NaN is an error (a condition with missing == 2), each once:
   DFG_OK and *out (malloc'ed, NULL when none) with *n_out entries, or DFG_ENOMEM.
   Every row is checked on all of them, whichever conditions its rules read. */
int dfg_ruleset_strict_features(const dfg_ruleset *rules, int64_t n_features, int32_t **out, int64_t *n_out);

/* A value as the rules compare it: -inf as -DBL_MAX, below every threshold, so that
   an absent lower bound (-inf) holds for it as for any present value (NaN stays NaN). */
static inline double dfg_as_compared(double v) {
    return v < -DBL_MAX ? -DBL_MAX : v;
}

/* 1 if rule r covers x, 0 if not. Conditions are checked branch-free in groups of
   four, leaving the rule only between groups: whether one condition holds is data
   dependent and mispredicts often, while long rules still stop early. */
static inline int dfg_rule_covers(const double *x, const dfg_ruleset *rules, int64_t r) {
    int ok = 1;
    int64_t c = rules->rule_ptr[r], end = rules->rule_ptr[r + 1];
    while (c < end && ok) {
        int64_t stop = c + 4 < end ? c + 4 : end;
        for (; c < stop; c++) {
            double v = dfg_as_compared(x[rules->feature[c]]);
            int missing = v != v;
            int holds = rules->sets && rules->sets->kind[c] != DFG_KIND_NUMERIC
                            ? dfg_sets_test(rules->sets, c, v)
                            : (v > rules->lower[c]) & (v <= rules->upper[c]);
            ok &= missing ? rules->missing[c] == 1 : holds;
        }
    }
    return ok;
}

#endif
