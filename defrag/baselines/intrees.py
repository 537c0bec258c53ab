"""inTrees (Deng 2014; R package inTrees 1.4): an ordered rule list from the ensemble's paths.

The steps and defaults of the package, as the paper's scripts call it
(``unique(extractRules(RF2List(rf), X))``, ``getRuleMetric``, ``pruneRule``,
``buildLearner``; defragTrees, paper/baselines/buildClfForest.R):

1. ``extractRules(treeList, X, ntree=100, maxdepth=6)``: from each of the first 100 trees,
   the root path of every leaf, cut at 6 conditions (the node at depth 6 ends the
   path); identical rules are kept once.
2. ``getRuleMetric``: each rule's frequency (share of training points it covers,
   rounded to 3 digits), prediction (the most frequent class it covers) and error
   (1 - the rounded share of that class); rules covering nothing are dropped.
3. ``pruneRule(maxDecay=0.05, typeDecay=2)``: the conditions are tried from the last
   to the first; one is dropped when the error (with the rule's prediction fixed)
   exceeds the original rule's by at most 0.05 (typeDecay 2: the absolute increase; 1:
   relative).
4. ``buildLearner(minFreq=0.01)`` (STEL): repeatedly the rule with the smallest error on
   the points no chosen rule covers yet (ties: larger frequency, then fewer
   conditions, then the earlier rule) among those covering at least 1% of all points,
   while its error is below that of predicting the remaining points' majority class;
   then a default rule predicting that majority.

Regression: as the package does (``dicretizeVector(y, K=3)``: R's quantile type 3 cuts),
y is cut into ``n_levels`` levels and the rules are learnt for the levels; a level
predicts the mean of the training targets in it (the package predicts the level's
label, the paper's scripts a quantile of y per level: 17%, 50%, 83% for 3 levels).

Deviations: conditions on one feature print merged into one interval (the package
keeps ``x > a & x > b``; the pruning still drops them one by one, and the length of a
rule counts them); every tree's paths are read, not only the first 100, when
``max_trees=None``.
"""
import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..rules import Rule, RuleSet
from ..rules.tree_nodes import rounded
from ..utils.memory import check_memory_of, intrees_estimate
from ..utils.validation import check_positive_int
from ._base import BaselineModel
from ._paths import MAX_CELLS, ConditionMaker, node_paths


def discretize(y, n_levels):
    """inTrees' dicretizeVector: level codes 0..n_levels-1 of y cut at R's type-3
    quantiles (1/K, ..., (K-1)/K): level j holds cut[j-1] < y <= cut[j]."""
    cuts = np.quantile(y, np.arange(1, n_levels) / n_levels, method="closest_observation")
    return np.searchsorted(cuts, y, side="left")


