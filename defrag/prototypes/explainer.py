"""Tree-space prototypes (Tan, Soloviev, Hooker & Wells, "Tree Space Prototypes").

Explain a fitted tree ensemble by a few representative training points per class,
chosen under the ensemble's own notion of similarity:

* RF proximity (Definition 1): the share of trees in which two points reach the
  same leaf; GBT proximity (Definition 3): the same share with tree i weighted by
  ``w_i = gamma_i^2 Var{tree_i(s) : s in S}``. Distance = 1 - proximity. The
  kernel is C (src_c/dfg_proximity.c), blockwise for any A x B, float32 output.
* Selection (section "Method"): SM-U (greedy k-medoids per class, k/q each),
  SM-A (Algorithm 1: greedy over all classes with phantom exemplars at distance
  1), SM-WA (SM-A with each class's gain divided by its size), SG (greedy on the
  training balanced accuracy of the nearest-prototype classifier, stopping when no
  candidate improves it). The submodular ones use lazy (priority-queue) greedy,
  which selects exactly what plain greedy selects (see ``_lazy_greedy``).
"""
import html
import numbers
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, is_classifier, is_regressor
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .distance import euclidean_distances, int32_leaves, source_tree_weights, tree_distance
from .selection import select_submodular, select_supervised
from ..utils.interrupt import interruptible_fit
from ..utils.memory import check_memory, prototype_estimate
from ..utils.text import printed_label
from ..utils.threads import threads_from_n_jobs
from ..utils.validation import (as_2d_float, check_labels, check_missing, check_n_jobs, check_positive_int,
                                columns_by_name, feature_names_of)
from ..sources import adapt, check_fitted, checked_model, model_feature_names, predict_on_one_thread, unwrap
from ..sources.fitting import EnsembleExplainerMixin, ExplanationDisplayMixin, handles_missing

METHODS = ("sm-a", "sm-wa", "sm-u", "sg")
DISTANCES = ("auto", "rf", "gbt", "euclidean")


class NearestPrototypes(NamedTuple):
    """The nearest prototypes of each point (``PrototypeExplainer.explain``), nearest first.

    Attributes
    ----------
    indices : ndarray of shape (n_samples, n_neighbors)
        Their training indices.
    labels : ndarray of shape (n_samples, n_neighbors)
        Their classes.
    distances : ndarray of shape (n_samples, n_neighbors)
        Their distances to each point.
    """

    indices: np.ndarray
    labels: np.ndarray
    distances: np.ndarray


