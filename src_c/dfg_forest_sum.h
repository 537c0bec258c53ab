/*
 * dfg_forest_sum.h - rows down the trees of a scikit-learn forest, their leaf values summed.
 *
 * The trees lie end to end in one set of node arrays (node ids global): tree t starts at
 * roots[t]; an internal node sends a row to left[i] where x <= threshold[i] (the float32
 * value compared as a double, as scikit-learn's Tree.apply compares it), else to right[i];
 * a NaN goes left where missing_left[i] is 1, right where it is 0 (missing_left NULL: the
 * comparison, false for NaN, so right); a leaf has left[i] == -1. Children come after
 * their parent within their tree (left[i] > i, right[i] > i, both before the next tree's
 * root): dfg_forest_sum refuses any other array, so every walk ends inside the arrays.
 *
 * out (n_samples x n_values) is the first tree's leaf value row, then each other tree's
 * added in tree order: the sum scikit-learn's forests take over tree_.predict, the same
 * double arithmetic in the same order. Rows go down one tree after another in tasks of
 * at most a few thousand, several rows at once (their memory loads overlap); each row is
 * summed by one thread: results do not depend on the thread count.
 */
#ifndef DFG_FOREST_SUM_H
#define DFG_FOREST_SUM_H

#include "dfg_common.h"

typedef struct {
    int64_t n_trees;              /* >= 1 */
    int64_t n_nodes;              /* all trees' nodes */
    int64_t n_values;             /* >= 1: the columns of value */
    const int64_t *roots;         /* n_trees, increasing, roots[0] == 0 */
    const int64_t *left;          /* n_nodes: -1 at a leaf */
    const int64_t *right;         /* n_nodes */
    const int64_t *feature;       /* n_nodes: read at internal nodes */
    const double *threshold;      /* n_nodes */
    const uint8_t *missing_left;  /* n_nodes, or NULL */
    const double *value;          /* n_nodes x n_values, row-major */
} dfg_forest;

/* The sum over the trees of each row's leaf values (see above); X: n_samples x n_features,
   row-major float32. DFG_EINVAL where the arrays are no such trees: sizes (n_nodes and
   n_features at most INT32_MAX), roots from 0 increasing, a leaf's two children -1, an
   internal node's children after it inside its tree, its feature in [0, n_features); the
   nodes are checked on the copy the walk reads, each value read once. OpenMP over tasks of
   rows, from two tasks. */
int dfg_forest_sum(const float *X, int64_t n_samples, int64_t n_features, const dfg_forest *forest,
                   double *out, int n_threads, const volatile int *stop);

#endif
