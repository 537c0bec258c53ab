"""scikit-learn's RandomForest, ExtraTrees and GradientBoosting models (tree_ arrays).

These trees compare float32 copies of the inputs (left when float32(x) <= t); the
thresholds are converted to the float64 thresholds with the same outcome on
unrounded inputs (``float32_threshold``). Forests route missing values by each
node's ``missing_go_to_left`` (scikit-learn >= 1.4); gradient boosting rejects NaN.
"""
import hashlib

import numpy as np
import sklearn
from sklearn.ensemble import BaggingRegressor, ExtraTreesRegressor, RandomForestRegressor
from sklearn.utils.validation import check_is_fitted

from ..splits import float32_threshold
from ..utils.threads import threads_now
from ._forest_sum import forest_sum
from .base import SourceModel, Tree, feature_names_in
from .sklearn_hist import NAMES as HIST_NAMES

FLOAT32_MAX = float(np.finfo(np.float32).max)
# scikit-learn >= 1.4 keeps a classification leaf's class shares in tree_.value (its
# predict_proba returns them as they are); older versions keep weighted counts, which
# predict_proba normalises per row
_VALUE_IS_SHARE = tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 4)

FORESTS = ("RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier",
           "ExtraTreesRegressor")
BOOSTING = ("GradientBoostingClassifier", "GradientBoostingRegressor")
# what the readers of defrag/sources take, for messages
SUPPORTED = "scikit-learn " + ", ".join(FORESTS + BOOSTING + HIST_NAMES) + "; XGBoost, LightGBM and CatBoost models"


def _is_sklearn(est):
    return (type(est).__module__ or "").startswith("sklearn.")


def accepts(est):
    return _is_sklearn(est) and type(est).__name__ in FORESTS + BOOSTING


def accepts_apply(est):
    """Any other model with scikit-learn's apply(): leaves for prototypes, nothing else."""
    return hasattr(est, "apply") and not isinstance(est, (list, tuple, np.ndarray))


def node_records(trees):
    """(nodes, sizes): the node records of scikit-learn tree estimators (each one's pickled
    state, one structured array) end to end, and each tree's number of nodes."""
    states = [t.tree_.__getstate__() for t in trees]  # one call per tree: each field would be one
    dtype = states[0]["nodes"].dtype
    if all(s["nodes"].dtype == dtype and s["nodes"].flags.c_contiguous for s in states):
        # as bytes: NumPy would promote the record dtype pair by pair
        nodes = np.concatenate([s["nodes"].view(np.uint8) for s in states]).view(dtype)
    else:
        nodes = np.concatenate([s["nodes"] for s in states])
    return nodes, np.array([len(s["nodes"]) for s in states], dtype=np.int64)


def tree_records(trees):
    """(node_records, each tree's node values tree_.value[:, 0, :]) of scikit-learn tree
    estimators: what read_sklearn_trees and ForestNodes read."""
    return node_records(trees), [t.tree_.value[:, 0, :] for t in trees]


