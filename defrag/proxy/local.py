"""Local explanations (sec. 4.2): a depth-limited proxy tree fitted around one point, and a
LIME-style baseline on the same neighbourhood samples."""
import numbers
import warnings

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils import check_random_state

from ..sources import unwrap
from ..sources.sklearn_trees import bagged_members
from ..utils.memory import check_memory_of, proxy_estimate
from .reference import check_reference_missing, reference_predictions, reference_proba


def nan_safe_scale(X):
    """Per-feature standard deviation and range over the present values (1 and 0 where a
    feature has fewer than two distinct present values). One column at a time: no
    temporary of the size of X."""
    D = X.shape[1]
    std, rng = np.ones(D), np.zeros(D)
    for d in range(D):
        col = X[:, d]
        col = col[~np.isnan(col)]
        if col.size:
            s = col.std()
            std[d] = s if s > 0 else 1.0
            rng[d] = col.max() - col.min()
    return std, rng


class LocalExplanation:
    """A depth-limited proxy tree fitted around one point, and its local fidelity.

    Attributes: ``x``, ``tree`` (fitted ProxyTree or ProxyTreeClassifier),
    ``rules`` (its RuleSet), ``loss`` (locally weighted squared loss of the
    tree against ``reference_mean`` on the samples; lower is better), ``fidelity``
    (the weighted R^2 of the tree against ``reference_mean`` on the samples, 1 - loss /
    the reference's weighted variance: higher is better, as ``evaluate``'s), ``samples`` Z, ``weights``
    pi_x(Z), ``reference_mean``/``reference_var`` at Z, ``prediction`` (the tree
    at x), ``feature_scale`` (units of the neighbourhood).

    For a classifier, ``explained_class`` is the class the reference predicts at
    x, ``reference_mean`` its probability at Z (``reference_var`` None,
    ``reference_proba`` all classes), ``loss`` and ``fidelity`` those of
    the tree's probability of that class (so that it compares with the LIME
    baseline, which regresses the same probability), and ``prediction`` the
    tree's class at x (``prediction_proba`` its probabilities).
    """

    def __init__(self, x, tree, Z, weights, mean, var, feature_scale, explained=None):
        self.x, self.tree, self.samples, self.weights = x, tree, Z, weights
        self.reference_var, self.feature_scale = var, feature_scale
        if explained is None:
            self.reference_mean = mean
            self.loss = local_loss(tree.predict(Z), mean, weights)
            self.fidelity = local_fidelity(self.loss, mean, weights)
            self.prediction = float(tree.predict(x[None, :])[0])
            return
        # classification: mean is the reference's probabilities (n_samples x classes)
        self.reference_proba = mean
        self.explained_class = tree.classes_[explained]
        self.reference_mean = mean[:, explained]
        self.loss = local_loss(tree.predict_proba(Z)[:, explained], self.reference_mean, weights)
        self.fidelity = local_fidelity(self.loss, self.reference_mean, weights)
        self.prediction_proba = tree.predict_proba(x[None, :])[0]
        self.prediction = tree.classes_[int(np.argmax(self.prediction_proba))]

    @property
    def rules(self):
        return self.tree.rules_

    def features_used(self):
        return self.tree.features_used()

    def lime_baseline(self, n_features=2, ridge_alpha=1.0):
        """LIME-style baseline on the same samples: a weighted ridge regression (on
        standardised features) picks the ``n_features`` largest ``|coefficients|``, and
        a weighted ridge on those features alone is the explanation."""
        return LimeExplanation(self, n_features, ridge_alpha)

    def __repr__(self):
        return (f"<LocalExplanation: {self.tree.n_leaves_} leaves, {len(self.features_used())} "
                f"features, fidelity {self.fidelity:.6g}, loss {self.loss:.6g}>")


def local_loss(pred, reference, weights):
    """sum_s w_s (reference_s - pred_s)^2 / sum_s w_s."""
    w = np.asarray(weights, dtype=np.float64)
    return float(np.sum(w * (np.asarray(reference) - np.asarray(pred)) ** 2) / w.sum())


