"""DTree2: a CART of depth 2, the paper's smallest baseline (Hara & Hayashi, sec. 7)."""
from numbers import Integral

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils._param_validation import Interval, StrOptions

from ..sources.sklearn_trees import read_sklearn_trees
from ..utils.memory import check_memory_of, depth_two_estimate
from ..utils.validation import check_positive_int
from ._base import BaselineModel
from ._paths import TreeRulesMixin


def sklearn_tree(dt, n_classes):
    """A fitted scikit-learn DecisionTree as a sources Tree (thresholds converted to the
    float64 test ``x > t``, missing values routed as it routes them); ``value`` holds
    class probabilities over all n_classes codes (classification) or the mean."""

    value = dt.tree_.value[:, 0, :]
    if n_classes:
        full = np.zeros((value.shape[0], n_classes))
        full[:, dt.classes_.astype(np.int64)] = value / value.sum(axis=1, keepdims=True)
        value = full
    return read_sklearn_trees([dt], [value], [0])[0]


class DepthTwoTree(TreeRulesMixin, BaselineModel):
    """A CART of depth ``max_depth`` fitted to y or to the ensemble's predictions.

    Depth 2 is "DTree2" of Hara & Hayashi, sec. 7; its leaves are the rules (at most
    2**max_depth).

    Parameters
    ----------
    estimator : tree ensemble
        Any model DefragModel reads, fitted (explained as it is) or not (cloned and fitted
        on ``fit(X, y)``); it codes the inputs (category codes, zero as missing) and, with
        ``target="ensemble"``, labels them.
    max_depth : int, default=2
        Depth of the tree.
    target : {"y", "ensemble"}, default="y"
        Fit the tree to y (the paper's DTree2) or to the ensemble's predictions on X.
    feature_names : list of str, optional
        Names printed (default: the DataFrame's columns, the model's, else x0, x1, ...).
    random_state : int, RandomState or None, default=None
        Scikit-learn's tie breaking between splits.

    Attributes
    ----------
    rules_ : RuleSet, one rule per leaf (``rules_.predict`` equals ``predict``)
    n_regions_ : int, the leaves
    tree_ : the fitted tree (defrag.sources.Tree)
    classes_, task_, n_features_in_
    estimator_ : the model explained (``estimator`` when fitted, else its fitted clone)

    See Also
    --------
    DefragModel : The rules of FAB inference over the ensemble's splits.
    BornAgainTree : One deeper tree that mimics the ensemble.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag.baselines import DepthTwoTree
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0)
    >>> model = DepthTwoTree(forest, random_state=0).fit(X, y)
    >>> model.n_regions_ <= 4
    True
    """

    _parameter_constraints = {
        "estimator": "no_validation",
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "target": [StrOptions({"y", "ensemble"})],
        "feature_names": "no_validation",  # checked_names says what a name list must be
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, max_depth=2, target="y", feature_names=None,
                 random_state=None):
        self.estimator = estimator
        self.max_depth = max_depth
        self.target = target
        self.feature_names = feature_names
        self.random_state = random_state

    def _check_params(self):
        check_positive_int("max_depth", self.max_depth)
        if self.target not in ("y", "ensemble"):
            raise ValueError(f"target must be 'y' or 'ensemble'; got {self.target!r}")
        self._needs_predict = self.target == "ensemble"

    def _fit(self, fitting):
        target = fitting.ensemble_predictions() if self.target == "ensemble" else fitting.y
        n, d = fitting.Xf.shape
        check_memory_of(depth_two_estimate(n, d, fitting.n_classes, self.max_depth),
                        f"DepthTwoTree.fit on {n} rows and {max(fitting.n_classes, 1)} classes",
                        "max_depth=, or fewer rows or classes")
        Tree = DecisionTreeRegressor if fitting.task == "regression" else DecisionTreeClassifier
        # a tree on n rows is at most n - 1 deep: a larger max_depth grows the same tree
        # (and 10**19 does not fit scikit-learn's ssize_t)
        depth = min(int(self.max_depth), max(n - 1, 1))
        dt = Tree(max_depth=depth, random_state=self.random_state).fit(fitting.Xf, target)
        self._set_tree(sklearn_tree(dt, fitting.n_classes), fitting, dt.tree_.n_node_samples)
