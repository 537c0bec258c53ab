"""What defrag asks of a fitted tree ensemble, whatever library made it.

A source module reads one library's models once and answers through a
``SourceModel``: its trees as flat node arrays (``Tree``), the split table built
from them, the leaf each row reaches in each tree and each leaf's value (for
prototype distances), whether it boosts or bags, how it reads its inputs (an
``InputEncoding``: category codes, zero as missing), whether missing values have a
direction, its task and classes, and its own predictions.

Every node test is stated in the terms of the float64 inputs as the encoding gives
them: a present value goes right at a numeric node when ``x > threshold`` (a library
that compares float32 copies has its thresholds converted, ``float32_threshold``);
at a categorical node when its code is in the node's set (kind IN_SET) or not in it
(NOT_IN_SET); a missing value goes right when ``missing_right``.
"""
import copy
import functools
import json
from dataclasses import dataclass

import numpy as np
from sklearn.base import is_classifier

from ..splits.inputs import InputEncoding
from ..splits.table import IN_SET, NOT_IN_SET, NUMERIC, SplitTable, slices

__all__ = ["MAX_FEATURES", "Tree", "SourceModel", "SplitCollector", "check_count", "as_integer",
           "integer_array", "predicts", "walk_tree", "feature_names_in"]

# Feature or node counts above this in a model file are a malformed model, not a model
# (they would make defrag allocate accordingly before any other check could fail).
MAX_COUNT = 2**31 - 1
# A model's own feature count sizes per-feature arrays before X can be compared with it:
# beyond this it is refused as malformed (16,777,216 features; a model that large is
# read through a split array instead).
MAX_FEATURES = 2**24


def as_integer(value, what):
    """value as an int: an integer, or a number or text with an integral value (a model file
    may write 3 as 3.0 or "3"); ValueError naming what for 1.5, "1.5", NaN, text or None
    (int() would truncate 1.5 to 1 silently)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    try:
        count = int(value)
        exact = count == float(value) if not isinstance(value, (int, np.integer)) else True
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{what} must be an integer; got {value!r}") from exc
    if not exact:
        raise ValueError(f"{what} must be an integer; got {value!r}")
    return count


def integer_array(values, what):
    """A list of integers as an int64 array; ValueError naming what when an entry is not
    an integer (1.5), not finite, beyond int64, or not a number."""
    try:
        arr = np.asarray(values)
        if arr.dtype == object or arr.dtype.kind in "USV":
            arr = arr.astype(np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{what} must be a list of integers") from exc
    if arr.dtype.kind in "biu":
        return arr.astype(np.int64)
    if arr.dtype.kind != "f":
        raise ValueError(f"{what} must be a list of integers; got dtype {arr.dtype}")
    bad = ~np.isfinite(arr) | (np.abs(arr) >= 2.0 ** 62)
    bad[~bad] = arr[~bad] != np.round(arr[~bad])
    if bad.any():
        raise ValueError(f"{what} must hold integers; got {arr[bad].ravel()[0]!r} at index "
                         f"{int(np.flatnonzero(bad.ravel())[0])}")
    return arr.astype(np.int64)


def parsed_json(model, library):
    """A model document given as a dict (taken as is) or JSON text (parsed), else None; a
    ValueError naming the library for text that is not JSON."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (str, bytes, bytearray)):
        try:
            return json.loads(model)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed {library} model JSON: {exc}") from exc
    return None


def check_count(value, what, limit=MAX_COUNT):
    """value as an int in [0, limit]; ValueError naming what otherwise."""
    count = as_integer(value, what)
    if count < 0 or count > limit:
        raise ValueError(f"{what} must lie in [0, {limit}]; got {count}")
    return count


