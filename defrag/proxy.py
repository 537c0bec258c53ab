"""Proxy trees: a small CART fitted to an ensemble's predictive mean and variance.

Afrabandpey et al., "Making Bayesian predictive models interpretable: a decision
theoretic approach" (interpretability utility). The reference model gives, per
point j, a predictive mean m_j and variance v_j. A regression tree with one mean
mu_i per leaf and a normal likelihood is fitted to maximise the expected
log-likelihood under the reference (eq. 8): a node's score is

    L_i = -n_i log(sigma2_i),  sigma2_i = mean_j [v_j + (m_j - mu_i)^2]

(the split search, a sorted sweep per feature, is in src_c/dfg_proxy_split.c).
The grown tree is pruned along the weakest-link sequence of the cost (eq. 9)

    C_alpha(T) = S log(sigma2_T) + alpha * b,  sigma2_T = sum_leaves sum_j [...] / S

and alpha is chosen by 5-fold cross-validation, or the largest subtree with at
most ``max_leaves`` leaves is taken. ``ProxyTreeClassifier`` does the same with a
classifier's class probabilities as soft targets of a categorical likelihood
(node score n_i sum_c p_ic log p_ic). Local explanations (sec. 4.2) fit the same
tree to the reference's predictions on a Gaussian neighbourhood of a point;
``tree_dissimilarity`` is eq. 10 and ``bootstrap_instability`` sec. 4.1.3.
"""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import _proxy_split
from ._rules import Condition, Rule, RuleSet
from .model import _as_2d_float, _feature_names_of, _unwrap

__all__ = [
    "ProxyTree",
    "ProxyTreeClassifier",
    "reference_proba",
    "LocalExplanation",
    "LimeExplanation",
    "reference_predictions",
    "explain_local",
    "tree_dissimilarity",
    "bootstrap_instability",
]

# sigma^2 is floored at this fraction of the root's sigma^2 (and at 1e-300): with
# zero reference variance a pure node would otherwise score log(0) = -inf.
_REL_VAR_FLOOR = 1e-12


# --------------------------------------------------------------------------- reference


def _as_1d_float(a, n, what):
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be a numeric array") from exc
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{what} has {arr.shape[0]} entries but X has {n} rows")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def _check_variance(var, n):
    var = _as_1d_float(var, n, "variance")
    if np.any(var < 0):
        raise ValueError(f"variance must be >= 0; got {int((var < 0).sum())} negative values "
                         f"(min {var.min():.6g})")
    return var


def _bagged_members(est):
    """(members, feature subsets or None) of a bagged regressor, else None."""
    from sklearn.ensemble import BaggingRegressor, ExtraTreesRegressor, RandomForestRegressor

    if isinstance(est, (RandomForestRegressor, ExtraTreesRegressor)):
        return list(est.estimators_), None
    if isinstance(est, BaggingRegressor):
        return list(est.estimators_), list(est.estimators_features_)
    return None


def _reference_input(estimator, X_in, X):
    """What to hand the reference: a DataFrame as it is (it keeps its feature names);
    an array as a DataFrame with the estimator's own column names when it was fitted
    on one (the neighbourhood samples of a local explanation are arrays), so that
    scikit-learn does not warn that the array has none; else the array."""
    if hasattr(X_in, "columns"):
        return X_in
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and len(names) == X.shape[1]:
        import pandas as pd  # the estimator was fitted on a DataFrame: pandas is there

        return pd.DataFrame(X, columns=names, copy=False)
    return X


def reference_predictions(estimator, X, variance=None):
    """Predictive mean and variance of a fitted regressor at the rows of X.

    For random forests, extra trees and bagging regressors the variance is the
    spread (population variance) of the member predictions and the mean their
    average. For any other estimator the mean is ``estimator.predict(X)`` and the
    variance is ``variance``: an array (one value per row), a callable
    ``variance(X) -> array``, or None for zero variance. A variance given for a
    bagged ensemble replaces the member spread. Returns (mean, var), float64.
    """
    estimator = _unwrap(estimator)
    if not hasattr(estimator, "predict") or not callable(estimator.predict):
        raise TypeError(f"the reference estimator must have a predict method; got {type(estimator).__name__}")
    if is_classifier(estimator):
        raise TypeError(f"{type(estimator).__name__} is a classifier: its reference predictions are "
                        "class probabilities (reference_proba, ProxyTreeClassifier)")
    X_in, X = X, _as_2d_float(X)
    X_in = _reference_input(estimator, X_in, X)
    n = X.shape[0]
    bagged = _bagged_members(estimator) if variance is None else None
    if bagged is not None:
        members, feats = bagged
        preds = np.empty((len(members), n))
        for i, m in enumerate(members):
            Xi = X if feats is None else X[:, feats[i]]
            preds[i] = np.asarray(m.predict(Xi), dtype=np.float64).reshape(n)
        mean = preds.mean(axis=0)
        var = preds.var(axis=0)
        return mean, var
    mean = _as_1d_float(estimator.predict(X_in), n, "the reference's predictions")
    if variance is None:
        var = np.zeros(n)
    elif callable(variance):
        var = _check_variance(variance(X_in), n)
    else:
        var = _check_variance(variance, n)
    return mean, var


