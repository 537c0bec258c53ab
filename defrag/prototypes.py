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
import heapq
import numbers

import numpy as np
from sklearn.base import BaseEstimator, is_classifier, is_regressor
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from . import _proximity
from ._memory import check_memory, prototype_estimate
from ._threads import threads_from_n_jobs
from ._validation import as_2d_float, check_missing, check_n_jobs, check_positive_int
from .sources import adapt, unwrap

METHODS = ("sm-a", "sm-wa", "sm-u", "sg")
DISTANCES = ("auto", "rf", "gbt", "euclidean")


# --------------------------------------------------------------------------- distances


def leaf_matrix(estimator, X):
    """Leaf (node) id of each point in each tree, int32, shape (n_samples, n_trees), as
    the estimator's source model gives them (defrag/sources): ``apply`` for
    scikit-learn forests and gradient boosting (stage-major, a multiclass model's
    per-class trees as separate trees) and XGBoost's scikit-learn models,
    ``predict(X, pred_leaf=True)`` for LightGBM's, HistGradientBoosting's trees walked
    level by level."""
    return _int32_leaves(adapt(estimator).leaves(X))


def _int32_leaves(leaves):
    if leaves.size and (leaves.min() < 0 or leaves.max() > np.iinfo(np.int32).max):
        raise ValueError("leaf ids do not fit in int32")
    return np.ascontiguousarray(leaves, dtype=np.int32)


def tree_weights(estimator, leaves, kind):
    """Per-tree weights: all 1 for "rf"; for "gbt" (Definition 3)
    ``w_i = Var{gamma_i c_i(s) : s in S}``, ``gamma_i c_i(s)`` the output of the leaf of
    tree i that s reaches, learning rate included (``Tree.value``: scikit-learn's
    stored values times the learning rate; XGBoost's, LightGBM's and
    HistGradientBoosting's leaf outputs are already shrunk). S = the rows of ``leaves``."""
    return _tree_weights(adapt(estimator), leaves, kind)


def _tree_weights(source, leaves, kind):
    n_trees = leaves.shape[1]
    if kind == "rf":
        return np.ones(n_trees, dtype=np.float32)
    node_values = source.leaf_values()
    if len(node_values) != n_trees:
        raise ValueError("leaf matrix and boosting model disagree on the number of trees")
    w = np.empty(n_trees, dtype=np.float64)
    for i, values in enumerate(node_values):
        v = values[leaves[:, i]]
        w[i] = np.var(v) if np.ptp(v) > 0 else 0.0  # exactly 0 for a tree constant on S
    if not np.any(w > 0):
        raise ValueError("every tree of the boosting model is constant on the training points; "
                         "the GBT distance is undefined")
    return (w / w.sum()).astype(np.float32)


def tree_distance(leaves_a, leaves_b, weights, n_threads=1):
    """1 - (weighted) share of trees in which a point of A and one of B share a leaf.

    leaves_a (n_a, T), leaves_b (n_b, T) int leaf ids; weights (T,) >= 0 with a
    positive sum. Returns float32 (n_a, n_b), computed in C."""
    la = np.ascontiguousarray(leaves_a, dtype=np.int32)
    lbt = np.ascontiguousarray(np.asarray(leaves_b, dtype=np.int32).T)
    w = np.ascontiguousarray(weights, dtype=np.float32)
    if la.ndim != 2 or lbt.ndim != 2 or la.shape[1] != lbt.shape[0] or w.shape != (la.shape[1],):
        raise ValueError("leaves_a, leaves_b and weights disagree on the number of trees")
    return _proximity.tree_distance(la, lbt, w, int(n_threads))


def _euclidean(A, B):
    aa = np.einsum("ij,ij->i", A, A)[:, None]
    bb = np.einsum("ij,ij->i", B, B)[None, :]
    d2 = np.maximum(aa + bb - 2.0 * (A @ B.T), 0.0)
    return np.sqrt(d2)


# --------------------------------------------------------------------------- selection


