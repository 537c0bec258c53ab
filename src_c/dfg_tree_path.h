/*
 * dfg_tree_path.h - the box tree at every size, grown best-first (defrag/search/tree_search.py's
 * grow_tree_path calls it; tests/tree_search_reference.py is the NumPy reference, the same
 * wherever the target sums are exact: counts, class indicators, small integers).
 *
 * A box tree's internal nodes test a box (a conjunction of literals, dfg_box_refine.h):
 * its "then" child takes the node's rows where every literal holds, its "else" child the
 * others. Node 0 is the root leaf (all rows); step t (0-based) splits leaf step_leaf[t]
 * by its box into node 2t + 1 (then) and node 2t + 2 (else), so the tree of k leaves is
 * the first k - 1 steps.
 *
 * A leaf's box is dfg_refine_best's in DFG_GAIN_TWO_SIDED mode with left the leaf's rows:
 * gain CART's drop of the squared error of T about each side's mean (-inf where a side has
 * fewer than min_leaf rows), score drop - literal_price * SSE(leaf) * (len - 1). It is
 * searched once, when the leaf is created (not for the leaves of the last step). Each step
 * splits the leaf whose box has the largest drop (ties: the lower node id); the growth
 * stops after max_leaves - 1 steps or when no leaf has a box (a box needs a drop above
 * rel_tol times the squared error of all rows about their mean, at least 1e-300).
 *
 * Sums are double. A split leaf's children take its rows' sums of every literal: the
 * smaller child's summed anew (in row order), the larger's the leaf's less those (where the
 * leaf's were kept: up to TP_SUMS_BYTES of them, in dfg_tree_path.c); with OpenMP the
 * literals' sums are shared among threads, each summed by one thread, so results do not
 * depend on the thread count.
 */
#ifndef DFG_TREE_PATH_H
#define DFG_TREE_PATH_H

#include "dfg_box_refine.h"
#include "dfg_common.h"

typedef struct {
    int64_t max_leaves;   /* >= 1 */
    double literal_price; /* finite, >= 0 */
    int64_t min_leaf;     /* rows each side of a split needs (>= 1) */
    int64_t max_moves;    /* moves per refined box (>= 0; MAX_MOVES) */
    int64_t n_starts;     /* candidate boxes refined per leaf (>= 0; N_STARTS) */
    double rel_tol;       /* finite, >= 0 (REL_TOL) */
} dfg_tree_params;

/* Validation rows scored at every size of the tree as it grows, what cross-validation
 * reads (its NumPy reference: tests/tree_search_reference.py's tree_path_scores). Row k
 * (0-based) of losses and checks is the tree of the first k steps (k + 1 leaves); rows
 * past the last step repeat its tree. A validation row goes down the
 * tree as a training row does (a box's "then" child where all its literals hold).
 *
 * A leaf's output is the mean of T (of outputs, where given: the values a leaf prints, the
 * tree grown on T) over its training rows, summed in row order as the
 * reference's NumPy sums them: the root's one row at a time, a child's pairwise (NumPy's
 * order) where T has one column and one row at a time where it has several; a child
 * without training rows takes the mean of all of them, the root without any 0.
 *   losses: n_classes 0: (output[0] - y)^2; else 1 where the first largest entry of the
 *     output (n_classes of them) is not the row's class code, 0 where it is.
 *   checks: the comparisons a reader makes down to the row's leaf: at each box its
 *     literals in ascending order of the training rows of the split leaf where each holds
 *     (ties: the box's order), up to the first that fails (counted), all where the box holds.
 */
typedef struct {
    const uint8_t *S;     /* n_val x n_splits, entries 0 or 1 */
    const double *y;      /* n_classes 0: n_val finite targets (else unread) */
    const int64_t *codes; /* n_classes > 0: n_val class codes in [0, n_classes) (else unread) */
    int64_t n_val;        /* >= 0 */
    int64_t n_classes;    /* 0 (regression: T's first column) or n_targets */
    const double *outputs; /* n_samples x n_targets, finite (the caller's check): the leaves' outputs are its
                              means; NULL: T's */
    int64_t n_sizes;      /* rows of losses and checks, >= 1 */
    double *losses;       /* n_sizes x n_val, row-major */
    double *checks;       /* n_sizes x n_val, row-major */
    double *node_outputs; /* (2 max_leaves - 1) x n_targets, or NULL: every node's output (row g: node g's,
                             as a leaf's above; node 0 all rows' mean summed as a child's), written for
                             the nodes the path makes, whatever n_sizes and n_val (0 allowed) */
} dfg_tree_scores;

/* Grows the tree. S: n_samples x n_splits (entries 0 or 1); T: n_samples x n_targets
 * (finite); literal_feature (>= 0) and literal_group: 2 n_splits each (these values, and
 * those of scores, are the caller's check: dfg_refine_check); candidates in CSR form:
 * cand_ptr (n_candidates + 1, from 0, nondecreasing) into cand_literals (each in
 * [0, 2 n_splits), checked here). Output: *n_steps steps (at most max_leaves - 1), step t splitting leaf
 * step_leaf[t] by the box step_literals[step_ptr[t] .. step_ptr[t + 1]), sorted
 * (duplicates, which a threshold move can make, kept). step_leaf: max_leaves - 1 entries;
 * step_ptr: max_leaves; step_literals: capacity entries, at least (max_leaves - 1) times
 * dfg_list_search_box_bound's bound. scores: validation rows scored at every size (see
 * dfg_tree_scores), or NULL. stop: the caller's stop flag (dfg_common.h) or NULL, read
 * before each step and move. */
int dfg_tree_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                       int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                       const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                       const dfg_tree_params *params, int64_t *step_leaf, int64_t *step_ptr,
                       int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                       const dfg_tree_scores *scores, int n_threads, const volatile int *stop);

#endif
