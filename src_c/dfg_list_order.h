/*
 * dfg_list_order.h - the order of a restart's rule list (defrag/rules/lists.py, steps 1
 * and 2 of fit_rule_list): the greedy order, then the local search that moves one rule
 * at a time while the list's training loss drops. In Python each of the few hundred
 * losses of a restart's list was a call with its own conversions: on small data they
 * took a fifth of the fit.
 *
 * The arithmetic is that of the NumPy version (tests/test_rule_list.py holds it), so
 * that the order comes out the same: a constant's loss on a set of rows is the count of
 * rows outside its majority class, or the squared residuals about the rows' mean, the
 * mean and the sum both NumPy's pairwise summation of the rows' values in row order
 * (np.sum((y - y.mean()) ** 2)); the list's loss is dfg_list_loss's. Built with
 * -ffp-contract=off: no fused multiply-adds.
 */
#ifndef DFG_LIST_ORDER_H
#define DFG_LIST_ORDER_H

#include "dfg_common.h"

/*
 * cover: n_samples x n_rules bytes, row-major (nonzero: the rule covers the row).
 * Targets as dfg_list_loss's: y (n_classes == 0) or y_class (codes in [0, n_classes)).
 *
 * Greedy order (step 1): rule after rule, the unused rule whose rows among those left
 * (no earlier rule took them) and the rest of those rows have the least sum of their
 * constants' losses (ties: the lower rule; a NaN cost wins, as np.argmin takes it).
 * order: n_rules entries, out.
 *
 * With local_search (step 2), then: rule i (i = 0, 1, ...) moved to position j (j = 0,
 * 1, ..., j != i) is kept where the list's loss drops below loss - 1e-12 max(loss, 1),
 * the scan going on over the new order; passes until one keeps no move.
 *
 * stop: the caller's stop flag (dfg_common.h) or NULL, read before each rule of a pass.
 * DFG_EINVAL: a negative size, a missing array or target, a class code out of range;
 * DFG_ENOMEM; DFG_EINTERRUPTED.
 */
int dfg_list_order(const uint8_t *cover, int64_t n_samples, int64_t n_rules, const double *y,
                   const int64_t *y_class, int64_t n_classes, int local_search, int64_t *order,
                   const volatile int *stop);

#endif
