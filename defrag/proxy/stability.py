"""Stability of proxy trees: the dissimilarity of two trees (eq. 10) and the bootstrap
instability of an estimator (sec. 4.1.3)."""
import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

from ..utils.validation import as_2d_float
from .local import nan_safe_scale


def _internal_nodes(tree):
    """{path from the root ('' root, 'L'/'R' steps): (feature, threshold)} of internal nodes."""
    t = tree.tree_ if hasattr(tree, "tree_") and isinstance(tree.tree_, dict) else None
    if t is None and hasattr(tree, "tree_"):  # a scikit-learn decision tree
        st = tree.tree_
        t = {"children_left": st.children_left, "children_right": st.children_right,
             "feature": st.feature, "threshold": st.threshold}
    if t is None:
        raise TypeError(f"expected a fitted ProxyTree or scikit-learn decision tree; got {type(tree).__name__}")
    out, stack = {}, [(0, "")]
    while stack:
        v, path = stack.pop()
        if t["children_left"][v] >= 0:
            out[path] = (int(t["feature"][v]), float(t["threshold"][v]))
            stack += [(int(t["children_left"][v]), path + "L"), (int(t["children_right"][v]), path + "R")]
    return out


def _n_leaves(nodes):
    return len(nodes) + 1


def tree_dissimilarity(tree1, tree2, feature_range, weights="union"):
    """Dissimilarity d(T1, T2) = 1 - sum_t q_t S_t of eq. 10 (Briand et al. 2009).

    Nodes are matched by their position (path from the root). At a position
    internal in both trees with the same feature k,
    ``S_t = 1 - |delta_1 - delta_2| / range(X_k)`` (clipped at 0); otherwise S_t = 0.
    ``weights="union"`` (default) sets q_t = 1 / (number of positions internal in
    either tree), so d(T, T) = 0 and d lies in [0, 1]; ``weights="paper"`` uses
    q_t = 1/b with b the larger leaf count, as printed in the paper (there
    d(T, T) = 1/b). Two trees without splits have d = 0.
    """
    n1, n2 = _internal_nodes(tree1), _internal_nodes(tree2)
    rng = np.asarray(feature_range, dtype=np.float64)
    positions = set(n1) | set(n2)
    if not positions:
        return 0.0
    total = 0.0
    for p in positions & set(n1) & set(n2):
        (k1, t1), (k2, t2) = n1[p], n2[p]
        if k1 == k2:
            r = rng[k1]
            total += max(0.0, 1.0 - abs(t1 - t2) / r) if r > 0 else 1.0
    if weights == "union":
        q = 1.0 / len(positions)
    elif weights == "paper":
        q = 1.0 / max(_n_leaves(n1), _n_leaves(n2))
    else:
        raise ValueError(f"weights must be 'union' or 'paper'; got {weights!r}")
    return float(1.0 - q * total)


# The most resamples bootstrap_instability takes: every fitted tree is held and every
# pair compared in Python, n_boot (n_boot - 1) / 2 of them (1,000: 499,500 pairs, a
# hundred times the paper's 10 resamples).
MAX_BOOT = 1000


def bootstrap_instability(estimator_factory, X, y=None, n_boot=10, random_state=None,
                          weights="union"):
    """Mean and standard deviation of the pairwise dissimilarities (eq. 10) of trees
    fitted to ``n_boot`` bootstrap resamples (sec. 4.1.3; 10 resamples -> 45 pairs).

    ``estimator_factory()`` returns an unfitted ProxyTree or scikit-learn decision
    tree (or an estimator to ``clone``); it is fitted as ``fit(X[b], y[b])``
    (``fit(X[b])`` when y is None). Feature ranges are taken from X (its present values:
    NaN is for the trees to accept or refuse)."""
    X = as_2d_float(X, allow_nan=True)
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or not 2 <= n_boot <= MAX_BOOT:
        raise ValueError(f"n_boot must be an integer in [2, {MAX_BOOT}]; got {n_boot!r}")
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
    rng = check_random_state(random_state)
    feature_range = nan_safe_scale(X)[1]
    trees = []
    for _ in range(n_boot):
        idx = rng.randint(0, X.shape[0], X.shape[0])
        est = estimator_factory() if callable(estimator_factory) and not hasattr(estimator_factory, "fit") \
            else clone(estimator_factory)
        est = est.fit(X[idx]) if y is None else est.fit(X[idx], y[idx])
        trees.append(est)
    d = [tree_dissimilarity(trees[i], trees[j], feature_range, weights)
         for i in range(n_boot) for j in range(i + 1, n_boot)]
    return float(np.mean(d)), float(np.std(d))