# --------------------------------------------------------------------------- growing


class _Grown:
    """A grown tree in flat arrays (node 0 the root; -1 children for leaves)."""

    def __init__(self):
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.value, self.n, self.sse, self.depth = [], [], [], []

    def add(self, value, n, sse, depth):
        for lst, v in ((self.left, -1), (self.right, -1), (self.feature, -1), (self.threshold, 0.0),
                       (self.value, value), (self.n, n), (self.sse, sse), (self.depth, depth)):
            lst.append(v)
        return len(self.value) - 1

    def freeze(self):
        self.left = np.asarray(self.left, dtype=np.int64)
        self.right = np.asarray(self.right, dtype=np.int64)
        self.feature = np.asarray(self.feature, dtype=np.int64)
        self.threshold = np.asarray(self.threshold, dtype=np.float64)
        self.value = np.asarray(self.value, dtype=np.float64)
        self.n = np.asarray(self.n, dtype=np.int64)
        self.sse = np.asarray(self.sse, dtype=np.float64)
        self.depth = np.asarray(self.depth, dtype=np.int64)
        return self


def _node_stats(mean, var, rows):
    m = mean[rows]
    mu = float(m.mean())
    sse = float(var[rows].sum() + ((m - mu) ** 2).sum())
    return mu, sse


def _node_stats_proba(P, rows):
    """Mean class probabilities and the node's additive cost 2 n H(p) (= -2 log-lik)."""
    p = P[rows].mean(axis=0)
    nz = p[p > 0]
    return p, float(-2.0 * rows.size * np.sum(nz * np.log(nz)))


def _grow(X, split, stats, min_samples_leaf, max_depth):
    """Depth-first growth: split(rows) -> (feature, threshold, gain, n_left) from the
    C split search, stats(rows) -> (value, cost), until no split is allowed."""
    tree = _Grown()
    rows0 = np.arange(X.shape[0], dtype=np.int64)
    value, cost = stats(rows0)
    stack = [(tree.add(value, rows0.size, cost, 0), rows0)]
    while stack:
        node, rows = stack.pop()
        if max_depth is not None and tree.depth[node] >= max_depth:
            continue
        f, t, gain, n_left = split(rows)
        if f < 0 or not gain > 0.0:
            continue
        go_left = X[rows, f] <= t
        lrows, rrows = rows[go_left], rows[~go_left]
        tree.feature[node], tree.threshold[node] = f, t
        d = tree.depth[node] + 1
        children = []
        for part in (lrows, rrows):
            value, cost = stats(part)
            children.append((tree.add(value, part.size, cost, d), part))
        tree.left[node], tree.right[node] = children[0][0], children[1][0]
        stack.append(children[1])
        stack.append(children[0])
    return tree.freeze()


# --------------------------------------------------------------------------- pruning


def _log_var(total_sse, S, var_floor):
    if var_floor is None:  # an additive cost (classification: sum of 2 n H over leaves)
        return total_sse / S
    return np.log(np.maximum(total_sse / S, var_floor))


