"""XGBoost models (Booster or the scikit-learn wrappers), read from the model's JSON.

XGBoost stores inputs as float32 and goes left when x < t, missing values as
default_left says; in terms of float64 inputs that is right when x > t2 with
t2 = float32_threshold(the float32 just below t). A categorical node (split_type 1)
sends the listed category codes right and every other code, negative ones included,
left. Leaves hold their output (learning rate included) in split_conditions.
"""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError

from ..splits.inputs import InputEncoding
from ..splits.table import IN_SET, NUMERIC, float32_threshold, slices
from ..utils.validation import user_stacklevel
from .base import MAX_FEATURES, SourceModel, Tree, check_count, integer_array, parsed_json

_MALFORMED = (KeyError, TypeError, IndexError, ValueError, AttributeError, UnicodeDecodeError,
              OverflowError)


def accepts(est):
    return (type(est).__module__ or "").startswith("xgboost")


def model_json(model):
    """The parsed JSON of an XGBoost Booster, scikit-learn wrapper, or JSON text/dict."""
    document = parsed_json(model, "XGBoost")
    if document is not None:
        return document
    if hasattr(model, "get_booster"):

        try:
            booster = model.get_booster()
        except NotFittedError:
            raise
        except Exception as exc:  # XGBoost's own "need to call fit" error
            raise NotFittedError(f"this {type(model).__name__} is not fitted yet: {exc}") from exc
    else:
        booster = model
    return model_json(bytes(booster.save_raw(raw_format="json")))


def _feature_names(names, n_features):
    """The model's feature names (learner.feature_names: empty when it was fitted on an
    array), checked: one string per feature."""
    if not names:
        return None
    if not isinstance(names, list) or len(names) != n_features or not all(isinstance(n, str) for n in names):
        raise ValueError(f"feature_names must list {n_features} names (num_feature)")
    return list(names)


def _sets(tree, internal):
    """(kind, set sizes, codes) of a tree's internal nodes: split_type 1 nodes send
    the categories listed for them (categories_nodes / _segments / _sizes) right."""
    split_type = integer_array(tree["split_type"], "split_type")[internal]
    if np.any((split_type != 0) & (split_type != 1)):
        raise ValueError("split_type must be 0 (numeric) or 1 (categorical)")
    sizes = np.zeros(internal.size, dtype=np.int64)
    cat = np.flatnonzero(split_type == 1)
    if cat.size == 0:
        return split_type, sizes, None
    nodes, segments, lengths = (integer_array(tree[name], name) for name in
                                ("categories_nodes", "categories_segments", "categories_sizes"))
    categories = np.asarray(tree["categories"])
    if not (nodes.ndim == segments.ndim == lengths.ndim == categories.ndim == 1
            and nodes.size == segments.size == lengths.size):
        raise ValueError("categories_nodes, categories_segments and categories_sizes must be "
                         "lists of equal length")
    if np.any(segments < 0) or np.any(lengths < 0) or np.any(segments + lengths > categories.size):
        raise ValueError("categories_segments / categories_sizes point outside categories")
    if categories.size and not (np.issubdtype(categories.dtype, np.integer) and categories.min() >= 0):
        raise ValueError("categories must be non-negative integer category codes")
    order = np.argsort(nodes, kind="stable")
    pos = order[np.minimum(np.searchsorted(nodes[order], internal[cat]), max(nodes.size - 1, 0))] \
        if nodes.size else None
    if pos is None or np.any(nodes[pos] != internal[cat]):
        raise ValueError("a categorical node has no entry in categories_nodes")
    sizes[cat] = lengths[pos]
    return split_type, sizes, slices(categories, segments[pos], lengths[pos])[1]


def _categories(model, n_features):
    """Per feature, the categories a DataFrame had at training time (XGBoost >= 3.1
    stores them as "cats" and re-codes new DataFrames by them), or None."""
    cats = model.get("cats")
    categories = [None] * n_features
    if not cats or not cats.get("enc"):
        return categories
    enc = cats["enc"]
    if len(enc) != n_features:
        raise ValueError(f"cats lists {len(enc)} features for {n_features}")
    for d, entry in enumerate(enc):
        offsets = integer_array(entry.get("offsets", []), f"cats offsets of feature {d}")
        values = np.asarray(entry.get("values", []))
        if offsets.size:  # strings: UTF-8 bytes (as int8) cut at the offsets
            raw = integer_array(values, f"cats values of feature {d}").astype(np.uint8).tobytes()
            if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != len(raw):
                raise ValueError(f"cats offsets of feature {d} do not cut its values")
            # XGBoost 3.1-3.2 cut non-ASCII names at character offsets (and re-code them
            # wrongly): such names are not read, the DataFrame's categories are used
            if raw.isascii():
                categories[d] = np.array([raw[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:])],
                                         dtype=object)
        elif values.size:
            categories[d] = values
    return categories