def local_fidelity(loss, reference, weights):
    """The weighted R^2 of a local explanation of weighted squared loss ``loss`` against the
    reference: 1 - loss / the reference's weighted variance (1.0 where the reference is
    constant and the loss 0, 0.0 where it is constant and the loss is not)."""
    w = np.asarray(weights, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    mean = np.sum(w * reference) / w.sum()
    var = float(np.sum(w * (reference - mean) ** 2) / w.sum())
    if var <= 0.0:
        return 1.0 if loss <= 0.0 else 0.0
    return float(1.0 - loss / var)


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
    ``intercept``, ``loss`` and ``fidelity`` (as the proxy's, on the same samples),
    ``prediction`` (at x)."""

    def __init__(self, local, n_features, ridge_alpha):
        D = local.x.size
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or not 1 <= n_features <= D:
            raise ValueError(f"n_features must be an integer in [1, {D}]; got {n_features!r}")
        if not ridge_alpha >= 0:
            raise ValueError(f"ridge_alpha must be >= 0; got {ridge_alpha!r}")
        U = _standardised(local.samples, local.x, local.feature_scale)
        y, w = local.reference_mean, local.weights
        _, coef = _weighted_ridge(U, y, w, ridge_alpha)
        order = np.argsort(-np.abs(coef), kind="stable")
        self.features = np.sort(order[:n_features])
        self.intercept, self.coef = _weighted_ridge(U[:, self.features], y, w, ridge_alpha)
        self._scale, self._x = local.feature_scale[self.features], local.x
        self.loss = local_loss(self.predict(local.samples), y, w)
        self.fidelity = local_fidelity(self.loss, y, w)
        self.prediction = float(self.intercept)

    def predict(self, Z):
        U = _standardised(np.asarray(Z, dtype=np.float64)[:, self.features], self._x[self.features],
                          self._scale)
        return self.intercept + U @ self.coef


def _standardised(Z, x, scale):
    """(Z - x) / scale, 0 where x is missing (those features stay missing around x)."""
    U = (Z - x) / scale
    U[:, np.isnan(x)] = 0.0
    return U


def local_explanation(proxy_tree, proxy_tree_classifier, estimator, x, feature_scale, n_samples=200,
                      scale=1.0, max_depth=3, variance=None, random_state=None, **tree_params):
    """Explain the reference around x with a depth-limited proxy tree (sec. 4.2).

    A regressor is explained by a proxy_tree (ProxyTree) on its predictive mean and
    variance, a classifier by a proxy_tree_classifier (ProxyTreeClassifier) on its class
    probabilities (the classes are arguments: proxy/estimators.py, which defines them,
    calls this as ``explain_local``).

    Samples z_s ~ N(x, scale^2 I) in standardised units (z = x + scale * u *
    feature_scale, u ~ N(0, I)), queries the reference's mean and variance at
    them (``variance``: None, or a callable ``variance(Z)`` for non-bagged
    models), and fits ``ProxyTree(max_depth=max_depth, **tree_params)`` to them
    (alpha by 5-fold cross-validation unless ``max_leaves``/``alpha`` is given).
    ``feature_scale`` is the per-feature standard deviation of the training
    inputs (``ProxyTree.feature_scale_``), or a training matrix to take it from.
    The local fidelity weighs each sample by the neighbourhood density
    pi_x(z) ~ exp(-|u|^2 / 2). A missing value (NaN) in x is allowed where the
    reference routes missing values: that feature stays missing in every sample
    (the neighbourhood varies the present features only).
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
        fs = nan_safe_scale(fs)[0]
    if fs.shape != x.shape:
        raise ValueError(f"feature_scale has {fs.size} entries but x has {x.size}")
    if np.any(np.isinf(x)) or not np.all(np.isfinite(fs)) or np.any(fs <= 0):
        raise ValueError("x must be finite (or NaN where the model handles missing values) and "
                         "feature_scale finite and > 0")
    check_reference_missing(estimator, x[None, :], "x")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 10:
        raise ValueError(f"n_samples must be an integer >= 10; got {n_samples!r}")
    if not (isinstance(scale, numbers.Real) and np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a number > 0; got {scale!r}")
    if variance is not None and not callable(variance):
        raise TypeError("variance must be None or a callable variance(Z) for local explanations")
    classifier = is_classifier(unwrap(estimator))
    if classifier and variance is not None:
        raise ValueError("variance applies to regression references; a classifier's local "
                         "proxy is fitted to its class probabilities")
    _check_neighbourhood_memory(unwrap(estimator), classifier, int(n_samples), x.size, max_depth, tree_params)
    rng = check_random_state(random_state)
    U = scale * rng.standard_normal((int(n_samples), x.size))
    Z = x + U * fs
    weights = np.exp(-0.5 * np.sum((U / scale) ** 2, axis=1))
    tree_params.setdefault("min_samples_leaf", 5)
    tree_params.setdefault("random_state", rng.randint(2 ** 31 - 1))
    if classifier:
        # soft targets: the reference's probabilities at the samples (footnote 3)
        with warnings.catch_warnings():  # Z's columns are x's, in the model's order by construction
            warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
            tree = proxy_tree_classifier(estimator, max_depth=max_depth, **tree_params).fit(Z)
        P = tree.reference_proba_
        explained = int(np.argmax(reference_proba(estimator, x[None, :])[0]))
        return LocalExplanation(x, tree, Z, weights, P, None, fs, explained=explained)
    mean, var = reference_predictions(estimator, Z, variance)
    tree = proxy_tree(max_depth=max_depth, **tree_params).fit(Z, mean, variance=var)
    return LocalExplanation(x, tree, Z, weights, mean, var, fs)


def _check_neighbourhood_memory(est, classifier, n, D, max_depth, tree_params):
    """DefragMemoryError before the neighbourhood is drawn when it and the proxy tree's
    fit on it (utils/memory.py's proxy_estimate) exceed the memory limit: n_samples
    sizes Z and its draw (n x D float64 each), the weights, the reference's predictions
    and the fit (n_samples=10**9 asked NumPy for 22.4 GiB)."""
    members = None if classifier else bagged_members(est)
    n_targets = max(len(getattr(est, "classes_", ())), 2) if classifier else 2
    cv = tree_params.get("alpha") is None and tree_params.get("max_leaves") is None
    parts = proxy_estimate(n, D, n_targets, 0 if members is None else len(members[0]), 1, cv,
                           max(int(tree_params.get("min_samples_leaf", 5)), 1), max_depth, x_copied=False)
    parts["neighbourhood samples"] = 8.0 * n * (2 * D + 1)
    check_memory_of(parts, f"explain_local on {n} samples of {D} features",
                    f"n_samples= (now {n})")