def _pruning_path(tree, var_floor):
    """Weakest-link sequence of eq. 9 on a grown tree (var_floor None: the
    classification cost, the sum over leaves of 2 n_i H(p_i), in place of S log sigma2).

    Step k prunes the internal node h of subtree k-1 with the smallest
    alpha_h = (C(h) - C(T)) / (|leaves(T_h)| - 1), C = S log(sigma2_T) (sec. 3.1.2).
    Returns (alphas, n_leaves, fit, order): subtree k is the grown tree cut at the
    nodes order[:k] (``_leaf_mask``), fit[k] = S log(sigma2_Tk). As S log(sigma2) is
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


def _leaf_mask(tree, order, k):
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


def _select(fits, n_leaves, alpha):
    """Index of the path subtree minimising fit + alpha * n_leaves (ties: fewer leaves)."""
    cost = fits + alpha * n_leaves
    tol = 1e-12 * (np.abs(cost).max() + 1.0)
    return int(np.flatnonzero(cost <= cost.min() + tol)[-1])


def _apply(tree, leaf_mask, X):
    """Node index (in the grown tree) of the leaf of each row, cutting at leaf_mask."""
    node = np.zeros(X.shape[0], dtype=np.int64)
    active = np.ones(X.shape[0], dtype=bool)
    while True:
        active &= ~leaf_mask[node]
        if not active.any():
            return node
        idx = np.flatnonzero(active)
        nd = node[idx]
        right = X[idx, tree.feature[nd]] > tree.threshold[nd]
        node[idx] = np.where(right, tree.right[nd], tree.left[nd])


# --------------------------------------------------------------------------- estimator


class ProxyTree(RegressorMixin, BaseEstimator):
    """A small regression tree fitted to a reference model's predictive mean and variance.

    Parameters
    ----------
    estimator : fitted regressor or None, default=None
        The reference model. Its predictive mean and variance at the training
        inputs are the targets (see ``reference_predictions``). With None, ``fit``
        takes the targets as ``y`` (and optionally ``variance``): this fits a
        plain maximum-likelihood CART to data.
    min_samples_leaf : int, default=5
        Growing stops at this minimum leaf size (sec. 3.1.1).
    max_depth : int or None, default=None
    max_leaves : int or None, default=None
        Take the largest subtree on the pruning path with at most this many leaves.
    alpha : float or None, default=None
        Take the subtree of this alpha (eq. 9). With neither ``alpha`` nor
        ``max_leaves`` set, alpha is chosen by ``cv``-fold cross-validation of the
        held-out expected squared loss ``mean_j [v_j + (m_j - prediction_j)^2]``.
    cv : int, default=5
    random_state : int, RandomState or None, default=None
        Shuffling of the cross-validation folds.
    n_threads : int, default=1
        Threads of the C split search.

    Attributes
    ----------
    tree_ : dict of arrays ``children_left``, ``children_right``, ``feature``,
        ``threshold`` (left: ``x <= threshold``), ``value``, ``n_node_samples``,
        ``node_sse`` of the selected subtree (node 0 the root, -1 for no child).
    pruning_path_ : dict with ``n_leaves``, ``fit`` (S log sigma2) and ``alphas``
        of the weakest-link sequence of the grown tree (nested subtrees). alpha
        selects the subtree minimising ``fit + alpha * n_leaves``; ``alphas[k]`` is
        the smallest alpha selecting subtree k, NaN if none does (eq. 9 is not
        additive over leaves, so a weakest-link step can be skipped).
    alpha_ : the selected alpha (NaN for a ``max_leaves`` subtree no alpha
        selects); ``cv_alphas_``/``cv_loss_`` when chosen by CV.
    n_leaves_, n_features_in_, feature_names_in_ (DataFrame input),
    feature_scale_ (training standard deviations, for local explanations).
    """

    def __init__(self, estimator=None, min_samples_leaf=5, max_depth=None, max_leaves=None,
                 alpha=None, cv=5, random_state=None, n_threads=1):
        self.estimator = estimator
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.alpha = alpha
        self.cv = cv
        self.random_state = random_state
        self.n_threads = n_threads

    # -- validation
    def _check_params(self):
        def pos_int(name, value, allow_none=False, low=1):
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")

        pos_int("min_samples_leaf", self.min_samples_leaf)
        pos_int("max_depth", self.max_depth, allow_none=True, low=0)
        pos_int("max_leaves", self.max_leaves, allow_none=True)
        pos_int("cv", self.cv, low=2)
        pos_int("n_threads", self.n_threads)
        if self.alpha is not None:
            if not isinstance(self.alpha, numbers.Real) or not np.isfinite(self.alpha) or self.alpha < 0:
                raise ValueError(f"alpha must be a finite number >= 0; got {self.alpha!r}")
            if self.max_leaves is not None:
                raise ValueError("give alpha or max_leaves, not both")
        if self.estimator is not None:
            est = _unwrap(self.estimator)
            if not callable(getattr(est, "predict", None)):
                raise TypeError(f"estimator must have a predict method; got {type(est).__name__}")
            if is_classifier(est) and not is_classifier(self):
                raise TypeError(f"{type(est).__name__} is a classifier: use ProxyTreeClassifier")

    def _targets(self, X, y, variance):
        n = X.shape[0]
        if self.estimator is not None:
            return reference_predictions(self.estimator, X, variance)
        if y is None:
            raise ValueError("without an estimator, fit needs the targets y")
        mean = _as_1d_float(y, n, "y")
        if variance is None:
            var = np.zeros(n)
        elif callable(variance):
            var = _check_variance(variance(X), n)
        else:
            var = _check_variance(variance, n)
        return mean, var

    def fit(self, X, y=None, variance=None):
        """Fit to the reference's mean/variance at X (``y`` ignored when an
        estimator is set), or to the targets ``y`` with per-point ``variance``
        (array, callable ``variance(X)`` or None for zero) without one."""
        self._check_params()
        names = _feature_names_of(X)
        X_in, X = X, np.ascontiguousarray(_as_2d_float(X))
        if X.shape[0] < 1:
            raise ValueError("X has no rows")
        targets = self._targets(X_in if names is not None else X, y, variance)
        self.n_features_in_ = X.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        scale = X.std(axis=0)
        self.feature_scale_ = np.where(scale > 0, scale, 1.0)
        self.feature_range_ = X.max(axis=0) - X.min(axis=0) if X.shape[0] else np.zeros(X.shape[1])
        self._store_targets(targets)
        self._fit_targets(X, targets)
        return self

    def _store_targets(self, targets):
        self.reference_mean_, self.reference_var_ = targets

    def _grow_and_path(self, X, targets):
        mean, var = targets
        root = (var.sum() + ((mean - mean.mean()) ** 2).sum()) / mean.size
        floor = max(_REL_VAR_FLOOR * root, 1e-300)
        leaf, threads = int(self.min_samples_leaf), int(self.n_threads)
        grown = _grow(X, lambda rows: _proxy_split.proxy_best_split(X, rows, mean, var, leaf, floor, threads),
                      lambda rows: _node_stats(mean, var, rows), leaf, self.max_depth)
        return grown, _pruning_path(grown, floor)

    @staticmethod
    def _heldout_loss(values, targets, held):
        """Expected squared loss sum_j [v_j + (m_j - prediction_j)^2] of held-out rows."""
        mean, var = targets
        return float(np.sum(var[held] + (mean[held] - values) ** 2))

    def _fit_targets(self, X, targets):
        grown, (alphas, n_leaves, fits, order) = self._grow_and_path(X, targets)
        self.pruning_path_ = {"alphas": alphas, "n_leaves": n_leaves, "fit": fits}
        if self.alpha is not None:
            k = _select(fits, n_leaves, float(self.alpha))
            self.alpha_ = float(self.alpha)
        elif self.max_leaves is not None:
            k = int(np.flatnonzero(n_leaves <= self.max_leaves)[0])
            self.alpha_ = float(alphas[k])  # NaN when no alpha selects this subtree
        else:
            self.alpha_ = self._cv_alpha(X, targets, alphas)
            k = _select(fits, n_leaves, self.alpha_)
        self.tree_ = self._compact(grown, _leaf_mask(grown, order, k))
        self.n_leaves_ = int(n_leaves[k])

    def _cv_alpha(self, X, targets, alphas):
        n = X.shape[0]
        # geometric midpoints of the path's alpha intervals (Breiman et al. 1984)
        a = alphas[np.isfinite(alphas)]
        betas = np.append(np.sqrt(a[:-1] * a[1:]), a[-1])
        if n < self.cv:
            raise ValueError(f"cross-validation with cv={self.cv} needs at least {self.cv} rows; got {n}")
        rng = check_random_state(self.random_state)
        folds = np.array_split(rng.permutation(n), self.cv)
        loss = np.zeros(betas.size)
        for held in folds:
            train = np.ones(n, dtype=bool)
            train[held] = False
            Xt = np.ascontiguousarray(X[train])
            grown, (_, nl, fit, order) = self._grow_and_path(Xt, tuple(t[train] for t in targets))
            for i, b in enumerate(betas):
                leaf = _apply(grown, _leaf_mask(grown, order, _select(fit, nl, b)), X[held])
                loss[i] += self._heldout_loss(grown.value[leaf], targets, held)
        loss /= n
        self.cv_alphas_, self.cv_loss_ = betas, loss
        best = np.flatnonzero(loss <= loss.min() * (1 + 1e-12) + 1e-300)
        return float(betas[best[-1]])  # ties: the smaller tree

    @staticmethod
    def _compact(grown, leaf_mask):
        keep, new_id, stack = [], {}, [0]
        while stack:
            v = stack.pop()
            new_id[v] = len(keep)
            keep.append(v)
            if not leaf_mask[v]:
                stack.append(int(grown.right[v]))
                stack.append(int(grown.left[v]))
        keep = np.asarray(keep)
        internal = ~leaf_mask[keep]
        left = np.where(internal, [new_id.get(int(grown.left[v]), -1) for v in keep], -1)
        right = np.where(internal, [new_id.get(int(grown.right[v]), -1) for v in keep], -1)
        return {
            "children_left": left.astype(np.int64),
            "children_right": right.astype(np.int64),
            "feature": np.where(internal, grown.feature[keep], -1).astype(np.int64),
            "threshold": np.where(internal, grown.threshold[keep], 0.0),
            "value": grown.value[keep].copy(),
            "n_node_samples": grown.n[keep].copy(),
            "node_sse": grown.sse[keep].copy(),
        }

    # -- use
    def _check_X(self, X):
        check_is_fitted(self, "tree_")
        X = _as_2d_float(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features but the tree was fitted with {self.n_features_in_}")
        return X

    def apply(self, X):
        """Index (in ``tree_``) of the leaf holding each row."""
        X = self._check_X(X)
        t = self.tree_
        node = np.zeros(X.shape[0], dtype=np.int64)
        while True:
            idx = np.flatnonzero(t["children_left"][node] >= 0)
            if idx.size == 0:
                return node
            nd = node[idx]
            right = X[idx, t["feature"][nd]] > t["threshold"][nd]
            node[idx] = np.where(right, t["children_right"][nd], t["children_left"][nd])

    def predict(self, X):
        return self.tree_["value"][self.apply(X)]

    def _names(self):
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{d}" for d in range(self.n_features_in_)]

    def leaves(self):
        """Node indices (in ``tree_``) of the leaves, left to right."""
        t = self.tree_
        out, stack = [], [0]
        while stack:
            v = stack.pop()
            if t["children_left"][v] < 0:
                out.append(v)
            else:
                stack += [int(t["children_right"][v]), int(t["children_left"][v])]
        return out

    @property
    def rules_(self):
        """The leaves as a RuleSet: one rule per leaf, ``lower < x_d <= upper``."""
        check_is_fitted(self, "tree_")
        t, names = self.tree_, self._names()
        D = self.n_features_in_
        rules = []
        total = float(t["n_node_samples"][0])

        def walk(v, lo, hi):
            if t["children_left"][v] < 0:
                conds = [Condition(d, names[d], None if lo[d] == -np.inf else lo[d],
                                   None if hi[d] == np.inf else hi[d])
                         for d in range(D) if lo[d] > -np.inf or hi[d] < np.inf]
                n = int(t["n_node_samples"][v])
                pred, proba = self._leaf_rule_value(t["value"][v])
                rules.append(Rule(conds, pred, proba=proba, support=n, weight=n / total))
                return
            d, thr = t["feature"][v], t["threshold"][v]
            hl = hi.copy()
            hl[d] = min(hl[d], thr)
            walk(int(t["children_left"][v]), lo, hl)
            ll = lo.copy()
            ll[d] = max(ll[d], thr)
            walk(int(t["children_right"][v]), ll, hi)

        walk(0, np.full(D, -np.inf), np.full(D, np.inf))
        pred, proba = self._leaf_rule_value(t["value"][0])
        return RuleSet(rules, pred, default_proba=proba, feature_names=names,
                       classes=getattr(self, "classes_", None))

    def _leaf_rule_value(self, value):
        return float(value), None

    def features_used(self):
        check_is_fitted(self, "tree_")
        f = self.tree_["feature"]
        return sorted(set(int(d) for d in f[f >= 0]))

    def explain_local(self, x, n_samples=200, scale=1.0, max_depth=3, variance=None,
                      random_state=None, **tree_params):
        """Local explanation of the reference around x (see ``explain_local``),
        using this tree's reference and training feature scales."""
        check_is_fitted(self, "tree_")
        if self.estimator is None:
            raise ValueError("explain_local needs a reference estimator (ProxyTree(estimator=...))")
        return explain_local(self.estimator, x, self.feature_scale_, n_samples=n_samples,
                             scale=scale, max_depth=max_depth, variance=variance,
                             random_state=random_state, **tree_params)


