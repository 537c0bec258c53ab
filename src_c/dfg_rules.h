/*
 * dfg_rules.h - evaluating extracted rules on raw inputs, for scoring.
 *
 * A rule is a box: lower[r * D + d] < x_d <= upper[r * D + d], with -inf / +inf
 * for absent bounds (NaN bounds are rejected). Rules are checked in order.
 */
#ifndef DFG_RULES_H
#define DFG_RULES_H

#include "dfg_common.h"

/* covers (out, N x n_rules, 0/1) = rule r covers sample n. */
int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                    const double *lower, const double *upper, int64_t n_rules,
                    uint8_t *covers, int n_threads);

/* first (out, N) = index of the first rule covering sample n, or -1. */
int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                    const double *lower, const double *upper, int64_t n_rules,
                    int32_t *first, int n_threads);

#endif
