"""LightGBM models (Booster or LGBMModel), read from ``dump_model()`` in one walk.

LightGBM goes left when x <= threshold (float64). Missing values: with missing_type
"NaN" they follow default_left; with "None" a NaN is read as 0.0; with "Zero" zero
(|x| <= 1e-35) and NaN are missing and follow default_left (the encoding turns such
zeros into NaN). A categorical node (decision_type "==") sends the listed categories
left and every other value right, NaN and negative ones included.

Nodes are numbered in the dump's preorder (left subtree first); ``leaves`` maps the
leaf indices of ``predict(pred_leaf=True)`` to those node numbers.
"""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..splits.inputs import InputEncoding
from ..splits.table import MAX_CATEGORY, NOT_IN_SET, NUMERIC
from .base import MAX_FEATURES, SourceModel, Tree, as_integer, check_count

_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


def accepts(est):
    return (type(est).__module__ or "").startswith("lightgbm")


def model_dump(model):
    """``dump_model()`` of a LightGBM Booster or LGBMModel (a dict is taken as is)."""
    if isinstance(model, dict):
        return model
    if hasattr(type(model), "booster_"):  # LGBMModel: booster_ raises while unfitted
        check_is_fitted(model)
        model = model.booster_
    return model.dump_model()


def _category_set(threshold):
    """Category codes of a '==' node's threshold "a||b||c"."""
    codes = [as_integer(c, "a category code in threshold") for c in str(threshold).split("||")]
    if min(codes) < 0 or max(codes) > MAX_CATEGORY:
        raise ValueError(f"category outside [0, {MAX_CATEGORY}] in threshold {threshold!r}")
    return codes


def _flatten(root):
    """The nodes of a dumped tree in preorder (left subtree first), iteratively (trees can
    be deep): (internal node dicts with their ids and child ids, leaf dicts with their ids,
    number of nodes). A dict reached twice (a cycle, or a shared subtree) is malformed."""
    internal, leaves = [], []
    seen = set()
    stack = [(root, -1, 0)]  # (node, parent id, 0 left / 1 right)
    children = {}
    n_nodes = 0
    while stack:
        node, parent, side = stack.pop()
        if not isinstance(node, dict):
            raise TypeError(f"a tree node must be a dict; got {type(node).__name__}")
        if id(node) in seen:
            raise ValueError("tree_structure is not a tree: a node is reached twice "
                             "(left_child / right_child form a cycle or share nodes)")
        seen.add(id(node))
        node_id = n_nodes
        n_nodes += 1
        if parent >= 0:
            children.setdefault(parent, [-1, -1])[side] = node_id
        if "split_index" in node:
            internal.append((node_id, node))
            stack.append((node["right_child"], node_id, 1))
            stack.append((node["left_child"], node_id, 0))
        elif "leaf_index" in node or "leaf_value" in node:
            leaves.append((node_id, node))
        else:
            raise KeyError("node has neither split_index nor leaf_value")
    return internal, leaves, children, n_nodes