def reference_proba(estimator, X):
    """Class probabilities of a fitted classifier at the rows of X (for random
    forests the mean of the member trees' probabilities, which is predict_proba)."""
    estimator = _unwrap(estimator)
    if not callable(getattr(estimator, "predict_proba", None)):
        raise TypeError(f"a classification reference must have a predict_proba method; got "
                        f"{type(estimator).__name__}")
    X_in, X = X, _as_2d_float(X)
    P = np.asarray(estimator.predict_proba(_reference_input(estimator, X_in, X)), dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != X.shape[0]:
        raise ValueError(f"predict_proba returned shape {P.shape} for {X.shape[0]} rows")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError("the reference's class probabilities must be finite and >= 0")
    return P


class ProxyTreeClassifier(ClassifierMixin, ProxyTree):
    """Proxy tree for a classifier: the reference's class probabilities are soft
    targets of a categorical likelihood (footnote 3 of the paper).

    A node's expected log-likelihood under the reference is n_i sum_c p_ic log p_ic
    with p_i the mean reference probability vector of its rows (so the split search
    minimises the weighted entropy of soft labels), and the pruning cost is
    ``sum_leaves 2 n_i H(p_i) + alpha * b`` (-2 log-likelihood, the analogue of eq. 9).
    Cross-validation scores held-out cross-entropy against the reference. Without
    an estimator, ``fit(X, y)`` uses one-hot labels (a plain entropy CART).
    Parameters and attributes as ProxyTree; ``tree_["value"]`` holds the class
    probabilities of each node, ``classes_`` the labels.
    """

    def _check_params(self):
        super()._check_params()
        if self.estimator is not None and not callable(getattr(_unwrap(self.estimator), "predict_proba", None)):
            raise TypeError("estimator must have a predict_proba method for ProxyTreeClassifier")

    def _targets(self, X, y, variance):
        if variance is not None:
            raise ValueError("ProxyTreeClassifier takes no variance: class probabilities carry the uncertainty")
        if self.estimator is not None:
            P = reference_proba(self.estimator, X)
            self.classes_ = np.asarray(_unwrap(self.estimator).classes_)
            if self.classes_.size != P.shape[1]:
                raise ValueError("the estimator's classes_ do not match its predict_proba columns")
            return (np.ascontiguousarray(P),)
        if y is None:
            raise ValueError("without an estimator, fit needs the labels y")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}); got shape {y.shape}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        P = np.zeros((y.size, self.classes_.size))
        P[np.arange(y.size), codes] = 1.0
        return (P,)

    def _store_targets(self, targets):
        self.reference_proba_ = targets[0]

    def _grow_and_path(self, X, targets):
        P = np.ascontiguousarray(targets[0])
        leaf, threads = int(self.min_samples_leaf), int(self.n_threads)
        grown = _grow(X, lambda rows: _proxy_split.proxy_best_split_proba(X, rows, P, leaf, threads),
                      lambda rows: _node_stats_proba(P, rows), leaf, self.max_depth)
        return grown, _pruning_path(grown, None)

    @staticmethod
    def _heldout_loss(values, targets, held):
        """Cross-entropy -sum_j sum_c P_jc log p_c of held-out rows (p clipped at 1e-12)."""
        return float(-np.sum(targets[0][held] * np.log(np.maximum(values, 1e-12))))

    def predict_proba(self, X):
        return self.tree_["value"][self.apply(X)]

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def _leaf_rule_value(self, value):
        return self.classes_[int(np.argmax(value))], value


