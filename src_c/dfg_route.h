/*
 * dfg_route.h - rows down an explanation: the one router every printed form reads rows with.
 *
 * An explanation is n_terms binary trees over one array of items (sklearn's Tree holds
 * its nodes the same way). Item i is a box or a leaf:
 *   box[i] >= 0: rule box[i] of the boxes (a dfg_ruleset, dfg_rules.h): where every
 *                condition of that rule holds the row goes on to then_item[i], else to
 *                else_item[i];
 *   box[i] == -1: a leaf, where the row stops.
 * Term t starts at roots[t]. An ordered list of rules is one term whose then-items are
 * all leaves; a tree of rules one term; a sum of trees one term per tree.
 * Children come after their parent (then_item[i] > i and else_item[i] > i), so that
 * every walk ends: dfg_route_check refuses any other array.
 *
 * Missing values are read as dfg_rules.h reads them: a NaN on a feature where some
 * condition has missing == 2 makes the call return DFG_ENAN, whichever boxes a row meets.
 *
 * Per row it writes what the caller asks for (each output NULL when not wanted):
 *   items   (N x n_terms): the leaf item the row reaches in each term, or label[item]
 *           where label (n_items) is given (a leaf's number, its value's index);
 *   reads   (N): the comparisons a reader makes, going down every term: at each box its
 *           conditions in their order until the first that fails, all of them where the
 *           box holds. A condition costs cost[c] comparisons (2 for an interval
 *           a < x <= b, 1 for any other) where it holds; where it fails, 1 if the value is
 *           missing or its lower bound fails, else cost[c];
 *   visits  (n_items): the rows that pass through each item, added to what it holds.
 * Where only items are asked for and the tree is a list (one term, rule r the r-th box down the
 * "else" branches, every "then" a leaf), the rows go through dfg_rules_first, whose dense
 * boxes test a row's values at once: the same items.
 * Results do not depend on the thread count.
 */
#ifndef DFG_ROUTE_H
#define DFG_ROUTE_H

#include "dfg_common.h"
#include "dfg_rules.h"

typedef struct {
    int64_t n_items;
    int64_t n_terms;
    const int64_t *box;       /* n_items: the rule tested, -1 at a leaf */
    const int64_t *then_item; /* n_items: the next item where the box holds (unread at a leaf) */
    const int64_t *else_item; /* n_items: the next item where it fails (unread at a leaf) */
    const int64_t *roots;     /* n_terms */
} dfg_route_tree;

/* Checks the sizes, that every box is a rule of boxes and every child a later item. */
int dfg_route_check(const dfg_route_tree *tree, int64_t n_boxes);

/* Routes the N x n_features rows of X (row-major); cost (one per condition of boxes) is
   read only when reads is given (NULL where boxes have no condition). OpenMP above a few thousand rows. */
int dfg_route(const double *X, int64_t n_samples, int64_t n_features, const dfg_ruleset *boxes,
              const dfg_route_tree *tree, const uint8_t *cost, const int64_t *label, int64_t *items,
              double *reads, int64_t *visits, int n_threads);

#endif