@dataclass
class Tree:
    """One tree as flat node arrays (node 0 the root).

    children_left, children_right : int64 (n_nodes,), -1 at leaves
    feature : int64 (n_nodes,), the input column a node tests (-1 at leaves)
    threshold : float64 (n_nodes,), a present x goes right when x > threshold
        (numeric nodes; 0 elsewhere)
    kind : uint8 (n_nodes,), NUMERIC, IN_SET or NOT_IN_SET (0 at leaves)
    cat_ptr, cat_codes : int64 (n_nodes + 1,) and int64 arrays: node j's category set
        is ``cat_codes[cat_ptr[j]:cat_ptr[j + 1]]`` (empty for numeric nodes and leaves)
    missing_right : uint8 (n_nodes,), a missing value goes right
    value : float64 (n_nodes, n_values), what the library stores per node: for
        boosting the tree's contribution to the raw score (learning rate included;
        NaN at internal nodes where the library keeps none), for forests the node's
        class fractions or mean
    n_node_samples : int64 (n_nodes,) or None, training samples per node where the
        library records them
    gain : float64 (n_nodes,), how much a node's split improved the training objective
        (sample-weighted impurity decrease, or the library's split gain; 0 at leaves,
        NaN where the library records none)
    output : int, the output (class) whose score the tree adds to (0 for a single output)
    """

    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    kind: np.ndarray
    cat_ptr: np.ndarray
    cat_codes: np.ndarray
    missing_right: np.ndarray
    value: np.ndarray
    n_node_samples: np.ndarray = None
    output: int = 0
    gain: np.ndarray = None

    @classmethod
    def build(cls, children_left, children_right, feature, threshold, missing_right, value,
              kind=None, set_sizes=None, set_codes=None, n_node_samples=None, output=0,
              n_features=None, fields=("children_left", "children_right", "feature"), gain=None):
        """A checked Tree: children within the tree, every node reached once from the
        root (no cycle, no shared child), features in [0, n_features). fields: the
        library's names of the children and feature arrays, for the messages."""
        left_name, right_name, _ = fields
        left = np.asarray(children_left, dtype=np.int64)
        n = left.size
        right = np.asarray(children_right, dtype=np.int64)
        if n == 0 or right.shape != (n,):
            raise ValueError(f"a tree needs one {left_name} and one {right_name} entry per node")
        internal, feature = _checked_trees(np.array([n]), left, right, feature, n_features, fields)
        kind = np.zeros(n, dtype=np.uint8) if kind is None else np.asarray(kind, dtype=np.uint8)
        sizes = np.zeros(n, dtype=np.int64) if set_sizes is None else np.asarray(set_sizes, dtype=np.int64)
        cat_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes, out=cat_ptr[1:])
        codes = np.zeros(0, dtype=np.int64) if set_codes is None else np.asarray(set_codes, dtype=np.int64)
        if codes.size != cat_ptr[-1]:
            raise ValueError("category set sizes do not match the category codes")
        value = np.asarray(value, dtype=np.float64)
        value = value.reshape(n, -1) if value.size else np.zeros((n, 1))
        return cls(left, right, feature,
                   np.where(internal & (kind == NUMERIC), np.asarray(threshold, dtype=np.float64), 0.0),
                   kind, cat_ptr, codes, np.asarray(missing_right, dtype=np.uint8) & internal,
                   value, None if n_node_samples is None else np.asarray(n_node_samples, dtype=np.int64),
                   int(output),
                   np.full(n, np.nan) if gain is None else np.where(internal, np.asarray(gain, dtype=np.float64), 0.0))

    @classmethod
    def build_many(cls, sizes, children_left, children_right, feature, threshold, missing_right, values,
                   n_node_samples=None, outputs=None, gain=None, n_features=None):
        """Checked numeric Trees (no category sets) of many trees at once, their node arrays
        given end to end (tree t: the sizes[t] nodes after those of trees 0..t-1; children
        numbered within each tree) and values a list of per-tree arrays: build's checks,
        vectorised over the trees (a forest's 100 trees in one pass, not 100)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        left = np.asarray(children_left, dtype=np.int64)
        right = np.asarray(children_right, dtype=np.int64)
        N = int(sizes.sum())
        if sizes.size == 0:
            return []
        if np.any(sizes < 1) or left.shape != (N,) or right.shape != (N,):
            raise ValueError("a tree needs one children_left and one children_right entry per node")
        per_node = dict(feature=feature, threshold=threshold, missing_right=missing_right, n_node_samples=n_node_samples,
                        gain=gain)
        for name, a in per_node.items():
            if a is not None and np.shape(a) != (N,):
                raise ValueError(f"{name} needs one entry per node ({N}), not shape {np.shape(a)}")
        for name, a in (("values", values), ("outputs", outputs)):
            if a is not None and len(a) != sizes.size:
                raise ValueError(f"{name} needs one entry per tree ({sizes.size}), not {len(a)}")
        internal, feature = _checked_trees(sizes, left, right, feature, n_features)
        starts = np.zeros(sizes.size, dtype=np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        threshold = np.where(internal, np.asarray(threshold, dtype=np.float64), 0.0)
        missing = np.asarray(missing_right, dtype=np.uint8) & internal
        gain = np.full(N, np.nan) if gain is None else np.where(internal, np.asarray(gain, dtype=np.float64), 0.0)
        counts = None if n_node_samples is None else np.asarray(n_node_samples, dtype=np.int64)
        kind = np.zeros(N, dtype=np.uint8)
        no_codes = np.zeros(0, dtype=np.int64)
        outputs = [0] * sizes.size if outputs is None else outputs
        ends = starts + sizes
        trees = []
        for t in range(sizes.size):  # over trees, not nodes: views of the checked arrays
            a, b = int(starts[t]), int(ends[t])
            value = np.asarray(values[t], dtype=np.float64)
            value = value.reshape(b - a, -1) if value.size else np.zeros((b - a, 1))
            trees.append(cls(left[a:b], right[a:b], feature[a:b], threshold[a:b], kind[a:b],
                             np.zeros(b - a + 1, dtype=np.int64), no_codes, missing[a:b], value,
                             None if counts is None else counts[a:b], int(outputs[t]), gain[a:b]))
        return trees

    @property
    def n_nodes(self):
        return int(self.children_left.size)

    @property
    def is_leaf(self):
        return self.children_left < 0


def _checked_trees(sizes, left, right, feature, n_features=None,
                   fields=("children_left", "children_right", "feature")):
    """(internal, feature with -1 at leaves) of trees whose node arrays lie end to end
    (tree t: sizes[t] nodes, children numbered within it, -1 at leaves), once they are
    trees: children within their tree, every node but a root a child exactly once and
    reached from its root, features in [0, n_features). fields: the library's names of
    the children and feature arrays, for the messages."""
    left_name, right_name, feature_name = fields
    starts = np.zeros(sizes.size, dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    tree_size = np.repeat(sizes, sizes)
    for name, child in ((left_name, left), (right_name, right)):
        bad = (child < -1) | (child >= tree_size)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} holds node {int(child[at])}, outside [-1, {int(tree_size[at])}) "
                             f"({int(tree_size[at])} nodes)")
    internal = left >= 0
    if np.any(internal != (right >= 0)):
        raise ValueError(f"{left_name} and {right_name} disagree on which nodes are leaves")
    offset = np.repeat(starts, sizes)
    left_at, right_at = np.where(internal, left + offset, -1), np.where(internal, right + offset, -1)
    root = np.zeros(left.size, dtype=bool)
    root[starts] = True
    # every node but a root is a child exactly once, each tree has nodes - 1 children, and
    # every node is reached from its root (no cycle apart from it). Where every child comes
    # after its parent (scikit-learn's, XGBoost's and LightGBM's numbering) the last holds
    # of itself: a node's parent, its parent's parent, ... have ever smaller ids and end at
    # the one node of its tree that is no child, the root; else each level is walked.
    if (np.any(np.bincount(np.concatenate([left_at[internal], right_at[internal]]), minlength=left.size) != ~root)
            or np.any(2 * np.add.reduceat(internal.astype(np.int64), starts) != sizes - 1)
            or not (_children_after_parents(left_at, right_at, internal)
                    or _all_reached(left_at, right_at, starts))):
        raise ValueError(f"{left_name} / {right_name} do not form a tree: every node must be "
                         "reached exactly once from the root (a cycle, or a shared node)")
    feature = np.where(internal, np.asarray(feature, dtype=np.int64), -1)
    if n_features is not None and np.any(internal & ((feature < 0) | (feature >= n_features))):
        bad = int(feature[internal & ((feature < 0) | (feature >= n_features))][0])
        raise ValueError(f"{feature_name} holds feature {bad}, outside [0, {n_features})")
    return internal, feature


def check_nodes(trees, n_features, n_features_field="n_features_in_"):
    """ValueError unless every split of the trees tests a feature in [0, n_features) and,
    on a numeric split, compares with a threshold that is a number (not NaN, not -inf; a
    split at +inf sends only missing values right): what a library's own predict would
    otherwise read outside X or compare without meaning."""
    internal = [t.children_left >= 0 for t in trees]
    feature = np.concatenate([t.feature[i] for t, i in zip(trees, internal)]) if trees else np.zeros(0, np.int64)
    if n_features is not None and feature.size and (feature.min() < 0 or feature.max() >= n_features):
        bad = int(feature[(feature < 0) | (feature >= n_features)][0])
        raise ValueError(f"a split of the model tests feature {bad}, outside the model's {n_features} "
                         f"features ({n_features_field}): the model is malformed")
    if not trees:
        return
    # the numeric splits of every tree at once
    threshold = np.concatenate([t.threshold[i] for t, i in zip(trees, internal)])
    numeric = np.concatenate([t.kind[i] for t, i in zip(trees, internal)]) == NUMERIC
    bad = numeric & (np.isnan(threshold) | (threshold == -np.inf))
    if bad.any():
        raise ValueError(f"a split of the model on feature {int(feature[bad][0])} has threshold "
                         f"{float(threshold[bad][0])}: thresholds must be numbers (or +inf); "
                         "the model is malformed")


def _children_after_parents(left, right, internal):
    """Whether every internal node's children (node ids) come after it."""
    at = np.flatnonzero(internal)
    return bool(np.all(left[at] > at) and np.all(right[at] > at))


