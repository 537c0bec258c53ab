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
import numbers

import numpy as np
from sklearn.base import BaseEstimator, is_classifier, is_regressor
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from .distance import _euclidean, _int32_leaves, _tree_weights, tree_distance
from .selection import select_submodular, select_supervised
from ..utils.interrupt import interruptible_fit
from ..utils.memory import check_memory, prototype_estimate
from ..utils.threads import threads_from_n_jobs
from ..utils.validation import (as_2d_float, check_labels, check_missing, check_n_jobs, check_positive_int,
                                columns_by_name, feature_names_of)
from ..sources import adapt, check_fitted, checked_model, model_feature_names, predict_on_one_thread, unwrap

METHODS = ("sm-a", "sm-wa", "sm-u", "sg")
DISTANCES = ("auto", "rf", "gbt", "euclidean")


class PrototypeExplainer(BaseEstimator):
    """Explain a tree ensemble by prototypes: training points chosen per class
    under the ensemble's distance (Tan et al., "Tree Space Prototypes").

    Parameters
    ----------
    estimator : fitted scikit-learn random forest / extra trees, or gradient
        boosting model (also HistGradientBoosting without categorical features), or
        XGBoost or LightGBM model; None only with
        ``distance="euclidean"`` and a given y.
    n_prototypes : int, default=10
        k, the number of prototypes (SG may stop with fewer).
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
    random_state : seed for the candidate subset.
    n_jobs : int or None, default=None
        Threads of the distance kernel (None: all available cores). Results do not
        depend on it.

    Attributes
    ----------
    prototypes_ : (k,) training-set indices of the prototypes, in selection order.
    prototype_labels_ : (k,) their classes.
    classes_, distance_ (the distance used), n_features_in_,
    sg_trace_ : training balanced accuracy after each SG step (SG only).
    """

    def __init__(self, estimator=None, *, n_prototypes=10, method="sm-a", distance="auto",
                 max_candidates=None, random_state=None, n_jobs=None):
        self.estimator = estimator
        self.n_prototypes = n_prototypes
        self.method = method
        self.distance = distance
        self.max_candidates = max_candidates
        self.random_state = random_state
        self.n_jobs = n_jobs

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
        est = unwrap(self.estimator)
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
        est = unwrap(self.estimator) if self.estimator is not None else None
        if fitting:
            n_feat = getattr(est, "n_features_in_", None) if est is not None else None
        if n_feat is not None and Xf.shape[1] != n_feat:
            owner = "the estimator" if fitting else "PrototypeExplainer"
            raise ValueError(f"X has {Xf.shape[1]} features but {owner} was fitted with {n_feat}")
        return Xf

    # -- distances between new points and stored points
    def _leaves(self, X, Xf):
        # a DataFrame goes to the estimator as it is, so that it checks the column names
        # (and does not warn that an array has none)
        return _int32_leaves(self._source().leaves(X if hasattr(X, "columns") else Xf))

    def _dist(self, A_X, A_leaves, B_X, B_leaves):
        if self.distance_ == "euclidean":
            return (_euclidean(A_X, B_X) / self._scale).astype(np.float32)
        return tree_distance(A_leaves, B_leaves, self.tree_weights_, self._threads())

    @interruptible_fit(threads=lambda est: threads_from_n_jobs(est.n_jobs))
    def fit(self, X, y=None):
        """Choose the prototypes among the rows of X (y: their classes; None: the model's
        predictions). A DataFrame's columns are matched by name to the model's feature
        names (others are ignored), and at predict to those seen here."""
        self._check_params()
        est = unwrap(self.estimator) if self.estimator is not None else None
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
                             f"candidate training points ({cand.shape[0]})")

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
            D = _euclidean(Xf[cand], Xf)
            m = float(D.max())
            self._scale = m if m > 0 else 1.0
            D = (D / self._scale).astype(np.float32)
            self.tree_weights_ = None
        else:
            leaves = self._leaves(X, Xf)
            self.tree_weights_ = _tree_weights(self._source(), leaves, kind)
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
        """Distances (float32) of each point to each prototype, columns in ``prototypes_`` order."""
        return self._distances_to_prototypes(X)

    def predict(self, X):
        """Class of the nearest prototype (ties: the prototype with the lower training index)."""
        D = self._distances_to_prototypes(X)
        nearest = self._by_index[np.argmin(D[:, self._by_index], axis=1)]
        return self.prototype_labels_[nearest]

    def score(self, X, y):
        """Balanced accuracy of the nearest-prototype classifier."""
        pred = self.predict(X)
        y = np.asarray(y)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {pred.shape[0]} samples")
        return balanced_accuracy_score(y, pred)

    def explain(self, X, n_neighbors=3):
        """The nearest prototypes of each point: (training indices, labels, distances),
        each of shape (n_samples, n_neighbors), nearest first (ties: lower training
        index). A single 1-D point gives 1-D arrays."""
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
            return idx[0], labels[0], dist[0]
        return idx, labels, dist
