/*
 * dfg_list_loss.h - the training loss of a rule list (defrag/rules/lists.py). Each row
 * goes to the first rule of the list that covers it, or to the default; each group's
 * output is refitted on its rows (the mean, or the majority class); the loss is the
 * squared error about the groups' means, or the count of misclassified rows. Fitting a
 * restart's list (ordering, local search, pruning) asks for it a few hundred times, on
 * a few hundred rows each time: in NumPy each call took a copy of the cover's columns,
 * a first-match scan and three bincounts, twenty microseconds of overhead.
 *
 * The arithmetic is that of the NumPy version, so that the list's decisions (the loss
 * compared with the best so far or with a budget) come out the same: each group's sum
 * over its rows in row order (np.bincount), its mean sum / max(count, 1), the squared
 * residuals summed per group in row order, and the groups' totals added by NumPy's
 * pairwise summation (np.sum of a float64 array). The files are built with
 * -ffp-contract=off: no fused multiply-adds.
 */
#ifndef DFG_LIST_LOSS_H
#define DFG_LIST_LOSS_H

#include "dfg_common.h"

/*
 * cover: n_samples x n_columns bytes, row-major (nonzero: the column's rule covers the
 * row). The list is the columns order[0], ..., order[n_rules - 1], in that order (a
 * column may appear more than once). Targets: y (n_samples values) where n_classes ==
 * 0, else y_class (n_samples codes in [0, n_classes)); the other may be NULL.
 * Out: *loss, and *all_matched = 1 when every rule of the list is the first match of
 * at least one row, else 0. DFG_EINVAL: a negative size, an order entry or class code
 * out of range, or a missing target; DFG_ENOMEM: an allocation failed.
 */
int dfg_list_loss(const uint8_t *cover, int64_t n_samples, int64_t n_columns,
                  const int64_t *order, int64_t n_rules, const double *y,
                  const int64_t *y_class, int64_t n_classes, double *loss, int *all_matched);

/* Whether the targets are as dfg_list_loss takes them: y present (n_classes == 0), or
 * y_class present with every code in [0, n_classes); n_samples 0 needs neither. */
int dfg_list_targets_ok(int64_t n_samples, const double *y, const int64_t *y_class, int64_t n_classes);

/* dfg_list_loss without its checks, for callers that checked the sizes, the order and
 * the targets (dfg_list_targets_ok) once and ask for the losses of many lists of the same
 * rows (dfg_list_order.c, dfg_list_prune.c): checking every class code on each call was
 * another pass over the rows per list. DFG_ENOMEM where an allocation fails. */
int dfg_list_loss_unchecked(const uint8_t *cover, int64_t n_samples, int64_t n_columns,
                            const int64_t *order, int64_t n_rules, const double *y,
                            const int64_t *y_class, int64_t n_classes, double *loss, int *all_matched);

/* np.sum of n doubles (NumPy's pairwise summation, the same rounding). */
double dfg_pairwise_sum(const double *a, int64_t n);

#endif
