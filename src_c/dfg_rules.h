/*
 * dfg_rules.h - evaluating extracted rules on raw inputs, for scoring services.
 *
 * Rule r is the conjunction of its conditions c = rule_ptr[r] .. rule_ptr[r+1]-1:
 *   lower[c] < x[feature[c]] <= upper[c]   (+-inf for an absent bound).
 * Only the features a rule names are read. A NaN met in a compared feature makes
 * the kernels return DFG_ENAN: the rules do not say where such a point belongs.
 */
#ifndef DFG_RULES_H
#define DFG_RULES_H

#include "dfg_common.h"

#define DFG_ENAN (-3)

typedef struct {
    int64_t n_rules;
    const int64_t *rule_ptr;  /* n_rules + 1 */
    const int32_t *feature;   /* rule_ptr[n_rules] conditions */
    const double *lower;
    const double *upper;
} dfg_ruleset;

/* Checks sizes, feature indices (< n_features) and that no bound is NaN. */
int dfg_ruleset_check(const dfg_ruleset *rules, int64_t n_features);

/* covers (out, N x n_rules, 0/1): rule r covers sample n. */
int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, uint8_t *covers, int n_threads);

/* first (out, N): index of the first rule covering sample n, or -1. */
int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const dfg_ruleset *rules, int32_t *first, int n_threads);

#endif
