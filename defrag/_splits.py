"""The split table: every split ``x_d > t`` of an ensemble, sorted by (feature, threshold).

Sorting makes the splits of one feature contiguous with increasing thresholds, so
for a sample they form a thermometer code determined by one rank per feature
(src_c/dfg_ranks.h). That order is the split index ``l`` used everywhere.
"""
import numbers

import numpy as np

from . import _core

_SKLEARN_FORESTS = (
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
)
_SKLEARN_HIST = ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor")
_SUPPORTED = _SKLEARN_FORESTS + _SKLEARN_HIST


class SplitTable:
    """Sorted numeric splits ``s_l = [x_{feature[l]} > threshold[l]]``; for a missing
    x (NaN), ``s_l = missing_right[l]``.

    Attributes
    ----------
    feature : int32 array (L,)
    threshold : float64 array (L,)
    feat_ptr : int64 array (n_features + 1,), splits of feature d are
        ``feat_ptr[d]:feat_ptr[d + 1]``.
    n_features : int
    float32_inputs : bool
        The source model compares float32 copies of the inputs (scikit-learn
        trees do). The thresholds are then replaced by the float64 thresholds
        that give the same outcome on unrounded inputs (float32_threshold), so
        no rounded copy of X is ever made.
    missing_right : uint8 array (L,)
        1 where the source model sends a missing value right (s = 1).
    supports_missing : bool
        The source model defines where missing values go; otherwise NaN inputs
        are rejected.
    """

    def __init__(self, feature, threshold, n_features, keep_duplicates=False,
                 float32_inputs=False, missing_right=None, supports_missing=False):
        feature = np.asarray(feature)
        threshold = np.asarray(threshold, dtype=np.float64)
        if feature.ndim != 1 or threshold.shape != feature.shape:
            raise ValueError("split features and thresholds must be 1-D arrays of equal length")
        if feature.size and not np.all(np.equal(np.mod(feature, 1), 0)):
            raise ValueError("split feature indices must be integers")
        feature = feature.astype(np.int64)
        if feature.size and (feature.min() < 0 or feature.max() >= n_features):
            raise ValueError(
                f"split feature indices must lie in [0, {n_features}); got "
                f"[{feature.min()}, {feature.max()}]"
            )
        # +inf is allowed: scikit-learn separates missing from present values with a
        # split at +inf that sends only the missing ones right
        if np.any(np.isnan(threshold) | (threshold == -np.inf)):
            raise ValueError("split thresholds must be finite (or +inf)")
        if float32_inputs:
            threshold = float32_threshold(threshold)
        if missing_right is None:
            missing_right = np.zeros(feature.size, dtype=np.uint8)
        missing_right = np.asarray(missing_right).astype(np.uint8)
        if missing_right.shape != feature.shape or np.any(missing_right > 1):
            raise ValueError("missing_right must hold one 0/1 flag per split")
        # (feature, threshold) order makes each feature's splits a thermometer code;
        # the missing direction only breaks ties
        order = np.lexsort((missing_right, threshold, feature))
        feature, threshold, missing_right = feature[order], threshold[order], missing_right[order]
        if not keep_duplicates and feature.size:
            new = np.ones(feature.size, dtype=bool)
            new[1:] = ((feature[1:] != feature[:-1]) | (threshold[1:] != threshold[:-1])
                       | (missing_right[1:] != missing_right[:-1]))
            feature, threshold, missing_right = feature[new], threshold[new], missing_right[new]
        self.missing_right = np.ascontiguousarray(missing_right)
        self.supports_missing = bool(supports_missing)
        self.feature = np.ascontiguousarray(feature, dtype=np.int32)
        self.threshold = np.ascontiguousarray(threshold)
        self.n_features = int(n_features)
        counts = np.bincount(self.feature, minlength=self.n_features)
        self.feat_ptr = np.zeros(self.n_features + 1, dtype=np.int64)
        np.cumsum(counts, out=self.feat_ptr[1:])
        self.float32_inputs = bool(float32_inputs)

    def __len__(self):
        return int(self.feature.size)

    def prepare(self, X):
        """X as the kernels read it: C-contiguous float64 (no copy when it already is)."""
        return np.ascontiguousarray(X, dtype=np.float64)

    def ranks(self, X, n_threads=1):
        """Thermometer ranks (n_features, n_samples) of prepared X."""
        return _core.compute_ranks(X, self.feat_ptr, self.threshold, n_threads)

    def pack(self, X, n_threads=1):
        """Bit-packed s matrix (n_samples, ceil(L / 64)) of prepared X."""
        return _core.pack_rows(X, self.feature, self.threshold, n_threads, self.missing_right)

    def binary_features(self, X):
        """Dense boolean s matrix (n_samples, L): for tests and small inspection only."""
        X = self.prepare(X)[:, self.feature]
        return np.where(np.isnan(X), self.missing_right.astype(bool), X > self.threshold)


