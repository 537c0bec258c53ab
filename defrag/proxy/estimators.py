"""ProxyTree and ProxyTreeClassifier: the scikit-learn estimators."""
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..rules import Condition, Rule, RuleSet
from ..rules.conditions import printed_thresholds
from ..rules.tree_nodes import rounded, spread_decimals
from ..sources import check_fitted, model_feature_names, unwrap
from ..sources.fitting import EnsembleExplainerMixin, ExplanationDisplayMixin
from ..sources.sklearn_trees import bagged_members
from ..utils.interrupt import interruptible_fit
from ..utils.memory import check_memory, proxy_estimate
from ..utils.threads import threads_from_n_jobs
from ..utils.validation import (
    as_2d_float,
    check_labels,
    check_n_jobs,
    check_positive_int,
    columns_by_name,
    feature_names_of,
    is_number,
)
from . import _proxy_split
from .grow import goes_right, grow, node_stats, node_stats_proba
from .local import local_explanation, nan_safe_scale
from .prune import apply_pruned, leaf_mask, pruning_path, select_subtree
from .reference import (
    as_1d_float,
    check_variance,
    check_reference_missing,
    handles_missing,
    reference_predictions,
    reference_proba,
)

# sigma^2 is floored at this fraction of the root's sigma^2 (and at 1e-300): with
# zero reference variance a pure node would otherwise score log(0) = -inf.
_REL_VAR_FLOOR = 1e-12


def _as_proxy_input(X):
    """X as float64 (NaN allowed here: ``_check_missing`` decides)."""
    return as_2d_float(X, allow_nan=True)


def _leaf_rows(min_samples_leaf, X):
    """min_samples_leaf as the split search takes it: at most X's rows (a larger one
    splits nothing either, and 10**19 does not fit the kernel's int64)."""
    return min(int(min_samples_leaf), max(X.shape[0], 1))