# --------------------------------------------------------------------------- local


class LocalExplanation:
    """A depth-limited proxy tree fitted around one point, and its local fidelity.

    Attributes: ``x``, ``tree`` (fitted ProxyTree or ProxyTreeClassifier),
    ``rules`` (its RuleSet), ``fidelity`` (locally weighted squared loss of the
    tree against ``reference_mean`` on the samples), ``samples`` Z, ``weights``
    pi_x(Z), ``reference_mean``/``reference_var`` at Z, ``prediction`` (the tree
    at x), ``feature_scale`` (units of the neighbourhood).

    For a classifier, ``explained_class`` is the class the reference predicts at
    x, ``reference_mean`` its probability at Z (``reference_var`` None,
    ``reference_proba`` all classes), ``fidelity`` the weighted squared loss of
    the tree's probability of that class (so that it compares with the LIME
    baseline, which regresses the same probability), and ``prediction`` the
    tree's class at x (``prediction_proba`` its probabilities).
    """

    def __init__(self, x, tree, Z, weights, mean, var, feature_scale, explained=None):
        self.x, self.tree, self.samples, self.weights = x, tree, Z, weights
        self.reference_var, self.feature_scale = var, feature_scale
        if explained is None:
            self.reference_mean = mean
            self.fidelity = local_fidelity(tree.predict(Z), mean, weights)
            self.prediction = float(tree.predict(x[None, :])[0])
            return
        # classification: mean is the reference's probabilities (n_samples x classes)
        self.reference_proba = mean
        self.explained_class = tree.classes_[explained]
        self.reference_mean = mean[:, explained]
        self.fidelity = local_fidelity(tree.predict_proba(Z)[:, explained], self.reference_mean,
                                       weights)
        self.prediction_proba = tree.predict_proba(x[None, :])[0]
        self.prediction = tree.classes_[int(np.argmax(self.prediction_proba))]

    @property
    def rules(self):
        return self.tree.rules_

    def features_used(self):
        return self.tree.features_used()

    def lime_baseline(self, n_features=2, ridge_alpha=1.0):
        """LIME-style baseline on the same samples: a weighted ridge regression (on
        standardised features) picks the ``n_features`` largest |coefficients|, and
        a weighted ridge on those features alone is the explanation."""
        return LimeExplanation(self, n_features, ridge_alpha)

    def __repr__(self):
        return (f"<LocalExplanation: {self.tree.n_leaves_} leaves, {len(self.features_used())} "
                f"features, fidelity {self.fidelity:.6g}>")