def float32_threshold(t):
    """Float64 thresholds t2 with ``x > t2  <=>  float32(x) > t`` for every float64 x.

    float32 rounding is monotonic, so float32(x) > t holds exactly when x rounds to
    at least f_up, the smallest float32 above t: when x > m, the midpoint between
    f_up and its float32 predecessor, or when x == m and the tie goes to f_up
    (round half to even: f_up has an even mantissa). m is exact in float64.
    """
    t = np.asarray(t, dtype=np.float64)
    t32 = t.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        f_up = np.where(t32.astype(np.float64) > t, t32, np.nextafter(t32, np.float32(np.inf)))
        f_lo = np.nextafter(f_up, np.float32(-np.inf))
        mid = (f_lo.astype(np.float64) + f_up.astype(np.float64)) / 2.0
    even = (f_up.view(np.uint32) & 1) == 0
    return np.where(even, np.nextafter(mid, -np.inf), mid)


def _check_supported(estimator):
    from sklearn.utils.validation import check_is_fitted

    name = type(estimator).__name__
    if name not in _SUPPORTED or not type(estimator).__module__.startswith("sklearn."):
        raise TypeError(
            f"unsupported estimator type {type(estimator).__module__}.{name}; supported: "
            f"scikit-learn {', '.join(_SUPPORTED)}, or an array of (feature, threshold) pairs"
        )
    check_is_fitted(estimator)
    return name


def _hist_splits(estimator):
    """(features, thresholds, missing_right) of a HistGradientBoosting model: numeric
    nodes go left when x <= num_threshold (float64 inputs), missing values as
    missing_go_to_left says."""
    features, thresholds, missing = [], [], []
    for per_class in estimator._predictors:  # iterations x classes
        for predictor in per_class:
            nodes = predictor.nodes
            internal = nodes["is_leaf"] == 0
            if np.any(nodes["is_categorical"][internal]):
                raise TypeError(
                    "HistGradientBoosting models with categorical splits are not supported yet"
                )
            features.append(nodes["feature_idx"][internal])
            thresholds.append(nodes["num_threshold"][internal])
            missing.append(nodes["missing_go_to_left"][internal] == 0)
    return features, thresholds, missing


def split_table_from_estimator(estimator, keep_duplicates=False):
    """SplitTable of a fitted scikit-learn tree ensemble (left child when x <= t, so s = x > t).

    Forests and gradient boosting (all per-class trees) compare float32-rounded
    inputs; HistGradientBoosting compares float64 inputs.
    """
    name = _check_supported(estimator)
    if name in _SKLEARN_HIST:
        features, thresholds, missing = _hist_splits(estimator)
        float32_inputs, supports_missing = False, True
    else:
        features, thresholds, missing = [], [], []
        trees = np.ravel(estimator.estimators_)
        for tree in trees:  # one vectorised read per tree
            t = tree.tree_
            internal = t.children_left >= 0
            features.append(t.feature[internal])
            thresholds.append(t.threshold[internal])
            go_left = getattr(t, "missing_go_to_left", None)
            missing.append(np.zeros(internal.sum(), bool) if go_left is None else go_left[internal] == 0)
        float32_inputs = True
        # Forests predict on NaN with each node's missing_go_to_left (scikit-learn >= 1.4);
        # gradient boosting rejects NaN inputs.
        supports_missing = "Forest" in name or "ExtraTrees" in name
        supports_missing &= all(hasattr(t.tree_, "missing_go_to_left") for t in trees)
    return SplitTable(
        np.concatenate(features) if features else np.zeros(0, dtype=np.int64),
        np.concatenate(thresholds) if thresholds else np.zeros(0),
        n_features=estimator.n_features_in_,
        keep_duplicates=keep_duplicates,
        float32_inputs=float32_inputs,
        missing_right=np.concatenate(missing) if missing else None,
        supports_missing=supports_missing,
    )