def class_counts(cover, y, n_classes):
    """(n_rules, n_classes) float32: the points of each class each rule covers (cover:
    (n, n_rules) bool, y: class codes < n_classes), without an (n, n_classes) one-hot
    matrix: the rows grouped by class (a stable sort) and summed per group by reduceat,
    a block of rules at a time (reduceat casts its block to int64: the whole cover at
    once was 8 bytes a cell, 200 MB on 5,000 rows x 5,000 rules). Integer sums, so
    equal to the float32 product with the one-hot matrix (exact below 2**24 points)."""
    n, n_rules = cover.shape
    out = np.zeros((n_rules, n_classes), dtype=np.float32)
    if n == 0:
        return out
    order = np.argsort(y, kind="stable")
    ys = y[order]
    starts = np.flatnonzero(np.concatenate([[True], ys[1:] != ys[:-1]]))
    step = max(1, MAX_CELLS // n)
    for j in range(0, n_rules, step):
        block = np.take(cover[:, j:j + step], order, axis=0)
        out[j:j + step, ys[starts]] = np.add.reduceat(block, starts, axis=0, dtype=np.int64).T
    return out


def _round3(v):
    return np.round(v, 3)


def _rule_atoms(atoms):
    """A path's atoms grouped by feature in the order the features first occur (the
    package writes a rule so)."""
    order = {}
    for a in atoms:
        order.setdefault(a[0], len(order))
    return tuple(sorted(atoms, key=lambda a: order[a[0]]))


class InTrees(BaselineModel):
    """The ordered rule list of inTrees (STEL, Deng 2014) read off the ensemble's paths.

    The steps and defaults of the R package (see the module docstring).

    Parameters
    ----------
    estimator : tree ensemble
        Any model DefragModel reads, fitted (explained as it is) or not (cloned and fitted
        on ``fit(X, y)``).
    max_length : int, default=6
        The conditions of a path at most (extractRules' maxdepth).
    max_trees : int or None, default=100
        The paths of the first max_trees trees (None: all; extractRules' ntree).
    max_decay : float, default=0.05
        The pruning's error increase allowed (pruneRule's maxDecay).
    type_decay : {1, 2}, default=2
        pruneRule's typeDecay: 2 the absolute error increase, 1 the relative one.
    min_freq : float, default=0.01
        The smallest share of points a rule of the list covers (buildLearner's minFreq).
    n_levels : int, default=3
        Regression: levels y is cut into (the package's K of dicretizeVector).
    feature_names : list of str, optional
        Names printed (default: the DataFrame's columns, the model's, else x0, x1, ...).

    Attributes
    ----------
    rules_ : RuleSet, the list in order, first match, the learner's last rule its default
        (``rules_.predict`` equals ``predict``)
    n_regions_ : int, the list's rules, its default included (the package's rows)
    n_extracted_ : int, distinct paths extracted
    levels_ : ndarray, the value each level predicts (regression), rounded as printed
    classes_, task_, n_features_in_
    estimator_ : the model explained (``estimator`` when fitted, else its fitted clone)

    See Also
    --------
    DefragModel : The rules of FAB inference over the ensemble's splits.
    NodeHarvest : A weighted mean of the ensemble's shallow nodes.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag.baselines import InTrees
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=10, random_state=0)
    >>> model = InTrees(forest).fit(X, y)
    >>> len(model.rules_) == model.n_regions_
    True
    """

    _parameter_constraints = {
        "estimator": "no_validation",
        "max_length": [Interval(Integral, 1, None, closed="left")],
        "max_trees": [Interval(Integral, 1, None, closed="left"), None],
        "max_decay": [Interval(Real, 0, 1, closed="both")],
        "type_decay": "no_validation",  # (_check_params: "1 or 2", True refused)
        "min_freq": [Interval(Real, 0, 1, closed="both")],
        "n_levels": [Interval(Integral, 2, None, closed="left")],
        "feature_names": "no_validation",  # checked_names says what a name list must be
    }

    def __init__(self, estimator=None, *, max_length=6, max_trees=100, max_decay=0.05,
                 type_decay=2, min_freq=0.01, n_levels=3, feature_names=None):
        self.estimator = estimator
        self.max_length = max_length
        self.max_trees = max_trees
        self.max_decay = max_decay
        self.type_decay = type_decay
        self.min_freq = min_freq
        self.n_levels = n_levels
        self.feature_names = feature_names

    def _check_params(self):
        check_positive_int("max_length", self.max_length)
        check_positive_int("max_trees", self.max_trees, allow_none=True)
        check_positive_int("n_levels", self.n_levels, low=2)
        if isinstance(self.type_decay, (bool, np.bool_)) or not isinstance(self.type_decay, numbers.Integral) \
                or self.type_decay not in (1, 2):
            raise ValueError(f"type_decay must be 1 or 2; got {self.type_decay!r}")
        for name in ("max_decay", "min_freq"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be a number in [0, 1]; got {v!r}")

    # ------------------------------------------------------------------ steps
    def _extract(self, source):
        """Distinct rules (atom tuples) of the trees' paths cut at max_length."""
        trees = source.trees()
        if self.max_trees is not None:
            trees = trees[:self.max_trees]
        rules = {}
        for tree in trees:
            for node, depth, atoms in node_paths(tree, self.max_length):
                if atoms and (depth == self.max_length or tree.children_left[node] < 0):
                    rules.setdefault(_rule_atoms(atoms), None)
        return list(rules)

    def _counts(self, maker, rules, Xf, target, n_classes):
        """Per rule, the class counts of the points it covers (its cover a temporary: one
        n x rules cover alive at a time)."""
        return class_counts(maker.cover(rules, Xf), target, n_classes)

    def _error(self, counts, pred):
        """getRuleMetric's error with the prediction fixed: 1 - round(share, 3)."""
        total = counts.sum(axis=1)
        share = counts[np.arange(pred.size), pred] / np.maximum(total, 1)
        return 1.0 - _round3(share)

    def _prune(self, maker, rules, pred, err, Xf, target, n_classes):
        """pruneRule: conditions tried from the last to the first (all rules at once,
        one condition position per step); a condition goes when the error without it
        exceeds the original rule's error (err, not the error after earlier drops: the
        package's errOrig) by at most max_decay."""
        orig, len0 = rules, [len(r) for r in rules]
        rules = [list(r) for r in rules]
        longest = max(len(r) for r in rules)
        for back in range(longest):
            # rules still longer than 1 whose position len0 - 1 - back exists
            todo = [j for j, r in enumerate(rules) if len(r) > 1 and len0[j] - 1 - back >= 0]
            if not todo:
                continue
            cands = []
            for j in todo:
                atom = orig[j][len0[j] - 1 - back]
                cands.append(tuple(a for a in rules[j] if a is not atom))
            counts = self._counts(maker, cands, Xf, target, n_classes)
            new_err = self._error(counts, pred[todo])
            decay = new_err - err[todo]
            if self.type_decay == 1:
                decay = decay / np.maximum(err[todo], 1e-6)
            for k in np.flatnonzero(decay <= self.max_decay):
                j = todo[k]
                rules[j] = list(cands[k])  # (the package compares with the original error)
        return [tuple(r) for r in rules]

    def _learner(self, cover, lengths, pred, y, n_classes):
        """buildLearner (STEL): the ordered list (rule indices) and the default class."""
        n = y.size
        counts = class_counts(cover, y, n_classes)  # per rule, classes of the uncovered points
        left = np.ones(n, dtype=bool)
        chosen = []
        index = np.arange(pred.size)
        while True:
            total = counts.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                err = 1.0 - counts[index, pred] / total
            freq = total / n
            rest = np.bincount(y[left], minlength=n_classes)
            rest_err = 1.0 - rest.max() / left.sum()
            ok = (freq >= self.min_freq) & ~np.isnan(err)
            if not ok.any():
                return chosen, int(np.argmax(rest))
            order = np.lexsort((index[ok], lengths[ok], -freq[ok], err[ok]))
            top = index[ok][order[0]]
            if err[top] >= rest_err:
                return chosen, int(np.argmax(rest))
            chosen.append(int(top))
            new = left & cover[:, top]
            counts -= class_counts(cover[new], y[new], n_classes)
            left &= ~cover[:, top]
            if not left.any():
                return chosen, int(np.argmax(np.bincount(y, minlength=n_classes)))

    def _fit(self, fitting):
        Xf = fitting.Xf
        if fitting.task == "regression":
            target = discretize(fitting.y, self.n_levels)
            self.levels_ = np.array([fitting.y[target == k].mean() if np.any(target == k) else np.nan
                                     for k in range(self.n_levels)])
        else:
            target = fitting.y.astype(np.int64)
        # the classes (levels) present in the target, coded 0..n_classes-1: the per-class
        # tables are sized to them, not to every class the model or y's type could name
        # (an argmax over the present classes in their order is the argmax over all: the
        # others count 0 and a rule that is kept covers a point)
        present, target = np.unique(target, return_inverse=True)
        n_classes = present.size
        maker = ConditionMaker(fitting.names, fitting.encoding, fitting.source.supports_missing)
        rules = self._extract(fitting.source)
        self.n_extracted_ = len(rules)
        n = Xf.shape[0]
        check_memory_of(intrees_estimate(n, len(rules), n_classes, MAX_CELLS),
                        f"InTrees.fit on {n} rows, {n_classes} classes present and {len(rules)} "
                        "extracted rules", "max_trees= and max_length= (fewer rules), or fewer rows")
        if rules:
            counts = self._counts(maker, rules, Xf, target, n_classes)
            seen = counts.sum(axis=1) > 0  # getRuleMetric drops rules covering nothing
            rules = [r for r, s in zip(rules, seen) if s]
            counts = counts[seen]
            pred = np.argmax(counts, axis=1)  # R's which.max: the first most frequent class
            err = self._error(counts, pred)
            rules = self._prune(maker, rules, pred, err, Xf, target, n_classes)
            cover = maker.cover(rules, Xf)
            lengths = np.array([len(r) for r in rules])
            chosen, default = self._learner(cover, lengths, pred, target, n_classes)
        else:
            chosen, default = [], int(np.argmax(np.bincount(target, minlength=n_classes)))
        self.n_regions_ = len(chosen) + 1
        out = [self._output(int(present[pred[j]]), fitting) for j in chosen]
        listed = [Rule(maker.conditions(rules[j]), *o, support=int(cover[:, j].sum()))
                  for j, o in zip(chosen, out)]
        self.rules_ = RuleSet(listed, *self._output(int(present[default]), fitting), fitting.names,
                              **self._rule_set_options())
        if self.rules_.decimals is not None:  # the levels as the rules print and predict them
            self.levels_ = rounded(self.levels_, self.rules_.decimals)

    def _output(self, code, fitting):
        """(prediction, proba) of a class code (a level's mean for regression)."""
        if fitting.task == "regression":
            return float(self.levels_[code]), None
        proba = np.zeros(fitting.n_classes)
        proba[code] = 1.0
        return fitting.classes[code], proba

    def _predict_coded(self, Xf):
        return self.rules_.predictions()[self.rules_.route(Xf)[:, 0]]

    def _proba_coded(self, Xf):
        return self.rules_.probabilities()[self.rules_.route(Xf)[:, 0]]
