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

#endif