class PrototypeExplainer(ExplanationDisplayMixin, EnsembleExplainerMixin, ClassifierMixin, TransformerMixin,
                         BaseEstimator):
    """Explain a tree ensemble by prototypes, training points chosen per class.

    Chosen under the ensemble's distance (Tan et al., "Tree Space Prototypes").

    Parameters
    ----------
    estimator : tree ensemble or None
        A scikit-learn random forest / extra trees, or gradient boosting model (also
        HistGradientBoosting without categorical features), or an XGBoost or LightGBM
        model, fitted (used as it is) or not (cloned and fitted on ``fit(X, y)``); None
        only with ``distance="euclidean"`` and a given y.
    n_prototypes : int, default=10
        The number of prototypes k (SG may stop with fewer).
    method : {"sm-a", "sm-wa", "sm-u", "sg"}, default="sm-a"
    distance : {"auto", "rf", "gbt", "euclidean"}, default="auto"
        "auto": "gbt" for gradient boosting (scikit-learn's GradientBoosting* and
        HistGradientBoosting*, XGBoost, LightGBM), "rf" otherwise. "euclidean" is
        divided by the largest candidate-to-training-point distance, so that it lies
        in [0, 1] on the training data, as the phantom exemplars require.
    max_candidates : int or None, default=None
        Draw prototypes from a random subset of this many training points (the
        objective still covers all of them): a candidates x N distance matrix
        instead of N x N.
    random_state : int, RandomState or None, default=None
        Seed of the candidate subset.
    n_jobs : int or None, default=None
        Threads of the distance kernel (None: all available cores). Results do not
        depend on it.

    Attributes
    ----------
    estimator_ : estimator or None
        The model explained: ``estimator`` when fitted, else its fitted clone.
    prototypes_ : ndarray of shape (k,)
        Training-set indices of the prototypes, in selection order.
    prototype_labels_ : ndarray of shape (k,)
        Their classes.
    classes_ : ndarray
        The classes.
    distance_ : str
        The distance used.
    n_features_in_ : int
        Features seen at fit.
    sg_trace_ : ndarray
        Training balanced accuracy after each SG step (SG only).

    See Also
    --------
    ProxyTreeClassifier : A small tree fitted to the ensemble's class probabilities.
    DefragModel : A few rules that mimic the ensemble.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag import PrototypeExplainer
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=20, random_state=0)
    >>> explainer = PrototypeExplainer(forest, n_prototypes=3, random_state=0).fit(X, y)
    >>> explainer.prototypes_.shape
    (3,)
    >>> nearest = explainer.explain(X[:2], n_neighbors=1)
    >>> nearest.indices.shape
    (2, 1)
    """

    _parameter_constraints = {
        "estimator": "no_validation",
        "n_prototypes": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "distance": [StrOptions(set(DISTANCES))],
        "max_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, estimator=None, *, n_prototypes=10, method="sm-a", distance="auto",
                 max_candidates=None, random_state=None, n_jobs=None):
        self.estimator = estimator
        self.n_prototypes = n_prototypes
        self.method = method
        self.distance = distance
        self.max_candidates = max_candidates
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float32"]  # distances are float32
        # NaN where a tree distance's model routes it
        tags.input_tags.allow_nan = self.distance != "euclidean" and self.estimator is not None and \
            handles_missing(self.estimator)
        return tags

    # -- checks
    def _check_params(self):
        check_positive_int("n_prototypes", self.n_prototypes)
        check_positive_int("max_candidates", self.max_candidates, allow_none=True)
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}; got {self.method!r}")
        if self.distance not in DISTANCES:
            raise ValueError(f"distance must be one of {DISTANCES}; got {self.distance!r}")
        check_n_jobs(self.n_jobs)

    def _threads(self):
        return threads_from_n_jobs(self.n_jobs)

    def _resolve_distance(self, est):
        if est is None:
            if self.distance != "euclidean":
                raise ValueError("PrototypeExplainer needs a fitted tree ensemble as estimator "
                                 "(or distance='euclidean')")
            return "euclidean"
        if self.distance == "euclidean":  # the estimator only labels the points
            check_fitted(est)
            return "euclidean"
        check_fitted(est)  # first: an unfitted HistGradientBoosting has no trees to walk
        try:
            source = self._source()
        except TypeError:  # not a tree ensemble defrag reads
            if callable(getattr(est, "apply", None)):
                raise  # one it refuses, saying why (XGBoost's vector leaves, say)
            source = None
        if source is None or not source.has_leaves:
            raise TypeError(f"{type(est).__name__} has no apply(); a tree ensemble is needed")
        if self.distance == "auto":
            return "gbt" if source.is_boosting else "rf"
        if self.distance == "gbt" and not source.is_boosting:
            raise ValueError("distance='gbt' needs a gradient boosting model (scikit-learn's "
                             "GradientBoosting* or HistGradientBoosting*, XGBoost or LightGBM)")
        return self.distance

    def _source(self):
        """The estimator's SourceModel, read once (not pickled: rebuilt on first use)."""
        est = unwrap(self.estimator_)
        cached = self.__dict__.get("_cached_source")
        if cached is None or cached.estimator is not est:
            cached = self.__dict__["_cached_source"] = adapt(est)
        return cached

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_cached_source", None)
        return state

    def _columns(self, X, est=None, kind=None):
        """X with its columns matched by name (utils/validation.py): at fit (kind given) to
        the model's feature names (the ensemble's, or a labelling model's
        feature_names_in_), at predict to those seen at fit (feature_names_in_)."""
        if kind is None:
            return columns_by_name(X, getattr(self, "feature_names_in_", None), "PrototypeExplainer", 5)
        if est is None:
            return X
        names = model_feature_names(est) if kind == "euclidean" else self._source().feature_names
        return columns_by_name(X, names, f"the {type(est).__name__} model", 4)

    def _check_X(self, X, fitting=False, distance=None):
        """X as float64. NaN only with a tree distance whose model routes missing values
        (its leaves are the model's own)."""
        Xf = as_2d_float(X, allow_nan=True)
        if np.isnan(Xf).any():
            distance = self.distance_ if distance is None else distance
            if distance == "euclidean":
                raise ValueError("X contains NaN; the euclidean distance needs values: impute them, "
                                 "or use a tree distance with a model that handles missing values")
            check_missing(Xf, self._source().supports_missing)
        n_feat = getattr(self, "n_features_in_", None)
        est = unwrap(self.estimator_) if self.estimator_ is not None else None
        if fitting:
            n_feat = getattr(est, "n_features_in_", None) if est is not None else None
        if n_feat is not None and Xf.shape[1] != n_feat:
            owner = f"the {type(est).__name__} model" if fitting else "PrototypeExplainer"
            raise ValueError(f"X has {Xf.shape[1]} features, but {owner} is expecting {n_feat} features as input")
        return Xf

    # -- distances between new points and stored points
    def _leaves(self, X, Xf):
        # a DataFrame goes to the estimator as it is, so that it checks the column names
        # (and does not warn that an array has none)
        return int32_leaves(self._source().leaves(X if hasattr(X, "columns") else Xf))

    def _dist(self, A_X, A_leaves, B_X, B_leaves):
        if self.distance_ == "euclidean":
            return (euclidean_distances(A_X, B_X) / self._scale).astype(np.float32)
        return tree_distance(A_leaves, B_leaves, self.tree_weights_, self._threads())

    @interruptible_fit(threads=lambda est: threads_from_n_jobs(est.n_jobs))
    def fit(self, X, y=None):
        """Choose the prototypes among the rows of X.

        An unfitted ``estimator`` is cloned and fitted on (X, y) first.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows; a DataFrame's columns are matched by name to the model's feature
            names (others are ignored), and at predict to those seen here.
        y : array-like of shape (n_samples,), optional
            Their classes (None: the model's predictions).

        Returns
        -------
        self
            The fitted explainer.
        """
        self._validate_params()
        self._check_params()
        self.estimator_ = self._ensemble(X, y)
        est = unwrap(self.estimator_) if self.estimator_ is not None else None
        kind = self._resolve_distance(est)
        if est is not None and kind != "euclidean":
            self._source().checked()  # its trees, before its apply walks them
        elif est is not None:
            checked_model(est)  # a labelling model: its trees, before its predict walks them
        X = self._columns(X, est, kind)
        Xf = self._check_X(X, fitting=True, distance=kind)
        n = Xf.shape[0]
        if n == 0:
            raise ValueError("X has no samples")
        if y is None:
            if est is None:
                raise ValueError("y is required when no estimator is given")
            if is_regressor(est) or not is_classifier(est):
                raise ValueError(f"{type(est).__name__} is not a classifier: prototypes need classes; "
                                 "pass y (class labels) to fit")
            y = predict_on_one_thread(est, X)  # (a forest's joblib threads: labels that could vary)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries but X has {n} samples")
        check_labels(y)
        if type_of_target(y) not in ("binary", "multiclass"):
            raise ValueError(f"y must hold class labels; got target type {type_of_target(y)!r}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.intp)
        q = self.classes_.shape[0]

        rng = check_random_state(self.random_state)
        if self.max_candidates is not None and self.max_candidates < n:
            cand = np.sort(rng.choice(n, self.max_candidates, replace=False))
        else:
            cand = np.arange(n)
        if self.n_prototypes > cand.shape[0]:
            raise ValueError(f"n_prototypes={self.n_prototypes} is larger than the number of "
                             f"candidate training points ({cand.shape[0]}; n_samples = {n})")

        self._check_memory(n, cand.shape[0], Xf.shape[1], q, kind)
        self.distance_ = kind
        self.n_features_in_ = Xf.shape[1]
        names = feature_names_of(X)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if kind == "euclidean":
            leaves = None
            self._scale = 1.0
            D = euclidean_distances(Xf[cand], Xf)
            m = float(D.max())
            self._scale = m if m > 0 else 1.0
            D = (D / self._scale).astype(np.float32)
            self.tree_weights_ = None
        else:
            leaves = self._leaves(X, Xf)
            self.tree_weights_ = source_tree_weights(self._source(), leaves, kind)
            D = tree_distance(leaves[cand], leaves, self.tree_weights_, self._threads())

        if self.method == "sg":
            rows, trace = select_supervised(D, codes[cand], cand, codes, q, self.n_prototypes)
            self.sg_trace_ = np.asarray(trace)
        else:
            rows = select_submodular(D, codes[cand], codes, q, self.n_prototypes, self.method)
        self.prototypes_ = cand[np.asarray(rows, dtype=np.intp)]
        self.prototype_labels_ = self.classes_[codes[self.prototypes_]]
        self._proto_X = Xf[self.prototypes_]
        self._proto_leaves = None if leaves is None else leaves[self.prototypes_]
        # nearest-prototype ties go to the lower training index
        self._by_index = np.argsort(self.prototypes_, kind="stable")
        return self

    _display_attribute = "prototypes_"

    def _title(self):
        k, q = self.prototypes_.size, self.classes_.size
        return (f"PrototypeExplainer: {k} prototype{'' if k == 1 else 's'} of {q} class{'' if q == 1 else 'es'} "
                f"({self.method}, {self.distance_} distance); predict gives the class of the nearest")

    def _display_text(self):
        rows = [f"  training row {int(i)}: class {printed_label(label)}"
                for i, label in zip(self.prototypes_, self.prototype_labels_)]
        return "\n".join([self._title(), *rows])

    def _display_html(self):
        cells = "".join(f"<tr><td>{int(i)}</td><td>{html.escape(str(label))}</td></tr>"
                        for i, label in zip(self.prototypes_, self.prototype_labels_))
        return (f"<div><p>{html.escape(self._title())}</p><table><thead><tr><th>training row</th>"
                f"<th>class</th></tr></thead><tbody>{cells}</tbody></table></div>")

    def _check_memory(self, n, n_candidates, n_features, n_classes, kind):
        """DefragMemoryError before allocating when fit's working set (defrag/utils/memory.py)
        exceeds the memory limit (defrag.set_max_memory / defrag.max_memory)."""
        euclidean = kind == "euclidean"
        n_trees = 0 if euclidean else len(self._source().trees())
        parts = prototype_estimate(n, n_candidates, n_trees, n_features, n_classes, euclidean,
                                   self.method == "sg")
        check_memory(sum(parts.values()), "PrototypeExplainer.fit",
                     f"max_candidates= (now {n_candidates} candidates x {n} points), fewer "
                     "training points" + ("" if euclidean else f", or a model with fewer trees (now {n_trees})"),
                     parts)

    def _distances_to_prototypes(self, X):
        check_is_fitted(self, "prototypes_")
        X = self._columns(X)
        Xf = self._check_X(X)
        leaves = None if self.distance_ == "euclidean" else self._leaves(X, Xf)
        return self._dist(Xf, leaves, self._proto_X, self._proto_leaves)

    def transform(self, X):
        """Compute the distances of each point to each prototype.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of float32 of shape (n_samples, k)
            The distances, columns in ``prototypes_`` order.
        """
        return self._distances_to_prototypes(X)

    def predict(self, X):
        """Class of the nearest prototype (ties: the prototype with the lower training index).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The classes.
        """
        D = self._distances_to_prototypes(X)
        nearest = self._by_index[np.argmin(D[:, self._by_index], axis=1)]
        return self.prototype_labels_[nearest]

    def score(self, X, y):
        """Balanced accuracy of the nearest-prototype classifier.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        float
            The balanced accuracy.
        """
        pred = self.predict(X)
        y = np.asarray(y)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {pred.shape[0]} samples")
        return balanced_accuracy_score(y, pred)

    def explain(self, X, n_neighbors=3):
        """The nearest prototypes of each point, nearest first (ties: lower training index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_features,)
            The points; a single 1-D point gives 1-D arrays.
        n_neighbors : int, default=3
            Prototypes per point (at most ``prototypes_.size``).

        Returns
        -------
        NearestPrototypes
            A named tuple ``(indices, labels, distances)``, each of shape
            (n_samples, n_neighbors).
        """
        single = np.ndim(X) == 1
        if single:  # one point (a row of a DataFrame keeps its names)
            X = X.to_frame().T if hasattr(X, "to_frame") else np.asarray(X).reshape(1, -1)
        if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral) or n_neighbors < 1:
            raise ValueError(f"n_neighbors must be an integer >= 1; got {n_neighbors!r}")
        D = self._distances_to_prototypes(X)
        n_neighbors = min(int(n_neighbors), D.shape[1])
        Dp = D[:, self._by_index]
        order = np.argsort(Dp, axis=1, kind="stable")[:, :n_neighbors]
        cols = self._by_index[order]
        idx = self.prototypes_[cols]
        dist = np.take_along_axis(D, cols, axis=1)
        labels = self.prototype_labels_[cols]
        if single:
            return NearestPrototypes(idx[0], labels[0], dist[0])
        return NearestPrototypes(idx, labels, dist)