def local_fidelity(pred, reference, weights):
    """sum_s w_s (reference_s - pred_s)^2 / sum_s w_s."""
    w = np.asarray(weights, dtype=np.float64)
    return float(np.sum(w * (np.asarray(reference) - np.asarray(pred)) ** 2) / w.sum())


def _weighted_ridge(Z, y, w, lam):
    """Intercept + coefficients of sum w (y - b - Z c)^2 + lam |c|^2."""
    sw = w.sum()
    zm = (w[:, None] * Z).sum(axis=0) / sw
    ym = float((w * y).sum() / sw)
    Zc = Z - zm
    A = Zc.T @ (w[:, None] * Zc) + lam * np.eye(Z.shape[1])
    coef = np.linalg.solve(A, Zc.T @ (w * (y - ym)))
    return ym - float(zm @ coef), coef


class LimeExplanation:
    """Weighted ridge on ``n_features`` features (standardised units around x).

    Attributes: ``features`` (indices), ``coef`` (per standardised unit),
    ``intercept``, ``fidelity`` (same loss and samples as the proxy),
    ``prediction`` (at x)."""

    def __init__(self, local, n_features, ridge_alpha):
        D = local.x.size
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or not 1 <= n_features <= D:
            raise ValueError(f"n_features must be an integer in [1, {D}]; got {n_features!r}")
        if not ridge_alpha >= 0:
            raise ValueError(f"ridge_alpha must be >= 0; got {ridge_alpha!r}")
        U = (local.samples - local.x) / local.feature_scale
        y, w = local.reference_mean, local.weights
        _, coef = _weighted_ridge(U, y, w, ridge_alpha)
        order = np.argsort(-np.abs(coef), kind="stable")
        self.features = np.sort(order[:n_features])
        self.intercept, self.coef = _weighted_ridge(U[:, self.features], y, w, ridge_alpha)
        self._scale, self._x = local.feature_scale[self.features], local.x
        self.fidelity = local_fidelity(self.predict(local.samples), y, w)
        self.prediction = float(self.intercept)

    def predict(self, Z):
        U = (np.asarray(Z, dtype=np.float64)[:, self.features] - self._x[self.features]) / self._scale
        return self.intercept + U @ self.coef