class LightGBMSource(SourceModel):
    library = "LightGBM"
    n_features_field = "max_feature_idx + 1"
    supports_missing = True
    checks_trees = False  # (in the library: see SourceModel.checks_trees)
    reads_pandas_categoricals = True

    def __init__(self, estimator):
        super().__init__(estimator)
        dump = model_dump(estimator)
        try:
            self._n_features = check_count(as_integer(dump["max_feature_idx"], "max_feature_idx") + 1, "max_feature_idx + 1",
                                           MAX_FEATURES)
            names = dump.get("feature_names")
            if names is not None and len(names) != self._n_features:
                raise ValueError(f"feature_names lists {len(names)} features but max_feature_idx + 1 "
                                 f"= {self._n_features}")
            # LightGBM names the columns of an array Column_0, Column_1, ...: no names
            self._feature_names = None if names is None or all(
                str(n) == f"Column_{i}" for i, n in enumerate(names)) else [str(n) for n in names]
            self._tree_info = dump["tree_info"]
            self._per_iteration = max(1, as_integer(dump.get("num_tree_per_iteration", 1),
                                                          "num_tree_per_iteration"))
            pandas_categorical = dump.get("pandas_categorical")
            if pandas_categorical is not None and not all(isinstance(c, list) for c in pandas_categorical):
                raise ValueError("pandas_categorical must be a list of category lists")
            self._pandas_categorical = pandas_categorical
            self._feature_infos = dump.get("feature_infos") or {}
            self._dump_names = dump.get("feature_names") or []
            objective = str(dump.get("objective") or "").split()
            self._objective = objective[0] if objective else None
            self._n_class = check_count(dump.get("num_class", 1), "num_class", MAX_FEATURES)
        except _MALFORMED as exc:
            raise ValueError(f"malformed LightGBM model dump: {type(exc).__name__}: {exc}") from exc
        self.is_boosting = hasattr(type(estimator), "booster_") \
            and getattr(estimator, "boosting_type", "gbdt") != "rf"

    # what a raw Booster predicts as LGBMClassifier or LGBMRegressor would (booster_values):
    # the probability of class 1, each class's probability, or the value of the objective
    BOOSTER_OBJECTIVES = {"binary": "classification", "multiclass": "classification",
                          "multiclassova": "classification", "regression": "regression",
                          "regression_l1": "regression", "huber": "regression", "fair": "regression",
                          "poisson": "regression", "quantile": "regression", "mape": "regression",
                          "gamma": "regression", "tweedie": "regression"}

    @property
    def booster_objective(self):
        return None if hasattr(type(self.estimator), "booster_") else self._objective

    @property
    def n_booster_classes(self):
        return max(2, self._n_class)

    def booster_values(self, X):
        """The Booster's predictions of X, as the wrappers' predict asks for them."""
        return self.estimator.predict(X)

    @property
    def n_features(self):
        return self._n_features

    @property
    def feature_names(self):
        return self._feature_names

    def column_name(self, name):
        return name.replace(" ", "_")  # as LightGBM's Dataset stores the names

    def _read_trees(self):
        try:
            trees, self._leaf_nodes, zero, other = [], [], [], []
            for i, info in enumerate(self._tree_info):
                tree, leaf_nodes, zero_features, other_features = self._tree(
                    info, i % self._per_iteration)
                trees.append(tree)
                self._leaf_nodes.append(leaf_nodes)
                zero.append(zero_features)
                other.append(other_features)
        except _MALFORMED as exc:
            raise ValueError(f"malformed LightGBM model dump: {type(exc).__name__}: {exc}") from exc
        # features whose numeric splits read zero as missing (missing_type Zero)
        self._zero_missing = np.zeros(self._n_features, dtype=bool)
        self._zero_missing[np.concatenate(zero or [np.zeros(0, np.int64)])] = True
        if np.any(self._zero_missing[np.concatenate(other or [np.zeros(0, np.int64)])]):
            raise ValueError("malformed LightGBM model dump: a feature mixes missing_type 'Zero' "
                             "with other missing types")
        return trees

    def _tree(self, info, output):
        internal, leaves, children, n = _flatten(info["tree_structure"])
        n_leaves = len(leaves)
        if "num_leaves" in info and check_count(info["num_leaves"], "num_leaves") != n_leaves:
            raise ValueError(f"the tree has {n_leaves} leaves but num_leaves = {info['num_leaves']}")
        split_index = np.array([check_count(node["split_index"], "split_index") for _, node in internal],
                               dtype=np.int64)
        if np.any(split_index >= max(n_leaves - 1, 0)) or np.unique(split_index).size != split_index.size:
            raise ValueError(f"split_index values must be 0 .. {n_leaves - 2}, once each "
                             f"({n_leaves} leaves)")
        ids = np.array([i for i, _ in internal], dtype=np.int64)
        nodes = [node for _, node in internal]
        left = np.full(n, -1, dtype=np.int64)
        right = np.full(n, -1, dtype=np.int64)
        if ids.size:
            pairs = np.array([children[i] for i in ids], dtype=np.int64)
            left[ids], right[ids] = pairs[:, 0], pairs[:, 1]
        feature = np.zeros(n, dtype=np.int64)
        feature[ids] = [as_integer(node["split_feature"], "split_feature") for node in nodes]
        decision = np.array([node["decision_type"] for node in nodes], dtype=object)
        if not np.all((decision == "<=") | (decision == "==")):
            raise ValueError("decision_type must be '<=' or '=='")
        cat = decision == "=="
        threshold = np.zeros(n)
        threshold[ids] = [0.0 if c else float(node["threshold"]) for node, c in zip(nodes, cat)]
        sets = [_category_set(node["threshold"]) for node, c in zip(nodes, cat) if c]
        missing_type = np.array([node["missing_type"] for node in nodes], dtype=object)
        if not np.all(np.isin(missing_type, ["None", "Zero", "NaN"])):
            raise ValueError("missing_type must be 'None', 'Zero' or 'NaN'")
        default_left = np.array([bool(node["default_left"]) for node in nodes], dtype=bool)
        missing_right = np.zeros(n, dtype=bool)
        missing_right[ids] = np.where(cat, True, np.where(missing_type == "None", 0.0 > threshold[ids],
                                                          ~default_left))
        kind = np.zeros(n, dtype=np.uint8)
        kind[ids] = np.where(cat, NOT_IN_SET, NUMERIC)
        sizes = np.zeros(n, dtype=np.int64)
        sizes[ids[cat]] = [len(c) for c in sets]
        value = np.full(n, np.nan)
        count = np.zeros(n, dtype=np.int64)
        value[ids] = [float(node.get("internal_value", np.nan)) for node in nodes]
        gain = np.zeros(n)
        gain[ids] = [float(node.get("split_gain", np.nan)) for node in nodes]
        count[ids] = [as_integer(node.get("internal_count", 0), "internal_count") for node in nodes]
        leaf_ids = np.array([i for i, _ in leaves], dtype=np.int64)
        value[leaf_ids] = [float(node["leaf_value"]) for _, node in leaves]
        count[leaf_ids] = [as_integer(node.get("leaf_count", 0), "leaf_count") for _, node in leaves]
        # a tree of a single leaf has no leaf_index
        leaf_index = np.array([as_integer(node.get("leaf_index", 0), "leaf_index") for _, node in leaves],
                              dtype=np.int64)
        if np.any(leaf_index < 0) or np.any(leaf_index >= len(leaves)) \
                or np.unique(leaf_index).size != leaf_index.size:
            raise ValueError(f"leaf_index values must be 0 .. {len(leaves) - 1}, once each")
        leaf_nodes = np.zeros(len(leaves), dtype=np.int64)
        leaf_nodes[leaf_index] = leaf_ids
        tree = Tree.build(left, right, feature, threshold, missing_right, value, kind=kind,
                          set_sizes=sizes,
                          set_codes=np.array([c for codes in sets for c in codes], dtype=np.int64),
                          n_node_samples=count, output=output, n_features=self._n_features,
                          fields=("left_child", "right_child", "split_feature"), gain=gain)
        numeric = ids[~cat]
        zero = missing_type[~cat] == "Zero"
        return tree, leaf_nodes, feature[numeric[zero]], feature[numeric[~zero]]

    def categorical_columns(self):
        """The features whose feature_infos list category values, with the categories of
        pandas_categorical (one list per categorical feature, in order) where the model
        was trained on a DataFrame."""
        infos, cats = self._feature_infos, self._pandas_categorical or []
        flagged = [j for j, n in enumerate(self._dump_names)
                   if isinstance(infos.get(n), dict) and infos[n].get("values")]
        return {j: (list(cats[i]) if i < len(cats) else None) for i, j in enumerate(flagged)}

    @property
    def encoding(self):
        self.trees()  # zero-as-missing features come from the trees
        return InputEncoding(self._n_features, zero_missing=self._zero_missing,
                             pandas_categorical=self._pandas_categorical, unknown="missing",
                             lightgbm_reads=True)

    @property
    def has_leaves(self):
        return hasattr(self.estimator, "booster_") and hasattr(self.estimator, "predict")

    def leaves(self, X):
        if not self.has_leaves:
            return super().leaves(X)
        self.trees()
        index = np.asarray(self.estimator.predict(X, pred_leaf=True)).reshape(np.shape(X)[0], -1)
        if index.shape[1] != len(self._leaf_nodes):
            raise ValueError("pred_leaf and the model dump disagree on the number of trees")
        out = np.empty(index.shape, dtype=np.int64)
        for t, leaf_nodes in enumerate(self._leaf_nodes):  # over trees
            if index.size and (index[:, t].min() < 0 or index[:, t].max() >= leaf_nodes.size):
                raise ValueError(f"pred_leaf gives a leaf index outside tree {t}")
            out[:, t] = leaf_nodes[index[:, t]]
        return out