def _all_reached(left, right, roots):
    """Whether every node is reached from the roots (children: node ids, -1 at leaves),
    where each node but a root is some node's child exactly once: one step per level, each
    node visited once (a cycle apart from the roots is never reached)."""
    seen = np.zeros(left.size, dtype=bool)
    level = np.asarray(roots, dtype=np.int64)
    while level.size:  # over levels, not nodes
        seen[level] = True
        level = np.concatenate([left[level], right[level]])
        level = level[level >= 0]
        level = level[~seen[level]]
    return bool(seen.all())


def walk_tree(tree, X):
    """Node id of the leaf each row of X (float64 as the encoding gives it) reaches: one
    vectorised step per tree level, over the rows still at internal nodes."""
    X = np.asarray(X, dtype=np.float64)
    node = np.zeros(X.shape[0], dtype=np.int64)
    rows = np.flatnonzero(~tree.is_leaf[node])
    while rows.size:
        at = node[rows]
        x = X[rows, tree.feature[at]]
        right = x > tree.threshold[at]
        for j in np.unique(at[tree.kind[at] != NUMERIC]):  # over categorical nodes, not rows
            here = at == j
            codes = tree.cat_codes[tree.cat_ptr[j]:tree.cat_ptr[j + 1]]
            right[here] = np.isin(x[here], codes) ^ (tree.kind[j] == NOT_IN_SET)
        right = np.where(np.isnan(x), tree.missing_right[at].astype(bool), right)
        node[rows] = np.where(right, tree.children_right[at], tree.children_left[at])
        rows = rows[~tree.is_leaf[node[rows]]]
    return node


