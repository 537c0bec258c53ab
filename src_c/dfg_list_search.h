/*
 * dfg_list_search.h - the greedy rule-list search over the ensemble's splits
 * (defrag/search/list_search.py, ListSearch.grow, is the NumPy reference; the two
 * give the same boxes wherever the target sums are exact: counts, class indicators,
 * small integers).
 *
 * S, T, the literals and the boxes are those of dfg_box_refine.h. Each rule is the best
 * box (dfg_refine_best, DFG_GAIN_ONE_SIDED: its score is the gain c_R |m_R - m_left|^2 of
 * what the rule's own rows gain) in `left`, the rows no earlier rule took;
 * its literals are sorted (duplicates, which a threshold move can make, are kept) and
 * its rows leave `left`. The search stops after max_rules rules, when fewer than 2 rows
 * are left, or when no start gives a rule (or at once when L = 0).
 */
#ifndef DFG_LIST_SEARCH_H
#define DFG_LIST_SEARCH_H

#include "dfg_box_refine.h"
#include "dfg_common.h"

typedef struct {
    int64_t max_rules;      /* rules at most (>= 0) */
    int64_t min_support;    /* rows a rule's region needs */
    int64_t max_moves;      /* moves per refined box (>= 0; MAX_MOVES) */
    int64_t n_starts;       /* candidate boxes refined per rule (>= 0; N_STARTS) */
    double rel_tol;         /* finite, >= 0 (REL_TOL) */
} dfg_list_params;

/* Grows the list. S: n_samples x n_splits (entries 0 or 1); T: n_samples x n_targets
 * (finite); literal_feature (>= 0) and literal_group: 2 n_splits each (these values are
 * the caller's check: dfg_refine_check); candidates in CSR form: cand_ptr (n_candidates +
 * 1, from 0, nondecreasing) into cand_literals (each in [0, 2 n_splits), checked here). Output: *n_boxes boxes, box i the literals
 * box_literals[box_ptr[i] .. box_ptr[i + 1]) (box_ptr: max_rules + 1 entries;
 * box_literals: capacity entries, at least max_rules times dfg_list_search_box_bound's
 * bound). stop: the caller's stop flag (dfg_common.h) or NULL, read before each move. */
int dfg_list_search_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                         int64_t n_targets, const int64_t *literal_feature,
                         const int64_t *literal_group, const int64_t *cand_ptr,
                         const int64_t *cand_literals, int64_t n_candidates,
                         const dfg_list_params *params, int64_t *box_ptr, int64_t *box_literals,
                         int64_t capacity, int64_t *n_boxes, int n_threads,
                         const volatile int *stop);

#endif
