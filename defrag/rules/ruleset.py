"""The ordered list of rules, a rule tree (rules/tree.py) whose "then" branches are all
leaves: a row takes the prediction of the first rule that holds, else the default. Its
rules as a reader sees them (``Rule``: a box of conditions and its region's prediction,
read from the tree's items), the chain that holds them (``rule_chain``), and what only a
list has (``ListForm``, which RuleTree inherits): its ``rules`` and default, the counts
printed for its training rows, and its listing and table.
"""
import numpy as np

from . import _rules_eval, document
from ..utils.text import printed_label
from ..utils.docstrings import shared_parameters
from ..utils.threads import checked_threads
from .tree_nodes import Leaf, Node, number_text


class Rule:
    """One rule: a conjunction of conditions and the prediction of its region.

    A rule covers the rows where all its conditions hold (every row when it has none).

    Parameters
    ----------
    conditions : iterable of Condition
        The conditions, all of which must hold.
    prediction : object
        The prediction of the region: a value (regression) or a class label.
    proba : array-like of shape (n_classes,), default=None
        The class probabilities of the region (classification only).
    support : int, default=0
        The training points the rule covers.
    weight : float, default=0.0
        The rule's mixture weight.
    coverage : float, default=None
        The share of the training points that satisfy the conditions, when known.
    share : float, default=None
        The share of the training points the rule is the first match for, when known (set
        where the rule set is printed for its training rows, ``RuleTree.on_training_rows``;
        not kept in JSON).

    Attributes
    ----------
    conditions : list of Condition
        The conditions.
    prediction : object
        The prediction of the region.
    proba : ndarray of shape (n_classes,) or None
        The class probabilities (float64).
    support : int
        The training points covered.
    weight : float
        The mixture weight.
    coverage : float or None
        The share of the training points that satisfy the conditions.
    share : float or None
        The share of the training points it is the first match for.

    See Also
    --------
    Condition : One test on one feature.
    RuleSet : An ordered list of rules and a default prediction.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition, Rule
    >>> rule = Rule([Condition(0, "age", lower=30.0)], prediction=1.5, support=12)
    >>> print(rule)
    if age > 30 then y = 1.5
    >>> rule.covers(np.array([[25.0], [45.0]]))
    array([False,  True])
    """

    share = None

    def __init__(self, conditions, prediction, proba=None, support=0, weight=0.0, coverage=None,
                 share=None):
        self.conditions = list(conditions)
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = int(support)
        self.weight = float(weight)
        self.coverage = None if coverage is None else float(coverage)
        self.share = None if share is None else float(share)

    def covers(self, X):
        """Tell which rows of X the rule covers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows as the model reads them (categorical columns as codes).

        Returns
        -------
        ndarray of shape (n_samples,)
            Boolean: whether every condition holds on each row.
        """
        X = np.asarray(X)
        ok = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            ok &= cond.holds(X)
        return ok

    def condition_text(self, mark_unseen=False):
        """Return the conditions joined by "and" ("always" for none).

        Parameters
        ----------
        mark_unseen : bool, default=False
            Print the conditions as a rule set's listing does (see ``Condition.text``).

        Returns
        -------
        str
            The printed conditions.
        """
        if not self.conditions:
            return "always"
        return " and ".join(c.text(mark_unseen) for c in self.conditions)

    def to_dict(self):
        """Return the rule as a JSON-ready dict.

        Returns
        -------
        dict
            Its conditions (``Condition.to_dict``), prediction, probabilities, support,
            weight and coverage.
        """
        return document.rule_to_dict(self)

    def __str__(self):
        return self.text()

    def text(self, mark_unseen=False):
        """Return the rule as printed: "if <conditions> then y = <prediction>".

        Parameters
        ----------
        mark_unseen : bool, default=False
            Print the conditions as a rule set's listing does (see ``Condition.text``).

        Returns
        -------
        str
            The printed rule.
        """
        return f"if {self.condition_text(mark_unseen)} then y = {prediction_text(self.prediction, self.proba)}"

    def __repr__(self):
        return f"Rule({self})"


def rule_count_text(n_rules):
    """How a count of rules reads wherever it is printed (headers, titles, reprs):
    n_rules rules before the default, "1 rule and otherwise", "3 rules and otherwise"."""
    n_rules = int(n_rules)
    return f"{n_rules} rule{'' if n_rules == 1 else 's'} and otherwise"


# how to read an ordered rule set, said once above its listing or table
FIRST_MATCH = "a point takes the prediction of the first rule whose conditions hold (first match wins), " \
              "else the last line's"


def prediction_text(prediction, proba):
    if proba is None:  # a value: the shortest text of the number predicted, exactly
        return number_text(prediction) if isinstance(prediction, (float, np.floating)) else printed_label(prediction)
    return f"{printed_label(prediction)} (p={float(np.max(proba)):.3f})"




def rule_chain(rules, default_prediction, default_proba=None):
    """The tree of an ordered list: rule k's box at the k-th node, whose "then" is a leaf
    holding the rule's prediction, probabilities, support, share and weight, and whose
    "else" is the next rule's node; the default's leaf last (support unknown)."""
    node = Leaf(default_prediction, default_proba, support=None)
    for r in reversed(list(rules)):
        node = Node(r.conditions, Leaf(r.prediction, r.proba, r.support, r.share, weight=r.weight), node,
                    coverage=r.coverage)
    return node


