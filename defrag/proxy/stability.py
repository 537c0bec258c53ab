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
    """Compute the dissimilarity of two fitted trees (Briand et al. 2009, eq. 10).

    ``d(T1, T2) = 1 - sum_t q_t S_t``, nodes matched by their position (path from the
    root). At a position internal in both trees with the same feature k,
    ``S_t = 1 - |delta_1 - delta_2| / range(X_k)`` (clipped at 0); otherwise S_t = 0.
    Two trees without splits have d = 0.

    Parameters
    ----------
    tree1, tree2 : ProxyTree, ProxyTreeClassifier or scikit-learn decision tree
        The fitted trees.
    feature_range : array-like of shape (n_features,)
        The range of each feature (a feature of range 0 counts as a match).
    weights : {"union", "paper"}, default="union"
        "union" sets q_t to one over the positions internal in either tree, so that
        d(T, T) = 0 and d lies in [0, 1]; "paper" sets q_t = 1/b with b the larger leaf
        count, as printed in the paper (there d(T, T) = 1/b).

    Returns
    -------
    float
        The dissimilarity.

    See Also
    --------
    bootstrap_instability : The dissimilarity of trees fitted to bootstrap resamples.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from defrag import tree_dissimilarity
    >>> X = np.linspace(0, 1, 40).reshape(-1, 1)
    >>> a = DecisionTreeRegressor(max_depth=1).fit(X, X[:, 0] > 0.5)
    >>> b = DecisionTreeRegressor(max_depth=1).fit(X, X[:, 0] > 0.25)
    >>> tree_dissimilarity(a, a, [1.0])
    0.0
    >>> round(tree_dissimilarity(a, b, [1.0]), 2)
    0.26
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
    """Measure how much a tree changes over bootstrap resamples.

    Fits a tree to each of ``n_boot`` bootstrap resamples and returns the mean and standard
    deviation of the pairwise dissimilarities (``tree_dissimilarity``; 10 resamples give
    45 pairs). The feature ranges are taken from X's present values.

    Parameters
    ----------
    estimator_factory : callable or estimator
        Returns an unfitted ProxyTree or scikit-learn decision tree when called; an
        estimator is cloned instead. Each is fitted as ``fit(X[b], y[b])`` (``fit(X[b])``
        when y is None).
    X : array-like of shape (n_samples, n_features)
        The rows (NaN is for the trees to accept or refuse).
    y : array-like of shape (n_samples,), default=None
        The targets.
    n_boot : int, default=10
        The resamples, in [2, 1000].
    random_state : int, RandomState instance or None, default=None
        Draws the resamples.
    weights : {"union", "paper"}, default="union"
        The weights of ``tree_dissimilarity``.

    Returns
    -------
    mean : float
        The mean dissimilarity of the pairs.
    std : float
        Its standard deviation.

    See Also
    --------
    tree_dissimilarity : The dissimilarity of two trees.
    ProxyTree : A proxy tree, whose stability this measures.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from defrag import bootstrap_instability
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(80, 2)
    >>> mean, std = bootstrap_instability(lambda: DecisionTreeRegressor(max_depth=2), X, X[:, 0],
    ...                                   n_boot=4, random_state=0)
    >>> 0.0 <= mean <= 1.0
    True
    """
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
