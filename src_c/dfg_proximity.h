/*
 * dfg_proximity.h - tree-ensemble proximity and distance from leaf indices
 * (Tan et al., "Tree Space Prototypes", Definitions 1 and 3).
 *
 * Each point is described by the leaf it reaches in each of T trees. With tree
 * weights w_t >= 0 (all 1 for a random forest, Definition 1; gamma_t^2 times the
 * variance of the tree's output for gradient boosting, Definition 3):
 *
 *     proximity(a, b) = sum_t w_t [leaf_t(a) == leaf_t(b)] / sum_t w_t
 *     distance(a, b)  = 1 - proximity(a, b)
 *
 * When all non-zero weights are equal (a random forest) the proximity is the exact
 * count of shared leaves over the number of kept trees. Otherwise sums are taken
 * in float in tree order, the numerator over the same terms as the
 * denominator, so d(a, a) == 0 exactly, d(a, b) == d(b, a) exactly and every value
 * lies in [0, 1]. Each output entry is computed by one thread in a fixed order:
 * results do not depend on the thread count.
 */
#ifndef DFG_PROXIMITY_H
#define DFG_PROXIMITY_H

#include "dfg_common.h"

/*
 * leaves_a:  n_a x n_trees, row-major (point-major), leaf id of each point in each tree.
 * leaves_bt: n_trees x n_b, row-major (tree-major: the transpose of B's leaf matrix).
 * weights:   n_trees non-negative finite weights with a positive sum.
 * out:       n_a x n_b, row-major: the distances 1 - proximity.
 * stop:      the caller's stop flag (dfg_common.h) or NULL, read before each tile.
 * Returns DFG_OK, or DFG_EINVAL for negative sizes, n_trees < 1, n_threads < 1, or
 * bad weights, or DFG_EINTERRUPTED when stopped (out then partly written).
 */
int dfg_tree_distance(const int32_t *leaves_a, int64_t n_a, const int32_t *leaves_bt,
                      int64_t n_b, int64_t n_trees, const float *weights, float *out,
                      int n_threads, const volatile int *stop);

#endif
