"""Born-Again Trees (Breiman & Shang 1996): one tree grown to mimic the ensemble.

The tree is grown level by level. At a node that may split, ``n_generated`` new points
are made by *smearing* the node's training points (Breiman & Shang's generator): a
training point of the node is drawn, and each of its coordinates is replaced, with
probability ``p_alt``, by that coordinate of another training point of the node drawn at
random. A node is a box (a product of per-feature sets), so every smeared point lies in
the node without rejection, and its coordinates keep the node's empirical marginals and,
for the coordinates not replaced, their dependence (sampling each feature from its
marginal, p_alt = 1, would lose it). The node's training points and the new ones, all
labelled by the ensemble's predictions, choose the split (the best CART split, Gini or
squared error, found by a compiled scikit-learn stump); a leaf predicts the labels of
its training points and of the points generated at its parent that fell in it. The
paper's scripts (defragTrees, paper/baselines/BATree.py) use the same generator with
p_alt = 0.5, 100 points per node and nodes of at most 10 training points left unsplit.

Each node draws from its own random stream (keyed by its position in the tree), so the
tree grown to depth d is the tree grown deeper, cut at d: cross-validation grows one
tree per fold to the largest depth of the grid and scores every depth from it.
"""
from numbers import Integral

import numpy as np
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ..evaluation import prediction_error
from ..sources.base import Tree, walk_tree
from ..sources.sklearn_trees import read_sklearn_trees
from ..utils.memory import born_again_estimate, check_memory_of
from ..utils.validation import check_positive_int, is_number
from ._base import BaselineModel
from ._paths import TreeRulesMixin

DEPTH_GRID = (2, 3, 4, 6, 8, 10)