def explain_local(estimator, x, feature_scale, n_samples=200, scale=1.0, max_depth=3,
                  variance=None, random_state=None, **tree_params):
    """Explain the reference around x with a depth-limited proxy tree (sec. 4.2).

    A regressor is explained by a ProxyTree on its predictive mean and variance, a
    classifier by a ProxyTreeClassifier on its class probabilities.

    Samples z_s ~ N(x, scale^2 I) in standardised units (z = x + scale * u *
    feature_scale, u ~ N(0, I)), queries the reference's mean and variance at
    them (``variance``: None, or a callable ``variance(Z)`` for non-bagged
    models), and fits ``ProxyTree(max_depth=max_depth, **tree_params)`` to them
    (alpha by 5-fold cross-validation unless ``max_leaves``/``alpha`` is given).
    ``feature_scale`` is the per-feature standard deviation of the training
    inputs (``ProxyTree.feature_scale_``), or a training matrix to take it from.
    The local fidelity weighs each sample by the neighbourhood density
    pi_x(z) ~ exp(-|u|^2 / 2).
    """
    try:
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        fs = np.asarray(feature_scale, dtype=np.float64)
    except (TypeError, ValueError) as err:  # e.g. a row with a category name in it
        raise TypeError(f"x and feature_scale must be numeric; defrag needs numeric features "
                        f"for local proxy trees ({err})") from None
    if fs.ndim == 2:
        if fs.shape[1] != x.size:
            raise ValueError(f"the training matrix has {fs.shape[1]} features but x has {x.size}")
        fs = fs.std(axis=0)
        fs = np.where(fs > 0, fs, 1.0)
    if fs.shape != x.shape:
        raise ValueError(f"feature_scale has {fs.size} entries but x has {x.size}")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(fs)) or np.any(fs <= 0):
        raise ValueError("x must be finite and feature_scale finite and > 0")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 10:
        raise ValueError(f"n_samples must be an integer >= 10; got {n_samples!r}")
    if not (isinstance(scale, numbers.Real) and np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a number > 0; got {scale!r}")
    if variance is not None and not callable(variance):
        raise TypeError("variance must be None or a callable variance(Z) for local explanations")
    classifier = is_classifier(_unwrap(estimator))
    if classifier and variance is not None:
        raise ValueError("variance applies to regression references; a classifier's local "
                         "proxy is fitted to its class probabilities")
    rng = check_random_state(random_state)
    U = scale * rng.standard_normal((int(n_samples), x.size))
    Z = x + U * fs
    weights = np.exp(-0.5 * np.sum((U / scale) ** 2, axis=1))
    tree_params.setdefault("min_samples_leaf", 5)
    tree_params.setdefault("random_state", rng.randint(2 ** 31 - 1))
    if classifier:
        # soft targets: the reference's probabilities at the samples (footnote 3)
        tree = ProxyTreeClassifier(estimator, max_depth=max_depth, **tree_params).fit(Z)
        P = tree.reference_proba_
        explained = int(np.argmax(reference_proba(estimator, x[None, :])[0]))
        return LocalExplanation(x, tree, Z, weights, P, None, fs, explained=explained)
    mean, var = reference_predictions(estimator, Z, variance)
    tree = ProxyTree(max_depth=max_depth, **tree_params).fit(Z, mean, variance=var)
    return LocalExplanation(x, tree, Z, weights, mean, var, fs)


# --------------------------------------------------------------------------- stability


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
    internal in both trees with the same feature k, S_t = 1 - |delta_1 -
    delta_2| / range(X_k) (clipped at 0); otherwise S_t = 0.
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


def bootstrap_instability(estimator_factory, X, y=None, n_boot=10, random_state=None,
                          weights="union"):
    """Mean and standard deviation of the pairwise dissimilarities (eq. 10) of trees
    fitted to ``n_boot`` bootstrap resamples (sec. 4.1.3; 10 resamples -> 45 pairs).

    ``estimator_factory()`` returns an unfitted ProxyTree or scikit-learn decision
    tree (or an estimator to ``clone``); it is fitted as ``fit(X[b], y[b])``
    (``fit(X[b])`` when y is None). Feature ranges are taken from X."""
    X = _as_2d_float(X)
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2; got {n_boot!r}")
    if y is not None:
        y = np.asarray(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows")
    rng = check_random_state(random_state)
    feature_range = X.max(axis=0) - X.min(axis=0)
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
