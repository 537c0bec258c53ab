"""A box tree searched for over the ensemble's splits, at every size.

A box tree is a binary tree whose internal nodes each test a box (a conjunction of
literals, defrag/search/list_search.py): the node's "then" child takes its rows where every
literal holds, its "else" child the others. A reader pays a node's conditions once for all
the leaves below it, where a rule list pays every condition of every earlier rule.

The tree grows best-first, as CART grows a tree but with a box in place of a single split:
each leaf's box is searched once, when the leaf is created, by the rule list's box
refinement (from the empty box and the best candidate boxes, FAB's components: add a
literal, drop one, move a threshold within its group) with the leaf's rows as ``left``,
and scored by CART's drop of the squared error of T (about each side's mean) less
``literal_price`` times the leaf's squared error per literal beyond the first. Each step
splits the leaf whose box drops the loss most, so the trees of 1, 2, ... leaves are the
prefixes of one list of steps.

The growth runs in C (src_c/dfg_tree_path.c, sharing src_c/dfg_box_refine.c with the list
search); its NumPy reference is tests/tree_search_reference.py: the two give the same
steps wherever the target sums are exact (counts, class indicators, small integers).
"""
import numbers

import numpy as np

from . import _tree_search
from .list_search import MAX_MOVES, N_STARTS, REL_TOL, checked_count, checked_problem, checked_split_matrix


def grow_tree_path(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price=0.0, min_leaf=1,
                   n_threads=None, outputs=None, node_outputs=False):
    """The box tree at every size: a list of steps [(leaf, box), ...], box a sorted list of
    literals. Node 0 is the root leaf (all rows); step t splits leaf ``leaf`` into node
    2t + 1 (its rows where every literal of box holds) and node 2t + 2 (the others), so the
    tree of k leaves is the first k - 1 steps (at most max_leaves - 1 of them).

    S (n, L; bool): the rows' sides of the splits; T (n, d) or (n,): the targets (class
    indicators in classification); literal_feature, literal_group: those of
    list_search.literal_groups; candidates: a CandidateBoxes or a sequence of boxes
    (sequences of literals in [0, 2L)). A leaf P's box B maximises

        drop(P -> P & B, P \\ B) - literal_price * SSE(P) * (len(B) - 1)

    where drop is CART's decrease of the squared error of T about each side's mean (a
    split needs min_leaf rows on each side) and SSE(P) the squared error of P's rows about
    their mean. Each step splits the leaf whose box has the largest drop (ties: the lower
    node id); the growth stops when no leaf's box drops the loss by more than REL_TOL times
    that of all rows. n_threads: the kernel's threads (None: as many as this thread may
    use); the steps do not depend on it.

    node_outputs: also return every node's output, as (steps, {node id: vector (d,)}): the
    mean of outputs (n, d; T where None) over the node's rows, as the kernel computes the
    leaves' outputs it scores (grow_tree_path_scored), node 0 all rows' mean."""
    val = None if not node_outputs else (None, None, 0, _checked_outputs(outputs, T))
    return _grown(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price, min_leaf,
                  n_threads, val)


