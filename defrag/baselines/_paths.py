"""Regions of tree nodes as rule conditions.

A node's region is the conjunction of the tests on its root path. Each test is an
*atom* ``(feature, kind, threshold, codes, right, missing_right)``: the row went right
(``right``) or left at a node that sends a present value right when ``x > threshold``
(kind NUMERIC) or when its code is in (IN_SET) or not in (NOT_IN_SET) ``codes``, and a
missing value right when ``missing_right``. The atoms of one feature merge into one
Condition: an interval ``max(right thresholds) < x <= min(left thresholds)``, or a
category set (the intersection of the sets the region lies in minus the union of those
it lies outside); a missing value satisfies it when every atom sends it that way.
"""
import numpy as np

from ..rules import Condition, Rule, RuleSet
from ..rules.tree_nodes import rounded
from ..sources.base import IN_SET, NUMERIC, walk_tree


def node_atom(tree, node, right):
    """The atom of going right (or left) at an internal node of a Tree."""
    kind = int(tree.kind[node])
    codes = () if kind == NUMERIC else tuple(
        int(c) for c in tree.cat_codes[tree.cat_ptr[node]:tree.cat_ptr[node + 1]])
    return (int(tree.feature[node]), kind, float(tree.threshold[node]), codes, bool(right),
            bool(tree.missing_right[node]))


def node_paths(tree, max_depth=None):
    """(node, depth, atoms) of every node of the Tree down to max_depth (None: all), root
    first, each with the atoms of its root path in path order."""
    out = [(0, 0, ())]
    stack = [(0, 0, ())]
    while stack:
        node, depth, atoms = stack.pop()
        if tree.children_left[node] < 0 or (max_depth is not None and depth >= max_depth):
            continue
        for child, right in ((tree.children_left[node], False), (tree.children_right[node], True)):
            item = (int(child), depth + 1, atoms + (node_atom(tree, node, right),))
            out.append(item)
            stack.append(item)
    return out


def leaf_paths(tree):
    """(leaf node, atoms) of every leaf of the Tree."""
    return [(node, atoms) for node, _, atoms in node_paths(tree) if tree.children_left[node] < 0]


# Row x rule cells per call of the rule kernel. Ctrl-C waits for a kernel call to end
# (the rule kernels do not read the stop flag): about 0.03 s a call on one core, where
# 2048 rules on 200,000 rows took 12 s. The coverage of a rule does not depend on the
# others of its call.
MAX_CELLS = 1 << 22


class ConditionMaker:
    """Makes the Conditions of atom lists for one model's features (names, encoding)."""

    def __init__(self, names, encoding, supports_missing):
        self.names, self.encoding = names, encoding
        self.supports_missing = bool(supports_missing)

    def conditions(self, atoms):
        groups = {}
        for atom in atoms:
            groups.setdefault((atom[0], atom[1] != NUMERIC), []).append(atom)
        out = []
        for (d, categorical), group in sorted(groups.items()):
            missing = self.supports_missing and all(a[5] == a[4] for a in group)
            common = dict(missing=missing, zero_missing=bool(self.encoding.zero_missing[d]))
            if not categorical:
                lower = max((a[2] for a in group if a[4]), default=None)
                upper = min((a[2] for a in group if not a[4]), default=None)
                out.append(Condition(d, self.names[d], lower, upper, **common))
                continue
            inc = exc = None
            for _, kind, _, codes, right, _ in group:
                codes = np.asarray(codes, dtype=np.int64)
                if right == (kind == IN_SET):  # the region lies in the set
                    inc = codes if inc is None else np.intersect1d(inc, codes)
                else:
                    exc = codes if exc is None else np.union1d(exc, codes)
            codes = exc if inc is None else (inc if exc is None else np.setdiff1d(inc, exc))
            out.append(Condition(d, self.names[d], categories=codes, negated=inc is None,
                                 category_names=self.encoding.category_names(d), **common))
        return out

    def cover(self, atom_lists, Xf, chunk=2048):
        """Boolean matrix (n_samples, n_lists): row i lies in the region of atom list j
        (evaluated by the compiled rule kernel, at most chunk lists and MAX_CELLS row x list
        cells a call)."""
        out = np.zeros((Xf.shape[0], len(atom_lists)), dtype=bool)
        chunk = max(1, min(chunk, MAX_CELLS // max(Xf.shape[0], 1)))
        for start in range(0, len(atom_lists), chunk):
            part = atom_lists[start:start + chunk]
            rules = RuleSet([Rule(self.conditions(a), None) for a in part], None,
                            feature_names=self.names, supports_missing=self.supports_missing)
            out[:, start:start + len(part)] = rules.covering(Xf)
        return out


class TreeRulesMixin:
    """A model that is one tree (``tree_``, a sources Tree whose ``value`` holds class
    probabilities or the mean per node): its leaves are its rules, ``predict`` walks the
    tree (the first covering rule of ``rules_`` is the leaf's rule: they agree)."""

    def _set_tree(self, tree, fitting, supports):
        """tree_, rules_ (one rule per leaf; the root's value as the unused default) and
        n_regions_; supports: training rows per node."""
        self.tree_ = tree
        maker = ConditionMaker(fitting.names, fitting.encoding, fitting.source.supports_missing)
        rules = [Rule(maker.conditions(atoms), *self._node_output(node), support=int(supports[node]),
                      weight=supports[node] / max(supports[0], 1))
                 for node, atoms in leaf_paths(tree)]
        self.rules_ = RuleSet(rules, *self._node_output(0), fitting.names, **self._rule_set_options())
        if self.rules_.decimals is not None:  # regression: the tree predicts the values printed
            tree.value[:, 0] = rounded(tree.value[:, 0], self.rules_.decimals)
        self.n_regions_ = len(rules)

    def _node_output(self, node):
        """(prediction, proba) of a node."""
        value = self.tree_.value[node]
        if self.task_ == "regression":
            return float(value[0]), None
        return self.classes_[int(np.argmax(value))], np.asarray(value, dtype=np.float64)

    def apply(self, X):
        """The leaf (node id of ``tree_``) of each row, as the printed rules place it.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The leaves.
        """
        return self._leaves(self._check_X(X))

    def _leaves(self, Xf):
        """Each row's leaf by the first rule of ``rules_`` that covers it: the rules print the
        thresholds they test (rules/conditions.py), so predict is what the rules say; a row
        no rule covers (two printed bounds of an empty leaf kept apart) walks the tree."""
        nodes = np.array([node for node, _ in leaf_paths(self.tree_)], dtype=np.intp)
        first = self.rules_.route(Xf)[:, 0]
        missed = first == len(nodes)  # the default's leaf: no rule covers the row
        leaves = np.where(missed, -1, nodes[np.minimum(first, len(nodes) - 1)])
        if np.any(missed):
            leaves[missed] = walk_tree(self.tree_, Xf[missed])
        return leaves

    def _leaf_values(self, Xf):
        return self.tree_.value[self._leaves(Xf)]

    def _predict_coded(self, Xf):
        value = self._leaf_values(Xf)
        if self.task_ == "regression":
            return value[:, 0]
        return self.classes_[np.argmax(value, axis=1)]

    def _proba_coded(self, Xf):
        return self._leaf_values(Xf)