class _Coverage:
    """Gains of the (q-classwise) k-medoids objective with phantom exemplars.

    cur[x] = distance of point x to its nearest selected prototype of its class,
    1 (the phantom exemplar) while there is none. The gain of candidate j of class c
    is scale[c] * sum_{x in class c} max(cur[x] - D[j, x], 0) = g(M + j) - g(M) for
    g of eq. (4). Every gain is computed by the same code (float64, one row at a
    time in the same summation order), so lazy and plain greedy see equal values."""

    def __init__(self, D, cand_class, point_class, scale):
        self.D = D
        self.cand_class = cand_class
        self.cols = [np.flatnonzero(point_class == c) for c in range(len(scale))]
        self.scale = scale
        self.cur = np.ones(D.shape[1], dtype=np.float64)

    def gains(self, rows):
        rows = np.asarray(rows, dtype=np.intp)
        out = np.empty(rows.shape[0], dtype=np.float64)
        for c in np.unique(self.cand_class[rows]):
            sel = rows[self.cand_class[rows] == c]
            cols = self.cols[c]
            pos = np.flatnonzero(self.cand_class[rows] == c)
            for s in range(0, sel.shape[0], 256):
                block = self.D[np.ix_(sel[s:s + 256], cols)].astype(np.float64)
                g = np.maximum(self.cur[cols][None, :] - block, 0.0).sum(axis=1)
                out[pos[s:s + 256]] = g * self.scale[c]
        return out

    def add(self, j):
        cols = self.cols[self.cand_class[j]]
        self.cur[cols] = np.minimum(self.cur[cols], self.D[j, cols])


def _lazy_greedy(cov, rows, k):
    """Lazy greedy (Minoux): a heap of upper bounds (earlier gains, valid by
    submodularity), ordered by (-gain, row). A popped entry whose gain is fresh for
    this step beats every other entry's bound, or ties it with a larger row, so it
    is plain greedy's choice (largest gain, lowest row on ties)."""
    rows = np.asarray(rows, dtype=np.intp)
    g = cov.gains(rows)
    heap = [(-float(v), int(r)) for v, r in zip(g, rows)]
    heapq.heapify(heap)
    fresh = {int(r): 0 for r in rows}
    chosen = []
    for step in range(min(k, rows.shape[0])):
        while True:
            neg, r = heapq.heappop(heap)
            if fresh[r] == step:
                break
            v = float(cov.gains([r])[0])
            fresh[r] = step
            heapq.heappush(heap, (-v, r))
        chosen.append(r)
        cov.add(r)
    return chosen


def _plain_greedy(cov, rows, k):
    """Plain greedy: every remaining gain recomputed at every step (reference)."""
    remaining = list(np.asarray(rows, dtype=np.intp))
    chosen = []
    for _ in range(min(k, len(remaining))):
        g = cov.gains(remaining)
        i = int(np.argmax(g))  # first maximum: lowest row among ties
        r = remaining.pop(i)
        chosen.append(int(r))
        cov.add(r)
    return chosen


def _uniform_budget(k, sizes):
    """SM-U's per-class budgets: k // q each, the remainder to the largest classes
    (ties: lower class code), never more than a class has candidates; what a small
    class cannot take goes to the others in the same order."""
    q = len(sizes)
    budget = np.zeros(q, dtype=int)
    order = sorted(range(q), key=lambda c: (-sizes[c], c))
    left = k
    while left > 0:
        open_ = [c for c in order if budget[c] < sizes[c]]
        if not open_:
            break
        share, extra = divmod(left, len(open_))
        for i, c in enumerate(open_):
            take = min(share + (1 if i < extra else 0), sizes[c] - budget[c])
            budget[c] += take
            left -= take
    return budget