class SplitCollector:
    """Splits gathered tree by tree, then made into one SplitTable."""

    def __init__(self):
        self.parts = []
        self.gains = []

    def add(self, feature, threshold, missing_right, kind=None, set_sizes=None, set_codes=None,
            gain=None):
        n = len(feature)
        self.gains.append(np.full(n, np.nan) if gain is None else np.asarray(gain, dtype=np.float64))
        self.parts.append((
            np.asarray(feature, dtype=np.int64), np.asarray(threshold, dtype=np.float64),
            np.asarray(missing_right, dtype=np.uint8),
            np.zeros(n, dtype=np.uint8) if kind is None else np.asarray(kind, dtype=np.uint8),
            np.zeros(n, dtype=np.int64) if set_sizes is None else np.asarray(set_sizes, dtype=np.int64),
            np.zeros(0, dtype=np.int64) if set_codes is None else np.asarray(set_codes, dtype=np.int64),
        ))

    def add_tree(self, tree):
        """The internal nodes of a Tree, in node order."""
        internal = np.flatnonzero(~tree.is_leaf)
        sizes = np.diff(tree.cat_ptr)[internal]
        codes = tree.cat_codes if tree.cat_codes.size == 0 else \
            slices(tree.cat_codes, tree.cat_ptr[internal], sizes)[1]
        self.add(tree.feature[internal], tree.threshold[internal], tree.missing_right[internal],
                 tree.kind[internal], sizes, codes, tree.gain[internal])

    def add_trees(self, trees):
        """The internal nodes of Trees, tree by tree in node order: in one pass over all
        their nodes where no tree has category sets."""
        if any(tree.cat_codes.size for tree in trees):
            for tree in trees:
                self.add_tree(tree)
            return
        if not trees:
            return

        def joined(name):
            return np.concatenate([getattr(tree, name) for tree in trees])

        internal = joined("children_left") >= 0
        self.add(joined("feature")[internal], joined("threshold")[internal], joined("missing_right")[internal],
                 joined("kind")[internal], None, None, joined("gain")[internal])

    def table(self, n_features, keep_duplicates=False, **kwargs):
        empty = (np.int64, np.float64, np.uint8, np.uint8, np.int64, np.int64)
        feature, threshold, missing_right, kind, sizes, codes = (
            np.concatenate([p[i] for p in self.parts]) if self.parts else np.zeros(0, dtype=t)
            for i, t in enumerate(empty))
        cat_ptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=cat_ptr[1:])
        gain = np.concatenate(self.gains) if self.gains else np.zeros(0)
        return SplitTable(feature, threshold, n_features, keep_duplicates=keep_duplicates,
                          missing_right=missing_right, kind=kind, cat_ptr=cat_ptr, cat_codes=codes,
                          gain=None if np.all(np.isnan(gain)) else gain, **kwargs)


