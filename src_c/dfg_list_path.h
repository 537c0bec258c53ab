/*
 * dfg_list_path.h - the rule list at every size, grown one region at a time
 * (defrag/search/list_search.py's grow_list_sizes calls it; tests/list_search_reference.py's
 * grow_list_sizes is the NumPy reference, the same wherever the target sums are exact:
 * counts, class indicators, small integers).
 *
 * S, T, the literals and the candidate boxes are those of dfg_list_search.h. The list
 * starts empty (one region, the default) and each step lowers the training loss (the
 * squared error of T about each region's mean, regions by first match) by the largest of:
 *
 *   - an append: the next rule on the default's rows, either the box dfg_list_search_grow
 *     grows there (one rule) or the best single literal on them (CART's split of that
 *     region; the side with fewer rows is the rule, the first side on a tie), whichever
 *     drops the loss more (the box on a tie);
 *   - a split of rule i's region: the rule's box plus the single literal of best drop,
 *     inserted right before rule i (it takes the region's rows on that literal's side).
 *
 * A drop is CART's: |s_1|^2 / c_1 + |s_2|^2 / c_2 - |s|^2 / c for a region (target sums s,
 * count c) split in two (s_1, c_1 and s_2, c_2; -inf where a side is empty). A split's
 * literal is the split l < L of largest drop (its s_l = 1 side; ties: the lower l). Moves
 * compare by drop, the append first, then the rules' splits in list order, each kept only
 * if strictly larger; a step needs a drop above rel_tol times the squared error of all
 * rows about their mean (at least 1e-300). The growth stops after params->max_rules rules,
 * or when no move drops the loss that much.
 *
 * A region's best split and the default's next rule are computed once and kept until a
 * step changes that region. Sums are double, in row order; with OpenMP the literals of
 * a split's sums are shared among threads, each summed by one thread, so results do not
 * depend on the thread count (nor do dfg_list_search_grow's).
 */
#ifndef DFG_LIST_PATH_H
#define DFG_LIST_PATH_H

#include "dfg_common.h"
#include "dfg_list_search.h"

enum { DFG_STEP_APPEND = 0, DFG_STEP_SPLIT = 1 };

/* Grows the list. Inputs as dfg_list_search_grow's (params->max_rules: the rules at most).
 * Output: *n_steps steps; step t is step_kind[t] (DFG_STEP_APPEND or DFG_STEP_SPLIT),
 * step_rule[t] (the position of the new rule in the list: the end for an append, i for a
 * split of rule i) and the new rule's box, sorted: step_literals[step_ptr[t] ..
 * step_ptr[t + 1]). step_kind, step_rule: max_rules entries; step_ptr: max_rules + 1;
 * step_literals: capacity entries, at least max_rules times (dfg_list_search_box_bound's
 * bound + max_rules) (a split adds one literal to a box). */
int dfg_list_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                       int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                       const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                       const dfg_list_params *params, int64_t *step_kind, int64_t *step_rule,
                       int64_t *step_ptr, int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                       int n_threads, const volatile int *stop);

#endif
