"""An additive form searched for over the ensemble's splits: FIGS (Tan et al. 2022, "Fast
interpretable greedy-tree sums") with the ensemble's split points as its only splits.

The model is base + f_0 + f_1 + ...: base the mean of the targets T (n, d) over the rows;
each term f_t a small binary tree whose internal nodes test one split l of the split
matrix S (n, L; bool): its "then" child takes the rows with s_l = 1, its "else" child
those with s_l = 0; its leaves hold vectors (d) added to the prediction. Node ids within a
term: the root 0; the term's k-th split (0-based, within the term) creates the nodes
2k + 1 (then) and 2k + 2 (else).

The path grows one split at a time, each the largest drop of the squared error among:

* a leaf of an existing term split the way CART splits a node, on the residual that term
  fits, R_t = T - base - (the other terms' values): CART's drop
  |s_A|^2 / c_A + |s_P - s_A|^2 / (c_P - c_A) - |s_P|^2 / c_P over the leaf's rows P and
  their rows A with s_l = 1 (s: the residual's sums, c: the row counts; both sides at
  least min_leaf rows; of the splits whose drops are within tol of the best, below, the
  lowest l);
* a new term whose root is split, on the residual of the whole model R: its best split's
  drop plus |sum R|^2 / n (a new term starts from 0, not from R's mean).

The path stops when no drop exceeds tol, REL_TOL times the squared error of T about base,
or after max_splits splits; otherwise it takes the first candidate in order (the terms in
order, each term's leaves by node id, then the new term) whose drop is within tol of the
largest. Drops closer than tol are equal: two splits that cut a leaf's rows alike, their
sides swapped, drop the same but for rounding, which must not choose. A split's two children
start at the means of the residual it was chosen on (the values its drop assumes); then
backfit_rounds rounds of backfitting, each over the terms in order, set each term's leaf
values to the means of its residual over each leaf's rows (the other terms' values as
they are then).

The growth runs in C (src_c/dfg_additive_path.h); its NumPy reference is
tests/additive_search_reference.py. grow_additive_path returns the steps; the model at
any number of splits b is their first b steps replayed with the same backfitting
(additive_values; additive_value_path gives every b from one replay, also in C), and additive_leaves
routes rows through its terms.
"""

import numpy as np

from ..utils.threads import threads_now
from . import _additive_search
from .list_search import REL_TOL, checked_count, checked_split_matrix, checked_targets

# Splits a path may take at most: the search keeps, for every two leaves of different
# terms, the rows they share per split (memory up to (2 max_splits)^2 / 2 x L x 4 bytes);
# an additive form of hundreds of splits is no explanation a reader can take in.
MAX_SPLITS = 256


def _checked_S(S):
    """S as checked_split_matrix gives it, with at least one row."""
    S = checked_split_matrix(S)
    if S.shape[0] == 0:
        raise ValueError("S has no rows")
    return S


def grow_additive_path(S, T, max_splits, min_leaf=1, backfit_rounds=3, n_threads=None):
    """The steps of the additive path on the split matrix S (n, L; bool) with targets T
    (n, d; or (n,)): a list [(term, node, split), ...], step t splitting node `node` of
    term `term` (a new term, its root node 0, where term is the number of terms so far)
    on split `split` (the node's rows with S[:, split] go to its "then" child). At most
    max_splits (<= MAX_SPLITS) steps; fewer where no split lowers the squared error by
    more than REL_TOL of the constant's. min_leaf: rows each side of a split keeps at
    least; backfit_rounds: rounds of backfitting after each split (module docstring).
    n_threads: the kernel's threads (None: as many as this thread may use); the result
    does not depend on it."""
    steps = _kernel_path(S, T, max_splits, min_leaf, backfit_rounds, n_threads)[0]
    return [tuple(s) for s in steps.tolist()]


def _kernel_path(S, T, max_splits, min_leaf, backfit_rounds, n_threads):
    """(steps (m, 3) int64, base (d,), leaf_values (m, 2, d)) of the kernel, the last the
    final values of the nodes each step made (NaN where split later)."""
    S = _checked_S(S)
    T = checked_targets(T, S.shape[0])
    max_splits = checked_count(max_splits, "max_splits", 0)
    if max_splits > MAX_SPLITS:
        raise ValueError(f"max_splits must be at most {MAX_SPLITS}, not {max_splits}")
    min_leaf = checked_count(min_leaf, "min_leaf", 1)
    backfit_rounds = checked_count(backfit_rounds, "backfit_rounds", 0)
    n_threads = threads_now() if n_threads is None else checked_count(n_threads, "n_threads", 1)
    term, node, split, base, values = _additive_search.additive_path_grow(
        S.view(np.uint8), T, max_splits, min_leaf, backfit_rounds, REL_TOL, n_threads)
    return np.column_stack([term, node, split]), base, values