def feature_names_in(estimator):
    """scikit-learn's ``feature_names_in_`` of a model fitted on a DataFrame, as a list of
    str, or None."""
    names = getattr(estimator, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def predicts(estimator):
    """The model has scikit-learn's predict (a raw Booster or a split array has not)."""
    return hasattr(estimator, "predict") and hasattr(estimator, "get_params")


class SourceModel:
    """One fitted model of one library, as the rest of defrag sees it.

    A source module subclasses this and provides ``n_features``, ``trees()``,
    ``encoding``, ``supports_missing``, ``is_boosting`` and, where the model can say,
    ``leaves(X)``; the rest follows. Methods a model cannot answer raise TypeError.
    """

    #: the library, for messages
    library = "an ensemble"
    #: where the model keeps its feature count, for messages
    n_features_field = "n_features_in_"
    #: the model routes missing values (NaN) at every split
    supports_missing = False
    #: the model boosts (trees weighted by their outputs' spread in prototype distances)
    is_boosting = False

    def __init__(self, estimator):
        self.estimator = estimator

    # -- what a source provides
    @property
    def n_features(self):
        raise NotImplementedError

    def _read_trees(self):
        raise TypeError(f"{self.describe()} has no trees defrag can read")

    @property
    def encoding(self):
        """How the model reads its inputs."""
        return InputEncoding(self.n_features)

    #: the model's own predict reads a categorical feature whose categories it stores as a
    #: pandas categorical of those categories (XGBoost, LightGBM), not as labels
    reads_pandas_categoricals = False

    def categorical_columns(self):
        """{feature index: the categories the model stores (a list), or None where it
        reads category codes} of the features it splits by category: what a data file's
        columns must be coded as (the command line's coding)."""
        enc = self.encoding
        return {int(j): (None if enc.categories[j] is None else list(enc.categories[j]))
                for j in np.flatnonzero(enc.categorical)}

    @property
    def feature_names(self):
        """The names of the model's input columns, in its order (a list of str), or None
        when the model stores none (fitted on an array): a DataFrame's columns are matched
        to them by name."""
        return None

    def column_name(self, name):
        """A DataFrame column's name as the model stores it (LightGBM writes spaces as
        underscores): the name matched to ``feature_names`` when no column has the very name."""
        return name

    def leaves(self, X):
        """Node id (in ``trees()``) of the leaf each row reaches in each tree, int32
        (n_samples, n_trees)."""
        raise TypeError(f"{self.describe()} has no apply(); a tree ensemble is needed")

    @property
    def has_leaves(self):
        return type(self).leaves is not SourceModel.leaves

    # -- derived
    def describe(self):
        return type(self.estimator).__name__

    @functools.cached_property
    def _trees(self):
        trees = self._read_trees()
        check_nodes(trees, self.n_features, self.n_features_field)
        return trees

    def trees(self):
        """The model's trees (list of Tree), read once and checked: children within each
        tree, every node reached once from its root (Tree.build), and each split on a
        feature of the model with a threshold that is a number (check_nodes)."""
        return self._trees

    #: the model's own predict and apply walk node arrays held in Python objects, which
    #: anyone can change in place (scikit-learn's tree_, HistGradientBoosting's
    #: predictors): ``checked`` reads and checks them first. XGBoost, LightGBM and
    #: CatBoost keep their trees inside the library, which parses a model when it loads
    #: it (and the CLI checks their files first); reading them means dumping the model,
    #: about as long as a proxy tree's fit (300 XGBoost trees: 0.9 s), so they are read
    #: where their trees are needed (DefragModel, the baselines), not to be checked.
    checks_trees = True

    def checked(self):
        """This source, its trees read and checked (``trees()``) before its library's own
        predict or apply sees them (``checks_trees``): scikit-learn's tree code reads the
        node arrays as they are, so a forest whose tree_ was tampered with (a child index
        of 10**6) crashed the process, a cycle made apply loop forever, and a feature
        index of 1000 read outside X. Every estimator that takes a model calls this
        (sources.checked_source, sources.checked_model); the trees are read once per
        source."""
        if self.checks_trees:
            self.trees()
        return self

    def tree_bytes(self):
        """Bytes of the node arrays of the trees as read (held while the source is)."""
        return sum(a.nbytes for tree in self.trees() for a in vars(tree).values()
                   if isinstance(a, np.ndarray))

    def split_table(self, keep_duplicates=False):
        """The SplitTable of every internal node of every tree."""
        out = SplitCollector()
        out.add_trees(self.trees())
        return out.table(self.n_features, keep_duplicates, supports_missing=self.supports_missing,
                         encoding=self.encoding)

    def leaf_values(self):
        """Per tree, the value of each node (``Tree.value[:, 0]``), indexed by the node ids
        ``leaves`` gives."""
        return [tree.value[:, 0] for tree in self.trees()]

    # -- a raw booster's predictions. A library's Booster has no scikit-learn predict; its
    # source reads the task off the booster's objective (booster_objective) and gives the
    # predictions its scikit-learn wrapper would: the booster's own outputs (booster_values)
    # as values, or as class probabilities whose most probable class is the label. Classes
    # are 0 .. n - 1, the labels a booster was trained on.

    #: the objectives whose outputs the source reads, {name: task}
    BOOSTER_OBJECTIVES = {}

    @property
    def booster_objective(self):
        """A raw booster's objective (its name as the library writes it); None for a model
        with scikit-learn's predict, or one with no objective."""
        return None

    def booster_values(self, X):
        """A raw booster's own predictions of X (the outputs of its objective)."""
        raise TypeError(f"{self.describe()} has no predictions defrag reads")

    @property
    def n_booster_classes(self):
        """A raw booster's classes (classification objectives)."""
        return 2

    @property
    def _raw_booster(self):
        return not predicts(self.estimator) and self.booster_objective is not None

    @property
    def no_predictions(self):
        """Why the model gives no predictions defrag reads (fit it to y instead), or None
        when it gives them."""
        if self.has_predict:
            return None
        objective = self.booster_objective
        if objective is None:
            return "y is required when the model has no scikit-learn predict"
        readable = ", ".join(sorted(self.BOOSTER_OBJECTIVES))
        return (f"y is required with this {self.library} Booster: its objective {objective!r} is not one "
                f"whose predictions defrag reads ({readable}); pass y, or the model's scikit-learn "
                "wrapper")

    @property
    def has_predict(self):
        """The model has scikit-learn's predict, or is a raw booster whose objective's
        predictions defrag reads."""
        return predicts(self.estimator) or self.booster_objective in self.BOOSTER_OBJECTIVES

    @property
    def task(self):
        """"classification", "regression", or None when the model does not say."""
        if not self.has_predict:
            return None
        if self._raw_booster:
            return self.BOOSTER_OBJECTIVES[self.booster_objective]
        return "classification" if is_classifier(self.estimator) else "regression"

    @property
    def classes(self):
        if self._raw_booster:
            return np.arange(self.n_booster_classes) if self.task == "classification" else None
        classes = getattr(self.estimator, "classes_", None)
        return np.asarray(classes) if classes is not None and np.ndim(classes) == 1 else None

    def _booster_proba(self, X):
        """A raw booster's class probabilities, as its scikit-learn classifier gives them:
        a binary objective's p as the columns (1 - p, p), in the booster's dtype."""
        p = np.asarray(self.booster_values(X))
        n_classes = self.n_booster_classes
        if n_classes == 2 and (p.ndim == 1 or p.shape[1] == 1):
            p = p.reshape(-1)
            return np.vstack((1.0 - p, p)).T
        return p.reshape(p.shape[0], n_classes)

    def predict(self, X):
        """The model's predictions of X. A scikit-learn ensemble with n_jobs (other than 1,
        None included) predicts on one thread (a shallow copy with n_jobs=1; the model
        itself is left as it is): its joblib
        threads sum the trees in the order they finish, so that the last bits of a forest's
        predictions, and the rules fitted to them, could change from run to run; they run
        outside the fit's thread budget (utils/threads.py); and on a fit's few thousand
        search rows their start and polling cost more than the trees (a forest of 100 trees
        with n_jobs=-1 on 382 rows: 52 ms of a 123 ms fit)."""
        if self._raw_booster:
            if self.task == "classification":
                return self.classes[np.argmax(self._booster_proba(X), axis=1)]
            return np.asarray(self.booster_values(X))
        return predict_on_one_thread(self.estimator, X)

    @property
    def has_proba(self):
        """The model gives class probabilities (columns in ``classes``' order)."""
        if self._raw_booster:
            return self.task == "classification"
        return self.has_predict and self.task == "classification" and hasattr(self.estimator, "predict_proba") \
            and self.classes is not None

    def predict_proba(self, X):
        """The model's class probabilities of X (on one thread, as ``predict``)."""
        if self._raw_booster:
            return self._booster_proba(X)
        return predict_on_one_thread(self.estimator, X, "predict_proba")


def predict_on_one_thread(estimator, X, method="predict"):
    """estimator.predict(X); a scikit-learn model with n_jobs other than 1 (None included:
    scikit-learn reads it as the active joblib.parallel_config's) predicts through a
    shallow copy with n_jobs=1, the model itself left as it is (SourceModel.predict)."""
    if type(estimator).__module__.startswith("sklearn.") and hasattr(estimator, "n_jobs") and estimator.n_jobs != 1:
        estimator = copy.copy(estimator)
        estimator.n_jobs = 1
    return getattr(estimator, method)(X)


__all__ += ["IN_SET", "NOT_IN_SET", "NUMERIC"]