class ListForm:
    """What only an ordered list has (a RuleTree whose ``form`` is "list"): its rules and
    default read from its chain, the counts printed for its training rows, its listing and
    its table. Each raises AttributeError on a tree or a sum."""

    def _chain(self):
        """The list's nodes, in order, and its default's leaf."""
        if self.form != "list":
            raise AttributeError(f"a {self.form} has no rules in order: its regions are its leaves")
        nodes = self.nodes()
        return nodes, nodes[-1].otherwise if nodes else self.terms[0]

    @property
    def rules(self):
        """The list's rules, in order (a new list of new Rule objects: the list is not
        changed through them)."""
        return [Rule(n.conditions, n.then.prediction, n.then.proba, n.then.support, n.then.weight, n.coverage,
                     n.then.share) for n in self._chain()[0]]

    @property
    def default_prediction(self):
        """The prediction where no rule holds."""
        return self._chain()[1].prediction

    @property
    def default_proba(self):
        """The default's class probabilities (None in regression)."""
        return self._chain()[1].proba

    @property
    def default_support(self):
        """The training rows no rule holds for, when known."""
        return self._chain()[1].support

    @property
    def default_share(self):
        """Their share of the training rows, when known."""
        return self._chain()[1].share

    @shared_parameters
    def cover_counts(self, X_coded, n_threads=1):
        """Count the rows each rule covers and the rows each is the first match for.

        {Parameters: X_coded, n_threads}

        Returns
        -------
        covered : ndarray of shape (n_rules,)
            The rows each rule covers.
        first : ndarray of shape (n_rules + 1,)
            The rows each is the first match for, the default's first.
        """
        n_threads = checked_threads(n_threads)
        R = len(self._chain()[0])
        if not X_coded.shape[0]:
            return np.zeros(R, dtype=np.int64), np.zeros(R + 1, dtype=np.int64)
        cover = self.covering(X_coded, n_threads)
        # the first matches from the same matrix (index R where no rule covers: the default)
        first = np.bincount(_rules_eval.first_cover(cover.view(np.uint8)), minlength=R + 1)
        return cover.sum(axis=0), np.roll(first, 1)

    def set_first_match_counts(self, counts):
        """Set the rules' ``share`` and the default's support and share from counts.

        Parameters
        ----------
        counts : array-like of shape (n_rules + 1,)
            The training points each is the first match for: ``counts[0]`` the default's,
            ``counts[k]`` rule k's.
        """
        nodes, default = self._chain()
        counts = np.asarray(counts, dtype=np.float64)
        total = max(float(counts.sum()), 1.0)
        default.support = int(counts[0])
        default.share = float(counts[0] / total)
        for node, count in zip(nodes, counts[1:]):
            node.then.share = float(count / total)

    def printed_list(self, conditions, covered, first, n_rows):
        """Return a copy of the list printed for training rows.

        Parameters
        ----------
        conditions : iterable of Condition
            The conditions as printed for the rows, rule after rule.
        covered : array-like of shape (n_rules,)
            The rows each rule covers (each rule's ``coverage``, over n_rows).
        first : array-like of shape (n_rules + 1,)
            The rows each is the first match for, the default's first
            (``set_first_match_counts``).
        n_rows : int
            The rows.

        Returns
        -------
        RuleTree
            The copy (the rules' predictions, supports and weights as this list's).
        """
        self._chain()  # (a list's only)
        new = self._copy()
        conditions = iter(conditions)
        node = new.terms[0] = _copied(self.terms[0])
        nodes = []
        while isinstance(node, Node):
            node.then = _copied(node.then)
            node.otherwise = _copied(node.otherwise)
            node.conditions = [next(conditions) for _ in node.conditions]
            nodes.append(node)
            node = node.otherwise
        if n_rows:
            for node, count in zip(nodes, covered):
                node.coverage = float(count / n_rows)
            new.set_first_match_counts(first)
        return new

    def table_rows(self):
        """Return the cells of the list's table, one tuple per rule and the default last.

        Returns
        -------
        list of tuple of str
            Number, conditions as the listing prints them, prediction, support and the share
            of the training points it is the first match for (blank where unknown).
        """
        def share(value):
            return "" if value is None else f"{100.0 * value:.1f}%"

        rules, default = self.rules, self._chain()[1]
        rows = [(str(i), rule.condition_text(mark_unseen=True), prediction_text(rule.prediction, rule.proba),
                 str(rule.support), share(rule.share)) for i, rule in enumerate(rules, 1)]
        rows.append(("*", "otherwise", prediction_text(default.prediction, default.proba),
                     "" if default.support is None else str(default.support), share(default.share)))
        return rows

    def _listing(self):
        """The listing's lines: one per rule, in order, then the default."""
        rules, default = self.rules, self._chain()[1]
        width = len(str(len(rules)))
        lines = [f"[{str(i).rjust(width)}] {rule.text(mark_unseen=True)}   "
                 f"(support {rule.support}, weight {rule.weight:.3f})" for i, rule in enumerate(rules, 1)]
        lines.append(f"[{'*'.rjust(width)}] otherwise y = {prediction_text(default.prediction, default.proba)}")
        return lines


def _copied(item):
    """A copy of a node or a leaf (its branches shared)."""
    if isinstance(item, Leaf):
        return Leaf(item.prediction, item.proba, item.support, item.share, item.key, item.weight)
    return Node(item.conditions, item.then, item.otherwise, item.key, item.coverage)