def take_columns(X, rows):
    """The points whose coordinate d is X[rows[:, d], d], in X's own form (a DataFrame
    keeps its column types, categorical ones included), for the ensemble's predict."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        import pandas as pd

        return pd.DataFrame({c: X.iloc[:, d].take(rows[:, d]).reset_index(drop=True)
                             for d, c in enumerate(X.columns)})
    X = np.asarray(X)
    return X[rows, np.arange(X.shape[1])]


class _Grower:
    """Grows one born-again tree on the training rows ``rows`` of a fit."""

    def __init__(self, model, fitting, labels, entropy):
        self.model, self.fitting, self.labels, self.entropy = model, fitting, labels, entropy
        self.n_classes = fitting.n_classes

    def _value(self, labels):
        if self.n_classes:
            counts = np.bincount(labels.astype(np.int64), minlength=self.n_classes).astype(np.float64)
            return counts / max(counts.sum(), 1.0)
        return np.array([labels.mean() if labels.size else 0.0])

    def _smear(self, rows, key):
        """Row indices (n_generated, n_features) of the smeared points of a node."""
        rng = np.random.default_rng(np.random.SeedSequence(self.entropy, spawn_key=(key,)))
        g, d = self.model.n_generated, self.fitting.Xf.shape[1]
        base = rows[rng.integers(rows.size, size=g)]
        donors = rows[rng.integers(rows.size, size=(g, d))]
        return np.where(rng.random((g, d)) < self.model.p_alt, donors, base[:, None])

    def _stump(self, Xp, yp):
        """(feature, float64 threshold, missing_right) of the best split, or None."""
        Stump = DecisionTreeClassifier if self.n_classes else DecisionTreeRegressor
        dt = Stump(max_depth=1, random_state=0).fit(Xp, yp)
        if dt.tree_.node_count < 3:
            return None
        t = read_sklearn_trees([dt], [dt.tree_.value[:, 0, :]], [0])[0]
        return int(t.feature[0]), float(t.threshold[0]), bool(t.missing_right[0])

    def grow(self, rows, max_depth):
        """Node arrays of the tree grown on rows: left, right, feature, threshold,
        missing_right, value, depth, n_samples."""
        Xf, X = self.fitting.Xf, self.fitting.X
        nodes = []  # per node: [left, right, feature, threshold, missing_right, value, depth, n]
        level = [(rows, np.zeros((0, Xf.shape[1])), np.zeros(0), 1, None)]  # rows, inherited X, labels, key, parent
        depth = 0
        while level:
            split_at = [i for i, (r, _, _, _, _) in enumerate(level)
                        if depth < max_depth and r.size > self.model.min_samples_split
                        and np.unique(self.labels[r]).size > 1]
            gen = {i: self._smear(level[i][0], level[i][3]) for i in split_at}
            if gen:
                idx = np.concatenate([gen[i] for i in split_at])
                labels = self.fitting.code(np.asarray(self.fitting.source.predict(take_columns(X, idx))))
                coded = Xf[idx, np.arange(Xf.shape[1])]
                ends = np.cumsum([gen[i].shape[0] for i in split_at])[:-1]
                gen = {i: (c, lab) for i, c, lab in zip(split_at, np.split(coded, ends), np.split(labels, ends))}
            next_level = []
            for i, (r, inh_X, inh_y, key, parent) in enumerate(level):
                me = len(nodes)
                if parent is not None:
                    nodes[parent[0]][1 if parent[1] else 0] = me
                value = self._value(np.concatenate([self.labels[r], inh_y]))
                nodes.append([-1, -1, -1, 0.0, False, value, depth, r.size])
                if i not in gen:
                    continue
                gX, gy = gen[i]
                pool_X = np.vstack([Xf[r], gX])
                pool_y = np.concatenate([self.labels[r], gy])
                split = self._stump(pool_X, pool_y)
                if split is None:
                    continue
                d, t, miss_right = split
                go = np.where(np.isnan(pool_X[:, d]), miss_right, pool_X[:, d] > t)
                n_r = r.size
                if go[:n_r].all() or not go[:n_r].any():
                    continue  # the split separates generated points only: a leaf
                nodes[me][2:5] = [d, t, miss_right]
                for right in (False, True):
                    side = go == right
                    next_level.append((r[side[:n_r]], gX[side[n_r:]], gy[side[n_r:]],
                                       2 * key + int(right), (me, right)))
            level = next_level
            depth += 1
        return nodes

    def tree(self, rows, max_depth):
        nodes = self.grow(rows, max_depth)
        cols = list(zip(*nodes))
        tree = Tree.build(cols[0], cols[1], cols[2], cols[3], np.array(cols[4]), np.vstack(cols[5]),
                          n_node_samples=np.array(cols[7]))
        return tree, np.array(cols[6])


def _cut(tree, node_depth, depth):
    """The tree cut at depth (nodes at that depth become leaves)."""
    left = np.where(node_depth >= depth, -1, tree.children_left)
    right = np.where(node_depth >= depth, -1, tree.children_right)
    keep = np.zeros(left.size, dtype=bool)
    keep[0] = True
    for j in range(left.size):  # nodes are numbered level by level: parents come first
        if keep[j] and left[j] >= 0:
            keep[[left[j], right[j]]] = True
    new = np.cumsum(keep) - 1
    remap = lambda c: np.where(c[keep] >= 0, new[np.maximum(c[keep], 0)], -1)  # noqa: E731
    return Tree.build(remap(left), remap(right), tree.feature[keep], tree.threshold[keep],
                      tree.missing_right[keep], tree.value[keep],
                      n_node_samples=tree.n_node_samples[keep])


class BornAgainTree(TreeRulesMixin, BaselineModel):
    """One tree that mimics the ensemble (Breiman & Shang 1996), a rule per leaf.

    Its depth is chosen by cross-validation; the rules never overlap.

    Parameters
    ----------
    estimator : tree ensemble with scikit-learn's predict
        Any model DefragModel reads, fitted (explained as it is) or not (cloned and fitted
        on ``fit(X, y)``); it labels the training and the generated points.
    max_depth : "cv" or int, default="cv"
        "cv": chosen from ``depth_grid`` by ``cv``-fold cross-validation of the error
        against y (as Hara & Hayashi, sec. 7, choose it).
    depth_grid : sequence of int, default=(2, 3, 4, 6, 8, 10)
        The depths ``max_depth="cv"`` chooses among.
    cv : int, default=5
        Folds of that cross-validation.
    n_generated : int, default=100
        Points generated at every node that may split (see the module docstring).
    p_alt : float in (0, 1], default=0.5
        Probability that a coordinate of a generated point comes from another training
        point of the node (smearing).
    min_samples_split : int, default=10
        A node with at most this many training points is a leaf.
    feature_names : list of str, optional
        Names printed (default: the DataFrame's columns, the model's, else x0, x1, ...).
    random_state : int, RandomState or None, default=None
        Seed of the folds and of the generated points.

    Attributes
    ----------
    rules_ : RuleSet, one rule per leaf (``rules_.predict`` equals ``predict``)
    n_regions_ : int, the leaves
    max_depth_ : int, the depth used
    cv_errors_ : dict, depth -> mean CV error
    tree_ : the fitted tree (defrag.sources.Tree)
    classes_, task_, n_features_in_
    estimator_ : the model explained (``estimator`` when fitted, else its fitted clone)

    See Also
    --------
    DefragModel : The rules of FAB inference over the ensemble's splits.
    DepthTwoTree : A CART of depth 2 fitted to y.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag.baselines import BornAgainTree
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0)
    >>> model = BornAgainTree(forest, max_depth=3, random_state=0).fit(X, y)
    >>> model.n_regions_ <= 8
    True
    """

    _needs_predict = True
    _parameter_constraints = {
        "estimator": "no_validation",
        "max_depth": [StrOptions({"cv"}), Interval(Integral, 1, None, closed="left")],
        "depth_grid": ["array-like"],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "n_generated": [Interval(Integral, 1, None, closed="left")],
        "p_alt": "no_validation",  # (_check_params: "a number in (0, 1]", True refused)
        "min_samples_split": [Interval(Integral, 2, None, closed="left")],
        "feature_names": "no_validation",  # checked_names says what a name list must be
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, max_depth="cv", depth_grid=DEPTH_GRID, cv=5,
                 n_generated=100, p_alt=0.5, min_samples_split=10, feature_names=None,
                 random_state=None):
        self.estimator = estimator
        self.max_depth = max_depth
        self.depth_grid = depth_grid
        self.cv = cv
        self.n_generated = n_generated
        self.p_alt = p_alt
        self.min_samples_split = min_samples_split
        self.feature_names = feature_names
        self.random_state = random_state

    def _check_params(self):
        if not (isinstance(self.max_depth, str) and self.max_depth == "cv"):
            check_positive_int("max_depth", self.max_depth)
        try:
            grid = [int(d) for d in self.depth_grid]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"depth_grid must be a sequence of integers; got {self.depth_grid!r}") from exc
        if not grid or min(grid) < 1 or any(g != d for g, d in zip(grid, self.depth_grid)):
            raise ValueError(f"depth_grid must be a non-empty sequence of integers >= 1; got {self.depth_grid!r}")
        check_positive_int("cv", self.cv, low=2)
        check_positive_int("n_generated", self.n_generated)
        check_positive_int("min_samples_split", self.min_samples_split, low=2)
        if not (is_number(self.p_alt) and 0.0 < self.p_alt <= 1.0):
            raise ValueError(f"p_alt must be a number in (0, 1]; got {self.p_alt!r}")

    def _check_memory(self, fitting, depth):
        """DefragMemoryError before growing when the deepest tree grown (the grid's
        largest depth under cross-validation) would not fit."""
        n, d = fitting.Xf.shape
        n_test = -(-n // min(self.cv, n)) if isinstance(self.max_depth, str) and n >= 2 else 0
        check_memory_of(
            born_again_estimate(n, d, fitting.n_classes, depth, self.min_samples_split, self.n_generated,
                                n_test),
            f"BornAgainTree.fit on {n} rows and {max(fitting.n_classes, 1)} classes (depth {depth})",
            "max_depth= or depth_grid= (fewer nodes), n_generated=, or fewer rows or classes")

    def _fit(self, fitting):
        self._check_memory(fitting, max(int(d) for d in self.depth_grid) if isinstance(self.max_depth, str)
                           else int(self.max_depth))
        rng = check_random_state(self.random_state)
        labels = fitting.ensemble_predictions()
        n = fitting.Xf.shape[0]
        grid = sorted({int(d) for d in self.depth_grid})
        self.cv_errors_ = {}
        if isinstance(self.max_depth, str):
            folds = KFold(min(self.cv, n), shuffle=True, random_state=rng.randint(2**31 - 1)) if n >= 2 else None
            if folds is None or len(grid) == 1:
                depth = grid[0]
            else:
                errors = np.zeros((len(grid), folds.n_splits))
                for k, (train, test) in enumerate(folds.split(fitting.Xf)):
                    grower = _Grower(self, fitting, labels, rng.randint(2**31 - 1))
                    tree, node_depth = grower.tree(train, grid[-1])
                    for i, d in enumerate(grid):
                        cut = _cut(tree, node_depth, d)
                        # each node's prediction, then the held-out rows' (not their rows of
                        # class probabilities: n_test x classes)
                        node_pred = cut.value[:, 0] if not fitting.n_classes else np.argmax(cut.value, axis=1)
                        pred = node_pred[walk_tree(cut, fitting.Xf[test])]
                        errors[i, k] = prediction_error(pred, fitting.y[test], fitting.task)
                self.cv_errors_ = {d: float(e) for d, e in zip(grid, errors.mean(axis=1))}
                depth = grid[int(np.argmin(errors.mean(axis=1)))]  # the smallest of tied depths
        else:
            depth = int(self.max_depth)
        self.max_depth_ = depth
        tree, _ = _Grower(self, fitting, labels, rng.randint(2**31 - 1)).tree(np.arange(n), depth)
        self._set_tree(tree, fitting, tree.n_node_samples)