class ProxyTree(ExplanationDisplayMixin, EnsembleExplainerMixin, RegressorMixin, BaseEstimator):
    """A small regression tree fitted to a reference model's predictive mean and variance.

    The tree of Afrabandpey et al. (eq. 8-9): a node's score is its expected
    log-likelihood under the reference, the pruning's alpha cross-validated.

    Parameters
    ----------
    estimator : regressor or None, default=None
        The reference model, fitted (used as it is) or not (cloned and fitted on
        ``fit(X, y)``). Its predictive mean and variance at the training
        inputs are the targets (see ``reference_predictions``). With None, ``fit``
        takes the targets as ``y`` (and optionally ``variance``): this fits a
        plain maximum-likelihood CART to data.
    min_samples_leaf : int, default=5
        Growing stops at this minimum leaf size (sec. 3.1.1).
    max_depth : int or None, default=None
        The grown tree's depth at most (None: no limit).
    max_leaves : int or None, default=None
        Take the largest subtree on the pruning path with at most this many leaves.
    alpha : float or None, default=None
        Take the subtree of this alpha (eq. 9). With neither ``alpha`` nor
        ``max_leaves`` set, alpha is chosen by ``cv``-fold cross-validation of the
        held-out expected squared loss ``mean_j [v_j + (m_j - prediction_j)^2]``.
    cv : int, default=5
        Folds of the cross-validation of alpha.
    random_state : int, RandomState or None, default=None
        Shuffling of the cross-validation folds.
    n_jobs : int or None, default=None
        Threads of the C split search (scikit-learn's convention: None, every available
        core; -1, all cores; at most the cores there are). Results do not depend on it.

    Attributes
    ----------
    tree_ : dict of arrays ``children_left``, ``children_right``, ``feature``,
        ``threshold`` (left: ``x <= threshold``), ``missing_right`` (where NaN goes),
        ``value``, ``n_node_samples``, ``node_sse`` of the selected subtree (node 0
        the root, -1 for no child); ``value`` rounded to ``decimals_``.
    decimals_ : int or None
        The decimal places of the values (4 significant digits of the leaves' range), as
        ``rules_`` prints them and ``predict`` returns them; None in classification.
    supports_missing_ : whether X may hold NaN: the reference model routes missing
        values (scikit-learn forests >= 1.4, HistGradientBoosting, XGBoost, LightGBM),
        or there is no reference (the tree is fitted to ``y``). Each split then sends
        NaN to the side that fits better, as scikit-learn's CART does (to the larger
        child where the node had no NaN in that feature); rules say "(or missing)".
    pruning_path_ : dict with ``n_leaves``, ``fit`` (S log sigma2) and ``alphas``
        of the weakest-link sequence of the grown tree (nested subtrees). alpha
        selects the subtree minimising ``fit + alpha * n_leaves``; ``alphas[k]`` is
        the smallest alpha selecting subtree k, NaN if none does (eq. 9 is not
        additive over leaves, so a weakest-link step can be skipped).
    alpha_ : the selected alpha (NaN for a ``max_leaves`` subtree no alpha
        selects); ``cv_alphas_``/``cv_loss_`` when chosen by CV.
    n_leaves_, n_features_in_, feature_names_in_ (DataFrame input),
    feature_scale_ (training standard deviations, for local explanations).
    estimator_ : the reference explained (``estimator`` when fitted, else its fitted clone)

    See Also
    --------
    ProxyTreeClassifier : The same tree for a classifier's class probabilities.
    explain_local : A local explanation around one point.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from defrag import ProxyTree
    >>> X, y = load_diabetes(return_X_y=True)
    >>> forest = RandomForestRegressor(n_estimators=10, random_state=0)
    >>> tree = ProxyTree(forest, max_leaves=4, random_state=0).fit(X, y)
    >>> tree.n_leaves_
    4
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["predict"]), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "max_leaves": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": "no_validation",  # (_check_params: "a finite number >= 0", True refused)
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, estimator=None, *, min_samples_leaf=5, max_depth=None, max_leaves=None,
                 alpha=None, cv=5, random_state=None, n_jobs=None):
        self.estimator = estimator
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.alpha = alpha
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # NaN where the reference routes it (or no reference: the tree routes it itself)
        tags.input_tags.allow_nan = self.estimator is None or handles_missing(self.estimator)
        return tags

    # -- validation
    def _check_params(self):
        check_positive_int("min_samples_leaf", self.min_samples_leaf)
        check_positive_int("max_depth", self.max_depth, allow_none=True, low=0)
        check_positive_int("max_leaves", self.max_leaves, allow_none=True)
        check_positive_int("cv", self.cv, low=2)
        check_n_jobs(self.n_jobs)
        if self.alpha is not None:
            if not is_number(self.alpha) or not np.isfinite(self.alpha) or self.alpha < 0:
                raise ValueError(f"alpha must be a finite number >= 0; got {self.alpha!r}")
            if self.max_leaves is not None:
                raise ValueError("give alpha or max_leaves, not both")
        if self.estimator is not None:
            est = unwrap(self.estimator)
            if not callable(getattr(est, "predict", None)):
                raise TypeError(f"estimator must have a predict method; got {type(est).__name__}")
            if is_classifier(est) and not is_classifier(self):
                raise TypeError(f"{type(est).__name__} is a classifier: use ProxyTreeClassifier")

    def _targets(self, X, y, variance):
        n = X.shape[0]
        if self.estimator_ is not None:
            return reference_predictions(self.estimator_, X, variance)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None: "
                             "without an estimator, fit needs the targets y")
        y = np.asarray(y)
        mean = as_1d_float(column_or_1d(y, warn=True) if y.ndim == 2 and y.shape[1] == 1 else y, n, "y")
        if variance is None:
            var = np.zeros(n)
        elif callable(variance):
            var = check_variance(variance(X), n)
        else:
            var = check_variance(variance, n)
        return mean, var

    @interruptible_fit(threads=lambda est: threads_from_n_jobs(est.n_jobs))
    def fit(self, X, y=None, variance=None):
        """Fit the tree to the reference's predictions at X, or to y without a reference.

        An unfitted reference is cloned and fitted on (X, y) first.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows; a DataFrame's columns are matched by name to the reference's feature
            names (others are ignored), and at predict to those seen here.
        y : array-like of shape (n_samples,), optional
            The targets without a reference (with a fitted one: ignored).
        variance : array-like of shape (n_samples,), callable or None, default=None
            Without a reference: the targets' per-point variance (a callable: ``variance(X)``;
            None: zero).

        Returns
        -------
        self
            The fitted tree.
        """
        self._validate_params()
        self._check_params()
        self.estimator_ = self._ensemble(X, y)
        if self.estimator_ is not None:  # a DataFrame's columns by name, in the reference's order
            check_fitted(self.estimator_)
            X = columns_by_name(X, model_feature_names(self.estimator_),
                                f"the {type(unwrap(self.estimator_)).__name__} model", 3)
        names = feature_names_of(X)
        X_in, X = X, np.ascontiguousarray(_as_proxy_input(X))
        if X.shape[0] < 1:
            raise ValueError("X has no rows")
        if X.shape[1] < 1:
            raise ValueError(f"0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        self.supports_missing_ = self.estimator_ is None or handles_missing(self.estimator_)
        check_reference_missing(self.estimator_, X)
        self._check_memory(X.shape, y, variance, x_copied=not np.may_share_memory(X, X_in)
                           if isinstance(X_in, np.ndarray) else True)
        targets = self._targets(X_in if names is not None else X, y, variance)
        self.n_features_in_ = X.shape[1]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.feature_scale_, self.feature_range_ = nan_safe_scale(X)
        self.missing_seen_ = np.isnan(X).any(axis=0)
        self._store_targets(targets)
        self._fit_targets(X, targets)
        return self

    def _store_targets(self, targets):
        self.reference_mean_, self.reference_var_ = targets

    def _n_targets(self, y):
        return 2  # mean and variance

    def _check_memory(self, shape, y, variance, x_copied):
        """DefragMemoryError before allocating when fit's working set (defrag/utils/memory.py)
        exceeds the memory limit (defrag.set_max_memory / defrag.max_memory)."""
        members = 0
        if self.estimator_ is not None and variance is None and not is_classifier(self):
            bagged = bagged_members(unwrap(self.estimator_))
            members = 0 if bagged is None else len(bagged[0])
        cv = self.alpha is None and self.max_leaves is None
        parts = proxy_estimate(shape[0], shape[1], self._n_targets(y), members, threads_from_n_jobs(self.n_jobs),
                               cv, int(self.min_samples_leaf), self.max_depth, x_copied)
        check_memory(sum(parts.values()), f"{type(self).__name__}.fit",
                     f"fewer rows of X (now {shape[0]}), a larger min_samples_leaf (now "
                     f"{self.min_samples_leaf}), n_jobs= (now {self.n_jobs})"
                     + (f", or a reference with fewer members (now {members})" if members else ""),
                     parts)

    def _grow_and_path(self, X, targets):
        mean, var = targets
        root = (var.sum() + ((mean - mean.mean()) ** 2).sum()) / mean.size
        floor = max(_REL_VAR_FLOOR * root, 1e-300)
        leaf, threads = _leaf_rows(self.min_samples_leaf, X), threads_from_n_jobs(self.n_jobs)
        grown = grow(X, lambda rows: _proxy_split.proxy_best_split(X, rows, mean, var, leaf, floor, threads),
                     lambda rows: node_stats(mean, var, rows), leaf, self.max_depth)
        return grown, pruning_path(grown, floor)

    @staticmethod
    def _heldout_loss(values, targets, held):
        """Expected squared loss sum_j [v_j + (m_j - prediction_j)^2] of held-out rows."""
        mean, var = targets
        return float(np.sum(var[held] + (mean[held] - values) ** 2))

    def _fit_targets(self, X, targets):
        grown, (alphas, n_leaves, fits, order) = self._grow_and_path(X, targets)
        self.pruning_path_ = {"alphas": alphas, "n_leaves": n_leaves, "fit": fits}
        if self.alpha is not None:
            k = select_subtree(fits, n_leaves, float(self.alpha))
            self.alpha_ = float(self.alpha)
        elif self.max_leaves is not None:
            k = int(np.flatnonzero(n_leaves <= self.max_leaves)[0])
            self.alpha_ = float(alphas[k])  # NaN when no alpha selects this subtree
        else:
            self.alpha_ = self._cv_alpha(X, targets, alphas)
            k = select_subtree(fits, n_leaves, self.alpha_)
        self.tree_ = self._compact(grown, leaf_mask(grown, order, k))
        self.decimals_ = None
        if not is_classifier(self):  # the values as rules_ prints them (predict is the text)
            self.decimals_ = spread_decimals(self.tree_["value"][self.tree_["feature"] < 0])
            self.tree_["value"] = rounded(self.tree_["value"], self.decimals_)
        # each threshold as printed: the shortest decimal with the same split of the
        # training rows, so that the rules (rules_) say exactly what predict tests
        split = self.tree_["feature"] >= 0
        self.tree_["threshold"][split] = printed_thresholds(X, self.tree_["feature"][split],
                                                            self.tree_["threshold"][split])
        self.n_leaves_ = int(n_leaves[k])

    def _cv_alpha(self, X, targets, alphas):
        n = X.shape[0]
        # geometric midpoints of the path's alpha intervals (Breiman et al. 1984)
        a = alphas[np.isfinite(alphas)]
        betas = np.append(np.sqrt(a[:-1] * a[1:]), a[-1])
        if n < self.cv:
            raise ValueError(f"cross-validation with cv={self.cv} needs at least {self.cv} rows; got n_samples = {n}")
        rng = check_random_state(self.random_state)
        folds = np.array_split(rng.permutation(n), self.cv)
        loss = np.zeros(betas.size)
        for held in folds:
            train = np.ones(n, dtype=bool)
            train[held] = False
            Xt = np.ascontiguousarray(X[train])
            grown, (_, nl, fit, order) = self._grow_and_path(Xt, tuple(t[train] for t in targets))
            for i, b in enumerate(betas):
                leaf = apply_pruned(grown, leaf_mask(grown, order, select_subtree(fit, nl, b)), X[held])
                loss[i] += self._heldout_loss(grown.value[leaf], targets, held)
        loss /= n
        self.cv_alphas_, self.cv_loss_ = betas, loss
        best = np.flatnonzero(loss <= loss.min() * (1 + 1e-12) + 1e-300)
        return float(betas[best[-1]])  # ties: the smaller tree

    @staticmethod
    def _compact(grown, stops):
        keep, new_id, stack = [], {}, [0]
        while stack:
            v = stack.pop()
            new_id[v] = len(keep)
            keep.append(v)
            if not stops[v]:
                stack.append(int(grown.right[v]))
                stack.append(int(grown.left[v]))
        keep = np.asarray(keep)
        internal = ~stops[keep]
        left = np.where(internal, [new_id.get(int(grown.left[v]), -1) for v in keep], -1)
        right = np.where(internal, [new_id.get(int(grown.right[v]), -1) for v in keep], -1)
        return {
            "children_left": left.astype(np.int64),
            "children_right": right.astype(np.int64),
            "feature": np.where(internal, grown.feature[keep], -1).astype(np.int64),
            "threshold": np.where(internal, grown.threshold[keep], 0.0),
            "missing_right": internal & grown.missing_right[keep],
            "value": grown.value[keep].copy(),
            "n_node_samples": grown.n[keep].copy(),
            "node_sse": grown.sse[keep].copy(),
        }

    # -- use
    def _check_X(self, X):
        """X as float64, a DataFrame's columns matched by name to feature_names_in_."""
        check_is_fitted(self, "tree_")
        X = _as_proxy_input(columns_by_name(X, getattr(self, "feature_names_in_", None), type(self).__name__, 5))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        if not getattr(self, "supports_missing_", False):
            check_reference_missing(self.estimator_, X)
        return X

    def apply(self, X):
        """Index (in ``tree_``) of the leaf holding each row.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The leaves.
        """
        X = self._check_X(X)
        t = self.tree_
        node = np.zeros(X.shape[0], dtype=np.int64)
        while True:
            idx = np.flatnonzero(t["children_left"][node] >= 0)
            if idx.size == 0:
                return node
            nd = node[idx]
            mr = t["missing_right"][nd]
            right = goes_right(X[idx, t["feature"][nd]], t["threshold"][nd], mr)
            node[idx] = np.where(right, t["children_right"][nd], t["children_left"][nd])

    def predict(self, X):
        """The tree's prediction (its leaf's mean) at each point.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        leaves = self.apply(X)
        return self.tree_["value"][leaves]

    def _names(self):
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{d}" for d in range(self.n_features_in_)]

    def leaves(self):
        """Node indices (in ``tree_``) of the leaves, left to right.

        Returns
        -------
        list of int
            The leaves.
        """
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
        """The leaves as a RuleSet: one rule per leaf, ``lower < x_d <= upper``, with
        "(or missing)" where every split on x_d above the leaf sends NaN its way."""
        check_is_fitted(self, "tree_")
        t, names = self.tree_, self._names()
        D = self.n_features_in_
        supports = bool(getattr(self, "supports_missing_", False))
        seen = getattr(self, "missing_seen_", np.zeros(D, dtype=bool))
        rules = []
        total = float(t["n_node_samples"][0])

        def walk(v, lo, hi, miss):
            if t["children_left"][v] < 0:
                conds = [Condition(d, names[d], None if lo[d] == -np.inf else lo[d],
                                   None if hi[d] == np.inf else hi[d], missing=supports and miss[d],
                                   missing_seen=bool(seen[d]))
                         for d in range(D) if lo[d] > -np.inf or hi[d] < np.inf]
                n = int(t["n_node_samples"][v])
                pred, proba = self._leaf_rule_value(t["value"][v])
                rules.append(Rule(conds, pred, proba=proba, support=n, weight=n / total))
                return
            d, thr = t["feature"][v], t["threshold"][v]
            mr = bool(t["missing_right"][v])
            hl, ml = hi.copy(), miss.copy()
            hl[d] = min(hl[d], thr)
            ml[d] &= not mr
            walk(int(t["children_left"][v]), lo, hl, ml)
            ll, mr_ = lo.copy(), miss.copy()
            ll[d] = max(ll[d], thr)
            mr_[d] &= mr
            walk(int(t["children_right"][v]), ll, hi, mr_)

        walk(0, np.full(D, -np.inf), np.full(D, np.inf), np.ones(D, dtype=bool))
        pred, proba = self._leaf_rule_value(t["value"][0])
        return RuleSet(rules, pred, default_proba=proba, feature_names=names,
                       classes=getattr(self, "classes_", None), supports_missing=supports,
                       decimals=getattr(self, "decimals_", None))

    def _leaf_rule_value(self, value):
        return float(value), None

    _display_attribute = "tree_"

    def _title(self):
        n = int(self.n_leaves_)
        fitted_to = "y" if self.estimator_ is None else f"the {type(unwrap(self.estimator_)).__name__}'s " + (
            "class probabilities" if is_classifier(self) else "predictive mean and variance")
        return f"{type(self).__name__}: {n} lea{'f' if n == 1 else 'ves'}, a tree fitted to {fitted_to}"

    def _display_text(self):
        return f"{self._title()}\n{self.rules_}"

    def _display_html(self):
        return self.rules_.to_html([self._title()])

    def features_used(self):
        """The features the tree splits on.

        Returns
        -------
        list of int
            Their indices, in increasing order.
        """
        check_is_fitted(self, "tree_")
        f = self.tree_["feature"]
        return sorted(set(int(d) for d in f[f >= 0]))

    def explain_local(self, x, n_samples=200, scale=1.0, max_depth=3, variance=None,
                      random_state=None, **tree_params):
        """Local explanation of the reference around x, in this tree's feature scales.

        See ``defrag.explain_local``.

        Parameters
        ----------
        x : array-like of shape (n_features,)
            The point.
        n_samples : int, default=200
            Samples of its Gaussian neighbourhood.
        scale : float, default=1.0
            The neighbourhood's width, in training standard deviations.
        max_depth : int, default=3
            Depth of the local tree.
        variance : array-like, callable or None, default=None
            The reference's variance at the samples (None: read from the reference).
        random_state : int, RandomState or None, default=None
            Seed of the samples.
        **tree_params : dict
            Other ProxyTree parameters of the local tree.

        Returns
        -------
        LocalExplanation
            The local tree and its fidelity.
        """
        check_is_fitted(self, "tree_")
        if self.estimator_ is None:
            raise ValueError("explain_local needs a reference estimator (ProxyTree(estimator=...))")
        return explain_local(self.estimator_, x, self.feature_scale_, n_samples=n_samples,
                             scale=scale, max_depth=max_depth, variance=variance,
                             random_state=random_state, **tree_params)


class ProxyTreeClassifier(ClassifierMixin, ProxyTree):
    """A proxy tree of a classifier: its class probabilities as soft targets.

    The targets of a categorical likelihood (footnote 3 of the paper).

    A node's expected log-likelihood under the reference is n_i sum_c p_ic log p_ic
    with p_i the mean reference probability vector of its rows (so the split search
    minimises the weighted entropy of soft labels), and the pruning cost is
    ``sum_leaves 2 n_i H(p_i) + alpha * b`` (-2 log-likelihood, the analogue of eq. 9).
    Cross-validation scores held-out cross-entropy against the reference. Without
    an estimator, ``fit(X, y)`` uses one-hot labels (a plain entropy CART).
    ``tree_["value"]`` holds the class probabilities of each node, ``classes_`` the labels.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The reference model, with ``predict_proba``, fitted (used as it is) or not (cloned
        and fitted on ``fit(X, y)``); None: fit to the labels y.
    min_samples_leaf : int, default=5
        Growing stops at this minimum leaf size.
    max_depth : int or None, default=None
        The grown tree's depth at most (None: no limit).
    max_leaves : int or None, default=None
        Take the largest subtree on the pruning path with at most this many leaves.
    alpha : float or None, default=None
        Take the subtree of this alpha; with neither alpha nor max_leaves, alpha is chosen
        by ``cv``-fold cross-validation of the held-out cross-entropy.
    cv : int, default=5
        Folds of that cross-validation.
    random_state : int, RandomState or None, default=None
        Shuffling of the cross-validation folds.
    n_jobs : int or None, default=None
        Threads of the C split search (None: every available core). Results do not
        depend on it.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    estimator_ : estimator or None
        The reference explained: ``estimator`` when fitted, else its fitted clone.
    tree_ : dict of arrays
        As ProxyTree's, ``value`` holding each node's class probabilities.

    See Also
    --------
    ProxyTree : The same tree for a regressor's predictive mean and variance.
    PrototypeExplainer : Representative training points per class.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag import ProxyTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=20, random_state=0)
    >>> tree = ProxyTreeClassifier(forest, max_leaves=3, random_state=0).fit(X, y)
    >>> tree.n_leaves_
    3
    """

    def _check_params(self):
        super()._check_params()
        if self.estimator is not None and not callable(getattr(unwrap(self.estimator), "predict_proba", None)):
            raise TypeError("estimator must have a predict_proba method for ProxyTreeClassifier")

    def _targets(self, X, y, variance):
        if variance is not None:
            raise ValueError("ProxyTreeClassifier takes no variance: class probabilities carry the uncertainty")
        if self.estimator_ is not None:
            P = reference_proba(self.estimator_, X)
            self.classes_ = np.asarray(unwrap(self.estimator_).classes_)
            if self.classes_.size != P.shape[1]:
                raise ValueError("the estimator's classes_ do not match its predict_proba columns")
            return (np.ascontiguousarray(P),)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None: "
                             "without an estimator, fit needs the labels y")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        check_labels(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}); got shape {y.shape}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        P = np.zeros((y.size, self.classes_.size))
        P[np.arange(y.size), codes] = 1.0
        return (P,)

    def _store_targets(self, targets):
        self.reference_proba_ = targets[0]

    def _n_targets(self, y):
        if self.estimator_ is not None:
            return max(len(getattr(unwrap(self.estimator_), "classes_", ())), 2)
        if y is None:
            return 2
        check_labels(y)  # first: np.unique would count each NaN as a class (and fail on None)
        return max(np.unique(np.asarray(y)).size, 2)

    def _grow_and_path(self, X, targets):
        P = np.ascontiguousarray(targets[0])
        leaf, threads = _leaf_rows(self.min_samples_leaf, X), threads_from_n_jobs(self.n_jobs)
        grown = grow(X, lambda rows: _proxy_split.proxy_best_split_proba(X, rows, P, leaf, threads),
                     lambda rows: node_stats_proba(P, rows), leaf, self.max_depth)
        return grown, pruning_path(grown, None)

    @staticmethod
    def _heldout_loss(values, targets, held):
        """Cross-entropy -sum_j sum_c P_jc log p_c of held-out rows (p clipped at 1e-12)."""
        return float(-np.sum(targets[0][held] * np.log(np.maximum(values, 1e-12))))

    def predict_proba(self, X):
        """Class probabilities of each point's leaf.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probabilities, columns in ``classes_`` order.
        """
        leaves = self.apply(X)
        return self.tree_["value"][leaves]

    def predict(self, X):
        """The most probable class of each point's leaf.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The classes.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _leaf_rule_value(self, value):
        return self.classes_[int(np.argmax(value))], value