def _checked_steps(steps, n_splits, L):
    """The first n_splits steps as a list of (term, node, split) ints, once they describe
    a path: each term the next one or an existing one, each node a leaf of its term."""
    steps = [tuple(s) for s in steps]
    n_splits = checked_count(n_splits, "n_splits", 0)
    if n_splits > len(steps):
        raise ValueError(f"n_splits = {n_splits} is more than the {len(steps)} steps")
    out, leaves = [], []
    for i, step in enumerate(steps[:n_splits]):  # over the steps (at most MAX_SPLITS), not rows
        if len(step) != 3:
            raise ValueError(f"step {i} must be (term, node, split), not {step!r}")
        term, node, split = (checked_count(v, f"step {i}'s entries", 0) for v in step)
        if term > len(leaves):
            raise ValueError(f"step {i} splits term {term} of {len(leaves)}")
        if term == len(leaves):
            leaves.append({0})
        if node not in leaves[term]:
            raise ValueError(f"step {i}: node {node} is not a leaf of term {term}")
        if split >= L:
            raise ValueError(f"step {i}: split {split} is not one of the {L} splits")
        k = len(leaves[term]) - 1  # the term's splits so far
        leaves[term] -= {node}
        leaves[term] |= {2 * k + 1, 2 * k + 2}
        out.append((term, node, split))
    return out


def additive_leaves(S, steps, n_splits=None):
    """Each row's leaf (node id) in each term of the model of the first n_splits steps
    (None: all), an int64 array (n, terms)."""
    S = _checked_S(S)
    steps = list(steps)
    steps = _checked_steps(steps, len(steps) if n_splits is None else n_splits, S.shape[1])
    return _route(S, steps)


def _route(S, steps):
    """additive_leaves on checked steps (a row of `leaf` per term)."""
    n = S.shape[0]
    leaf, splits = [], []
    for term, node, split in steps:  # over the steps, vectorised over rows
        if term == len(leaf):
            leaf.append(np.zeros(n, dtype=np.int64))
            splits.append(0)
        at = leaf[term] == node
        k = splits[term]
        leaf[term][at] = np.where(S[at, split], 2 * k + 1, 2 * k + 2)
        splits[term] = k + 1
    return np.column_stack(leaf) if leaf else np.zeros((n, 0), dtype=np.int64)


def additive_values(S, T, steps, n_splits, backfit_rounds=3):
    """(base (d,), values) of the model of the first n_splits steps of a path on S and T
    (as grow_additive_path's, whose backfit_rounds it must share): values[t] maps each
    leaf of term t (node id) to its value (d,). The steps are replayed as the kernel takes
    them (module docstring), in C (additive_value_path); the values are the kernel's to
    rounding."""
    S = _checked_S(S)
    T = checked_targets(T, S.shape[0])
    steps = _checked_steps(steps, n_splits, S.shape[1])
    path = additive_value_path(S, T, steps, backfit_rounds)
    return path[-1] if path else (T.mean(axis=0), [])


def additive_value_path(S, T, steps, backfit_rounds=3):
    """[(base, values) of the model of the first b steps, for b = 1 .. len(steps)], as
    additive_values gives each: one replay in C (src_c/dfg_additive_path.h), each model
    read off after its step and its backfitting (the model of b steps is where the replay
    of more steps stands then)."""
    S = _checked_S(S)
    T = checked_targets(T, S.shape[0])
    steps = _checked_steps(steps, len(list(steps)), S.shape[1])
    backfit_rounds = checked_count(backfit_rounds, "backfit_rounds", 0)
    base = T.mean(axis=0)
    if not steps:
        return []
    flat, bad = _additive_search.additive_replay(S.view(np.uint8), T - base, np.array(steps, dtype=np.int64),
                                                 backfit_rounds)
    if bad >= 0:
        raise ValueError(f"step {bad} leaves a side of node {steps[bad][1]} of term {steps[bad][0]} without rows")
    flat = flat.reshape(-1, T.shape[1])
    leaves, path, at = [], [], 0  # per term: its leaves in node order
    for term, node, _ in steps:  # over the steps, not rows: each model's values read off flat
        if term == len(leaves):
            leaves.append([0])
        k = len(leaves[term]) - 1  # the term's splits so far
        leaves[term] = sorted(set(leaves[term]) - {node} | {2 * k + 1, 2 * k + 2})
        values = []
        for nodes in leaves:
            values.append(dict(zip(nodes, flat[at:at + len(nodes)])))
            at += len(nodes)
        path.append((base, values))
    return path