def split_table_from_array(splits, n_features, keep_duplicates=False):
    """SplitTable from a user array of (feature, threshold) rows."""
    try:
        arr = np.asarray(splits, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("splits must be a numeric array of (feature, threshold) pairs") from exc
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"splits must have shape (n_splits, 2); got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("splits is empty: at least one (feature, threshold) pair is needed")
    if not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError("n_features must be a positive integer")
    return SplitTable(arr[:, 0], arr[:, 1], n_features, keep_duplicates=keep_duplicates)


def _is_xgboost(obj):
    mod = type(obj).__module__ or ""
    return mod.startswith("xgboost")


def xgboost_model_json(model):
    """The parsed JSON of an XGBoost Booster, scikit-learn wrapper, or JSON text/dict."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (str, bytes, bytearray)):
        import json

        try:
            return json.loads(model)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed XGBoost model JSON: {exc}") from exc
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    return xgboost_model_json(bytes(booster.save_raw(raw_format="json")))


def split_table_from_xgboost(model, keep_duplicates=False):
    """SplitTable of an XGBoost tree model (Booster, XGBModel, or its JSON).

    XGBoost stores inputs as float32 and goes left when x < t, missing values as
    default_left says; in terms of float64 inputs that is s = x > t2 with
    t2 = float32_threshold(the float32 just below t).
    """
    doc = xgboost_model_json(model)
    try:
        learner = doc["learner"]
        booster = learner["gradient_booster"]
        name = booster["name"]
        trees = (booster["gbtree"] if name == "dart" else booster)["model"]["trees"]
        n_features = int(learner["learner_model_param"]["num_feature"])
        features, thresholds, missing = [], [], []
        for i, tree in enumerate(trees):
            left = np.asarray(tree["left_children"], dtype=np.int64)
            internal = left >= 0
            if np.any(np.asarray(tree["split_type"], dtype=np.int64)[internal] != 0):
                raise TypeError("XGBoost models with categorical splits are not supported yet")
            t32 = np.asarray(tree["split_conditions"], dtype=np.float32)[internal]
            features.append(np.asarray(tree["split_indices"], dtype=np.int64)[internal])
            below = np.nextafter(t32, np.float32(-np.inf))  # float32(x) >= t  <=>  float32(x) > below
            thresholds.append(float32_threshold(below.astype(np.float64)))
            missing.append(np.asarray(tree["default_left"], dtype=np.int64)[internal] == 0)
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        if isinstance(exc, TypeError) and "categorical" in str(exc):
            raise
        raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc
    if name not in ("gbtree", "dart"):
        raise TypeError(f"XGBoost booster {name!r} has no trees; gbtree or dart models are needed")
    return SplitTable(
        np.concatenate(features) if features else np.zeros(0, dtype=np.int64),
        np.concatenate(thresholds) if thresholds else np.zeros(0),
        n_features=n_features, keep_duplicates=keep_duplicates,
        missing_right=np.concatenate(missing) if missing else None, supports_missing=True,
    )


def _is_lightgbm(obj):
    return (type(obj).__module__ or "").startswith("lightgbm")


def lightgbm_model_dump(model):
    """``dump_model()`` of a LightGBM Booster or LGBMModel (a dict is taken as is)."""
    if isinstance(model, dict):
        return model
    booster = getattr(model, "booster_", model)
    return booster.dump_model()


def _lightgbm_nodes(node, out):
    """Internal nodes of a dumped LightGBM tree, iteratively (trees can be deep)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if "split_index" not in node:
            if "leaf_index" not in node and "leaf_value" not in node:
                raise KeyError("node has neither split_index nor leaf_value")
            continue
        out.append(node)
        stack.append(node["right_child"])
        stack.append(node["left_child"])


def split_table_from_lightgbm(model, keep_duplicates=False):
    """SplitTable of a LightGBM model (Booster, LGBMModel, or its ``dump_model()``).

    LightGBM goes left when x <= threshold (float64). Missing values: with
    missing_type "NaN" they follow default_left; with "None" a NaN is read as 0.0.
    missing_type "Zero" (zero as missing) and categorical splits are not supported yet.
    """
    dump = lightgbm_model_dump(model)
    try:
        n_features = int(dump["max_feature_idx"]) + 1
        nodes = []
        for tree in dump["tree_info"]:
            _lightgbm_nodes(tree["tree_structure"], nodes)
        features = np.array([int(n["split_feature"]) for n in nodes], dtype=np.int64)
        thresholds = np.array([float(n["threshold"]) if n["decision_type"] == "<=" else np.nan
                               for n in nodes], dtype=np.float64)
        kinds = [n["missing_type"] for n in nodes]
        default_left = np.array([bool(n["default_left"]) for n in nodes], dtype=bool)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"malformed LightGBM model dump: {type(exc).__name__}: {exc}") from exc
    if np.isnan(thresholds).any():
        raise TypeError("LightGBM models with categorical splits are not supported yet")
    if "Zero" in kinds:
        raise TypeError("LightGBM splits with missing_type 'Zero' (zero as missing) are not supported yet")
    as_nan = np.array([k == "NaN" for k in kinds], dtype=bool)
    missing_right = np.where(as_nan, ~default_left, 0.0 > thresholds)
    return SplitTable(features, thresholds, n_features=n_features, keep_duplicates=keep_duplicates,
                      missing_right=missing_right, supports_missing=True)