def explain_local(estimator, x, feature_scale, n_samples=200, scale=1.0, max_depth=3,
                  variance=None, random_state=None, **tree_params):
    """Explain an ensemble around one point with a small proxy tree.

    Draws ``n_samples`` points of a Gaussian neighbourhood of x (``x + scale * u *
    feature_scale``, u standard normal), queries the reference there, and fits a
    depth-limited ProxyTree to a regressor's predictive mean and variance, or a
    ProxyTreeClassifier to a classifier's class probabilities (alpha by 5-fold
    cross-validation unless ``max_leaves`` or ``alpha`` is given). The local fidelity weighs
    each sample by its neighbourhood density. A missing value (NaN) in x is allowed where
    the reference routes missing values: it stays missing in every sample.

    Parameters
    ----------
    estimator : object
        The fitted reference ensemble (regressor or classifier).
    x : array-like of shape (n_features,)
        The point to explain.
    feature_scale : array-like of shape (n_features,) or (n_samples, n_features)
        The per-feature standard deviation of the training inputs
        (``ProxyTree.feature_scale_``), or a training matrix to take it from.
    n_samples : int, default=200
        The neighbourhood's samples, >= 10.
    scale : float, default=1.0
        The neighbourhood's width, in units of ``feature_scale``.
    max_depth : int, default=3
        The proxy tree's depth.
    variance : callable, default=None
        ``variance(Z)``, the predictive variance of a reference that is not bagged.
    random_state : int, RandomState instance or None, default=None
        Draws the samples and the cross-validation folds.
    **tree_params : dict
        Further parameters of the proxy tree.

    Returns
    -------
    LocalExplanation
        The tree (``tree``), its rules (``rules``), its prediction at x
        (``prediction``), the samples and their weights, and the local ``loss`` and
        ``fidelity`` (weighted R^2 against the reference; higher is better).

    See Also
    --------
    ProxyTree : A proxy tree of the whole input space.
    reference_predictions : The reference's mean and variance.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from defrag import explain_local
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> forest = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0)
    >>> forest = forest.fit(X, X[:, 0] + X[:, 1])
    >>> explanation = explain_local(forest, X[0], X, n_samples=50, random_state=0)
    >>> explanation.fidelity <= 1.0
    True
    >>> print(explanation.rules)  # doctest: +SKIP
    [1] if x0 <= 0.4 then y = 0.918928   (support 9, weight 0.180)
    ...
    """
    return local_explanation(ProxyTree, ProxyTreeClassifier, estimator, x, feature_scale, n_samples, scale,
                             max_depth, variance, random_state, **tree_params)