def _loss_changes(tree, n):
    """The loss reduction of each node's split (loss_changes), or None when absent."""
    if "loss_changes" not in tree:
        return None
    gain = np.asarray(tree["loss_changes"], dtype=np.float64)
    if gain.shape != (n,):
        raise ValueError(f"loss_changes has {gain.size} entries for {n} nodes (left_children)")
    return gain


def _tree(tree, n_features, output):
    """A Tree from one tree of the JSON, every index checked."""
    left = integer_array(tree["left_children"], "left_children")
    n = left.size
    columns = {name: integer_array(tree[name], name) if name != "split_conditions" else np.asarray(tree[name])
               for name in ("right_children", "split_indices", "split_conditions", "default_left")}
    for name, column in columns.items():
        if column.shape != (n,):
            raise ValueError(f"{name} has {column.size} entries for {n} nodes (left_children)")
    num_nodes = tree.get("tree_param", {}).get("num_nodes")
    if num_nodes is not None and check_count(num_nodes, "tree_param.num_nodes") != n:
        raise ValueError(f"the tree has {n} nodes but tree_param.num_nodes = {num_nodes}")
    internal = np.flatnonzero(left >= 0)
    t32 = columns["split_conditions"].astype(np.float32)
    below = np.nextafter(t32, np.float32(-np.inf))  # float32(x) >= t  <=>  float32(x) > below
    kind, sizes = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.int64)
    split_type, sizes[internal], codes = _sets(tree, internal)
    kind[internal] = np.where(split_type == 1, IN_SET, NUMERIC)
    is_leaf = left < 0
    threshold = np.zeros(n)
    threshold[internal] = float32_threshold(below[internal].astype(np.float64))
    return Tree.build(left, columns["right_children"], columns["split_indices"], threshold,
                      columns["default_left"].astype(np.int64) == 0,
                      np.where(is_leaf, columns["split_conditions"].astype(np.float64), np.nan),
                      kind=kind, set_sizes=sizes, set_codes=codes, output=output,
                      n_features=n_features,
                      fields=("left_children", "right_children", "split_indices"),
                      gain=_loss_changes(tree, n))