def select_submodular(D, cand_class, point_class, n_classes, k, method, lazy=True):
    """SM-A / SM-WA / SM-U on a candidates x points distance matrix D (values in
    [0, 1]). Returns the chosen candidate rows in selection order."""
    greedy = _lazy_greedy if lazy else _plain_greedy
    sizes_pts = np.bincount(point_class, minlength=n_classes)
    if method == "sm-wa":
        scale = 1.0 / np.maximum(sizes_pts, 1)
    else:
        scale = np.ones(n_classes)
    cov = _Coverage(D, cand_class, point_class, scale)
    if method in ("sm-a", "sm-wa"):
        return greedy(cov, np.arange(D.shape[0]), k)
    if method == "sm-u":
        sizes = np.bincount(cand_class, minlength=n_classes)
        budget = _uniform_budget(k, sizes)
        chosen = []
        for c in range(n_classes):
            if budget[c]:
                chosen += greedy(cov, np.flatnonzero(cand_class == c), int(budget[c]))
        return chosen
    raise ValueError(f"unknown submodular method {method!r}")


def select_supervised(D, cand_class, cand_index, point_class, n_classes, k):
    """SG: add the candidate that most increases the training balanced accuracy of
    the nearest-prototype classifier (ties between prototypes at equal distance go
    to the lower training index, as in ``predict``); stop at k or when no candidate
    strictly improves it. The empty set scores 0. Returns (rows, accuracy trace)."""
    n_pts = D.shape[1]
    sizes = np.bincount(point_class, minlength=n_classes).astype(np.float64)
    present = sizes > 0
    onehot = np.zeros((n_pts, n_classes), dtype=np.float64)
    onehot[np.arange(n_pts), point_class] = 1.0
    cur_d = np.full(n_pts, np.inf)
    cur_idx = np.full(n_pts, np.iinfo(np.int64).max)
    correct = np.zeros(n_pts, dtype=bool)
    per_class = np.zeros(n_classes)
    best = 0.0
    chosen, trace = [], []
    available = np.ones(D.shape[0], dtype=bool)
    while len(chosen) < k and available.any():
        rows = np.flatnonzero(available)
        scores = np.full(rows.shape[0], -np.inf)
        for s in range(0, rows.shape[0], 512):
            r = rows[s:s + 512]
            block = D[r].astype(np.float64)
            wins = (block < cur_d) | ((block == cur_d) & (cand_index[r][:, None] < cur_idx))
            G = wins.astype(np.float64) @ onehot                    # points won, per class
            H = wins.astype(np.float64) @ (onehot * correct[:, None])  # ... that were right
            new = per_class[None, :] - H
            new[np.arange(r.shape[0]), cand_class[r]] += G[np.arange(r.shape[0]), cand_class[r]]
            scores[s:s + 512] = (new[:, present] / sizes[present]).mean(axis=1)
        i = int(np.argmax(scores))
        if not scores[i] > best:
            break
        j = int(rows[i])
        dj = D[j].astype(np.float64)
        wins = (dj < cur_d) | ((dj == cur_d) & (cand_index[j] < cur_idx))
        cur_d[wins] = dj[wins]
        cur_idx[wins] = cand_index[j]
        correct[wins] = point_class[wins] == cand_class[j]
        per_class = np.bincount(point_class[correct], minlength=n_classes).astype(np.float64)
        best = float((per_class[present] / sizes[present]).mean())
        available[j] = False
        chosen.append(j)
        trace.append(best)
    return chosen, trace


# --------------------------------------------------------------------------- estimator


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
            check_is_fitted(est)
            return "euclidean"
        check_is_fitted(est)  # first: an unfitted HistGradientBoosting has no trees to walk
        try:
            source = self._source()
        except TypeError:  # not a tree ensemble defrag reads
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

    def fit(self, X, y=None):
        self._check_params()
        est = unwrap(self.estimator) if self.estimator is not None else None
        kind = self._resolve_distance(est)
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
            y = est.predict(X)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries but X has {n} samples")
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
        """DefragMemoryError before allocating when fit's working set (defrag/_memory.py)
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
        Xf = self._check_X(X)
        leaves = None if self.distance_ == "euclidean" else self._leaves(X, Xf)
        return self._dist(Xf, leaves, self._proto_X, self._proto_leaves)

    def transform(self, X):
        """Distances (float32) of each point to each prototype, columns in prototypes_ order."""
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
        if single:
            X = np.asarray(X).reshape(1, -1)
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
