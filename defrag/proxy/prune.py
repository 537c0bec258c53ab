"""Weakest-link pruning of a grown proxy tree (eq. 9) and applying a pruned subtree."""
import numpy as np

from .grow import goes_right


def _log_var(total_sse, S, var_floor):
    if var_floor is None:  # an additive cost (classification: sum of 2 n H over leaves)
        return total_sse / S
    return np.log(np.maximum(total_sse / S, var_floor))


def pruning_path(tree, var_floor):
    """Weakest-link sequence of eq. 9 on a grown tree (var_floor None: the
    classification cost, the sum over leaves of 2 n_i H(p_i), in place of S log sigma2).

    Step k prunes the internal node h of subtree k-1 with the smallest
    alpha_h = (C(h) - C(T)) / (|leaves(T_h)| - 1), C = S log(sigma2_T) (sec. 3.1.2).
    Returns (alphas, n_leaves, fit, order): subtree k is the grown tree cut at the
    nodes order[:k] (``leaf_mask``), fit[k] = S log(sigma2_Tk). As S log(sigma2) is
    not a sum over leaves, a weakest-link subtree need not minimise C_alpha for any
    alpha; alphas[k] is the smallest alpha at which subtree k minimises C_alpha
    among the path's subtrees (their lower convex hull), NaN if it never does.
    Subtree sums are updated along the path to the root after each cut, so a step
    costs one vectorised pass over the remaining internal nodes.
    """
    S = float(tree.n[0])
    n_nodes = tree.value.shape[0]
    internal = tree.left >= 0
    ids = np.flatnonzero(internal)
    parent = np.full(n_nodes, -1, dtype=np.int64)
    parent[tree.left[ids]] = ids
    parent[tree.right[ids]] = ids
    sub_sse = np.where(internal, 0.0, tree.sse)
    sub_cnt = (~internal).astype(np.int64)
    for v in ids[::-1]:  # children have larger ids than their parent
        sub_sse[v] = sub_sse[tree.left[v]] + sub_sse[tree.right[v]]
        sub_cnt[v] = sub_cnt[tree.left[v]] + sub_cnt[tree.right[v]]
    active = internal.copy()  # internal nodes of the current subtree
    n_leaves = [int(sub_cnt[0])]
    fits = [float(S * _log_var(sub_sse[0], S, var_floor))]
    order = []
    while active[0]:
        cand = np.flatnonzero(active)
        total = sub_sse[0]
        cur = S * _log_var(total, S, var_floor)
        pruned_fit = S * _log_var(total - sub_sse[cand] + tree.sse[cand], S, var_floor)
        a = (pruned_fit - cur) / (sub_cnt[cand] - 1)
        h = int(cand[np.argmin(a)])  # ties: the lowest node id
        order.append(h)
        stack = [h]
        while stack:
            v = stack.pop()
            if active[v]:
                active[v] = False
                stack += [int(tree.left[v]), int(tree.right[v])]
        d_sse, d_cnt = sub_sse[h] - tree.sse[h], sub_cnt[h] - 1
        sub_sse[h], sub_cnt[h] = tree.sse[h], 1
        v = parent[h]
        while v >= 0:
            sub_sse[v] -= d_sse
            sub_cnt[v] -= d_cnt
            v = parent[v]
        n_leaves.append(int(sub_cnt[0]))
        fits.append(float(S * _log_var(sub_sse[0], S, var_floor)))
    fits, n_leaves = np.asarray(fits), np.asarray(n_leaves)
    return _hull_alphas(fits, n_leaves), n_leaves, fits, np.asarray(order, dtype=np.int64)


def leaf_mask(tree, order, k):
    """Nodes where traversal stops in subtree k (nodes below them are unreachable)."""
    mask = tree.left < 0
    mask[order[:k]] = True
    return mask


def _hull_alphas(fits, n_leaves):
    """Smallest alpha at which each subtree minimises fit + alpha * n_leaves (NaN: never)."""
    K = fits.size
    alphas = np.full(K, np.nan)
    tol = 1e-12 * (np.abs(fits).max() + 1.0)
    cur, start = 0, 0.0
    while cur < K - 1:
        j = np.arange(cur + 1, K)
        slope = (fits[j] - fits[cur]) / (n_leaves[cur] - n_leaves[j])
        smin = slope.min()
        nxt = int(j[np.flatnonzero(slope <= smin + tol)[-1]])  # ties: the smaller tree
        if smin > start + tol:  # else no alpha makes it strictly better than its neighbours
            alphas[cur] = start
        start = max(smin, start, 0.0)
        cur = nxt
    alphas[K - 1] = start
    return alphas


def select_subtree(fits, n_leaves, alpha):
    """Index of the path subtree minimising fit + alpha * n_leaves (ties: fewer leaves)."""
    cost = fits + alpha * n_leaves
    tol = 1e-12 * (np.abs(cost).max() + 1.0)
    return int(np.flatnonzero(cost <= cost.min() + tol)[-1])


def apply_pruned(tree, stops, X):
    """Node index (in the grown tree) of the leaf of each row, cutting where stops (a
    ``leaf_mask``) holds."""
    node = np.zeros(X.shape[0], dtype=np.int64)
    active = np.ones(X.shape[0], dtype=bool)
    while True:
        active &= ~stops[node]
        if not active.any():
            return node
        idx = np.flatnonzero(active)
        nd = node[idx]
        right = goes_right(X[idx, tree.feature[nd]], tree.threshold[nd], tree.missing_right[nd])
        node[idx] = np.where(right, tree.right[nd], tree.left[nd])
