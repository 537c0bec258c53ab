/*
 * dfg_additive_path.h - the additive path: FIGS (Tan et al. 2022, "Fast interpretable
 * greedy-tree sums") over the ensemble's single splits, grown one split at a time
 * (defrag/search/additive_search.py's grow_additive_path calls it;
 * tests/additive_search_reference.py is the NumPy reference).
 *
 * S (n x L, row-major, 0/1) holds every split as a binary feature and T (n x d,
 * row-major, finite) the targets, as in dfg_list_search.h. The model is base + the sum of
 * its terms: base the mean of T's rows; a term a binary tree whose internal nodes test one
 * split l (< L), its "then" child taking the rows with s_l = 1, its "else" child those with
 * s_l = 0, its leaves holding vectors (d) added to the prediction. Node ids within a
 * term: the root 0; the term's k-th split (0-based, within the term) creates the nodes
 * 2k + 1 (then) and 2k + 2 (else).
 *
 * A step takes the largest of these drops of the squared error of T:
 *   - for each term t in order, each of its leaves in node-id order: the best split l of
 *     the leaf by CART's drop on the residual R_t = T - base - sum_{u != t} f_u (f_u: term
 *     u's leaf values on each row) over the leaf's rows,
 *       |s_A|^2 / c_A + |s_P - s_A|^2 / (c_P - c_A) - |s_P|^2 / c_P
 *     (s, c: the residual's sums and the row counts of the leaf P and its rows A with
 *     s_l = 1), -inf where a side has fewer than min_leaf rows; the lowest l whose drop
 *     is within tol (below) of the largest;
 *   - a new term (its index the number of terms; its root, node 0, is split): the best
 *     split of all rows on R = T - base - sum_u f_u, its drop plus |sum R|^2 / n (a new
 *     term starts at 0, not at R's mean).
 * The path stops when the largest drop is <= tol, rel_tol times the squared error of T
 * about base (at least 1e-300), or after max_splits steps; else it takes the first
 * candidate in order (the terms, their leaves, the new term) whose drop is within tol of
 * the largest. (Drops closer than tol are equal: two splits that cut a leaf's rows alike,
 * their sides swapped, drop the same but for rounding, and the choice between them must
 * not rest on it. The kernel and its reference, which sum differently, choose alike.)
 * The two children of a split start at the means of the residual the split was chosen on
 * (the values its drop assumes). Then backfit_rounds rounds of backfitting, each over the
 * terms in order: term t's leaf values become the means of R_t over each leaf's rows (R_t
 * with the other terms' current values).
 *
 * Arithmetic (double). T0 = T - base (base: the rows' sums in row order, over n). A leaf
 * keeps the sums of T0 over its rows and over its rows with s_l = 1, and the counts of
 * the latter: the smaller child of a split summed over its rows in row order
 * (dfg_list_literal_sums), the larger its parent's sums less the smaller's. Two leaves of
 * different terms keep the counts of the rows in both (with s_l = 1, per l), exact
 * integers. A leaf m of term t has then for residual sums its sums of T0 less v_q times
 * the counts it shares with each leaf q of the other terms (terms in order, leaves in
 * node-id order); a new term, the sums of T0 over all rows less v_q times the counts of
 * each leaf q. No sum over rows is redone when the values change: a step costs
 * O(rows of the smaller child x L x (d + terms)) for the new leaves' sums and counts plus
 * O(leaves^2 x L x d) for the residuals' sums, and memory grows with the pairs of leaves
 * (L counts each). Results do not depend on the thread count: each sum and count is
 * made by one thread, in a fixed order.
 */
#ifndef DFG_ADDITIVE_PATH_H
#define DFG_ADDITIVE_PATH_H

#include "dfg_common.h"

/* Grows the path. S: n_samples x n_splits, entries 0 or 1 (n_samples at most INT32_MAX);
 * T: n_samples x n_targets, finite (S's and T's values: the caller's check; sizes and
 * settings are checked here); max_splits >= 0 (at most INT32_MAX / 2), min_leaf >= 1,
 * backfit_rounds >= 0, rel_tol finite and >= 0, n_threads >= 1. Output: *n_steps steps,
 * step t splitting node step_node[t] of term step_term[t] on split step_split[t]
 * (max_splits entries each); base (n_targets); leaf_values (2 max_splits x n_targets):
 * row 2t + side the final value of the node step t created on that side (0: then,
 * 1: else), NaN where that node was split later. stop: the caller's stop flag
 * (dfg_common.h) or NULL, read before each step and each backfit round. */
int dfg_additive_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                           int64_t n_targets, int64_t max_splits, int64_t min_leaf, int64_t backfit_rounds,
                           double rel_tol, int64_t *step_term, int64_t *step_node, int64_t *step_split,
                           int64_t *n_steps, double *base, double *leaf_values, int n_threads,
                           const volatile int *stop);

/* The models of the first 1, 2, .., m steps (m x 3: term, node, split; a path, the
 * caller's check) replayed as defrag/search/additive_search.py's additive_value_path
 * computes them, to the bit: T0 (n x d) the targets less their mean; after each step, its
 * two new leaves set to the means of their term's residual, then backfit_rounds rounds
 * over the terms in order, each setting every leaf of the term to that mean. values: for
 * each step, the model's leaf values (d each), term by term, each term's leaves in node
 * order (at most m (m + 1) d entries). *bad_step: the first step that leaves a side of its
 * node without rows (the replay stops there), else -1. */
int dfg_additive_replay(const uint8_t *S, const double *T0, int64_t n, int64_t L, int64_t d, const int64_t *steps,
                        int64_t m, int64_t backfit_rounds, double *values, int64_t *bad_step);

#endif