class XGBoostSource(SourceModel):
    library = "XGBoost"
    n_features_field = "learner_model_param.num_feature"
    supports_missing = True
    checks_trees = False  # (in the library: see SourceModel.checks_trees)
    reads_pandas_categoricals = True

    def __init__(self, estimator):
        super().__init__(estimator)
        doc = model_json(estimator)
        try:
            learner = doc["learner"]
            booster = learner["gradient_booster"]
            self.booster_name = booster["name"]
            self._gbtree = (booster["gbtree"] if self.booster_name == "dart" else booster)["model"] \
                if self.booster_name in ("gbtree", "dart") else None
            self._n_features = check_count(learner["learner_model_param"]["num_feature"],
                                           "learner_model_param.num_feature", MAX_FEATURES)
            param = learner["learner_model_param"]
            # outputs a tree may add to (tree_info): classes, or targets
            self._n_outputs = max(1, check_count(param.get("num_class", 0), "learner_model_param.num_class",
                                                 MAX_FEATURES),
                                  check_count(param.get("num_target", 1), "learner_model_param.num_target",
                                              MAX_FEATURES))
            self._n_class = check_count(param.get("num_class", 0), "learner_model_param.num_class", MAX_FEATURES)
            objective = learner.get("objective") or {}
            self._objective = str(objective.get("name")) if isinstance(objective, dict) and objective.get("name") \
                else None
            self._feature_types = learner.get("feature_types") or []
            self._feature_names = _feature_names(learner.get("feature_names"), self._n_features)
        except _MALFORMED as exc:
            raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc
        if self._gbtree is None:
            raise TypeError(f"XGBoost booster {self.booster_name!r} has no trees; gbtree or dart "
                            "models are needed")
        self._check_scalar_leaves()
        self.is_boosting = hasattr(estimator, "get_booster") \
            and not type(estimator).__name__.startswith("XGBRF")
        missing = getattr(estimator, "missing", np.nan) if hasattr(estimator, "get_booster") else np.nan
        if isinstance(missing, numbers.Real) and not np.isnan(missing):
            # the wrapper's predict reads this value as missing (its DMatrix drops it); the
            # rules read it as a number: where X holds it they may route otherwise
            warnings.warn(f"{type(estimator).__name__}(missing={missing!r}) reads {missing!r} as a missing "
                          f"value; defrag reads only NaN as missing: where X holds {missing!r}, the rules "
                          f"describe the trees' splits on it as a number. Replace {missing!r} by NaN in X "
                          "and set missing=np.nan to explain the model exactly.", UserWarning, stacklevel=user_stacklevel())

    def _check_scalar_leaves(self):
        """TypeError for trees with a vector of values per leaf (multi_strategy=
        "multi_output_tree": one tree for every target), which defrag does not read: their
        leaves looked like malformed children ("left_children and right_children
        disagree"), as the CLI says of such a file (model_files.py)."""
        try:
            trees = self._gbtree.get("trees") or []
            vector = next((t for t in trees if check_count(t.get("tree_param", {}).get("size_leaf_vector", 1),
                                                           "tree_param.size_leaf_vector", MAX_FEATURES) > 1), None)
        except _MALFORMED as exc:
            raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc
        if vector is not None:
            raise TypeError("this XGBoost model's trees have vector leaves (multi_strategy="
                            "'multi_output_tree': one tree for all targets), which defrag does not read; "
                            "fit it with multi_strategy='one_output_per_tree' (the default), one tree per "
                            "target, or explain each target with a model of its own")

    # what a raw Booster predicts as XGBClassifier or XGBRegressor would (booster_values):
    # the probability of class 1, each class's probability, or the value of the objective
    BOOSTER_OBJECTIVES = {"binary:logistic": "classification", "multi:softprob": "classification",
                          "reg:squarederror": "regression", "reg:absoluteerror": "regression",
                          "reg:pseudohubererror": "regression", "reg:squaredlogerror": "regression",
                          "count:poisson": "regression", "reg:gamma": "regression", "reg:tweedie": "regression"}

    @property
    def booster_objective(self):
        return None if hasattr(self.estimator, "get_booster") else self._objective

    @property
    def n_booster_classes(self):
        return max(2, self._n_class)

    def booster_values(self, X):
        """The Booster's predictions of X (inplace_predict, as the wrappers predict); a
        DataFrame's columns are the model's by name already (sources.matched_source)."""
        return self.estimator.inplace_predict(X, validate_features=hasattr(X, "columns"))

    @property
    def n_features(self):
        return self._n_features

    @property
    def feature_names(self):
        return self._feature_names

    def _read_trees(self):
        try:
            trees = self._gbtree["trees"]
            info = self._gbtree.get("tree_info") or [0] * len(trees)
            if len(info) != len(trees):
                raise ValueError(f"tree_info has {len(info)} entries for {len(trees)} trees")
            return [_tree(tree, self._n_features, check_count(output, "tree_info", self._n_outputs - 1))
                    for tree, output in zip(trees, info)]
        except _MALFORMED as exc:
            raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc

    @property
    def encoding(self):
        n = self._n_features
        try:
            types = self._feature_types
            categorical = np.array([t == "c" for t in types], dtype=bool) if len(types) == n else None
            return InputEncoding(n, categorical=categorical, categories=_categories(self._gbtree, n),
                                 unknown="error")
        except _MALFORMED as exc:
            raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc

    @property
    def has_leaves(self):
        return hasattr(self.estimator, "apply")

    def leaves(self, X):
        if not self.has_leaves:
            return super().leaves(X)
        leaves = np.asarray(self.estimator.apply(X))  # node ids, trees in the booster's order
        return leaves.reshape(leaves.shape[0], -1)

    def leaf_values(self):
        if self.booster_name != "gbtree":
            raise ValueError(f"distance='gbt' supports XGBoost's gbtree booster; this model has "
                             f"{self.booster_name!r}")
        return super().leaf_values()