def grow_tree_path_scored(S, T, literal_feature, literal_group, candidates, max_leaves, S_val, y_val, n_classes=0,
                          literal_price=0.0, min_leaf=1, n_threads=None, outputs=None):
    """(steps, losses, checks): grow_tree_path's steps, and the validation rows' scores at
    every size k = 1 .. max_leaves, each (max_leaves, m): row k - 1 is the tree of k leaves
    (sizes past the path repeat its largest tree).

    S_val (m, L; bool): the validation rows' sides of the splits; y_val (m,): their
    targets, class codes in [0, n_classes) where n_classes > 0 (T then has n_classes
    columns), else numbers. A leaf's output is the mean of T over its rows of S (all rows'
    where it has none). losses: the 0/1 error of the output's most probable class (the
    first of equals), or the squared error of its first entry; checks: the comparisons a
    reader makes down to the row's leaf, at each box its literals read from the one the
    split leaf's rows hold least often (ties: the box's order) up to the first that fails.
    outputs (n, d) or None: the tree is grown on T, its leaves' outputs are the means of
    outputs (the values it prints where they are not T's)."""
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 0:
        raise ValueError(f"n_classes must be an integer >= 0, not {n_classes!r}")
    n_classes = int(n_classes)
    S_val = checked_split_matrix(S_val, "S_val")
    y_val = np.asarray(y_val)
    if y_val.shape != (S_val.shape[0],):
        raise ValueError(f"y_val must hold one target per row of S_val ({S_val.shape[0]}), not shape {y_val.shape}")
    if n_classes:
        if y_val.size and y_val.dtype.kind not in "iu":
            raise TypeError(f"y_val must hold integer class codes, not {y_val.dtype}")
        if y_val.size and (y_val.min() < 0 or y_val.max() >= n_classes):
            raise ValueError(f"y_val's class codes must be in [0, {n_classes})")
        y_val = np.ascontiguousarray(y_val, dtype=np.int64)
    else:
        if y_val.dtype.kind not in "biuf":
            raise TypeError(f"y_val must be numeric, not {y_val.dtype}")
        y_val = np.ascontiguousarray(y_val, dtype=np.float64)
        if not np.all(np.isfinite(y_val)):
            raise ValueError("y_val holds NaN or infinite values")
    return _grown(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price, min_leaf,
                  n_threads, (S_val, y_val, n_classes, _checked_outputs(outputs, T)))


def _checked_outputs(outputs, T):
    if outputs is None:
        return None
    outputs = np.ascontiguousarray(outputs, dtype=np.float64)
    if outputs.shape != np.shape(T) or not np.all(np.isfinite(outputs)):
        raise ValueError(f"outputs must be finite, of T's shape {np.shape(T)}, not {outputs.shape}")
    return outputs


def _grown(S, T, literal_feature, literal_group, candidates, max_leaves, literal_price, min_leaf, n_threads, val):
    """grow_tree_path's steps; val: (S_val, y_val, n_classes, outputs), checked, or None;
    where given, (steps, losses, checks), or (steps, node outputs) where S_val is None."""
    max_leaves = checked_count(max_leaves, "max_leaves", 1)
    min_leaf = checked_count(min_leaf, "min_leaf", 1)
    if isinstance(literal_price, bool) or not isinstance(literal_price, numbers.Real):
        raise TypeError(f"literal_price must be a real number, not {literal_price!r}")
    literal_price = float(literal_price)
    if not (np.isfinite(literal_price) and literal_price >= 0.0):
        raise ValueError(f"literal_price must be finite and >= 0, not {literal_price}")
    problem = checked_problem(S, T, literal_feature, literal_group, candidates, min_leaf, n_threads)
    n, L = problem.S.shape
    n_sizes = max_leaves
    max_leaves = min(max_leaves, max(n // min_leaf, 1))  # every leaf keeps min_leaf rows
    if val is None:
        if L == 0 or max_leaves < 2:
            return []
        scored = {}
    elif val[0] is None:
        scored = dict(outputs=val[3], node_outputs=True)
    else:
        S_val, y_val, n_classes, outputs = val
        if S_val.shape[1] != L:
            raise ValueError(f"S_val has {S_val.shape[1]} columns for the {L} of S")
        if n_classes and problem.T.shape[1] != n_classes:
            raise ValueError(f"T must have a column per class ({n_classes}), not {problem.T.shape[1]}")
        scored = dict(S_val=S_val.view(np.uint8), n_classes=n_classes, n_sizes=n_sizes, outputs=outputs,
                      **({"codes_val": y_val} if n_classes else {"y_val": y_val}))
    out = _tree_search.tree_path_grow(
        problem.S.view(np.uint8), problem.T, problem.feature, problem.group, problem.ptr, problem.literals,
        max_leaves, literal_price, min_leaf, MAX_MOVES, N_STARTS, REL_TOL, problem.n_threads, **scored)
    leaf, ptr, literals = out[:3]
    steps = [(int(leaf[t]), literals[ptr[t]:ptr[t + 1]].tolist()) for t in range(leaf.size)]  # over the steps
    if val is None:
        return steps
    if val[0] is None:
        return steps, dict(enumerate(out[3]))
    return steps, out[3], out[4]