def read_sklearn_trees(trees, values, outputs, records=None):
    """Trees from scikit-learn tree estimators (values: each tree's node values, outputs:
    each tree's output), read and checked in one pass over all their nodes (records: their
    node_records, where read already)."""
    if not len(trees):
        return []
    nodes, sizes = node_records(trees) if records is None else records
    left, right = nodes["left_child"], nodes["right_child"]
    internal = left >= 0
    starts = np.zeros(sizes.size, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    offset = np.repeat(starts, sizes)
    # sample-weighted impurity decrease; children inside each tree (Tree.build_many checks)
    weighted = nodes["weighted_n_node_samples"] * nodes["impurity"]
    child_l = np.clip(np.maximum(left, 0) + offset, 0, nodes.size - 1)
    child_r = np.clip(np.maximum(right, 0) + offset, 0, nodes.size - 1)
    gain = np.where(internal, weighted - weighted[child_l] - weighted[child_r], 0.0)
    threshold = np.zeros(nodes.size)  # (leaves: 0, as Tree.build_many sets them)
    threshold[internal] = float32_threshold(nodes["threshold"][internal])
    go_left = nodes["missing_go_to_left"] if "missing_go_to_left" in nodes.dtype.names else None
    return Tree.build_many(sizes, left, right, nodes["feature"], threshold,
                           np.zeros(nodes.size, bool) if go_left is None else go_left == 0, values,
                           n_node_samples=nodes["n_node_samples"], outputs=outputs, gain=gain)


class ForestNodes:
    """A forest's trees as forest_sum routes rows (src_c/dfg_forest_sum.h): node arrays end
    to end with global child ids, scikit-learn's own thresholds (x <= t goes left, x the
    float32 value) and missing_go_to_left, and each node's value row (tree_.value[:, 0, :])."""

    def __init__(self, records, values):
        nodes, sizes = records
        self.roots = np.zeros(sizes.size, dtype=np.int64)
        np.cumsum(sizes[:-1], out=self.roots[1:])
        offset = np.repeat(self.roots, sizes)
        left = nodes["left_child"].astype(np.int64)
        right = nodes["right_child"].astype(np.int64)
        self.left = np.where(left >= 0, left + offset, -1)
        self.right = np.where(left >= 0, right + offset, -1)
        self.feature = nodes["feature"].astype(np.int64)
        self.threshold = np.ascontiguousarray(nodes["threshold"], dtype=np.float64)
        self.missing_left = (np.ascontiguousarray(nodes["missing_go_to_left"], dtype=np.uint8)
                             if "missing_go_to_left" in nodes.dtype.names else None)
        self.value = np.ascontiguousarray(np.concatenate(values), dtype=np.float64)

    def summed(self, X32, n_threads):
        """Each row's leaf values summed over the trees in order: the first tree's, then
        each other tree's added (the forest adds them to zeros: 0.0 + v is v)."""
        return forest_sum(X32, self.roots, self.left, self.right, self.feature, self.threshold,
                          self.missing_left, self.value, n_threads)


class SklearnTreesSource(SourceModel):
    library = "scikit-learn"

    def __init__(self, estimator):
        check_is_fitted(estimator)
        super().__init__(estimator)
        name = type(estimator).__name__
        self.is_boosting = name in BOOSTING
        # Forests predict on NaN with each node's missing_go_to_left (scikit-learn >= 1.4);
        # gradient boosting rejects NaN inputs.
        self.supports_missing = not self.is_boosting and all(
            hasattr(t.tree_, "missing_go_to_left") for t in self._estimators())

    def _estimators(self):
        return np.ravel(self.estimator.estimators_)

    @property
    def n_features(self):
        return int(self.estimator.n_features_in_)

    @property
    def feature_names(self):
        return feature_names_in(self.estimator)

    def _records(self):
        """(node_records, node values: tree_.value[:, 0, :]) of the model's trees, read once
        for trees() and for the forest's sums (_forest_nodes); read again where the model's
        estimators are not those read last (a forest refitted in place, warm_start adding
        trees), its sums then forgotten."""
        members = list(self._estimators())
        kept = self.__dict__.get("_kept_records")
        if kept is None or len(kept[0]) != len(members) or any(a is not b for a, b in zip(kept[0], members)):
            kept = (members, *tree_records(members))
            self._kept_records = kept
            for stale in ("_kept_nodes", "_last_summed"):
                self.__dict__.pop(stale, None)
        return kept[1], kept[2]

    def _forest_nodes(self):
        records, values = self._records()
        if "_kept_nodes" not in self.__dict__:
            self._kept_nodes = ForestNodes(records, values)
        return self._kept_nodes

    def _read_trees(self):
        est = self.estimator
        trees = self._estimators()
        records, values = self._records()
        if self.is_boosting:  # (n_stages, n_trees_per_stage): one tree per class and stage
            per_stage = np.asarray(est.estimators_).shape[1]
            # scikit-learn multiplies the stored (line-search adjusted) leaf values by the
            # learning rate when predicting
            return read_sklearn_trees(trees, [est.learning_rate * v[:, 0] for v in values],
                                      [i % per_stage for i in range(len(trees))], records)
        return read_sklearn_trees(trees, values, [0] * len(trees), records)

    def predict(self, X):
        """The model's predictions of X. A random-forest or extra-trees regressor of one
        output sums its trees here (``_summed_trees``: the same values as its own predict
        on one thread, a quarter of the time on a fit's few hundred rows), and such a
        classifier takes the first most probable class of those sums (its own predict's
        argmax of predict_proba); anything else goes to the model's predict."""
        _check_float32_range(X)
        name = type(self.estimator).__name__
        if name in ("RandomForestRegressor", "ExtraTreesRegressor"):
            out = self._summed(X)
            if out is not None:
                return out[:, 0]
        if name in ("RandomForestClassifier", "ExtraTreesClassifier") and _VALUE_IS_SHARE:
            out = self._summed(X)
            if out is not None:
                return self.estimator.classes_.take(np.argmax(out[:, :self.estimator.n_classes_], axis=1), axis=0)
        return super().predict(X)

    def _summed(self, X):
        """_summed_trees of X, kept for the next call on the same values: a fit asks for
        the labels of its rows, then for their class probabilities (or values again)."""
        nodes = self._forest_nodes()  # (first: a refitted forest forgets its last sums)
        out, key = _summed_trees(self.estimator, X, self.__dict__.get("_last_summed"), nodes)
        if out is None:
            return None
        self._last_summed = (key, out)
        return out.copy()  # (the kept sums stay as they are, whatever the caller does with these)

    def predict_proba(self, X):
        """The model's class probabilities of X. A random-forest or extra-trees classifier
        of one output sums its trees here (``_summed_trees``, as ``predict``: 100 trees'
        own predict_proba on 537 rows costs 19 ms of an 88 ms fit); anything else goes to the
        model's predict_proba."""
        _check_float32_range(X)
        if type(self.estimator).__name__ in ("RandomForestClassifier", "ExtraTreesClassifier") and _VALUE_IS_SHARE:
            out = self._summed(X)
            if out is not None:
                return out[:, :self.estimator.n_classes_]
        return super().predict_proba(X)

    def leaves(self, X):
        _check_float32_range(X)
        # gradient boosting: (n, n_stages, n_trees_per_stage), flattened stage-major
        leaves = np.asarray(self.estimator.apply(_as_fitted(self.estimator, X)))
        return leaves.reshape(leaves.shape[0], -1)


class ApplySource(SourceModel):
    """A fitted model of another kind that has scikit-learn's apply() (a single decision
    tree, say): it gives prototypes their leaves and random-forest proximity."""

    library = "scikit-learn"

    def __init__(self, estimator):
        check_is_fitted(estimator)
        super().__init__(estimator)
        self._members = sklearn_tree_members(estimator)
        # scikit-learn's tree_ arrays are read and checked (``checked``) as a forest's are
        self.checks_trees = bool(self._members)

    @property
    def n_features(self):
        n = getattr(self.estimator, "n_features_in_", None)
        return None if n is None else int(n)

    def _read_trees(self):
        if not self._members:
            return super()._read_trees()
        return read_sklearn_trees(self._members, [t.tree_.value[:, 0, :] for t in self._members],
                                  [0] * len(self._members))

    @property
    def feature_names(self):
        return feature_names_in(self.estimator)

    def split_table(self, keep_duplicates=False):
        raise TypeError(unsupported_message(self.estimator))

    def leaves(self, X):
        leaves = np.asarray(self.estimator.apply(_as_fitted(self.estimator, X)))
        return leaves.reshape(leaves.shape[0], -1)


def _as_fitted(estimator, X):
    """X as the estimator was fitted: a DataFrame's values where it was fitted on an array
    (its columns are read by position; the caller said so once, scikit-learn need not)."""
    if hasattr(X, "columns") and getattr(estimator, "feature_names_in_", None) is None:
        return X.to_numpy()
    return X


def sklearn_tree_members(est):
    """The scikit-learn trees (estimators with a tree_) whose node arrays est's own apply and
    predict walk: est itself (a DecisionTree or ExtraTree), or its estimators_ (bagging of
    trees, IsolationForest, RandomTreesEmbedding, ...); [] for any other model."""
    if hasattr(est, "tree_"):
        return [est] if _is_sklearn(est) else []
    members = getattr(est, "estimators_", None)
    if not _is_sklearn(est) or not isinstance(members, (list, tuple, np.ndarray)):
        return []
    flat = list(np.ravel(np.asarray(members, dtype=object))) if isinstance(members, np.ndarray) else list(members)
    return [m for m in flat if hasattr(m, "tree_") and _is_sklearn(m)]


# scikit-learn tree models that are no ensemble of predictors, and what they are instead
_NOT_PREDICTORS = {
    "RandomTreesEmbedding": "an unsupervised embedding (random trees coding X as leaves): it has no "
                            "predictions, nor targets, to explain",
    "IsolationForest": "an outlier detector: its trees measure how easily a point is isolated, not a target",
}


def unsupported_message(est):
    name = type(est).__name__
    what = f"{name} is {_NOT_PREDICTORS[name]}; " if _is_sklearn(est) and name in _NOT_PREDICTORS else ""
    return (f"{what}unsupported estimator type {type(est).__module__}.{name}; "
            f"supported: {SUPPORTED}, or an array of (feature, threshold) pairs")


def bagged_members(est):
    """(members, feature subsets or None) of a bagged scikit-learn regressor (random
    forest, extra trees, bagging), else None: their spread is a predictive variance."""

    if isinstance(est, (RandomForestRegressor, ExtraTreesRegressor)):
        return list(est.estimators_), None
    if isinstance(est, BaggingRegressor):
        return list(est.estimators_), list(est.estimators_features_)
    return None


def _summed_trees(est, X, last=None, nodes=None):
    """The mean of the trees' leaf values over X (tree_.predict: (rows, 1) for a regressor,
    (rows, classes) for a classifier of one output), summed in the
    forest's order as its own predict and predict_proba do on one thread (the same values),
    without joblib's dispatch per tree or each tree's checks (40 of a tree's 60
    microseconds on 300 rows); None where X is not a 2-D numeric array as wide as the
    model's inputs (or a DataFrame of its own columns, in order), or has a value that is
    infinite or too large for float32, or the forest has several outputs: the model's own
    method then, with its own messages. The fit calls it with the model's own columns, so
    the model's feature-name warning is not given on this path.

    Returns (the mean, or None; a key of the float32 rows compared): last, an earlier
    call's (key, mean), gives its mean back where the rows are the same values; nodes: the
    forest's ForestNodes, where read already."""
    if est.n_outputs_ != 1:
        return None, None
    names = getattr(est, "feature_names_in_", None)
    A = X.to_numpy() if names is not None and hasattr(X, "columns") and list(X.columns) == list(names) else X
    if not (isinstance(A, np.ndarray) and A.ndim == 2 and A.shape[1] == est.n_features_in_
            and A.dtype.kind in "fiub"):
        return None, None
    with np.errstate(over="ignore"):  # (too large for float32: inf, sent on below)
        X32 = np.ascontiguousarray(A, dtype=np.float32)  # what the trees compare (_validate_X_predict)
    if np.isinf(X32).any():
        return None, None
    key = (X32.shape, hashlib.blake2b(X32.tobytes(), digest_size=16).digest())
    if last is not None and last[0] == key:
        return last[1], key
    if nodes is None:
        nodes = ForestNodes(*tree_records(est.estimators_))
    # each row summed over the trees in the forest's order, whatever the thread count
    return nodes.summed(X32, threads_now()) / len(nodes.roots), key


def _check_float32_range(X):
    """ValueError naming the first column of X (a numeric array or DataFrame) with a finite
    value beyond float32's range, which these trees read as float32 and refuse (scikit-learn:
    "Input X contains infinity or a value too large for dtype('float32')")."""
    values = X.to_numpy() if hasattr(X, "to_numpy") and hasattr(X, "columns") else X
    if not (isinstance(values, np.ndarray) and values.ndim == 2 and values.dtype.kind == "f"
            and values.dtype.itemsize > 4):
        return
    if values.size == 0 or (np.fmax.reduce(values, axis=None) <= FLOAT32_MAX
                            and np.fmin.reduce(values, axis=None) >= -FLOAT32_MAX):
        return  # (two passes without a copy; fmax and fmin skip NaN)
    with np.errstate(invalid="ignore"):
        beyond = np.abs(values) > FLOAT32_MAX  # (NaN and inf are checked where they are read)
    beyond &= np.isfinite(values)
    if beyond.any():
        j = int(np.flatnonzero(beyond.any(axis=0))[0])
        name = X.columns[j] if hasattr(X, "columns") else f"x{j}"
        raise ValueError(f"X holds values beyond float32's range (about 3.4e38) in column {name!r}, e.g. "
                         f"{values[beyond[:, j], j][0]:.3g}: scikit-learn's trees read their inputs as "
                         "float32 and cannot predict such rows")
