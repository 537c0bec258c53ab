/*
 * dfg_list_prune.h - a rule list's conditions pruned against its training loss
 * (defrag/rules/lists.py, step 4 of a list's fit; the NumPy version is the reference in
 * tests/test_rule_list.py). Rule r of the list is the conjunction of its conditions
 * c = rule_ptr[r] .. rule_ptr[r + 1] - 1, each a truth column over the rows. In each of
 * n_passes passes, rule by rule in list order, each condition still kept is tried in
 * the order of its rows held, most first (ties: the earlier condition): it is dropped
 * when the list without it has a training loss (dfg_list_loss.h, the same doubles) of
 * at most budget and every rule is still the first match of some row. The passes stop
 * early when one drops nothing. With keep_one, a rule never loses its last condition (a
 * rule without conditions takes every row left: as the list's last rule it would merge
 * with the default, and the list would have a region fewer).
 */
#ifndef DFG_LIST_PRUNE_H
#define DFG_LIST_PRUNE_H

#include "dfg_common.h"

/*
 * holds: n_conditions x n_samples bytes (row c: condition c's truth on every row,
 * nonzero where it holds); rule_ptr: n_rules + 1 entries from 0, nondecreasing, the last
 * n_conditions; targets y / y_class and n_classes as in dfg_list_loss.
 * keep (n_conditions, in and out): 1 for a condition kept (0 on input: already dropped,
 * never tried); cover (out, n_samples x n_rules bytes): each rule's column of the
 * pruned list. stop: the caller's stop flag (dfg_common.h) or NULL, read before each
 * trial. DFG_EINVAL on bad sizes or targets, DFG_ENOMEM, DFG_EINTERRUPTED.
 */
int dfg_list_prune(const uint8_t *holds, int64_t n_samples, int64_t n_conditions,
                   const int64_t *rule_ptr, int64_t n_rules, const double *y,
                   const int64_t *y_class, int64_t n_classes, double budget, int64_t n_passes,
                   int keep_one, uint8_t *keep, uint8_t *cover, const volatile int *stop);

#endif
